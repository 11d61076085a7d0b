//! `stealing`: one deque per worker, pre-filled with the worker's static share of the
//! initial tasks; a worker runs one child of each task next and pushes the others (or,
//! breadth-first, pushes them all and takes its oldest task from the thieves' end); a worker
//! that runs dry steals from others.

use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::thread;
use std::time::Instant;

use crate::balancer::{Balancer, Outcome, Spawn, SpawnError, Stop, TaskRunner, run_workers};
use crate::choice::Choice;
use crate::deque::{self, Family, Steal};
use crate::order::Order;
use crate::static_tiles::Assignment;
use crate::sync::{AtomicU64, Ordering};
use crate::telemetry::WorkerTelemetry;
use crate::termination::Termination;
use crate::victim::{Prospect, VictimPolicy, VictimSelector};

/// Which deque the workers use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DequeKind {
    /// The non-blocking Arora–Blumofe–Plaxton deque ([`deque::abp`]).
    Abp,
    /// The blocking deque under a spin lock ([`deque::locked`]).
    Locked,
}

/// How much a successful steal takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealAmount {
    /// The victim's oldest task.
    One,
    /// Half of the victim's tasks (rounded up), oldest first, into the thief's own deque.
    Half,
}

impl StealAmount {
    /// The most tasks one steal takes ([`STEAL_HALF_AT_MOST`] for half).
    pub(crate) fn at_most(self) -> usize {
        match self {
            StealAmount::One => 1,
            StealAmount::Half => STEAL_HALF_AT_MOST,
        }
    }
}

/// Work stealing (Blumofe and Leiserson; Wende, chapter 3): each worker owns a deque,
/// pre-filled with its static share of the initial tasks (dealt as `assignment` says). A
/// worker runs one child of each task right after it (the newest) and pushes the others, so
/// that its newest work is at hand and its oldest, largest pieces are what thieves find. A worker
/// whose deque is empty picks victims as `victim` says and steals `amount` from them; the run
/// ends when no task is left anywhere ([`crate::termination`]).
///
/// Breadth-first (`order`), a worker takes its own tasks from the same end as thieves, the
/// oldest first: its whole share of initial tasks, then what they spawned, generation by
/// generation; every spawned task goes to the deque.
///
/// ```
/// use balancers::{Balancer, DequeKind, VictimPolicy, WorkStealing};
///
/// let wool = WorkStealing {
///     deque: DequeKind::Locked,
///     victim: VictimPolicy::Set,
///     ..WorkStealing::default()
/// };
/// assert_eq!(wool.name(), "stealing/locked/set/half");
/// balancers::conformance::check(&wool).unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkStealing {
    /// The deque kind.
    pub deque: DequeKind,
    /// Victim selection.
    pub victim: VictimPolicy,
    /// One task or half of them per steal.
    pub amount: StealAmount,
    /// How the initial tasks are dealt out before the run.
    pub assignment: Assignment,
    /// Which of its own tasks a worker runs first: the newest (depth-first) or the oldest.
    pub order: Order,
}

impl Default for WorkStealing {
    /// The non-blocking deque, random victims, steal half, interleaved shares.
    fn default() -> Self {
        Self {
            deque: DequeKind::Abp,
            victim: VictimPolicy::Random,
            amount: StealAmount::Half,
            assignment: Assignment::Interleaved,
            order: Order::DepthFirst,
        }
    }
}

/// Tasks a deque holds: 2^14. A tile task can spawn one child per pixel at once (a 128-pixel
/// tile, 16,384), and a worker's static share of initial tasks is pushed at the start; what
/// does not fit waits in a private overflow (spawned tasks: depth-first run before the
/// deque's, breadth-first after them) or backlog (initial tasks). At 48 bytes a task that is
/// 0.8 MiB per worker.
pub(crate) const CAPACITY: usize = 1 << 14;

