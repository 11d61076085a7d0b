//! `rayon`: the baseline a Rust programmer would write, a `rayon::scope` that spawns every
//! task; rayon's own work-stealing pool does the rest.

use std::io;
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::balancer::{Balancer, Outcome, Spawn, SpawnError, Stop, TaskRunner};
use crate::fault;
use crate::telemetry::{Telemetry, WorkerTelemetry};

/// rayon's work-stealing pool, driven through `rayon::scope`: every initial task and every
/// spawned task is a `scope.spawn`. Measured, not trusted: it is the baseline our own
/// balancers are compared with.
///
/// Its telemetry is what rayon lets us see without slowing it down: tasks per worker, and busy
/// time as the CPU time each pool thread used during the run (which includes rayon's own
/// spinning while it looks for work; on systems other than Linux it is the whole wall time),
/// idle time as the rest. rayon does not report its steals or queue lengths; those are
/// reported as unknown. Per-task clock reads would have cost rayon about 1% on `treasure`,
/// a handicap the other balancers do not carry.
///
/// Asked for more workers than [`RayonScope::max_workers`], a run starts that many, and its
/// telemetry has one entry for each thread it started.
///
/// ```
/// use balancers::RayonScope;
///
/// balancers::conformance::check(&RayonScope).unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RayonScope;

/// The most threads rayon is given where the machine has fewer cores. Every one of rayon's
/// workers starts idle, and an idle worker tries to steal from every other worker in each of
/// its 32 rounds of searching (yielding the processor between rounds) before it sleeps
/// (rayon-core 1.13, `sleep/mod.rs`): starting a pool of `n` threads costs about `32 n²` steal
/// attempts, whatever the run is given. On 2 cores, a bare pool, built and dropped, took
/// 0.01–0.02 s at 256 threads, 0.07–0.27 s at 512, 1.0–2.9 s at 1024 and 3.2–5.3 s at 1536;
/// a 64×64 `quick` frame with `rayon` took 0.2 s at 512 threads, 1.0–1.4 s at 1024 and 7–13 s
/// at 2048 from start to exit, where `static` took 0.18 s and `stealing` 0.69 s at 4096
/// (BENCHMARKS.md, "`rayon` at thousands of threads"). 512 keeps rayon within what the other
/// balancers take at 4096.
const MOST_WORKERS: usize = 512;

impl RayonScope {
    /// The most worker threads a run starts: 512, or, on a machine of more cores than that,
    /// one per core the process may use (a baseline given fewer threads than cores would be
    /// a handicapped one). Beyond it, rayon's idle workers searching each other's queues take
    /// longer than any frame (see `MOST_WORKERS` in the source).
    ///
    /// ```
    /// use balancers::RayonScope;
    ///
    /// let most = RayonScope::max_workers().get();
    /// assert!(most >= 512);
    /// let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    /// assert!(most >= cores);
    /// ```
    pub fn max_workers() -> NonZeroUsize {
        let most = NonZeroUsize::new(MOST_WORKERS).expect("512 is not 0");
        thread::available_parallelism().map_or(most, |cores| cores.max(most))
    }
}

/// What each pool thread keeps: its runner state and telemetry, behind a mutex that only that
/// thread ever takes (rayon gives no other safe per-thread slot).
struct Slot<L> {
    local: L,
    telemetry: WorkerTelemetry,
}

