//! Stackless traversal of a flattened order.

use std::ops::Range;

use crate::geometry::{
    PreparedRay, Ray, Triangle, TriangleExt, barycentrics, intersect_unnormalised,
};

use super::OctreeBvh;
use super::wide::lanes::Lanes;
use super::wide::{LANES, TrianglePack};

/// The closest hit of a ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhHit {
    /// Distance along the ray.
    pub t: f32,
    /// The triangle's index in leaf order ([`OctreeBvh::triangles`]).
    pub index: u32,
    /// The triangle's index in the input of [`OctreeBvh::build`].
    pub original: u32,
    /// The barycentric weights of the triangle's vertices at the hit, from the same test
    /// that found it (so shading never intersects the triangle again).
    pub bary: [f32; 3],
}

/// The few triangles that blocked the latest shadow rays of a sequence, most recent first: a
/// wide BVH's packs, or an octree's triangles (by their index in leaf order). Shadow rays
/// towards one light from nearby points are often blocked by the same few triangles, so an
/// occlusion query that tests these first
/// ([`Accel::occluded_remembering`](crate::accel::Accel::occluded_remembering)) answers such a
/// ray with a test or two instead of a traversal. Whether a ray is blocked does not depend on
/// which blocker is found, nor on the order the triangles are tested in, so the answer is the
/// same with any `Blockers`, new ones or ones left by another structure included: an index that
/// is not the structure's ends the list.
///
/// ```
/// use renderer::bvh::Blockers;
///
/// assert_eq!(Blockers::default().len(), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blockers {
    /// Indices, most recent first; [`Blockers::EMPTY`] past the last.
    recent: [u32; Blockers::KEPT],
}

impl Default for Blockers {
    fn default() -> Self {
        Self {
            recent: [Self::EMPTY; Self::KEPT],
        }
    }
}

impl Blockers {
    /// How many are kept. Of the single shadow rays of a `treasure` frame (85% of them
    /// blocked), the blocker of the latest ray towards the same light blocks 22%, one of the
    /// latest four 49%, one of the latest eight 60%: four, since each costs a leaf's test
    /// where it misses.
    const KEPT: usize = 4;

    /// An unused entry: no structure has that many leaves.
    const EMPTY: u32 = u32::MAX;

    /// How many are remembered.
    ///
    /// ```
    /// assert_eq!(renderer::bvh::Blockers::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.recent
            .iter()
            .take_while(|&&k| k != Self::EMPTY)
            .count()
    }

    /// Whether none is remembered.
    ///
    /// ```
    /// assert!(renderer::bvh::Blockers::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.recent[0] == Self::EMPTY
    }

    /// The `k`th remembered index, the most recent first; `None` past the last. A query
    /// walks them with a loop of its own (not through a closure, which the wide BVH's AVX
    /// traversals would compile without their target features) and moves the one that blocks
    /// its ray to the front ([`move_to_front`](Self::move_to_front)).
    #[inline(always)]
    pub(crate) fn entry(&self, k: usize) -> Option<usize> {
        self.recent
            .get(k)
            .filter(|&&index| index != Self::EMPTY)
            .map(|&index| index as usize)
    }

    /// Moves the `k`th remembered index, found to block a ray, to the front.
    #[inline(always)]
    pub(crate) fn move_to_front(&mut self, k: usize) {
        self.put_first(k, self.recent[k]);
    }

    /// Remembers `index` as the latest blocker, forgetting the oldest.
    #[inline(always)]
    pub(crate) fn remember(&mut self, index: usize) {
        self.put_first(Self::KEPT - 1, index as u32);
    }

    /// Entries `0..k` move one place back, over entry `k`, and `index` goes first. By hand:
    /// `rotate_right` was a call and a `memmove` on every blocked ray.
    #[inline(always)]
    fn put_first(&mut self, k: usize, index: u32) {
        for j in (1..=k).rev() {
            self.recent[j] = self.recent[j - 1];
        }
        self.recent[0] = index;
    }
}

/// The closest hit so far of a traversal, by its leaf-order index, with the edge functions it
/// will divide once.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    t: f32,
    index: u32,
    uvw: [f32; 3],
    det: f32,
}

