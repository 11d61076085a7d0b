//! The wide tree written from the binary one: each wide node's children are its binary node's
//! [`collapse`], its nodes in pre-order, a leaf's triangles and packs where the walk meets it.
//!
//! Every binary node knows what its wide subtree fills ([`Size`]), so a wide node knows where
//! each child's subtree goes before writing any of it. On more than one worker, a wide subtree
//! over more than [`PARALLEL_THRESHOLD`] triangles is a task that writes its own node and its
//! leaves, and spawns one task for each inner child; a smaller one writes its whole subtree. The
//! output is the same, byte for byte, as one [`Writer`] walking the whole tree.

use std::num::NonZeroUsize;

use balancers::{Balancer, Spawn, SpawnError, TaskRunner};

use crate::geometry::{Aabb, Triangle};

use super::super::{EMPTY, LANES, Nodes, TrianglePack, WideNode};
use super::shared::Shared;
use super::tasks::BALANCER;
use super::{BinaryNode, Built, Children, Forest, NodeRef, PARALLEL_THRESHOLD, Size, collapse};

/// The wide tree, `W` children per node, over the binary tree `forest`, whose leaves'
/// records are the triangles `ids` (indices into `input`) in order; boxes grown by `padding`.
/// On `workers` workers, where given.
///
/// # Errors
/// When the operating system refuses to start a worker.
pub(super) fn wide<const W: usize>(
    forest: &Forest,
    input: &[Triangle],
    ids: &[u32],
    padding: f32,
    workers: Option<NonZeroUsize>,
) -> Result<Emitted<W>, SpawnError> {
    // The sizes that place every subtree were counted for this width: the parts of the tasks
    // below are disjoint only if they are exact.
    assert_eq!(
        forest.width, W,
        "the binary tree's sizes are for {W} children a node"
    );
    let (children, size) = forest.root_children(W);
    let mut out = Emitted {
        nodes: bytemuck::zeroed_vec(size.nodes),
        triangles: bytemuck::zeroed_vec(ids.len()),
        packs: bytemuck::zeroed_vec(size.packs),
        ids: bytemuck::zeroed_vec(ids.len()),
        figures: Figures::default(),
        padding,
    };
    let source = Source {
        forest,
        input,
        ids,
        padding,
    };
    let output = Output {
        nodes: Shared::new(&mut out.nodes),
        packs: Shared::new(&mut out.packs),
        triangles: Shared::new(&mut out.triangles),
        ids: Shared::new(&mut out.ids),
    };
    let figures = match workers {
        None => {
            // SAFETY: the whole output, to this one writer alone.
            let mut writer = unsafe { output.writer(&source, Offsets::default(), size, ids.len()) };
            writer.node(&children, 1);
            writer.finish()
        }
        Some(workers) => {
            let root = EmitTask {
                node: forest.root,
                depth: 1,
                at: Offsets::default(),
            };
            let run = WideRun { source, output };
            let outcome = BALANCER.run(workers, &[root], &run)?;
            outcome
                .locals
                .into_iter()
                .fold(Figures::default(), Figures::merge)
        }
    };
    out.figures = figures;
    Ok(out)
}

/// The wide tree as written.
pub(super) struct Emitted<const W: usize> {
    nodes: Vec<WideNode<W>>,
    triangles: Vec<Triangle>,
    packs: Vec<TrianglePack>,
    ids: Vec<u32>,
    figures: Figures,
    padding: f32,
}

impl<const W: usize> Emitted<W> {
    /// The finished tree, its nodes wrapped by `nodes`, over triangles bounded by `bounds`.
    pub(super) fn built(self, nodes: fn(Vec<WideNode<W>>) -> Nodes, bounds: Aabb) -> Built {
        Built {
            node_bytes: self.nodes.len() * size_of::<WideNode<W>>(),
            nodes: nodes(self.nodes),
            triangles: self.triangles,
            packs: self.packs,
            ids: self.ids,
            leaves: self.figures.leaves,
            depth: self.figures.depth,
            max_leaf_triangles: self.figures.max_leaf_triangles,
            padding: self.padding,
            bounds,
        }
    }
}

/// Counts over the leaves and nodes written.
#[derive(Clone, Copy, Debug, Default)]
struct Figures {
    leaves: usize,
    /// The deepest wide node (the root at 1).
    depth: u32,
    max_leaf_triangles: u32,
}

impl Figures {
    fn merge(self, other: Self) -> Self {
        Self {
            leaves: self.leaves + other.leaves,
            depth: self.depth.max(other.depth),
            max_leaf_triangles: self.max_leaf_triangles.max(other.max_leaf_triangles),
        }
    }
}

