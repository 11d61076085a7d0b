//! When is a run over? When every task created has finished: no task is waiting in a deque,
//! being run, or being stolen, so none can be created any more.
//!
//! Each worker keeps two running totals, tasks it created (spawned) and tasks it finished,
//! and publishes them with plain stores to its own cache line: nothing shared is written on
//! the hot path. An idle worker decides the run is over with a *double collect*: it sums all
//! finished counts and then all created counts, twice; if the two collects agree and
//! finished = initial + created, the counters held still over an interval, during which no
//! task existed that was not finished (a running task is counted created but not finished,
//! and a task is counted created before any other worker can see it). Counters only grow, so
//! equal sums mean equal counters.
//!
//! This can neither end early (the condition implies no task is left) nor hang (once the
//! last task finishes, the next collects agree).

use crate::sync::{AtomicU64, CachePadded, Ordering};

/// One worker's published totals.
#[derive(Debug, Default)]
struct Counts {
    created: AtomicU64,
    finished: AtomicU64,
}

/// The per-worker counters of a run.
///
/// ```
/// use balancers::termination::Termination;
///
/// // Two workers, three initial tasks.
/// let counts = Termination::new(2, 3);
/// counts.created(0, 1); // worker 0 spawned a task
/// counts.finished(0, 2);
/// counts.finished(1, 1);
/// assert!(!counts.all_done(), "4 tasks, 3 finished");
/// counts.finished(1, 2);
/// assert!(counts.all_done());
/// ```
#[derive(Debug)]
pub struct Termination {
    workers: Box<[CachePadded<Counts>]>,
    /// Tasks that exist before any worker starts.
    initial: u64,
}

impl Termination {
    /// Counters for `workers` workers and `initial` tasks that exist before any starts.
    ///
    /// ```
    /// use balancers::termination::Termination;
    ///
    /// assert!(Termination::new(4, 0).all_done(), "no task: over at once");
    /// assert!(!Termination::new(4, 1).all_done());
    /// ```
    pub fn new(workers: usize, initial: u64) -> Self {
        Self {
            workers: (0..workers).map(|_| CachePadded::default()).collect(),
            initial,
        }
    }

    /// Worker `worker` has created `total` tasks so far. Called before the newest of them can
    /// be seen by another worker (before it is pushed).
    ///
    /// ```
    /// # use balancers::termination::Termination;
    /// let counts = Termination::new(1, 1);
    /// counts.created(0, 1); // the initial task spawned one
    /// counts.finished(0, 1);
    /// assert!(!counts.all_done(), "the spawned task has not finished");
    /// ```
    #[inline]
    pub fn created(&self, worker: usize, total: u64) {
        // Relaxed: the push that follows publishes it (its Release comes after this store in
        // program order, and a thief's Acquire of the task, its run, and its Release store of
        // `finished` carry it to whoever reads that `finished`).
        self.workers[worker].created.store(total, Ordering::Relaxed);
    }

    /// Worker `worker` has finished `total` tasks so far, their spawns included.
    ///
    /// ```
    /// # use balancers::termination::Termination;
    /// let counts = Termination::new(2, 2);
    /// counts.finished(0, 1);
    /// counts.finished(1, 1);
    /// assert!(counts.all_done());
    /// ```
    #[inline]
    pub fn finished(&self, worker: usize, total: u64) {
        // Release: whoever reads this total also sees the `created` counts of the tasks that
        // finished (see the module documentation).
        self.workers[worker]
            .finished
            .store(total, Ordering::Release);
    }

    /// Sums of finished and created counts, finished first.
    fn collect(&self) -> (u64, u64) {
        // Acquire: pairs with the Release stores of `finished`.
        let finished = self
            .workers
            .iter()
            .map(|w| w.finished.load(Ordering::Acquire))
            .sum();
        let created = self
            .workers
            .iter()
            .map(|w| w.created.load(Ordering::Acquire))
            .sum();
        (finished, created)
    }

    /// True when every task, initial or created, has finished. Any worker may ask.
    ///
    /// ```
    /// # use balancers::termination::Termination;
    /// let counts = Termination::new(2, 1);
    /// assert!(!counts.all_done());
    /// counts.finished(1, 1); // any worker may finish an initial task
    /// assert!(counts.all_done());
    /// ```
    pub fn all_done(&self) -> bool {
        let first = self.collect();
        if first.0 != self.initial + first.1 {
            return false;
        }
        self.collect() == first
    }
}
