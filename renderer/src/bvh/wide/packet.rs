//! Packets of up to sixteen rays traced together through the wide BVH: one walk of the tree for
//! all of them, an inner node's children tested against the whole group at once (a child to a
//! lane of the register), a leaf's box and its triangles against every ray of the group at
//! once (a ray to a lane: sixteen to one AVX-512 register, eight to one AVX register, or a
//! register's worth twice over where the processor has none that wide).
//!
//! *Why*: neighbouring camera rays meet nearly the same nodes and leaves. Walking the tree once
//! for eight or sixteen of them shares the loads of each node, the ordering of its children,
//! the stack and the branches between them, where the single-ray traversal
//! ([`traverse`](super::traverse)) pays for all of it ray by ray.
//!
//! *Groups*: rays are traced together where they agree on the octant of their direction (so
//! that a node's near and far planes are the same planes for all of them) and on the axes of
//! the watertight test (so that one read of a triangle's coordinates serves all); a packet is
//! split into groups that agree, and a group of fewer than [`MIN_GROUP`] rays, or a ray with a
//! NaN coordinate, an infinite origin or a zero direction, goes through the single-ray
//! traversal. A camera's block of 4×2 or 4×4 pixels is one group unless it straddles a plane where a direction component changes sign, or a
//! diagonal where the dominant axis changes.
//!
//! *Traversal*: a group first tests the box around the root's children (`WideBvh::root_box`),
//! so that rays that miss the mesh cost one box test. Then the group is taken as one bundle
//! ([`Frustum`]: per axis the extremes of its origins and reciprocal directions), and an inner
//! node's children are tested against the bundle all at once, in the lanes of one register,
//! as the single-ray traversal tests them against one ray: a child passes if some ray of the
//! group may enter it before the farthest of the rays' closest hits so far. A leaf's box is
//! then tested ray by ray, its triangles' padded boxes against the bundle (a triangle whose
//! box no ray may enter before its closest hit is missed, or beaten, by all of them, their own
//! tests clamping their distances into it), and the triangles left against the rays that
//! enter the leaf. The children
//! that pass are visited in the order of the earliest any ray may enter them, the others kept
//! on a stack with that distance, and one popped beyond every ray's closest hit is skipped.
//! Occlusion takes the children in the order of the latest any ray may leave them, the last
//! first; it drops each ray once it is blocked, and ends when every ray is. (Testing each
//! child against every ray instead, one child at a time, traced camera packets 1.01–1.11×
//! slower; BENCHMARKS.md, "Packets tested as one bundle".)
//!
//! *The same bits*: every ray gets the answer [`WideBvh::closest_hit`] and
//! [`WideBvh::occluded`] give it, bit for bit. A ray's closest hit depends only on the tests
//! of the triangles it could hit, never on which other boxes were opened nor in which order:
//! the closest-hit rule is order-free, and a box never rejects a hit on a triangle inside it
//! (the node's box holds the triangle's padded box, to which the triangle test clamps its
//! distance). So a packet may open more boxes than a ray alone would, as long as it opens
//! every box the ray's own test enters: the bundle's test lets through every child some ray
//! enters (see [`Frustum`]), and a leaf's box is tested for each ray by the single-ray box
//! test's arithmetic (the same subtraction and multiplication, the same NaN rules). A lane's
//! triangle test is the pack test of its ray ([`pack`](super::pack)), operation for
//! operation, with the triangle's coordinates in every lane where the pack test has the
//! ray's; a ray for which one of a pack's edge functions rounds to zero is given its own pack
//! test of that pack, which takes the double-precision fallback for every triangle of the
//! pack, as it does for that ray alone. (Only if that triangle was not culled: where it was,
//! the ray's other triangles keep their lanes' results, the same but for the sign of a
//! distance of exactly zero, the one difference the pack test already has from the
//! one-triangle test, which no ray with `t_min ≥ 0` sees.)

use std::array::from_fn;
use std::mem::MaybeUninit;

use crate::geometry::{BoxRay, PreparedRay, Ray};
use crate::math::Vec3;

use super::super::{BvhHit, Closest, NoCounters, TraversalCounters};
use super::build::STACK_SIZE;
use super::lanes::{Halves, Lanes, Pair, key_lane};
use super::pack::EdgeFunctions;
use super::traverse::{Child, LAST_FIRST, NEAREST_FIRST, pair_in_order};
use super::{EMPTY, LANES, Nodes, TrianglePack, WideBvh, WideNode};

/// The most rays a packet holds: the lanes of one AVX-512 register. A packet whose rays all
/// lie in its first eight lanes is traced eight lanes wide, one AVX register (or two SSE
/// halves); one with rays beyond them sixteen wide, one AVX-512 register where the processor
/// has AVX-512, else two of eight ([`WideBvh::packet_lanes`] says which the processor favours).
pub const PACKET_LANES: usize = 16;

/// Groups of fewer rays than this go through the single-ray traversal, ray by ray: a group
/// pays for gathering its rays and bounding them before its first node. When each child was
/// tested against each ray, camera rays of a row of a block (256², one thread, AVX2), as
/// packets against alone, ran: three rays 0.99× on `cornell` and 0.81× on `treasure`, four
/// 1.15–1.22× and 0.91×, five 1.40× and 1.02× (BENCHMARKS.md, "Packets of camera rays").
/// With the bundle's test, groups from two rays up ran as fast as this threshold on `treasure`,
/// `cornell` and the bunny (1.001–1.003), so it stays.
const MIN_GROUP: u32 = 4;

/// A set of a packet's lanes: bit `k` for lane `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaneMask(u16);

impl LaneMask {
    /// No lane.
    pub const NONE: Self = Self(0);
    /// Every lane.
    pub const ALL: Self = Self(u16::MAX);

    /// Lanes `0..n`.
    ///
    /// # Panics
    /// When `n` is over [`PACKET_LANES`].
    pub fn first(n: usize) -> Self {
        assert!(n <= PACKET_LANES, "a packet has {PACKET_LANES} lanes");
        Self(((1u32 << n) - 1) as u16)
    }

    /// The lanes whose bits are set in `bits`.
    pub const fn from_bits(bits: u16) -> Self {
        Self(bits)
    }

    /// Bit `k` set for lane `k`.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// Whether `lane` is in the set.
    pub fn contains(self, lane: usize) -> bool {
        lane < PACKET_LANES && self.0 >> lane & 1 == 1
    }

    /// The set with `lane` added.
    ///
    /// # Panics
    /// When `lane` is not below [`PACKET_LANES`].
    pub fn with(self, lane: usize) -> Self {
        assert!(lane < PACKET_LANES, "a packet has {PACKET_LANES} lanes");
        Self(self.0 | 1 << lane)
    }

    /// How many lanes.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// The lanes, in increasing order.
    pub fn lanes(self) -> impl Iterator<Item = usize> {
        lanes(u32::from(self.0))
    }

    /// Whether every lane of the set is one of the first eight: a packet that can be traced
    /// eight lanes wide.
    #[inline(always)]
    pub(super) fn in_first_eight(self) -> bool {
        self.0 >> 8 == 0
    }
}

/// The set bits of `mask`, lowest first.
#[inline(always)]
fn lanes(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            lane
        })
    })
}

/// Up to sixteen rays to be traced together. The rays in lanes outside `active` are never
/// looked at: a block of pixels cut by the image's edge leaves its outer lanes inactive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayPacket {
    /// The ray in each lane.
    pub rays: [Ray; PACKET_LANES],
    /// The lanes that hold rays to trace.
    pub active: LaneMask,
}

