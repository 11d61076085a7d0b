//! The binned-SAH build (or the octree's octant split, as a choice to measure it by) and its
//! collapse to four or eight children per node.

use std::ops::Range;

use rayon::join;

use crate::geometry::{Aabb, Triangle, TriangleExt};
use crate::math::Vec3;

use super::super::BvhSplit;
use super::super::padding_for;
use super::{EMPTY, LANES, Nodes, TrianglePack, WideNode, Width};

/// Bins per axis. 16 finds splits within a few percent of the full sweep's SAH cost on the
/// meshes we trace, at a small part of its build time (Wald, "On fast construction of
/// SAH-based bounding volume hierarchies", 2007, uses 16 to 32).
const BINS: usize = 16;

/// The cost of visiting a binary node against testing one pack of four triangles, in the SAH
/// (a leaf costs one per pack it fills). Half and twice this traced the same to within 2%
/// on the meshes we measured (BENCHMARKS.md).
const TRAVERSAL_COST: f32 = 1.0;

/// Below this many triangles a node's two subtrees are built on the calling thread: spreading
/// smaller nodes over the pool costs more in task overhead than it saves.
const PARALLEL_THRESHOLD: usize = 4096;

/// Past this depth the binary tree is split at the median of the input order instead of by the
/// SAH (or by octant), so that its depth, and the traversal's stack, stay bounded (at most this plus
/// log2 of the triangle count, 67 for the most triangles a BVH can hold).
const SPLIT_DEPTH: u32 = 40;

/// The deepest a wide inner node can be (the root at 0): the binary tree's inner nodes are at
/// most `SPLIT_DEPTH + 27` deep (27: median splits of at most 2^27 triangles), and every wide
/// node is a deeper binary inner node than its parent.
pub(super) const MAX_INNER_DEPTH: usize = SPLIT_DEPTH as usize + 27;

/// The most entries the traversal's stack can hold: each query visits one child of a node
/// next and leaves at most the other seven (of eight) on the stack, seven entries per level of
/// [`MAX_INNER_DEPTH`], plus one.
pub(super) const STACK_SIZE: usize = 7 * MAX_INNER_DEPTH + 1;

/// What the build hands to [`WideBvh`](super::WideBvh).
pub(super) struct Built {
    pub(super) nodes: Nodes,
    pub(super) node_bytes: usize,
    pub(super) triangles: Vec<Triangle>,
    pub(super) packs: Vec<TrianglePack>,
    pub(super) ids: Vec<u32>,
    pub(super) leaves: usize,
    pub(super) depth: u32,
    pub(super) max_leaf_triangles: u32,
    pub(super) padding: f32,
    pub(super) bounds: Aabb,
}

/// A node of the binary tree.
enum Binary {
    /// Its triangles are `items[range]` of the build's (permuted) item list.
    Leaf { bounds: Aabb, range: Range<usize> },
    Inner {
        bounds: Aabb,
        children: Box<[Binary; 2]>,
    },
}

impl Binary {
    fn bounds(&self) -> Aabb {
        match self {
            Binary::Leaf { bounds, .. } | Binary::Inner { bounds, .. } => *bounds,
        }
    }
}

/// The packs `n` triangles fill: what a leaf of them costs to test, in units of one pack test.
fn packs(n: usize) -> f32 {
    n.div_ceil(LANES) as f32
}

/// Half the surface area of a box: the SAH's measure of how likely a ray is to hit it.
fn half_area(b: &Aabb) -> f32 {
    let e = b.extent();
    e.x * e.y + e.y * e.z + e.z * e.x
}

/// The triangles' boxes and centroids, computed once.
struct Input<'a> {
    triangles: &'a [Triangle],
    bounds: Vec<Aabb>,
    centroids: Vec<Vec3>,
    leaf_size: usize,
    split: BvhSplit,
}

/// Builds the wide BVH over `triangles`, `width` children per node, leaves of at most
/// `leaf_size` triangles, nodes split as `split` says.
pub(super) fn build(
    triangles: &[Triangle],
    leaf_size: usize,
    split: BvhSplit,
    width: Width,
) -> Built {
    use rayon::prelude::*;
    let bounds: Vec<Aabb> = triangles.par_iter().map(Triangle::bounds).collect();
    let centroids = triangles.par_iter().map(Triangle::centroid).collect();
    let input = Input {
        triangles,
        bounds,
        centroids,
        leaf_size,
        split,
    };
    let mut items: Vec<u32> = (0..triangles.len() as u32).collect();
    let root = input.node(&mut items, 0, 0, None);
    let all = root.bounds();
    let padding = padding_for(&all);
    match width {
        Width::Four => emit_root::<4>(&root, &input, &items, padding).built(Nodes::Four, all),
        Width::Eight => emit_root::<8>(&root, &input, &items, padding).built(Nodes::Eight, all),
    }
}