impl Balancer for RayonScope {
    fn name(&self) -> String {
        "rayon".into()
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
        let workers = workers.min(Self::max_workers());
        let (pool, threads) = start_pool(workers, "raylb-rayon")?;
        let slots: Vec<Mutex<Slot<R::Local>>> = (0..workers.get())
            .map(|w| {
                Mutex::new(Slot {
                    local: runner.local(w),
                    telemetry: WorkerTelemetry::default(),
                })
            })
            .collect();
        // Each pool thread's clock is read from here, not by the thread itself (a
        // `pool.broadcast`): a broadcast wakes every worker, each of which then searches all
        // the others' queues before it sleeps again, quadratic in the threads (at 1024 threads
        // on 2 cores, seconds for each broadcast).
        let cpu_before: Vec<_> = threads.iter().map(cpu_time).collect();
        let start = Instant::now();
        let stop = Stop::new();
        let scoped = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|scope| {
                for task in tasks {
                    let task = task.clone();
                    let (slots, stop) = (&slots, &stop);
                    scope.spawn(move |scope| run_task(scope, task, true, runner, slots, stop));
                }
            })
        }));
        let wall = start.elapsed();
        let cpu_after: Vec<_> = threads.iter().map(cpu_time).collect();
        // rayon does not join its threads when the pool is dropped; joining them here means no
        // thread of this run is left working when it returns, as with the other balancers, also
        // when a task panicked: its panic reaches the caller once every thread has ended.
        drop(pool);
        join_all(threads);
        if let Err(payload) = scoped {
            panic::resume_unwind(payload);
        }
        let mut locals = Vec::with_capacity(slots.len());
        let mut per_worker = Vec::with_capacity(slots.len());
        for (i, slot) in slots.into_iter().enumerate() {
            let mut slot = slot
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            slot.telemetry.busy = match (cpu_before[i], cpu_after[i]) {
                (Some(before), Some(after)) => after.saturating_sub(before).min(wall),
                _ => wall,
            };
            slot.telemetry.idle = wall.saturating_sub(slot.telemetry.busy);
            locals.push(slot.local);
            per_worker.push(slot.telemetry);
        }
        let mut telemetry = Telemetry::new(self.name(), wall, per_worker);
        telemetry.steals_observed = false;
        Ok(Outcome { telemetry, locals })
    }
}

/// Builds a rayon pool of `workers` threads named `name-i`, started by us so that we hold their
/// handles: rayon does not join its threads, and it reports a thread it could not start without
/// saying which. rayon starts them in the order of their index, so handle `i` is that of pool
/// thread `i`. Drop the pool, then [`join_all`] the handles, to end it.
///
/// A refused start comes back as the [`SpawnError`] of the other balancers, naming the thread;
/// rayon has then told the threads already started to exit, and they are joined first.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::rayon_scope::{join_all, start_pool};
///
/// let (pool, threads) = start_pool(NonZeroUsize::new(2).unwrap(), "example")?;
/// assert_eq!(threads.len(), 2);
/// let name = pool.install(|| std::thread::current().name().map(String::from));
/// assert!(name.is_some_and(|n| n.starts_with("example-")));
/// drop(pool);
/// join_all(threads);
/// # Ok::<(), balancers::SpawnError>(())
/// ```
pub fn start_pool(
    workers: NonZeroUsize,
    name: &str,
) -> Result<(rayon::ThreadPool, Vec<JoinHandle<()>>), SpawnError> {
    let mut threads = Vec::with_capacity(workers.get());
    let mut refused = None;
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(workers.get())
        .stack_size(crate::worker_stack_size())
        .spawn_handler(|thread| {
            let index = thread.index();
            let mut builder = thread::Builder::new().name(format!("{name}-{index}"));
            if let Some(size) = thread.stack_size() {
                builder = builder.stack_size(size);
            }
            match fault::check_start(index).and_then(|()| builder.spawn(|| thread.run())) {
                Ok(handle) => {
                    threads.push(handle);
                    Ok(())
                }
                Err(source) => {
                    // rayon keeps only the message; the error itself goes to the caller.
                    let message = io::Error::new(source.kind(), source.to_string());
                    refused = Some((index, source));
                    Err(message)
                }
            }
        })
        .build();
    match built {
        Ok(pool) => Ok((pool, threads)),
        Err(error) => {
            join_all(threads);
            let (worker, source) = refused.unwrap_or((0, io::Error::other(error)));
            Err(SpawnError {
                worker,
                workers: workers.get(),
                source,
            })
        }
    }
}

/// Waits for every pool thread to end; a pool thread's panic reaches the caller.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use balancers::rayon_scope::{join_all, start_pool};
/// let (pool, threads) = start_pool(NonZeroUsize::MIN, "joined")?;
/// assert_eq!(pool.install(|| 6 * 7), 42);
/// drop(pool); // tells the thread to exit
/// join_all(threads);
/// # Ok::<(), balancers::SpawnError>(())
/// ```
pub fn join_all(threads: Vec<JoinHandle<()>>) {
    for thread in threads {
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    }
}

