//! The binned-SAH build (or the octree's octant split, as a choice to measure it by) and its
//! collapse to four or eight children per node.
//!
//! Two stages, both on the calling thread or, given more than one worker, as tasks of one run
//! of raylb's own work-stealing balancer (the last binary task starts the wide stage):
//! - the binary tree ([`binned`], [`tasks`]): each node large enough is a task that cuts its
//!   triangles in two and spawns a task for each half; a smaller one builds its subtree. Every
//!   node is cut by the same code from the same records, so the tree does not depend on the
//!   worker count. Each node knows what its subtree fills once written wide ([`Size`]).
//! - the wide tree ([`emit`]): the binary tree collapsed to `W` children per node and written
//!   in pre-order. The sizes give every wide subtree its place in the output before it is
//!   written, so each large one is a task that writes its part in place: the same bytes as
//!   one thread writing them all.

mod binned;
mod emit;
mod shared;
mod tasks;

use std::num::NonZeroUsize;
use std::ops::Range;

use balancers::SpawnError;

use crate::geometry::{Aabb, Triangle};

use super::super::BvhSplit;
use super::super::padding_for;
use super::{LANES, Nodes, TrianglePack, Width};
use binned::{Extent, Record, SPLIT_DEPTH, Splitter};

/// A mesh of more triangles than this is shared out; a smaller one is built on the calling
/// thread: its build would take less time than starting a thread.
const SHARED_ABOVE: usize = 1024;

/// The fewest triangles a task builds on its own ([`task_size`]): below this, the
/// task's own cost (a lock, a hand-in) is no longer small beside its work.
const SMALLEST_TASK: usize = 256;

/// The most triangles a task builds on its own: spreading larger meshes more finely
/// over two workers gained nothing (the bunny, 69,451 triangles, built 1.8x faster on two
/// workers than on one with tasks of up to 1,024 triangles as with 4,096).
const LARGEST_TASK: usize = 1024;

/// Tasks a worker gets, as the build aims to share it: enough that the last ones, of unequal
/// sizes, end close together.
const TASKS_PER_WORKER: usize = 16;

/// Up to how many triangles a node's binary subtree is built by one task on `workers` workers
/// (its wide subtree is written by tasks of [`emit_task_size`]): about [`TASKS_PER_WORKER`]
/// tasks each, within [`SMALLEST_TASK`] and [`LARGEST_TASK`]. The size decides only which
/// worker builds which part; the tree is the same whatever it is. (Cow and teapot, 6,000
/// triangles, were cut into eight tasks at 1,024, too few for two workers to end together: at
/// 256 their two-worker builds were 1.24-1.28x faster.)
fn task_size(triangles: usize, workers: NonZeroUsize) -> usize {
    (triangles / (TASKS_PER_WORKER * workers.get())).clamp(SMALLEST_TASK, LARGEST_TASK)
}

/// How many times the triangles of a binary-tree task a wide-stage task writes
/// ([`emit_task_size`]).
const EMIT_TASK_FACTOR: usize = 4;

/// Up to how many triangles a wide subtree is written by one task, where the binary tree's
/// subtrees of up to `task_size` are each built by one. Writing a subtree wide takes about a
/// seventh of the time its binary build takes (the cow on one thread: 150 against 1,020 µs),
/// so at the build's size the wide stage's tasks were of one to three microseconds (118 of
/// them for the cow on two workers), and their hand-overs and the misses on nodes the other
/// worker built made the stage no faster on two workers than on one. Four times as large, the
/// cow's are 17, and the stage took 101–110 µs instead of 127–133 (the best of 200 builds).
fn emit_task_size(task_size: usize) -> usize {
    task_size * EMIT_TASK_FACTOR
}

/// The deepest a wide inner node can be (the root at 0): the binary tree's inner nodes are at
/// most `SPLIT_DEPTH + 27` deep (27: median splits of at most 2^27 triangles), and every wide
/// node is a deeper binary inner node than its parent.
pub(super) const MAX_INNER_DEPTH: usize = SPLIT_DEPTH as usize + 27;

/// The most entries the traversal's stack can hold: each query visits one child of a node
/// next and leaves at most the other seven (of eight) on the stack, seven entries per level of
/// [`MAX_INNER_DEPTH`], plus one.
pub(super) const STACK_SIZE: usize = 7 * MAX_INNER_DEPTH + 1;

