//! The wide BVH in its GPU form: the tree of a [`WideBvh`] rewritten as nodes of eight
//! quantized child boxes ([`layout::wide::WideNode`]; the layout, and why it was chosen, are
//! described there), which `rl_wide_closest_hit` and `rl_wide_occluded` in
//! `kernels/cuda/raylb_math.cuh` traverse.
//!
//! Each CPU node becomes one GPU node with the same children: a node of four children leaves
//! four slots empty (build with [`Width::Eight`](super::Width::Eight) for a full tree). The
//! children are placed in the slots so that rays of each direction octant meet the near ones
//! first; each child's box is quantized outwards, checked with the arithmetic the traversal
//! decodes it with, so that it is never smaller than the CPU's box; inner children are laid
//! out one after the other, and so are the triangles of a node's leaves, in an order of this
//! form's own (with each triangle's index in the CPU tree's order kept, to carry shading
//! along).

use bytemuck::Zeroable;
use layout::wide::{WIDE_CHILDREN, WIDE_STACK, WideNode as GpuNode};

use crate::geometry::Triangle;

use super::build::MAX_INNER_DEPTH;
use super::{EMPTY, WideBvh, WideNode};

// The GPU traversal keeps one stack entry per inner node above the one it visits.
const _: () = assert!(WIDE_STACK >= MAX_INNER_DEPTH);

/// A wide BVH in the GPU's layout, built by [`WideBvh::to_gpu`].
#[derive(Debug)]
pub struct GpuWideBvh {
    nodes: Vec<GpuNode>,
    triangles: Vec<Triangle>,
    ids: Vec<u32>,
    sources: Vec<u32>,
    padding: f32,
    depth: u32,
}

impl GpuWideBvh {
    /// The nodes; the root is node 0.
    pub fn nodes(&self) -> &[GpuNode] {
        &self.nodes
    }

    /// The triangles in this form's leaf order, which the traversal's hits index.
    pub fn triangles(&self) -> &[Triangle] {
        &self.triangles
    }

    /// For each triangle in this form's leaf order, its index in the scene's input: the
    /// closest hit's tie-breaker.
    pub fn original_indices(&self) -> &[u32] {
        &self.ids
    }

    /// For each triangle in this form's leaf order, its index in the leaf order of the
    /// [`WideBvh`] it was built from: how per-triangle data in that order (a scene's shading)
    /// is brought into this one.
    pub fn source_indices(&self) -> &[u32] {
        &self.sources
    }

    /// How far every box is grown beyond its triangles (the CPU tree's padding); the
    /// triangle test must be given this value.
    pub fn padding(&self) -> f32 {
        self.padding
    }

    /// The depth of the deepest inner node (the root's is 0): the most entries the
    /// traversal's stack holds, at most [`WIDE_STACK`].
    pub fn depth(&self) -> u32 {
        self.depth
    }
}

impl WideBvh {
    /// This tree in the GPU's layout.
    ///
    /// # Panics
    /// When the tree is deeper than the GPU traversal's stack ([`WIDE_STACK`] inner nodes),
    /// which the build's bound on its depth rules out.
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
    /// let gpu = bvh.to_gpu();
    /// assert_eq!(gpu.triangles().len(), 16);
    /// assert_eq!(gpu.padding(), bvh.padding());
    /// ```
    pub fn to_gpu(&self) -> GpuWideBvh {
        match self.nodes() {
            super::Nodes::Four(nodes) => Convert::run(self, nodes),
            super::Nodes::Eight(nodes) => Convert::run(self, nodes),
        }
    }
}

/// The conversion's state: the GPU nodes and triangles written so far.
struct Convert<'a, const W: usize> {
    bvh: &'a WideBvh,
    nodes: &'a [WideNode<W>],
    out: GpuWideBvh,
}

impl<'a, const W: usize> Convert<'a, W> {
    fn run(bvh: &'a WideBvh, nodes: &'a [WideNode<W>]) -> GpuWideBvh {
        const { assert!(W <= WIDE_CHILDREN) };
        let mut convert = Convert {
            bvh,
            nodes,
            out: GpuWideBvh {
                nodes: vec![GpuNode::zeroed()],
                triangles: Vec::with_capacity(bvh.triangles().len()),
                ids: Vec::with_capacity(bvh.triangles().len()),
                sources: Vec::with_capacity(bvh.triangles().len()),
                padding: bvh.padding(),
                depth: 0,
            },
        };
        convert.node(0, 0, 0);
        assert!(
            convert.out.depth as usize <= WIDE_STACK,
            "a wide BVH {} inner nodes deep does not fit the GPU traversal's stack",
            convert.out.depth
        );
        convert.out
    }