/// What every structure's closest-hit traversal keeps: the closest hit so far and the
/// distance beyond which nothing can beat it, and the one test of a leaf's triangles that
/// decides it (the tie rule included), so that all structures find the same hit.
///
/// A candidate is kept by its leaf-order index; the structure's input indices (`ids`, one for
/// each triangle in its leaf order) are read only to break a tie of equal distances and for
/// the hit at the end, not for every candidate: the table of a large scene is megabytes, read
/// in no order, and a load from it can miss the caches.
#[derive(Clone, Copy, Debug)]
pub(super) struct Closest {
    best: Option<Candidate>,
    /// The closest hit's distance, or the ray's `t_max` before any.
    t: f32,
}

impl Closest {
    /// Nothing found yet along a ray that ends at `t_max`.
    #[inline(always)]
    pub(super) fn new(t_max: f32) -> Self {
        Self {
            best: None,
            t: t_max,
        }
    }

    /// The distance beyond which nothing can be closer (a hit at this distance can still win
    /// a tie).
    #[inline(always)]
    pub(super) fn t(&self) -> f32 {
        self.t
    }

    /// Tests the triangles `range` of a structure's leaf order (`triangles`, with their input
    /// indices `ids`), keeping the closest hit: the smallest `t`, equal `t` broken by the
    /// smaller input index. Kept out of line: leaves are tested a few times per ray, boxes
    /// dozens of times, and the box loop runs faster with the registers to itself.
    #[inline(never)]
    pub(super) fn test_leaf<C: TraversalCounters>(
        &mut self,
        (triangles, ids): (&[Triangle], &[u32]),
        range: Range<usize>,
        ray: &PreparedRay,
        padding: f32,
        counters: &mut C,
    ) {
        for k in range {
            counters.triangle_test();
            if let Some((t, uvw, det)) = intersect_unnormalised(&triangles[k], ray, padding) {
                self.offer(t, k as u32, ids, uvw, det);
            }
        }
    }

    /// Tests the triangles of `packs` (of a wide BVH's leaf; `ids` holds the input indices of
    /// its leaf order) a pack at a time in the lanes of `P`, keeping the closest hit by the
    /// same rule as [`test_leaf`](Self::test_leaf). Inlined into the traversal, unlike
    /// `test_leaf`: a wide leaf is mostly one pack, and a call per leaf spilled the
    /// traversal's vector registers and broadcast the ray into the pack test's lanes again, a
    /// sixth of a random ray's instructions; inlined, the pack test is also compiled for AVX
    /// where the traversal is.
    #[inline(always)]
    pub(super) fn test_packs<P: Lanes<LANES>, C: TraversalCounters>(
        &mut self,
        packs: &[TrianglePack],
        ids: &[u32],
        ray: &PreparedRay,
        padding: f32,
        counters: &mut C,
    ) {
        for pack in packs {
            for _ in 0..pack.lanes {
                counters.triangle_test();
            }
            let hits = pack.hits_with::<P>(ray, padding);
            let mut mask = hits.mask;
            while mask != 0 {
                let lane = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let index = pack.first + lane as u32;
                let uvw = [hits.uvw[0][lane], hits.uvw[1][lane], hits.uvw[2][lane]];
                self.offer(hits.t[lane], index, ids, uvw, hits.det[lane]);
            }
        }
    }

    /// Keeps the hit of triangle `index` (of a leaf order whose input indices are `ids`) at
    /// `t` if it is closer than the closest so far, or as close with a smaller input index.
    #[inline(always)]
    pub(super) fn offer(&mut self, t: f32, index: u32, ids: &[u32], uvw: [f32; 3], det: f32) {
        let closer = match self.best {
            None => t < self.t,
            Some(b) => t < b.t || (t == b.t && ids[index as usize] < ids[b.index as usize]),
        };
        if closer {
            self.t = t;
            self.best = Some(Candidate { t, index, uvw, det });
        }
    }

    /// The closest hit, its barycentrics divided out once; `ids`: the input indices of the
    /// leaf order the candidates were offered in.
    #[inline(always)]
    pub(super) fn hit(self, ids: &[u32]) -> Option<BvhHit> {
        self.best.map(|b| BvhHit {
            t: b.t,
            index: b.index,
            original: ids[b.index as usize],
            bary: barycentrics(b.uvw, b.det),
        })
    }
}

