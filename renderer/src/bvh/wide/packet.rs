//! Packets of up to eight rays traced together through the wide BVH: one walk of the tree for
//! all of them, each child box and each triangle tested against every ray of the packet at
//! once, one ray to a lane of the register.
//!
//! *Why*: neighbouring camera rays meet nearly the same nodes and leaves. Walking the tree once
//! for eight of them shares the loads of each node, the ordering of its children, the stack and
//! the branches between them, where the single-ray traversal ([`traverse`](super::traverse))
//! pays for all of it ray by ray.
//!
//! *Groups*: rays are traced together where they agree on the octant of their direction (so
//! that a node's near and far planes are the same planes for all of them) and on the axes of
//! the watertight test (so that one read of a triangle's coordinates serves all); a packet is
//! split into groups that agree, and a group of fewer than [`MIN_GROUP`] rays, or a ray with a
//! NaN coordinate, goes through the single-ray traversal. A camera's block of 4×2 pixels is
//! one group unless it straddles a plane where a direction component changes sign, or a
//! diagonal where the dominant axis changes.
//!
//! *Traversal*: a group first tests the box around the root's children (`WideBvh::root_box`),
//! so that rays that miss the mesh cost one box test; then a child is visited if any ray of
//! the group enters its box within its own interval (`t_min` to its closest hit so far),
//! with the rays that do; the children hit are
//! visited nearest first by the distance at which the group's first ray enters them, the
//! others kept on a stack with the rays that entered each and where, and a child popped behind
//! the closest hits of all its rays is skipped. Occlusion takes the children, leaves and inner
//! nodes alike, in the order the group's first ray leaves them, the last first, as the
//! single-ray query does; it drops each ray once it is blocked, and ends when every ray is.
//!
//! *The same bits*: every ray gets the answer [`WideBvh::closest_hit`] and
//! [`WideBvh::occluded`] give it, bit for bit. A lane's box test is the single-ray box test of
//! its ray (the same subtraction and multiplication, the same NaN rules), and a ray's closest
//! hit depends only on the tests of the triangles it could hit, never on which other boxes
//! were opened nor in which order: the closest-hit rule is order-free, and a box never
//! rejects a hit on a triangle inside it (the node's box holds the triangle's padded box, to
//! which the triangle test clamps its distance). A lane's triangle test is the pack test of
//! its ray ([`pack`](super::pack)), operation for operation, with the triangle's coordinates
//! in every lane where the pack test has the ray's; a ray for which one of a pack's edge
//! functions rounds to zero is given its own pack test of that pack, which takes the
//! double-precision fallback for every triangle of the pack, as it does for that ray alone.

use std::array::from_fn;
use std::mem::MaybeUninit;

use crate::geometry::{BoxRay, PreparedRay, Ray};
use crate::math::Vec3;

use super::super::{BvhHit, Closest, NoCounters, TraversalCounters};
use super::build::STACK_SIZE;
use super::lanes::{Halves, Lanes};
use super::lanes::{insertion_sorted_keys, key_lane, sort_key};
use super::pack::EdgeFunctions;
use super::traverse::Child;
use super::{EMPTY, LANES, Nodes, TrianglePack, WideBvh, WideNode};

/// Rays in a packet: the lanes of one AVX register.
pub const PACKET_LANES: usize = 8;

/// Groups of fewer rays than this go through the single-ray traversal, ray by ray: a packet
/// tests each child of a node with an instruction for every box plane, where the single-ray
/// traversal tests all of a node's children with one, so a few rays do not pay for it. Camera
/// rays of a row of a block (256², one thread, AVX2), as packets against alone: three rays
/// 0.99× on `cornell` and 0.81× on `treasure`, four 1.15–1.22× and 0.91×, five 1.40× and
/// 1.02× (BENCHMARKS.md, "Packets of camera rays").
const MIN_GROUP: u32 = 4;

/// A set of a packet's lanes: bit `k` for lane `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaneMask(u8);

impl LaneMask {
    /// No lane.
    pub const NONE: Self = Self(0);
    /// Every lane.
    pub const ALL: Self = Self(u8::MAX);

