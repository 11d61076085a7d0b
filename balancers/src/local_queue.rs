//! The worker-local queue that keeps spawned tasks on the worker that spawned them.

use std::collections::VecDeque;

use crate::balancer::{Spawn, Stop, TaskRunner};
use crate::order::Order;

/// Tasks a worker has spawned and not yet run, taken newest first or oldest first as its
/// [`Order`] says.
///
/// Owned by one worker and never shared, so pushes and pops are plain ring-buffer operations.
/// Newest first walks each spawned subtree depth-first: the queue holds the children of one
/// initial task plus, per level of depth, the siblings still waiting, never a whole generation
/// of the run. Oldest first holds a whole generation of the worker's share.
///
/// ```
/// use balancers::{LocalQueue, Order, Spawn};
///
/// let mut queue = LocalQueue::new(Order::DepthFirst);
/// queue.spawn(1);
/// queue.spawn(2);
/// assert_eq!(queue.pop(), Some(2), "newest first");
/// let mut queue = LocalQueue::new(Order::BreadthFirst);
/// queue.spawn(1);
/// queue.spawn(2);
/// assert_eq!(queue.pop(), Some(1), "oldest first");
/// assert_eq!((queue.pushed(), queue.peak()), (2, 2));
/// ```
#[derive(Debug)]
pub struct LocalQueue<T> {
    tasks: VecDeque<T>,
    order: Order,
    pushed: u64,
    peak: usize,
}

/// Starting capacity. The queue grows (by doubling) to the most a worker ever holds at once,
/// depth-first typically the children of one tile's camera rays (a 32×32 tile can spawn
/// 2,048), and then stops allocating: spawning costs no allocation once the first tiles have
/// run.
pub(crate) const INITIAL_CAPACITY: usize = 1024;

impl<T> LocalQueue<T> {
    /// An empty queue, taken from as `order` says.
    pub fn new(order: Order) -> Self {
        Self {
            tasks: VecDeque::with_capacity(INITIAL_CAPACITY),
            order,
            pushed: 0,
            peak: 0,
        }
    }

    /// The next task to run: the newest (depth-first) or the oldest (breadth-first).
    pub fn pop(&mut self) -> Option<T> {
        match self.order {
            Order::DepthFirst => self.tasks.pop_back(),
            Order::BreadthFirst => self.tasks.pop_front(),
        }
    }

    /// Tasks pushed so far.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The most tasks this queue has held at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Runs the initial task `task` and, depth-first, everything it spawns; breadth-first,
    /// its children wait until [`drain`](Self::drain), after the worker's other initial
    /// tasks. Returns how many tasks ran. Used by the balancers whose spawned tasks never
    /// leave their worker. `task` itself runs whatever `stop` says: look at it before calling
    /// (the tasks it spawns are run only while no stop is requested).
    pub fn run_initial<R: TaskRunner<T>>(
        &mut self,
        task: T,
        runner: &R,
        local: &mut R::Local,
        stop: &Stop,
    ) -> u64 {
        runner.run(task, local, self);
        match self.order {
            Order::DepthFirst => 1 + self.drain(runner, local, stop),
            Order::BreadthFirst => 1,
        }
    }

    /// Runs everything in the queue until it is empty, or until `stop` is requested (what is
    /// left is dropped with the run); returns how many tasks ran.
    pub fn drain<R: TaskRunner<T>>(
        &mut self,
        runner: &R,
        local: &mut R::Local,
        stop: &Stop,
    ) -> u64 {
        let mut ran = 0;
        while let Some(next) = self.pop() {
            if stop.requested() {
                break;
            }
            runner.run(next, local, self);
            ran += 1;
        }
        ran
    }
}

impl<T> Spawn<T> for LocalQueue<T> {
    fn spawn(&mut self, task: T) {
        self.tasks.push_back(task);
        self.pushed += 1;
        self.peak = self.peak.max(self.tasks.len());
    }
}