impl RayPacket {
    /// `rays` (none to sixteen) in lanes 0, 1, …; the lanes after them inactive.
    ///
    /// # Panics
    /// On more than [`PACKET_LANES`] rays.
    pub fn new(rays: &[Ray]) -> Self {
        assert!(
            rays.len() <= PACKET_LANES,
            "a packet holds at most {PACKET_LANES} rays"
        );
        let unused = Ray::new(Vec3::ZERO, Vec3::Z);
        Self {
            rays: from_fn(|lane| rays.get(lane).copied().unwrap_or(unused)),
            active: LaneMask::first(rays.len()),
        }
    }
}

impl WideBvh {
    /// How many rays a packet is best filled with: sixteen where this tree's traversal runs on
    /// AVX-512 (one register holds them), eight elsewhere (where sixteen would take two
    /// registers of eight). Either way any packet of up to [`PACKET_LANES`] rays is traced.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// use renderer::bvh::wide::Simd;
    ///
    /// # let triangles = [Triangle { v: [Vec3::ZERO, Vec3::X, Vec3::Y] }];
    /// let bvh = WideBvh::build(&triangles, BvhSettings::default()).limited_to(Simd::Avx2);
    /// assert_eq!(bvh.packet_lanes(), 8);
    /// ```
    pub fn packet_lanes(&self) -> usize {
        match self.simd {
            super::Simd::Avx512 => 16,
            _ => 8,
        }
    }

    /// The block of pixels whose camera rays, one a pixel, fill a packet of
    /// [`packet_lanes`](Self::packet_lanes): [`PACKET_BLOCK_COLUMNS`] across and as many rows as
    /// that takes, 4×4 on AVX-512 and 4×2 elsewhere. Lane `k` is pixel `k % columns` of row
    /// `k / columns`.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// use renderer::bvh::wide::{PixelBlock, Simd};
    ///
    /// # let triangles = [Triangle { v: [Vec3::ZERO, Vec3::X, Vec3::Y] }];
    /// let bvh = WideBvh::build(&triangles, BvhSettings::default()).limited_to(Simd::Avx2);
    /// assert_eq!(bvh.packet_block(), PixelBlock { columns: 4, rows: 2 });
    /// ```
    pub fn packet_block(&self) -> PixelBlock {
        PixelBlock::of(self.packet_lanes())
    }

    /// The closest hit of every active ray of `packet` (`None` in an inactive lane): for each,
    /// bit for bit what [`closest_hit`](Self::closest_hit) gives it.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::wide::RayPacket;
    ///
    /// let hits = bvh.closest_hit_packet(&RayPacket::new(&[down, up]));
    /// assert_eq!(hits[0], bvh.closest_hit(&down));
    /// assert_eq!(hits[1], None);
    /// ```
    pub fn closest_hit_packet(&self, packet: &RayPacket) -> [Option<BvhHit>; PACKET_LANES] {
        self.closest_hit_packet_counted(packet, &mut NoCounters)
    }

    /// [`closest_hit_packet`](Self::closest_hit_packet), reporting the tests to `counters`:
    /// a node's child boxes tested against a group count once for every ray of the group that
    /// entered the box around the root's children (and is not yet blocked, for occlusion), a
    /// leaf's box tested ray by ray once more for each, a triangle that the group's bundle
    /// lets through once for every ray that entered its leaf (the bundle's test of a pack's
    /// eight triangle boxes is not counted), and the box around the root's children, which a
    /// packet tests first, once for every ray, so that the counts per ray read as those of
    /// the single-ray traversal do (which the rays traced alone report as it does).
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::TestCounts;
    /// use renderer::bvh::wide::RayPacket;
    ///
    /// let mut counts = TestCounts::default();
    /// let hits = bvh.closest_hit_packet_counted(&RayPacket::new(&[down]), &mut counts);
    /// assert_eq!(hits[0].map(|hit| hit.original), Some(2));
    /// assert!(counts.boxes > 0);
    /// ```
    pub fn closest_hit_packet_counted<C: TraversalCounters>(
        &self,
        packet: &RayPacket,
        counters: &mut C,
    ) -> [Option<BvhHit>; PACKET_LANES] {
        match &self.nodes {
            Nodes::Four(nodes) => self.closest_packet_dispatch(nodes, packet, counters),
            Nodes::Eight(nodes) => self.closest_packet_dispatch(nodes, packet, counters),
        }
    }

    /// The active rays of `packet` that a triangle blocks within their `(t_min, t_max)`: for
    /// each, what [`occluded`](Self::occluded) says of it.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::wide::RayPacket;
    ///
    /// let blocked = bvh.occluded_packet(&RayPacket::new(&[up, down]));
    /// assert!(!blocked.contains(0) && blocked.contains(1));
    /// ```
    pub fn occluded_packet(&self, packet: &RayPacket) -> LaneMask {
        self.occluded_packet_counted(packet, &mut NoCounters)
    }

    /// [`occluded_packet`](Self::occluded_packet), reporting the tests to `counters` as
    /// [`closest_hit_packet_counted`](Self::closest_hit_packet_counted) does.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::TestCounts;
    /// use renderer::bvh::wide::RayPacket;
    ///
    /// let mut counts = TestCounts::default();
    /// let blocked = bvh.occluded_packet_counted(&RayPacket::new(&[down, down]), &mut counts);
    /// assert_eq!(blocked.count(), 2);
    /// ```
    pub fn occluded_packet_counted<C: TraversalCounters>(
        &self,
        packet: &RayPacket,
        counters: &mut C,
    ) -> LaneMask {
        let blocked = match &self.nodes {
            Nodes::Four(nodes) => self.occluded_packet_dispatch(nodes, packet, counters),
            Nodes::Eight(nodes) => self.occluded_packet_dispatch(nodes, packet, counters),
        };
        LaneMask(blocked as u16)
    }

    /// The closest-hit query of a packet over nodes of `W` children, on AVX-512 or AVX2 where
    /// the processor has them, else on SSE halves.
    #[inline(always)]
    fn closest_packet_dispatch<const W: usize, C: TraversalCounters>(
        &self,
        nodes: &[WideNode<W>],
        packet: &RayPacket,
        counters: &mut C,
    ) -> [Option<BvhHit>; PACKET_LANES] {
        match self.simd {
            // SAFETY: `simd` is at most what the processor was seen to have
            // (`Simd::detected`), here AVX2 and AVX-512 (F and VL).
            #[cfg(target_arch = "x86_64")]
            super::Simd::Avx512 => unsafe { self.closest_packet_avx512(nodes, packet, counters) },
            // SAFETY: as above, here AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            super::Simd::Avx2 => unsafe { self.closest_packet_avx2(nodes, packet, counters) },
            _ if packet.active.in_first_eight() => {
                self.closest_packet_in::<Halves, 8, Halves, W, C>(nodes, packet, counters)
            }
            _ => self.closest_packet_in::<Pair<Halves>, 16, Halves, W, C>(nodes, packet, counters),
        }
    }

    /// The occlusion query of a packet over nodes of `W` children: the blocked lanes.
    #[inline(always)]
    fn occluded_packet_dispatch<const W: usize, C: TraversalCounters>(
        &self,
        nodes: &[WideNode<W>],
        packet: &RayPacket,
        counters: &mut C,
    ) -> u32 {
        match self.simd {
            // SAFETY: `simd` is at most what the processor was seen to have
            // (`Simd::detected`), here AVX2 and AVX-512 (F and VL).
            #[cfg(target_arch = "x86_64")]
            super::Simd::Avx512 => unsafe { self.occluded_packet_avx512(nodes, packet, counters) },
            // SAFETY: as above, here AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            super::Simd::Avx2 => unsafe { self.occluded_packet_avx2(nodes, packet, counters) },
            _ if packet.active.in_first_eight() => {
                self.occluded_packet_in::<Halves, 8, Halves, W, C>(nodes, packet, counters)
            }
            _ => self.occluded_packet_in::<Pair<Halves>, 16, Halves, W, C>(nodes, packet, counters),
        }
    }

