//! The discrete-event simulation: a recorded task tree run by simulated workers under the
//! policies of this crate's balancers, with the costs that decide between them as named
//! parameters ([`Costs`]).
//!
//! Time is in seconds, as `f64`, computed in one thread in a fixed order: the same tree,
//! policy, worker count and costs give the same result on every machine. Events at the same
//! instant are taken in a fixed order: spawns first (a child spawned at the very end of its
//! parent is there when anyone looks), then steal attempts reaching their victims (a thief
//! arriving as the owner finishes a task takes from the deque before the owner's next pop),
//! then workers' steps, each kind in the order it was scheduled.
//!
//! What a balancer does is its [`Policy`], asked at each decision through [`Simulation`],
//! the view of the run a policy reads and changes: where a worker's share of the initial tasks
//! waits, where its next task comes from, where the tasks it spawns go, what its deque costs
//! and how it steals. This module runs any of them ([`simulate_policy`]); the built-in
//! balancers' policies are in `builtin.rs`.

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;

use crate::kind::BalancerKind;
use crate::stealing::StealAmount;
use crate::sync::{AtomicU64, Ordering};
use crate::victim::Prospect;

use super::builtin::{Counter, Rayon, Static, Stealing};
use super::policy::{Children, Next, Policy, Queued, Victim};
use super::tree::TaskTree;

/// What scheduling costs, in seconds, beyond the tasks' own times. The tasks' times come from
/// a timed run of `static` (`raylb record`), so they already hold what a worker-local queue
/// costs.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::BalancerKind;
/// use balancers::sim::{Costs, simulate, wool};
///
/// let (tree, seconds) = wool::tree(4, 1);
/// let counter = BalancerKind::counter(NonZeroUsize::MIN);
/// let cheap = simulate(&tree, &seconds, counter, 4, &Costs::default());
/// let dear = Costs { counter: 1e-3, ..Costs::default() };
/// assert!(simulate(&tree, &seconds, counter, 4, &dear).makespan > cheap.makespan);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    /// Pushing a task on a deque and popping it again, beyond the local stack's cost:
    /// `abp`'s (a fence on the push, a fence on the pop).
    pub abp_push_pop: f64,
    /// The same for the `locked` deque (a lock taken on each).
    pub locked_push_pop: f64,
    /// A steal that finds work: from the attempt to the stolen task's start (the victim's
    /// deque lines move to the thief's core).
    pub steal: f64,
    /// A steal attempt that finds nothing (one line read).
    pub failed_steal: f64,
    /// Each task a steal takes beyond the first (steal half), on the thief's time; and how
    /// long taking each task, the first included, holds the victim's deque, during which
    /// another thief's attempt on it fails (so it acts on steals of one task too).
    pub per_stolen_task: f64,
    /// Reading another worker's deque for `sample`'s choice, per worker read.
    pub probe: f64,
    /// The counter's fetch-and-add; the counter serves one worker at a time, so workers that
    /// arrive together wait for each other.
    pub counter: f64,
    /// What a job of a rayon scope costs beyond a deque's push and pop, with every worker
    /// spawning: rayon counts each job on the scope's latch and tells its sleeping workers
    /// of it through a counter they all share, lines that every worker writes in turn. Each
    /// of `p` workers pays it `p` times over for each child it spawns, so that together they
    /// lose it once per job, however many they are (what real runs show from 4 threads on).
    pub rayon_job: f64,
    /// Whether each of these costs is always its value or varies about it.
    pub timing: Timing,
    /// How `sample` chooses its victims.
    pub sampling: Sampling,
}

/// How the `sample` victim selection samples. The default is the balancer's rule (and
/// Wool's implementation): about √p workers, read before a search's first attempt only.
///
/// ```
/// use balancers::sim::{Costs, Sampling, wool};
///
/// assert_eq!(Costs::default().sampling.size, None, "about √p workers");
/// // Faxén and Ardelius's model: two workers read before every attempt.
/// let model = Sampling { size: Some(2), every_attempt: true };
/// assert_eq!(wool::costs(1).sampling, model);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sampling {
    /// Workers read for a sample; `None`: about √p.
    pub size: Option<usize>,
    /// Whether every attempt samples, as the Wool paper's simulation model has it, rather
    /// than only a search's first.
    pub every_attempt: bool,
}

/// How the scheduling costs of [`Costs`] vary from one occurrence to the next.
///
/// ```
/// use balancers::{BalancerKind, WorkStealing};
/// use balancers::sim::{Costs, Timing, simulate, wool};
///
/// assert_eq!(Costs::default().timing, Timing::Fixed);
/// let (tree, seconds) = wool::tree(8, 1);
/// let costs = Costs { timing: Timing::Exponential { seed: 5 }, ..Costs::default() };
/// let stealing = BalancerKind::Stealing(WorkStealing::default());
/// let first = simulate(&tree, &seconds, stealing, 8, &costs);
/// let again = simulate(&tree, &seconds, stealing, 8, &costs);
/// assert_eq!(first, again, "the same seed, the same run");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// Each is always its value.
    #[default]
    Fixed,
    /// Each is drawn from an exponential distribution with its value as the mean, from a
    /// generator per worker seeded with `seed` and the worker's number: a thief's attempts
    /// are then a Poisson process, as in Faxén and Ardelius's model (section 4).
    Exponential {
        /// The seed.
        seed: u64,
    },
}

/// [`Costs::rayon_job`]'s default: `raylb bench costs --threads 2 --rounds 5` on two vCPUs of
/// an Intel Xeon, the development machine of 2026-11-27 (the median). It grows with the
/// threads that spawn at once: on a many-core machine, measure it there at the workers'
/// count.
const RAYON_JOB_DEFAULT: f64 = 32.6e-9;

impl Default for Costs {
    /// Measured on this project's development machine, two vCPUs of an AMD EPYC, by
    /// `raylb bench costs --rounds 7` (medians; BENCHMARKS.md, "The simulator's scheduling
    /// costs"); `rayon_job`, added later, by `raylb bench costs --threads 2 --rounds 5` on
    /// two vCPUs of an Intel Xeon. Its two vCPUs share a core's caches, so moving a cache line between them is
    /// cheaper than between the cores of a many-core machine: the steal, probe and counter
    /// figures are low for those, where `raylb bench costs` on the machine itself says better.
    fn default() -> Self {
        Self {
            abp_push_pop: 4.0e-9,
            locked_push_pop: 6.5e-9,
            steal: 155e-9,
            failed_steal: 160e-9,
            per_stolen_task: 83e-9,
            probe: 4.0e-9,
            counter: 13.5e-9,
            rayon_job: RAYON_JOB_DEFAULT,
            timing: Timing::Fixed,
            sampling: Sampling::default(),
        }
    }
}