    /// Writes CPU node `source` as GPU node `target`, at depth `depth`, then its subtree.
    fn node(&mut self, source: usize, target: usize, depth: u32) {
        self.out.depth = self.out.depth.max(depth);
        let n = &self.nodes[source];
        let boxes: [Option<([f32; 3], [f32; 3])>; W] = std::array::from_fn(|lane| {
            let p = &n.planes;
            (n.child[lane] != EMPTY).then(|| {
                (
                    [p[0][lane], p[2][lane], p[4][lane]],
                    [p[1][lane], p[3][lane], p[5][lane]],
                )
            })
        });
        let slots = assign_slots(&boxes);
        let mut g = quantized(&boxes, &slots);
        // Inner children, one after the other in slot order.
        g.child_base = self.out.nodes.len() as u32;
        let inner: Vec<usize> = (0..WIDE_CHILDREN)
            .filter_map(|slot| slots[slot].filter(|&lane| n.count[lane] == 0))
            .collect();
        for (slot, lane) in slots.iter().enumerate() {
            if lane.is_some_and(|lane| n.count[lane] == 0) {
                g.inner_mask |= 1 << slot;
            }
        }
        self.out
            .nodes
            .resize(self.out.nodes.len() + inner.len(), GpuNode::zeroed());
        // The leaves' triangles, one leaf after the other in slot order.
        g.triangle_base = self.out.triangles.len() as u32;
        for (slot, lane) in slots.iter().enumerate() {
            let Some(lane) = *lane else { continue };
            let count = n.count[lane];
            if count == 0 {
                continue;
            }
            let first = self.bvh.packs()[n.child[lane] as usize].first;
            for k in first..first + count {
                self.out.triangles.push(self.bvh.triangles()[k as usize]);
                self.out.ids.push(self.bvh.original_indices()[k as usize]);
                self.out.sources.push(k);
            }
            g.counts[slot] = u8::try_from(count).expect("a leaf holds at most 31 triangles");
        }
        self.out.nodes[target] = g;
        for (i, lane) in inner.into_iter().enumerate() {
            let child = n.child[lane] as usize;
            self.node(child, g.child_base as usize + i, depth + 1);
        }
    }
}

/// Which child (by its CPU lane) goes to each of the eight slots. A ray whose direction lies
/// in octant `o` (bit `a` set: negative along axis `a`) visits the slots it hits in the order
/// `o`, `o ^ 1`, `o ^ 2`, …; slot `s` is therefore given the child that rays of octant `s`
/// meet first, the one whose centre lies furthest against their direction. Greedily, as
/// Ylitie et al. do: of all pairs of a free slot and an unplaced child, the one whose centre
/// lies furthest against the slot's direction first (ties to the lower slot, then lane).
fn assign_slots<const W: usize>(
    boxes: &[Option<([f32; 3], [f32; 3])>; W],
) -> [Option<usize>; WIDE_CHILDREN] {
    let centre = |(min, max): ([f32; 3], [f32; 3])| -> [f32; 3] {
        std::array::from_fn(|a| (min[a] + max[a]) * 0.5)
    };
    let used: Vec<(usize, [f32; 3])> = boxes
        .iter()
        .enumerate()
        .filter_map(|(lane, b)| b.map(|b| (lane, centre(b))))
        .collect();
    let mut parent = [0.0f32; 3];
    for (_, c) in &used {
        for a in 0..3 {
            parent[a] += c[a];
        }
    }
    let parent = parent.map(|p| p / used.len().max(1) as f32);
    let cost = |slot: usize, c: &[f32; 3]| -> f32 {
        (0..3)
            .map(|a| {
                let sign = if slot >> a & 1 == 1 { -1.0 } else { 1.0 };
                sign * (c[a] - parent[a])
            })
            .sum()
    };
    let mut slots = [None; WIDE_CHILDREN];
    let mut placed = vec![false; used.len()];
    for _ in 0..used.len() {
        let mut best: Option<(f32, usize, usize)> = None;
        for (slot, taken) in slots.iter().enumerate() {
            if taken.is_some() {
                continue;
            }
            for (i, (_, c)) in used.iter().enumerate() {
                if placed[i] {
                    continue;
                }
                let k = cost(slot, c);
                if best.is_none_or(|(b, _, _)| k.total_cmp(&b).is_lt()) {
                    best = Some((k, slot, i));
                }
            }
        }
        let (_, slot, i) = best.expect("a free slot for every child");
        slots[slot] = Some(used[i].0);
        placed[i] = true;
    }
    slots
}