    /// The closest hits of a packet's rays, the first `N` of them in the lanes of `R`, over
    /// nodes of `W` children, a node's children in the lanes of `V`: its groups traced
    /// together, the other rays alone. The packet's active lanes are below `N`.
    #[inline(always)]
    pub(super) fn closest_packet_in<
        R: Lanes<N>,
        const N: usize,
        V: Lanes<LANES>,
        const W: usize,
        C: TraversalCounters,
    >(
        &self,
        nodes: &[WideNode<W>],
        packet: &RayPacket,
        counters: &mut C,
    ) -> [Option<BvhHit>; PACKET_LANES] {
        debug_assert!(u32::from(packet.active.0) >> N == 0, "lanes past {N}");
        let rays = PacketLanes::<R>::gather::<N>(packet);
        let split = rays.split::<N>(u32::from(packet.active.0));
        let mut hits = [None; PACKET_LANES];
        if split.groups[0] != 0 {
            let mut closest: [Closest; N] = from_fn(|lane| Closest::new(packet.rays[lane].t_max));
            for &group in split.groups.iter().take_while(|&&g| g != 0) {
                let group = GroupRays::new(&rays, packet, group);
                self.closest_group_in::<R, N, V, W, C>(
                    nodes,
                    &group,
                    packet,
                    &mut closest,
                    counters,
                );
            }
            for lane in lanes(split.together()) {
                hits[lane] = closest[lane].hit(&self.ids);
            }
        }
        for lane in lanes(split.alone) {
            hits[lane] = self.closest_hit_counted(&packet.rays[lane], counters);
        }
        hits
    }

    /// The closest-hit traversal of one group over nodes of `W` children, offering every hit
    /// to the ray's `closest`.
    #[inline(always)]
    fn closest_group_in<
        R: Lanes<N>,
        const N: usize,
        V: Lanes<LANES>,
        const W: usize,
        C: TraversalCounters,
    >(
        &self,
        nodes: &[WideNode<W>],
        group: &GroupRays<R>,
        packet: &RayPacket,
        closest: &mut [Closest; N],
        counters: &mut C,
    ) {
        // A group's rays have found nothing yet (each lane is in one group), so their
        // intervals are still their own.
        let lanes = group.enter_box::<N>(&self.root_box, group.lanes, group.t_max);
        count_boxes(group.lanes, counters);
        if lanes == 0 {
            return;
        }
        // Where each ray's closest hit so far is: the far end of its box tests. Lanes of other
        // groups, and rays that miss the mesh's box, hold −∞, so that the farthest of all
        // lanes is that of the rays still looking.
        let mut t_max: [f32; N] = from_fn(|lane| {
            if lanes >> lane & 1 == 1 {
                closest[lane].t()
            } else {
                f32::NEG_INFINITY
            }
        });
        let frustum = Frustum::<V>::new::<R, N>(group, lanes);
        // The farthest of the rays' closest hits: no ray enters a box beyond it.
        let mut far = farthest(&t_max);
        let mut stack = Stack::<Opened>::new();
        let mut current = Opened::ROOT;
        loop {
            if current.child.count != 0 {
                // A leaf: its box tested ray by ray, then its triangles against the rays in it.
                let parent = &nodes[current.parent as usize];
                count_boxes(lanes, counters);
                let entering =
                    group.enter_box::<N>(&slot_box(parent, current.slot), lanes, R::load(&t_max));
                if entering != 0 {
                    count_leaf_visits(entering, counters);
                    let visit = Visit {
                        child: current.child,
                        lanes: entering,
                    };
                    let bounds = (&frustum, far);
                    self.closest_in_leaf::<R, N, V, C>(
                        group, packet, visit, bounds, closest, &mut t_max, counters,
                    );
                    far = farthest(&t_max);
                }
            } else {
                let node = &nodes[current.child.reference as usize];
                count_node(node, lanes, counters);
                let (enter, _, mask) = frustum.children(node, far);
                if mask != 0 {
                    let index = current.child.reference;
                    current =
                        open_in_order::<V, W, NEAREST_FIRST>(node, index, enter, mask, &mut stack);
                    continue;
                }
            }
            // The next child that some ray may still enter before its closest hit.
            current = loop {
                let Some(opened) = stack.pop() else {
                    return;
                };
                if opened.t <= far {
                    break opened;
                }
            };
        }
    }