/// A draw from the exponential distribution of mean 1, from `rng`: the same bits on every
/// machine (`libm`'s logarithm is Rust, not the platform's).
pub(crate) fn exponential(rng: &mut crate::victim::XorShift) -> f64 {
    // 53 random bits, shifted off zero: u in (0, 1].
    let u = ((rng.next() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    -libm::log(u)
}

/// The least time a failed steal may take: thieves that find nothing try again this much
/// later at least.
pub const MIN_FAILED_STEAL: f64 = 1e-12;

/// `now + dt`, or the next representable time when `dt` is too small to move `now`: every
/// event scheduled from `now` is strictly later, so that time always goes on.
fn after(now: f64, dt: f64) -> f64 {
    let t = now + dt;
    if t > now { t } else { now.next_up() }
}

/// What one simulated worker did.
///
/// ```
/// use balancers::{BalancerKind, WorkStealing};
/// use balancers::sim::{Costs, simulate, wool};
///
/// let (tree, seconds) = wool::tree(4, 1);
/// let stealing = BalancerKind::Stealing(WorkStealing::default());
/// let result = simulate(&tree, &seconds, stealing, 4, &Costs::default());
/// let tasks: u64 = result.workers.iter().map(|w| w.tasks).sum();
/// assert_eq!(tasks, tree.len() as u64);
/// assert!(result.workers.iter().all(|w| w.steal_successes <= w.steal_attempts));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerResult {
    /// Tasks run.
    pub tasks: u64,
    /// Seconds running tasks (their own times, and the deque costs of their spawns).
    pub busy: f64,
    /// Steal attempts.
    pub steal_attempts: u64,
    /// Steal attempts that found work.
    pub steal_successes: u64,
    /// Tasks taken by successful steals.
    pub tasks_stolen: u64,
    /// The most tasks waiting in this worker's queue at once.
    pub peak_queued: u64,
}

/// The outcome of one simulated run.
///
/// ```
/// use balancers::{BalancerKind, WorkStealing};
/// use balancers::sim::{Costs, simulate, wool};
///
/// // Wool's tree, whose one root is on worker 0 at the start: the others steal.
/// let (tree, seconds) = wool::tree(4, 1);
/// let stealing = BalancerKind::Stealing(WorkStealing::default());
/// let result = simulate(&tree, &seconds, stealing, 4, &Costs::default());
/// assert_eq!(result.workers.len(), 4);
/// assert!((result.work - seconds.iter().sum::<f64>()).abs() < 1e-15);
/// assert!(result.makespan > result.work / 4.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    /// When the last task finished.
    pub makespan: f64,
    /// The tasks' own times summed: the run on one worker with no scheduling costs.
    pub work: f64,
    /// One entry per simulated worker.
    pub workers: Vec<WorkerResult>,
    /// The most tasks spawned and not yet started, over all workers at once (the memory
    /// footprint measure of the GRAMPS dissertation).
    pub peak_outstanding: u64,
}

impl SimResult {
    /// `work / makespan`; 1 for a run with nothing to do (no time at all).
    ///
    /// ```
    /// # use balancers::{BalancerKind, WorkStealing};
    /// # use balancers::sim::{Costs, simulate, wool};
    /// #
    /// # // Wool's tree, whose one root is on worker 0 at the start: the others steal.
    /// # let (tree, seconds) = wool::tree(4, 1);
    /// # let stealing = BalancerKind::Stealing(WorkStealing::default());
    /// # let result = simulate(&tree, &seconds, stealing, 4, &Costs::default());
    /// assert_eq!(result.speedup(), result.work / result.makespan);
    /// assert!(result.speedup() < 4.0, "scheduling costs something");
    /// ```
    pub fn speedup(&self) -> f64 {
        if self.makespan > 0.0 {
            self.work / self.makespan
        } else {
            1.0
        }
    }

    /// Speedup per worker.
    ///
    /// ```
    /// # use balancers::{BalancerKind, WorkStealing};
    /// # use balancers::sim::{Costs, simulate, wool};
    /// #
    /// # // Wool's tree, whose one root is on worker 0 at the start: the others steal.
    /// # let (tree, seconds) = wool::tree(4, 1);
    /// # let stealing = BalancerKind::Stealing(WorkStealing::default());
    /// # let result = simulate(&tree, &seconds, stealing, 4, &Costs::default());
    /// assert_eq!(result.efficiency(), result.speedup() / 4.0);
    /// assert!(result.efficiency() < 1.0);
    /// ```
    pub fn efficiency(&self) -> f64 {
        self.speedup() / self.workers.len() as f64
    }

    /// The share of the workers' time not spent running tasks.
    ///
    /// ```
    /// # use balancers::{BalancerKind, WorkStealing};
    /// # use balancers::sim::{Costs, simulate, wool};
    /// #
    /// # // Wool's tree, whose one root is on worker 0 at the start: the others steal.
    /// # let (tree, seconds) = wool::tree(4, 1);
    /// # let stealing = BalancerKind::Stealing(WorkStealing::default());
    /// # let result = simulate(&tree, &seconds, stealing, 4, &Costs::default());
    /// assert!(result.idle_share() > 0.0 && result.idle_share() < 1.0);
    /// ```
    pub fn idle_share(&self) -> f64 {
        if self.makespan <= 0.0 {
            return 0.0;
        }
        let busy: f64 = self.workers.iter().map(|w| w.busy).sum();
        1.0 - busy / (self.makespan * self.workers.len() as f64)
    }

    /// Steal attempts of all workers.
    ///
    /// ```
    /// # use balancers::{BalancerKind, WorkStealing};
    /// # use balancers::sim::{Costs, simulate, wool};
    /// #
    /// # // Wool's tree, whose one root is on worker 0 at the start: the others steal.
    /// # let (tree, seconds) = wool::tree(4, 1);
    /// # let stealing = BalancerKind::Stealing(WorkStealing::default());
    /// # let result = simulate(&tree, &seconds, stealing, 4, &Costs::default());
    /// assert!(result.steal_attempts() >= result.steal_successes());
    /// assert!(result.steal_attempts() >= 3, "each thief tries at least once");
    /// ```
    pub fn steal_attempts(&self) -> u64 {
        self.workers.iter().map(|w| w.steal_attempts).sum()
    }

    /// Steal attempts that found work, of all workers.
    ///
    /// ```
    /// # use balancers::{BalancerKind, WorkStealing};
    /// # use balancers::sim::{Costs, simulate, wool};
    /// #
    /// # // Wool's tree, whose one root is on worker 0 at the start: the others steal.
    /// # let (tree, seconds) = wool::tree(4, 1);
    /// # let stealing = BalancerKind::Stealing(WorkStealing::default());
    /// # let result = simulate(&tree, &seconds, stealing, 4, &Costs::default());
    /// let stolen: u64 = result.workers.iter().map(|w| w.tasks_stolen).sum();
    /// assert!(result.steal_successes() >= 1 && stolen >= result.steal_successes());
    /// ```
    pub fn steal_successes(&self) -> u64 {
        self.workers.iter().map(|w| w.steal_successes).sum()
    }

    /// The workers' own peaks of queued tasks, summed: what a real run's telemetry reports
    /// as its peak, since it cannot see every queue at one instant. Unlike
    /// [`peak_outstanding`](Self::peak_outstanding) it counts initial tasks waiting in a
    /// deque, and not a task held to run next.
    ///
    /// ```
    /// # use balancers::{BalancerKind, WorkStealing};
    /// # use balancers::sim::{Costs, simulate, wool};
    /// #
    /// # // Wool's tree, whose one root is on worker 0 at the start: the others steal.
    /// # let (tree, seconds) = wool::tree(4, 1);
    /// # let stealing = BalancerKind::Stealing(WorkStealing::default());
    /// # let result = simulate(&tree, &seconds, stealing, 4, &Costs::default());
    /// let own_peaks: u64 = result.workers.iter().map(|w| w.peak_queued).sum();
    /// assert_eq!(result.worker_peaks(), own_peaks);
    /// assert!(result.worker_peaks() >= 1, "the root's children wait in worker 0's deque");
    /// ```
    pub fn worker_peaks(&self) -> u64 {
        self.workers.iter().map(|w| w.peak_queued).sum()
    }
}

