//! The contract between a balancer and the work it schedules.

use std::fmt;
use std::io;
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::fault;
use crate::sync::{AtomicBool, AtomicU32, Ordering};
use crate::telemetry::{Telemetry, WorkerTelemetry};

/// The stack of every thread raylb starts to run workers on: `RUST_MIN_STACK` bytes where
/// that is set to a whole number, read once, as for any thread the standard library starts;
/// else 8 MiB, a Linux main thread's usual stack, rather than the standard library's 2 MiB.
/// Optimised code needs less than 256 KiB for a `treasure` frame; unoptimised code (the dev
/// profile, and code a caller compiles unoptimised around raylb's generic traversals) keeps
/// every local of the traversals' inlined code in a slot of its own, one packet query's frame
/// is about 1.5 MiB, and a `treasure` frame needed about 2.5 MiB. A stack takes address
/// space only where it goes unused (`renderer::memory::thread_address_space` counts it).
///
/// ```
/// let size = balancers::worker_stack_size();
/// assert!(size >= 64 * 1024);
/// ```
pub fn worker_stack_size() -> usize {
    const DEFAULT: usize = 8 << 20;
    // Read once and parsed as the standard library does: a value that is not a whole
    // number of bytes leaves the default.
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        std::env::var_os("RUST_MIN_STACK")
            .and_then(|v| v.to_str().and_then(|v| v.parse().ok()))
            .unwrap_or(DEFAULT)
    })
}

/// Where a running task puts the tasks it spawns.
///
/// Handed to [`TaskRunner::run`] by the balancer; each balancer decides where spawned tasks go
/// (for [`StaticTiles`](crate::StaticTiles) and [`CentralCounter`](crate::CentralCounter): the
/// running worker's own queue, taken newest or oldest first as its [`Order`](crate::Order)
/// says). Spawning never allocates per task once the worker's
/// queue has grown to its working size.
pub trait Spawn<T> {
    /// Queues `task` to run later, on this worker or (for balancers that move work) another.
    fn spawn(&mut self, task: T);
}

/// The work a balancer runs: one function applied to every task, which may spawn more tasks.
///
/// `run` is called from many worker threads at once, hence `Sync`. Per-thread state lives in
/// [`TaskRunner::Local`], which only its own worker touches, so counters need no atomics.
pub trait TaskRunner<T>: Sync {
    /// State private to one worker (counters, scratch space). Created on the worker's thread
    /// before its first task and handed back to the caller in [`Outcome::locals`].
    type Local: Send;

    /// Creates the state of worker `worker` (numbered from 0).
    fn local(&self, worker: usize) -> Self::Local;

    /// Runs `task` to completion on the calling worker; children go to `spawn`.
    fn run<S: Spawn<T>>(&self, task: T, local: &mut Self::Local, spawn: &mut S);
}

/// What a finished run hands back: the balancer's measurements and each worker's state.
#[derive(Debug)]
pub struct Outcome<L> {
    /// Timings and counts, one entry per worker.
    pub telemetry: Telemetry,
    /// The [`TaskRunner::Local`] of each worker, indexed by worker number.
    pub locals: Vec<L>,
}

/// A policy that runs a set of initial tasks, and everything they spawn, on worker threads.
///
/// A successful `run` returns only when every task has run exactly once. The initial tasks are
/// borrowed and cloned as they are handed out, since they are small descriptions (tiles), not
/// the work.
pub trait Balancer {
    /// A short name for reports, e.g. `static/interleaved`.
    fn name(&self) -> String;

    /// Runs `tasks` and all their descendants on `workers` threads.
    ///
    /// # Errors
    /// When the operating system refuses to start a worker thread. The workers already
    /// started are told to stop: each drops the tasks it has not begun (a task already running
    /// runs to its end) and every one of them has returned before this returns (its thread
    /// ends on its own, microseconds later). The run's results are incomplete and are
    /// discarded. Finishing the started workers' share instead is not an option: under work
    /// stealing a share is not fixed, and the missing workers' initial tasks would keep the
    /// others looking for work forever.
    ///
    /// # Panics
    /// When a task panics: the other workers stop as above, and the panic resumes on the
    /// caller's thread once all of them have returned.
    fn run<T, R>(
        &self,
        workers: NonZeroUsize,
        tasks: &[T],
        runner: &R,
    ) -> Result<Outcome<R::Local>, SpawnError>
    where
        T: Clone + Send + Sync,
        R: TaskRunner<T>;
}

