//! A conformance kit for balancers: the properties every [`Balancer`] must have, as checks a
//! balancer's own tests call.
//!
//! [`check`] runs them all against one balancer and says which property broke:
//!
//! - **exactly once**: every task runs once, initial and spawned, on forests chosen to be
//!   hard: none at all, one task, an uneven forest (subtrees that differ by orders of
//!   magnitude), a deep chain, one task with a wide fan-out, one huge tree among many tiny
//!   ones, and a chain that starts last and ends in thousands of leaves;
//! - **worker counts**: one worker, more workers than tasks, and 64 workers (many more than
//!   the cores of a test machine);
//! - **telemetry adds up**: one entry per worker, each worker's task count equal to what its
//!   tasks saw, initial and spawned tasks summing to the forest's, busy and idle time within
//!   the run's wall time, and the workers' [`TaskRunner::Local`]s handed back in worker order;
//! - **termination**: every run returns (a run that does not within [`RUN_LIMIT`] fails the
//!   check instead of hanging it);
//! - **panics**: a task that panics amid work that never ends stops the run, its panic reaches
//!   the caller, no task is still running when the run returns and none starts after; and no
//!   run panics where no task does.
//!
//! ```
//! use std::num::NonZeroUsize;
//! use balancers::BalancerKind;
//!
//! balancers::conformance::check(&BalancerKind::counter(NonZeroUsize::MIN)).unwrap();
//! ```
//!
//! The renderer adds one more property, through the tracer: the same bytes as `static` on real
//! scenes (`renderer::conformance`).

use std::fmt;
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::balancer::{Balancer, Spawn, TaskRunner};

/// How long one run of the kit may take before it counts as not terminating. The largest
/// forest has about 66,000 tasks, which any balancer runs in milliseconds; the bound leaves
/// room for a loaded machine and 64 workers on two cores.
pub const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Worker counts every forest runs on: one, a few, and many more than a test machine's cores.
pub const WORKER_COUNTS: [usize; 5] = [1, 2, 3, 8, 64];

/// "1 worker", "8 workers".
fn count_workers(n: usize) -> String {
    if n == 1 {
        "1 worker".into()
    } else {
        format!("{n} workers")
    }
}

/// The properties the kit checks (see the module's overview).
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use balancers::{Balancer, BalancerKind, Outcome, SpawnError, TaskRunner};
/// #
/// # /// Broken: runs only the first initial task (and what it spawns).
/// # #[derive(Clone)]
/// # struct FirstOnly(BalancerKind);
/// #
/// # impl Balancer for FirstOnly {
/// #     fn name(&self) -> String {
/// #         "first-only".into()
/// #     }
/// #     fn run<T, R>(
/// #         &self,
/// #         workers: NonZeroUsize,
/// #         tasks: &[T],
/// #         runner: &R,
/// #     ) -> Result<Outcome<R::Local>, SpawnError>
/// #     where
/// #         T: Clone + Send + Sync,
/// #         R: TaskRunner<T>,
/// #     {
/// #         self.0.run(workers, &tasks[..tasks.len().min(1)], runner)
/// #     }
/// # }
/// # let broken = FirstOnly(BalancerKind::counter(NonZeroUsize::MIN));
/// use balancers::conformance::{Property, check};
///
/// // `broken` runs only the first of its initial tasks.
/// let violation = check(&broken).unwrap_err();
/// assert_eq!(violation.property, Property::ExactlyOnce);
/// assert_eq!(violation.property.to_string(), "exactly once");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    /// Every task runs once.
    ExactlyOnce,
    /// The telemetry and the worker states agree with what ran.
    TelemetryAddsUp,
    /// Every run returns.
    Termination,
    /// A task's panic reaches the caller, and nothing of the run goes on after it.
    Panics,
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ExactlyOnce => "exactly once",
            Self::TelemetryAddsUp => "telemetry adds up",
            Self::Termination => "termination",
            Self::Panics => "panics",
        })
    }
}

