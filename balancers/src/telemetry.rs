//! What every balancer measures, in one schema, so that balancers can be compared.

use std::time::Duration;

/// One worker's account of a run. Updated only by its own worker (no atomics on the hot path)
/// and read once the run is over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerTelemetry {
    /// Tasks run, initial and spawned.
    pub tasks: u64,
    /// Initial tasks (tiles) run by this worker.
    pub initial_tasks: u64,
    /// Tasks spawned by tasks this worker ran.
    pub spawned: u64,
    /// Time spent running tasks and taking them from queues or counters.
    pub busy: Duration,
    /// Time spent with nothing to run: starting up, searching for work in vain, and waiting
    /// for the slowest worker at the end.
    pub idle: Duration,
    /// Attempts to take work from another worker (zero for balancers that never steal; see
    /// [`Telemetry::steals_observed`]).
    pub steal_attempts: u64,
    /// Attempts that brought back at least one task.
    pub steal_successes: u64,
    /// Tasks brought back by successful steals.
    pub tasks_stolen: u64,
    /// The most tasks this worker held queued at once in its own queue: the tasks it spawned
    /// (and, for `stealing`, stolen tasks and the tiles of its share still waiting in its
    /// deque; `static` and `counter` keep tiles in a shared list instead). `None` where the
    /// balancer cannot see its queues (rayon).
    pub peak_queued: Option<u64>,
}

/// A balancer's account of a whole run.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::{Balancer, BalancerKind, Spawn, TaskRunner};
///
/// struct Leaves;
/// impl TaskRunner<u32> for Leaves {
///     type Local = ();
///     fn local(&self, _worker: usize) {}
///     fn run<S: Spawn<u32>>(&self, n: u32, _local: &mut (), spawn: &mut S) {
///         for _ in 0..n {
///             spawn.spawn(0);
///         }
///     }
/// }
///
/// let two = NonZeroUsize::new(2).unwrap();
/// let outcome = BalancerKind::counter(NonZeroUsize::MIN).run(two, &[3, 5], &Leaves)?;
/// let t = &outcome.telemetry;
/// assert_eq!((t.balancer.as_str(), t.workers.len()), ("counter/chunk=1", 2));
/// assert_eq!(t.total_tasks(), 2 + 8);
/// assert_eq!(t.workers.iter().map(|w| w.spawned).sum::<u64>(), 8);
/// # Ok::<(), balancers::SpawnError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Telemetry {
    /// The balancer and its settings, e.g. `counter/chunk=1`.
    pub balancer: String,
    /// Wall-clock time from starting the first worker to the last one's return.
    pub wall: Duration,
    /// One entry per worker, indexed by worker number.
    pub workers: Vec<WorkerTelemetry>,
    /// False where the balancer moves work between workers without telling (rayon): its
    /// steal counts are then unknown, not zero.
    pub steals_observed: bool,
}

impl Telemetry {
    pub(crate) fn new(balancer: String, wall: Duration, workers: Vec<WorkerTelemetry>) -> Self {
        Self {
            balancer,
            wall,
            workers,
            steals_observed: true,
        }
    }

    /// Tasks run by all workers together.
    pub fn total_tasks(&self) -> u64 {
        self.workers.iter().map(|w| w.tasks).sum()
    }

    /// Successful steals by all workers together.
    pub fn total_steals(&self) -> u64 {
        self.workers.iter().map(|w| w.steal_successes).sum()
    }

    /// The memory footprint in tasks (the measure of the GRAMPS dissertation): the sum of every
    /// worker's own peak ([`WorkerTelemetry::peak_queued`]). Exact for one worker; for more it
    /// counts each worker at its own worst moment, an upper bound on the tasks queued at any
    /// one moment that costs nothing on the hot path.
    /// `None` where the balancer cannot see its queues.
    pub fn peak_outstanding(&self) -> Option<u64> {
        self.workers.iter().map(|w| w.peak_queued).sum()
    }

    /// Busy time of the busiest worker over the mean busy time: 1.0 is perfect balance.
    pub fn imbalance(&self) -> f64 {
        let busy: Vec<f64> = self.workers.iter().map(|w| w.busy.as_secs_f64()).collect();
        let mean = busy.iter().sum::<f64>() / busy.len().max(1) as f64;
        let max = busy.iter().copied().fold(0.0, f64::max);
        if mean > 0.0 { max / mean } else { 1.0 }
    }
}