/// The operating system refused to start a worker thread.
#[derive(Debug)]
pub struct SpawnError {
    /// Which worker could not be started.
    pub worker: usize,
    /// How many were asked for.
    pub workers: usize,
    /// The operating system's reason.
    pub source: io::Error,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot start worker thread {} of {}: {}",
            self.worker + 1,
            self.workers,
            self.source
        )
    }
}

/// The reason is part of the message (`Display`), so `source` is left empty: error chains
/// would print it twice.
impl std::error::Error for SpawnError {}

/// Tells the workers of a run to stop taking tasks: set when a worker thread could not be
/// started or a task panicked, read by every worker before each task.
///
/// Nobody writes it in a run that goes well, so the read is a load from a cache line every core
/// keeps a shared copy of: no cost next to a task.
#[derive(Debug)]
pub struct Stop(AtomicBool);

impl Default for Stop {
    fn default() -> Self {
        Self::new()
    }
}

impl Stop {
    /// A flag no one has raised yet. [`run_workers`] makes one for its run; a balancer that
    /// starts its threads another way makes its own.
    pub fn new() -> Self {
        Self(AtomicBool::new(false))
    }

    /// Whether the run has been told to stop.
    #[inline]
    pub fn requested(&self) -> bool {
        // Relaxed: the flag carries no data; what went wrong travels in the workers' results.
        self.0.load(Ordering::Relaxed)
    }