/// The most children a wide node has.
const MAX_WIDTH: usize = 8;

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

/// Builds the wide BVH over `triangles`, `width` children per node, leaves of at most
/// `leaf_size` triangles, nodes split as `split` says, on `workers` workers.
///
/// # Errors
/// When the operating system refuses to start one of the workers (never with one worker, or
/// for a mesh too small to share, which are built on the calling thread).
pub(super) fn build(
    triangles: &[Triangle],
    leaf_size: usize,
    split: BvhSplit,
    width: Width,
    workers: NonZeroUsize,
) -> Result<Built, SpawnError> {
    let splitter = Splitter {
        leaf_size,
        split,
        width: width.children(),
    };
    let workers = (triangles.len() > SHARED_ABOVE)
        .then_some(workers)
        .filter(|w| w.get() > 1);
    Ok(match width {
        Width::Four => {
            let (tree, bounds) = wide_on::<4>(triangles, splitter, workers)?;
            tree.built(Nodes::Four, bounds)
        }
        Width::Eight => {
            let (tree, bounds) = wide_on::<8>(triangles, splitter, workers)?;
            tree.built(Nodes::Eight, bounds)
        }
    })
}

/// The wide tree of `W` children a node over `triangles`, built on `workers` workers (the
/// binary tree, then the wide one, in one run of the balancer), or on the calling thread; and
/// the bounds of the triangles.
fn wide_on<const W: usize>(
    triangles: &[Triangle],
    splitter: Splitter,
    workers: Option<NonZeroUsize>,
) -> Result<(emit::Emitted<W>, Aabb), SpawnError> {
    if let Some(workers) = workers {
        return tasks::build_on::<W>(triangles, splitter, workers);
    }
    let (forest, records) = binary_here(triangles, splitter);
    let (ids, padding) = leaf_order(&forest, &records);
    drop(records);
    Ok((
        emit::wide_here::<W>(&forest, triangles, &ids, padding),
        forest.get(forest.root).bounds,
    ))
}

/// What the wide tree is written with, once the binary tree `forest` over `records` is
/// built: the leaves' triangles in order, as indices into the input, and the padding of its
/// boxes.
fn leaf_order(forest: &Forest, records: &[Record]) -> (Vec<u32>, f32) {
    let ids = records.iter().map(Record::index).collect();
    (ids, padding_for(&forest.get(forest.root).bounds))
}

/// The binary tree over `triangles`, built on the calling thread, and the records in the
/// order its leaves refer to.
fn binary_here(triangles: &[Triangle], splitter: Splitter) -> (Forest, Vec<Record>) {
    let mut records: Vec<Record> = (0u32..)
        .zip(triangles)
        .map(|(i, t)| Record::new(t, i))
        .collect();
    let extent = Extent::of(&records);
    let mut arena = Arena::new(0);
    let root = splitter.subtree(&mut records, 0, 0, None, &extent, &mut arena);
    let forest = Forest {
        arenas: vec![arena.nodes],
        root,
        width: splitter.width,
    };
    (forest, records)
}

/// Where a binary node is: its arena (one per worker, and one for the top of the tree, put
/// together once every subtree is built), and its index there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NodeRef {
    arena: u32,
    index: u32,
}

/// What a binary node's subtree fills once collapsed and written as a wide subtree of its own:
/// its wide nodes (none for a leaf) and its packs. (Its triangles are its records.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Size {
    nodes: usize,
    packs: usize,
}

/// A node of the binary tree.
#[derive(Clone, Copy, Debug)]
struct BinaryNode {
    bounds: Aabb,
    /// Its records, in the build's (permuted) record list.
    start: u32,
    end: u32,
    /// Its two children; `None` for a leaf.
    children: Option<[NodeRef; 2]>,
    size: Size,
    /// How the subtree is best given to the wide node above it ([`Slots`]).
    slots: Slots,
}

impl BinaryNode {
    /// A leaf over the records `range`, which span `bounds`.
    fn leaf(bounds: Aabb, range: Range<usize>) -> Self {
        Self {
            bounds,
            start: range.start as u32,
            end: range.end as u32,
            children: None,
            size: Size {
                nodes: 0,
                packs: range.len().div_ceil(LANES),
            },
            slots: Slots::LEAF,
        }
    }