/// Receives a count of every box and triangle test, for benchmarks. [`NoCounters`] compiles
/// to nothing.
pub trait TraversalCounters {
    /// One ray–box test.
    fn box_test(&mut self);
    /// One ray–triangle test.
    fn triangle_test(&mut self);
    /// One node visited: a wide BVH's node, whose children's boxes are tested at once, or an
    /// octree's node, whose one box is. With [`leaf_visit`](Self::leaf_visit), the steps of a
    /// traversal, which another tracer's can be set beside (a packet's count one for each of
    /// its rays that visits the node).
    #[inline(always)]
    fn node_visit(&mut self) {}
    /// One leaf's triangles tested (a wide BVH's leaf is mostly one pack of eight).
    #[inline(always)]
    fn leaf_visit(&mut self) {}
    /// One closest-hit query done, `hit` saying whether it found a triangle (reported by
    /// [`Accel`](crate::accel::Accel), for every structure).
    #[inline(always)]
    fn closest_query(&mut self, hit: bool) {
        let _ = hit;
    }
}

/// Counts nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCounters;

impl TraversalCounters for NoCounters {
    #[inline(always)]
    fn box_test(&mut self) {}
    #[inline(always)]
    fn triangle_test(&mut self) {}
}

/// Counts box and triangle tests, and the nodes and leaves they were made in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestCounts {
    /// Ray–box tests.
    pub boxes: u64,
    /// Ray–triangle tests.
    pub triangles: u64,
    /// Nodes visited ([`TraversalCounters::node_visit`]).
    pub nodes: u64,
    /// Leaves visited ([`TraversalCounters::leaf_visit`]).
    pub leaves: u64,
}

impl TestCounts {
    /// Adds the counts of `other`.
    ///
    /// ```
    /// use renderer::bvh::TestCounts;
    ///
    /// let mut sum = TestCounts { boxes: 8, triangles: 3, nodes: 1, leaves: 1 };
    /// sum.add(&TestCounts { boxes: 2, triangles: 0, nodes: 2, leaves: 0 });
    /// assert_eq!(sum, TestCounts { boxes: 10, triangles: 3, nodes: 3, leaves: 1 });
    /// ```
    pub fn add(&mut self, other: &Self) {
        self.boxes += other.boxes;
        self.triangles += other.triangles;
        self.nodes += other.nodes;
        self.leaves += other.leaves;
    }
}

impl TraversalCounters for TestCounts {
    #[inline(always)]
    fn box_test(&mut self) {
        self.boxes += 1;
    }
    #[inline(always)]
    fn triangle_test(&mut self) {
        self.triangles += 1;
    }
    #[inline(always)]
    fn node_visit(&mut self) {
        self.nodes += 1;
    }
    #[inline(always)]
    fn leaf_visit(&mut self) {
        self.leaves += 1;
    }
}

impl OctreeBvh {
    /// The closest triangle the ray hits within `(t_min, t_max)`: the smallest `t`, equal `t`
    /// broken by the smaller original index.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
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
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::TestCounts;
    ///
    /// let mut counts = TestCounts::default();
    /// let hit = bvh.closest_hit_counted(&down, &mut counts);
    /// assert_eq!(hit, bvh.closest_hit(&down));
    /// assert!(counts.boxes > 0 && counts.triangles > 0);
    /// ```
    #[inline]
    pub fn closest_hit_counted<C: TraversalCounters>(
        &self,
        ray: &Ray,
        counters: &mut C,
    ) -> Option<BvhHit> {
        let ray = PreparedRay::new(ray);
        let nodes = &self.orders[ray.octant()];
        let mut closest = Closest::new(ray.t_max);
        let mut i = 0;
        while let Some(node) = nodes.get(i) {
            counters.node_visit();
            counters.box_test();
            let (enter, leave) = ray.slab(node, ray.t_min, closest.t());
            let hit = enter <= leave;
            if hit && node.leaf() != 0 {
                counters.leaf_visit();
                let leaf = (self.triangles.as_slice(), self.ids.as_slice());
                closest.test_leaf(leaf, node.leaf_range(), &ray, self.padding, counters);
            }
            // Down into an inner node that was hit, past the subtree otherwise. A branch, not
            // a select: predicted, it lets the next node's load start before this test ends.
            i = if hit && node.leaf() == 0 {
                i + 1
            } else {
                node.skip() as usize
            };
        }
        closest.hit(&self.ids)
    }