/// The node's origin and scales, and each used slot's box quantized outwards: its lower
/// bytes the largest whose planes lie at or below the box, its upper bytes the smallest whose
/// planes lie at or above it, each plane computed as the traversal decodes it
/// ([`GpuNode::plane`]).
fn quantized<const W: usize>(
    boxes: &[Option<([f32; 3], [f32; 3])>; W],
    slots: &[Option<usize>; WIDE_CHILDREN],
) -> GpuNode {
    let mut g = GpuNode::zeroed();
    for axis in 0..3 {
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for (min, max) in boxes.iter().flatten() {
            lo = lo.min(min[axis]);
            hi = hi.max(max[axis]);
        }
        g.origin[axis] = lo;
        g.exponents[axis] = exponent(&g, axis, hi);
    }
    for (slot, lane) in slots.iter().enumerate() {
        let Some((min, max)) = lane.and_then(|lane| boxes[lane]) else {
            continue;
        };
        for axis in 0..3 {
            g.lo[axis][slot] = lower_byte(&g, axis, min[axis]);
            g.hi[axis][slot] = upper_byte(&g, axis, max[axis]);
        }
        let (lo, hi) = g.child_box(slot);
        debug_assert!(
            (0..3).all(|a| lo[a] <= min[a] && hi[a] >= max[a]),
            "the decoded box {lo:?} {hi:?} holds the box {min:?} {max:?}"
        );
    }
    g
}

/// The smallest biased exponent whose byte 255 decodes at or above `max` along `axis`
/// (`g.origin` set). Decoding grows with the exponent, so the search steps from an estimate
/// in either direction; the largest exponent, whose planes overflow to infinity, always
/// does.
fn exponent(g: &GpuNode, axis: usize, max: f32) -> u8 {
    let reaches = |e: u8| {
        let mut n = *g;
        n.exponents[axis] = e;
        n.plane(axis, u8::MAX) >= max
    };
    // The exponent of extent / 255 rounded down: the scale is this or a step above.
    let estimate = ((max - g.origin[axis]) / 255.0).to_bits() >> 23 & 0xff;
    let mut e = estimate.clamp(1, 254) as u8;
    while e < 254 && !reaches(e) {
        e += 1;
    }
    while e > 1 && reaches(e - 1) {
        e -= 1;
    }
    e
}

/// The largest byte whose plane along `axis` lies at or below `min` (byte 0 always does: it
/// decodes to the origin, the smallest of the children's lower planes).
fn lower_byte(g: &GpuNode, axis: usize, min: f32) -> u8 {
    let estimate = (f64::from(min) - f64::from(g.origin[axis])) / f64::from(g.scale(axis));
    let mut q = estimate.floor().clamp(0.0, 255.0) as u8;
    while q > 0 && g.plane(axis, q) > min {
        q -= 1;
    }
    while q < u8::MAX && g.plane(axis, q + 1) <= min {
        q += 1;
    }
    q
}

