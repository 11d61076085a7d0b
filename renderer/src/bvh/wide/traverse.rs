//! Traversal of the wide BVH with a fixed stack, for nodes of four children (SSE) and of eight
//! (AVX-512 or AVX2 where the processor has them, two SSE halves elsewhere): front to back for
//! the closest hit, and in the order the ray leaves boxes, the last first, for occlusion.

use std::mem::MaybeUninit;

use glam::Vec4;

use crate::geometry::{BoxRay, PreparedRay, Ray};

use super::super::{Blockers, BvhHit, Closest, NoCounters, TraversalCounters};
use super::build::STACK_SIZE;
use super::lanes::{Halves, Lanes, key_lane};
use super::{LANES, Nodes, TrianglePack, WideBvh, WideNode};

/// A ray ready for `W` boxes at a time: its origin and reciprocal direction in every lane,
/// and, from the octant of its direction, where in a node's planes are the ones it enters and
/// leaves by along each axis.
///
/// Where the lanes take the fused form of [`Lanes::plane_distance`], `plane · inv − offset`,
/// the ray also holds each axis's two offsets: `origin · inv`, moved up by `slack` for the
/// planes it enters by and down by `slack` for those it leaves by, so that the fused distance
/// to a near plane is never above the octree's `(plane − origin) · inv`, and to a far plane
/// never below it. The box test then keeps every box the octree's arithmetic keeps, and a few
/// it does not, which the triangle tests turn away: the same hits, in the same bits. With `u`
/// the unit roundoff (2⁻²⁴), `R` the largest magnitude of a plane along the axis (the
/// tree's `plane_reach`) and `o`, `i` the origin and reciprocal direction: the octree's
/// distance is within `2u (R + |o|) |i|` of the exact `(plane − origin) · inv` (one rounding
/// of the difference, of at most `R + |o|`, and one of the product), and so is the fused one
/// (one rounding of `o · i`, and one of the result); the slack, `2⁻²⁰ (R + |o|) |i|` and the
/// smallest normal float (for results too small to be rounded relatively), is four times
/// their sum, so that the rounding of its own few operations is covered too. The slack is a
/// few millionths of the scene's size along the ray: a box it keeps that the octree's
/// arithmetic does not is one the ray misses by that much.
struct WideRay<V, const W: usize> {
    origin: [V; 3],
    inv: [V; 3],
    /// `enter[axis]`, `leave[axis]`: the offset, in floats from the start of a node's
    /// [`WideNode::planes`], of the plane the ray enters by along `axis` (`max` where the
    /// direction is negative, else `min`), and of the one it leaves by. Offsets rather than
    /// plane numbers: a load then scales its index by the size of a float, which an address
    /// can, rather than by that of a row of planes, which took an instruction each.
    enter: [usize; 3],
    leave: [usize; 3],
    /// The fused form's `offset` for the plane the ray enters by along each axis, and for the
    /// one it leaves by; unused by lanes without it.
    enter_offset: [V; 3],
    leave_offset: [V; 3],
}

impl<V: Lanes<W>, const W: usize> WideRay<V, W> {
    /// The ray `ray`, ready for the box test of the octree's arithmetic (`boxes::<false>`);
    /// [`fuse`](Self::fuse) readies it for the fused one.
    #[inline(always)]
    fn new(ray: &BoxRay) -> Self {
        // `^ W` below flips between the two planes of an axis: `(2 axis + b) W` has bit `W`
        // set exactly where `b` is 1 when `W` is a power of two.
        const { assert!(W.is_power_of_two()) };
        // Bit `a` of the octant set: the direction is negative along axis `a`, so the ray
        // enters by the `max` plane.
        let enter = std::array::from_fn(|axis| (2 * axis + (ray.octant >> axis & 1)) * W);
        Self {
            origin: ray.origin.map(V::splat),
            inv: ray.inv.map(V::splat),
            enter,
            leave: enter.map(|offset| offset ^ W),
            enter_offset: [V::splat(0.0); 3],
            leave_offset: [V::splat(0.0); 3],
        }
    }

    /// Readies the ray `ray` for the fused box test (`boxes::<true>`) through a tree whose
    /// planes are at most `plane_reach` from 0 along each axis, where the lanes have it. Kept
    /// apart from [`new`](Self::new), so that the root's box test, in the octree's
    /// arithmetic, need not wait for the offsets: about 5% of a camera ray's time.
    #[inline(always)]
    fn fuse(&mut self, ray: &BoxRay, plane_reach: [f32; 3]) {
        if V::FUSED_PLANE_DISTANCE {
            let [ox, oy, oz] = ray.origin;
            let [ix, iy, iz] = ray.inv;
            let [rx, ry, rz] = plane_reach;
            let (o, i) = (Vec4::new(ox, oy, oz, 0.0), Vec4::new(ix, iy, iz, 0.0));
            let slack = (Vec4::new(rx, ry, rz, 0.0) + o.abs()) * i.abs() * SLACK
                + Vec4::splat(f32::MIN_POSITIVE);
            let (enter, leave) = ((o * i + slack).to_array(), (o * i - slack).to_array());
            self.enter_offset = std::array::from_fn(|axis| V::splat(enter[axis]));
            self.leave_offset = std::array::from_fn(|axis| V::splat(leave[axis]));
        }
    }

    /// The part of `[t_min, t_max]` the ray spends in each of the node's boxes, as
    /// `(enter, leave)` lanes, and the mask of the boxes it meets (`enter ≤ leave`). The
    /// arithmetic of the octree's box test, lane by lane: `(plane − origin) · (1 / direction)`,
    /// the largest of the near distances and the smallest of the far ones, where a NaN (a zero
    /// direction component with the origin on the plane) constrains nothing.
    ///
    /// On AVX, for an [`ordinary`] ray, the test is faster and keeps a few more boxes. Its
    /// distances to the planes are fused ([`WideRay`]), each no further than the octree's for
    /// the planes the ray enters by and no nearer for those it leaves by; its maxima, minima
    /// and comparison are [`Lanes::max_of_distances`] and its kin, on the bits as signed
    /// integers, one cycle each rather than four. Together they are most of the latency of a
    /// step from one node to the next (`treasure`'s secondary rays 8–12% faster on an Intel
    /// Xeon, BENCHMARKS.md). It keeps every box the octree's arithmetic keeps, but for boxes
    /// no answer depends on:
    /// - no distance is NaN and `t_min` is at least `+0`, so `enter`, the maximum of the near
    ///   distances and `t_min`, has its sign bit clear and is the floats' maximum: the
    ///   negative lanes lose to `t_min`, and the others compare as their values do;
    /// - `leave` is the floats' minimum where the far distances and `t_max` all have their
    ///   sign bit clear, and negative where one does not;
    /// - so `enter ≤ leave` is the floats' comparison, but where `leave` is `−0` and `enter`
    ///   is `+0`: a box the ray leaves at distance 0 at the latest, which the floats keep and
    ///   the integers do not. Every hit inside it would be at a distance of at most 0, so not
    ///   beyond `t_min`, as a hit must be: a triangle's test clamps its distance into the
    ///   triangle's box, which lies inside its leaf's, and a far distance of a box inside
    ///   another is at most the other's, the octree's arithmetic being monotonic.
    ///
    /// The distances a traversal orders children by, or drops them by, are then a little
    /// nearer (`enter`) or further (`leave`) than the octree's: the order may differ where two
    /// are that close, which changes the time alone, and a child is dropped later, never
    /// sooner. Other rays, and other lanes, take the floats' own operations.
    #[inline(always)]
    fn boxes<const FUSED: bool>(&self, node: &WideNode<W>, t_min: f32, t_max: f32) -> (V, V, u32) {
        let planes = node.planes.as_ptr().cast::<f32>();
        let planes_at = |offset: usize| {
            // SAFETY: `offset` is `(2 axis + b) W` for an axis below 3 and `b` 0 or 1 (`new`,
            // for this `W`, the node's width: both are the type's), so the `W` floats from it
            // are plane `2 axis + b` of the six, inside `planes`, and as aligned as a
            // `[f32; W]`.
            let plane = unsafe { &*planes.add(offset).cast::<[f32; W]>() };
            V::load(plane)
        };
        // `+ 0.0` makes a `t_min` of `−0` `+0`, and leaves every other as it is. `min`/`max`
        // give their argument for a NaN lane: the NaN operand comes first.
        let mut enter = V::splat(t_min + 0.0);
        let mut leave = V::splat(t_max);
        for axis in 0..3 {
            let (origin, inv) = (self.origin[axis], self.inv[axis]);
            let (near, far) = (planes_at(self.enter[axis]), planes_at(self.leave[axis]));
            let (near, far) = if FUSED {
                (
                    near.plane_distance(origin, inv, self.enter_offset[axis]),
                    far.plane_distance(origin, inv, self.leave_offset[axis]),
                )
            } else {
                (near.sub(origin).mul(inv), far.sub(origin).mul(inv))
            };
            enter = near.max_of_distances(enter);
            leave = far.min_of_distances(leave);
        }
        (enter, leave, enter.le_mask_of_distances(leave))
    }
}