    /// Lanes `0..n`.
    ///
    /// # Panics
    /// When `n` is over [`PACKET_LANES`].
    pub fn first(n: usize) -> Self {
        assert!(n <= PACKET_LANES, "a packet has {PACKET_LANES} lanes");
        Self(((1u32 << n) - 1) as u8)
    }

    /// The lanes whose bits are set in `bits`.
    pub const fn from_bits(bits: u8) -> Self {
        Self(bits)
    }

    /// Bit `k` set for lane `k`.
    pub const fn bits(self) -> u8 {
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

/// Up to eight rays to be traced together. The rays in lanes outside `active` are never
/// looked at: a block of pixels cut by the image's edge leaves its outer lanes inactive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayPacket {
    /// The ray in each lane.
    pub rays: [Ray; PACKET_LANES],
    /// The lanes that hold rays to trace.
    pub active: LaneMask,
}

impl RayPacket {
    /// `rays` (none to eight) in lanes 0, 1, …; the lanes after them inactive.
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
    /// a child's box tested for a packet counts once for every ray of the packet that reached
    /// its node, a triangle once for every ray that reached its leaf, and the box around the
    /// root's children, which a packet tests first, once for every ray, so that the counts per
    /// ray compare with those of the single-ray traversal (which the rays traced alone report
    /// as it does).
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
        LaneMask(blocked as u8)
    }

