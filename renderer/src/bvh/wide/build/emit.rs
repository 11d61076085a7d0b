//! The wide tree written from the binary one: each wide node's children are its binary node's
//! [`collapse`], its nodes in pre-order, a leaf's triangles and packs where the walk meets it.
//!
//! Every binary node knows what its wide subtree fills ([`Size`]), so a wide node knows where
//! each child's subtree goes before writing any of it. On one worker, one [`Writer`] walks the
//! whole tree ([`wide_here`]). On several, the tree is written by tasks of the same run that
//! built the binary tree ([`Stage`], started by that run's last binary task): a wide subtree
//! over more triangles than the stage's task size ([`emit_task_size`](super::emit_task_size))
//! is a task that writes its own node and its leaves, and spawns one task for each inner child;
//! a smaller one writes its whole subtree. The output is the same, byte for byte, either way.

use std::mem::MaybeUninit;

use balancers::Spawn;

use crate::geometry::{Aabb, Triangle};

use super::super::{EMPTY, LANES, Nodes, TrianglePack, WideNode};
use super::shared::Shared;
use super::{BinaryNode, Built, Children, Forest, NodeRef, Size, collapse};

/// The wide tree, `W` children per node, over the binary tree `forest`, whose leaves'
/// records are the triangles `ids` (indices into `input`) in order; boxes grown by `padding`.
/// Written on the calling thread.
pub(super) fn wide_here<const W: usize>(
    forest: &Forest,
    input: &[Triangle],
    ids: &[u32],
    padding: f32,
) -> Emitted<W> {
    let (children, size) = forest.root_children(W);
    let mut out = Unwritten::<W>::new(forest, size, ids.len());
    let source = Source {
        forest,
        input,
        ids,
        padding,
    };
    // SAFETY: the views end with this function, before `out` is used again.
    let output = unsafe { out.views() };
    // SAFETY: the whole output, to this one writer alone.
    let mut writer = unsafe { output.writer(&source, Offsets::default(), size, ids.len()) };
    writer.node(&children, 1);
    let figures = writer.finish();
    // SAFETY: the one writer had the whole of every array and filled its parts exactly
    // (`finish` checked it).
    unsafe { out.written(figures, padding) }
}

/// The wide tree being written by tasks: the binary tree and the leaves' triangles it is
/// written from, and the output, lent to the tasks in disjoint parts.
pub(super) struct Stage<const W: usize> {
    forest: Forest,
    ids: Vec<u32>,
    padding: f32,
    /// Up to how many triangles a wide subtree is written by one task.
    task_size: usize,
    /// The arrays written, at their exact sizes; `output` lends their parts out.
    out: Unwritten<W>,
    /// Views of `out`'s arrays, made once from their buffers (see [`Stage::new`]).
    output: Output<'static, W>,
}

impl<const W: usize> Stage<W> {
    /// The stage that writes the wide tree over `forest`, whose leaves' records are the
    /// triangles `ids` in order; boxes grown by `padding`; subtrees of up to `task_size`
    /// triangles each written by one task.
    pub(super) fn new(forest: Forest, ids: Vec<u32>, padding: f32, task_size: usize) -> Self {
        let (_, size) = forest.root_children(W);
        let mut out = Unwritten::<W>::new(&forest, size, ids.len());
        // SAFETY: `out` moves with the stage (into the build's `OnceLock` and out), which
        // moves the vectors, not their buffers; nothing else touches them while the stage
        // lives, and `finish` ends the views before it reads them. The views are lent out
        // only through `&self`, so no part outlives the stage: the `'static` is never observed.
        let output = unsafe { out.views() };
        Self {
            forest,
            ids,
            padding,
            task_size,
            out,
            output,
        }
    }

    /// The task that writes the whole tree.
    pub(super) fn root_task(&self) -> EmitTask {
        EmitTask {
            node: self.forest.root,
            depth: 1,
            at: Offsets::default(),
        }
    }

    /// Runs `task`, its figures added to `figures`; the inner children it leaves to other
    /// tasks go to `spawn`.
    pub(super) fn run<S: Spawn<EmitTask>>(
        &self,
        input: &[Triangle],
        task: EmitTask,
        figures: &mut Figures,
        spawn: &mut S,
    ) {
        let run = WideRun {
            source: Source {
                forest: &self.forest,
                input,
                ids: &self.ids,
                padding: self.padding,
            },
            output: &self.output,
            task_size: self.task_size,
        };
        *figures = figures.merge(run.run(task, spawn));
    }