/// The most tasks one steal-half takes. Each further task costs the thief a fence and a
/// compare-and-swap while it keeps other thieves off that victim (the `abp` deque's `busy`
/// bit, the `locked` deque's lock); 64 tasks of microseconds each keep a thief busy far longer
/// than its next steal takes, which is all that stealing half is for.
pub(crate) const STEAL_HALF_AT_MOST: usize = 64;

/// Failed steal attempts between yields of the processor: thieves that only spun would take
/// time slices from workers that have work when threads outnumber cores. The benchmarks'
/// thieves (`raylb bench deque`, `bench costs`) pause at the same pace.
///
/// ```
/// // A thief's pause after its `failures`th failed attempt in a row.
/// let pause = |failures: u32| {
///     if failures.is_multiple_of(balancers::YIELD_EVERY) {
///         std::thread::yield_now();
///     } else {
///         std::hint::spin_loop();
///     }
/// };
/// (1..=8).for_each(pause);
/// ```
pub const YIELD_EVERY: u32 = 4;

/// A task in a deque, with its depth in the spawn tree (initial tasks are depth 0).
pub(crate) struct Job<T> {
    pub(crate) task: T,
    pub(crate) depth: u32,
}

impl Balancer for WorkStealing {
    fn name(&self) -> String {
        format!(
            "stealing/{}/{}/{}{}",
            self.deque.keyword(),
            self.victim.keyword(),
            self.amount.keyword(),
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
        match self.deque {
            DequeKind::Abp => self.run_with::<deque::Abp, T, R>(workers, tasks, runner),
            DequeKind::Locked => self.run_with::<deque::Locked, T, R>(workers, tasks, runner),
        }
    }
}

/// What one worker shares with thieves: its deque's stealer handle.
struct Victim<D: Family, T: Send>(D::Stealer<Job<T>>);

impl<D: Family, T: Send> Prospect for Victim<D, T> {
    fn len(&self) -> usize {
        D::stealer_len(&self.0)
    }
    fn oldest_depth(&self) -> Option<u32> {
        D::oldest_tag(&self.0)
    }
}

impl WorkStealing {
    fn run_with<D: Family, T, R>(
        &self,
        workers: NonZeroUsize,
        tasks: &[T],
        runner: &R,
    ) -> Result<Outcome<R::Local>, SpawnError>
    where
        T: Clone + Send + Sync,
        R: TaskRunner<T>,
    {
        let p = workers.get();
        let mut owners = Vec::with_capacity(p);
        let mut victims = Vec::with_capacity(p);
        for _ in 0..p {
            let (owner, stealer) = D::new::<Job<T>>(CAPACITY);
            // A mutex only to hand each worker its owner handle once, at its start.
            owners.push(Mutex::new(Some(owner)));
            victims.push(Victim::<D, T>(stealer));
        }
        let termination = Termination::new(p, tasks.len() as u64);
        let thieves = AtomicU64::new(0);
        // Read on the calling thread: a test's fault, armed there (`fault::LosesAStolenTask`).
        let loses_stolen = crate::fault::loses_stolen_tasks();
        let shared = Shared {
            tasks,
            runner,
            victims: &victims,
            termination: &termination,
            thieves: &thieves,
        };
        // A task that panics never counts as finished, and neither do the initial tasks of a
        // worker that could not be started, so the others would look for work forever:
        // `run_workers` tells them to stop then.
        run_workers(self.name(), workers, |me, telemetry, stop| {
            let owner = owners[me]
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take()
                .expect("each worker takes its own deque once");
            self.work(me, owner, &shared, stop, telemetry, loses_stolen)
        })
    }

