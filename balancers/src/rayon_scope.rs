//! `rayon`: the baseline a Rust programmer would write, a `rayon::scope` that spawns every
//! task; rayon's own work-stealing pool does the rest.

use std::io;
use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::balancer::{Balancer, Outcome, Spawn, SpawnError, TaskRunner};
use crate::fault;
use crate::telemetry::{Telemetry, WorkerTelemetry};

/// rayon's work-stealing pool, driven through `rayon::scope`: every initial task and every
/// spawned task is a `scope.spawn`. Measured, not trusted: it is the baseline our own
/// balancers are compared with.
///
/// Its telemetry is what rayon lets us see without slowing it down: tasks per worker, and busy
/// time as the CPU time each pool thread used during the run (which includes rayon's own
/// spinning while it looks for work; on systems other than Unix it is the whole wall time),
/// idle time as the rest. rayon does not report its steals or queue lengths; those are
/// reported as unknown. Per-task clock reads would have cost rayon about 1% on `treasure`,
/// a handicap the other balancers do not carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RayonScope;

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
        let (pool, threads) = start_pool(workers)?;
        let slots: Vec<Mutex<Slot<R::Local>>> = (0..workers.get())
            .map(|w| {
                Mutex::new(Slot {
                    local: runner.local(w),
                    telemetry: WorkerTelemetry::default(),
                })
            })
            .collect();
        let cpu_before = pool.broadcast(|_| thread_cpu_time());
        let start = Instant::now();
        pool.scope(|scope| {
            for task in tasks {
                let task = task.clone();
                let slots = &slots;
                scope.spawn(move |scope| run_task(scope, task, true, runner, slots));
            }
        });
        let wall = start.elapsed();
        let cpu_after = pool.broadcast(|_| thread_cpu_time());
        // rayon does not join its threads when the pool is dropped; joining them here means no
        // thread of this run is left working when it returns, as with the other balancers.
        drop(pool);
        join_all(threads);
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

/// Builds a pool of `workers` threads, started by us so that we hold their handles: rayon does
/// not join its threads, and it reports a thread it could not start without saying which.
///
/// A refused start comes back as the [`SpawnError`] of the other balancers, naming the thread;
/// rayon has then told the threads already started to exit, and they are joined first.
fn start_pool(
    workers: NonZeroUsize,
) -> Result<(rayon::ThreadPool, Vec<JoinHandle<()>>), SpawnError> {
    let mut threads = Vec::with_capacity(workers.get());
    let mut refused = None;
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(workers.get())
        .spawn_handler(|thread| {
            let index = thread.index();
            let mut builder = thread::Builder::new().name(format!("raylb-rayon-{index}"));
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
fn join_all(threads: Vec<JoinHandle<()>>) {
    for thread in threads {
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    }
}

/// Runs one task on the calling pool thread.
fn run_task<'s, T, R>(
    scope: &rayon::Scope<'s>,
    task: T,
    initial: bool,
    runner: &'s R,
    slots: &'s [Mutex<Slot<R::Local>>],
) where
    T: Send + 's,
    R: TaskRunner<T>,
{
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
        spawned: 0,
    };
    runner.run(task, &mut slot.local, &mut spawner);
    slot.telemetry.tasks += 1;
    slot.telemetry.initial_tasks += u64::from(initial);
    slot.telemetry.spawned += spawner.spawned;
}

/// The [`Spawn`] handle of a rayon task: every child is a `scope.spawn`.
struct RayonSpawner<'a, 's, R, L> {
    scope: &'a rayon::Scope<'s>,
    runner: &'s R,
    slots: &'s [Mutex<Slot<L>>],
    spawned: u64,
}

impl<'s, T, R> Spawn<T> for RayonSpawner<'_, 's, R, R::Local>
where
    T: Send + 's,
    R: TaskRunner<T>,
{
    fn spawn(&mut self, task: T) {
        self.spawned += 1;
        let (runner, slots) = (self.runner, self.slots);
        self.scope
            .spawn(move |scope| run_task(scope, task, false, runner, slots));
    }
}

/// CPU time the calling thread has used, where the system tells.
#[cfg(unix)]
fn thread_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through the pointer, which points to a
    // live, writable one; it reads nothing else of ours.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (status == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

/// CPU time the calling thread has used, where the system tells.
#[cfg(not(unix))]
fn thread_cpu_time() -> Option<Duration> {
    None
}