/// The smallest byte whose plane along `axis` lies at or above `max` (byte 255 always does,
/// by the choice of exponent).
fn upper_byte(g: &GpuNode, axis: usize, max: f32) -> u8 {
    let estimate = (f64::from(max) - f64::from(g.origin[axis])) / f64::from(g.scale(axis));
    let mut q = estimate.ceil().clamp(0.0, 255.0) as u8;
    while q < u8::MAX && g.plane(axis, q) < max {
        q += 1;
    }
    while q > 0 && g.plane(axis, q - 1) >= max {
        q -= 1;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::super::tests::floats;
    use super::*;
    use crate::bvh::BvhSettings;
    use crate::bvh::wide::Width;
    use crate::geometry::TriangleExt;
    use crate::math::Vec3;

    /// Triangles of every size, far from the origin and near it, thin and flat: boxes whose
    /// quantization rounds in every way.
    fn triangles(n: usize) -> Vec<Triangle> {
        let mut next = floats(0x9e37_79b9_7f4a_7c15);
        (0..n)
            .map(|i| {
                let scale = [1e-3, 1.0, 1e3][i % 3];
                let offset = if i % 5 == 0 { 12345.678 } else { -0.5 };
                let c = Vec3::new(next(), next(), next()) * scale + Vec3::splat(offset);
                let mut d = |flat: bool| {
                    let mut v = Vec3::new(next(), next(), next()) * scale * 0.01;
                    if flat {
                        v.z = 0.0;
                    }
                    c + v
                };
                let flat = i % 7 == 0;
                Triangle {
                    v: [d(flat), d(flat), d(flat)],
                }
            })
            .collect()
    }

    /// Walks the GPU tree from `node`: every slot's decoded box holds the padded boxes of
    /// all the triangles below it, each triangle is in one leaf, children come after their
    /// parents. Returns the box of the triangles below `node` and counts the nodes.
    fn check(
        bvh: &WideBvh,
        gpu: &GpuWideBvh,
        node: u32,
        seen: &mut [bool],
        nodes: &mut usize,
    ) -> ([f32; 3], [f32; 3]) {
        *nodes += 1;
        let g = &gpu.nodes()[node as usize];
        let mut all = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for slot in 0..WIDE_CHILDREN {
            let leaf = g.leaf(slot);
            let below = if g.is_inner(slot) {
                assert!(leaf.is_empty());
                assert!(g.child(slot) > node, "children come after their parent");
                check(bvh, gpu, g.child(slot), seen, nodes)
            } else if !leaf.is_empty() {
                let mut b = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
                for k in leaf {
                    let source = gpu.source_indices()[k as usize] as usize;
                    assert!(!seen[source], "triangle {source} in two leaves");
                    seen[source] = true;
                    let triangle = gpu.triangles()[k as usize];
                    assert_eq!(triangle, bvh.triangles()[source]);
                    assert_eq!(
                        gpu.original_indices()[k as usize],
                        bvh.original_indices()[source]
                    );
                    let (min, max) = triangle.padded_bounds(gpu.padding());
                    b = union(b, (min, max));
                }
                b
            } else {
                continue;
            };
            let (min, max) = g.child_box(slot);
            assert!(
                (0..3).all(|a| min[a] <= below.0[a] && max[a] >= below.1[a]),
                "slot {slot} of node {node}: decoded box {min:?} {max:?} around {below:?}"
            );
            all = union(all, below);
        }
        all
    }

    fn union(a: ([f32; 3], [f32; 3]), b: ([f32; 3], [f32; 3])) -> ([f32; 3], [f32; 3]) {
        (
            std::array::from_fn(|i| a.0[i].min(b.0[i])),
            std::array::from_fn(|i| a.1[i].max(b.1[i])),
        )
    }

    #[test]
    fn the_gpu_form_holds_every_triangle_once_in_boxes_around_it() {
        let input = triangles(6000);
        for width in [Width::Four, Width::Eight] {
            for leaf_size in [1, 4, 31] {
                let settings = BvhSettings {
                    leaf_size,
                    ..BvhSettings::default()
                };
                let bvh = WideBvh::build_with_width(&input, settings, width);
                let gpu = bvh.to_gpu();
                let mut seen = vec![false; input.len()];
                let mut nodes = 0;
                check(&bvh, &gpu, 0, &mut seen, &mut nodes);
                assert!(seen.iter().all(|&s| s), "every triangle in a leaf");
                assert_eq!(nodes, bvh.nodes().len(), "every node reached once");
                assert_eq!(gpu.nodes().len(), bvh.nodes().len());
                assert!(gpu.depth() as usize <= WIDE_STACK && gpu.depth() > 0);
            }
        }
    }

    #[test]
    fn quantized_planes_are_tight_as_well_as_conservative() {
        let mut g = GpuNode::zeroed();
        g.origin = [1.0, -3.0, 1e6];
        for (axis, max) in [(0, 2.0f32), (1, 5.0), (2, 1e6 + 1.0)] {
            g.exponents[axis] = exponent(&g, axis, max);
            assert!(g.plane(axis, 255) >= max);
            let mut smaller = g;
            smaller.exponents[axis] -= 1;
            assert!(
                smaller.plane(axis, 255) < max,
                "the smallest scale that reaches"
            );
            for value in [g.origin[axis], (g.origin[axis] + max) * 0.5, max] {
                let lo = lower_byte(&g, axis, value);
                let hi = upper_byte(&g, axis, value);
                assert!(g.plane(axis, lo) <= value && g.plane(axis, hi) >= value);
                assert!(lo == 255 || g.plane(axis, lo + 1) > value);
                assert!(hi == 0 || g.plane(axis, hi - 1) < value);
            }
        }
    }

    #[test]
    fn slots_put_each_octants_nearest_child_first() {
        // Eight unit boxes at the corners of a cube: the child nearest rays of octant `o` is
        // the one at the corner they enter by, which must sit in slot `o`.
        let corner = |i: usize| -> ([f32; 3], [f32; 3]) {
            let p: [f32; 3] = std::array::from_fn(|a| if i >> a & 1 == 1 { 2.0 } else { 0.0 });
            (p, p.map(|x| x + 1.0))
        };
        let boxes: [Option<([f32; 3], [f32; 3])>; 8] = std::array::from_fn(|i| Some(corner(i)));
        let slots = assign_slots(&boxes);
        for (octant, lane) in slots.iter().enumerate() {
            // Rays of octant `o` travel towards negative coordinates on the axes set in `o`:
            // they meet the corner at the high end of those axes first.
            assert_eq!(*lane, Some(octant), "octant {octant}");
        }
    }
}