/// Runs `tree`, whose tasks take `seconds` each, on `workers` simulated workers under the
/// policy of `balancer`: [`simulate_policy`] with the built-in balancer's own policy.
///
/// ```
/// use balancers::{Assignment, BalancerKind, WorkStealing};
/// use balancers::sim::{simulate, wool};
///
/// // Wool's tree for 16 workers: one root, 64 leaves of a microsecond on average.
/// let (tree, seconds) = wool::tree(16, 1);
/// let costs = wool::costs(1);
/// let stealing = BalancerKind::Stealing(WorkStealing::default());
/// let stealing = simulate(&tree, &seconds, stealing, 16, &costs);
/// let alone = BalancerKind::static_tiles(Assignment::Interleaved);
/// let alone = simulate(&tree, &seconds, alone, 16, &costs);
/// // Static runs the one root and all it spawns on worker 0.
/// assert!((alone.makespan - alone.work).abs() < 1e-12);
/// assert!(stealing.makespan < alone.makespan);
/// ```
///
/// # Panics
/// When `seconds` does not have one time per task, a time is negative or not finite, or
/// `workers` is 0.
pub fn simulate(
    tree: &TaskTree,
    seconds: &[f64],
    balancer: BalancerKind,
    workers: usize,
    costs: &Costs,
) -> SimResult {
    // Each policy as its own type rather than a `Box<dyn Policy>`: the same decisions,
    // without a virtual call at each of them.
    match balancer {
        BalancerKind::Static(b) => {
            simulate_policy(tree, seconds, workers, costs, &mut Static::new(b))
        }
        BalancerKind::Counter(b) => {
            simulate_policy(tree, seconds, workers, costs, &mut Counter::new(b))
        }
        BalancerKind::Stealing(b) => {
            let mut stealing = Stealing::new(b, workers, costs.sampling);
            simulate_policy(tree, seconds, workers, costs, &mut stealing)
        }
        BalancerKind::Rayon(b) => {
            simulate_policy(tree, seconds, workers, costs, &mut Rayon::new(b, workers))
        }
    }
}

/// Runs `tree`, whose tasks take `seconds` each, on `workers` simulated workers under
/// `policy`, which was made for a run on that many workers.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::BalancerKind;
/// # use balancers::sim::{CostModel, RecordedTask, TaskTree, MAX_FEATURES, NO_PARENT};
/// use balancers::sim::{Costs, Simulated, simulate_policy};
///
/// # let task = |id: u64, work: u32| RecordedTask {
/// #     id, parent: NO_PARENT, index: id as u32, kind: 0, depth: 0, place: id as u32,
/// #     work: [work, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 0, progress: 1,
/// # };
/// # let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
/// # let recorded = [task(0, 3), task(1, 1), task(2, 1), task(3, 1)];
/// # let tree = TaskTree::from_recorded(
/// #     String::new(), vec!["tile".into()], vec!["work".into()], model, &recorded,
/// # ).unwrap();
/// // Four tiles of 3, 1, 1 and 1 seconds, from a counter that costs nothing.
/// let seconds = tree.costs(&tree.model);
/// let costs = Costs { counter: 0.0, ..Costs::default() };
/// let mut policy = BalancerKind::counter(NonZeroUsize::MIN).policy(2, &costs);
/// let result = simulate_policy(&tree, &seconds, 2, &costs, &mut *policy);
/// assert_eq!(result.makespan, 3.0);
/// ```
///
/// # Panics
/// When `seconds` does not have one time per task, a time is negative or not finite, or
/// `workers` is 0; when the policy breaks the run: it runs a task twice, leaves tasks that
/// never run, hands out a task that is not an initial one, has a worker wait until a time
/// already past, or chooses a victim that is not a worker.
pub fn simulate_policy<P: Policy + ?Sized>(
    tree: &TaskTree,
    seconds: &[f64],
    workers: usize,
    costs: &Costs,
    policy: &mut P,
) -> SimResult {
    assert_eq!(seconds.len(), tree.len(), "one time per task");
    assert!(
        seconds.iter().all(|s| s.is_finite() && *s >= 0.0),
        "task times are finite and not negative"
    );
    assert!(workers > 0, "at least one worker");
    assert!(
        costs.failed_steal >= MIN_FAILED_STEAL,
        "a failed steal takes at least a picosecond, or thieves would try again in no time"
    );
    let mut sim = Simulation::new(tree, seconds, workers, costs, policy);
    sim.run(policy);
    sim.result()
}

/// One simulated worker.
struct Worker {
    /// Initial tasks it holds where no other worker sees them, next first (`static`: its
    /// share; `counter`: the chunk it holds).
    held: VecDeque<u32>,
    /// Its queue, owner's end last, thieves' end first (`static` and `counter`: the spawned
    /// tasks it keeps; `stealing` and `rayon`: the deque).
    queue: VecDeque<Queued>,
    /// Under [`Children::NewestNext`], the newest child of the running task, run next.
    next: Option<Queued>,
    /// The first task of a successful steal, on its way: it runs when it arrives, whatever
    /// the policy would take next.
    stolen: Option<Queued>,
    /// The running task, if any.
    running: Option<Queued>,
    /// Whether it is looking for work to steal.
    searching: bool,
    /// Draws the worker's scheduling costs under [`Timing::Exponential`].
    timing: crate::victim::XorShift,
    /// Until when a thief is taking tasks from this worker's deque: another thief's attempt
    /// meanwhile fails, as a second compare-and-swap on `abp`'s top (or a lock tried once on
    /// `locked`) does.
    stolen_until: f64,
    result: WorkerResult,
}

impl Worker {
    /// Worker `w`, holding nothing yet, its costs timed as `timing` says.
    fn new(w: usize, timing: Timing) -> Self {
        Self {
            held: VecDeque::new(),
            queue: VecDeque::new(),
            next: None,
            stolen: None,
            running: None,
            searching: false,
            // A stream of its own per worker, apart from any other generator seeded with the
            // same seed (the Wool tree's leaves).
            timing: crate::victim::XorShift::new(match timing {
                Timing::Fixed => 0,
                Timing::Exponential { seed } => {
                    (seed ^ 0x5DEE_CE66_D1CE_4E5B).wrapping_mul(0x0001_0000_0001)
                        ^ (w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                }
            }),
            stolen_until: 0.0,
            result: WorkerResult::default(),
        }
    }
}

impl Prospect for Worker {
    fn len(&self) -> usize {
        self.queue.len()
    }
    fn oldest_depth(&self) -> Option<u32> {
        self.queue.front().map(|q| q.depth())
    }
}

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// A running task on `worker` spawns its child `task`.
    Spawn { worker: u32, task: u32 },
    /// `worker` is free: its task finished, or its search goes on.
    Step { worker: u32 },
    /// A steal attempt of `thief` on `victim` reaches the victim's deque.
    Steal { thief: u32, victim: u32 },
}

impl Event {
    /// Order among events of one instant: spawns first.
    fn rank(&self) -> u8 {
        match self {
            Event::Spawn { .. } => 0,
            Event::Steal { .. } => 1,
            Event::Step { .. } => 2,
        }
    }
}

/// An event and when it happens; the heap yields the earliest, spawns first, then the order
/// of scheduling.
struct Scheduled {
    at: f64,
    seq: u64,
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        // Reversed: `BinaryHeap` is a max-heap.
        other
            .at
            .total_cmp(&self.at)
            .then(other.event.rank().cmp(&self.event.rank()))
            .then(other.seq.cmp(&self.seq))
    }
}