/// Writes the wide tree of the binary tree `root`, `W` children per node.
fn emit_root<const W: usize>(
    root: &Binary,
    input: &Input<'_>,
    items: &[u32],
    padding: f32,
) -> Emitted<W> {
    let n = input.triangles.len();
    let mut out = Emitted {
        nodes: Vec::new(),
        triangles: Vec::with_capacity(n),
        // Exactly: a vector that outgrows its capacity holds the old and the new array at
        // once, and the packs are the build's largest array.
        packs: Vec::with_capacity(pack_count(root)),
        ids: Vec::with_capacity(n),
        leaves: 0,
        depth: 0,
        max_leaf_triangles: 0,
        padding,
    };
    let children = match root {
        // A root small enough to be a leaf hangs alone under a wide root.
        Binary::Leaf { .. } => vec![root],
        Binary::Inner { .. } => collapse(root, W),
    };
    emit(&children, 1, input, items, &mut out);
    out
}

/// What [`emit`] writes as it goes: nodes of width `W`, and the leaves' contents.
struct Emitted<const W: usize> {
    nodes: Vec<WideNode<W>>,
    triangles: Vec<Triangle>,
    packs: Vec<TrianglePack>,
    ids: Vec<u32>,
    leaves: usize,
    depth: u32,
    max_leaf_triangles: u32,
    padding: f32,
}

impl<const W: usize> Emitted<W> {
    /// The finished tree, its nodes wrapped by `nodes`, over triangles bounded by `bounds`.
    fn built(self, nodes: fn(Vec<WideNode<W>>) -> Nodes, bounds: Aabb) -> Built {
        Built {
            node_bytes: self.nodes.len() * size_of::<WideNode<W>>(),
            nodes: nodes(self.nodes),
            triangles: self.triangles,
            packs: self.packs,
            ids: self.ids,
            leaves: self.leaves,
            depth: self.depth,
            max_leaf_triangles: self.max_leaf_triangles,
            padding: self.padding,
            bounds,
        }
    }
}