    /// The closest-hit query of a packet over nodes of `W` children, on AVX-512 or AVX2 where
    /// the processor has them, else on two SSE halves.
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
            // SAFETY: as above, here AVX2.
            #[cfg(target_arch = "x86_64")]
            super::Simd::Avx2 => unsafe { self.closest_packet_avx2(nodes, packet, counters) },
            _ => self.closest_packet_in::<Halves, W, C>(nodes, packet, counters),
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
            // SAFETY: as above, here AVX2.
            #[cfg(target_arch = "x86_64")]
            super::Simd::Avx2 => unsafe { self.occluded_packet_avx2(nodes, packet, counters) },
            _ => self.occluded_packet_in::<Halves, W, C>(nodes, packet, counters),
        }
    }

    /// The closest hits of a packet's rays in the lanes of `V` over nodes of `W` children: its
    /// groups traced together, the other rays alone.
    #[inline(always)]
    pub(super) fn closest_packet_in<
        V: Lanes<PACKET_LANES>,
        const W: usize,
        C: TraversalCounters,
    >(
        &self,
        nodes: &[WideNode<W>],
        packet: &RayPacket,
        counters: &mut C,
    ) -> [Option<BvhHit>; PACKET_LANES] {
        let rays = PacketLanes::<V>::gather(packet);
        let split = rays.split(u32::from(packet.active.0));
        let mut hits = [None; PACKET_LANES];
        if split.groups[0] != 0 {
            let mut closest: [Closest; PACKET_LANES] =
                from_fn(|lane| Closest::new(packet.rays[lane].t_max));
            for &group in split.groups.iter().take_while(|&&g| g != 0) {
                let group = GroupRays::new(&rays, packet, group);
                self.closest_group_in(nodes, &group, packet, &mut closest, counters);
            }
            for lane in lanes(split.together()) {
                hits[lane] = closest[lane].hit();
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
    fn closest_group_in<V: Lanes<PACKET_LANES>, const W: usize, C: TraversalCounters>(
        &self,
        nodes: &[WideNode<W>],
        group: &GroupRays<V>,
        packet: &RayPacket,
        closest: &mut [Closest; PACKET_LANES],
        counters: &mut C,
    ) {
        // Where each ray's closest hit so far is: the far end of its box tests.
        let mut t_max: [f32; PACKET_LANES] = from_fn(|lane| closest[lane].t());
        let lanes = group.enter_box(&self.root_box, group.lanes, V::load(&t_max));
        count_boxes(1, group.lanes, counters);
        if lanes == 0 {
            return;
        }
        let mut stack = Stack::<Deferred>::new();
        let mut entered = Entered::new();
        let mut current = Visit {
            child: Child {
                reference: 0,
                count: 0,
            },
            lanes,
        };
        loop {
            if current.child.count != 0 {
                self.closest_in_leaf(group, packet, current, closest, &mut t_max, counters);
            } else {
                let node = &nodes[current.child.reference as usize];
                let far = V::load(&t_max);
                group.children::<W, false, C>(node, current.lanes, far, &mut entered, counters);
                if entered.children != 0 {
                    current = entered.visit_nearest_first(node, group.lead, &mut stack);
                    continue;
                }
            }
            // The next child some ray of it still needs.
            let far = V::load(&t_max);
            current = loop {
                let Some(deferred) = stack.pop() else {
                    return;
                };
                let lanes = deferred.lanes & V::load(&deferred.enter).le_mask(far);
                if lanes != 0 {
                    break Visit {
                        child: deferred.child,
                        lanes,
                    };
                }
            };
        }
    }

    /// Tests the packs of the leaf `visit` against its rays, keeping each ray's closest hit.
    #[inline(always)]
    fn closest_in_leaf<V: Lanes<PACKET_LANES>, C: TraversalCounters>(
        &self,
        group: &GroupRays<V>,
        packet: &RayPacket,
        visit: Visit,
        closest: &mut [Closest; PACKET_LANES],
        t_max: &mut [f32; PACKET_LANES],
        counters: &mut C,
    ) {
        for pack in self.leaf_packs(visit.child) {
            count_triangles(pack, visit.lanes, counters);
            let found = group.pack_hits(pack, visit.lanes);
            for (lane_of_pack, hit) in found.triangles.iter().enumerate() {
                let Some(hit) = hit else { continue };
                let (t, det) = (hit.t.to_array(), hit.det.to_array());
                let uvw = hit.uvw.map(V::to_array);
                let index = pack.first + lane_of_pack as u32;
                let original = self.ids[index as usize];
                for lane in lanes(hit.mask & !found.alone) {
                    let edges = [uvw[0][lane], uvw[1][lane], uvw[2][lane]];
                    closest[lane].offer(t[lane], index, original, edges, det[lane]);
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

    /// The lanes of a packet that a triangle blocks, its rays in the lanes of `V`, over nodes
    /// of `W` children: its groups traced together, the other rays alone.
    #[inline(always)]
    pub(super) fn occluded_packet_in<
        V: Lanes<PACKET_LANES>,
        const W: usize,
        C: TraversalCounters,
    >(
        &self,
        nodes: &[WideNode<W>],
        packet: &RayPacket,
        counters: &mut C,
    ) -> u32 {
        let rays = PacketLanes::<V>::gather(packet);
        let split = rays.split(u32::from(packet.active.0));
        let mut blocked = 0;
        for &group in split.groups.iter().take_while(|&&g| g != 0) {
            let group = GroupRays::new(&rays, packet, group);
            blocked |= self.occluded_group_in(nodes, &group, packet, counters);
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
    fn occluded_group_in<V: Lanes<PACKET_LANES>, const W: usize, C: TraversalCounters>(
        &self,
        nodes: &[WideNode<W>],
        group: &GroupRays<V>,
        packet: &RayPacket,
        counters: &mut C,
    ) -> u32 {
        // The rays that can be blocked at all.
        let entered_scene = group.enter_box(&self.root_box, group.lanes, group.t_max);
        count_boxes(1, group.lanes, counters);
        if entered_scene == 0 {
            return 0;
        }
        let mut stack = Stack::<Visit>::new();
        let mut entered = Entered::new();
        let mut blocked = 0u32;
        let mut current = Visit {
            child: Child {
                reference: 0,
                count: 0,
            },
            lanes: entered_scene,
        };
        loop {
            if current.child.count != 0 {
                blocked |=
                    self.blocked_in_leaf(group, packet, current.child, current.lanes, counters);
                if blocked == entered_scene {
                    return blocked;
                }
            } else {
                let node = &nodes[current.child.reference as usize];
                group.children::<W, true, C>(
                    node,
                    current.lanes,
                    group.t_max,
                    &mut entered,
                    counters,
                );
                if entered.children != 0 {
                    current = entered.visit_last_exit_first(node, group.lead, &mut stack);
                    current.lanes &= !blocked;
                    if current.lanes != 0 {
                        continue;
                    }
                }
            }
            // The next child some ray not yet blocked still needs.
            current = loop {
                let Some(visit) = stack.pop() else {
                    return blocked;
                };
                if visit.lanes & !blocked != 0 {
                    break Visit {
                        lanes: visit.lanes & !blocked,
                        ..visit
                    };
                }
            };
        }
    }

    /// The rays of `lanes` that a triangle of the leaf `child` blocks.
    #[inline(always)]
    fn blocked_in_leaf<V: Lanes<PACKET_LANES>, C: TraversalCounters>(
        &self,
        group: &GroupRays<V>,
        packet: &RayPacket,
        child: Child,
        lanes: u32,
        counters: &mut C,
    ) -> u32 {
        let mut blocked = 0;
        for pack in self.leaf_packs(child) {
            count_triangles(pack, lanes & !blocked, counters);
            let found = group.pack_hits(pack, lanes & !blocked);
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

/// Reports the tests of `boxes` boxes against the rays `lanes`.
#[inline(always)]
fn count_boxes<C: TraversalCounters>(boxes: u32, lanes: u32, counters: &mut C) {
    for _ in 0..boxes * lanes.count_ones() {
        counters.box_test();
    }
}

/// Reports the tests of `pack`'s triangles against the rays `lanes`.
#[inline(always)]
fn count_triangles<C: TraversalCounters>(pack: &TrianglePack, lanes: u32, counters: &mut C) {
    for _ in 0..pack.lanes * lanes.count_ones() {
        counters.triangle_test();
    }
}

/// A packet's rays in groups traced together, and the rest, traced alone.
struct Split {
    /// The groups, as lane masks, the first ones non-zero, the rest 0.
    groups: [u32; PACKET_LANES],
    /// The lanes traced alone: rays with a NaN coordinate, and groups too small to pay.
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

/// Every ray of a packet in the lanes of `V`: what the box and triangle tests need, computed
/// as [`BoxRay`] and [`PreparedRay`] compute it (a division rounds once, in a lane as in a
/// scalar). Inactive lanes hold whatever their rays hold; no answer is read from them.
struct PacketLanes<V> {
    origin: [V; 3],
    dir: [V; 3],
    /// `1 / dir`.
    inv: [V; 3],
    t_min: V,
    t_max: V,
}

impl<V: Lanes<PACKET_LANES>> PacketLanes<V> {
    #[inline(always)]
    fn gather(packet: &RayPacket) -> Self {
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
        let one = V::splat(1.0);
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
    /// decide them, worked out for all lanes at once; rays with a NaN coordinate, and groups
    /// under [`MIN_GROUP`] rays, alone.
    #[inline(always)]
    fn split(&self, active: u32) -> Split {
        let mut split = Split {
            groups: [0; PACKET_LANES],
            alone: 0,
        };
        let [ox, oy, oz] = self.origin;
        let [dx, dy, dz] = self.dir;
        // A NaN is the one value unequal to itself. (Written out: an iterator here is not
        // always inlined, and out of line the vector operations are calls.)
        let finite = active
            & ox.eq_mask(ox)
            & oy.eq_mask(oy)
            & oz.eq_mask(oz)
            & dx.eq_mask(dx)
            & dy.eq_mask(dy)
            & dz.eq_mask(dz);
        split.alone = active & !finite;
        let zero = V::splat(0.0);
        // `|d|`, up to the sign of a zero (which no comparison below sees).
        let abs = |d: V| d.max(zero.sub(d));
        let (ax, ay, az) = (abs(dx), abs(dy), abs(dz));
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
fn gather<V: Lanes<PACKET_LANES>>(rays: &[Ray; PACKET_LANES], f: impl Fn(&Ray) -> f32) -> V {
    V::load(&from_fn(|lane| f(&rays[lane])))
}

/// A child to visit and the rays of the group that visit it.
#[derive(Clone, Copy, Debug)]
struct Visit {
    child: Child,
    lanes: u32,
}

/// A child left for later by the closest-hit traversal, with the rays that entered its box
/// and the distance at which each did.
#[derive(Clone, Copy, Debug)]
struct Deferred {
    child: Child,
    lanes: u32,
    enter: [f32; PACKET_LANES],
}

/// The rays of one group, in the lanes of `V`, with what the box and triangle tests need of
/// them; the group's lanes agree on the octant and on the triangle test's axes.
struct GroupRays<V> {
    origin: [V; 3],
    /// `1 / dir`.
    inv: [V; 3],
    /// The watertight test's shear: `dir[kx] / dir[kz]`, `dir[ky] / dir[kz]`, `1 / dir[kz]`.
    shear: [V; 3],
    t_min: V,
    t_max: V,
    /// The octant every ray of the group points into: bit `a` set when negative along axis `a`.
    octant: usize,
    /// The watertight test's axes `kx`, `ky`, `kz`.
    axes: [usize; 3],
    /// The group's lanes.
    lanes: u32,
    /// The group's first lane: the ray whose distances order a node's children.
    lead: usize,
}

impl<V: Lanes<PACKET_LANES>> GroupRays<V> {
    #[inline(always)]
    fn new(rays: &PacketLanes<V>, packet: &RayPacket, lanes: u32) -> Self {
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
                V::splat(1.0).div(dir[kz]),
            ],
            t_min: rays.t_min,
            t_max: rays.t_max,
            octant: BoxRay::octant_of(lead_dir),
            axes,
            lanes,
            lead,
        }
    }

    /// Which of the rays `lanes` enter the box `planes` (in the order of
    /// [`WideNode::planes`]) before their `t_max`: a child's box test, for one box.
    #[inline(always)]
    fn enter_box(&self, planes: &[f32; 6], lanes: u32, t_max: V) -> u32 {
        let t = |plane: usize, axis: usize| {
            V::splat(planes[plane])
                .sub(self.origin[axis])
                .mul(self.inv[axis])
        };
        let mut enter = self.t_min;
        let mut leave = t_max;
        for axis in 0..3 {
            let near = 2 * axis + (self.octant >> axis & 1);
            enter = t(near, axis).max(enter);
            leave = t(near ^ 1, axis).min(leave);
        }
        enter.le_mask(leave) & lanes
    }

    /// Which of the rays `lanes` enter each child of `node` before their `t_max`, and where,
    /// into `entered`: [`children_in`](Self::children_in) for the group's octant.
    #[inline(always)]
    fn children<const W: usize, const LEAVE: bool, C: TraversalCounters>(
        &self,
        node: &WideNode<W>,
        lanes: u32,
        t_max: V,
        entered: &mut Entered<W>,
        counters: &mut C,
    ) {
        match self.octant {
            0 => self.children_in::<0, W, LEAVE, C>(node, lanes, t_max, entered, counters),
            1 => self.children_in::<1, W, LEAVE, C>(node, lanes, t_max, entered, counters),
            2 => self.children_in::<2, W, LEAVE, C>(node, lanes, t_max, entered, counters),
            3 => self.children_in::<3, W, LEAVE, C>(node, lanes, t_max, entered, counters),
            4 => self.children_in::<4, W, LEAVE, C>(node, lanes, t_max, entered, counters),
            5 => self.children_in::<5, W, LEAVE, C>(node, lanes, t_max, entered, counters),
            6 => self.children_in::<6, W, LEAVE, C>(node, lanes, t_max, entered, counters),
            _ => self.children_in::<7, W, LEAVE, C>(node, lanes, t_max, entered, counters),
        }
    }

    /// [`children`](Self::children) for rays of octant `OCTANT`, whose near and far planes
    /// are then constants: one load of each plane of a child, no address computed from the
    /// octant. Per lane the arithmetic of the single-ray box test (`WideRay::boxes`). With
    /// `LEAVE`, where the rays leave each child entered is kept too.
    #[inline(always)]
    fn children_in<const OCTANT: usize, const W: usize, const LEAVE: bool, C: TraversalCounters>(
        &self,
        node: &WideNode<W>,
        lanes: u32,
        t_max: V,
        entered: &mut Entered<W>,
        counters: &mut C,
    ) {
        // The plane (of `WideNode::planes`) the rays enter by along `axis`, and the one they
        // leave by, as the single-ray `WideRay` has them (there as offsets into the planes).
        let near = |axis: usize| 2 * axis + (OCTANT >> axis & 1);
        let far = |axis: usize| near(axis) ^ 1;
        entered.children = 0;
        let mut used = 0;
        for slot in 0..W {
            if node.child[slot] == EMPTY {
                continue;
            }
            used += 1;
            let t = |plane: usize, axis: usize| {
                V::splat(node.planes[plane][slot])
                    .sub(self.origin[axis])
                    .mul(self.inv[axis])
            };
            // `min`/`max` give their argument for a NaN lane: the NaN operand comes first.
            let mut enter = self.t_min;
            let mut leave = t_max;
            for axis in 0..3 {
                enter = t(near(axis), axis).max(enter);
                leave = t(far(axis), axis).min(leave);
            }
            let hit = enter.le_mask(leave) & lanes;
            if hit != 0 {
                entered.children |= 1 << slot;
                entered.lanes[slot] = hit;
                entered.enter[slot].write(enter.to_array());
                if LEAVE {
                    entered.leave[slot].write(leave.to_array());
                }
            }
        }
        count_boxes(used, lanes, counters);
    }

    /// Every used triangle of `pack` against the rays `lanes`, by the pack test's arithmetic
    /// for the group's axes. A copy for each permutation of the axes: a group's rays share
    /// theirs, so the choice is one branch a group, and the copy's loads have fixed offsets.
    /// (The single-ray pack test indexes by the axes instead: there the permutation can change
    /// from one ray to the next.)
    #[inline(always)]
    fn pack_hits(&self, pack: &TrianglePack, lanes: u32) -> PackLanes<V> {
        match self.axes {
            [1, 2, 0] => self.pack_hits_in::<1, 2, 0>(pack, lanes),
            [2, 1, 0] => self.pack_hits_in::<2, 1, 0>(pack, lanes),
            [2, 0, 1] => self.pack_hits_in::<2, 0, 1>(pack, lanes),
            [0, 2, 1] => self.pack_hits_in::<0, 2, 1>(pack, lanes),
            [0, 1, 2] => self.pack_hits_in::<0, 1, 2>(pack, lanes),
            _ => self.pack_hits_in::<1, 0, 2>(pack, lanes),
        }
    }

    /// `TrianglePack::hits` turned on its side: a triangle at a time, in every lane a ray,
    /// the same operations in the same order.
    #[inline(always)]
    fn pack_hits_in<const KX: usize, const KY: usize, const KZ: usize>(
        &self,
        pack: &TrianglePack,
        lanes: u32,
    ) -> PackLanes<V> {
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
            // Vertex `i` relative to each origin, in the rays' permuted axes.
            // Written out rather than through a closure: a closure is compiled as a function
            // of its own, without the traversal's target features, and its vector operations
            // were left as calls once the pack's eight lanes made it too large to inline.
            let v = &pack.v;
            let a = [
                V::splat(v[0][KX][slot]).sub(o[KX]),
                V::splat(v[0][KY][slot]).sub(o[KY]),
                V::splat(v[0][KZ][slot]).sub(o[KZ]),
            ];
            let b = [
                V::splat(v[1][KX][slot]).sub(o[KX]),
                V::splat(v[1][KY][slot]).sub(o[KY]),
                V::splat(v[1][KZ][slot]).sub(o[KZ]),
            ];
            let c = [
                V::splat(v[2][KX][slot]).sub(o[KX]),
                V::splat(v[2][KY][slot]).sub(o[KY]),
                V::splat(v[2][KZ][slot]).sub(o[KZ]),
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
            let mut enter = V::splat(f32::NEG_INFINITY);
            let mut leave = V::splat(f32::INFINITY);
            for (axis, &origin) in o.iter().enumerate() {
                let near = 2 * axis + (self.octant >> axis & 1);
                let far = near ^ 1;
                let inv = self.inv[axis];
                let near = V::splat(pack.bounds[near][slot]).sub(origin).mul(inv);
                let far = V::splat(pack.bounds[far][slot]).sub(origin).mul(inv);
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
struct PackLanes<V> {
    /// Per triangle of the pack, the rays that hit it, if any does.
    triangles: [Option<TriangleLanes<V>>; LANES],
    /// The rays for which an edge function of a triangle of the pack rounded to zero: their
    /// lanes above are to be ignored, and the pack tested for each of them on its own.
    alone: u32,
}

/// The rays that hit one triangle, and for each (in its lane) the outputs of the triangle
/// test: the distance, the unnormalised edge functions and their sum.
#[derive(Clone, Copy)]
struct TriangleLanes<V> {
    mask: u32,
    t: V,
    uvw: [V; 3],
    det: V,
}

/// The children of a node that rays of a packet enter.
struct Entered<const W: usize> {
    /// Bit `slot` set: some ray enters child `slot`.
    children: u32,
    /// Per child: the rays that enter it.
    lanes: [u32; W],
    /// Per child that some ray enters: where each ray enters it (written only for those; the
    /// others hold what an earlier node left, or nothing).
    enter: [MaybeUninit<[f32; PACKET_LANES]>; W],
    /// The same for where each ray leaves it, written only by the occlusion query's box
    /// tests.
    leave: [MaybeUninit<[f32; PACKET_LANES]>; W],
}

impl<const W: usize> Entered<W> {
    #[inline(always)]
    fn new() -> Self {
        Self {
            children: 0,
            lanes: [0; W],
            enter: [const { MaybeUninit::uninit() }; W],
            leave: [const { MaybeUninit::uninit() }; W],
        }
    }

    /// Where the rays enter child `slot`, which some ray enters.
    #[inline(always)]
    fn enter(&self, slot: usize) -> [f32; PACKET_LANES] {
        debug_assert!(self.children >> slot & 1 == 1);
        // SAFETY: `children` has bit `slot` set only where `children()` wrote `enter[slot]`.
        unsafe { self.enter[slot].assume_init() }
    }

    /// Where the rays leave child `slot`, which some ray enters, in a node whose box tests
    /// kept it (`LEAVE`).
    #[inline(always)]
    fn leave(&self, slot: usize) -> [f32; PACKET_LANES] {
        debug_assert!(self.children >> slot & 1 == 1);
        // SAFETY: `children` has bit `slot` set only where `children()` wrote `enter[slot]`,
        // and the occlusion query, the only caller, asks it to write `leave[slot]` with it.
        unsafe { self.leave[slot].assume_init() }
    }

    /// Of the children entered (at least one), the nearest to the ray in lane `lead`, to be
    /// visited next; the others are left on the stack, nearer ones on top.
    #[inline(always)]
    fn visit_nearest_first(
        &self,
        node: &WideNode<W>,
        lead: usize,
        stack: &mut Stack<Deferred>,
    ) -> Visit {
        // A sort key holds the slot in three bits.
        const { assert!(W <= 8) };
        let visit = |slot: usize| self.visit(node, slot);
        let mut defer = |slot: usize| {
            stack.push(Deferred {
                child: Child::of(node, slot),
                lanes: self.lanes[slot],
                enter: self.enter(slot),
            })
        };
        let first = self.children.trailing_zeros() as usize;
        let rest = self.children & (self.children - 1);
        if rest == 0 {
            return visit(first);
        }
        let distance = |slot: usize| self.enter(slot)[lead];
        if rest & (rest - 1) == 0 {
            let second = rest.trailing_zeros() as usize;
            let (near, far) = if distance(second) < distance(first) {
                (second, first)
            } else {
                (first, second)
            };
            defer(far);
            return visit(near);
        }
        // More: an insertion sort of their keys, nearest last, then pushed far to near.
        let mut keys = [0u32; W];
        let mut len = 0;
        for slot in lanes(self.children) {
            let key = sort_key(distance(slot), slot);
            let mut k = len;
            while k > 0 && keys[k - 1] < key {
                keys[k] = keys[k - 1];
                k -= 1;
            }
            keys[k] = key;
            len += 1;
        }
        for &key in &keys[..len - 1] {
            defer(key_lane(key));
        }
        visit(key_lane(keys[len - 1]))
    }

    /// Of the children entered (at least one), the one the ray in lane `lead` leaves last, to
    /// be visited next by the occlusion query; the others are left on the stack, later
    /// leaving ones on top. The single-ray query's order (`WideBvh::occluded`), for the
    /// group's first ray. (The closest hit's order, `visit_nearest_first`, is written apart:
    /// one function for both cost its camera packets 4% more instructions.)
    #[inline(always)]
    fn visit_last_exit_first(
        &self,
        node: &WideNode<W>,
        lead: usize,
        stack: &mut Stack<Visit>,
    ) -> Visit {
        // A sort key holds the slot in three bits.
        const { assert!(W <= 8) };
        let first = self.children.trailing_zeros() as usize;
        let rest = self.children & (self.children - 1);
        if rest == 0 {
            return self.visit(node, first);
        }
        let distance = |slot: usize| self.leave(slot)[lead];
        if rest & (rest - 1) == 0 {
            let second = rest.trailing_zeros() as usize;
            let (later, sooner) = if distance(second) > distance(first) {
                (second, first)
            } else {
                (first, second)
            };
            stack.push(self.visit(node, sooner));
            return self.visit(node, later);
        }
        // More: their keys sorted, the ray's last exit last, then pushed in that order.
        let mut distances = [0.0; W];
        for slot in lanes(self.children) {
            distances[slot] = distance(slot);
        }
        let keys = insertion_sorted_keys(&distances, self.children);
        let len = self.children.count_ones() as usize;
        for &key in &keys[..len - 1] {
            stack.push(self.visit(node, key_lane(key)));
        }
        self.visit(node, key_lane(keys[len - 1]))
    }

    /// Child `slot` of `node`, with the rays that enter it.
    #[inline(always)]
    fn visit(&self, node: &WideNode<W>, slot: usize) -> Visit {
        Visit {
            child: Child::of(node, slot),
            lanes: self.lanes[slot],
        }
    }
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

    /// The groups of `rays` (lanes past them inactive), through the portable lanes.
    fn split(rays: &[Ray]) -> Split {
        let packet = RayPacket::new(rays);
        PacketLanes::<Halves>::gather(&packet).split(u32::from(packet.active.bits()))
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
    /// for a NaN or a group under `MIN_GROUP`.
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
                    let nan = ray.origin.is_nan() || ray.dir.is_nan();
                    let same = !nan && kind(ray) == lead;
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

    /// A camera's block of 4×2 pixels is one group unless it straddles a change of octant.
    #[test]
    fn a_camera_block_is_one_group() {
        let forward = Vec3::new(0.2, -0.1, -1.0);
        let rays: Vec<Ray> = (0..PACKET_LANES)
            .map(|lane| {
                let (x, y) = ((lane % 4) as f32, (lane / 4) as f32);
                Ray::new(Vec3::ZERO, forward + Vec3::new(x * 0.01, y * 0.01, 0.0))
            })
            .collect();
        let got = split(&rays);
        assert_eq!((got.groups[0], got.groups[1], got.alone), (0xff, 0, 0));
        // Straddling x = 0: four rays each side.
        let across: Vec<Ray> = rays
            .iter()
            .map(|r| Ray::new(r.origin, r.dir - Vec3::new(0.215, 0.0, 0.0)))
            .collect();
        let got = split(&across);
        assert_eq!((got.groups[0], got.groups[1], got.alone), (0x33, 0xcc, 0));
    }
}