/// A simulated run as its [`Policy`] sees it: the workers' initial tasks and queues, the
/// tree's size, the run's costs and their draws. A policy reads and changes the run only
/// through these methods; the engine's own state (events, time, the count of tasks run and
/// waiting) stays its own.
///
/// Workers are numbered from 0; a method given a worker that is not one panics.
///
/// ```
/// # use balancers::StealAmount;
/// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
/// # use balancers::sim::RecordedTask;
/// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
/// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
/// # /// `5 + 2t`, of a second each, at its end.
/// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
/// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
/// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
/// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
/// #     };
/// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
/// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
/// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
/// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
/// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
/// #     let tree = tree.unwrap();
/// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
/// # }
/// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
/// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
/// #     log.extend(next.map(Queued::task));
/// #     next.map_or(Next::Done, Next::Run)
/// # }
/// // `run` simulates four tiles of a second, each spawning two tasks of a second.
///
/// /// Runs spawned tasks oldest first, and notes the order.
/// struct Fifo(Vec<usize>);
///
/// impl Policy for Fifo {
/// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
/// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
/// #         sim.hold(w, (w..initial).step_by(workers));
/// #     }
/// #     fn children(&self) -> Children {
/// #         Children::Kept
/// #     }
///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
///         let next = sim.pop_oldest(w).or_else(|| sim.take_held(w));
///         self.0.extend(next.map(|q| q.task()));
///         next.map_or(Next::Done, Next::Run)
///     }
/// }
///
/// let mut fifo = Fifo(Vec::new());
/// run(&mut fifo, 1);
/// assert_eq!(fifo.0, [0, 4, 5, 1, 6, 7, 2, 8, 9, 3, 10, 11]);
/// ```
pub struct Simulation<'a> {
    tree: &'a TaskTree,
    seconds: &'a [f64],
    costs: &'a Costs,
    workers: Vec<Worker>,
    events: BinaryHeap<Scheduled>,
    seq: u64,
    /// Depth of each task in the spawn tree.
    depth: Vec<u32>,
    finished: usize,
    makespan: f64,
    /// Tasks spawned and not yet started, now and at most.
    outstanding: u64,
    peak_outstanding: u64,
    /// Workers searching for work now (for `set`'s walk length).
    thieves: AtomicU64,
    /// Tasks in all workers' queues, where thieves can find them.
    stealable: usize,
    /// Thieves that found no deque holding work, and when each began to wait; they are woken
    /// by the next push to any deque.
    sleepers: Vec<(u32, f64)>,
    /// Whether each task has started: none may start twice.
    started: Vec<bool>,
    /// The time of the event being taken.
    now: f64,
    /// Whether the shares have been dealt and time has begun.
    dealt: bool,
}

impl fmt::Debug for Simulation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulation")
            .field("now", &self.now)
            .field("workers", &self.workers.len())
            .field("tasks", &self.tree.len())
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

/// Each task's depth in the spawn tree, initial tasks 0.
fn depths(tree: &TaskTree) -> Vec<u32> {
    let mut depth = vec![0u32; tree.len()];
    for i in tree.initial()..tree.len() {
        depth[i] = depth[tree.parent(i).expect("a spawned task")] + 1;
    }
    depth
}

/// What a policy may see and do.
impl<'a> Simulation<'a> {
    /// How many workers the run has.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Share;
    /// impl Policy for Share {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         assert_eq!(sim.workers(), 2);
    ///         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    ///         sim.hold(w, (w..initial).step_by(workers));
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// run(&mut Share, 2);
    /// ```
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// How many initial tasks the tree has: they are numbered from 0.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Share;
    /// impl Policy for Share {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         assert_eq!(sim.initial_tasks(), 4);
    ///         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    ///         sim.hold(w, (w..initial).step_by(workers));
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// run(&mut Share, 2);
    /// ```
    pub fn initial_tasks(&self) -> usize {
        self.tree.initial()
    }

    /// The run's scheduling costs.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Share;
    /// impl Policy for Share {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         assert_eq!(sim.costs().steal, Costs::default().steal);
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// run(&mut Share, 2);
    /// ```
    pub fn costs(&self) -> &'a Costs {
        self.costs
    }

    /// What a scheduling cost of `mean` seconds takes this time on worker `w`: `mean` itself,
    /// or a draw about it from `w`'s generator, as the costs' [`Timing`] says.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Share;
    /// impl Policy for Share {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         assert_eq!(sim.draw(w, 1e-6), 1e-6, "fixed timing: the mean itself");
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// run(&mut Share, 2);
    /// ```
    pub fn draw(&mut self, w: usize, mean: f64) -> f64 {
        match self.costs.timing {
            Timing::Fixed => mean,
            Timing::Exponential { .. } => mean * exponential(&mut self.workers[w].timing),
        }
    }

    /// Gives worker `w` the initial tasks `tasks` to hold, in that order after any it holds:
    /// where no other worker sees them, until [`take_held`](Self::take_held) takes them.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Share;
    /// impl Policy for Share {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         // Worker 0 tiles 0 and 2, worker 1 tiles 1 and 3.
    ///         sim.hold(w, [w, w + 2]);
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// let result = run(&mut Share, 2);
    /// assert!(result.workers.iter().all(|w| w.tasks == 6), "two tiles and their four children");
    /// ```
    ///
    /// # Panics
    /// When one of `tasks` is not an initial task.
    pub fn hold(&mut self, w: usize, tasks: impl IntoIterator<Item = usize>) {
        let initial = self.tree.initial();
        self.workers[w].held.extend(tasks.into_iter().map(|task| {
            assert!(
                task < initial,
                "task {task} is not one of {initial} initial tasks"
            );
            task as u32
        }));
    }

    /// The next initial task worker `w` holds, if any.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    /// // `ran` notes the task it is given, if any, and runs it.
    ///
    /// struct HeldFirst(Vec<usize>);
    ///
    /// impl Policy for HeldFirst {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    ///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    ///         ran(&mut self.0, sim.take_held(w).or_else(|| sim.pop_newest(w)))
    ///     }
    /// }
    ///
    /// let mut held_first = HeldFirst(Vec::new());
    /// run(&mut held_first, 1);
    /// assert_eq!(held_first.0[..5], [0, 1, 2, 3, 11], "every tile, then the newest child");
    /// ```
    pub fn take_held(&mut self, w: usize) -> Option<Queued> {
        self.workers[w].held.pop_front().map(Queued::initial)
    }

    /// Puts initial task `task` at the owner's end of worker `w`'s queue, where thieves can
    /// find it. During [`Policy::deal`] a worker's peak of queued tasks does not count it
    /// until its queue next grows.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Share;
    /// impl Policy for Share {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         for task in (w..4).step_by(2) {
    ///             sim.enqueue_initial(w, task);
    ///         }
    ///         assert_eq!(sim.queued(w), 2);
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// run(&mut Share, 2);
    /// ```
    ///
    /// # Panics
    /// When `task` is not an initial task.
    pub fn enqueue_initial(&mut self, w: usize, task: usize) {
        let initial = self.tree.initial();
        assert!(
            task < initial,
            "task {task} is not one of {initial} initial tasks"
        );
        self.workers[w]
            .queue
            .push_back(Queued::initial(task as u32));
        self.stealable += 1;
        if self.dealt {
            self.note_queue(w);
            self.wake_sleepers(self.now);
        }
    }

    /// The newest task in worker `w`'s queue (the owner's end), taken off it.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    /// // `ran` notes the task it is given, if any, and runs it.
    ///
    /// struct Log(Vec<usize>);
    /// impl Policy for Log {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    ///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    ///         ran(&mut self.0, sim.pop_newest(w).or_else(|| sim.take_held(w)))
    ///     }
    /// }
    /// let mut log = Log(Vec::new());
    /// run(&mut log, 1);
    /// assert_eq!(log.0[..6], [0, 5, 4, 1, 7, 6], "each tile's children newest first");
    /// ```
    pub fn pop_newest(&mut self, w: usize) -> Option<Queued> {
        let popped = self.workers[w].queue.pop_back();
        self.stealable -= usize::from(popped.is_some());
        popped
    }

    /// The oldest task in worker `w`'s queue (the thieves' end), taken off it.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    /// // `ran` notes the task it is given, if any, and runs it.
    ///
    /// struct Log(Vec<usize>);
    /// impl Policy for Log {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    ///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    ///         ran(&mut self.0, sim.pop_oldest(w).or_else(|| sim.take_held(w)))
    ///     }
    /// }
    /// let mut log = Log(Vec::new());
    /// run(&mut log, 1);
    /// assert_eq!(log.0[..6], [0, 4, 5, 1, 6, 7], "each tile's children oldest first");
    /// ```
    pub fn pop_oldest(&mut self, w: usize) -> Option<Queued> {
        let popped = self.workers[w].queue.pop_front();
        self.stealable -= usize::from(popped.is_some());
        popped
    }

    /// The task worker `w` holds to run next ([`Children::NewestNext`]), taken.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    /// // `ran` notes the task it is given, if any, and runs it.
    ///
    /// struct Log(Vec<usize>);
    /// impl Policy for Log {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::NewestNext
    /// #     }
    ///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    ///         let next = sim.take_next(w).or_else(|| sim.pop_newest(w));
    ///         ran(&mut self.0, next.or_else(|| sim.take_held(w)))
    ///     }
    /// }
    /// let mut log = Log(Vec::new());
    /// run(&mut log, 1);
    /// // Task 5, the newest child, ran next; task 4 waited in the deque.
    /// assert_eq!(log.0[..3], [0, 5, 4]);
    /// ```
    pub fn take_next(&mut self, w: usize) -> Option<Queued> {
        self.workers[w].next.take()
    }

    /// How many tasks wait in worker `w`'s queue.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Share;
    /// impl Policy for Share {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         assert_eq!(sim.queued(w), 0);
    ///         sim.enqueue_initial(w, w);
    ///         sim.enqueue_initial(w, w + 2);
    ///         assert_eq!(sim.queued(w), 2);
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// run(&mut Share, 2);
    /// ```
    pub fn queued(&self, w: usize) -> usize {
        self.workers[w].queue.len()
    }

    /// The depth in the spawn tree of the oldest task in worker `w`'s queue, if any.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Share;
    /// impl Policy for Share {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         assert_eq!(sim.oldest_depth(w), None);
    ///         sim.enqueue_initial(w, w);
    ///         sim.enqueue_initial(w, w + 2);
    ///         assert_eq!(sim.oldest_depth(w), Some(0), "an initial task");
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// run(&mut Share, 2);
    /// ```
    pub fn oldest_depth(&self, w: usize) -> Option<u32> {
        self.workers[w].oldest_depth()
    }

    /// How many workers are searching for work to steal.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct NextDoor;
    /// impl Policy for NextDoor {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         if w == 0 {
    /// #             sim.hold(0, 0..sim.initial_tasks());
    /// #         }
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Deque
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Steal, Next::Run)
    /// #     }
    ///     fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
    ///         assert!(sim.searching() >= 1, "the thief itself searches");
    ///         Victim { worker: (w + 1) % sim.workers(), probes: 0 }
    ///     }
    /// #     fn steal_amount(&self) -> StealAmount {
    /// #         StealAmount::One
    /// #     }
    /// }
    /// assert!(run(&mut NextDoor, 2).steal_successes() >= 1);
    /// ```
    pub fn searching(&self) -> usize {
        self.thieves.load(Ordering::Relaxed) as usize
    }

    /// The workers as the balancers' victim selection reads them (what
    /// [`queued`](Self::queued) and [`oldest_depth`](Self::oldest_depth) say of each), and the
    /// count of workers searching ([`searching`](Self::searching)).
    pub(super) fn prospects(&self) -> (&[impl Prospect], &AtomicU64) {
        (&self.workers, &self.thieves)
    }
}