    /// Tests the packs of the leaf `visit` against its rays, keeping each ray's closest hit.
    // Reads the group, its packet, the leaf and the group's bounds; writes the closest hits,
    // their distances and the counters.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn closest_in_leaf<R: Lanes<N>, const N: usize, V: Lanes<LANES>, C: TraversalCounters>(
        &self,
        group: &GroupRays<R>,
        packet: &RayPacket,
        visit: Visit,
        (frustum, far): (&Frustum<V>, f32),
        closest: &mut [Closest; N],
        t_max: &mut [f32; N],
        counters: &mut C,
    ) {
        for pack in self.leaf_packs(visit.child) {
            // The triangles some ray may hit before the farthest closest hit.
            let triangles = frustum.triangles(pack, far) & pack.used();
            if triangles == 0 {
                continue;
            }
            count_triangles(triangles, visit.lanes, counters);
            let found = group.pack_hits::<N>(pack, visit.lanes, triangles);
            for (lane_of_pack, hit) in found.triangles.iter().enumerate() {
                let Some(hit) = hit else { continue };
                let (t, det) = (hit.t.to_array(), hit.det.to_array());
                let uvw = hit.uvw.map(R::to_array);
                let index = pack.first + lane_of_pack as u32;
                for lane in lanes(hit.mask & !found.alone) {
                    let edges = [uvw[0][lane], uvw[1][lane], uvw[2][lane]];
                    closest[lane].offer(t[lane], index, &self.ids, edges, det[lane]);
                    t_max[lane] = closest[lane].t();
                }
            }
            for lane in lanes(found.alone) {
                let pack = std::slice::from_ref(pack);
                let ray = PreparedRay::new(&packet.rays[lane]);
                closest[lane].test_packs::<V, _>(
                    pack,
                    &self.ids,
                    &ray,
                    self.padding,
                    &mut NoCounters,
                );
                t_max[lane] = closest[lane].t();
            }
        }
    }

    /// The lanes of a packet that a triangle blocks, the first `N` of its rays in the lanes
    /// of `R`, over nodes of `W` children in the lanes of `V`: its groups traced together, the
    /// other rays alone. The packet's active lanes are below `N`.
    #[inline(always)]
    pub(super) fn occluded_packet_in<
        R: Lanes<N>,
        const N: usize,
        V: Lanes<LANES>,
        const W: usize,
        C: TraversalCounters,
    >(
        &self,
        nodes: &[WideNode<W>],
        packet: &RayPacket,
        counters: &mut C,
    ) -> u32 {
        debug_assert!(u32::from(packet.active.0) >> N == 0, "lanes past {N}");
        let rays = PacketLanes::<R>::gather::<N>(packet);
        let split = rays.split::<N>(u32::from(packet.active.0));
        let mut blocked = 0;
        for &group in split.groups.iter().take_while(|&&g| g != 0) {
            let group = GroupRays::new(&rays, packet, group);
            blocked |= self.occluded_group_in::<R, N, V, W, C>(nodes, &group, packet, counters);
        }
        for lane in lanes(split.alone) {
            if self.occluded_counted(&packet.rays[lane], counters) {
                blocked |= 1 << lane;
            }
        }
        blocked
    }

    /// The occlusion traversal of one group over nodes of `W` children: the lanes of the
    /// group that a triangle blocks.
    #[inline(always)]
    fn occluded_group_in<
        R: Lanes<N>,
        const N: usize,
        V: Lanes<LANES>,
        const W: usize,
        C: TraversalCounters,
    >(
        &self,
        nodes: &[WideNode<W>],
        group: &GroupRays<R>,
        packet: &RayPacket,
        counters: &mut C,
    ) -> u32 {
        // The rays that can be blocked at all.
        let entered_scene = group.enter_box::<N>(&self.root_box, group.lanes, group.t_max);
        count_boxes(group.lanes, counters);
        if entered_scene == 0 {
            return 0;
        }
        let frustum = Frustum::<V>::new::<R, N>(group, entered_scene);
        let t_max: [f32; N] = group.t_max.to_array();
        let far = farthest(&from_fn::<f32, N, _>(|lane| {
            if entered_scene >> lane & 1 == 1 {
                t_max[lane]
            } else {
                f32::NEG_INFINITY
            }
        }));
        let mut stack = Stack::<Opened>::new();
        let mut blocked = 0u32;
        let mut current = Opened::ROOT;
        loop {
            let open = entered_scene & !blocked;
            if current.child.count != 0 {
                let parent = &nodes[current.parent as usize];
                count_boxes(open, counters);
                let entering =
                    group.enter_box::<N>(&slot_box(parent, current.slot), open, group.t_max);
                if entering != 0 {
                    count_leaf_visits(entering, counters);
                    blocked |= self.blocked_in_leaf::<R, N, V, C>(
                        group,
                        packet,
                        current.child,
                        entering,
                        (&frustum, far),
                        counters,
                    );
                    if blocked == entered_scene {
                        return blocked;
                    }
                }
            } else {
                let node = &nodes[current.child.reference as usize];
                count_node(node, open, counters);
                let (_, leave, mask) = frustum.children(node, far);
                if mask != 0 {
                    let index = current.child.reference;
                    current =
                        open_in_order::<V, W, LAST_FIRST>(node, index, leave, mask, &mut stack);
                    continue;
                }
            }
            current = match stack.pop() {
                Some(opened) => opened,
                None => return blocked,
            };
        }
    }

    /// The rays of `lanes` that a triangle of the leaf `child` blocks.
    #[inline(always)]
    fn blocked_in_leaf<R: Lanes<N>, const N: usize, V: Lanes<LANES>, C: TraversalCounters>(
        &self,
        group: &GroupRays<R>,
        packet: &RayPacket,
        child: Child,
        lanes: u32,
        (frustum, far): (&Frustum<V>, f32),
        counters: &mut C,
    ) -> u32 {
        let mut blocked = 0;
        for pack in self.leaf_packs(child) {
            let triangles = frustum.triangles(pack, far) & pack.used();
            if triangles == 0 {
                continue;
            }
            count_triangles(triangles, lanes & !blocked, counters);
            let found = group.pack_hits::<N>(pack, lanes & !blocked, triangles);
            for hit in found.triangles.iter().flatten() {
                blocked |= hit.mask & !found.alone;
            }
            for lane in self::lanes(found.alone) {
                let ray = PreparedRay::new(&packet.rays[lane]);
                if pack.hits_with::<V>(&ray, self.padding).mask != 0 {
                    blocked |= 1 << lane;
                }
            }
            if blocked == lanes {
                break;
            }
        }
        blocked
    }
}

/// Pixels across a packet's block ([`WideBvh::packet_block`]).
pub const PACKET_BLOCK_COLUMNS: u32 = 4;

const _: () = assert!(PACKET_LANES.is_multiple_of(PACKET_BLOCK_COLUMNS as usize));

/// A block of pixels traced as one packet of camera rays, `columns` × `rows`.
///
/// ```
/// use renderer::bvh::wide::PixelBlock;
///
/// let block = PixelBlock { columns: 4, rows: 4 };
/// assert_eq!(block.columns * block.rows, 16);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelBlock {
    /// Pixels across.
    pub columns: u32,
    /// Pixel rows.
    pub rows: u32,
}

impl PixelBlock {
    /// The block [`PACKET_BLOCK_COLUMNS`] across that packets of `lanes` rays fill.
    pub(crate) fn of(lanes: usize) -> Self {
        Self {
            columns: PACKET_BLOCK_COLUMNS,
            rows: lanes as u32 / PACKET_BLOCK_COLUMNS,
        }
    }
}

/// Reports the tests of one box against the rays `lanes`.
#[inline(always)]
fn count_boxes<C: TraversalCounters>(lanes: u32, counters: &mut C) {
    for _ in 0..lanes.count_ones() {
        counters.box_test();
    }
}

/// Reports a visit of `node` by each ray of `lanes`, and the tests of every used child box
/// against them.
#[inline(always)]
fn count_node<const W: usize, C: TraversalCounters>(
    node: &WideNode<W>,
    lanes: u32,
    counters: &mut C,
) {
    for _ in 0..lanes.count_ones() {
        counters.node_visit();
    }
    for &child in &node.child {
        if child != EMPTY {
            count_boxes(lanes, counters);
        }
    }
}

/// Reports a visit of a leaf by each ray of `lanes`.
#[inline(always)]
fn count_leaf_visits<C: TraversalCounters>(lanes: u32, counters: &mut C) {
    for _ in 0..lanes.count_ones() {
        counters.leaf_visit();
    }
}

/// Reports the tests of the triangles `triangles` (of a pack) against the rays `lanes`.
#[inline(always)]
fn count_triangles<C: TraversalCounters>(triangles: u32, lanes: u32, counters: &mut C) {
    for _ in 0..triangles.count_ones() * lanes.count_ones() {
        counters.triangle_test();
    }
}

/// A packet's rays in groups traced together, and the rest, traced alone.
struct Split {
    /// The groups, as lane masks, the first ones non-zero, the rest 0.
    groups: [u32; PACKET_LANES],
    /// The lanes traced alone: rays with a NaN coordinate, an infinite origin or a zero
    /// direction, and groups too small to pay.
    alone: u32,
}

impl Split {
    /// The lanes traced together.
    #[inline(always)]
    fn together(&self) -> u32 {
        self.groups.iter().fold(0, |all, group| all | group)
    }

    /// Splits `lanes`, whose rays differ in octant or axes, into groups by `traits` (bit `k`
    /// of each: the lane's sign along x, y and z, whether x or y is its dominant axis, whether
    /// its axes are swapped).
    #[cold]
    fn split_by(&mut self, lanes: u32, traits: [u32; 6]) {
        let kind = |lane: usize| {
            traits
                .iter()
                .enumerate()
                .fold(0, |kind, (k, &t)| kind | (t >> lane & 1) << k)
        };
        let mut rest = lanes;
        let mut count = 0;
        while rest != 0 {
            let lead = kind(rest.trailing_zeros() as usize);
            let group = self::lanes(rest)
                .filter(|&lane| kind(lane) == lead)
                .fold(0u32, |mask, lane| mask | 1 << lane);
            rest &= !group;
            if group.count_ones() < MIN_GROUP {
                self.alone |= group;
            } else {
                self.groups[count] = group;
                count += 1;
            }
        }
    }
}