/// A property a balancer broke, and how.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use balancers::{Balancer, BalancerKind, Outcome, SpawnError, TaskRunner};
/// #
/// # /// Broken: runs only the first initial task (and what it spawns).
/// # #[derive(Clone)]
/// # struct FirstOnly(BalancerKind);
/// #
/// # impl Balancer for FirstOnly {
/// #     fn name(&self) -> String {
/// #         "first-only".into()
/// #     }
/// #     fn run<T, R>(
/// #         &self,
/// #         workers: NonZeroUsize,
/// #         tasks: &[T],
/// #         runner: &R,
/// #     ) -> Result<Outcome<R::Local>, SpawnError>
/// #     where
/// #         T: Clone + Send + Sync,
/// #         R: TaskRunner<T>,
/// #     {
/// #         self.0.run(workers, &tasks[..tasks.len().min(1)], runner)
/// #     }
/// # }
/// # let broken = FirstOnly(BalancerKind::counter(NonZeroUsize::MIN));
/// use balancers::conformance::{Forest, Property, check_forest};
///
/// // `broken` runs only the first of its initial tasks.
/// let workers = NonZeroUsize::new(2).unwrap();
/// let violation = check_forest(&broken, &Forest::uneven(500, 10), workers).unwrap_err();
/// assert_eq!(violation.balancer, "first-only");
/// assert_eq!(violation.property, Property::ExactlyOnce);
/// assert!(violation.detail.starts_with("an uneven forest on 2 workers"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The balancer's [`name`](Balancer::name).
    pub balancer: String,
    /// The property broken.
    pub property: Property,
    /// The forest and worker count, and what went wrong.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.balancer, self.property, self.detail)
    }
}

impl std::error::Error for Violation {}

/// Runs the whole kit against `balancer`: every forest on every count of
/// [`WORKER_COUNTS`], then the panic checks.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use balancers::{Balancer, BalancerKind, Outcome, SpawnError, TaskRunner};
/// #
/// # /// Broken: runs only the first initial task (and what it spawns).
/// # #[derive(Clone)]
/// # struct FirstOnly(BalancerKind);
/// #
/// # impl Balancer for FirstOnly {
/// #     fn name(&self) -> String {
/// #         "first-only".into()
/// #     }
/// #     fn run<T, R>(
/// #         &self,
/// #         workers: NonZeroUsize,
/// #         tasks: &[T],
/// #         runner: &R,
/// #     ) -> Result<Outcome<R::Local>, SpawnError>
/// #     where
/// #         T: Clone + Send + Sync,
/// #         R: TaskRunner<T>,
/// #     {
/// #         self.0.run(workers, &tasks[..tasks.len().min(1)], runner)
/// #     }
/// # }
/// # let broken = FirstOnly(BalancerKind::counter(NonZeroUsize::MIN));
/// use balancers::conformance::check;
///
/// // `broken` runs only the first of its initial tasks.
/// let violation = check(&broken).unwrap_err();
/// assert!(violation.to_string().starts_with("first-only: exactly once: an uneven forest"));
/// ```
///
/// # Errors
/// The first property broken.
pub fn check<B>(balancer: &B) -> Result<(), Violation>
where
    B: Balancer + Clone + Send + 'static,
{
    for forest in Forest::all() {
        for workers in WORKER_COUNTS {
            let workers = NonZeroUsize::new(workers).expect("not 0");
            check_forest(balancer, &forest, workers)?;
        }
    }
    check_panics(balancer)
}

/// One test forest: node `n`'s children, and which nodes are the initial tasks. Every node is
/// a root or the child of exactly one node, once, and none is both: then running the roots and
/// everything they spawn runs every node exactly once.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::BalancerKind;
/// use balancers::conformance::{Forest, check_forest};
///
/// // Two initial tasks; task 0 spawns tasks 2 and 3.
/// let children = vec![vec![2, 3], vec![], vec![], vec![]];
/// let forest = Forest { name: "two roots", children, roots: vec![0, 1] };
/// assert_eq!(forest.tasks(), 4);
/// let counter = BalancerKind::counter(NonZeroUsize::MIN);
/// check_forest(&counter, &forest, NonZeroUsize::new(3).unwrap())?;
/// # Ok::<(), balancers::conformance::Violation>(())
/// ```
#[derive(Clone, Debug)]
pub struct Forest {
    /// What the forest is, for messages.
    pub name: &'static str,
    /// `children[n]`: the nodes task `n` spawns, in order.
    pub children: Vec<Vec<u32>>,
    /// The initial tasks.
    pub roots: Vec<u32>,
}