impl<'a> Simulation<'a> {
    /// The run's start: every worker holding what `policy` deals it, each about to take its
    /// first task at time 0.
    fn new<P: Policy + ?Sized>(
        tree: &'a TaskTree,
        seconds: &'a [f64],
        workers: usize,
        costs: &'a Costs,
        policy: &mut P,
    ) -> Self {
        let workers = (0..workers).map(|w| Worker::new(w, costs.timing)).collect();
        let mut sim = Self {
            tree,
            seconds,
            costs,
            workers,
            events: BinaryHeap::new(),
            seq: 0,
            depth: depths(tree),
            finished: 0,
            makespan: 0.0,
            outstanding: 0,
            peak_outstanding: 0,
            thieves: AtomicU64::new(0),
            stealable: 0,
            sleepers: Vec::new(),
            started: vec![false; tree.len()],
            now: 0.0,
            dealt: false,
        };
        for w in 0..sim.workers.len() {
            policy.deal(&mut sim, w);
        }
        sim.dealt = true;
        for w in 0..sim.workers.len() {
            sim.schedule(0.0, Event::Step { worker: w as u32 });
        }
        sim
    }

    fn schedule(&mut self, at: f64, event: Event) {
        self.seq += 1;
        self.events.push(Scheduled {
            at,
            seq: self.seq,
            event,
        });
    }

    /// Takes every event in turn, asking `policy` at each decision, until none is left.
    fn run(&mut self, policy: &mut (impl Policy + ?Sized)) {
        while let Some(Scheduled { at, event, .. }) = self.events.pop() {
            self.now = at;
            match event {
                Event::Spawn { worker, task } => self.spawn(policy, at, worker as usize, task),
                Event::Step { worker } => self.step(policy, at, worker as usize),
                Event::Steal { thief, victim } => {
                    self.steal(policy, at, thief as usize, victim as usize);
                }
            }
        }
        let left = self.tree.len() - self.finished;
        assert!(
            left == 0,
            "the policy stopped every worker with {left} of {} tasks never run",
            self.tree.len()
        );
        // Thieves asleep at the end tried until the last task finished.
        for (w, since) in std::mem::take(&mut self.sleepers) {
            let missed = ((self.makespan - since) / self.costs.failed_steal)
                .floor()
                .max(0.0);
            let worker = &mut self.workers[w as usize];
            worker.result.steal_attempts += missed as u64;
            worker.searching = false;
        }
    }

    fn result(self) -> SimResult {
        SimResult {
            makespan: self.makespan,
            work: self.seconds.iter().sum(),
            workers: self.workers.into_iter().map(|w| w.result).collect(),
            peak_outstanding: self.peak_outstanding,
        }
    }

    /// `worker` is free at `now`: it finishes the task it ran, then runs the task it stole,
    /// if one has just arrived, or takes the next from where `policy` says.
    fn step(&mut self, policy: &mut (impl Policy + ?Sized), now: f64, w: usize) {
        if let Some(done) = self.workers[w].running.take() {
            self.finish(policy, now, w, done);
        }
        if let Some(stolen) = self.workers[w].stolen.take() {
            return self.start(policy, now, w, stolen);
        }
        match policy.next_task(self, now, w) {
            Next::Run(q) => self.start(policy, now, w, q),
            Next::At(at) => {
                assert!(
                    at >= now,
                    "worker {w} asked at {now} s to wait until {at} s"
                );
                self.schedule(at, Event::Step { worker: w as u32 });
            }
            Next::Steal if self.finished == self.tree.len() => self.stop_searching(w),
            Next::Steal => self.attempt(policy, now, w),
            Next::Done => {}
        }
    }

    /// `done` has finished on `w` at `now`: children that `policy` keeps with their worker
    /// wait on its queue from now, in the order of spawning (where a policy that steals would
    /// find them too).
    fn finish(&mut self, policy: &(impl Policy + ?Sized), now: f64, w: usize, done: Queued) {
        self.finished += 1;
        self.makespan = self.makespan.max(now);
        if policy.children() == Children::Kept {
            let children = self.tree.children(done.task());
            let kept = children.len();
            for child in children {
                let queued = Queued::new(child as u32, done.depth() + 1);
                self.workers[w].queue.push_back(queued);
            }
            self.outstanding += kept as u64;
            self.stealable += kept;
            self.note_queue(w);
            if kept > 0 {
                self.wake_sleepers(now);
            }
        }
    }

    /// Starts `q` on worker `w` at `now`: unless `policy` keeps them, its children are
    /// spawned as it runs, and it pays for those that pass through the deque.
    fn start(&mut self, policy: &(impl Policy + ?Sized), now: f64, w: usize, q: Queued) {
        let i = q.task();
        assert!(!self.started[i], "task {i} started twice");
        self.started[i] = true;
        if i >= self.tree.initial() {
            self.outstanding -= 1;
        }
        let cost = self.seconds[i];
        let children = self.tree.children(i);
        let mut busy = cost;
        let push_pop = policy.push_pop(self.costs);
        for _ in 0..policy.children().through_deque(children.len()) {
            busy += self.draw(w, push_pop);
        }
        if policy.children() != Children::Kept {
            for child in children {
                let at = now + cost * self.tree.spawned_at(child);
                self.schedule(
                    at,
                    Event::Spawn {
                        worker: w as u32,
                        task: child as u32,
                    },
                );
            }
        }
        let worker = &mut self.workers[w];
        worker.running = Some(q);
        worker.result.tasks += 1;
        worker.result.busy += busy;
        self.schedule(now + busy, Event::Step { worker: w as u32 });
    }

