//! `counter`: workers take the next initial tasks from one shared atomic counter.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::balancer::{Balancer, Outcome, SpawnError, TaskRunner, run_workers};
use crate::local_queue::LocalQueue;
use crate::order::Order;

/// A central work pool: one atomic counter hands out the next `chunk` initial tasks to
/// whichever worker asks; spawned tasks stay on the worker that spawned them, run newest
/// first (or, breadth-first, after the counter is spent, oldest first).
///
/// Balances initial tasks perfectly up to the granularity of a chunk, at the price of one
/// contended read-modify-write per chunk. It cannot move spawned work, so one expensive tile
/// near the end of the run still leaves the others idle.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::{Balancer, CentralCounter, Order};
///
/// let counter = CentralCounter { chunk: NonZeroUsize::new(4).unwrap(), order: Order::BreadthFirst };
/// assert_eq!(counter.name(), "counter/chunk=4/breadth-first");
/// balancers::conformance::check(&counter).unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CentralCounter {
    /// Initial tasks taken per visit to the counter (at least 1).
    pub chunk: NonZeroUsize,
    /// Depth-first: each initial task's subtree before the next visit to the counter;
    /// breadth-first: initial tasks from the counter until it is spent, then what they
    /// spawned, generation by generation.
    pub order: Order,
}

impl Balancer for CentralCounter {
    fn name(&self) -> String {
        format!("counter/chunk={}{}", self.chunk, self.order.suffix())
    }

    fn run<T, R>(
        &self,
        workers: NonZeroUsize,
        tasks: &[T],
        runner: &R,
    ) -> Result<Outcome<R::Local>, SpawnError>
    where
        T: Clone + Send + Sync,
        R: TaskRunner<T>,
    {
        let next = AtomicUsize::new(0);
        let chunk = self.chunk.get();
        run_workers(self.name(), workers, |worker, telemetry, stop| {
            let mut local = runner.local(worker);
            let mut queue = LocalQueue::new(self.order);
            loop {
                // Relaxed: the counter only decides which worker owns which indices; the tasks
                // themselves were written before the workers started (thread spawn orders
                // that) and are only read, so nothing is published through the counter.
                // Each worker adds `chunk` at most once after the end is passed, so the
                // counter stays below `tasks.len() + workers * chunk` and cannot wrap.
                let start = next.fetch_add(chunk, Ordering::Relaxed);
                if start >= tasks.len() || stop.requested() {
                    break;
                }
                for task in &tasks[start..(start + chunk).min(tasks.len())] {
                    if stop.requested() {
                        break;
                    }
                    telemetry.initial_tasks += 1;
                    telemetry.tasks += queue.run_initial(task.clone(), runner, &mut local, stop);
                }
            }
            telemetry.tasks += queue.drain(runner, &mut local, stop);
            telemetry.spawned = queue.pushed();
            telemetry.peak_queued = Some(queue.peak() as u64);
            local
        })
    }
}