impl Forest {
    /// The kit's forests (see the module's overview).
    ///
    /// ```
    /// use balancers::conformance::Forest;
    ///
    /// let forests = Forest::all();
    /// assert_eq!(forests.len(), 7);
    /// assert!(forests.iter().any(|f| f.tasks() == 0), "no tasks at all");
    /// assert!(forests.iter().all(|f| f.tasks() < 100_000));
    /// ```
    pub fn all() -> Vec<Forest> {
        vec![
            Forest::empty(),
            Forest::chain(1, "one task"),
            Forest::uneven(500, 10),
            Forest::chain(3_000, "a deep chain"),
            Forest::fan_out(20_000),
            Forest::huge_among_tiny(64, 15),
            Forest::late_chain(64, 3_000, 20_000),
        ]
    }

    /// No tasks at all.
    ///
    /// ```
    /// use balancers::conformance::Forest;
    ///
    /// let empty = Forest::empty();
    /// assert_eq!(empty.tasks(), 0);
    /// assert!(empty.roots.is_empty());
    /// ```
    pub fn empty() -> Self {
        Self {
            name: "no tasks",
            children: Vec::new(),
            roots: Vec::new(),
        }
    }

    /// One initial task and a chain of `length - 1` below it, each spawning the next.
    ///
    /// ```
    /// use balancers::conformance::Forest;
    ///
    /// let chain = Forest::chain(3, "three in a row");
    /// assert_eq!(chain.roots, [0]);
    /// assert_eq!(chain.children, [vec![1], vec![2], vec![]]);
    /// ```
    pub fn chain(length: u32, name: &'static str) -> Self {
        let children = (0..length)
            .map(|n| if n + 1 < length { vec![n + 1] } else { vec![] })
            .collect();
        Self {
            name,
            children,
            roots: if length > 0 { vec![0] } else { vec![] },
        }
    }

    /// `roots` trees in which node `n` has 0 to 2 children by a hash of `n`, down to depth
    /// `max_depth`: subtrees that differ in size by orders of magnitude, like pixels that see
    /// glass beside pixels that see the sky.
    ///
    /// ```
    /// use balancers::conformance::Forest;
    ///
    /// let forest = Forest::uneven(10, 3);
    /// assert_eq!(forest.roots, (0..10).collect::<Vec<_>>());
    /// assert!(forest.children.iter().all(|c| c.len() <= 2));
    /// // Ten trees of depth 3 at most: 15 nodes each at most.
    /// assert!(forest.tasks() > 10 && forest.tasks() <= 150);
    /// ```
    pub fn uneven(roots: u32, max_depth: u32) -> Self {
        let mut children: Vec<Vec<u32>> = (0..roots).map(|_| Vec::new()).collect();
        let mut depth = vec![0u32; roots as usize];
        let mut next = 0;
        while next < children.len() {
            let fan_out = if depth[next] >= max_depth {
                0
            } else {
                ((next as u32).wrapping_mul(2_654_435_761) >> 30).min(2)
            };
            for _ in 0..fan_out {
                let id = children.len() as u32;
                children.push(Vec::new());
                depth.push(depth[next] + 1);
                children[next].push(id);
            }
            next += 1;
        }
        Self {
            name: "an uneven forest",
            children,
            roots: (0..roots).collect(),
        }
    }

    /// One initial task that spawns `width` leaves at once.
    ///
    /// ```
    /// use balancers::conformance::Forest;
    ///
    /// let forest = Forest::fan_out(100);
    /// assert_eq!(forest.tasks(), 101);
    /// assert_eq!(forest.children[0], (1..=100).collect::<Vec<_>>());
    /// assert!(forest.children[1..].iter().all(Vec::is_empty));
    /// ```
    pub fn fan_out(width: u32) -> Self {
        let mut children = vec![(1..=width).collect()];
        children.extend((0..width).map(|_| Vec::new()));
        Self {
            name: "a wide fan-out",
            children,
            roots: vec![0],
        }
    }