    /// A running task on `w` spawns `task`: it goes where `policy` says, the task run next
    /// or the deque, and whatever enters the deque wakes the sleeping thieves.
    fn spawn(&mut self, policy: &(impl Policy + ?Sized), now: f64, w: usize, task: u32) {
        let depth = self.depth[task as usize];
        self.outstanding += 1;
        let worker = &mut self.workers[w];
        let queued = Queued::new(task, depth);
        let into_deque = match policy.children() {
            Children::NewestNext => worker.next.replace(queued),
            Children::Deque => Some(queued),
            Children::Kept => unreachable!("kept children wait for their parent's end"),
        };
        if let Some(queued) = into_deque {
            worker.queue.push_back(queued);
            self.stealable += 1;
            self.wake_sleepers(now);
        }
        self.note_queue(w);
    }

    /// Work has entered a deque at `now`: every sleeping thief resumes its search at the
    /// first attempt it would have made from now on, its attempts while asleep counted as
    /// failed ones.
    ///
    /// Under [`Timing::Exponential`] the attempts while asleep are counted at their mean
    /// rate, and the next comes a draw after now (a Poisson process has no memory).
    fn wake_sleepers(&mut self, now: f64) {
        let every = self.costs.failed_steal;
        for (w, since) in std::mem::take(&mut self.sleepers) {
            // It would have tried at `since + k · every` for k = 1, 2, …: those before now
            // failed, the first at or after now is its next.
            let next = ((now - since) / every).ceil().max(1.0);
            self.workers[w as usize].result.steal_attempts += next as u64 - 1;
            let at = match self.costs.timing {
                Timing::Fixed => (since + next * every).max(now),
                Timing::Exponential { .. } => after(now, self.draw(w as usize, every)),
            };
            self.schedule(at, Event::Step { worker: w });
        }
    }

    /// Records the queue lengths after a change.
    fn note_queue(&mut self, w: usize) {
        let worker = &mut self.workers[w];
        // As the balancers count it: what waits in the queue (not the task run next).
        let queued = worker.queue.len() as u64;
        worker.result.peak_queued = worker.result.peak_queued.max(queued);
        self.peak_outstanding = self.peak_outstanding.max(self.outstanding);
    }

    /// Worker `w`, with nothing to run at `now`, tries a victim: chosen now (after reading
    /// the workers `sample` reads), reached one step later.
    fn attempt(&mut self, policy: &mut (impl Policy + ?Sized), now: f64, w: usize) {
        let worker = &mut self.workers[w];
        if !worker.searching {
            worker.searching = true;
            policy.begin_search(w);
            self.thieves.fetch_add(1, Ordering::Relaxed);
        }
        let Victim {
            worker: victim,
            probes,
        } = policy.choose_victim(self, w);
        let workers = self.workers.len();
        assert!(
            victim < workers,
            "worker {w} chose worker {victim} of {workers}"
        );
        self.workers[w].result.steal_attempts += 1;
        let mut arrive = now;
        for _ in 0..probes {
            arrive += self.draw(w, self.costs.probe);
        }
        self.schedule(
            arrive,
            Event::Steal {
                thief: w as u32,
                victim: victim as u32,
            },
        );
    }

    /// `thief`'s attempt reaches `victim`'s deque at `now`.
    fn steal(
        &mut self,
        policy: &mut (impl Policy + ?Sized),
        now: f64,
        thief: usize,
        victim: usize,
    ) {
        let available = self.workers[victim].queue.len();
        if available > 0 && now < self.workers[victim].stolen_until {
            // Another thief holds the victim's top: this attempt fails, and the search goes
            // on.
            policy.failed_attempt(thief);
            return self.retry(now, thief);
        }
        if available == 0 {
            if self.finished == self.tree.len() {
                self.stop_searching(thief);
                return;
            }
            policy.failed_attempt(thief);
            if self.stealable == 0 {
                // No deque holds work: every attempt fails until some task is pushed.
                self.sleepers.push((thief as u32, now));
                return;
            }
            // The search goes on at the thief's next step.
            return self.retry(now, thief);
        }
        let amount = policy.steal_amount();
        let count = match amount {
            StealAmount::One => 1,
            StealAmount::Half => available.div_ceil(2).min(amount.at_most()),
        };
        self.take(now, thief, victim, count);
    }

    /// `thief`'s attempt at `now` failed: it steps again a failed steal's time later.
    fn retry(&mut self, now: f64, thief: usize) {
        let retry = self.draw(thief, self.costs.failed_steal);
        self.schedule(
            after(now, retry),
            Event::Step {
                worker: thief as u32,
            },
        );
    }

    /// `thief` takes the `count` oldest tasks of `victim`'s deque at `now`: the first runs
    /// once they have travelled, the rest go to the thief's deque.
    fn take(&mut self, now: f64, thief: usize, victim: usize, count: usize) {
        let mut loot: VecDeque<Queued> = self.workers[victim].queue.drain(..count).collect();
        // All but the first enter the thief's deque: one task fewer for thieves to find.
        self.stealable -= 1;
        self.stop_searching(thief);
        let worker = &mut self.workers[thief];
        worker.result.steal_successes += 1;
        worker.result.tasks_stolen += count as u64;
        // The oldest runs first; the rest wait in the thief's deque, oldest first, as the
        // balancer pushes them.
        worker.stolen = loot.pop_front();
        worker.queue.extend(loot);
        self.note_queue(thief);
        let copy = self.draw(thief, (count - 1) as f64 * self.costs.per_stolen_task);
        let start = now + self.draw(thief, self.costs.steal) + copy;
        // The victim's top is held while the tasks are taken, not while they travel.
        self.workers[victim].stolen_until = now + copy + self.costs.per_stolen_task;
        self.schedule(
            start,
            Event::Step {
                worker: thief as u32,
            },
        );
    }