/// Every ray of a packet in the lanes of `R`: what the box and triangle tests need, computed
/// as [`BoxRay`] and [`PreparedRay`] compute it (a division rounds once, in a lane as in a
/// scalar). Inactive lanes hold whatever their rays hold; no answer is read from them.
struct PacketLanes<R> {
    origin: [R; 3],
    dir: [R; 3],
    /// `1 / dir`.
    inv: [R; 3],
    t_min: R,
    t_max: R,
}

impl<R> PacketLanes<R> {
    /// The first `N` rays of `packet`.
    #[inline(always)]
    fn gather<const N: usize>(packet: &RayPacket) -> Self
    where
        R: Lanes<N>,
    {
        let rays = &packet.rays;
        let origin = [
            gather(rays, |r| r.origin.x),
            gather(rays, |r| r.origin.y),
            gather(rays, |r| r.origin.z),
        ];
        let dir = [
            gather(rays, |r| r.dir.x),
            gather(rays, |r| r.dir.y),
            gather(rays, |r| r.dir.z),
        ];
        let one = R::splat(1.0);
        Self {
            origin,
            dir,
            inv: [one.div(dir[0]), one.div(dir[1]), one.div(dir[2])],
            t_min: gather(rays, |r| r.t_min),
            t_max: gather(rays, |r| r.t_max),
        }
    }

    /// The active rays (`active`) in groups that agree on their octant and on the axes of
    /// their triangle tests, as [`BoxRay::octant_of`] and [`PreparedRay::watertight_axes`]
    /// decide them, worked out for all lanes at once; rays with a NaN coordinate, an infinite
    /// origin or a zero direction, and groups under [`MIN_GROUP`] rays, alone.
    #[inline(always)]
    fn split<const N: usize>(&self, active: u32) -> Split
    where
        R: Lanes<N>,
    {
        let mut split = Split {
            groups: [0; PACKET_LANES],
            alone: 0,
        };
        let [ox, oy, oz] = self.origin;
        let [dx, dy, dz] = self.dir;
        // A NaN is the one value unequal to itself. (Written out: an iterator here is not
        // always inlined, and out of line the vector operations are calls.)
        let not_nan = active
            & ox.eq_mask(ox)
            & oy.eq_mask(oy)
            & oz.eq_mask(oz)
            & dx.eq_mask(dx)
            & dy.eq_mask(dy)
            & dz.eq_mask(dz);
        let zero = R::splat(0.0);
        // `|d|`, up to the sign of a zero (which no comparison below sees).
        let abs = |d: R| d.max(zero.sub(d));
        let (ax, ay, az) = (abs(dx), abs(dy), abs(dz));
        // Rays a group's bounds would hold along no axis (`Frustum`): an infinite origin, or no
        // direction at all. In a group they would open every node for all its rays; alone,
        // they cost only themselves.
        let infinity = R::splat(f32::INFINITY);
        let finite_origin =
            abs(ox).lt_mask(infinity) & abs(oy).lt_mask(infinity) & abs(oz).lt_mask(infinity);
        let no_direction = dx.eq_mask(zero) & dy.eq_mask(zero) & dz.eq_mask(zero);
        let finite = not_nan & finite_origin & !no_direction;
        split.alone = active & !finite;
        // The dominant axis: x where `|x|` is the largest, else y where `|y| ≥ |z|`, else z.
        let along_x = ay.le_mask(ax) & az.le_mask(ax);
        let along_y = !along_x & az.le_mask(ay);
        let along_z = !along_x & !along_y;
        let swapped = (along_x & dx.lt_mask(zero))
            | (along_y & dy.lt_mask(zero))
            | (along_z & dz.lt_mask(zero));
        let traits = [
            dx.sign_mask(),
            dy.sign_mask(),
            dz.sign_mask(),
            along_x,
            along_y,
            swapped,
        ];
        let uniform = traits
            .iter()
            .all(|&t| t & finite == 0 || t & finite == finite);
        if uniform {
            if finite.count_ones() < MIN_GROUP {
                split.alone |= finite;
            } else {
                split.groups[0] = finite;
            }
            return split;
        }
        split.split_by(finite, traits);
        split
    }
}

/// One number of every ray, lane by lane.
#[inline(always)]
fn gather<R: Lanes<N>, const N: usize>(rays: &[Ray; PACKET_LANES], f: impl Fn(&Ray) -> f32) -> R {
    R::load(&from_fn(|lane| f(&rays[lane])))
}

/// A child to visit and the rays of the group that visit it.
#[derive(Clone, Copy, Debug)]
struct Visit {
    child: Child,
    lanes: u32,
}

/// A child some ray of a group may enter: slot `slot` of node `parent` (where a leaf's box is
/// read when its rays are tested against it), with the distance it was ordered by.
#[derive(Clone, Copy, Debug)]
struct Opened {
    child: Child,
    parent: u32,
    slot: usize,
    /// The earliest any ray may enter its box (closest hit), or the latest any may leave it
    /// (occlusion).
    t: f32,
}

impl Opened {
    /// The root, where every traversal starts: an inner node.
    const ROOT: Self = Self {
        child: Child {
            reference: 0,
            count: 0,
        },
        parent: 0,
        slot: 0,
        t: f32::NEG_INFINITY,
    };
}

/// A group's rays taken together for a node's box tests: per axis, the smallest and largest
/// origin and reciprocal direction of its rays, so that all of a node's children are tested
/// against the whole group at once, in the lanes of one register, as the single-ray traversal
/// tests them against one ray.
///
/// A child passes if some ray of the group may enter it: the test never turns away a child
/// that a ray's own box test enters, though it may let through one that none does.
/// A ray's distance to a plane is `(plane − origin) · inv`, each operation rounded once, and
/// rounding keeps order: the difference falls as the origin grows, and the product moves one
/// way with each factor while the other keeps its sign. So over all the rays, each distance
/// lies between the products of the extreme differences and the extreme reciprocals (their
/// four corners, two where the rays share an origin, as a camera's do), computed with the
/// same roundings; where a ray enters a box (its largest near distance and `t_min`) lies at
/// or beyond the largest of the lower bounds, and where it leaves (its smallest far distance
/// and `t_max`) at or before the smallest of the upper bounds. A child that fails has been
/// entered by no ray's own box test. Where a ray's origin is not finite, or its reciprocal
/// direction is infinite (a zero component) or zero, the bounds could be NaN: along that axis
/// the group is not bounded at all.
struct Frustum<V> {
    /// Per axis, the row of `WideNode::planes` the rays enter by (their octant's); they leave
    /// by the other of the axis (`^ 1`).
    near: [usize; 3],
    origin_low: [V; 3],
    origin_high: [V; 3],
    inv_low: [V; 3],
    inv_high: [V; 3],
    /// Whether every ray has the same origin: then the two differences are one.
    one_origin: bool,
    /// Per axis, whether the bounds above hold (see the type's documentation).
    bounded: [bool; 3],
    /// The smallest `t_min` of the rays.
    t_min: V,
}