    /// `tiny` initial tasks that spawn nothing, then one whose task spawns a full binary tree
    /// of depth `depth` (2^(depth+1) − 1 tasks): one huge tile among tiny ones.
    ///
    /// ```
    /// use balancers::conformance::Forest;
    ///
    /// // Four tiny tasks, then a tree of depth 2 (seven tasks) from task 4.
    /// let forest = Forest::huge_among_tiny(4, 2);
    /// assert_eq!(forest.tasks(), 4 + 7);
    /// assert_eq!(forest.roots, [0, 1, 2, 3, 4]);
    /// assert_eq!(forest.children[4], [5, 6]);
    /// ```
    pub fn huge_among_tiny(tiny: u32, depth: u32) -> Self {
        let mut children: Vec<Vec<u32>> = (0..tiny).map(|_| Vec::new()).collect();
        let first = tiny;
        let nodes = (1u32 << (depth + 1)) - 1;
        for k in 0..nodes {
            let (left, right) = (2 * k + 1, 2 * k + 2);
            children.push(if right < nodes {
                vec![first + left, first + right]
            } else {
                vec![]
            });
        }
        Self {
            name: "one huge tree among tiny ones",
            children,
            roots: (0..=tiny).collect(),
        }
    }

    /// `trivial` initial tasks, then one that starts a chain of `chain` tasks whose last
    /// spawns `leaves` leaves: work that appears anew long after every other worker ran dry.
    ///
    /// ```
    /// use balancers::conformance::Forest;
    ///
    /// // Two trivial tasks; task 2 starts a chain of three (2, 3, 4) whose last spawns four
    /// // leaves.
    /// let forest = Forest::late_chain(2, 3, 4);
    /// assert_eq!(forest.roots, [0, 1, 2]);
    /// assert_eq!(forest.children[2..5], [vec![3], vec![4], vec![5, 6, 7, 8]]);
    /// assert_eq!(forest.tasks(), 9);
    /// ```
    pub fn late_chain(trivial: u32, chain: u32, leaves: u32) -> Self {
        let mut children: Vec<Vec<u32>> = (0..trivial).map(|_| Vec::new()).collect();
        let start = trivial;
        for k in 0..chain {
            children.push(if k + 1 < chain {
                vec![start + k + 1]
            } else {
                (0..leaves).map(|leaf| start + chain + leaf).collect()
            });
        }
        children.extend((0..leaves).map(|_| Vec::new()));
        Self {
            name: "a late chain ending in many leaves",
            children,
            roots: (0..=trivial).collect(),
        }
    }

    /// Tasks in all, initial and spawned.
    ///
    /// ```
    /// use balancers::conformance::Forest;
    ///
    /// assert_eq!(Forest::chain(5, "five").tasks(), 5);
    /// assert_eq!(Forest::fan_out(3).tasks(), 4);
    /// ```
    pub fn tasks(&self) -> usize {
        self.children.len()
    }
}

/// Runs a forest, counting how often each node ran and which worker's state it ran with.
struct ForestRunner {
    forest: Forest,
    ran: Vec<AtomicU32>,
}

/// What one worker's tasks saw: its number, as [`TaskRunner::local`] was given it, and how many
/// tasks ran with this state.
#[derive(Debug)]
struct WorkerCount {
    worker: usize,
    tasks: u64,
}

impl TaskRunner<u32> for ForestRunner {
    type Local = WorkerCount;
    fn local(&self, worker: usize) -> WorkerCount {
        WorkerCount { worker, tasks: 0 }
    }
    fn run<S: Spawn<u32>>(&self, node: u32, local: &mut WorkerCount, spawn: &mut S) {
        // Relaxed: each counter is read only after the run, whose end orders every worker's
        // writes before it.
        self.ran[node as usize].fetch_add(1, Ordering::Relaxed);
        local.tasks += 1;
        for &child in &self.forest.children[node as usize] {
            spawn.spawn(child);
        }
    }
}

/// Runs `body` on a thread of its own and waits at most [`RUN_LIMIT`] for its answer: a run
/// that hangs fails its check (its thread is left to itself) instead of hanging the test.
fn within_limit<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        // A closed channel means the limit has passed: nobody is waiting any more.
        sender.send(body()).ok();
    });
    receiver.recv_timeout(RUN_LIMIT).ok()
}