    /// `w` stops searching: it found work, or every task has finished.
    fn stop_searching(&mut self, w: usize) {
        let worker = &mut self.workers[w];
        if worker.searching {
            worker.searching = false;
            self.thieves.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::model::CostModel;
    use super::super::tree::{MAX_FEATURES, NO_PARENT, RecordedTask};
    use super::*;
    use crate::RayonScope;
    use crate::order::Order;
    use crate::static_tiles::Assignment;
    use crate::stealing::{DequeKind, WorkStealing};
    use crate::victim::VictimPolicy;

    /// A tree from `(parent, spawned at, seconds)` per task, in canonical order (initial
    /// tasks first, then children grouped by parent in order), and the tasks' seconds.
    fn tree(tasks: &[(Option<usize>, f64, f64)]) -> (TaskTree, Vec<f64>) {
        const SCALE: f64 = 1e6;
        let mut count = vec![0u32; tasks.len()];
        let recorded: Vec<RecordedTask> = tasks
            .iter()
            .enumerate()
            .map(|(i, &(parent, _, seconds))| {
                let mut work = [0; MAX_FEATURES];
                work[0] = (seconds * SCALE) as u32;
                let (parent, index) = match parent {
                    None => (NO_PARENT, i as u32),
                    Some(p) => {
                        count[p] += 1;
                        (p as u64, count[p] - 1)
                    }
                };
                RecordedTask {
                    id: i as u64,
                    parent,
                    index,
                    kind: 0,
                    depth: 0,
                    place: i as u32,
                    work,
                    progress_at_spawn: 0,
                    progress: 0,
                }
            })
            .collect();
        // Progress in parts of a million of the parent's work.
        let recorded: Vec<RecordedTask> = recorded
            .into_iter()
            .enumerate()
            .map(|(i, mut r)| {
                r.progress = 1_000_000;
                r.progress_at_spawn = (tasks[i].1 * 1e6) as u64;
                r
            })
            .collect();
        let model = CostModel {
            per_task: 0.0,
            per_unit: vec![1.0 / SCALE],
            fit: None,
        };
        let tree = TaskTree::from_recorded(
            String::new(),
            vec!["task".into()],
            vec!["work".into()],
            model,
            &recorded,
        )
        .unwrap();
        let seconds = tree.costs(&tree.model);
        (tree, seconds)
    }

    fn free() -> Costs {
        Costs {
            abp_push_pop: 0.0,
            locked_push_pop: 0.0,
            steal: 0.0,
            failed_steal: 0.5,
            per_stolen_task: 0.0,
            probe: 0.0,
            counter: 0.0,
            rayon_job: 0.0,
            timing: Timing::Fixed,
            sampling: Sampling::default(),
        }
    }

    fn stealing(victim: VictimPolicy, amount: StealAmount) -> BalancerKind {
        BalancerKind::Stealing(WorkStealing {
            deque: DequeKind::Abp,
            victim,
            amount,
            assignment: Assignment::Interleaved,
            order: Order::DepthFirst,
        })
    }

    fn counter(chunk: usize) -> BalancerKind {
        BalancerKind::counter(std::num::NonZeroUsize::new(chunk).unwrap())
    }

    /// A (4 s) spawns C (3 s) halfway and D (2 s) at its end; B takes 1 s.
    fn small() -> (TaskTree, Vec<f64>) {
        tree(&[
            (None, 0.0, 4.0),
            (None, 0.0, 1.0),
            (Some(0), 0.5, 3.0),
            (Some(0), 1.0, 2.0),
        ])
    }

    #[test]
    fn a_hand_worked_tree_ends_when_each_policy_says() {
        let (t, s) = small();
        let free = free();
        // static: worker 0 runs A [0, 4], then D (newest) [4, 6], then C [6, 9]; worker 1
        // runs B [0, 1] and stops.
        let r = simulate(
            &t,
            &s,
            BalancerKind::static_tiles(Assignment::Interleaved),
            2,
            &free,
        );
        assert_eq!(r.makespan, 9.0);
        assert_eq!(r.workers[1].tasks, 1);
        // counter: the same shares, taken from the counter.
        let r = simulate(&t, &s, counter(1), 2, &free);
        assert_eq!(r.makespan, 9.0);
        // stealing: worker 1 tries worker 0 every 0.5 s from 1 s; C is in `next` from 2 s
        // and enters the deque when D is spawned at 4 s, where that attempt finds it: C runs
        // on worker 1 [4, 7], D on worker 0 [4, 6].
        for amount in [StealAmount::One, StealAmount::Half] {
            let r = simulate(&t, &s, stealing(VictimPolicy::Random, amount), 2, &free);
            assert_eq!(r.makespan, 7.0, "{amount:?}");
            assert_eq!(r.workers[1].steal_attempts, 7, "1, 1.5, …, 4 s");
            assert_eq!(r.workers[1].steal_successes, 1);
            assert_eq!(r.workers[1].tasks, 2);
        }
        // rayon: both tiles start in worker 0's deque; it runs B (the last) [0, 1] while
        // worker 1 steals A [0, 4]; C and D go to worker 1's deque as A spawns them; worker 0,
        // waiting since 1 s, takes C when it appears at 2 s [2, 5]; worker 1 runs D [4, 6].
        let r = simulate(&t, &s, BalancerKind::Rayon(RayonScope), 2, &free);
        assert_eq!(r.makespan, 6.0);
        assert_eq!(r.workers[0].tasks, 2);
        assert_eq!(r.workers[1].tasks, 2);
        // One worker: everything in a row, whatever the policy.
        for policy in [
            BalancerKind::Rayon(RayonScope),
            BalancerKind::static_tiles(Assignment::Blocked),
            counter(3),
            stealing(VictimPolicy::Sample, StealAmount::Half),
        ] {
            let r = simulate(&t, &s, policy, 1, &free);
            assert_eq!(r.makespan, 10.0, "{policy:?}");
            assert_eq!(r.speedup(), 1.0);
        }
    }

    #[test]
    fn rayon_loses_its_job_cost_once_a_spawned_task_however_many_workers() {
        let (tree, seconds) = super::super::wool::tree(1024, 3);
        let spawned = (tree.len() - tree.initial()) as f64;
        let job = 1e-3;
        for workers in [4, 16] {
            let rayon = BalancerKind::Rayon(RayonScope);
            let without = simulate(&tree, &seconds, rayon, workers, &free()).makespan;
            let costs = Costs {
                rayon_job: job,
                ..free()
            };
            let with = simulate(&tree, &seconds, rayon, workers, &costs).makespan;
            let lost = (with - without) / (spawned * job);
            assert!((0.7..1.5).contains(&lost), "{workers} workers: {lost}");
        }
    }

    #[test]
    fn costs_add_where_they_arise() {
        let (t, s) = small();
        let costs = Costs {
            counter: 0.25,
            ..free()
        };
        // Both workers reach the counter at 0: one served at 0.25, the other at 0.5; worker
        // 0 (served first, A) ends at 0.25 + 9.
        let r = simulate(&t, &s, counter(1), 2, &costs);
        assert_eq!(r.makespan, 9.25);
        let costs = Costs {
            steal: 0.25,
            ..free()
        };
        let r = simulate(
            &t,
            &s,
            stealing(VictimPolicy::Random, StealAmount::One),
            2,
            &costs,
        );
        assert_eq!(r.makespan, 7.25, "C starts on worker 1 a steal later");
    }

    /// A random tree of `n` tasks, `initial` of them initial.
    fn random_tree(n: usize, initial: usize, seed: u64) -> (TaskTree, Vec<f64>) {
        let mut rng = crate::victim::XorShift::new(seed);
        let mut tasks = Vec::with_capacity(n);
        for _ in 0..initial {
            tasks.push((None, 0.0, 1.0 + rng.below(100) as f64 / 10.0));
        }
        // Children grouped by parent, parents in order: each new task's parent is at or
        // after the previous one's.
        let mut parent = 0;
        for i in initial..n {
            parent = (parent + rng.below(3)).min(i - 1);
            let at = rng.below(1001) as f64 / 1000.0;
            tasks.push((Some(parent), at, rng.below(50) as f64 / 10.0));
        }
        // `spawned at` must not fall as a parent spawns: sort each parent's children by it.
        let mut start = initial;
        while start < n {
            let p = tasks[start].0;
            let mut end = start;
            while end < n && tasks[end].0 == p {
                end += 1;
            }
            tasks[start..end].sort_by(|a, b| a.1.total_cmp(&b.1));
            start = end;
        }
        tree(&tasks)
    }

    #[test]
    fn every_policy_runs_every_task_once_and_no_faster_than_possible() {
        let (t, s) = random_tree(400, 20, 7);
        let work: f64 = s.iter().sum();
        let costs = Costs::default();
        // Every variant the byte-compare matrix runs: both dealings, two chunks, the twelve
        // of stealing and rayon.
        let policies = BalancerKind::every_variant();
        for policy in policies {
            for workers in [1, 2, 3, 8, 64] {
                let r = simulate(&t, &s, policy, workers, &costs);
                let tasks: u64 = r.workers.iter().map(|w| w.tasks).sum();
                assert_eq!(tasks, t.len() as u64, "{policy:?} on {workers}");
                let busy: f64 = r.workers.iter().map(|w| w.busy).sum();
                assert!(busy >= work * (1.0 - 1e-12), "{policy:?} on {workers}");
                assert!(
                    r.makespan >= work / workers as f64 * (1.0 - 1e-12),
                    "{policy:?} on {workers}"
                );
                assert!(r.idle_share() >= -1e-12 && r.idle_share() < 1.0);
                assert_eq!(
                    r,
                    simulate(&t, &s, policy, workers, &costs),
                    "the same run twice"
                );
            }
        }
    }

    #[test]
    fn breadth_first_holds_a_generation_where_depth_first_holds_a_subtree() {
        // Two initial tasks of 1 s, each spawning three children of 1 s at its end.
        let mut tasks = vec![(None, 0.0, 1.0), (None, 0.0, 1.0)];
        tasks.extend([(Some(0), 1.0, 1.0); 3]);
        tasks.extend([(Some(1), 1.0, 1.0); 3]);
        let (t, s) = tree(&tasks);
        let free = free();
        for policy in [
            BalancerKind::static_tiles(Assignment::Interleaved),
            counter(1),
            stealing(VictimPolicy::Random, StealAmount::One),
        ] {
            let depth_first = simulate(&t, &s, policy, 1, &free);
            let breadth_first = policy.with_order(Order::BreadthFirst).unwrap();
            let breadth_first = simulate(&t, &s, breadth_first, 1, &free);
            assert_eq!(depth_first.makespan, 8.0, "{policy:?}");
            assert_eq!(breadth_first.makespan, 8.0, "{policy:?}");
            assert_eq!(depth_first.peak_outstanding, 3, "{policy:?}");
            assert_eq!(breadth_first.peak_outstanding, 6, "{policy:?}");
        }
        // On two workers each tree stays on its worker in either order: four seconds.
        for order in [Order::DepthFirst, Order::BreadthFirst] {
            let policy = stealing(VictimPolicy::Random, StealAmount::One);
            let r = simulate(&t, &s, policy.with_order(order).unwrap(), 2, &free);
            assert_eq!(r.makespan, 4.0, "{order:?}");
        }
    }

    #[test]
    fn stealing_balances_what_static_cannot() {
        // One initial task spawns everything: static leaves all but one worker idle.
        let mut tasks = vec![(None, 0.0, 0.1)];
        for _ in 0..200 {
            tasks.push((Some(0), 1.0, 1.0));
        }
        let (t, s) = tree(&tasks);
        let costs = Costs::default();
        let fixed = simulate(
            &t,
            &s,
            BalancerKind::static_tiles(Assignment::Interleaved),
            8,
            &costs,
        );
        let stolen = simulate(
            &t,
            &s,
            stealing(VictimPolicy::Random, StealAmount::Half),
            8,
            &costs,
        );
        assert!(fixed.makespan > 200.0);
        assert!(stolen.makespan < 30.0, "{}", stolen.makespan);
        assert!(stolen.steal_successes() > 7);
    }

    /// A policy written as one outside the crate would be: every worker's share held, its
    /// spawned tasks kept, and a worker with nothing left steals the oldest task of the
    /// worker whose queue is longest.
    #[derive(Debug, Default)]
    struct KeptAndStolen {
        searches: usize,
        failed: usize,
    }

    impl Policy for KeptAndStolen {
        fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
            let (workers, initial) = (sim.workers(), sim.initial_tasks());
            sim.hold(w, (w..initial).step_by(workers));
        }

        fn children(&self) -> Children {
            Children::Kept
        }

        fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
            let own = sim.pop_newest(w).or_else(|| sim.take_held(w));
            own.map_or(Next::Steal, Next::Run)
        }

        fn begin_search(&mut self, _w: usize) {
            self.searches += 1;
        }

        fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
            let others = (0..sim.workers()).filter(|&v| v != w);
            let longest = others.max_by_key(|&v| sim.queued(v)).unwrap_or(w);
            Victim {
                worker: longest,
                probes: sim.workers() - 1,
            }
        }