    /// The tree written, once every task of the stage has run, with `figures` summed over
    /// them; and the binary tree's bounds.
    pub(super) fn finish(self, figures: Figures) -> (Emitted<W>, Aabb) {
        // The views of the arrays (`output`) end here, unused since the last task.
        let Self {
            forest,
            out,
            padding,
            ..
        } = self;
        // SAFETY: every task of the stage has run, and together they wrote every element:
        // the root's task had the whole of every array, and each task filled its part exactly
        // (its writers' `finish`) or handed the rest to tasks whose parts tile it (`split`).
        let out = unsafe { out.written(figures, padding) };
        (out, forest.get(forest.root).bounds)
    }
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

/// The wide tree's arrays before they are written: allocated at their exact sizes and not
/// touched, so that the pages are first written by the tasks that fill them, in parallel, and
/// nothing is zeroed only to be overwritten.
struct Unwritten<const W: usize> {
    nodes: Vec<MaybeUninit<WideNode<W>>>,
    triangles: Vec<MaybeUninit<Triangle>>,
    packs: Vec<MaybeUninit<TrianglePack>>,
    ids: Vec<MaybeUninit<u32>>,
}

impl<const W: usize> Unwritten<W> {
    /// The arrays of the wide tree over `forest`, which fills `size`, over `triangles`
    /// triangles.
    fn new(forest: &Forest, size: Size, triangles: usize) -> Self {
        // The sizes that place every subtree were counted for this width: the parts the
        // writers take are disjoint, and fill the arrays, only if they are exact.
        assert_eq!(
            forest.width, W,
            "the binary tree's sizes are for {W} children a node"
        );
        let mut unwritten = Self {
            nodes: Box::new_uninit_slice(size.nodes).into_vec(),
            triangles: Box::new_uninit_slice(triangles).into_vec(),
            packs: Box::new_uninit_slice(size.packs).into_vec(),
            ids: Box::new_uninit_slice(triangles).into_vec(),
        };
        // The arrays a traversal reads at random: asked for before they are first written,
        // when the pages they will be given are not chosen yet.
        ask_for_huge_pages(&mut unwritten.nodes);
        ask_for_huge_pages(&mut unwritten.packs);
        unwritten
    }

    /// Views of the arrays, to lend their parts to writers.
    ///
    /// # Safety
    /// Nothing but the views may touch the vectors, nor resize or free them, for all of `'a`.
    /// (The views point at the buffers, taken by `as_mut_ptr`, which makes no reference to
    /// the elements and claims no uniqueness over them, as a `Box` would: they stay valid as
    /// the vectors move.)
    unsafe fn views<'a>(&mut self) -> Output<'a, W> {
        /// A view of `vector`'s buffer.
        ///
        /// # Safety
        /// As `views`.
        unsafe fn view<'a, T>(vector: &mut Vec<T>) -> Shared<'a, T> {
            // SAFETY: the buffer's own elements, kept for `'a` (the caller's guarantee).
            unsafe { Shared::from_raw_parts(vector.as_mut_ptr(), vector.len()) }
        }
        // SAFETY: the caller's guarantee.
        unsafe {
            Output {
                nodes: view(&mut self.nodes),
                packs: view(&mut self.packs),
                triangles: view(&mut self.triangles),
                ids: view(&mut self.ids),
            }
        }
    }

