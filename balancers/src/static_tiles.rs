//! `static`: every initial task is given to a worker before the run starts.

use std::num::NonZeroUsize;

use crate::balancer::{Balancer, Outcome, SpawnError, TaskRunner, run_workers};
use crate::choice::Choice;
use crate::local_queue::LocalQueue;
use crate::order::Order;

/// How [`StaticTiles`] deals the initial tasks out to `p` workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assignment {
    /// Task `i` goes to worker `i mod p`: neighbouring tiles land on different workers, which
    /// spreads a costly region of the image over all of them.
    Interleaved,
    /// Worker `w` gets the `w`-th contiguous run of `ceil(n / p)` tasks: each worker renders one
    /// band of the image, the worst case when the cost is concentrated in one part of it.
    Blocked,
}

/// Static assignment: the tasks a worker runs are fixed before the run starts; spawned tasks
/// stay on the worker that spawned them (a local queue, newest first unless `order` says
/// otherwise). Nothing is shared while running, so this is the zero-overhead baseline, and the
/// victim of any imbalance.
///
/// ```
/// use balancers::{Assignment, Balancer, Order, StaticTiles};
///
/// let blocked = StaticTiles { assignment: Assignment::Blocked, order: Order::DepthFirst };
/// assert_eq!(blocked.name(), "static/blocked");
/// balancers::conformance::check(&blocked).unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticTiles {
    /// How initial tasks are dealt out.
    pub assignment: Assignment,
    /// Depth-first: each initial task's subtree before the next initial task; breadth-first:
    /// the whole share, then what it spawned, generation by generation.
    pub order: Order,
}

impl Assignment {
    /// The indices of the initial tasks that `worker` of `workers` gets, in order.
    pub(crate) fn share(
        self,
        worker: usize,
        workers: usize,
        tasks: usize,
    ) -> impl Iterator<Item = usize> {
        let (start, step, end) = match self {
            Assignment::Interleaved => (worker, workers, tasks),
            Assignment::Blocked => {
                let per_worker = tasks.div_ceil(workers);
                let start = (worker * per_worker).min(tasks);
                (start, 1, (start + per_worker).min(tasks))
            }
        };
        (start..end).step_by(step)
    }
}

impl Balancer for StaticTiles {
    fn name(&self) -> String {
        format!(
            "static/{}{}",
            self.assignment.keyword(),
            self.order.suffix()
        )
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
        run_workers(self.name(), workers, |worker, telemetry, stop| {
            let mut local = runner.local(worker);
            let mut queue = LocalQueue::new(self.order);
            for index in self.assignment.share(worker, workers.get(), tasks.len()) {
                if stop.requested() {
                    break;
                }
                telemetry.initial_tasks += 1;
                telemetry.tasks +=
                    queue.run_initial(tasks[index].clone(), runner, &mut local, stop);
            }
            telemetry.tasks += queue.drain(runner, &mut local, stop);
            telemetry.spawned = queue.pushed();
            telemetry.peak_queued = Some(queue.peak() as u64);
            local
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(assignment: Assignment, workers: usize, tasks: usize) -> Vec<Vec<usize>> {
        (0..workers)
            .map(|w| assignment.share(w, workers, tasks).collect())
            .collect()
    }

    #[test]
    fn interleaved_deals_round_robin() {
        assert_eq!(
            shares(Assignment::Interleaved, 3, 7),
            vec![vec![0, 3, 6], vec![1, 4], vec![2, 5]]
        );
    }

    #[test]
    fn blocked_deals_contiguous_bands() {
        assert_eq!(
            shares(Assignment::Blocked, 3, 7),
            vec![vec![0, 1, 2], vec![3, 4, 5], vec![6]]
        );
        // More workers than tasks: the last workers get nothing, nobody gets a task twice.
        assert_eq!(
            shares(Assignment::Blocked, 4, 2),
            vec![vec![0], vec![1], vec![], vec![]]
        );
    }
}