    /// An inner node over the records `range`, spanning `bounds`, with `children`, in a tree
    /// of `width` children per node whose nodes `get` finds.
    fn inner<'a>(
        bounds: Aabb,
        range: Range<usize>,
        children: [NodeRef; 2],
        width: usize,
        get: impl Fn(NodeRef) -> &'a BinaryNode,
    ) -> Self {
        let (left, right) = (get(children[0]), get(children[1]));
        let slots = Slots::inner(half_area(&bounds), &left.slots, &right.slots, width);
        Self {
            bounds,
            start: range.start as u32,
            end: range.end as u32,
            children: Some(children),
            size: Size {
                nodes: slots.nodes[0] as usize,
                packs: left.size.packs + right.size.packs,
            },
            slots,
        }
    }

    /// Its records.
    fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Binary nodes as they are built, by one worker or for one tree.
struct Arena {
    id: u32,
    nodes: Vec<BinaryNode>,
}

impl Arena {
    fn new(id: u32) -> Self {
        Self {
            id,
            nodes: Vec::new(),
        }
    }

    /// One of this arena's nodes.
    fn get(&self, node: NodeRef) -> &BinaryNode {
        debug_assert_eq!(node.arena, self.id);
        &self.nodes[node.index as usize]
    }

    /// Adds `node`; returns where it is.
    fn push(&mut self, node: BinaryNode) -> NodeRef {
        self.nodes.push(node);
        NodeRef {
            arena: self.id,
            index: self.nodes.len() as u32 - 1,
        }
    }
}

/// The binary tree: its arenas, its root, and the width of the wide tree its nodes' sizes
/// are counted for.
struct Forest {
    arenas: Vec<Vec<BinaryNode>>,
    root: NodeRef,
    width: usize,
}

impl Forest {
    fn get(&self, node: NodeRef) -> &BinaryNode {
        &self.arenas[node.arena as usize][node.index as usize]
    }

    /// The children of the wide root: the binary root's collapse, or, where the root is a
    /// leaf (a small mesh), that leaf alone; and what the whole wide tree fills.
    fn root_children(&self, width: usize) -> (Children, Size) {
        let root = self.get(self.root);
        match root.children {
            Some(_) => (collapse(root, width, |n| self.get(n)), root.size),
            None => (
                Children::one(self.root),
                Size {
                    nodes: 1,
                    packs: root.size.packs,
                },
            ),
        }
    }
}

/// The children of one wide node, in lane order.
#[derive(Clone, Copy, Debug)]
struct Children {
    nodes: [NodeRef; MAX_WIDTH],
    len: usize,
}

impl Children {
    fn one(node: NodeRef) -> Self {
        Self {
            nodes: [node; MAX_WIDTH],
            len: 1,
        }
    }
}

impl std::ops::Deref for Children {
    type Target = [NodeRef];
    fn deref(&self) -> &[NodeRef] {
        &self.nodes[..self.len]
    }
}

/// Half the surface area of a box: in the surface area heuristic, how likely a random ray is
/// to meet it, against another box.
fn half_area(b: &Aabb) -> f32 {
    let e = b.extent();
    e.x * e.y + e.y * e.z + e.z * e.x
}

/// The cheapest ways to give a binary subtree to the wide node above it in at most `s` of its
/// slots, for each `s` up to the width: the whole subtree in one slot (a leaf, or a wide node
/// whose own children are found the same way), or, for an inner node, its two children
/// sharing the `s` slots. The cost of a choice is the summed half area of the wide nodes it
/// makes: in the surface area heuristic, how many of them a ray visits. (The leaves are the
/// binary tree's whatever the choice, and so is what testing them costs.) Of equal costs, the
/// choice of fewer wide nodes: areas of zero, as of geometry along one line, tie everywhere.
/// Worked out bottom-up as the binary tree is built, from the children's, so that the collapse
/// ([`collapse`]) is the one of least cost the binary tree allows (the dynamic programme of
/// Ylitie, Karras and Laine, "Efficient incoherent ray traversal on GPUs through compressed
/// wide BVHs", 2017), rather than one that opens the largest child first, which, at a leaf of
/// four triangles, left 46% of the bunny's eight-wide nodes two or three children: 28% fewer
/// nodes, and random rays 7–10% faster (BENCHMARKS.md).
#[derive(Clone, Copy, Debug)]
struct Slots {
    /// `cost[s − 1]`: the least cost in at most `s` slots.
    cost: [f32; MAX_WIDTH],
    /// `split[s − 1]`: 0 where that is the whole subtree in one slot, else the slots its first
    /// child takes (the second is given the rest, and may use fewer).
    split: [u8; MAX_WIDTH],
    /// `nodes[s − 1]`: the wide nodes [`gather`] makes of that choice; `nodes[0]`, those of
    /// the subtree written whole ([`Size`]).
    nodes: [u32; MAX_WIDTH],
    /// For an inner node written as a wide node, the slots of its `width` its first child
    /// takes.
    node_split: u8,
}