impl WideBvh {
    /// The closest triangle the ray hits within `(t_min, t_max)`: the smallest `t`, equal `t`
    /// broken by the smaller original index.
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
    /// assert_eq!(bvh.closest_hit(&down).map(|hit| hit.original), Some(2));
    /// assert_eq!(bvh.closest_hit(&up), None);
    /// ```
    #[inline]
    pub fn closest_hit(&self, ray: &Ray) -> Option<BvhHit> {
        self.closest_hit_counted(ray, &mut NoCounters)
    }

    /// [`closest_hit`](Self::closest_hit), reporting every test to `counters`.
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
    ///
    /// let mut counts = TestCounts::default();
    /// assert_eq!(bvh.closest_hit_counted(&down, &mut counts), bvh.closest_hit(&down));
    /// assert!(counts.boxes > 0 && counts.triangles > 0);
    /// ```
    pub fn closest_hit_counted<C: TraversalCounters>(
        &self,
        ray: &Ray,
        counters: &mut C,
    ) -> Option<BvhHit> {
        if is_nan(ray) {
            return self.closest_hit_unusual(ray, counters);
        }
        match &self.nodes {
            Nodes::Four(nodes) => self.closest_in::<Vec4, 4, Halves, C>(nodes, ray, counters),
            Nodes::Eight(nodes) => match self.simd {
                // SAFETY: `simd` is at most what the processor was seen to have
                // (`Simd::detected`), here AVX2 and AVX-512 (F and VL).
                #[cfg(target_arch = "x86_64")]
                super::Simd::Avx512 => unsafe { self.closest_avx512(nodes, ray, counters) },
                // SAFETY: as above, here AVX2 and FMA.
                #[cfg(target_arch = "x86_64")]
                super::Simd::Avx2 => unsafe { self.closest_avx2(nodes, ray, counters) },
                _ => self.closest_in::<Halves, 8, Halves, C>(nodes, ray, counters),
            },
        }
    }

    /// The closest-hit traversal over nodes of `W` children tested with `V`.
    #[inline(always)]
    fn closest_in<V: Lanes<W>, const W: usize, P: Lanes<LANES>, C: TraversalCounters>(
        &self,
        nodes: &[WideNode<W>],
        ray: &Ray,
        counters: &mut C,
    ) -> Option<BvhHit> {
        let boxes = BoxRay::new(ray);
        if !ordinary(ray, &boxes, self.plane_reach) {
            return self.closest_hit_unusual(ray, counters);
        }
        self.closest_from::<V, W, P, C>(nodes, ray, boxes, counters)
    }

    /// [`closest_in`](Self::closest_in) once the ray's box part, `boxes`, is made.
    #[inline(always)]
    fn closest_from<V: Lanes<W>, const W: usize, P: Lanes<LANES>, C: TraversalCounters>(
        &self,
        nodes: &[WideNode<W>],
        ray: &Ray,
        boxes: BoxRay,
        counters: &mut C,
    ) -> Option<BvhHit> {
        let mut wide = WideRay::<V, W>::new(&boxes);
        // The root on its own: whether a ray meets the scene at all is then predicted from
        // the rays before it, apart from the branches of the nodes below, and a ray that
        // misses is done before anything else is prepared.
        let root = &nodes[0];
        count_node(root, counters);
        let (enter, _, mask) = wide.boxes::<false>(root, ray.t_min, ray.t_max);
        if mask == 0 {
            return None;
        }
        wide.fuse(&boxes, self.plane_reach);
        let prepared = PreparedRay::with_boxes(ray, boxes);
        let mut closest = Closest::new(prepared.t_max);
        let mut stack = Stack::new();
        self.prefetch_children(nodes, root, mask);
        // The child visited now: a node or a leaf, as `WideNode` packs them.
        let mut current = visit_in_order::<V, W, NEAREST_FIRST>(root, enter, mask, &mut stack);
        loop {
            if current.count != 0 {
                counters.leaf_visit();
                let packs = self.leaf_packs(current);
                closest.test_packs::<P, C>(packs, &self.ids, &prepared, self.padding, counters);
            } else {
                let n = &nodes[current.reference as usize];
                count_node(n, counters);
                let (enter, _, mask) = wide.boxes::<true>(n, prepared.t_min, closest.t());
                if mask != 0 {
                    self.prefetch_children(nodes, n, mask);
                    current = visit_in_order::<V, W, NEAREST_FIRST>(n, enter, mask, &mut stack);
                    continue;
                }
            }
            match stack.pop_within(closest.t()) {
                Some(child) => current = child,
                None => return closest.hit(&self.ids),
            }
        }
    }