impl Input<'_> {
    /// The binary subtree over `items`, which start at `offset` in the whole item list;
    /// `octant`: where a node split by octant is in its three steps (see [`OctantStep`]).
    fn node(
        &self,
        items: &mut [u32],
        offset: usize,
        depth: u32,
        octant: Option<OctantStep>,
    ) -> Binary {
        let bounds = items
            .iter()
            .fold(Aabb::EMPTY, |b, &i| b.union(self.bounds[i as usize]));
        let n = items.len();
        let leaf = || Binary::Leaf {
            bounds,
            range: offset..offset + n,
        };
        if n <= 1 {
            return leaf();
        }
        let (mid, next) = match self.split {
            BvhSplit::Sah => {
                let split = if depth < SPLIT_DEPTH {
                    self.best_split(items, &bounds)
                } else {
                    None
                };
                let mid = match split {
                    Some(s) if n <= self.leaf_size && s.cost >= packs(n) => return leaf(),
                    Some(s) => partition(items, |i| self.bin(i, &s) < s.bin),
                    None if n <= self.leaf_size => return leaf(),
                    None => n / 2,
                };
                (mid, None)
            }
            BvhSplit::Octant if n <= self.leaf_size => return leaf(),
            BvhSplit::Octant => {
                let split = if depth < SPLIT_DEPTH {
                    self.octant_split(items, octant)
                } else {
                    None
                };
                split.unwrap_or((n / 2, None))
            }
        };
        // A split that leaves one side empty (all centroids in one bin after all) becomes a
        // split at the median of the input order.
        let mid = if mid == 0 || mid == n { n / 2 } else { mid };
        let (left, right) = items.split_at_mut(mid);
        let (l, r) = if n > PARALLEL_THRESHOLD {
            join(
                || self.node(left, offset, depth + 1, next),
                || self.node(right, offset + mid, depth + 1, next),
            )
        } else {
            (
                self.node(left, offset, depth + 1, next),
                self.node(right, offset + mid, depth + 1, next),
            )
        };
        Binary::Inner {
            bounds,
            children: Box::new([l, r]),
        }
    }

    /// The octree's split as binary steps: the items go to the octants of their centroids
    /// around the centre of the centroid bounds, taken as three halvings at that centre (by
    /// `x`, then `y`, then `z`). The collapse to eight children mostly joins them into one
    /// node again (it opens the largest child first, so a large grandchild may be opened
    /// before a small octant). An axis along which every centroid lies on one side is passed
    /// over; `None` when every axis is (the centroids coincide). Returns where the items were
    /// cut and the step their two halves take next. Past [`SPLIT_DEPTH`] binary levels (about
    /// 13 octant levels, where the octree goes to its `max_depth`, 24 by default) nodes are
    /// split by index, to keep the traversal's stack fixed.
    fn octant_split(
        &self,
        items: &mut [u32],
        step: Option<OctantStep>,
    ) -> Option<(usize, Option<OctantStep>)> {
        // The rest of this octant split's halvings, then those of a fresh one.
        if let Some(step) = step
            && let Some(cut) = self.halve(items, step)
        {
            return Some(cut);
        }
        let centroids = items
            .iter()
            .fold(Aabb::EMPTY, |b, &i| b.grow(self.centroids[i as usize]));
        let fresh = OctantStep {
            center: centroids.center(),
            axis: 0,
        };
        self.halve(items, fresh)
    }

    /// The first of the halvings of `step` onwards (at its centre, along its axis and those
    /// after it) that puts items on both sides.
    fn halve(&self, items: &mut [u32], step: OctantStep) -> Option<(usize, Option<OctantStep>)> {
        for axis in step.axis..3 {
            let at = step.center[axis];
            let mid = partition(items, |i| self.centroids[i as usize][axis] < at);
            if mid != 0 && mid != items.len() {
                let next = (axis < 2).then_some(OctantStep {
                    center: step.center,
                    axis: axis + 1,
                });
                return Some((mid, next));
            }
        }
        None
    }

    /// The bin of item `i` along the split's axis.
    fn bin(&self, i: u32, split: &Split) -> usize {
        let c = self.centroids[i as usize][split.axis];
        (((c - split.origin) * split.scale) as usize).min(BINS - 1)
    }

    /// The cheapest SAH split of `items` (whose boxes' union is `bounds`) over the bins of
    /// every axis along which the centroids spread, with its cost in units of one triangle
    /// test; `None` when all centroids coincide.
    fn best_split(&self, items: &[u32], bounds: &Aabb) -> Option<Split> {
        let centroid_bounds = items
            .iter()
            .fold(Aabb::EMPTY, |b, &i| b.grow(self.centroids[i as usize]));
        let extent = centroid_bounds.extent();
        let area = half_area(bounds).max(f32::MIN_POSITIVE);
        let mut best: Option<Split> = None;
        for axis in 0..3 {
            if extent[axis] <= 0.0 {
                continue;
            }
            let mut split = Split {
                axis,
                origin: centroid_bounds.min[axis],
                scale: BINS as f32 / extent[axis],
                bin: 0,
                cost: f32::INFINITY,
            };
            let mut counts = [0usize; BINS];
            let mut boxes = [Aabb::EMPTY; BINS];
            for &i in items {
                let b = self.bin(i, &split);
                counts[b] += 1;
                boxes[b] = boxes[b].union(self.bounds[i as usize]);
            }
            // Areas and counts of everything right of each boundary, swept from the right.
            let mut right_area = [0.0f32; BINS];
            let mut right_count = [0usize; BINS];
            let (mut acc, mut count) = (Aabb::EMPTY, 0);
            for b in (1..BINS).rev() {
                acc = acc.union(boxes[b]);
                count += counts[b];
                right_area[b] = half_area(&acc);
                right_count[b] = count;
            }
            let (mut acc, mut count) = (Aabb::EMPTY, 0);
            for b in 1..BINS {
                acc = acc.union(boxes[b - 1]);
                count += counts[b - 1];
                if count == 0 || right_count[b] == 0 {
                    continue;
                }
                let cost = TRAVERSAL_COST
                    + (half_area(&acc) * packs(count) + right_area[b] * packs(right_count[b]))
                        / area;
                if cost < split.cost {
                    split.cost = cost;
                    split.bin = b;
                }
            }
            if best.as_ref().is_none_or(|s| split.cost < s.cost) && split.cost.is_finite() {
                best = Some(split);
            }
        }
        best
    }
}