/// Runs one task on the calling pool thread, unless `stop` was requested: a task that
/// panicked requests it, so that the scope's other tasks are dropped unrun and the panic
/// reaches the caller as soon as the tasks already running end (a scope waits for every task
/// it spawned, and spawned work may never end on its own).
fn run_task<'s, T, R>(
    scope: &rayon::Scope<'s>,
    task: T,
    initial: bool,
    runner: &'s R,
    slots: &'s [Mutex<Slot<R::Local>>],
    stop: &'s Stop,
) where
    T: Send + 's,
    R: TaskRunner<T>,
{
    if stop.requested() {
        return;
    }
    let me = rayon::current_thread_index().expect("scope tasks run on the pool");
    // Only this thread takes this lock: `spawn` below queues, it never runs a task in place.
    let mut slot = slots[me]
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let slot = &mut *slot;
    let mut spawner = RayonSpawner {
        scope,
        runner,
        slots,
        stop,
        spawned: 0,
    };
    panic::catch_unwind(AssertUnwindSafe(|| {
        runner.run(task, &mut slot.local, &mut spawner)
    }))
    .unwrap_or_else(|payload| {
        stop.request();
        panic::resume_unwind(payload)
    });
    slot.telemetry.tasks += 1;
    slot.telemetry.initial_tasks += u64::from(initial);
    slot.telemetry.spawned += spawner.spawned;
}

/// The [`Spawn`] handle of a rayon task: every child is a `scope.spawn`.
struct RayonSpawner<'a, 's, R, L> {
    scope: &'a rayon::Scope<'s>,
    runner: &'s R,
    slots: &'s [Mutex<Slot<L>>],
    stop: &'s Stop,
    spawned: u64,
}

impl<'s, T, R> Spawn<T> for RayonSpawner<'_, 's, R, R::Local>
where
    T: Send + 's,
    R: TaskRunner<T>,
{
    fn spawn(&mut self, task: T) {
        self.spawned += 1;
        let (runner, slots, stop) = (self.runner, self.slots, self.stop);
        self.scope
            .spawn(move |scope| run_task(scope, task, false, runner, slots, stop));
    }
}

/// The CPU time pool thread `thread` has used, where the system tells, read from the calling
/// thread.
#[cfg(target_os = "linux")]
fn cpu_time(thread: &JoinHandle<()>) -> Option<Duration> {
    use std::os::unix::thread::JoinHandleExt;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: [1] the handle is neither joined nor detached, so the `pthread_t` it gives names
    // a thread descriptor that is still ours; [2] the thread has not ended, so the clock is its
    // own: a pool thread runs until the pool is dropped, which `run` does only after its last
    // read; [3] the function writes one `clockid_t` through the pointer, which points to a
    // live, writable one, and reads nothing else of ours.
    let status = unsafe { libc::pthread_getcpuclockid(thread.as_pthread_t(), &mut clock) };
    if status != 0 {
        return None;
    }
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through the pointer, which points to a
    // live, writable one; it reads nothing else of ours.
    let status = unsafe { libc::clock_gettime(clock, &mut now) };
    (status == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

/// The CPU time a thread has used, where the system tells.
#[cfg(not(target_os = "linux"))]
fn cpu_time(_thread: &JoinHandle<()>) -> Option<Duration> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the tasks it runs; task `n` spawns `n - 1` twice.
    struct Countdown;

    impl TaskRunner<u32> for Countdown {
        type Local = u64;
        fn local(&self, _worker: usize) -> u64 {
            0
        }
        fn run<S: Spawn<u32>>(&self, n: u32, done: &mut u64, spawn: &mut S) {
            *done += 1;
            if n > 0 {
                spawn.spawn(n - 1);
                spawn.spawn(n - 1);
            }
        }
    }

    #[test]
    fn more_workers_than_it_starts_are_bounded() {
        let most = RayonScope::max_workers();
        let asked = most.checked_add(1).expect("not usize::MAX");
        let outcome = RayonScope
            .run(asked, &[4, 4, 4], &Countdown)
            .expect("workers start");
        assert_eq!(outcome.telemetry.workers.len(), most.get());
        assert_eq!(outcome.locals.len(), most.get());
        assert_eq!(outcome.locals.iter().sum::<u64>(), 3 * 31);
        assert_eq!(outcome.telemetry.total_tasks(), 3 * 31);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_threads_cpu_time_is_read_from_outside_it() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            // Waits until told: alive, and not running, while its clock is read.
            let _ = rx.recv();
        });
        assert!(cpu_time(&thread).is_some());
        drop(tx);
        thread.join().unwrap();
    }
}