/// Runs `forest` on `workers` workers and checks that every task ran exactly once and that the
/// telemetry adds up.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::WorkStealing;
/// use balancers::conformance::{Forest, check_forest};
///
/// let workers = NonZeroUsize::new(8).unwrap();
/// check_forest(&WorkStealing::default(), &Forest::fan_out(1_000), workers)?;
/// # Ok::<(), balancers::conformance::Violation>(())
/// ```
///
/// # Errors
/// The property broken.
pub fn check_forest<B>(
    balancer: &B,
    forest: &Forest,
    workers: NonZeroUsize,
) -> Result<(), Violation>
where
    B: Balancer + Clone + Send + 'static,
{
    let (count, workers) = (workers, workers.get());
    let violation = |property, detail: String| Violation {
        balancer: balancer.name(),
        property,
        detail: format!("{} on {}: {detail}", forest.name, count_workers(workers)),
    };
    let runner = Arc::new(ForestRunner {
        ran: (0..forest.tasks()).map(|_| AtomicU32::new(0)).collect(),
        forest: forest.clone(),
    });
    let (b, r) = (balancer.clone(), Arc::clone(&runner));
    let outcome = within_limit(move || {
        panic::catch_unwind(AssertUnwindSafe(|| b.run(count, &r.forest.roots, &*r)))
    })
    .ok_or_else(|| {
        violation(
            Property::Termination,
            format!("the run did not return within {RUN_LIMIT:?}"),
        )
    })?
    .map_err(|payload| {
        violation(
            Property::Panics,
            format!(
                "the run panicked where no task does: {}",
                panic_message(&*payload)
            ),
        )
    })?
    .map_err(|e| violation(Property::Termination, format!("the run failed: {e}")))?;

    for (node, ran) in runner.ran.iter().enumerate() {
        let ran = ran.load(Ordering::Relaxed);
        if ran != 1 {
            return Err(violation(
                Property::ExactlyOnce,
                format!("task {node} of {} ran {ran} times", forest.tasks()),
            ));
        }
    }
    let t = &outcome.telemetry;
    let adds_up = |detail: String| Err(violation(Property::TelemetryAddsUp, detail));
    if t.workers.len() != workers || outcome.locals.len() != workers {
        return adds_up(format!(
            "{} telemetry entries and {} worker states for {workers} workers",
            t.workers.len(),
            outcome.locals.len()
        ));
    }
    for (w, (local, entry)) in outcome.locals.iter().zip(&t.workers).enumerate() {
        if local.worker != w {
            return adds_up(format!(
                "the state of worker {} came back in place {w}",
                local.worker
            ));
        }
        if local.tasks != entry.tasks {
            return adds_up(format!(
                "worker {w} ran {} tasks but reports {}",
                local.tasks, entry.tasks
            ));
        }
        // A little slack: the wall time and each worker's times are read from the clock at
        // slightly different instants.
        if entry.busy + entry.idle > t.wall + Duration::from_millis(50) {
            return adds_up(format!(
                "worker {w} was busy {:?} and idle {:?} in a run of {:?}",
                entry.busy, entry.idle, t.wall
            ));
        }
    }
    let sum = |f: fn(&crate::WorkerTelemetry) -> u64| t.workers.iter().map(f).sum::<u64>();
    let (tasks, roots) = (forest.tasks() as u64, forest.roots.len() as u64);
    if t.total_tasks() != tasks {
        return adds_up(format!("{} tasks reported, {tasks} ran", t.total_tasks()));
    }
    if sum(|w| w.initial_tasks) != roots {
        return adds_up(format!(
            "{} initial tasks reported of {roots}",
            sum(|w| w.initial_tasks)
        ));
    }
    if sum(|w| w.spawned) != tasks - roots {
        return adds_up(format!(
            "{} spawned tasks reported, {} were spawned",
            sum(|w| w.spawned),
            tasks - roots
        ));
    }
    Ok(())
}

/// The message of the panic the kit provokes.
const PROVOKED: &str = "a task the conformance kit makes fail";

/// The task, counted from the run's start, that panics.
const FAIL_AT: usize = 200;