    /// Whether any triangle blocks the ray within `(t_min, t_max)`: the shadow-ray query.
    /// Stops at the first blocker found. The answer does not depend on which one it is, only
    /// the time does: children, leaves and inner nodes alike, are visited in the order the
    /// ray leaves them, the last first. A ray that starts on a surface is rarely blocked
    /// near its origin, where the boxes hold the surface it leaves; the child it stays in
    /// furthest along is the likeliest to hold a blocker. Against lane order, this took
    /// 7–19% fewer box tests and 10–34% fewer triangle tests on shadow rays and random
    /// surface-to-surface rays.
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
    /// assert!(bvh.occluded(&down));
    /// assert!(!bvh.occluded(&up));
    /// ```
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.occluded_counted(ray, &mut NoCounters)
    }

    /// [`occluded`](Self::occluded), reporting every test to `counters`.
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
    ///
    /// let mut counts = TestCounts::default();
    /// assert!(!bvh.occluded_counted(&up, &mut counts));
    /// ```
    pub fn occluded_counted<C: TraversalCounters>(&self, ray: &Ray, counters: &mut C) -> bool {
        self.occluded_query::<false, C>(ray, &mut Blockers::default(), counters)
    }

    /// [`occluded_counted`](Self::occluded_counted), testing first the packs that blocked the
    /// latest rays asked with `recent`, and remembering there the pack that blocks this ray.
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
    /// use renderer::bvh::{Blockers, TestCounts};
    ///
    /// let mut recent = Blockers::default();
    /// assert!(bvh.occluded_remembering(&down, &mut recent, &mut TestCounts::default()));
    /// // The same ray again: the pack remembered blocks it, and no box is tested.
    /// let mut again = TestCounts::default();
    /// assert!(bvh.occluded_remembering(&down, &mut recent, &mut again));
    /// assert_eq!(again.boxes, 0);
    /// ```
    pub fn occluded_remembering<C: TraversalCounters>(
        &self,
        ray: &Ray,
        recent: &mut Blockers,
        counters: &mut C,
    ) -> bool {
        self.occluded_query::<true, C>(ray, recent, counters)
    }

    /// The occlusion query, with `recent` tested first and the blocker remembered there where
    /// `REMEMBER` holds; compiled apart for each, since with the remembered packs' test in its
    /// function a plain query's traversal ran 4% more instructions.
    #[inline(always)]
    fn occluded_query<const REMEMBER: bool, C: TraversalCounters>(
        &self,
        ray: &Ray,
        recent: &mut Blockers,
        counters: &mut C,
    ) -> bool {
        if is_nan(ray) {
            return self.occluded_unusual::<REMEMBER, C>(ray, recent, counters);
        }
        match &self.nodes {
            Nodes::Four(nodes) => {
                self.occluded_in::<Vec4, 4, Halves, C, REMEMBER>(nodes, ray, recent, counters)
            }
            Nodes::Eight(nodes) => match self.simd {
                // SAFETY: `simd` is at most what the processor was seen to have
                // (`Simd::detected`), here AVX2 and AVX-512 (F and VL).
                #[cfg(target_arch = "x86_64")]
                super::Simd::Avx512 => unsafe {
                    self.occluded_avx512::<C, REMEMBER>(nodes, ray, recent, counters)
                },
                // SAFETY: as above, here AVX2 and FMA.
                #[cfg(target_arch = "x86_64")]
                super::Simd::Avx2 => unsafe {
                    self.occluded_avx2::<C, REMEMBER>(nodes, ray, recent, counters)
                },
                _ => {
                    self.occluded_in::<Halves, 8, Halves, C, REMEMBER>(nodes, ray, recent, counters)
                }
            },
        }
    }

    /// The occlusion traversal over nodes of `W` children tested with `V`, after the
    /// remembered packs where `REMEMBER` holds.
    #[inline(always)]
    fn occluded_in<
        V: Lanes<W>,
        const W: usize,
        P: Lanes<LANES>,
        C: TraversalCounters,
        const REMEMBER: bool,
    >(
        &self,
        nodes: &[WideNode<W>],
        ray: &Ray,
        recent: &mut Blockers,
        counters: &mut C,
    ) -> bool {
        let prepared = PreparedRay::new(ray);
        if !ordinary(ray, &prepared.boxes(), self.plane_reach) {
            return self.occluded_unusual::<REMEMBER, C>(ray, recent, counters);
        }
        self.occluded_from::<V, W, P, C, REMEMBER>(nodes, &prepared, recent, counters)
    }

    /// [`occluded_in`](Self::occluded_in) once the ray is prepared.
    #[inline(always)]
    fn occluded_from<
        V: Lanes<W>,
        const W: usize,
        P: Lanes<LANES>,
        C: TraversalCounters,
        const REMEMBER: bool,
    >(
        &self,
        nodes: &[WideNode<W>],
        prepared: &PreparedRay,
        recent: &mut Blockers,
        counters: &mut C,
    ) -> bool {
        if REMEMBER {
            let mut k = 0;
            while let Some(pack) = recent.entry(k).and_then(|index| self.packs.get(index)) {
                if pack_blocks::<P, C>(pack, prepared, self.padding, counters) {
                    recent.move_to_front(k);
                    return true;
                }
                k += 1;
            }
        }
        let boxes = prepared.boxes();
        let mut wide = WideRay::<V, W>::new(&boxes);
        wide.fuse(&boxes, self.plane_reach);
        let mut stack = Stack::new();
        // The child visited now, from the root.
        let mut current = Child {
            reference: 0,
            count: 0,
        };
        loop {
            if current.count != 0 {
                counters.leaf_visit();
                let first = current.reference as usize;
                for (k, pack) in self.leaf_packs(current).iter().enumerate() {
                    if pack_blocks::<P, C>(pack, prepared, self.padding, counters) {
                        if REMEMBER {
                            recent.remember(first + k);
                        }
                        return true;
                    }
                }
            } else {
                let n = &nodes[current.reference as usize];
                count_node(n, counters);
                let (_, leave, mask) = wide.boxes::<true>(n, prepared.t_min, prepared.t_max);
                if mask != 0 {
                    self.prefetch_children(nodes, n, mask);
                    current = visit_in_order::<V, W, LAST_FIRST>(n, leave, mask, &mut stack);
                    continue;
                }
            }
            match stack.pop() {
                Some(child) => current = child,
                None => return false,
            }
        }
    }

    /// [`closest_hit_counted`](Self::closest_hit_counted) for a ray that is not [`ordinary`]:
    /// in the portable lanes, whose box test is the floats' own. A ray with a NaN coordinate
    /// would pass every box test, unused slots too, so every triangle is tested instead, which
    /// finds what the triangle test says such a ray hits.
    #[cold]
    #[inline(never)]
    fn closest_hit_unusual<C: TraversalCounters>(
        &self,
        ray: &Ray,
        counters: &mut C,
    ) -> Option<BvhHit> {
        if is_nan(ray) {
            let prepared = PreparedRay::new(ray);
            let mut closest = Closest::new(prepared.t_max);
            closest.test_packs::<Halves, C>(
                &self.packs,
                &self.ids,
                &prepared,
                self.padding,
                counters,
            );
            return closest.hit(&self.ids);
        }
        let boxes = BoxRay::new(ray);
        match &self.nodes {
            Nodes::Four(nodes) => {
                self.closest_from::<Vec4, 4, Halves, C>(nodes, ray, boxes, counters)
            }
            Nodes::Eight(nodes) => {
                self.closest_from::<Halves, 8, Halves, C>(nodes, ray, boxes, counters)
            }
        }
    }

    /// [`occluded_query`](Self::occluded_query) for a ray that is not [`ordinary`], as
    /// [`closest_hit_unusual`](Self::closest_hit_unusual).
    #[cold]
    #[inline(never)]
    fn occluded_unusual<const REMEMBER: bool, C: TraversalCounters>(
        &self,
        ray: &Ray,
        recent: &mut Blockers,
        counters: &mut C,
    ) -> bool {
        if is_nan(ray) {
            let prepared = PreparedRay::new(ray);
            let blocker = self
                .packs
                .iter()
                .position(|pack| pack_blocks::<Halves, C>(pack, &prepared, self.padding, counters));
            if let Some(k) = blocker
                && REMEMBER
            {
                recent.remember(k);
            }
            return blocker.is_some();
        }
        let prepared = PreparedRay::new(ray);
        match &self.nodes {
            Nodes::Four(nodes) => self
                .occluded_from::<Vec4, 4, Halves, C, REMEMBER>(nodes, &prepared, recent, counters),
            Nodes::Eight(nodes) => self.occluded_from::<Halves, 8, Halves, C, REMEMBER>(
                nodes, &prepared, recent, counters,
            ),
        }
    }

    /// Asks the memory for every child of `node` in `mask` (the children the ray enters): an
    /// inner node, or the first pack of a leaf. On a scene larger than the caches, a random
    /// ray's time went mostly to waiting for its nodes and packs, one after the other; asked
    /// for together, the children the traversal visits later, and the lines of the one it
    /// visits next, arrive while it works.
    #[inline(always)]
    fn prefetch_children<const W: usize>(
        &self,
        nodes: &[WideNode<W>],
        node: &WideNode<W>,
        mut mask: u32,
    ) {
        while mask != 0 {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let child = Child::of(node, lane);
            // `wrapping_add`: the address is only prefetched, never read through here.
            if child.count != 0 {
                prefetch(self.packs.as_ptr().wrapping_add(child.reference as usize));
            } else {
                prefetch(nodes.as_ptr().wrapping_add(child.reference as usize));
            }
        }
    }

    /// The packs of the leaf `child`.
    #[inline(always)]
    pub(super) fn leaf_packs(&self, child: Child) -> &[TrianglePack] {
        let first = child.reference as usize;
        &self.packs[first..first + (child.count as usize).div_ceil(LANES)]
    }
}

/// Whether a triangle of `pack` blocks the ray, reporting its lanes' tests to `counters`.
#[inline(always)]
fn pack_blocks<P: Lanes<LANES>, C: TraversalCounters>(
    pack: &TrianglePack,
    ray: &PreparedRay,
    padding: f32,
    counters: &mut C,
) -> bool {
    for _ in 0..pack.lanes {
        counters.triangle_test();
    }
    pack.hits_with::<P>(ray, padding).mask != 0
}

