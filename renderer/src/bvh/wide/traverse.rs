//! Front-to-back traversal of the wide BVH with a fixed stack.

use std::mem::MaybeUninit;

use glam::Vec4;

use crate::geometry::{PreparedRay, Ray};

use super::super::{BvhHit, Closest, NoCounters, TraversalCounters};
use super::build::STACK_SIZE;
use super::{WIDTH, WideBvh, WideNode};

/// A ray ready for four boxes at a time: its origin and reciprocal direction in every lane,
/// and for each axis which of a node's planes it enters by and which it leaves by.
struct WideRay {
    origin: [Vec4; 3],
    inv: [Vec4; 3],
    /// `near[a]`: the plane (of [`WideNode::planes`]) the ray enters by along axis `a`.
    near: [usize; 3],
    far: [usize; 3],
}

impl WideRay {
    fn new(ray: &PreparedRay) -> Self {
        let o = ray.origin;
        let inv = ray.inv;
        let octant = ray.octant();
        let near = [0, 1, 2].map(|a| 2 * a + (octant >> a & 1));
        Self {
            origin: o.map(Vec4::splat),
            inv: inv.map(Vec4::splat),
            near,
            far: near.map(|n| n ^ 1),
        }
    }

    /// The part of `[t_min, t_max]` the ray spends in each of the node's four boxes, as
    /// `(enter, leave)` lanes; a lane with `enter > leave` is missed. The arithmetic of the
    /// octree's box test, lane by lane: `(plane − origin) · (1 / direction)`, the largest of
    /// the near distances and the smallest of the far ones, where a NaN (a zero direction
    /// component with the origin on the plane) constrains nothing.
    #[inline(always)]
    fn boxes(&self, node: &WideNode, t_min: f32, t_max: f32) -> (Vec4, Vec4) {
        let t = |plane: usize, axis: usize| {
            (Vec4::from_array(node.planes[plane]) - self.origin[axis]) * self.inv[axis]
        };
        // `Vec4::max`/`min` give their argument for a NaN lane: the NaN operand comes first.
        let mut enter = Vec4::splat(t_min);
        let mut leave = Vec4::splat(t_max);
        for axis in 0..3 {
            enter = t(self.near[axis], axis).max(enter);
            leave = t(self.far[axis], axis).min(leave);
        }
        (enter, leave)
    }
}

impl WideBvh {
    /// The closest triangle the ray hits within `(t_min, t_max)`: the smallest `t`, equal `t`
    /// broken by the smaller original index.
    #[inline]
    pub fn closest_hit(&self, ray: &Ray) -> Option<BvhHit> {
        self.closest_hit_counted(ray, &mut NoCounters)
    }

    /// [`closest_hit`](Self::closest_hit), reporting every test to `counters`.
    pub fn closest_hit_counted<C: TraversalCounters>(
        &self,
        ray: &Ray,
        counters: &mut C,
    ) -> Option<BvhHit> {
        let prepared = PreparedRay::new(ray);
        let wide = WideRay::new(&prepared);
        let mut closest = Closest::new(prepared.t_max);
        let mut stack = Stack::new();
        // The child visited now: a node or a leaf, as `WideNode` packs them.
        let mut current = Child {
            reference: 0,
            count: 0,
        };
        loop {
            if current.count != 0 {
                let first = current.reference as usize;
                let range = first..first + current.count as usize;
                let leaf = (self.triangles.as_slice(), self.ids.as_slice());
                closest.test_leaf(leaf, range, &prepared, self.padding, counters);
            } else {
                let n = &self.nodes[current.reference as usize];
                count_boxes(n, counters);
                let (enter, leave) = wide.boxes(n, prepared.t_min, closest.t());
                let mask = enter.cmple(leave).bitmask();
                if mask != 0 && mask & (mask - 1) == 0 {
                    // One child: on to it, with no ordering at all.
                    current = Child::of(n, mask.trailing_zeros() as usize);
                    continue;
                }
                if mask != 0 {
                    // Nearest next; the others wait on the stack, far ones below near ones.
                    let hits = Hits::sorted(enter, mask);
                    let (nearest, rest) = hits.entries[..hits.len]
                        .split_first()
                        .expect("at least two hits");
                    for &(t, lane) in rest.iter().rev() {
                        stack.defer(Child::of(n, lane), t);
                    }
                    current = Child::of(n, nearest.1);
                    continue;
                }
            }
            match stack.pop_within(closest.t()) {
                Some(child) => current = child,
                None => return closest.hit(),
            }
        }
    }