/// Where a node split by octant is: the centre of its centroid bounds, and the axis of the
/// halving to come (after `x`, `y`; after `z` a fresh split starts).
#[derive(Clone, Copy, Debug)]
struct OctantStep {
    center: Vec3,
    axis: usize,
}

/// A candidate split: centroids in bins below `bin` along `axis` go left.
#[derive(Clone, Copy, Debug)]
struct Split {
    axis: usize,
    /// The centroid bounds' lower end along `axis`.
    origin: f32,
    /// Bins per unit of length along `axis`.
    scale: f32,
    bin: usize,
    /// The SAH cost, in units of one triangle test.
    cost: f32,
}

/// Reorders `items` so that those for which `left` holds come first; returns how many. The
/// order depends only on the input, so the tree does too.
fn partition(items: &mut [u32], left: impl Fn(u32) -> bool) -> usize {
    let mut mid = 0;
    for k in 0..items.len() {
        if left(items[k]) {
            items.swap(mid, k);
            mid += 1;
        }
    }
    mid
}

/// The children of a binary inner node gathered into one wide node: its two children, then,
/// while fewer than `width`, the inner child of largest area replaced by its own two.
fn collapse(node: &Binary, width: usize) -> Vec<&Binary> {
    let Binary::Inner { children, .. } = node else {
        unreachable!("only inner nodes are collapsed");
    };
    let mut out: Vec<&Binary> = children.iter().collect();
    while out.len() < width {
        let widest = out
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, Binary::Inner { .. }))
            .max_by(|(_, a), (_, b)| half_area(&a.bounds()).total_cmp(&half_area(&b.bounds())))
            .map(|(k, _)| k);
        let Some(k) = widest else { break };
        let Binary::Inner { children, .. } = out[k] else {
            unreachable!("filtered to inner nodes");
        };
        out.splice(k..=k, children.iter());
    }
    out
}

/// The packs the leaves under `node` fill: each leaf starts a pack of its own.
fn pack_count(node: &Binary) -> usize {
    match node {
        Binary::Leaf { range, .. } => range.len().div_ceil(LANES),
        Binary::Inner { children, .. } => pack_count(&children[0]) + pack_count(&children[1]),
    }
}

/// Writes the wide node whose children are `children`, at depth `depth`, and everything below
/// it; returns its index.
fn emit<const W: usize>(
    children: &[&Binary],
    depth: u32,
    input: &Input<'_>,
    items: &[u32],
    out: &mut Emitted<W>,
) -> u32 {
    let index = out.nodes.len();
    out.depth = out.depth.max(depth);
    out.nodes.push(WideNode {
        planes: [
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
            [f32::INFINITY; W],
            [f32::NEG_INFINITY; W],
        ],
        child: [EMPTY; W],
        count: [0; W],
    });
    for (lane, child) in children.iter().enumerate() {
        let b = child.bounds().padded(out.padding);
        let (reference, count) = match child {
            Binary::Leaf { range, .. } => {
                debug_assert!(!range.is_empty(), "a leaf has triangles");
                let first = out.triangles.len();
                for &i in &items[range.clone()] {
                    out.triangles.push(input.triangles[i as usize]);
                    out.ids.push(i);
                }
                let first_pack = out.packs.len() as u32;
                for start in (first..out.triangles.len()).step_by(LANES) {
                    let end = (start + LANES).min(out.triangles.len());
                    let pack =
                        TrianglePack::new(&out.triangles[start..end], start as u32, out.padding);
                    out.packs.push(pack);
                }
                let count = range.len() as u32;
                out.leaves += 1;
                out.max_leaf_triangles = out.max_leaf_triangles.max(count);
                (first_pack, count)
            }
            Binary::Inner { .. } => (emit(&collapse(child, W), depth + 1, input, items, out), 0),
        };
        let node = &mut out.nodes[index];
        for axis in 0..3 {
            node.planes[2 * axis][lane] = b.min[axis];
            node.planes[2 * axis + 1][lane] = b.max[axis];
        }
        node.child[lane] = reference;
        node.count[lane] = count;
    }
    index as u32
}