/// Asks for the cache lines of the `T` at `at` (a node or a pack, both aligned to a line) into
/// every level of the cache, where the processor has an instruction for it; elsewhere does
/// nothing.
#[inline(always)]
fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    for offset in (0..size_of::<T>()).step_by(64) {
        // SAFETY: [1] SSE is part of x86-64; [2] a prefetch reads no memory the program sees
        // and never faults, whatever the address.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>().wrapping_add(offset));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Whether the box tests of `ray`, with its box part `boxes`, through a tree whose planes are
/// at most `plane_reach` from 0 along each axis, may take the fused distances and integer
/// comparisons of AVX ([`WideRay::boxes`]): whether none of their distances can be NaN,
/// `t_min` is not negative, and the fused form's offsets are finite. A distance
/// `(plane − origin) · inv` is NaN only where an operand is, or for `0 · ∞`, `∞ · 0` or
/// `∞ − ∞`; a finite origin and a finite, non-zero `inv` (a direction component neither zero,
/// nor infinite, nor so small that its reciprocal overflows) rule each out, the planes never
/// being NaN (an unused slot's are infinite); a bound on `(plane_reach + |origin|) · |inv|`
/// keeps the offsets finite. Every ray the renderer traces is ordinary but one along an axis.
#[inline(always)]
pub(super) fn ordinary(ray: &Ray, boxes: &BoxRay, plane_reach: [f32; 3]) -> bool {
    let [ox, oy, oz] = boxes.origin;
    let [ix, iy, iz] = boxes.inv;
    let [rx, ry, rz] = plane_reach;
    let inv = Vec4::new(ix, iy, iz, 1.0).abs();
    let origin = Vec4::new(ox, oy, oz, 0.0).abs();
    // Four times: twice for `origin · inv` and the slack, and room for their rounding.
    let reach = (Vec4::new(rx, ry, rz, 0.0) + origin) * inv * 4.0;
    // Every comparison is false for a NaN.
    let finite = Vec4::splat(f32::MAX);
    (inv.cmpgt(Vec4::ZERO) & inv.cmple(finite) & origin.cmple(finite) & reach.cmple(finite)).all()
        && ray.t_min >= 0.0
        && !ray.t_max.is_nan()
}

/// The fused box test's slack, relative to the largest distance it rounds ([`WideRay`]):
/// 2⁻²⁰, sixteen times the unit roundoff.
const SLACK: f32 = 1.0 / (1 << 20) as f32;

/// Whether the ray's origin or direction has a NaN coordinate (its box tests would let every
/// child through, unused slots too). Such rays never come from the renderer, whose scenes
/// are finite; they are answered by testing every triangle.
#[inline(always)]
pub(super) fn is_nan(ray: &Ray) -> bool {
    ray.origin.is_nan() || ray.dir.is_nan()
}

/// A child of a node: an inner node (`count` 0) or a leaf's triangles.
#[derive(Clone, Copy, Debug)]
pub(super) struct Child {
    /// An inner node's index, or the first pack of a leaf.
    pub(super) reference: u32,
    /// 0 for an inner node, else the leaf's triangle count.
    pub(super) count: u32,
}

impl Child {
    /// The child in slot `lane` of `node`.
    #[inline(always)]
    pub(super) fn of<const W: usize>(node: &WideNode<W>, lane: usize) -> Self {
        Self {
            reference: node.child[lane],
            count: node.count[lane],
        }
    }
}

/// Reports a node's visit, and its box tests: one per used child slot.
#[inline(always)]
fn count_node<const W: usize, C: TraversalCounters>(node: &WideNode<W>, counters: &mut C) {
    counters.node_visit();
    for &child in &node.child {
        if child != super::EMPTY {
            counters.box_test();
        }
    }
}

/// Children waiting to be visited, each with the distance it was ordered by (where the ray
/// enters it for the closest hit, where it leaves it for occlusion); of fixed size, and left
/// uninitialised: it is set up for every ray, and clearing its [`STACK_SIZE`] entries would
/// cost more than the traversal of a short ray.
struct Stack {
    entries: [MaybeUninit<(Child, f32)>; STACK_SIZE],
    top: usize,
}

impl Stack {
    #[inline(always)]
    fn new() -> Self {
        Self {
            entries: [const { MaybeUninit::uninit() }; STACK_SIZE],
            top: 0,
        }
    }

    /// Keeps `child`, ordered by the distance `t`, for later.
    #[inline(always)]
    fn defer(&mut self, child: Child, t: f32) {
        // Indexing checks the bound: the build keeps the tree shallow enough
        // (`STACK_SIZE`), and a deeper one would stop here rather than write past the end.
        self.entries[self.top].write((child, t));
        self.top += 1;
    }

    /// The most recently kept child.
    #[inline(always)]
    fn pop(&mut self) -> Option<Child> {
        self.top = self.top.checked_sub(1)?;
        // SAFETY: every entry below `top` was written by `defer` before `top` passed it,
        // and `top` only moves down past entries here and in `pop_within`.
        let (child, _) = unsafe { self.entries[self.top].assume_init() };
        Some(child)
    }

    /// The most recently kept child entered no later than `t_max`; those entered later are
    /// dropped on the way.
    #[inline(always)]
    fn pop_within(&mut self, t_max: f32) -> Option<Child> {
        while self.top > 0 {
            self.top -= 1;
            // SAFETY: every entry below `top` was written by `defer` before `top` passed it,
            // and `top` only moves down past entries here and in `pop`.
            let (child, t) = unsafe { self.entries[self.top].assume_init() };
            if t <= t_max {
                return Some(child);
            }
        }
        None
    }
}

/// [`visit_in_order`]'s order for the closest hit: the child the ray enters first.
pub(super) const NEAREST_FIRST: bool = false;

/// [`visit_in_order`]'s order for occlusion: the child the ray leaves last.
pub(super) const LAST_FIRST: bool = true;

/// Of the children of `node` in `mask` (at least one), with the distances `at` (where the ray
/// enters each, or where it leaves each): the one to visit next, the smallest distance or,
/// with `LARGEST`, the largest; the others are left on the stack with their distances, to
/// be taken in the same order. Equal distances go either way: the order decides only how
/// soon a child is visited, never whether it is.
#[inline(always)]
fn visit_in_order<V: Lanes<W>, const W: usize, const LARGEST: bool>(
    node: &WideNode<W>,
    at: V,
    mask: u32,
    stack: &mut Stack,
) -> Child {
    // A sort key holds the lane in three bits.
    const { assert!(W <= 8) };
    let first = mask.trailing_zeros() as usize;
    let rest = mask & (mask - 1);
    if rest == 0 {
        // One child: on to it, with no ordering at all.
        return Child::of(node, first);
    }
    let distances = at.to_array();
    if rest & (rest - 1) == 0 {
        // Two, the most common case after one: one comparison.
        let second = rest.trailing_zeros() as usize;
        let (next, later) = pair_in_order::<LARGEST>(&distances, first, second);
        stack.defer(Child::of(node, later), distances[later]);
        return Child::of(node, next);
    }
    // More: their keys sorted, smallest first, and the next to visit (on AVX found apart from
    // the sort, so that its load waits for no sorting network: 2-5% of a ray's time); the
    // others pushed so that the next to visit after this one is on top.
    let (keys, next) = at.sorted_keys_and_next::<LARGEST>(mask);
    let next = Child::of(node, key_lane(next));
    let count = mask.count_ones() as usize;
    let defer = |stack: &mut Stack, key: u32| {
        let lane = key_lane(key);
        stack.defer(Child::of(node, lane), distances[lane]);
    };
    if LARGEST {
        keys[..count - 1].iter().for_each(|&key| defer(stack, key));
    } else {
        keys[1..count]
            .iter()
            .rev()
            .for_each(|&key| defer(stack, key));
    }
    next
}

/// Of two lanes `first` and `second` with `distances`: the one to visit next and the one to
/// leave for later, the smaller distance first or, with `LARGEST`, the larger; equal
/// distances keep `first` first. [`visit_in_order`]'s case of two children, and the packet's.
#[inline(always)]
pub(super) fn pair_in_order<const LARGEST: bool>(
    distances: &[f32],
    first: usize,
    second: usize,
) -> (usize, usize) {
    let second_goes_first = if LARGEST {
        distances[second] > distances[first]
    } else {
        distances[second] < distances[first]
    };
    if second_goes_first {
        (second, first)
    } else {
        (first, second)
    }
}

/// Eight lanes in one AVX register, and the traversals compiled for AVX2, and for AVX-512,
/// that use them: the single-ray ones of this module and the packet ones of `packet`.
///
/// The type is private to this module, and its values are made only inside the functions
/// below, compiled with `#[target_feature(enable = "avx2,fma")]` or more and entered only after
/// the processor was seen to have those features: that is what makes each `unsafe` intrinsic
/// call sound (FMA for the box test's fused distance, AVX2 for the rest).
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use super::super::super::{Blockers, BvhHit, TraversalCounters};
    use super::super::lanes::{Lanes, Pair};
    use super::super::packet::{PACKET_LANES, RayPacket};
    use super::super::{WideBvh, WideNode};
    use crate::geometry::Ray;

    #[derive(Clone, Copy, Debug)]
    struct Avx(__m256);

    impl Avx {
        /// The lanes' bits, as eight integers.
        #[inline(always)]
        fn bits(self) -> __m256i {
            // SAFETY: AVX is present (see the module's comment); the cast only renames.
            unsafe { _mm256_castps_si256(self.0) }
        }

        /// Eight integers' bits as the lanes' floats.
        #[inline(always)]
        fn of_bits(bits: __m256i) -> Self {
            // SAFETY: as in `bits`.
            Self(unsafe { _mm256_castsi256_ps(bits) })
        }
    }

    /// Sixteen lanes in one AVX-512 register: a packet's rays. Made, like [`Avx`], only inside
    /// the traversals compiled for AVX-512 (F and VL).
    #[derive(Clone, Copy, Debug)]
    struct Avx16(__m512);

    /// The four eight-wide traversals, the same code compiled for the target features
    /// `$features` (named `$name` in their documentation), a packet of sixteen rays in the
    /// lanes of `$rays16`.
    macro_rules! traversals_compiled_for {
        (
            $features:literal,
            $name:literal,
            $rays16:ty,
            $closest:ident,
            $occluded:ident,
            $closest_packet:ident,
            $occluded_packet:ident $(,)?
        ) => {
            impl WideBvh {
                #[doc = concat!("The eight-wide closest-hit traversal compiled for ", $name, ".")]
                ///
                /// # Safety
                #[doc = concat!("The processor must have ", $name, ".")]
                #[target_feature(enable = $features)]
                pub(super) unsafe fn $closest<C: TraversalCounters>(
                    &self,
                    nodes: &[WideNode<8>],
                    ray: &Ray,
                    counters: &mut C,
                ) -> Option<BvhHit> {
                    self.closest_in::<Avx, 8, Avx, C>(nodes, ray, counters)
                }

                #[doc = concat!("The eight-wide occlusion traversal compiled for ", $name, ".")]
                ///
                /// # Safety
                #[doc = concat!("The processor must have ", $name, ".")]
                #[target_feature(enable = $features)]
                pub(super) unsafe fn $occluded<C: TraversalCounters, const REMEMBER: bool>(
                    &self,
                    nodes: &[WideNode<8>],
                    ray: &Ray,
                    recent: &mut Blockers,
                    counters: &mut C,
                ) -> bool {
                    self.occluded_in::<Avx, 8, Avx, C, REMEMBER>(nodes, ray, recent, counters)
                }

                #[doc = concat!("The closest-hit query of a packet compiled for ", $name, ":")]
                /// eight lanes wide where its rays are all in its first eight, else sixteen.
                ///
                /// # Safety
                #[doc = concat!("The processor must have ", $name, ".")]
                #[target_feature(enable = $features)]
                pub(in super::super) unsafe fn $closest_packet<
                    const W: usize,
                    C: TraversalCounters,
                >(
                    &self,
                    nodes: &[WideNode<W>],
                    packet: &RayPacket,
                    counters: &mut C,
                ) -> [Option<BvhHit>; PACKET_LANES] {
                    if packet.active.in_first_eight() {
                        self.closest_packet_in::<Avx, 8, Avx, W, C>(nodes, packet, counters)
                    } else {
                        self.closest_packet_in::<$rays16, 16, Avx, W, C>(nodes, packet, counters)
                    }
                }

                #[doc = concat!("The occlusion query of a packet compiled for ", $name, ":")]
                /// the blocked lanes.
                ///
                /// # Safety
                #[doc = concat!("The processor must have ", $name, ".")]
                #[target_feature(enable = $features)]
                pub(in super::super) unsafe fn $occluded_packet<
                    const W: usize,
                    C: TraversalCounters,
                >(
                    &self,
                    nodes: &[WideNode<W>],
                    packet: &RayPacket,
                    counters: &mut C,
                ) -> u32 {
                    if packet.active.in_first_eight() {
                        self.occluded_packet_in::<Avx, 8, Avx, W, C>(nodes, packet, counters)
                    } else {
                        self.occluded_packet_in::<$rays16, 16, Avx, W, C>(nodes, packet, counters)
                    }
                }
            }
        };
    }

    traversals_compiled_for!(
        "avx2,fma",
        "AVX2 and FMA",
        Pair<Avx>,
        closest_avx2,
        occluded_avx2,
        closest_packet_avx2,
        occluded_packet_avx2,
    );

    // AVX-512's foundation and vector-length extensions: the same eight-lane operations, with
    // thirty-two registers instead of sixteen and comparisons into mask registers, and a
    // packet's sixteen rays in one register; the arithmetic is the same IEEE operations, so
    // the bits are too.
    traversals_compiled_for!(
        "avx2,fma,avx512f,avx512vl",
        "AVX2 and AVX-512 (F and VL)",
        Avx16,
        closest_avx512,
        occluded_avx512,
        closest_packet_avx512,
        occluded_packet_avx512,
    );

    // Each operation below is the one AVX-512 instruction for all sixteen lanes, with the
    // rounding and the NaN rules of its AVX and SSE forms.
    impl Lanes<16> for Avx16 {
        #[inline(always)]
        fn splat(x: f32) -> Self {
            // SAFETY: AVX-512 F is present (see `Avx16`).
            Self(unsafe { _mm512_set1_ps(x) })
        }
        #[inline(always)]
        fn load(a: &[f32; 16]) -> Self {
            // SAFETY: AVX-512 F is present; `a` is sixteen readable floats (unaligned load).
            Self(unsafe { _mm512_loadu_ps(a.as_ptr()) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: AVX-512 F is present.
            Self(unsafe { _mm512_add_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            // SAFETY: AVX-512 F is present.
            Self(unsafe { _mm512_sub_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            // SAFETY: AVX-512 F is present.
            Self(unsafe { _mm512_mul_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn div(self, o: Self) -> Self {
            // SAFETY: AVX-512 F is present. `vdivps` rounds once, as `f32`'s `/`.
            Self(unsafe { _mm512_div_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn min(self, o: Self) -> Self {
            // SAFETY: AVX-512 F is present. `vminps` gives its second operand for a NaN.
            Self(unsafe { _mm512_min_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            // SAFETY: AVX-512 F is present. `vmaxps` gives its second operand for a NaN.
            Self(unsafe { _mm512_max_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn le_mask(self, o: Self) -> u32 {
            // SAFETY: AVX-512 F is present. `_CMP_LE_OQ` is false for NaN.
            u32::from(unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(self.0, o.0) })
        }
        #[inline(always)]
        fn lt_mask(self, o: Self) -> u32 {
            // SAFETY: AVX-512 F is present. `_CMP_LT_OQ` is false for NaN.
            u32::from(unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, o.0) })
        }
        #[inline(always)]
        fn gt_mask(self, o: Self) -> u32 {
            // SAFETY: AVX-512 F is present. `_CMP_GT_OQ` is false for NaN.
            u32::from(unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, o.0) })
        }
        #[inline(always)]
        fn eq_mask(self, o: Self) -> u32 {
            // SAFETY: AVX-512 F is present. `_CMP_EQ_OQ` is false for NaN.
            u32::from(unsafe { _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(self.0, o.0) })
        }
        #[inline(always)]
        fn sign_mask(self) -> u32 {
            // A lane's sign bit is set exactly where its bits, as a signed integer, are below
            // zero.
            // SAFETY: AVX-512 F is present; the cast only renames.
            u32::from(unsafe {
                _mm512_cmplt_epi32_mask(_mm512_castps_si512(self.0), _mm512_setzero_si512())
            })
        }
        #[inline(always)]
        fn to_array(self) -> [f32; 16] {
            let mut out = [0.0; 16];
            // SAFETY: AVX-512 F is present; `out` is sixteen writable floats (unaligned store).
            unsafe { _mm512_storeu_ps(out.as_mut_ptr(), self.0) };
            out
        }
    }

    impl Lanes<8> for Avx {
        #[inline(always)]
        fn splat(x: f32) -> Self {
            // SAFETY: AVX is present (see the module's comment).
            Self(unsafe { _mm256_set1_ps(x) })
        }
        #[inline(always)]
        fn load(a: &[f32; 8]) -> Self {
            // SAFETY: AVX is present; `a` is eight readable floats (unaligned load).
            Self(unsafe { _mm256_loadu_ps(a.as_ptr()) })
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: AVX is present.
            Self(unsafe { _mm256_add_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            // SAFETY: AVX is present.
            Self(unsafe { _mm256_sub_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            // SAFETY: AVX is present.
            Self(unsafe { _mm256_mul_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn div(self, o: Self) -> Self {
            // SAFETY: AVX is present. `vdivps` rounds once, as SSE's `divps` and `f32`'s `/`.
            Self(unsafe { _mm256_div_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn min(self, o: Self) -> Self {
            // SAFETY: AVX is present. `vminps` gives its second operand for a NaN, as SSE.
            Self(unsafe { _mm256_min_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn max(self, o: Self) -> Self {
            // SAFETY: AVX is present. `vmaxps` gives its second operand for a NaN, as SSE.
            Self(unsafe { _mm256_max_ps(self.0, o.0) })
        }
        #[inline(always)]
        fn le_mask(self, o: Self) -> u32 {
            // SAFETY: AVX is present. `_CMP_LE_OQ` is false for NaN, as SSE's `cmpleps`.
            unsafe { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(self.0, o.0)) as u32 }
        }
        #[inline(always)]
        fn lt_mask(self, o: Self) -> u32 {
            // SAFETY: AVX is present. `_CMP_LT_OQ` is false for NaN, as SSE's `cmpltps`.
            unsafe { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(self.0, o.0)) as u32 }
        }
        #[inline(always)]
        fn gt_mask(self, o: Self) -> u32 {
            // SAFETY: AVX is present. `_CMP_GT_OQ` is false for NaN, as SSE's `cmpgtps`.
            unsafe { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(self.0, o.0)) as u32 }
        }
        #[inline(always)]
        fn eq_mask(self, o: Self) -> u32 {
            // SAFETY: AVX is present. `_CMP_EQ_OQ` is false for NaN, as SSE's `cmpeqps`.
            unsafe { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(self.0, o.0)) as u32 }
        }
        #[inline(always)]
        fn sign_mask(self) -> u32 {
            // SAFETY: AVX is present. `vmovmskps` takes each lane's sign bit.
            unsafe { _mm256_movemask_ps(self.0) as u32 }
        }
        const FUSED_PLANE_DISTANCE: bool = true;

        #[inline(always)]
        fn plane_distance(self, _origin: Self, inv: Self, offset: Self) -> Self {
            // SAFETY: AVX2 and FMA are present (see the module's comment).
            Self(unsafe { _mm256_fmsub_ps(self.0, inv.0, offset.0) })
        }
        #[inline(always)]
        fn max_of_distances(self, o: Self) -> Self {
            // SAFETY: AVX2 is present.
            Self::of_bits(unsafe { _mm256_max_epi32(self.bits(), o.bits()) })
        }
        #[inline(always)]
        fn min_of_distances(self, o: Self) -> Self {
            // SAFETY: AVX2 is present.
            Self::of_bits(unsafe { _mm256_min_epi32(self.bits(), o.bits()) })
        }
        #[inline(always)]
        fn le_mask_of_distances(self, o: Self) -> u32 {
            // `self ≤ other` is `!(self > other)`.
            // SAFETY: AVX2 is present.
            !Self::of_bits(unsafe { _mm256_cmpgt_epi32(self.bits(), o.bits()) }).sign_mask() & 0xff
        }
        #[inline(always)]
        fn to_array(self) -> [f32; 8] {
            let mut out = [0.0; 8];
            // SAFETY: AVX is present; `out` is eight writable floats (unaligned store).
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), self.0) };
            out
        }

        /// The next key found apart from the sort, by [`extreme_key`].
        #[inline(always)]
        fn sorted_keys_and_next<const LARGEST: bool>(self, mask: u32) -> ([u32; 8], u32) {
            // SAFETY: AVX2 is present (see the module's comment).
            let next = unsafe { extreme_key::<LARGEST>(self.0, mask) };
            (self.sorted_keys(mask), next)
        }

        /// All eight keys sorted at once: the lanes outside `mask` get the largest key, so
        /// they sort last, and Batcher's odd-even merge sort for eight (19 comparisons in six
        /// rounds) runs as six rounds of a permutation, a minimum, a maximum and a blend; the
        /// keys are unsigned and the distances of one sign, so integer order is their order.
        #[inline(always)]
        fn sorted_keys(self, mask: u32) -> [u32; 8] {
            // SAFETY: AVX2 is present (see the module's comment); the store writes the eight
            // integers of `out` (unaligned store).
            unsafe {
                let (keys, inside) = keys_in_mask(self.0, mask);
                // `!inside | keys`: all ones outside the mask.
                let mut keys =
                    _mm256_or_si256(keys, _mm256_xor_si256(inside, _mm256_set1_epi32(-1)));
                keys = exchange::<0xcc>(keys, &[2, 3, 0, 1, 6, 7, 4, 5]);
                keys = exchange::<0xf0>(keys, &[4, 5, 6, 7, 0, 1, 2, 3]);
                keys = exchange::<0xaa>(keys, &[1, 0, 3, 2, 5, 4, 7, 6]);
                keys = exchange::<0x30>(keys, &[0, 1, 4, 5, 2, 3, 6, 7]);
                keys = exchange::<0x50>(keys, &[0, 4, 2, 6, 1, 5, 3, 7]);
                keys = exchange::<0x54>(keys, &[0, 2, 1, 4, 3, 6, 5, 7]);
                let mut out = [0u32; 8];
                _mm256_storeu_si256(out.as_mut_ptr().cast(), keys);
                out
            }
        }
    }

    /// The [`sort_key`](super::super::lanes::sort_key) of every lane of `distances`, and
    /// all ones in the lanes of `mask`, none in the others.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[inline(always)]
    unsafe fn keys_in_mask(distances: __m256, mask: u32) -> (__m256i, __m256i) {
        const LANE: [i32; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
        const BIT: [i32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
        // SAFETY: AVX2 is present (the caller's promise); the loads read the eight integers
        // of a constant array (unaligned loads).
        unsafe {
            let load = |a: &[i32; 8]| _mm256_loadu_si256(a.as_ptr().cast());
            let keys = _mm256_or_si256(
                _mm256_and_si256(_mm256_castps_si256(distances), _mm256_set1_epi32(!7)),
                load(&LANE),
            );
            let bit = load(&BIT);
            let inside =
                _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(mask as i32), bit), bit);
            (keys, inside)
        }
    }

    /// The key of the largest (with `LARGEST`) or smallest distance in `mask`: the lanes
    /// outside it get the key that loses, and three rounds of a swap and a maximum (or
    /// minimum) leave the winner in every lane: about half the sorting network's latency.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[inline(always)]
    unsafe fn extreme_key<const LARGEST: bool>(distances: __m256, mask: u32) -> u32 {
        // SAFETY: AVX2 is present (the caller's promise).
        unsafe {
            let (keys, inside) = keys_in_mask(distances, mask);
            let pick = |a: __m256i, b: __m256i| {
                if LARGEST {
                    _mm256_max_epu32(a, b)
                } else {
                    _mm256_min_epu32(a, b)
                }
            };
            // Outside the mask: 0 where the largest wins, all ones where the smallest does.
            let mut k = if LARGEST {
                _mm256_and_si256(keys, inside)
            } else {
                _mm256_or_si256(keys, _mm256_xor_si256(inside, _mm256_set1_epi32(-1)))
            };
            k = pick(k, _mm256_permute2x128_si256::<0x01>(k, k));
            k = pick(k, _mm256_shuffle_epi32::<0b01_00_11_10>(k));
            k = pick(k, _mm256_shuffle_epi32::<0b10_11_00_01>(k));
            _mm256_cvtsi256_si32(k) as u32
        }
    }

    /// One round of the sorting network: lane `k` compared with lane `partner[k]` (itself
    /// where it sits the round out), the lanes set in `HIGH` keeping the larger key and the
    /// others the smaller.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[inline(always)]
    unsafe fn exchange<const HIGH: i32>(keys: __m256i, partner: &[i32; 8]) -> __m256i {
        // SAFETY: AVX2 is present (the caller's promise); `partner` is eight integers.
        unsafe {
            let other =
                _mm256_permutevar8x32_epi32(keys, _mm256_loadu_si256(partner.as_ptr().cast()));
            _mm256_blend_epi32::<HIGH>(_mm256_min_epu32(keys, other), _mm256_max_epu32(keys, other))
        }
    }

    #[cfg(test)]
    mod tests {
        use super::super::super::lanes::Halves;
        use super::super::super::tests::floats;
        use super::*;

        /// The sorting network orders every set of two to eight lanes as the insertion sort
        /// does, ties, negative and infinite distances included, and the largest and smallest
        /// keys found apart from it are its ends.
        #[test]
        fn the_network_sorts_as_the_insertion_sort() {
            if !std::arch::is_x86_feature_detected!("avx2") {
                return;
            }
            // SAFETY: the processor was just seen to have AVX2.
            unsafe { compare_sorts() }
        }

        /// The box test on AVX (fused distances, integer comparisons) keeps every box the
        /// octree's arithmetic keeps (the portable lanes', float operations alone), with a
        /// near distance no further and a far one no nearer, but for a box the ray leaves at
        /// distance 0; on ordinary rays at every scale, near the scene and far from it, with
        /// direction components from tiny to large, unused slots among the boxes.
        /// (Where the processor lacks AVX2 or FMA there is no such test to check.)
        #[test]
        fn the_fused_box_test_keeps_every_box_the_octrees_arithmetic_keeps() {
            if !std::arch::is_x86_feature_detected!("avx2")
                || !std::arch::is_x86_feature_detected!("fma")
            {
                return;
            }
            // SAFETY: the processor was just seen to have AVX2 and FMA.
            unsafe { compare_box_tests() }
        }

        /// The comparison, compiled for AVX2 and FMA.
        ///
        /// # Safety
        /// The processor must have AVX2 and FMA.
        #[target_feature(enable = "avx2,fma")]
        unsafe fn compare_box_tests() {
            use super::super::super::WideNode;
            use super::super::{WideRay, ordinary};
            use crate::geometry::BoxRay;
            use crate::math::Vec3;

            let mut next = floats(0x9e37_79b9_7f4a_7c15);
            let (mut kept, mut grazing) = (0, 0);
            for round in 0..200_000 {
                // The last scale puts distances among the subnormal numbers, where the slack's
                // floor is what covers the rounding.
                let tiny = [1e-35, 1e-37, 1e-38][round / 5 % 3];
                let scale = [1.0, 1e3, 1e6, 1e-3, tiny][round % 5];
                // Boxes around points of the scene, some of them a sliver thin.
                let mut planes = [[0.0f32; 8]; 6];
                for lane in 0..8 {
                    for axis in 0..3 {
                        let centre = next() * scale;
                        let half = (next().abs() * [1.0, 1e-4, 1e-7][lane % 3]) * scale;
                        planes[2 * axis][lane] = centre - half;
                        planes[2 * axis + 1][lane] = centre + half;
                    }
                }
                if round % 5 == 0 {
                    let lane = (next().abs() * 7.99) as usize;
                    for axis in 0..3 {
                        planes[2 * axis][lane] = f32::INFINITY;
                        planes[2 * axis + 1][lane] = f32::NEG_INFINITY;
                    }
                }
                let node = WideNode::<8> {
                    planes,
                    child: [0; 8],
                    count: [0; 8],
                };
                let reach: [f32; 3] = std::array::from_fn(|axis| {
                    (0..8)
                        .flat_map(|lane| [planes[2 * axis][lane], planes[2 * axis + 1][lane]])
                        .filter(|p| p.is_finite())
                        .fold(0.0f32, |r, p| r.max(p.abs()))
                });
                // Rays from near the boxes, and from far away, aimed at a box's corner or
                // in a random direction, components as small as 1e-30.
                let far = [1.0, 1.0, 100.0, 1e4][(round / 4) % 4];
                let origin = Vec3::new(next(), next(), next()) * (scale * far);
                let target = {
                    let lane = (next().abs() * 7.99) as usize;
                    Vec3::new(planes[0][lane], planes[2][lane], planes[4][lane])
                };
                let mut dir = if round % 3 == 0 {
                    Vec3::new(next(), next(), next())
                } else {
                    target - origin
                };
                if round % 7 == 0 {
                    let axis = (next().abs() * 2.99) as usize;
                    dir[axis] *= [1e-30, 1e-10, 1e-3][round % 3];
                }
                if round % 5 == 4 {
                    dir *= [1.0, 10.0, 1e3, 1e6][round / 15 % 4];
                }
                let mut ray = Ray::new(origin, dir);
                ray.t_min = [0.0, -0.0, next().abs() * scale][round % 3];
                ray.t_max = [
                    f32::INFINITY,
                    next().abs() * scale * far * 2.0,
                    -0.0,
                    -next().abs() * scale,
                ][round / 3 % 4];
                let boxes = BoxRay::new(&ray);
                if !ordinary(&ray, &boxes, reach) {
                    continue;
                }
                let mut fused = WideRay::<Avx, 8>::new(&boxes);
                fused.fuse(&boxes, reach);
                let (enter, leave, mask) = fused.boxes::<true>(&node, ray.t_min, ray.t_max);
                let (f_enter, f_leave, f_mask) =
                    WideRay::<Halves, 8>::new(&boxes).boxes::<false>(&node, ray.t_min, ray.t_max);
                let (enter, leave) = (enter.to_array(), leave.to_array());
                let (f_enter, f_leave) = (f_enter.to_array(), f_leave.to_array());
                for lane in (0..8).filter(|&lane| f_mask >> lane & 1 == 1) {
                    if mask >> lane & 1 == 0 {
                        assert_eq!(
                            f_leave[lane].to_bits(),
                            (-0.0f32).to_bits(),
                            "round {round} lane {lane}: {ray:?}"
                        );
                        continue;
                    }
                    assert!(
                        enter[lane] <= f_enter[lane] && leave[lane] >= f_leave[lane],
                        "round {round} lane {lane}: {ray:?} enters and leaves at \
                         {} and {}, the octree's arithmetic {} and {}",
                        enter[lane],
                        leave[lane],
                        f_enter[lane],
                        f_leave[lane],
                    );
                    kept += 1;
                    // A box the ray passes through over a few units in the last place.
                    grazing += usize::from(f_leave[lane] - f_enter[lane] <= f_leave[lane] * 1e-6);
                }
            }
            assert!(kept > 50_000, "only {kept} boxes kept");
            assert!(grazing > 100, "only {grazing} boxes grazed");
        }

        /// A pack's test in AVX's lanes gives the bits it gives in two SSE halves (which the
        /// pack's own tests hold to the one-triangle test), on the pack's own test cases.
        #[test]
        fn the_pack_test_in_avx_lanes_gives_the_bits_of_the_halves() {
            if !std::arch::is_x86_feature_detected!("avx2") {
                return;
            }
            // SAFETY: the processor was just seen to have AVX2.
            unsafe { compare_pack_tests() }
        }

        /// The comparison, compiled for AVX2.
        ///
        /// # Safety
        /// The processor must have AVX2.
        #[target_feature(enable = "avx2")]
        unsafe fn compare_pack_tests() {
            use super::super::super::pack::PackHits;
            use super::super::super::pack::tests::{PADDING, cases};

            let mut hits = 0;
            for (round, (_, pack, ray)) in cases(0x2545_f491_4f6c_dd1d, 20_000).iter().enumerate() {
                let avx = pack.hits_with::<Avx>(ray, PADDING);
                let halves = pack.hits_with::<Halves>(ray, PADDING);
                assert_eq!(avx.mask, halves.mask, "round {round}");
                for lane in (0..8).filter(|&lane| avx.mask >> lane & 1 == 1) {
                    let bits = |h: &PackHits| {
                        (
                            h.t[lane].to_bits(),
                            h.uvw.map(|edge| edge[lane].to_bits()),
                            h.det[lane].to_bits(),
                        )
                    };
                    assert_eq!(bits(&avx), bits(&halves), "round {round} lane {lane}");
                    hits += 1;
                }
            }
            assert!(hits > 5_000, "only {hits} hits");
        }

        /// The comparison, compiled for AVX2.
        ///
        /// # Safety
        /// The processor must have AVX2.
        #[target_feature(enable = "avx2")]
        unsafe fn compare_sorts() {
            let mut next = floats(0x5851_f42d_4c95_7f2d);
            for round in 0..2_000 {
                let distances: [f32; 8] = std::array::from_fn(|_| match round % 4 {
                    // Few values: ties.
                    0 => (next() * 2.0).round(),
                    1 => next() * 1e3,
                    2 => next().abs() * 10.0,
                    _ => [f32::INFINITY, 0.0, -0.0, next()][(next().abs() * 3.99) as usize],
                });
                for mask in 0u32..256 {
                    if mask.count_ones() < 2 {
                        continue;
                    }
                    let n = mask.count_ones() as usize;
                    let network = Avx::load(&distances).sorted_keys(mask);
                    let insertion = Halves::load(&distances).sorted_keys(mask);
                    assert_eq!(network[..n], insertion[..n], "{distances:?} {mask:#b}");
                    // The child visited next, found apart from the sort: its ends.
                    for (avx, portable) in [
                        (
                            Avx::load(&distances).sorted_keys_and_next::<true>(mask),
                            Halves::load(&distances).sorted_keys_and_next::<true>(mask),
                        ),
                        (
                            Avx::load(&distances).sorted_keys_and_next::<false>(mask),
                            Halves::load(&distances).sorted_keys_and_next::<false>(mask),
                        ),
                    ] {
                        assert_eq!(avx.0[..n], portable.0[..n], "{distances:?} {mask:#b}");
                        assert_eq!(avx.1, portable.1, "{distances:?} {mask:#b}");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{RayPacket, Width};
    use super::*;
    use crate::bvh::{BvhSettings, TestCounts};
    use crate::geometry::Triangle;
    use crate::math::Vec3;

    /// Each node and leaf a traversal steps into is counted once: a ray down onto a row of
    /// sixteen triangles (two leaves of eight under the root) visits the root and the leaf
    /// below it, for the closest hit and for occlusion; a ray up from the row visits the root
    /// alone; a packet of eight rays down onto one leaf counts a visit of each for each ray.
    /// The octree counts a node for each box it tests.
    #[test]
    fn every_node_and_leaf_visited_is_counted_once() {
        let triangles: Vec<Triangle> = (0..16)
            .map(|i| {
                let x = i as f32;
                Triangle {
                    v: [
                        Vec3::new(x, 0.0, 0.0),
                        Vec3::new(x + 1.0, 0.0, 0.0),
                        Vec3::new(x, 1.0, 0.0),
                    ],
                }
            })
            .collect();
        let down = |x: f32| Ray::new(Vec3::new(x, 0.25, 1.0), -Vec3::Z);
        let settings = BvhSettings {
            leaf_size: 8,
            ..BvhSettings::default()
        };
        for width in [Width::Four, Width::Eight] {
            let bvh = WideBvh::build_with_width(&triangles, settings, width);
            assert_eq!((bvh.stats().nodes, bvh.stats().leaves), (1, 2), "{width:?}");
            let mut counts = TestCounts::default();
            assert!(bvh.closest_hit_counted(&down(2.25), &mut counts).is_some());
            assert_eq!((counts.nodes, counts.leaves), (1, 1), "{width:?}");
            assert_eq!((counts.boxes, counts.triangles), (2, 8), "{width:?}");
            let mut counts = TestCounts::default();
            assert!(bvh.occluded_counted(&down(12.25), &mut counts));
            assert_eq!((counts.nodes, counts.leaves), (1, 1), "{width:?}");
            let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::Z);
            let mut counts = TestCounts::default();
            assert!(bvh.closest_hit_counted(&up, &mut counts).is_none());
            assert_eq!((counts.nodes, counts.leaves), (1, 0), "{width:?}");
            // A packet of eight rays, one over each of the first eight triangles: each ray
            // visits the root and the first leaf.
            let rays: Vec<Ray> = (0..8).map(|i| down(i as f32 + 0.25)).collect();
            let mut counts = TestCounts::default();
            let hits = bvh.closest_hit_packet_counted(&RayPacket::new(&rays), &mut counts);
            assert!(hits.iter().take(8).all(Option::is_some), "{width:?}");
            assert_eq!((counts.nodes, counts.leaves), (8, 8), "{width:?}");
        }
        // The octree tests one box a node.
        let octree = crate::bvh::OctreeBvh::build(&triangles, BvhSettings::default());
        let mut counts = TestCounts::default();
        assert!(
            octree
                .closest_hit_counted(&down(2.25), &mut counts)
                .is_some()
        );
        assert_eq!(counts.nodes, counts.boxes);
        assert!(counts.leaves >= 1 && counts.triangles >= counts.leaves);
    }

    /// A shadow ray crosses a clutter of triangles near its origin whose boxes it enters but
    /// which it misses, then a wall far along: the children the ray leaves last, the wall's,
    /// are visited first, and none of the clutter is tested; by a packet of such rays too.
    #[test]
    fn occlusion_visits_the_child_the_ray_leaves_last_first() {
        // Planes across the ray at x = −5, −4.99, …, each with the half of the square
        // [−1, 1]² below the diagonal y + z = 0: its box holds the points the rays cross,
        // near (0.55, 0.5), the triangle does not.
        let mut triangles: Vec<Triangle> = (0..64)
            .map(|k| {
                let x = -5.0 + k as f32 * 0.01;
                Triangle {
                    v: [
                        Vec3::new(x, -1.0, -1.0),
                        Vec3::new(x, 1.0, -1.0),
                        Vec3::new(x, -1.0, 1.0),
                    ],
                }
            })
            .collect();
        // The wall at x = 5: [−1, 1]² in 8 × 8 squares of two triangles, more than a leaf
        // holds, so that it hangs under inner nodes as the clutter does.
        for i in 0..8 {
            for j in 0..8 {
                let (y, z) = (-1.0 + 0.25 * i as f32, -1.0 + 0.25 * j as f32);
                let corner = |dy: f32, dz: f32| Vec3::new(5.0, y + dy, z + dz);
                triangles.push(Triangle {
                    v: [corner(0.0, 0.0), corner(0.25, 0.0), corner(0.0, 0.25)],
                });
                triangles.push(Triangle {
                    v: [corner(0.25, 0.0), corner(0.25, 0.25), corner(0.0, 0.25)],
                });
            }
        }
        let rays: Vec<Ray> = (0..8)
            .map(|k| {
                let origin = Vec3::new(-10.0, 0.55, 0.41 + 0.02 * k as f32);
                Ray::new(origin, Vec3::new(1.0, 0.0, 0.0))
            })
            .collect();
        // Far fewer than the 64 triangles of the clutter.
        let few = 4 * LANES as u64;
        for width in [Width::Four, Width::Eight] {
            let bvh = WideBvh::build_with_width(&triangles, BvhSettings::default(), width);
            let mut counts = TestCounts::default();
            assert!(bvh.occluded_counted(&rays[0], &mut counts), "{width:?}");
            assert!(
                counts.triangles <= few,
                "{width:?}: {} triangle tests",
                counts.triangles
            );
            let mut counts = TestCounts::default();
            let blocked = bvh.occluded_packet_counted(&RayPacket::new(&rays), &mut counts);
            assert_eq!(blocked.count(), 8, "{width:?}");
            assert!(
                counts.triangles <= 8 * few,
                "{width:?}: {} triangle tests for a packet",
                counts.triangles
            );
        }
    }
}