/// Where a wide subtree's nodes, packs and triangles start in the output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Offsets {
    node: usize,
    pack: usize,
    triangle: usize,
}

impl Offsets {
    /// Just after a subtree that starts here and fills `size` and `triangles`.
    fn after(self, size: Size, triangles: usize) -> Self {
        Self {
            node: self.node + size.nodes,
            pack: self.pack + size.packs,
            triangle: self.triangle + triangles,
        }
    }
}

/// What the wide tree is written from.
struct Source<'a> {
    forest: &'a Forest,
    input: &'a [Triangle],
    /// The leaves' triangles, as indices into `input`, in record order.
    ids: &'a [u32],
    padding: f32,
}

/// The output arrays, lent to the writers.
struct Output<'a, const W: usize> {
    nodes: Shared<'a, WideNode<W>>,
    packs: Shared<'a, TrianglePack>,
    triangles: Shared<'a, Triangle>,
    ids: Shared<'a, u32>,
}

impl<const W: usize> Output<'_, W> {
    /// A writer of the subtree that starts at `at` and fills `size` and `triangles`.
    ///
    /// # Safety
    /// No other writer of any part of that subtree may be in use while this one lives.
    unsafe fn writer<'s>(
        &'s self,
        source: &'s Source<'s>,
        at: Offsets,
        size: Size,
        triangles: usize,
    ) -> Writer<'s, W> {
        let end = at.after(size, triangles);
        // SAFETY: the parts are the subtree's, which the caller gives this writer alone.
        unsafe {
            Writer {
                source,
                at,
                end,
                cursor: at,
                nodes: self.nodes.part(at.node..end.node),
                packs: self.packs.part(at.pack..end.pack),
                triangles: self.triangles.part(at.triangle..end.triangle),
                ids: self.ids.part(at.triangle..end.triangle),
                figures: Figures::default(),
            }
        }
    }
}

/// Writes one wide subtree into its parts of the output, in pre-order.
struct Writer<'a, const W: usize> {
    source: &'a Source<'a>,
    /// Where the parts start and end in the whole output, and how far they are written.
    at: Offsets,
    end: Offsets,
    cursor: Offsets,
    nodes: &'a mut [WideNode<W>],
    packs: &'a mut [TrianglePack],
    triangles: &'a mut [Triangle],
    ids: &'a mut [u32],
    figures: Figures,
}

impl<const W: usize> Writer<'_, W> {
    /// Writes the wide node whose children are `children`, at depth `depth`, and everything
    /// below it; returns its index.
    fn node(&mut self, children: &[NodeRef], depth: u32) -> u32 {
        let index = self.cursor.node;
        self.cursor.node += 1;
        self.figures.depth = self.figures.depth.max(depth);
        let mut node = WideNode::EMPTY;
        for (lane, &c) in children.iter().enumerate() {
            let child = self.source.forest.get(c);
            let reference = match child.children {
                None => self.leaf(child),
                Some(_) => {
                    let grandchildren = collapse(child, W, |n| self.source.forest.get(n));
                    self.node(&grandchildren, depth + 1)
                }
            };
            node.set_child(lane, child, reference, self.source.padding);
        }
        self.nodes[index - self.at.node] = node;
        index as u32
    }

    /// Writes the triangles and packs of `leaf`; returns the index of its first pack.
    fn leaf(&mut self, leaf: &BinaryNode) -> u32 {
        let first_pack = self.cursor.pack;
        let first = self.cursor.triangle;
        let n = leaf.range().len();
        let at = self.at;
        let local = first - at.triangle..first - at.triangle + n;
        for (k, &i) in local.clone().zip(&self.source.ids[leaf.range()]) {
            self.triangles[k] = self.source.input[i as usize];
            self.ids[k] = i;
        }
        let triangles = &self.triangles[local.clone()];
        for (p, start) in (0..n).step_by(LANES).enumerate() {
            let end = (start + LANES).min(n);
            self.packs[first_pack - at.pack + p] = TrianglePack::new(
                &triangles[start..end],
                (first + start) as u32,
                self.source.padding,
            );
        }
        self.cursor.pack += n.div_ceil(LANES);
        self.cursor.triangle += n;
        self.figures.leaves += 1;
        self.figures.max_leaf_triangles = self.figures.max_leaf_triangles.max(n as u32);
        first_pack as u32
    }

    /// The figures of what was written, once it is all written.
    ///
    /// # Panics
    /// When the subtree did not fill exactly its parts: its sizes were wrong.
    fn finish(self) -> Figures {
        assert_eq!(
            self.cursor, self.end,
            "a wide subtree fills what its size says"
        );
        self.figures
    }
}