    /// One worker's whole run.
    fn work<D: Family, T, R>(
        &self,
        me: usize,
        owner: D::Worker<Job<T>>,
        shared: &Shared<'_, D, T, R>,
        stop: &Stop,
        telemetry: &mut WorkerTelemetry,
        mut loses_stolen: bool,
    ) -> R::Local
    where
        T: Clone + Send + Sync,
        R: TaskRunner<T>,
    {
        let p = shared.victims.len();
        let mut local = shared.runner.local(me);
        // The static share, in order, in a private backlog that feeds the deque: a deque
        // holds at most `CAPACITY`, and a share can be larger.
        let mut backlog: Vec<Job<T>> = self
            .assignment
            .share(me, p, shared.tasks.len())
            .map(|i| Job {
                task: shared.tasks[i].clone(),
                depth: 0,
            })
            .collect();
        backlog.reverse();
        let mut state = Owner::<D, T>::new(me, self.order, owner, backlog, shared.termination);
        let mut finished = 0u64;
        let mut selector = VictimSelector::new(self.victim, me, p);
        let mut loot = Vec::new();
        while !stop.requested() {
            let job = match self.order {
                Order::DepthFirst => state.newest(),
                Order::BreadthFirst => state.oldest(&shared.victims[me].0, &mut loot),
            };
            let job = match job {
                Some(job) => job,
                None => {
                    match self.steal(
                        &mut state,
                        shared,
                        stop,
                        &mut selector,
                        &mut loot,
                        telemetry,
                    ) {
                        // The fault: the first stolen task counts as run, and is dropped.
                        Some(_) if loses_stolen => {
                            loses_stolen = false;
                            finished += 1;
                            shared.termination.finished(me, finished);
                            continue;
                        }
                        Some(job) => job,
                        None => break,
                    }
                }
            };
            telemetry.tasks += 1;
            telemetry.initial_tasks += u64::from(job.depth == 0);
            state.depth = job.depth + 1;
            shared.runner.run(job.task, &mut local, &mut state);
            finished += 1;
            shared.termination.finished(me, finished);
        }
        telemetry.spawned = state.created;
        telemetry.peak_queued = Some(state.peak);
        local
    }

    /// Looks for work until some is found (returned, to run next), the run is over or `stop`
    /// is requested.
    fn steal<D: Family, T, R>(
        &self,
        state: &mut Owner<'_, D, T>,
        shared: &Shared<'_, D, T, R>,
        stop: &Stop,
        selector: &mut VictimSelector,
        loot: &mut Vec<Job<T>>,
        telemetry: &mut WorkerTelemetry,
    ) -> Option<Job<T>>
    where
        T: Send,
    {
        let max = self.amount.at_most();
        let p = shared.victims.len();
        let search = Search {
            workers: p,
            thieves: shared.thieves,
            termination: shared.termination,
            stop,
        };
        search.run(selector, telemetry, |selector, telemetry| {
            let victim = selector.choose(shared.victims, shared.thieves);
            telemetry.steal_attempts += 1;
            let attempt = D::steal_into(&shared.victims[victim].0, loot, max);
            state.take_loot(attempt, loot, selector, telemetry)
        })
    }
}

/// A worker's search for work, as `stealing` and the CPU workers of
/// [`hybrid`](crate::hybrid) search: attempts on victims until one brings work back, the run is
/// over, or `stop` is requested, with the time counted as idle.
pub(crate) struct Search<'a> {
    /// Workers a victim may be chosen from (this one included).
    pub(crate) workers: usize,
    /// Workers searching now, for victim sets' walk lengths.
    pub(crate) thieves: &'a AtomicU64,
    pub(crate) termination: &'a Termination,
    pub(crate) stop: &'a Stop,
}

impl Search<'_> {
    /// Calls `attempt` (which chooses a victim with the selector, counts its attempt in the
    /// telemetry and says `selector.failed()` when it brings nothing) until it returns work,
    /// which is returned; `None` when the run is over or stopped.
    pub(crate) fn run<J>(
        &self,
        selector: &mut VictimSelector,
        telemetry: &mut WorkerTelemetry,
        mut attempt: impl FnMut(&mut VictimSelector, &mut WorkerTelemetry) -> Option<J>,
    ) -> Option<J> {
        let started = Instant::now();
        // Relaxed: a count for the victim sets' walk length, a hint.
        self.thieves.fetch_add(1, Ordering::Relaxed);
        selector.begin();
        let mut found = None;
        let mut failures = 0u32;
        loop {
            if self.workers > 1 {
                found = attempt(selector, telemetry);
                if found.is_some() {
                    break;
                }
            }
            failures += 1;
            // The termination check reads every worker's counters; once per few attempts is
            // often enough (the run's end is noticed a few attempts late at most).
            if (self.workers == 1 || failures.is_multiple_of(YIELD_EVERY))
                && self.termination.all_done()
            {
                break;
            }
            if self.stop.requested() {
                break;
            }
            if failures.is_multiple_of(YIELD_EVERY) {
                thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        self.thieves.fetch_sub(1, Ordering::Relaxed);
        telemetry.idle += started.elapsed();
        found
    }
}

/// What all workers of a run share.
struct Shared<'a, D: Family, T: Send, R> {
    tasks: &'a [T],
    runner: &'a R,
    victims: &'a [Victim<D, T>],
    termination: &'a Termination,
    /// Workers looking for work now.
    thieves: &'a AtomicU64,
}