    /// Whether any triangle blocks the ray within `(t_min, t_max)`: the shadow-ray query.
    /// Stops at the first blocker found; the answer does not depend on which one it is, so
    /// children are taken in lane order: leaves tested at once, the first inner child hit
    /// visited next and the others left on the stack.
    pub fn occluded(&self, ray: &Ray) -> bool {
        let prepared = PreparedRay::new(ray);
        let wide = WideRay::new(&prepared);
        let mut stack = Stack::new();
        let mut node = 0u32;
        loop {
            let n = &self.nodes[node as usize];
            let (enter, leave) = wide.boxes(n, prepared.t_min, prepared.t_max);
            let mut mask = enter.cmple(leave).bitmask();
            let mut next = None;
            while mask != 0 {
                let lane = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let child = Child::of(n, lane);
                if child.count != 0 {
                    let first = child.reference as usize;
                    if self.triangles[first..first + child.count as usize]
                        .iter()
                        .any(|t| t.intersect(&prepared, self.padding).is_some())
                    {
                        return true;
                    }
                } else if next.is_none() {
                    next = Some(child.reference);
                } else {
                    stack.defer(child, 0.0);
                }
            }
            node = match next {
                Some(child) => child,
                None => match stack.pop_within(f32::INFINITY) {
                    Some(child) => child.reference,
                    None => return false,
                },
            };
        }
    }
}

/// A child of a node: an inner node (`count` 0) or a leaf's triangles.
#[derive(Clone, Copy, Debug)]
struct Child {
    reference: u32,
    count: u32,
}

impl Child {
    #[inline(always)]
    fn of(node: &WideNode, lane: usize) -> Self {
        Self {
            reference: node.child[lane],
            count: node.count[lane],
        }
    }
}

/// Reports a node's box tests: one per used child slot.
#[inline(always)]
fn count_boxes<C: TraversalCounters>(node: &WideNode, counters: &mut C) {
    for &child in &node.child {
        if child != super::EMPTY {
            counters.box_test();
        }
    }
}

/// Children waiting to be visited, with the distance at which the ray enters each; of
/// fixed size, and left uninitialised: it is set up for every ray, and clearing its
/// [`STACK_SIZE`] entries would cost more than the traversal of a short ray.
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

    /// Keeps `child`, entered at `t`, for later.
    #[inline(always)]
    fn defer(&mut self, child: Child, t: f32) {
        // Indexing checks the bound: the build keeps the tree shallow enough
        // (`STACK_SIZE`), and a deeper one would stop here rather than write past the end.
        self.entries[self.top].write((child, t));
        self.top += 1;
    }

    /// The most recently kept child entered no later than `t_max`; those entered later are
    /// dropped on the way.
    #[inline(always)]
    fn pop_within(&mut self, t_max: f32) -> Option<Child> {
        while self.top > 0 {
            self.top -= 1;
            // SAFETY: every entry below `top` was written by `defer` before `top` passed it,
            // and `top` only moves down past entries here.
            let (child, t) = unsafe { self.entries[self.top].assume_init() };
            if t <= t_max {
                return Some(child);
            }
        }
        None
    }
}

/// The children a node's boxes let through, with the distances at which the ray enters them,
/// nearest first (at most four: an insertion sort is all it needs).
struct Hits {
    entries: [(f32, usize); WIDTH],
    len: usize,
}

impl Hits {
    /// The lanes of `mask`, sorted by their `enter` distances.
    #[inline(always)]
    fn sorted(enter: Vec4, mut mask: u32) -> Self {
        // Out of the register once: indexing a `Vec4` lane by lane is a jump table.
        let enter = enter.to_array();
        let mut hits = Self {
            entries: [(0.0, 0); WIDTH],
            len: 0,
        };
        while mask != 0 {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let t = enter[lane];
            let mut k = hits.len;
            while k > 0 && hits.entries[k - 1].0 > t {
                hits.entries[k] = hits.entries[k - 1];
                k -= 1;
            }
            hits.entries[k] = (t, lane);
            hits.len += 1;
        }
        hits
    }
}