impl<V: Lanes<LANES>> Frustum<V> {
    /// The bounds of the rays `lanes` of `group`, whose `N` lanes are those of `R`.
    #[inline(always)]
    fn new<R: Lanes<N>, const N: usize>(group: &GroupRays<R>, lanes: u32) -> Self {
        let origins = [
            group.origin[0].to_array(),
            group.origin[1].to_array(),
            group.origin[2].to_array(),
        ];
        let invs = [
            group.inv[0].to_array(),
            group.inv[1].to_array(),
            group.inv[2].to_array(),
        ];
        let t_min = group.t_min.to_array();
        // Finite and non-zero, lane by lane: `|x|` below infinity, and unequal to zero.
        // (Written out: a closure is compiled without the traversal's target features.)
        let (zero, infinity) = (R::splat(0.0), R::splat(f32::INFINITY));
        let mut bounded = [false; 3];
        for (axis, axis_bounded) in bounded.iter_mut().enumerate() {
            let (origin, inv) = (group.origin[axis], group.inv[axis]);
            let finite_origin = origin.max(zero.sub(origin)).lt_mask(infinity);
            let finite_inv = inv.max(zero.sub(inv)).lt_mask(infinity);
            *axis_bounded = finite_origin & finite_inv & !inv.eq_mask(zero) & lanes == lanes;
        }
        // The extremes over the group's lanes, then in every lane.
        let mut origin_low = [f32::INFINITY; 3];
        let mut origin_high = [f32::NEG_INFINITY; 3];
        let mut inv_low = [f32::INFINITY; 3];
        let mut inv_high = [f32::NEG_INFINITY; 3];
        let mut least_t_min = f32::INFINITY;
        for lane in self::lanes(lanes) {
            for axis in 0..3 {
                let (origin, inv) = (origins[axis][lane], invs[axis][lane]);
                origin_low[axis] = origin_low[axis].min(origin);
                origin_high[axis] = origin_high[axis].max(origin);
                inv_low[axis] = inv_low[axis].min(inv);
                inv_high[axis] = inv_high[axis].max(inv);
            }
            // `f32::min` passes over a NaN; no such ray gets here (it fails the root's box).
            least_t_min = least_t_min.min(t_min[lane]);
        }
        Self {
            near: [
                group.octant & 1,
                2 + (group.octant >> 1 & 1),
                4 + (group.octant >> 2 & 1),
            ],
            origin_low: splat3(origin_low),
            origin_high: splat3(origin_high),
            inv_low: splat3(inv_low),
            inv_high: splat3(inv_high),
            one_origin: origin_low == origin_high,
            bounded,
            t_min: V::splat(least_t_min),
        }
    }

    /// The children of `node` that some ray of the group may enter before `t_max` (the
    /// farthest any of them still looks), as a mask, with the earliest any ray may enter
    /// each and the latest any may leave it, in the lanes of the children.
    #[inline(always)]
    fn children<const W: usize>(&self, node: &WideNode<W>, t_max: f32) -> (V, V, u32) {
        let (enter, leave, mut mask) = self.boxes(&node.planes, t_max);
        if self.bounded == [false; 3] {
            // Along a bounded axis an unused slot's empty box gives `enter = +∞` and
            // `leave = −∞`; with none, it was not tested at all.
            mask &= used_slots(node);
        }
        (enter, leave, mask)
    }

    /// The triangles of `pack` whose padded boxes some ray of the group may enter before
    /// `t_max`: the others are missed, or beaten by a closest hit already found, by every
    /// ray, whose own test clamps its distance into that box (lanes past the pack's triangles
    /// may be set).
    #[inline(always)]
    fn triangles(&self, pack: &TrianglePack, t_max: f32) -> u32 {
        self.boxes(&pack.bounds, t_max).2
    }

    /// The boxes of `planes` (in the rows of [`WideNode::planes`], box `k` in lane `k`, `W`
    /// of them) that some ray may enter before `t_max`, as a mask, with the earliest any ray
    /// may enter each and the latest any may leave it. An empty box (`min = +∞`,
    /// `max = −∞`) is let through only where no axis is bounded.
    #[inline(always)]
    fn boxes<const W: usize>(&self, planes: &[[f32; W]; 6], t_max: f32) -> (V, V, u32) {
        let mut enter = self.t_min;
        let mut leave = V::splat(t_max);
        for axis in 0..3 {
            if !self.bounded[axis] {
                continue;
            }
            let near = plane_row::<V, W>(&planes[self.near[axis]]);
            let far = plane_row::<V, W>(&planes[self.near[axis] ^ 1]);
            let (low, high) = (self.inv_low[axis], self.inv_high[axis]);
            // No NaN below: the planes of a box are finite (the scene's coordinates are), those
            // of an empty one infinite, and the origins and reciprocals finite and non-zero.
            let (near_low, far_high) = if self.one_origin {
                let near = near.sub(self.origin_low[axis]);
                let far = far.sub(self.origin_low[axis]);
                (
                    near.mul(low).min(near.mul(high)),
                    far.mul(low).max(far.mul(high)),
                )
            } else {
                let (near_a, near_b) = (
                    near.sub(self.origin_high[axis]),
                    near.sub(self.origin_low[axis]),
                );
                let (far_a, far_b) = (
                    far.sub(self.origin_high[axis]),
                    far.sub(self.origin_low[axis]),
                );
                (
                    near_a
                        .mul(low)
                        .min(near_a.mul(high))
                        .min(near_b.mul(low))
                        .min(near_b.mul(high)),
                    far_a
                        .mul(low)
                        .max(far_a.mul(high))
                        .max(far_b.mul(low))
                        .max(far_b.mul(high)),
                )
            };
            enter = near_low.max(enter);
            leave = far_high.min(leave);
        }
        (enter, leave, enter.le_mask(leave) & ((1 << W) - 1))
    }
}

/// Each of three numbers in every lane. (A function, not a closure, so that it is compiled
/// into the traversal with its target features.)
#[inline(always)]
fn splat3<V: Lanes<LANES>>(x: [f32; 3]) -> [V; 3] {
    [V::splat(x[0]), V::splat(x[1]), V::splat(x[2])]
}

/// A row of `W` planes in the lanes of `V`: plane `k` in lane `k`, lanes past `W` zero (and
/// masked off by the callers).
#[inline(always)]
fn plane_row<V: Lanes<LANES>, const W: usize>(row: &[f32; W]) -> V {
    match <&[f32; LANES]>::try_from(row.as_slice()) {
        Ok(row) => V::load(row),
        Err(_) => V::load(&from_fn(|k| if k < W { row[k] } else { 0.0 })),
    }
}

/// The six planes of the box of `node`'s child in `slot`, in the order of
/// [`WideNode::planes`].
#[inline(always)]
fn slot_box<const W: usize>(node: &WideNode<W>, slot: usize) -> [f32; 6] {
    from_fn(|plane| node.planes[plane][slot])
}

/// The slots of `node` that hold a child, as a mask.
#[inline(always)]
fn used_slots<const W: usize>(node: &WideNode<W>) -> u32 {
    (0..W)
        .filter(|&slot| node.child[slot] != EMPTY)
        .fold(0, |mask, slot| mask | 1 << slot)
}

/// The farthest of the distances `t`, NaNs passed over (a ray with a NaN `t_max` fails every
/// box test of its own, the root's first).
#[inline(always)]
fn farthest<const N: usize>(t: &[f32; N]) -> f32 {
    // Eight at a time as a tree of three rounds rather than a chain of seven.
    const { assert!(N.is_multiple_of(8) && N > 0) };
    t.chunks_exact(8)
        .map(|eight| {
            let [a, b, c, d, e, f, g, h] = eight.try_into().expect("eight lanes");
            (a.max(b).max(c.max(d))).max(e.max(f).max(g.max(h)))
        })
        .reduce(f32::max)
        .expect("at least eight lanes")
}