        fn failed_attempt(&mut self, _w: usize) {
            self.failed += 1;
        }

        fn steal_amount(&self) -> StealAmount {
            StealAmount::One
        }
    }

    #[test]
    fn a_policy_of_ones_own_runs_every_task_once_through_the_public_view() {
        let (t, s) = random_tree(400, 20, 11);
        let work: f64 = s.iter().sum();
        for workers in [1, 2, 3, 8, 64] {
            let mut policy = KeptAndStolen::default();
            let r = simulate_policy(&t, &s, workers, &Costs::default(), &mut policy);
            let tasks: u64 = r.workers.iter().map(|w| w.tasks).sum();
            assert_eq!(tasks, t.len() as u64, "on {workers}");
            assert!(r.makespan >= work / workers as f64 * (1.0 - 1e-12));
            let failed = r.steal_attempts() - r.steal_successes();
            assert!(failed >= policy.failed as u64, "on {workers}");
            if workers > 1 {
                assert!(r.steal_successes() > 0, "kept tasks are found by thieves");
                assert!(policy.searches > 0);
            }
        }
    }

    /// `static` again, with one task dealt to two workers.
    #[derive(Debug)]
    struct DealsTwice;

    impl Policy for DealsTwice {
        fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
            sim.hold(w, 0..sim.initial_tasks());
        }

        fn children(&self) -> Children {
            Children::Kept
        }

        fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
            let next = sim.pop_newest(w).or_else(|| sim.take_held(w));
            next.map_or(Next::Done, Next::Run)
        }
    }

    #[test]
    #[should_panic(expected = "started twice")]
    fn a_policy_that_runs_a_task_twice_is_stopped() {
        let (t, s) = small();
        simulate_policy(&t, &s, 2, &free(), &mut DealsTwice);
    }

    #[test]
    #[should_panic(expected = "never run")]
    fn a_policy_that_leaves_tasks_behind_is_stopped() {
        /// Deals nothing, so nothing runs.
        #[derive(Debug)]
        struct Idle;
        impl Policy for Idle {
            fn deal(&mut self, _sim: &mut Simulation<'_>, _w: usize) {}
            fn children(&self) -> Children {
                Children::Kept
            }
            fn next_task(&mut self, _sim: &mut Simulation<'_>, _now: f64, _w: usize) -> Next {
                Next::Done
            }
        }
        let (t, s) = small();
        simulate_policy(&t, &s, 2, &free(), &mut Idle);
    }

    #[test]
    #[should_panic(expected = "not one of 2 initial tasks")]
    fn a_policy_may_hold_only_initial_tasks() {
        /// Holds a spawned task as if it were an initial one.
        #[derive(Debug)]
        struct HoldsASpawned;
        impl Policy for HoldsASpawned {
            fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
                sim.hold(w, [w + 2]);
            }
            fn children(&self) -> Children {
                Children::Kept
            }
            fn next_task(&mut self, _sim: &mut Simulation<'_>, _now: f64, _w: usize) -> Next {
                Next::Done
            }
        }
        let (t, s) = small();
        simulate_policy(&t, &s, 2, &free(), &mut HoldsASpawned);
    }

    #[test]
    fn every_built_in_policy_through_its_box_runs_as_simulate_runs_it() {
        use super::super::policy::{DynSimulated, Simulated};
        let (t, s) = random_tree(300, 12, 5);
        let costs = Costs {
            timing: Timing::Exponential { seed: 3 },
            ..Costs::default()
        };
        for balancer in BalancerKind::every_variant() {
            for workers in [1, 3, 16] {
                let expected = simulate(&t, &s, balancer, workers, &costs);
                let mut boxed = balancer.policy(workers, &costs);
                let r = simulate_policy(&t, &s, workers, &costs, &mut *boxed);
                assert_eq!(r, expected, "{balancer:?} on {workers}");
                let any: &dyn DynSimulated = &balancer;
                let mut boxed = any.simulated_policy(workers, &costs);
                let r = simulate_policy(&t, &s, workers, &costs, &mut *boxed);
                assert_eq!(r, expected, "{balancer:?} on {workers}");
            }
        }
    }
}