    /// Tells every worker to stop at its next task. The tasks not begun are dropped: a run
    /// stopped so must fail (as [`run_workers`] does when it stops a run, by a worker's panic
    /// or a thread that could not start), never report success.
    #[cold]
    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `body(worker, telemetry, stop)` for `workers` workers, worker 0 on the calling thread
/// and each other on a scoped thread started for it (where the workers outnumber the cores,
/// every one on a thread of its own), and gathers the results.
///
/// `body` returns when its worker has no more work, or soon after `stop` is requested (which
/// it must check before every task). The time from its start to that point is the worker's busy
/// time, unless `body` has already moved some of it to `idle` (time spent looking for work in
/// vain); the wait for the slowest worker is added to `idle` here.
///
/// When a thread cannot be started, or `body` panics on one, the others are told to stop; all
/// that started have returned before the error (or the panic) reaches the caller.
///
/// The caller takes each other worker's result from a slot its thread fills, without joining
/// the thread: the scope the threads run in waits for their `body` to return, and orders all
/// they wrote before its end, but not for the threads' exits, which follow on their own within
/// microseconds.
///
/// A whole balancer, static round robin: worker `w` runs initial tasks `w`, `w + p`, … and
/// everything they spawn.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::{
///     Balancer, LocalQueue, Order, Outcome, Spawn, SpawnError, TaskRunner, run_workers,
/// };
///
/// struct RoundRobin;
///
/// impl Balancer for RoundRobin {
///     fn name(&self) -> String {
///         "round-robin".into()
///     }
///
///     fn run<T, R>(&self, workers: NonZeroUsize, tasks: &[T], runner: &R)
///         -> Result<Outcome<R::Local>, SpawnError>
///     where
///         T: Clone + Send + Sync,
///         R: TaskRunner<T>,
///     {
///         run_workers(self.name(), workers, |w, telemetry, stop| {
///             let mut local = runner.local(w);
///             let mut queue = LocalQueue::new(Order::DepthFirst);
///             for task in tasks.iter().skip(w).step_by(workers.get()) {
///                 if stop.requested() {
///                     break;
///                 }
///                 telemetry.initial_tasks += 1;
///                 telemetry.tasks += queue.run_initial(task.clone(), runner, &mut local, stop);
///             }
///             telemetry.spawned = queue.pushed();
///             local
///         })
///     }
/// }
///
/// /// Task `n` spawns `n - 1` twice.
/// struct Halving;
/// impl TaskRunner<u32> for Halving {
///     type Local = u64;
///     fn local(&self, _worker: usize) -> u64 { 0 }
///     fn run<S: Spawn<u32>>(&self, n: u32, ran: &mut u64, spawn: &mut S) {
///         *ran += 1;
///         if n > 0 {
///             spawn.spawn(n - 1);
///             spawn.spawn(n - 1);
///         }
///     }
/// }
///
/// let outcome = RoundRobin.run(NonZeroUsize::new(3).unwrap(), &[4, 2, 0, 1], &Halving)?;
/// assert_eq!(outcome.locals.iter().sum::<u64>(), 31 + 7 + 1 + 3);
/// assert_eq!(outcome.telemetry.total_tasks(), 42);
/// # Ok::<(), SpawnError>(())
/// ```
pub fn run_workers<L, F>(
    name: String,
    workers: NonZeroUsize,
    body: F,
) -> Result<Outcome<L>, SpawnError>
where
    L: Send,
    F: Fn(usize, &mut WorkerTelemetry, &Stop) -> L + Sync,
{
    let start = Instant::now();
    let stop = Stop::new();
    // One worker's whole run, on whichever thread runs it, or the payload of its panic (the
    // others told to stop).
    let work = |worker: usize| -> thread::Result<Finished<L>> {
        let began = Instant::now();
        let mut telemetry = WorkerTelemetry::default();
        let local = panic::catch_unwind(AssertUnwindSafe(|| body(worker, &mut telemetry, &stop)))
            .inspect_err(|_| stop.request())?;
        let finished = Instant::now();
        let active = finished - began;
        telemetry.busy = active.saturating_sub(telemetry.idle);
        // Thread start-up counts as idle: the worker exists but cannot work yet (worker 0 on
        // the calling thread begins once it has started the others).
        telemetry.idle += began - start;
        Ok((local, telemetry, finished))
    };
    let refused = |worker, source| SpawnError {
        worker,
        workers: workers.get(),
        source,
    };
    // Worker 0 runs on the calling thread, which would only wait otherwise: one thread fewer
    // to start, and to wake at the end. Its start can be refused by a test all the same. Not
    // where workers outnumber the cores: the threads started first, looking for work, then
    // take the cores from the caller while it starts the rest, and worker 0's share of the
    // work would wait for the last start (4,096 workers on two cores took 5 s, not 0.6 s).
    let on_caller = workers.get() <= cores();
    if on_caller {
        fault::check_start(0).map_err(|source| refused(0, source))?;
    }
    let first_started = usize::from(on_caller);
    // Where each other worker's thread leaves what its run gave, so that the caller takes it
    // without joining the thread: a join also waits for the thread's exit (its stacks given
    // back to the system), tens of microseconds on a virtual machine, which a short run such
    // as a small mesh's build (under a millisecond) felt.
    let slots: Vec<Mutex<Option<thread::Result<Finished<L>>>>> = (first_started..workers.get())
        .map(|_| Mutex::new(None))
        .collect();
    // How many of those have returned. Read only to know when to stop waiting actively: the
    // slots are read after the scope, which orders every thread's writes before its end, so
    // no ordering is needed here.
    let returned = AtomicU32::new(0);
    let stack = worker_stack_size();
    let (first, started, refusal) = thread::scope(|scope| {
        let mut started = 0;
        let mut refusal = None;
        for (worker, slot) in (first_started..workers.get()).zip(&slots) {
            let (work, returned) = (&work, &returned);
            let spawned = fault::check_start(worker).and_then(|()| {
                thread::Builder::new()
                    .name(format!("raylb-worker-{worker}"))
                    .stack_size(stack)
                    .spawn_scoped(scope, move || {
                        let result = work(worker);
                        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
                        returned.fetch_add(1, Ordering::Relaxed);
                    })
            });
            match spawned {
                // Not joined: the scope waits for the thread's closure to return.
                Ok(_) => started += 1,
                Err(source) => {
                    stop.request();
                    refusal = Some(refused(worker, source));
                    break;
                }
            }
        }
        let first = (on_caller && refusal.is_none()).then(|| work(0));
        // The others end about when this one does: waiting for them actively, for a while,
        // spares the caller being put to sleep and woken by the last (on a virtual machine,
        // tens of microseconds for the idle processor to be woken). After that the scope's
        // end sleeps until they return.
        let waiting = Instant::now();
        while returned.load(Ordering::Relaxed) < started && waiting.elapsed() < ACTIVE_WAIT {
            thread::yield_now();
        }
        (first, started, refusal)
    });
    // A worker's panic reaches the caller, worker 0's first, also when a later start failed.
    let mut results = Vec::with_capacity(workers.get());
    // The started workers are the first; each filled its slot before its closure returned.
    let others = slots.into_iter().take(started as usize).map(|slot| {
        slot.into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .expect("a started worker leaves its result before the scope ends")
    });
    for result in first.into_iter().chain(others) {
        results.push(result.unwrap_or_else(|payload| panic::resume_unwind(payload)));
    }
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    let end = Instant::now();
    let mut locals = Vec::with_capacity(results.len());
    let mut per_worker = Vec::with_capacity(results.len());
    for (local, mut telemetry, finished) in results {
        telemetry.idle += end - finished;
        locals.push(local);
        per_worker.push(telemetry);
    }
    Ok(Outcome {
        telemetry: Telemetry::new(name, end - start, per_worker),
        locals,
    })
}

/// The cores this process may run on, read once: a run asks on every start, and the
/// system's answer (the affinity mask and the cgroup's quota) takes longer than a short run.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| thread::available_parallelism().map_or(1, NonZeroUsize::get))
}

