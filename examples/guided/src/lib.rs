//! Guided self-scheduling as a raylb balancer, written against raylb's public API alone.
//!
//! Guided self-scheduling (C. D. Polychronopoulos and D. J. Kuck, "Guided self-scheduling: a
//! practical scheduling scheme for parallel supercomputers", IEEE Trans. Computers, 1987; the
//! `schedule(guided)` of OpenMP) hands out the initial tasks from one shared counter, like
//! raylb's `counter`, but in chunks that shrink as the work runs out: a worker that comes to
//! the counter when `r` tasks remain takes ⌈r / (k · workers)⌉ of them (at least `min_chunk`).
//! Early chunks are large, so the counter is visited rarely; the last ones are single tasks,
//! so the workers finish together. Tasks a task spawns stay on its worker and run newest
//! first, as under `counter`.
//!
//! The same value runs in raylb's simulator: `Guided` is
//! [`Simulated`](balancers::sim::Simulated), and its policy there is [`GuidedPolicy`].
//!
//! ```
//! use std::num::NonZeroUsize;
//! use balancers::Balancer;
//! use guided::Guided;
//!
//! let guided = Guided::default();
//! assert_eq!(guided.name(), "guided/k=2");
//! balancers::conformance::check(&guided).unwrap();
//! ```

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

use balancers::{Balancer, LocalQueue, Order, Outcome, SpawnError, TaskRunner, run_workers};

mod sim;

pub use sim::GuidedPolicy;

/// Guided self-scheduling: chunks of ⌈remaining / (k · workers)⌉ initial tasks from one
/// shared counter, at least `min_chunk`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guided {
    /// How many chunks per worker the remaining tasks are divided into: 1 is the original
    /// scheme (the first chunk is a worker's whole fair share), larger values start smaller.
    pub k: NonZeroUsize,
    /// The smallest chunk.
    pub min_chunk: NonZeroUsize,
}

impl Default for Guided {
    /// `k = 2`, chunks of at least one task.
    fn default() -> Self {
        Self {
            k: NonZeroUsize::new(2).expect("2 is not 0"),
            min_chunk: NonZeroUsize::MIN,
        }
    }
}

impl Guided {
    /// The chunk a worker takes when `remaining` tasks (at least one) are left for `workers`
    /// workers.
    pub fn chunk(&self, remaining: usize, workers: usize) -> usize {
        remaining
            .div_ceil(self.k.get().saturating_mul(workers))
            .max(self.min_chunk.get())
            .min(remaining)
    }

    /// Takes the next chunk from `next` (the first initial task not yet handed out) of `total`:
    /// the range of initial tasks this worker now owns, or `None` once all are handed out.
    fn take(&self, next: &AtomicUsize, total: usize, workers: usize) -> Option<(usize, usize)> {
        // Relaxed: the counter only decides which worker owns which indices; the tasks were
        // written before the workers started and are only read, so nothing is published
        // through it.
        let mut start = next.load(Ordering::Relaxed);
        loop {
            if start >= total {
                return None;
            }
            let end = start + self.chunk(total - start, workers);
            match next.compare_exchange_weak(start, end, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some((start, end)),
                Err(seen) => start = seen,
            }
        }
    }
}

impl Balancer for Guided {
    fn name(&self) -> String {
        if self.min_chunk.get() == 1 {
            format!("guided/k={}", self.k)
        } else {
            format!("guided/k={},min={}", self.k, self.min_chunk)
        }
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
        run_workers(self.name(), workers, |worker, telemetry, stop| {
            let mut local = runner.local(worker);
            let mut queue = LocalQueue::new(Order::DepthFirst);
            'chunks: while let Some((start, end)) = self.take(&next, tasks.len(), workers.get()) {
                for task in &tasks[start..end] {
                    if stop.requested() {
                        break 'chunks;
                    }
                    telemetry.initial_tasks += 1;
                    telemetry.tasks += queue.run_initial(task.clone(), runner, &mut local, stop);
                }
            }
            telemetry.spawned = queue.pushed();
            telemetry.peak_queued = Some(queue.peak() as u64);
            local
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guided(k: usize, min_chunk: usize) -> Guided {
        Guided {
            k: NonZeroUsize::new(k).unwrap(),
            min_chunk: NonZeroUsize::new(min_chunk).unwrap(),
        }
    }

    /// The chunks of 100 tasks on 4 workers with k = 1 are the ones Polychronopoulos and Kuck
    /// tabulate for that case: 25, 19, 14, 11, 8, 6, 5, 3, 3, 2, 1, 1, 1, 1.
    #[test]
    fn chunks_shrink_with_the_work_left() {
        let g = guided(1, 1);
        let (next, mut chunks) = (AtomicUsize::new(0), Vec::new());
        while let Some((start, end)) = g.take(&next, 100, 4) {
            chunks.push(end - start);
        }
        assert_eq!(chunks, [25, 19, 14, 11, 8, 6, 5, 3, 3, 2, 1, 1, 1, 1]);
    }

    #[test]
    fn the_smallest_chunk_is_kept_but_never_passes_the_end() {
        let g = guided(2, 4);
        assert_eq!(g.chunk(100, 4), 13);
        assert_eq!(g.chunk(9, 4), 4);
        assert_eq!(g.chunk(3, 4), 3);
        assert_eq!(g.name(), "guided/k=2,min=4");
    }
}