/// Work that never ends but for one task that panics: every task spawns another, and the
/// [`FAIL_AT`]th task to start panics, whatever order the balancer runs them in. A run of it
/// ends only if the balancer stops its other workers.
struct Faulty {
    /// Tasks started so far.
    started: AtomicUsize,
    /// Set once the run has returned to the caller.
    returned: AtomicBool,
    /// Tasks started after that.
    late: AtomicUsize,
    /// Tasks begun and not ended (a panicking one ends as it unwinds).
    running: AtomicUsize,
}

/// Counts a task as running until it ends, by returning or by unwinding.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        // Release: the task's last act; pairs with the Acquire read after the run.
        self.0.fetch_sub(1, Ordering::Release);
    }
}

impl TaskRunner<u64> for Faulty {
    type Local = ();
    fn local(&self, _worker: usize) {}
    fn run<S: Spawn<u64>>(&self, task: u64, _local: &mut (), spawn: &mut S) {
        // Relaxed: only the flag's value matters; a task that starts after the run returned
        // sees it set sooner or later, and one that started is counted either way.
        if self.returned.load(Ordering::Relaxed) {
            self.late.fetch_add(1, Ordering::Relaxed);
        }
        // Relaxed: the decrement publishes the task's end.
        self.running.fetch_add(1, Ordering::Relaxed);
        let _running = Running(&self.running);
        // Relaxed: only the count matters.
        if self.started.fetch_add(1, Ordering::Relaxed) + 1 == FAIL_AT {
            panic!("{PROVOKED}");
        }
        spawn.spawn(task.wrapping_add(1));
    }
}

/// What a panic's payload says, where it is a message.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

/// Checks that a panicking task's panic reaches the caller on 1, 4 and 64 workers, that the
/// run ends although its other tasks never would, that no task is still running when the run
/// returns, and that none starts after that.
///
/// ```
/// use balancers::{Assignment, BalancerKind};
/// use balancers::conformance::check_panics;
///
/// check_panics(&BalancerKind::static_tiles(Assignment::Interleaved))?;
/// # Ok::<(), balancers::conformance::Violation>(())
/// ```
///
/// # Errors
/// The property broken.
pub fn check_panics<B>(balancer: &B) -> Result<(), Violation>
where
    B: Balancer + Clone + Send + 'static,
{
    for workers in [1, 4, 64] {
        let violation = |detail: String| Violation {
            balancer: balancer.name(),
            property: Property::Panics,
            detail: format!("on {}: {detail}", count_workers(workers)),
        };
        let runner = Arc::new(Faulty {
            started: AtomicUsize::new(0),
            returned: AtomicBool::new(false),
            late: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
        });
        let (b, r) = (balancer.clone(), Arc::clone(&runner));
        let count = NonZeroUsize::new(workers).expect("at least one worker");
        let (caught, running) = within_limit(move || {
            let tasks: Vec<u64> = (0..64).collect();
            let result = panic::catch_unwind(AssertUnwindSafe(|| b.run(count, &tasks, &*r)));
            r.returned.store(true, Ordering::Relaxed);
            // Acquire: pairs with each task's Release decrement as it ends.
            let running = r.running.load(Ordering::Acquire);
            let caught = match result {
                Ok(_) => None,
                Err(payload) => Some(panic_message(&*payload).to_string()),
            };
            (caught, running)
        })
        .ok_or_else(|| {
            violation(format!(
                "the run did not end within {RUN_LIMIT:?} after a task panicked"
            ))
        })?;
        match caught {
            None => {
                return Err(violation(
                    "the task's panic did not reach the caller".into(),
                ));
            }
            Some(message) if !message.contains(PROVOKED) => {
                return Err(violation(format!(
                    "the run panicked, but not with the task's panic: {message}"
                )));
            }
            Some(_) => {}
        }
        if running != 0 {
            return Err(violation(format!(
                "{running} tasks were still running when the run returned"
            )));
        }
        // Give a thread left behind the time to start a task.
        thread::sleep(Duration::from_millis(20));
        let late = runner.late.load(Ordering::Relaxed);
        if late != 0 {
            return Err(violation(format!(
                "{late} tasks started after the run returned"
            )));
        }
    }
    Ok(())
}