/// A worker's own state while it runs tasks; also the [`Spawn`] handle its tasks get. Also
/// the CPU workers' of [`hybrid`](crate::hybrid), whose initial tasks wait in a shared pool
/// instead of the backlog.
pub(crate) struct Owner<'a, D: Family, T: Send> {
    pub(crate) me: usize,
    order: Order,
    deque: D::Worker<Job<T>>,
    /// Depth-first: the newest child of the current task, run right after the task.
    next: Option<Job<T>>,
    /// The worker's share of initial tasks not yet in the deque, earliest last.
    backlog: Vec<Job<T>>,
    /// Children that found the deque full. Depth-first, the newest is run first, before the
    /// deque is popped; breadth-first, they wait behind the deque in the order they came,
    /// and every child joins them while any wait (or while initial tasks wait in the backlog,
    /// which run before any child).
    overflow: VecDeque<Job<T>>,
    /// Tasks this worker has spawned.
    pub(crate) created: u64,
    /// Depth of the children of the task running now.
    pub(crate) depth: u32,
    /// The most tasks queued at once, in the deque and its overflow.
    pub(crate) peak: u64,
    termination: &'a Termination,
}

impl<'a, D: Family, T: Send> Owner<'a, D, T> {
    /// Worker `me`'s state, its deque holding the first of its `backlog` (kept in reverse
    /// order: the earliest last).
    pub(crate) fn new(
        me: usize,
        order: Order,
        deque: D::Worker<Job<T>>,
        backlog: Vec<Job<T>>,
        termination: &'a Termination,
    ) -> Self {
        let mut owner = Self {
            me,
            order,
            deque,
            next: None,
            backlog,
            overflow: VecDeque::new(),
            created: 0,
            depth: 0,
            peak: 0,
            termination,
        };
        owner.refill();
        owner
    }

    /// Depth-first: the task to run next, newest first: the current task's last child, the
    /// overflow's newest, the deque's newest, then the backlog's earliest.
    pub(crate) fn newest(&mut self) -> Option<Job<T>> {
        self.next
            .take()
            .or_else(|| self.overflow.pop_back())
            .or_else(|| {
                D::pop(&self.deque).or_else(|| {
                    self.refill();
                    D::pop(&self.deque)
                })
            })
    }

    /// Breadth-first: the task to run next, oldest first, taken from the thieves' end of the
    /// deque through this worker's own `stealer`; when the deque is empty, the backlog's
    /// initial tasks and then the overflow's oldest move into it first.
    fn oldest(&mut self, stealer: &D::Stealer<Job<T>>, loot: &mut Vec<Job<T>>) -> Option<Job<T>> {
        loop {
            match D::steal_into(stealer, loot, 1) {
                Steal::Success(_) => return loot.pop(),
                // A thief is taking from the same end: it is done in moments.
                Steal::Retry => std::hint::spin_loop(),
                Steal::Empty => {
                    // The owner's pop on an empty deque finds nothing, and returns its
                    // indices to the start of its array (the `abp` deque is not a ring), so
                    // that what moves in next has the whole of it.
                    if let Some(job) = D::pop(&self.deque) {
                        return Some(job);
                    }
                    if !self.backlog.is_empty() {
                        self.refill();
                    } else if !self.overflow.is_empty() {
                        // Up to half the deque's room, oldest first; a push the deque refuses
                        // (none should, as it has just been emptied) puts the task back.
                        for _ in 0..CAPACITY / 2 {
                            let Some(job) = self.overflow.pop_front() else {
                                break;
                            };
                            let depth = job.depth;
                            if let Err(job) = D::push(&self.deque, job, depth) {
                                self.overflow.push_front(job);
                                break;
                            }
                        }
                        if D::len(&self.deque) == 0 {
                            // Nothing went in: run the oldest from the overflow itself.
                            return self.overflow.pop_front();
                        }
                    } else {
                        return None;
                    }
                }
            }
        }
    }