/// Of the children of `node` (the node `index`) in `mask` (at least one), with the distances
/// `at` in their lanes: the one to visit next, the smallest distance or, with `LARGEST`, the
/// largest; the others are left on the stack with their distances, to be taken in the same
/// order. The single-ray traversal's order (`traverse::visit_in_order`), here for entries
/// that keep their parent and slot; the single-ray one is left to itself, where sharing one
/// function through a closure cost its occlusion 6.7% more instructions.
#[inline(always)]
fn open_in_order<V: Lanes<LANES>, const W: usize, const LARGEST: bool>(
    node: &WideNode<W>,
    index: u32,
    at: V,
    mask: u32,
    stack: &mut Stack<Opened>,
) -> Opened {
    // A sort key holds the slot in three bits.
    const { assert!(W <= 8) };
    let distances = at.to_array();
    let open = |slot: usize| Opened {
        child: Child::of(node, slot),
        parent: index,
        slot,
        t: distances[slot],
    };
    let first = mask.trailing_zeros() as usize;
    let rest = mask & (mask - 1);
    if rest == 0 {
        return open(first);
    }
    if rest & (rest - 1) == 0 {
        let second = rest.trailing_zeros() as usize;
        let (next, later) = pair_in_order::<LARGEST>(&distances, first, second);
        stack.push(open(later));
        return open(next);
    }
    let (keys, next) = at.sorted_keys_and_next::<LARGEST>(mask);
    let count = mask.count_ones() as usize;
    if LARGEST {
        for &key in &keys[..count - 1] {
            stack.push(open(key_lane(key)));
        }
    } else {
        for &key in keys[1..count].iter().rev() {
            stack.push(open(key_lane(key)));
        }
    }
    open(key_lane(next))
}

/// The rays of one group, in the lanes of `R`, with what the box and triangle tests need of
/// them; the group's lanes agree on the octant and on the triangle test's axes.
struct GroupRays<R> {
    origin: [R; 3],
    /// `1 / dir`.
    inv: [R; 3],
    /// The watertight test's shear: `dir[kx] / dir[kz]`, `dir[ky] / dir[kz]`, `1 / dir[kz]`.
    shear: [R; 3],
    t_min: R,
    t_max: R,
    /// The octant every ray of the group points into: bit `a` set when negative along axis `a`.
    octant: usize,
    /// The watertight test's axes `kx`, `ky`, `kz`.
    axes: [usize; 3],
    /// The group's lanes.
    lanes: u32,
}

impl<R: Copy> GroupRays<R> {
    #[inline(always)]
    fn new<const N: usize>(rays: &PacketLanes<R>, packet: &RayPacket, lanes: u32) -> Self
    where
        R: Lanes<N>,
    {
        let lead = lanes.trailing_zeros() as usize;
        let lead_dir = packet.rays[lead].dir;
        let axes = PreparedRay::watertight_axes(lead_dir);
        let [kx, ky, kz] = axes;
        let dir = &rays.dir;
        Self {
            origin: rays.origin,
            inv: rays.inv,
            shear: [
                dir[kx].div(dir[kz]),
                dir[ky].div(dir[kz]),
                R::splat(1.0).div(dir[kz]),
            ],
            t_min: rays.t_min,
            t_max: rays.t_max,
            octant: BoxRay::octant_of(lead_dir),
            axes,
            lanes,
        }
    }

    /// Which of the rays `lanes` enter the box `planes` (in the order of
    /// [`WideNode::planes`]) before their `t_max`: a child's box test, for one box.
    #[inline(always)]
    fn enter_box<const N: usize>(&self, planes: &[f32; 6], lanes: u32, t_max: R) -> u32
    where
        R: Lanes<N>,
    {
        let mut enter = self.t_min;
        let mut leave = t_max;
        // Written out: a closure is compiled without the traversal's target features, and
        // this runs for every leaf a group visits.
        for axis in 0..3 {
            let (origin, inv) = (self.origin[axis], self.inv[axis]);
            let near = 2 * axis + (self.octant >> axis & 1);
            enter = R::splat(planes[near]).sub(origin).mul(inv).max(enter);
            leave = R::splat(planes[near ^ 1]).sub(origin).mul(inv).min(leave);
        }
        enter.le_mask(leave) & lanes
    }

    /// The triangles `triangles` of `pack` (used ones, by bit) against the rays `lanes`, by
    /// the pack test's arithmetic for the group's axes. A copy for each permutation of the
    /// axes: a group's rays share theirs, so the choice is one branch a group, and the copy's
    /// loads have fixed offsets.
    /// (The single-ray pack test indexes by the axes instead: there the permutation can change
    /// from one ray to the next.)
    #[inline(always)]
    fn pack_hits<const N: usize>(
        &self,
        pack: &TrianglePack,
        lanes: u32,
        triangles: u32,
    ) -> PackLanes<R>
    where
        R: Lanes<N>,
    {
        match self.axes {
            [1, 2, 0] => self.pack_hits_in::<N, 1, 2, 0>(pack, lanes, triangles),
            [2, 1, 0] => self.pack_hits_in::<N, 2, 1, 0>(pack, lanes, triangles),
            [2, 0, 1] => self.pack_hits_in::<N, 2, 0, 1>(pack, lanes, triangles),
            [0, 2, 1] => self.pack_hits_in::<N, 0, 2, 1>(pack, lanes, triangles),
            [0, 1, 2] => self.pack_hits_in::<N, 0, 1, 2>(pack, lanes, triangles),
            _ => self.pack_hits_in::<N, 1, 0, 2>(pack, lanes, triangles),
        }
    }

    /// `TrianglePack::hits` turned on its side: a triangle at a time, in every lane a ray,
    /// the same operations in the same order.
    #[inline(always)]
    fn pack_hits_in<const N: usize, const KX: usize, const KY: usize, const KZ: usize>(
        &self,
        pack: &TrianglePack,
        lanes: u32,
        triangles: u32,
    ) -> PackLanes<R>
    where
        R: Lanes<N>,
    {
        let mut found = PackLanes {
            triangles: [None; LANES],
            alone: 0,
        };
        let o = &self.origin;
        let [sx, sy, sz] = self.shear;
        for (slot, found_here) in found
            .triangles
            .iter_mut()
            .enumerate()
            .take(pack.lanes as usize)
        {
            if triangles >> slot & 1 == 0 {
                continue;
            }
            // Vertex `i` relative to each origin, in the rays' permuted axes.
            // Written out rather than through a closure: a closure is compiled as a function
            // of its own, without the traversal's target features, and its vector operations
            // were left as calls once the pack's eight lanes made it too large to inline.
            let v = &pack.v;
            let a = [
                R::splat(v[0][KX][slot]).sub(o[KX]),
                R::splat(v[0][KY][slot]).sub(o[KY]),
                R::splat(v[0][KZ][slot]).sub(o[KZ]),
            ];
            let b = [
                R::splat(v[1][KX][slot]).sub(o[KX]),
                R::splat(v[1][KY][slot]).sub(o[KY]),
                R::splat(v[1][KZ][slot]).sub(o[KZ]),
            ];
            let c = [
                R::splat(v[2][KX][slot]).sub(o[KX]),
                R::splat(v[2][KY][slot]).sub(o[KY]),
                R::splat(v[2][KZ][slot]).sub(o[KZ]),
            ];
            let edges = EdgeFunctions::of(&a, &b, &c, sx, sy);
            // An edge function of zero sends the whole pack to the ray's own pack test.
            let edge_zero = edges.zero & lanes;
            found.alone |= edge_zero;
            let mut candidates = lanes & !edge_zero & !edges.missed;
            if candidates == 0 {
                continue;
            }
            let t_raw = edges.distance(&a, &b, &c, sz);
            // The slab test of the triangle's padded box, as `PreparedRay::slab_box` does it.
            let mut enter = R::splat(f32::NEG_INFINITY);
            let mut leave = R::splat(f32::INFINITY);
            for (axis, &origin) in o.iter().enumerate() {
                let near = 2 * axis + (self.octant >> axis & 1);
                let far = near ^ 1;
                let inv = self.inv[axis];
                let near = R::splat(pack.bounds[near][slot]).sub(origin).mul(inv);
                let far = R::splat(pack.bounds[far][slot]).sub(origin).mul(inv);
                // The NaN operand first: a NaN lane (0 · ∞) constrains nothing.
                enter = near.max(enter);
                leave = far.min(leave);
            }
            candidates &= !enter.gt_mask(leave);
            // `max` gives `enter` for a NaN distance, as `f32::max` does.
            let t = t_raw.max(enter).min(leave);
            let mask = candidates & t.gt_mask(self.t_min) & t.lt_mask(self.t_max);
            if mask != 0 {
                *found_here = Some(TriangleLanes {
                    mask,
                    t,
                    uvw: edges.uvw,
                    det: edges.det,
                });
            }
        }
        found
    }
}