impl Slots {
    /// A leaf's: one slot, however many there are, and no wide node.
    const LEAF: Self = Self {
        cost: [0.0; MAX_WIDTH],
        split: [0; MAX_WIDTH],
        nodes: [0; MAX_WIDTH],
        node_split: 0,
    };

    /// An inner node of half area `area` whose children's are `left` and `right`, in a tree of
    /// `width` children a node.
    fn inner(area: f32, left: &Self, right: &Self, width: usize) -> Self {
        let nodes_of = |k: usize, s: usize| left.nodes[k - 1] + right.nodes[s - k - 1];
        // Whether a choice of `(cost, nodes)` beats another: cheaper, or as cheap with fewer
        // nodes. Costs tie where areas are zero, as on geometry along one line: by cost alone,
        // every binary node there would be a wide node of two children. A NaN cost never
        // beats nor is beaten; infinite costs are equal, and tie by nodes too.
        let beats = |(cost, nodes): (f32, u32), (than_cost, than_nodes): (f32, u32)| {
            cost < than_cost || (cost == than_cost && nodes < than_nodes)
        };
        // The children sharing `s` slots (2 or more): the first taking `k`, the `k` that beats
        // every other, the first of those that tie (1 where every cost is NaN), as
        // `(cost, nodes, k)`.
        let share = |s: usize| {
            let mut best = (left.cost[0] + right.cost[s - 2], nodes_of(1, s), 1);
            for k in 2..s {
                let choice = (left.cost[k - 1] + right.cost[s - k - 1], nodes_of(k, s));
                if beats(choice, (best.0, best.1)) {
                    best = (choice.0, choice.1, k);
                }
            }
            best
        };
        let (children_cost, children_nodes, node_split) = share(width);
        let mut slots = Self {
            cost: [f32::INFINITY; MAX_WIDTH],
            split: [0; MAX_WIDTH],
            nodes: [0; MAX_WIDTH],
            node_split: node_split as u8,
        };
        slots.cost[0] = area + children_cost;
        slots.nodes[0] = 1 + children_nodes;
        for s in 2..=width {
            let (cost, nodes, k) = share(s);
            if beats((cost, nodes), (slots.cost[s - 2], slots.nodes[s - 2])) {
                slots.cost[s - 1] = cost;
                slots.split[s - 1] = k as u8;
                slots.nodes[s - 1] = nodes;
            } else {
                // No better with the extra slot: the choice for `s − 1` slots, as `gather`
                // will take it given `s`. A split of `k` then gives the second child `s − k`
                // slots, not `s − 1 − k`: where a large cost swallowed the difference in
                // floats, its choice there may make fewer nodes, and the count must be of
                // the nodes written (`Size`).
                let k = usize::from(slots.split[s - 2]);
                slots.cost[s - 1] = slots.cost[s - 2];
                slots.split[s - 1] = k as u8;
                slots.nodes[s - 1] = if k == 0 {
                    slots.nodes[0]
                } else {
                    nodes_of(k, s)
                };
            }
        }
        slots
    }
}

/// The children of a binary inner node gathered into one wide node of `width` children, in
/// the order of the binary tree: the choice of least cost its [`Slots`] found. `get` finds
/// the nodes.
fn collapse<'a>(
    node: &BinaryNode,
    width: usize,
    get: impl Fn(NodeRef) -> &'a BinaryNode,
) -> Children {
    let pair = node.children.expect("only inner nodes are collapsed");
    let mut out = Children {
        nodes: [pair[0]; MAX_WIDTH],
        len: 0,
    };
    let k = usize::from(node.slots.node_split);
    gather(pair[0], k, &get, &mut out);
    gather(pair[1], width - k, &get, &mut out);
    out
}