    /// What one steal attempt brought into `loot`: on success, counted, the first task to run
    /// now and the rest pushed here, oldest first (the newest is popped next, and thieves find
    /// the oldest at the other end, as on the victim); on failure, `selector` hears of it.
    pub(crate) fn take_loot(
        &mut self,
        attempt: Steal<usize>,
        loot: &mut Vec<Job<T>>,
        selector: &mut VictimSelector,
        telemetry: &mut WorkerTelemetry,
    ) -> Option<Job<T>> {
        match attempt {
            Steal::Success(n) => {
                telemetry.steal_successes += 1;
                telemetry.tasks_stolen += n as u64;
                let mut stolen = loot.drain(..);
                let found = stolen.next();
                for job in stolen {
                    self.push(job);
                }
                found
            }
            Steal::Empty | Steal::Retry => {
                selector.failed();
                None
            }
        }
    }

    /// Queues a task where thieves can find it, or, if the deque is full, where the owner
    /// runs it in its order; records the peak.
    pub(crate) fn push(&mut self, job: Job<T>) {
        let depth = job.depth;
        let waiting = !self.overflow.is_empty() || !self.backlog.is_empty();
        if self.order == Order::BreadthFirst && waiting {
            // Older tasks wait outside the deque: this one goes behind them.
            self.overflow.push_back(job);
        } else if let Err(job) = D::push(&self.deque, job, depth) {
            self.overflow.push_back(job);
        }
        let queued = D::len(&self.deque) + self.overflow.len();
        self.peak = self.peak.max(queued as u64);
    }

    /// Moves initial tasks from the private backlog (kept in reverse order) into the deque,
    /// where thieves can take them: as many as fit in half of it, so that spawns still fit.
    fn refill(&mut self) {
        let room = (CAPACITY / 2).saturating_sub(D::len(&self.deque));
        let take = room.min(self.backlog.len());
        // The backlog's end holds the earliest tasks: push them first when they are taken
        // from the thieves' end (breadth-first), the later ones first when the owner pops the
        // newest (depth-first), so that the owner runs the earliest first either way.
        let from = self.backlog.len() - take;
        let jobs: Vec<Job<T>> = match self.order {
            Order::DepthFirst => self.backlog.drain(from..).collect(),
            Order::BreadthFirst => self.backlog.drain(from..).rev().collect(),
        };
        for job in jobs {
            if let Err(job) = D::push(&self.deque, job, 0) {
                self.overflow.push_back(job);
            }
        }
    }
}

impl<D: Family, T: Send> Spawn<T> for Owner<'_, D, T> {
    #[inline]
    fn spawn(&mut self, task: T) {
        // Counted before anyone else can see it (see `termination`).
        self.created += 1;
        self.termination.created(self.me, self.created);
        let job = Job {
            task,
            depth: self.depth,
        };
        match self.order {
            // The newest child runs next; the one it displaces goes to the deque. The owner
            // thus runs its tasks in the order of a plain LIFO stack (a tile's rays before the
            // rest of the tile, as `static` does), while the older, larger pieces wait where
            // thieves look.
            Order::DepthFirst => {
                if let Some(displaced) = self.next.replace(job) {
                    self.push(displaced);
                }
            }
            Order::BreadthFirst => self.push(job),
        }
    }
}