    /// Whether any triangle blocks the ray within `(t_min, t_max)`: the shadow-ray query.
    /// Stops at the first blocker found; the answer does not depend on which one it is.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// assert!(bvh.occluded(&down));
    /// assert!(!bvh.occluded(&up));
    /// ```
    #[inline]
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.occluded_counted(ray, &mut NoCounters)
    }

    /// [`occluded`](Self::occluded), reporting every test to `counters`.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::TestCounts;
    ///
    /// let mut counts = TestCounts::default();
    /// assert!(bvh.occluded_counted(&down, &mut counts));
    /// assert!(counts.triangles > 0);
    /// ```
    #[inline]
    pub fn occluded_counted<C: TraversalCounters>(&self, ray: &Ray, counters: &mut C) -> bool {
        self.occluded_remembering(ray, &mut Blockers::default(), counters)
    }

    /// [`occluded_counted`](Self::occluded_counted), testing first the triangles that blocked
    /// the latest rays asked with `recent`, and remembering there the one that blocks this ray.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// use renderer::bvh::{Blockers, TestCounts};
    ///
    /// let mut recent = Blockers::default();
    /// let mut first = TestCounts::default();
    /// assert!(bvh.occluded_remembering(&down, &mut recent, &mut first));
    /// // The same ray again: the triangle remembered blocks it, and nothing else is tested.
    /// let mut again = TestCounts::default();
    /// assert!(bvh.occluded_remembering(&down, &mut recent, &mut again));
    /// assert_eq!((again.boxes, again.triangles), (0, 1));
    /// ```
    #[inline]
    pub fn occluded_remembering<C: TraversalCounters>(
        &self,
        ray: &Ray,
        recent: &mut Blockers,
        counters: &mut C,
    ) -> bool {
        let ray = PreparedRay::new(ray);
        let mut k = 0;
        while let Some(triangle) = recent.entry(k).and_then(|index| self.triangles.get(index)) {
            counters.triangle_test();
            if triangle.intersect(&ray, self.padding).is_some() {
                recent.move_to_front(k);
                return true;
            }
            k += 1;
        }
        let nodes = &self.orders[ray.octant()];
        let mut i = 0;
        while let Some(node) = nodes.get(i) {
            counters.node_visit();
            counters.box_test();
            let (enter, leave) = ray.slab(node, ray.t_min, ray.t_max);
            if enter <= leave {
                if let Some(range) = node.triangles() {
                    counters.leaf_visit();
                    let first = range.start;
                    if let Some(k) = self.triangles[range].iter().position(|t| {
                        counters.triangle_test();
                        t.intersect(&ray, self.padding).is_some()
                    }) {
                        recent.remember(first + k);
                        return true;
                    }
                } else {
                    i += 1;
                    continue;
                }
            }
            i = node.skip() as usize;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Of equal distances the smaller input index wins, whatever the order the candidates
    /// come in and whatever their leaf-order indices; a nearer one wins whatever its input
    /// index; nothing at the ray's end is a hit.
    #[test]
    fn the_closest_hit_breaks_ties_by_input_index() {
        // Leaf-order index 1 has the smallest input index.
        let ids = [5, 2, 9];
        let orders = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        for order in orders {
            let mut closest = Closest::new(f32::INFINITY);
            for index in order {
                closest.offer(1.0, index, &ids, [1.0, 0.0, 0.0], 1.0);
            }
            let hit = closest.hit(&ids).expect("a hit");
            assert_eq!((hit.index, hit.original), (1, 2), "{order:?}");
        }
        let mut closest = Closest::new(f32::INFINITY);
        closest.offer(1.0, 1, &ids, [1.0, 0.0, 0.0], 1.0);
        closest.offer(0.5, 2, &ids, [1.0, 0.0, 0.0], 1.0);
        let hit = closest.hit(&ids).expect("a hit");
        assert_eq!((hit.t, hit.original), (0.5, 9));
        let mut closest = Closest::new(1.0);
        closest.offer(1.0, 0, &ids, [1.0, 0.0, 0.0], 1.0);
        assert_eq!(closest.hit(&ids), None);
    }
}
