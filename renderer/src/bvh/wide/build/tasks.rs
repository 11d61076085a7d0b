//! The binary tree built on raylb's own work-stealing balancer ([`WorkStealing`]).
//!
//! The run starts with one task per chunk of triangles, each writing those triangles' records;
//! the last of them to finish spawns the root. A node of more than [`PARALLEL_THRESHOLD`]
//! triangles is a task that cuts its records in two and spawns a task for each half; a smaller
//! one builds its whole subtree into its worker's [`Arena`]. Each task leaves what it did with
//! its worker (a [`Piece`]), and the top of the tree is put together from the pieces when the
//! run is over, by the ranges of records they cover: the same tree whichever worker built
//! which piece.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use balancers::{
    Assignment, Balancer, DequeKind, Order, Spawn, SpawnError, StealAmount, TaskRunner,
    VictimPolicy, WorkStealing,
};

use crate::geometry::{Aabb, Triangle};

use super::binned::{Cut, Extent, OctantStep, Record, Splitter};
use super::shared::Shared;
use super::{Arena, BinaryNode, Forest, NodeRef, PARALLEL_THRESHOLD};

/// Triangles whose records one task writes: enough that a chunk takes far longer than taking
/// it (tens of microseconds), few enough that a mesh of a few thousand triangles is shared.
const RECORD_CHUNK: usize = 2048;

/// The balancer of both stages of the build: oldest tasks stolen one at a time (the oldest are
/// the largest nodes, each worth a steal of its own), newest run first by their owner (depth
/// first, so that a worker goes on with the records it has just cut, still in its cache).
pub(super) const BALANCER: WorkStealing = WorkStealing {
    deque: DequeKind::Abp,
    victim: VictimPolicy::Random,
    amount: StealAmount::One,
    assignment: Assignment::Interleaved,
    order: Order::DepthFirst,
};

/// The binary tree over `triangles` built on `workers` workers, and the records in the order
/// its leaves refer to.
///
/// # Errors
/// When the operating system refuses to start a worker.
pub(super) fn binary_on(
    triangles: &[Triangle],
    splitter: Splitter,
    workers: NonZeroUsize,
) -> Result<(Forest, Vec<Record>), SpawnError> {
    let n = triangles.len();
    // Zeroed memory from the allocator, its pages first touched by the tasks that write them.
    let mut records: Vec<Record> = bytemuck::zeroed_vec(n);
    let chunks: Vec<BuildTask> = (0..n)
        .step_by(RECORD_CHUNK)
        .map(|start| BuildTask::Records(start..(start + RECORD_CHUNK).min(n)))
        .collect();
    let build = TreeBuild {
        triangles,
        splitter,
        records: Shared::new(&mut records),
        chunks: Mutex::new(Chunks {
            left: chunks.len(),
            extent: Extent::EMPTY,
        }),
    };
    let outcome = BALANCER.run(workers, &chunks, &build)?;
    let mut inners = HashMap::new();
    let mut subtrees = HashMap::new();
    let mut arenas = Vec::with_capacity(workers.get() + 1);
    for built in outcome.locals {
        for piece in built.pieces {
            match piece {
                Piece::Inner { range, mid, bounds } => {
                    inners.insert((range.start, range.end), (mid, bounds));
                }
                Piece::Subtree { start, root } => {
                    subtrees.insert(start, root);
                }
            }
        }
        arenas.push(built.arena.nodes);
    }
    let mut forest = Forest {
        arenas,
        root: NodeRef { arena: 0, index: 0 },
        width: splitter.width,
    };
    let top = Top {
        inners: &inners,
        subtrees: &subtrees,
        width: splitter.width,
    };
    forest.arenas.push(Vec::new());
    forest.root = top.assemble(0..n, &mut forest);
    Ok((forest, records))
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

/// What one worker built: its pieces, and the nodes of its subtrees.
struct WorkerTrees {
    pieces: Vec<Piece>,
    arena: Arena,
}

/// The chunks of records not yet written, and what the written ones span.
struct Chunks {
    left: usize,
    extent: Extent,
}

/// The build's shared state: the input, the records, and the chunk count.
struct TreeBuild<'a> {
    triangles: &'a [Triangle],
    splitter: Splitter,
    records: Shared<'a, Record>,
    chunks: Mutex<Chunks>,
}

impl TaskRunner<BuildTask> for TreeBuild<'_> {
    type Local = WorkerTrees;

    fn local(&self, worker: usize) -> WorkerTrees {
        WorkerTrees {
            pieces: Vec::new(),
            arena: Arena::new(worker as u32),
        }
    }

    fn run<S: Spawn<BuildTask>>(&self, task: BuildTask, built: &mut WorkerTrees, spawn: &mut S) {
        match task {
            BuildTask::Records(range) => self.write_records(range, spawn),
            BuildTask::Node(node) => self.split_node(node, built, spawn),
        }
    }
}

impl TreeBuild<'_> {
    /// Writes the records of `range`; the last chunk to be written spawns the root.
    fn write_records<S: Spawn<BuildTask>>(&self, range: Range<usize>, spawn: &mut S) {
        // SAFETY: chunks do not overlap, so these records are this task's alone; and no task
        // reads a record before the root is spawned, once every chunk is written.
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
            spawn.spawn(BuildTask::Node(NodeTask {
                range: 0..self.triangles.len(),
                depth: 0,
                octant: None,
                extent: chunks.extent,
            }));
        }
    }

    /// Cuts the node's records in two and spawns both halves, or, for a small node, builds
    /// its whole subtree.
    fn split_node<S: Spawn<BuildTask>>(
        &self,
        node: NodeTask,
        built: &mut WorkerTrees,
        spawn: &mut S,
    ) {
        let NodeTask {
            range,
            depth,
            octant,
            extent,
        } = node;
        // SAFETY: every record was written before the root was spawned (`write_records`), and
        // the range is this task's alone: the root's is all records, and a task hands each half
        // of its range to one child and touches it no more, so the ranges of the tasks that
        // may run at once never overlap.
        let records = unsafe { self.records.part(range.clone()) };
        let start = range.start;
        if records.len() <= PARALLEL_THRESHOLD {
            let root =
                self.splitter
                    .subtree(records, start, depth, octant, &extent, &mut built.arena);
            built.pieces.push(Piece::Subtree { start, root });
            return;
        }
        let bounds = extent.bounds.to_aabb();
        match self.splitter.cut(records, depth, octant, &extent) {
            Cut::Leaf => {
                let root = built.arena.push(BinaryNode::leaf(bounds, range));
                built.pieces.push(Piece::Subtree { start, root });
            }
            Cut::Split {
                mid,
                next,
                left,
                right,
            } => {
                let mid = start + mid;
                spawn.spawn(BuildTask::Node(NodeTask {
                    range: start..mid,
                    depth: depth + 1,
                    octant: next,
                    extent: left,
                }));
                spawn.spawn(BuildTask::Node(NodeTask {
                    range: mid..range.end,
                    depth: depth + 1,
                    octant: next,
                    extent: right,
                }));
                built.pieces.push(Piece::Inner { range, mid, bounds });
            }
        }
    }
}
