//! The whole build on raylb's own work-stealing balancer ([`WorkStealing`]), in one run.
//!
//! The run starts with one task per chunk of triangles, each writing those triangles' records;
//! the last of them to finish spawns the root's cut: for a binned (SAH) root, up to one task
//! a worker, each binning a part of at least [`ROOT_BIN_PART`] of its records, the last of
//! which cuts it by all the bins (the cut one task binning them all makes, as it does for a
//! small mesh's root). Any other node of more than [`task_size`] triangles is a task that
//! cuts its records in two and spawns a task for each half; a smaller one builds its whole
//! subtree into its worker's [`Arena`]. Each task hands in what it did (a [`Piece`]) and the
//! last one puts the top of the tree together from the pieces, by the ranges of records they
//! cover (the same tree whichever worker built which piece), and spawns the wide tree's
//! writing ([`emit::Stage`]) into the same run: the workers started for the binary tree write
//! the wide one, with no second start.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::sync::{Mutex, OnceLock, PoisonError};

use balancers::{
    Assignment, Balancer, DequeKind, Order, Spawn, SpawnError, StealAmount, TaskRunner,
    VictimPolicy, WorkStealing,
};

use crate::geometry::{Aabb, Triangle};

use super::binned::{Binning, Bins, Cut, Extent, OctantStep, Record, Splitter};
use super::emit::{self, EmitTask, Emitted, Figures};
use super::shared::Shared;
use super::{Arena, BinaryNode, Forest, NodeRef, emit_task_size, leaf_order, task_size};

/// Triangles whose records one task writes: enough that a chunk takes far longer than taking
/// it (tens of microseconds), few enough that a mesh of a few thousand triangles is shared.
const RECORD_CHUNK: usize = 2048;

/// The fewest of the root's records one task bins: the root is binned in up to one part a
/// worker, each at least this large. Every other node is cut by one task, but the root is cut
/// while the other workers have nothing else to do (BENCHMARKS.md: 47 µs of a cow's 720 µs
/// build on two workers).
const ROOT_BIN_PART: usize = 2048;

// A root binned in parts (at least two) is never small enough to be built by one task.
const _: () = assert!(2 * ROOT_BIN_PART > super::LARGEST_TASK);

/// The balancer of the build: oldest tasks stolen one at a time (the oldest are the largest
/// nodes, each worth a steal of its own), newest run first by their owner (depth first, so
/// that a worker goes on with the records it has just cut, still in its cache).
pub(super) const BALANCER: WorkStealing = WorkStealing {
    deque: DequeKind::Abp,
    victim: VictimPolicy::Random,
    amount: StealAmount::One,
    assignment: Assignment::Interleaved,
    order: Order::DepthFirst,
};

/// The wide tree over `triangles`, `W` children a node, built on `workers` workers, and the
/// bounds of the triangles.
///
/// # Errors
/// When the operating system refuses to start a worker.
pub(super) fn build_on<const W: usize>(
    triangles: &[Triangle],
    splitter: Splitter,
    workers: NonZeroUsize,
) -> Result<(Emitted<W>, Aabb), SpawnError> {
    let n = triangles.len();
    // Zeroed memory from the allocator, its pages first touched by the tasks that write them.
    let mut records: Vec<Record> = bytemuck::zeroed_vec(n);
    let chunks: Vec<BuildTask> = (0..n)
        .step_by(RECORD_CHUNK)
        .map(|start| BuildTask::Records(start..(start + RECORD_CHUNK).min(n)))
        .collect();
    let build = TreeBuild::<W> {
        triangles,
        splitter,
        records: Shared::new(&mut records),
        chunks: Mutex::new(Chunks {
            left: chunks.len(),
            extent: Extent::EMPTY,
        }),
        handed_in: Mutex::new(HandedIn::default()),
        root_bins: Mutex::new(None),
        arenas: (0..workers.get()).map(|_| Mutex::new(Vec::new())).collect(),
        workers: workers.get(),
        task_size: task_size(n, workers),
        stage: OnceLock::new(),
    };
    let outcome = BALANCER.run(workers, &chunks, &build)?;
    let figures = outcome
        .locals
        .into_iter()
        .map(|(_, figures)| figures)
        .fold(Figures::default(), Figures::merge);
    let stage = build
        .stage
        .into_inner()
        .expect("the last binary task starts the wide tree's stage");
    Ok(stage.finish(figures))
}

/// What the binary tree's tasks have handed in: their pieces, and how many of them are still
/// to run.
#[derive(Default)]
struct HandedIn {
    pieces: Vec<Piece>,
    /// Node tasks spawned and not yet handed in.
    open: usize,
}

