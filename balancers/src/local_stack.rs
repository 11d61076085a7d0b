//! The worker-local LIFO that keeps spawned tasks on the worker that spawned them.

use crate::balancer::{Spawn, Stop, TaskRunner};

/// Tasks a worker has spawned and not yet run, newest on top.
///
/// Owned by one worker and never shared, so pushes and pops are plain `Vec` operations. Running
/// the newest task first walks each spawned subtree depth-first: the stack holds the children
/// of one initial task plus, per level of depth, the siblings still waiting, never a whole
/// generation of the run.
#[derive(Debug)]
pub(crate) struct LocalStack<T> {
    tasks: Vec<T>,
    pushed: u64,
    peak: usize,
}

/// Starting capacity. The stack grows (by doubling) to the most a worker ever holds at once,
/// typically the children of one tile's camera rays (a 32×32 tile can spawn 2,048), and
/// then stops allocating: spawning costs no allocation once the first tiles have run.
pub(crate) const INITIAL_CAPACITY: usize = 1024;

impl<T> LocalStack<T> {
    pub(crate) fn new() -> Self {
        Self {
            tasks: Vec::with_capacity(INITIAL_CAPACITY),
            pushed: 0,
            peak: 0,
        }
    }

    pub(crate) fn pop(&mut self) -> Option<T> {
        self.tasks.pop()
    }

    /// Tasks pushed so far.
    pub(crate) fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The most tasks this stack has held at once.
    pub(crate) fn peak(&self) -> usize {
        self.peak
    }
}

impl<T> LocalStack<T> {
    /// Runs `task` and then everything on the stack until it is empty, or until `stop` is
    /// requested (what is left is dropped with the run); returns how many tasks ran. Used by
    /// the balancers whose spawned tasks never leave their worker.
    pub(crate) fn run_depth_first<R: TaskRunner<T>>(
        &mut self,
        task: T,
        runner: &R,
        local: &mut R::Local,
        stop: &Stop,
    ) -> u64 {
        runner.run(task, local, self);
        let mut ran = 1;
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

impl<T> Spawn<T> for LocalStack<T> {
    fn spawn(&mut self, task: T) {
        self.tasks.push(task);
        self.pushed += 1;
        self.peak = self.peak.max(self.tasks.len());
    }
}
