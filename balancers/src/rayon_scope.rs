//! `rayon`: the baseline a Rust programmer would write, a `rayon::scope` that spawns every
//! task; rayon's own work-stealing pool does the rest.

use std::io;
use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::time::Instant;

use crate::balancer::{Balancer, Outcome, Spawn, SpawnError, TaskRunner};
use crate::telemetry::{Telemetry, WorkerTelemetry};

/// rayon's work-stealing pool, driven through `rayon::scope`: every initial task and every
/// spawned task is a `scope.spawn`. Measured, not trusted: it is the baseline our own
/// balancers are compared with.
///
/// Its telemetry is what rayon lets us see: tasks and busy time per worker (each task is
/// timed, two clock reads per task), idle time as the rest of the wall time. rayon does not
/// report its steals or queue lengths; those are reported as unknown.
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
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(workers.get())
            .thread_name(|i| format!("raylb-rayon-{i}"))
            .build()
            .map_err(|e| SpawnError {
                worker: 0,
                workers: workers.get(),
                source: io::Error::other(e),
            })?;
        let slots: Vec<Mutex<Slot<R::Local>>> = (0..workers.get())
            .map(|w| {
                Mutex::new(Slot {
                    local: runner.local(w),
                    telemetry: WorkerTelemetry::default(),
                })
            })
            .collect();
        let start = Instant::now();
        pool.scope(|scope| {
            for task in tasks {
                let task = task.clone();
                let slots = &slots;
                scope.spawn(move |scope| run_task(scope, task, true, runner, slots));
            }
        });
        let wall = start.elapsed();
        let mut locals = Vec::with_capacity(slots.len());
        let mut per_worker = Vec::with_capacity(slots.len());
        for slot in slots {
            let mut slot = slot
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            slot.telemetry.idle = wall.saturating_sub(slot.telemetry.busy);
            locals.push(slot.local);
            per_worker.push(slot.telemetry);
        }
        let mut telemetry = Telemetry::new(self.name(), wall, per_worker);
        telemetry.steals_observed = false;
        Ok(Outcome { telemetry, locals })
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
    let started = Instant::now();
    let mut spawner = RayonSpawner {
        scope,
        runner,
        slots,
        spawned: 0,
    };
    runner.run(task, &mut slot.local, &mut spawner);
    slot.telemetry.busy += started.elapsed();
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