/// What a packet's test of one pack found.
struct PackLanes<R> {
    /// Per triangle of the pack, the rays that hit it, if any does.
    triangles: [Option<TriangleLanes<R>>; LANES],
    /// The rays for which an edge function of a triangle of the pack rounded to zero: their
    /// lanes above are to be ignored, and the pack tested for each of them on its own.
    alone: u32,
}

/// The rays that hit one triangle, and for each (in its lane) the outputs of the triangle
/// test: the distance, the unnormalised edge functions and their sum.
#[derive(Clone, Copy)]
struct TriangleLanes<R> {
    mask: u32,
    t: R,
    uvw: [R; 3],
    det: R,
}

/// Children waiting to be visited by a packet, of fixed size and left uninitialised, as the
/// single-ray traversal's stack (the same bound: a packet leaves at most seven children of a
/// node on it, as a ray does).
struct Stack<E> {
    entries: [MaybeUninit<E>; STACK_SIZE],
    top: usize,
}

impl<E: Copy> Stack<E> {
    #[inline(always)]
    fn new() -> Self {
        Self {
            entries: [const { MaybeUninit::uninit() }; STACK_SIZE],
            top: 0,
        }
    }

    #[inline(always)]
    fn push(&mut self, entry: E) {
        // Indexing checks the bound, as the single-ray stack's does.
        self.entries[self.top].write(entry);
        self.top += 1;
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<E> {
        if self.top == 0 {
            return None;
        }
        self.top -= 1;
        // SAFETY: every entry below `top` was written by `push` before `top` passed it, and
        // `top` only moves down past entries here.
        Some(unsafe { self.entries[self.top].assume_init() })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::floats;
    use super::*;

    /// The groups of `rays` (lanes past them inactive), through the portable lanes, eight
    /// wide where they fit in eight lanes and sixteen wide otherwise, as the traversals take
    /// them.
    fn split(rays: &[Ray]) -> Split {
        let packet = RayPacket::new(rays);
        let active = u32::from(packet.active.bits());
        if packet.active.in_first_eight() {
            PacketLanes::<Halves>::gather::<8>(&packet).split::<8>(active)
        } else {
            PacketLanes::<Pair<Halves>>::gather::<16>(&packet).split::<16>(active)
        }
    }

    /// A direction with ties, zeros of both signs and equal magnitudes now and then.
    fn direction(next: &mut impl FnMut() -> f32) -> Vec3 {
        let mut c = || match (next() * 8.0) as i32 {
            0 => 0.0,
            -1 => -0.0,
            1 => 0.5,
            -2 => -0.5,
            _ => next(),
        };
        Vec3::new(c(), c(), c())
    }

    /// Lanes share a group exactly where the single-ray preparation gives their rays the same
    /// octant and the same axes; every active ray is in one group or alone, and alone only
    /// for a NaN, an infinite origin, a zero direction or a group under `MIN_GROUP`.
    #[test]
    fn groups_follow_the_single_ray_octant_and_axes() {
        let mut next = floats(0x5851_f42d_4c95_7f2d);
        let mut split_packets = 0;
        for round in 0..20_000 {
            let n = 1 + round % PACKET_LANES;
            // Two kinds of ray a packet, now and then one of a third.
            let kinds = [direction(&mut next), direction(&mut next)];
            let mut rays: Vec<Ray> = (0..n)
                .map(|_| {
                    let dir = match next() {
                        x if x < -0.8 => direction(&mut next),
                        x if x < 0.1 => kinds[0],
                        _ => kinds[1],
                    };
                    Ray::new(Vec3::new(next(), next(), next()), dir)
                })
                .collect();
            if round % 7 == 0 {
                rays[round % n].origin.y = f32::NAN;
            }
            if round % 11 == 0 {
                rays[(round / 11) % n].origin.z = f32::NEG_INFINITY;
            }
            if round % 13 == 0 {
                rays[(round / 13) % n].dir = Vec3::ZERO;
            }
            let got = split(&rays);
            let kind = |ray: &Ray| {
                (
                    BoxRay::octant_of(ray.dir),
                    PreparedRay::watertight_axes(ray.dir),
                )
            };
            let mut seen = got.alone;
            for &group in got.groups.iter().take_while(|&&g| g != 0) {
                assert!(group.count_ones() >= MIN_GROUP, "round {round}");
                assert_eq!(seen & group, 0, "round {round}: a lane in two groups");
                seen |= group;
                let lead = kind(&rays[group.trailing_zeros() as usize]);
                for (lane, ray) in rays.iter().enumerate() {
                    let alone = ray.origin.is_nan()
                        || ray.dir.is_nan()
                        || !ray.origin.is_finite()
                        || ray.dir == Vec3::ZERO;
                    let same = !alone && kind(ray) == lead;
                    assert_eq!(group >> lane & 1 == 1, same, "round {round} lane {lane}");
                }
            }
            assert_eq!(
                seen,
                (1 << n) - 1,
                "round {round}: every active lane, no other"
            );
            split_packets += usize::from(got.groups[1] != 0);
        }
        assert!(
            split_packets > 100,
            "only {split_packets} packets in two groups"
        );
    }

    /// A camera's block of 4×2 or 4×4 pixels is one group unless it straddles a change of
    /// octant.
    #[test]
    fn a_camera_block_is_one_group() {
        let forward = Vec3::new(0.2, -0.1, -1.0);
        // Lanes by row: all of them, and those of the first two columns.
        for (rows, all, left) in [(2, 0xff, 0x33), (4, 0xffff, 0x3333)] {
            let rays: Vec<Ray> = (0..4 * rows)
                .map(|lane| {
                    let (x, y) = ((lane % 4) as f32, (lane / 4) as f32);
                    Ray::new(Vec3::ZERO, forward + Vec3::new(x * 0.01, y * 0.01, 0.0))
                })
                .collect();
            let got = split(&rays);
            assert_eq!((got.groups[0], got.groups[1], got.alone), (all, 0, 0));
            // Straddling x = 0: two columns each side.
            let across: Vec<Ray> = rays
                .iter()
                .map(|r| Ray::new(r.origin, r.dir - Vec3::new(0.215, 0.0, 0.0)))
                .collect();
            let got = split(&across);
            let right = all & !left;
            assert_eq!((got.groups[0], got.groups[1], got.alone), (left, right, 0));
        }
    }
}