    /// The tree, with the figures of its writers and its padding.
    ///
    /// # Safety
    /// Every element of every array must have been written.
    unsafe fn written(self, figures: Figures, padding: f32) -> Emitted<W> {
        // SAFETY: every element is written (the caller's guarantee). Each vector's length is
        // its capacity (made from a boxed slice), so no boxing below moves its elements.
        unsafe {
            Emitted {
                nodes: self.nodes.into_boxed_slice().assume_init().into_vec(),
                triangles: self.triangles.into_boxed_slice().assume_init().into_vec(),
                packs: self.packs.into_boxed_slice().assume_init().into_vec(),
                ids: self.ids.into_boxed_slice().assume_init().into_vec(),
                figures,
                padding,
            }
        }
    }
}

/// Asks the operating system to back `buffer` with huge pages (2 MiB) where it covers whole
/// ones, on Linux, where transparent huge pages are often given only to memory that asks. A
/// random ray's nodes and packs lie anywhere in tens of megabytes; in 4 KiB pages each of its
/// loads may also wait for the page's translation, which the processor's translation caches
/// hold for only a few megabytes. Where the system gives no huge pages the request changes
/// nothing, and where it fails it is not an error: the pages are the same memory either way.
fn ask_for_huge_pages<T>(buffer: &mut [MaybeUninit<T>]) {
    // Not under Miri, which runs no foreign function.
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        const HUGE: usize = 2 << 20;
        let start = buffer.as_mut_ptr() as usize;
        let end = start + size_of_val(buffer);
        let first = start.next_multiple_of(HUGE);
        if end >= first.saturating_add(HUGE) {
            let len = (end - first) / HUGE * HUGE;
            // SAFETY: [1] `first..first + len` lies inside `buffer`, memory this process owns;
            // [2] `MADV_HUGEPAGE` changes only how that memory is backed, never what it holds.
            let _ = unsafe { libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = buffer;
}

/// Counts over the leaves and nodes written.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Figures {
    leaves: usize,
    /// The deepest wide node (the root at 1).
    depth: u32,
    max_leaf_triangles: u32,
}

impl Figures {
    pub(super) fn merge(self, other: Self) -> Self {
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
    nodes: Shared<'a, MaybeUninit<WideNode<W>>>,
    packs: Shared<'a, MaybeUninit<TrianglePack>>,
    triangles: Shared<'a, MaybeUninit<Triangle>>,
    ids: Shared<'a, MaybeUninit<u32>>,
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
    nodes: &'a mut [MaybeUninit<WideNode<W>>],
    packs: &'a mut [MaybeUninit<TrianglePack>],
    triangles: &'a mut [MaybeUninit<Triangle>],
    ids: &'a mut [MaybeUninit<u32>],
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
        self.nodes[index - self.at.node].write(node);
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
            self.triangles[k].write(self.source.input[i as usize]);
            self.ids[k].write(i);
        }
        for (p, start) in (0..n).step_by(LANES).enumerate() {
            let end = (start + LANES).min(n);
            // Read back from the leaf's triangles just written, in order, rather than from the
            // input again, where they lie scattered.
            let triangles: [Triangle; LANES] = std::array::from_fn(|lane| {
                let k = local.start + (start + lane).min(end - 1);
                // SAFETY: every triangle of the leaf was written just above.
                unsafe { self.triangles[k].assume_init_read() }
            });
            self.packs[first_pack - at.pack + p].write(TrianglePack::new(
                &triangles[..end - start],
                (first + start) as u32,
                self.source.padding,
            ));
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
pub(super) struct EmitTask {
    node: NodeRef,
    depth: u32,
    at: Offsets,
}

/// The wide tree written by tasks: what one task reads and where it writes.
struct WideRun<'a, const W: usize> {
    source: Source<'a>,
    output: &'a Output<'a, W>,
    /// Up to how many triangles a wide subtree is written by this task alone.
    task_size: usize,
}

impl<const W: usize> WideRun<'_, W> {
    /// Writes the wide subtree of `task`, or, where it is large, its own node and leaves,
    /// spawning a task for each inner child; returns the figures of what it wrote.
    fn run<S: Spawn<EmitTask>>(&self, task: EmitTask, spawn: &mut S) -> Figures {
        let forest = self.source.forest;
        let (children, size) = if task.node == forest.root {
            forest.root_children(W)
        } else {
            let node = forest.get(task.node);
            (collapse(node, W, |n| forest.get(n)), node.size)
        };
        let triangles = forest.get(task.node).range().len();
        if triangles <= self.task_size {
            // SAFETY: the subtree's parts are this task's alone: the root's task has the whole
            // output, and a task gives each inner child's subtree, at its own offsets after the
            // subtrees before it, to one task and writes none of it.
            let mut writer = unsafe { self.output.writer(&self.source, task.at, size, triangles) };
            writer.node(&children, task.depth);
            return writer.finish();
        }
        self.split(task, &children, size, spawn)
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
        slot[0].write(node);
        figures
    }
}