impl<const W: usize> WideNode<W> {
    /// No children: every slot unused.
    const EMPTY: Self = Self {
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
    };

    /// Puts `child` in slot `lane`: its box grown by `padding`, and `reference`, a node's
    /// index or a leaf's first pack.
    fn set_child(&mut self, lane: usize, child: &BinaryNode, reference: u32, padding: f32) {
        let b = child.bounds.padded(padding);
        for axis in 0..3 {
            self.planes[2 * axis][lane] = b.min[axis];
            self.planes[2 * axis + 1][lane] = b.max[axis];
        }
        self.child[lane] = reference;
        self.count[lane] = match child.children {
            None => child.range().len() as u32,
            Some(_) => 0,
        };
    }
}

/// A wide subtree to write: the one of binary node `node` (the wide root's children where it
/// is the forest's root), at depth `depth`, starting at `at`.
#[derive(Clone, Copy, Debug)]
struct EmitTask {
    node: NodeRef,
    depth: u32,
    at: Offsets,
}

/// The wide tree written by tasks.
struct WideRun<'a, const W: usize> {
    source: Source<'a>,
    output: Output<'a, W>,
}

impl<const W: usize> TaskRunner<EmitTask> for WideRun<'_, W> {
    type Local = Figures;

    fn local(&self, _worker: usize) -> Figures {
        Figures::default()
    }

    fn run<S: Spawn<EmitTask>>(&self, task: EmitTask, figures: &mut Figures, spawn: &mut S) {
        let forest = self.source.forest;
        let (children, size) = if task.node == forest.root {
            forest.root_children(W)
        } else {
            let node = forest.get(task.node);
            (collapse(node, W, |n| forest.get(n)), node.size)
        };
        let triangles = forest.get(task.node).range().len();
        if triangles <= PARALLEL_THRESHOLD {
            // SAFETY: the subtree's parts are this task's alone: the root's task has the whole
            // output, and a task gives each inner child's subtree, at its own offsets after the
            // subtrees before it, to one task and writes none of it.
            let mut writer = unsafe { self.output.writer(&self.source, task.at, size, triangles) };
            writer.node(&children, task.depth);
            *figures = figures.merge(writer.finish());
            return;
        }
        *figures = figures.merge(self.split(task, &children, size, spawn));
    }
}

impl<const W: usize> WideRun<'_, W> {
    /// Writes the wide node of `task`, whose children are `children` and whose subtree fills
    /// `size`, and its leaves; spawns a task for each inner child.
    ///
    /// # Panics
    /// When the children's parts do not end where the subtree's does: then a child's part
    /// would reach into the next subtree's, and it is refused before any task writes it.
    fn split<S: Spawn<EmitTask>>(
        &self,
        task: EmitTask,
        children: &Children,
        size: Size,
        spawn: &mut S,
    ) -> Figures {
        let forest = self.source.forest;
        let mut end = Offsets {
            node: task.at.node + 1,
            ..task.at
        };
        for &c in children.iter() {
            let child = forest.get(c);
            end = end.after(child.size, child.range().len());
        }
        let triangles = forest.get(task.node).range().len();
        assert_eq!(
            end,
            task.at.after(size, triangles),
            "children fill their parent's part"
        );
        let mut figures = Figures {
            depth: task.depth,
            ..Figures::default()
        };
        let mut node = WideNode::EMPTY;
        let mut next = Offsets {
            node: task.at.node + 1,
            ..task.at
        };
        for (lane, &c) in children.iter().enumerate() {
            let child = forest.get(c);
            let triangles = child.range().len();
            let reference = match child.children {
                None => {
                    let size = Size {
                        nodes: 0,
                        packs: child.size.packs,
                    };
                    // SAFETY: the leaf's parts, after the subtrees before it in this task's
                    // own, written by no other task.
                    let mut writer =
                        unsafe { self.output.writer(&self.source, next, size, triangles) };
                    let first = writer.leaf(child);
                    figures = figures.merge(writer.finish());
                    first
                }
                Some(_) => {
                    spawn.spawn(EmitTask {
                        node: c,
                        depth: task.depth + 1,
                        at: next,
                    });
                    next.node as u32
                }
            };
            node.set_child(lane, child, reference, self.source.padding);
            next = next.after(child.size, triangles);
        }
        // SAFETY: the task's own node, the first of its subtree's, written by no other task
        // (the children's parts were checked above to end where the subtree's part ends).
        let slot = unsafe { self.output.nodes.part(task.at.node..task.at.node + 1) };
        slot[0] = node;
        figures
    }
}