/// The top of the tree as the tasks cut it: the nodes they split, by their records, and the
/// subtrees they built, by their first record.
struct Top<'a> {
    inners: &'a HashMap<(usize, usize), (usize, Aabb)>,
    subtrees: &'a HashMap<usize, NodeRef>,
    width: usize,
}

impl Top<'_> {
    /// The subtree over the records `range`, its top nodes added to the forest's last arena.
    fn assemble(&self, range: Range<usize>, forest: &mut Forest) -> NodeRef {
        let Some(&(mid, bounds)) = self.inners.get(&(range.start, range.end)) else {
            return *self
                .subtrees
                .get(&range.start)
                .expect("every node of the tree is built by one task");
        };
        let children = [
            self.assemble(range.start..mid, forest),
            self.assemble(mid..range.end, forest),
        ];
        let node = BinaryNode::inner(bounds, range, children, self.width, |n| forest.get(n));
        let top = forest.arenas.len() - 1;
        forest.arenas[top].push(node);
        NodeRef {
            arena: top as u32,
            index: forest.arenas[top].len() as u32 - 1,
        }
    }
}

/// A task of the build.
#[derive(Clone, Debug)]
enum BuildTask {
    /// Write the records of these triangles.
    Records(Range<usize>),
    /// Split a node.
    Node(NodeTask),
    /// Bin these of the root's records, by `binning`, towards its cut ([`RootBinning`]).
    RootBins {
        records: Range<usize>,
        binning: Binning,
    },
    /// Write (part of) the wide tree.
    Emit(EmitTask),
}

/// A node to split: the records `range`, spanning `extent`, at depth `depth`; `octant`, where
/// an octant split is in its steps.
#[derive(Clone, Debug)]
struct NodeTask {
    range: Range<usize>,
    depth: u32,
    octant: Option<OctantStep>,
    extent: Extent,
}

/// What a node task did, to hand in. (Made and matched on one task's stack, never stored:
/// the size of its larger variant costs nothing.)
#[allow(clippy::large_enum_variant)]
enum NodeDone {
    /// Cut the node (`piece`) into `halves`, to spawn.
    Cut { piece: Piece, halves: [NodeTask; 2] },
    /// Built the whole subtree over records from `start` into its worker's arena, rooted at
    /// `root`.
    Built { start: usize, root: NodeRef },
}

/// What a task did.
enum Piece {
    /// Cut a node: its records `range` went to children over `range.start..mid` and
    /// `mid..range.end`, built by other tasks.
    Inner {
        range: Range<usize>,
        mid: usize,
        bounds: Aabb,
    },
    /// Built a whole subtree, over records from `start`, rooted at `root`.
    Subtree { start: usize, root: NodeRef },
}

/// The root's bins as its parts hand them in, and how many parts are still to: the last part
/// to hand in cuts the root.
struct RootBinning {
    extent: Extent,
    bins: Bins,
    left: usize,
}

/// The chunks of records not yet written, and what the written ones span.
struct Chunks {
    left: usize,
    extent: Extent,
}

/// The build's shared state: the input, the records, the chunk count, what the binary tree's
/// tasks have handed in, and, once it is whole, the wide tree's stage.
struct TreeBuild<'a, const W: usize> {
    triangles: &'a [Triangle],
    splitter: Splitter,
    records: Shared<'a, Record>,
    chunks: Mutex<Chunks>,
    handed_in: Mutex<HandedIn>,
    /// The root's binning, while it is binned in parts.
    root_bins: Mutex<Option<RootBinning>>,
    /// Each worker's arena: the nodes of the subtrees it built, arena `k` of the forest being
    /// worker `k`'s. Only its worker takes its lock while the binary tree is built, and the
    /// last binary task takes them all once every other has handed in.
    arenas: Vec<Mutex<Vec<BinaryNode>>>,
    /// Workers of the run.
    workers: usize,
    /// Up to how many triangles a binary subtree is built by one task (its wide subtree is
    /// written by tasks of [`emit_task_size`] of them).
    task_size: usize,
    stage: OnceLock<emit::Stage<W>>,
}

impl<const W: usize> TaskRunner<BuildTask> for TreeBuild<'_, W> {
    /// The worker's number, and what its wide-tree tasks wrote.
    type Local = (usize, Figures);

    fn local(&self, worker: usize) -> (usize, Figures) {
        (worker, Figures::default())
    }

    fn run<S: Spawn<BuildTask>>(
        &self,
        task: BuildTask,
        (worker, figures): &mut (usize, Figures),
        spawn: &mut S,
    ) {
        match task {
            BuildTask::Records(range) => self.write_records(range, spawn),
            BuildTask::Node(node) => self.split_node(node, *worker, spawn),
            BuildTask::RootBins { records, binning } => {
                self.bin_root_part(records, &binning, *worker, spawn);
            }
            BuildTask::Emit(task) => {
                let stage = self
                    .stage
                    .get()
                    .expect("wide-tree tasks are spawned once the stage is set");
                stage.run(self.triangles, task, figures, &mut EmitSpawn(spawn));
            }
        }
    }
}