/// What one worker's run gave: its local state, its telemetry, and when it ended.
type Finished<L> = (L, WorkerTelemetry, Instant);

/// How long the calling thread, its own worker done, waits actively for the other workers'
/// threads before it sleeps until they end: long enough for the ends of one run, which come
/// within microseconds of each other but for imbalance.
const ACTIVE_WAIT: Duration = Duration::from_micros(200);

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread::ThreadId;

    use super::*;

    /// The size of the calling thread's stack, as the threads library gave it.
    #[cfg(target_os = "linux")]
    fn own_stack_size() -> usize {
        // SAFETY: `attr` is initialised by `pthread_getattr_np` before it is read, and
        // destroyed once, after its last read; `pthread_self` is always a live thread.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            assert_eq!(libc::pthread_getattr_np(libc::pthread_self(), &mut attr), 0);
            let mut size = 0;
            assert_eq!(libc::pthread_attr_getstacksize(&attr, &mut size), 0);
            libc::pthread_attr_destroy(&mut attr);
            size
        }
    }

    /// The threads started for workers have [`worker_stack_size`]'s stack (8 MiB where
    /// `RUST_MIN_STACK` is not set), not the standard library's 2 MiB.
    #[cfg(target_os = "linux")]
    #[test]
    fn worker_threads_have_the_stack_worker_stack_size_gives() {
        let size = worker_stack_size();
        if std::env::var_os("RUST_MIN_STACK").is_none() {
            assert_eq!(size, 8 << 20);
        }
        let outcome = run_workers(
            "stack".into(),
            NonZeroUsize::new(3).unwrap(),
            |worker, _, _| (worker != 0).then(own_stack_size),
        )
        .unwrap();
        assert_eq!(outcome.locals[0], None, "worker 0 is the calling thread");
        for stack in &outcome.locals[1..] {
            assert!(stack.is_some_and(|s| s >= size), "{stack:?} against {size}");
        }
    }

    /// Worker 0 runs on the calling thread and each other worker on a thread of its own, as
    /// long as the workers do not outnumber the cores; beyond that every worker has a thread
    /// of its own.
    #[test]
    fn worker_0_runs_on_the_calling_thread_unless_workers_outnumber_cores() {
        let caller = thread::current().id();
        for (count, on_caller) in [(cores(), true), (cores() + 2, false)] {
            let seen: Mutex<Vec<(usize, ThreadId)>> = Mutex::new(Vec::new());
            let workers = NonZeroUsize::new(count).unwrap();
            let outcome = run_workers("threads".into(), workers, |worker, _telemetry, _stop| {
                seen.lock().unwrap().push((worker, thread::current().id()));
                worker
            })
            .expect("the workers start");
            assert_eq!(outcome.locals, (0..count).collect::<Vec<_>>());
            let mut seen = seen.into_inner().unwrap();
            seen.sort_by_key(|&(worker, _)| worker);
            assert_eq!(seen[0].1 == caller, on_caller, "{count} workers: {seen:?}");
            let threads: HashSet<ThreadId> = seen.iter().map(|&(_, id)| id).collect();
            assert_eq!(threads.len(), count, "one thread a worker: {seen:?}");
            assert_eq!(threads.contains(&caller), on_caller, "{count} workers");
        }
    }
}