/// Adds to `out` the binary subtree `node` as its [`Slots`] give it to at most `s` slots.
fn gather<'a>(
    node: NodeRef,
    s: usize,
    get: &impl Fn(NodeRef) -> &'a BinaryNode,
    out: &mut Children,
) {
    let n = get(node);
    match (n.children, n.slots.split[s - 1]) {
        (Some([left, right]), k @ 1..) => {
            let k = usize::from(k);
            gather(left, k, get, out);
            gather(right, s - k, get, out);
        }
        _ => {
            out.nodes[out.len] = node;
            out.len += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Vec3;

    /// `n` small triangles scattered at random from `seed`.
    fn scatter(n: usize, seed: u64) -> Vec<Triangle> {
        let mut next = super::super::tests::floats(seed);
        (0..n)
            .map(|_| {
                let c = Vec3::new(next(), next(), next()) * 4.0;
                let mut d = || c + Vec3::new(next(), next(), next()) * 0.3;
                Triangle { v: [d(), d(), d()] }
            })
            .collect()
    }

    /// The summed half area of the wide nodes the collapse makes from `node` down, and their
    /// count; checks that none has more than `width` children.
    fn collapsed(forest: &Forest, node: NodeRef, width: usize) -> (f64, usize) {
        let n = forest.get(node);
        let children = collapse(n, width, |c| forest.get(c));
        assert!((1..=width).contains(&children.len()));
        let mut sum = (f64::from(half_area(&n.bounds)), 1);
        for &child in children.iter() {
            if forest.get(child).children.is_some() {
                let (area, nodes) = collapsed(forest, child, width);
                sum = (sum.0 + area, sum.1 + nodes);
            }
        }
        sum
    }

    /// The children a wide node at the binary node `node` has where the inner nodes in
    /// `wide` (by their place in `inner`) are wide nodes and the others are opened.
    fn frontier(forest: &Forest, node: NodeRef, inner: &[NodeRef], wide: &[bool]) -> usize {
        let [left, right] = forest.get(node).children.unwrap();
        [left, right]
            .iter()
            .map(|&c| match forest.get(c).children {
                None => 1,
                Some(_) => match inner.iter().position(|&i| i == c) {
                    Some(k) if wide[k] => 1,
                    _ => frontier(forest, c, inner, wide),
                },
            })
            .sum()
    }

    /// The collapse gives the wide tree of least summed node area the binary tree allows,
    /// against every way of choosing which binary inner nodes are wide nodes (the root always
    /// is) on small trees, at both widths, and its sizes count the nodes it writes.
    #[test]
    fn the_collapse_is_the_one_of_least_summed_node_area() {
        let mut opened = 0;
        for (seed, triangles) in [(1, 9), (2, 12), (3, 15), (4, 17), (5, 17), (6, 14)] {
            for width in [4, 8] {
                let mesh = scatter(triangles, seed);
                let splitter = Splitter {
                    leaf_size: 1,
                    split: BvhSplit::Sah,
                    width,
                };
                let (forest, _) = binary_here(&mesh, splitter);
                let mut inner = vec![forest.root];
                let mut k = 0;
                while k < inner.len() {
                    for c in forest.get(inner[k]).children.unwrap() {
                        if forest.get(c).children.is_some() {
                            inner.push(c);
                        }
                    }
                    k += 1;
                }
                assert!(
                    inner.len() >= 8 && inner.len() <= 16,
                    "{} inner",
                    inner.len()
                );
                let mut best = f64::INFINITY;
                for choice in 0u32..1 << (inner.len() - 1) {
                    let wide: Vec<bool> = (0..inner.len())
                        .map(|k| k == 0 || choice >> (k - 1) & 1 == 1)
                        .collect();
                    let fits = (0..inner.len())
                        .filter(|&k| wide[k])
                        .all(|k| frontier(&forest, inner[k], &inner, &wide) <= width);
                    if fits {
                        let area = (0..inner.len())
                            .filter(|&k| wide[k])
                            .map(|k| f64::from(half_area(&forest.get(inner[k]).bounds)))
                            .sum::<f64>();
                        best = best.min(area);
                    }
                }
                let (area, nodes) = collapsed(&forest, forest.root, width);
                assert!(
                    (area - best).abs() <= best * 1e-5,
                    "seed {seed}, width {width}: {area} against {best}"
                );
                assert_eq!(nodes, forest.get(forest.root).size.nodes);
                opened += usize::from(nodes < inner.len());
            }
        }
        assert!(
            opened >= 6,
            "the collapse opened inner nodes in {opened} trees"
        );
    }

    /// Meshes of a few large triangles and clusters of tiny ones, scales 10⁵–10⁷ apart: a
    /// large node's cost swallows a small one's differences in floats. Every node's count of
    /// the wide nodes below it is what the collapse makes, and the public build succeeds
    /// (seed 48 once made fewer nodes than counted, and the build panicked).
    #[test]
    fn node_counts_hold_where_scales_differ_by_millions() {
        fn mesh(seed: u64) -> Vec<Triangle> {
            let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32
            };
            let large = 1 + (next() * 6.0) as usize;
            let clusters = 1 + (next() * 8.0) as usize;
            let scale = [1.0e3f32, 1.0e4, 3.0e2][(next() * 3.0) as usize % 3];
            let small = [0.01f32, 0.1, 0.001][(next() * 3.0) as usize % 3];
            let mut out = Vec::new();
            for _ in 0..large {
                let mut p = || Vec3::new(next(), next(), next()) * scale;
                out.push(Triangle { v: [p(), p(), p()] });
            }
            for _ in 0..clusters {
                let c = Vec3::new(next(), next(), next()) * scale;
                for _ in 0..1 + (next() * 12.0) as usize {
                    let o = c + Vec3::new(next(), next(), next()) * (small * 10.0);
                    let mut d = || o + Vec3::new(next(), next(), next()) * small;
                    out.push(Triangle { v: [d(), d(), d()] });
                }
            }
            out
        }
        /// The wide nodes the collapse makes from `node` down; checks each node's count.
        fn made(forest: &Forest, node: NodeRef, width: usize) -> usize {
            let n = forest.get(node);
            let mut total = 1;
            for &c in collapse(n, width, |c| forest.get(c)).iter() {
                if forest.get(c).children.is_some() {
                    total += made(forest, c, width);
                }
            }
            assert_eq!(total, n.size.nodes, "counted against made");
            total
        }
        for seed in (0..60).chain([48]) {
            let triangles = mesh(seed);
            for (width, leaf_size) in [(8, 2), (8, 1), (4, 2)] {
                let splitter = Splitter {
                    leaf_size,
                    split: BvhSplit::Sah,
                    width,
                };
                let (forest, _) = binary_here(&triangles, splitter);
                if forest.get(forest.root).children.is_some() {
                    made(&forest, forest.root, width);
                }
            }
            let settings = crate::bvh::BvhSettings {
                leaf_size: 2,
                ..Default::default()
            };
            let bvh = super::super::WideBvh::build_with_width(&triangles, settings, Width::Eight);
            assert_eq!(bvh.stats().triangles, triangles.len());
        }
    }

    /// Geometry of no area at all (segments along one line): every choice costs the same, and
    /// the collapse takes the one of fewest wide nodes, as full as on any other mesh, rather
    /// than one wide node per binary node.
    #[test]
    fn geometry_of_no_area_is_collapsed_into_full_nodes() {
        let triangles: Vec<Triangle> = (0..1000)
            .map(|i| {
                let x = (i * 7919 % 1000) as f32;
                let p = |dx: f32| Vec3::new(x + dx, 0.0, 0.0);
                Triangle {
                    v: [p(0.0), p(0.5), p(0.25)],
                }
            })
            .collect();
        for width in [Width::Four, Width::Eight] {
            let bvh = super::super::WideBvh::build_with_width(
                &triangles,
                crate::bvh::BvhSettings::default(),
                width,
            );
            let stats = bvh.stats();
            assert_eq!(stats.triangles, triangles.len());
            let children = (stats.nodes + stats.leaves - 1) as f64 / stats.nodes as f64;
            assert!(
                children >= 0.75 * f64::from(stats.children),
                "{} nodes for {} leaves at width {}: {children:.2} children a node",
                stats.nodes,
                stats.leaves,
                stats.children
            );
        }
    }
}