/// The wide tree's tasks spawned as the build's.
struct EmitSpawn<'s, S>(&'s mut S);

impl<S: Spawn<BuildTask>> Spawn<EmitTask> for EmitSpawn<'_, S> {
    fn spawn(&mut self, task: EmitTask) {
        self.0.spawn(BuildTask::Emit(task));
    }
}

impl<const W: usize> TreeBuild<'_, W> {
    /// Writes the records of `range`; the last chunk to be written spawns the root.
    fn write_records<S: Spawn<BuildTask>>(&self, range: Range<usize>, spawn: &mut S) {
        // SAFETY: chunks do not overlap, so these records are this task's alone; and no task
        // reads a record before the root's cut is spawned, once every chunk is written.
        let records = unsafe { self.records.part(range.clone()) };
        let mut extent = Extent::EMPTY;
        for (record, i) in records.iter_mut().zip(range) {
            *record = Record::new(&self.triangles[i], i as u32);
            extent.add(record);
        }
        // The lock orders every chunk's records before the root: each task writes its records
        // before it takes the lock, and the last takes it after all the others let it go.
        let mut chunks = self.chunks.lock().unwrap_or_else(PoisonError::into_inner);
        chunks.extent.merge(&extent);
        chunks.left -= 1;
        if chunks.left == 0 {
            self.handed_in
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .open = 1;
            self.spawn_root(
                NodeTask {
                    range: 0..self.triangles.len(),
                    depth: 0,
                    octant: None,
                    extent: chunks.extent,
                },
                spawn,
            );
        }
    }

    /// Spawns the root's cut: where the root is large enough to share and is binned, one task
    /// for each part of its records, else one task for the whole node.
    fn spawn_root<S: Spawn<BuildTask>>(&self, root: NodeTask, spawn: &mut S) {
        let n = root.range.len();
        let parts = (n / ROOT_BIN_PART).min(self.workers);
        if parts < 2 || !self.splitter.is_binned(n, root.depth) {
            spawn.spawn(BuildTask::Node(root));
            return;
        }
        let binning = Binning::of(&root.extent);
        *self
            .root_bins
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(RootBinning {
            extent: root.extent,
            bins: Bins::EMPTY,
            left: parts,
        });
        for part in 0..parts {
            spawn.spawn(BuildTask::RootBins {
                records: part * n / parts..(part + 1) * n / parts,
                binning,
            });
        }
    }

    /// Bins the root's records `range` by `binning` and hands the bins in; the last part to
    /// hand in cuts the root by all of them, as one task binning every record would have.
    fn bin_root_part<S: Spawn<BuildTask>>(
        &self,
        range: Range<usize>,
        binning: &Binning,
        worker: usize,
        spawn: &mut S,
    ) {
        // SAFETY: every record was written before the parts were spawned (`write_records`),
        // and the parts do not overlap; no task takes the records as a whole before every
        // part has handed in (below), and no other task runs meanwhile.
        let records = unsafe { self.records.part(range) };
        let mut part = Bins::EMPTY;
        part.add(records, binning);
        let mut guard = self
            .root_bins
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let binned = guard
            .as_mut()
            .expect("the root's binning is set before its parts are spawned");
        binned.bins.merge(&part);
        binned.left -= 1;
        if binned.left > 0 {
            return;
        }
        let RootBinning {
            extent, bins: all, ..
        } = guard.take().expect("checked above");
        drop(guard);
        let n = self.triangles.len();
        // SAFETY: every part handed in under the lock this task took last, and read its
        // records before: they are this task's alone.
        let records = unsafe { self.records.part(0..n) };
        let cut = self
            .splitter
            .cut_by(records, all.best_split(binning, &extent));
        let done = self.cut_done(cut, 0..n, 0, &extent, worker);
        self.hand_in(done, spawn);
    }

    /// Cuts the node's records in two and spawns both halves, or, for a small node, builds
    /// its whole subtree; then hands in what it did.
    fn split_node<S: Spawn<BuildTask>>(&self, node: NodeTask, worker: usize, spawn: &mut S) {
        let NodeTask {
            range,
            depth,
            octant,
            extent,
        } = node;
        // SAFETY: every record was written before the root's cut was spawned
        // (`write_records`), and the range is this task's alone: the root's is all records
        // (where the root was binned in parts, its last part spawned its halves once every part
        // had handed in), and a task hands each half of its range to one child and touches it
        // no more, so the ranges of the tasks that may run at once never overlap.
        let records = unsafe { self.records.part(range.clone()) };
        let start = range.start;
        let done = if records.len() <= self.task_size {
            let root = self.in_arena(worker, |arena| {
                self.splitter
                    .subtree(records, start, depth, octant, &extent, arena)
            });
            NodeDone::Built { start, root }
        } else {
            let cut = self.splitter.cut(records, depth, octant, &extent);
            self.cut_done(cut, range, depth, &extent, worker)
        };
        self.hand_in(done, spawn);
    }

    /// What cutting the node over the records `range` (spanning `extent`, at depth `depth`)
    /// as `cut` did: a leaf built into worker `worker`'s arena, or two halves to spawn.
    fn cut_done(
        &self,
        cut: Cut,
        range: Range<usize>,
        depth: u32,
        extent: &Extent,
        worker: usize,
    ) -> NodeDone {
        let start = range.start;
        let bounds = extent.bounds.to_aabb();
        match cut {
            Cut::Leaf => {
                let root =
                    self.in_arena(worker, |arena| arena.push(BinaryNode::leaf(bounds, range)));
                NodeDone::Built { start, root }
            }
            Cut::Split {
                mid,
                next,
                left,
                right,
            } => {
                let mid = start + mid;
                let half = |range, extent| NodeTask {
                    range,
                    depth: depth + 1,
                    octant: next,
                    extent,
                };
                NodeDone::Cut {
                    piece: Piece::Inner {
                        range: range.clone(),
                        mid,
                        bounds,
                    },
                    halves: [half(start..mid, left), half(mid..range.end, right)],
                }
            }
        }
    }

    /// Hands in what a node task did: spawns its halves, or, for the last subtree to be
    /// built, starts the wide tree's stage.
    fn hand_in<S: Spawn<BuildTask>>(&self, done: NodeDone, spawn: &mut S) {
        let mut handed_in = self
            .handed_in
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match done {
            NodeDone::Cut { piece, halves } => {
                // Counted before they are spawned, so that no half can be handed in first.
                handed_in.open += 1;
                handed_in.pieces.push(piece);
                drop(handed_in);
                for half in halves {
                    spawn.spawn(BuildTask::Node(half));
                }
            }
            NodeDone::Built { start, root } => {
                handed_in.pieces.push(Piece::Subtree { start, root });
                handed_in.open -= 1;
                if handed_in.open == 0 {
                    // The lock orders every task's hand-in, and its records, before this.
                    let done = std::mem::take(&mut *handed_in);
                    drop(handed_in);
                    self.start_stage(done, spawn);
                }
            }
        }
    }

    /// Runs `build` on worker `worker`'s arena.
    fn in_arena<R>(&self, worker: usize, build: impl FnOnce(&mut Arena) -> R) -> R {
        let mut nodes = self.arenas[worker]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut arena = Arena {
            id: worker as u32,
            nodes: std::mem::take(&mut *nodes),
        };
        let built = build(&mut arena);
        *nodes = arena.nodes;
        built
    }

    /// Puts the binary tree together from what every task handed in, and starts writing the
    /// wide tree from it.
    fn start_stage<S: Spawn<BuildTask>>(&self, done: HandedIn, spawn: &mut S) {
        let n = self.triangles.len();
        let mut inners = HashMap::new();
        let mut subtrees = HashMap::new();
        for piece in done.pieces {
            match piece {
                Piece::Inner { range, mid, bounds } => {
                    inners.insert((range.start, range.end), (mid, bounds));
                }
                Piece::Subtree { start, root } => {
                    subtrees.insert(start, root);
                }
            }
        }
        // Every node task has handed in: no worker builds in its arena any more.
        let arenas = self
            .arenas
            .iter()
            .map(|a| std::mem::take(&mut *a.lock().unwrap_or_else(PoisonError::into_inner)))
            .collect();
        let mut forest = Forest {
            arenas,
            root: NodeRef { arena: 0, index: 0 },
            width: self.splitter.width,
        };
        let top = Top {
            inners: &inners,
            subtrees: &subtrees,
            width: self.splitter.width,
        };
        forest.arenas.push(Vec::new());
        forest.root = top.assemble(0..n, &mut forest);
        // SAFETY: every task that took a part of the records has handed in (under the lock
        // this task took last), and none is left to take one: the records are this task's.
        let records = unsafe { self.records.part(0..n) };
        let (ids, padding) = leaf_order(&forest, records);
        let stage = emit::Stage::<W>::new(forest, ids, padding, emit_task_size(self.task_size));
        let root = stage.root_task();
        assert!(
            self.stage.set(stage).is_ok(),
            "the binary tree is finished once"
        );
        spawn.spawn(BuildTask::Emit(root));
    }
}
