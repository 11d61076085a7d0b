//! Faults on purpose: refusing a worker thread's start, so that tests can check what every
//! balancer does when the operating system refuses one (end promptly with [`SpawnError`],
//! every started worker returned); and a `stealing` balancer that loses a stolen task, so that
//! tests can check that the conformance kit catches it.
//!
//! The refusal is armed per calling thread ([`refuse_start`]), so tests running side by side
//! do not see each other's. It exists only with the `fault-injection` feature, which only this
//! crate's own tests enable (through a dev-dependency on the crate itself); without it
//! [`check_start`] is an empty inline function and a build holds no trace of it.
//!
//! [`SpawnError`]: crate::SpawnError

use std::io;

#[cfg(feature = "fault-injection")]
use std::cell::Cell;

#[cfg(feature = "fault-injection")]
thread_local! {
    /// The worker whose start the next runs on this thread refuse.
    static REFUSED: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Runs `f` with the start of worker thread `worker` (numbered from 0) refused in every run
/// it begins on the calling thread, as the operating system refuses a thread it has no memory
/// for.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use balancers::{Balancer, BalancerKind, Spawn, TaskRunner};
/// # struct Nothing;
/// # impl TaskRunner<u32> for Nothing {
/// #     type Local = ();
/// #     fn local(&self, _worker: usize) {}
/// #     fn run<S: Spawn<u32>>(&self, _task: u32, _local: &mut (), _spawn: &mut S) {}
/// # }
/// let balancer = BalancerKind::counter(NonZeroUsize::MIN);
/// let refused = balancers::fault::refuse_start(2, || {
///     balancer.run(NonZeroUsize::new(8).unwrap(), &[1, 2, 3], &Nothing)
/// });
/// assert_eq!(refused.unwrap_err().worker, 2);
/// ```
#[cfg(feature = "fault-injection")]
pub fn refuse_start<R>(worker: usize, f: impl FnOnce() -> R) -> R {
    /// Disarms the refusal also when `f` panics.
    struct Disarm(Option<usize>);
    impl Drop for Disarm {
        fn drop(&mut self) {
            REFUSED.set(self.0);
        }
    }
    let _disarm = Disarm(REFUSED.replace(Some(worker)));
    f()
}

/// Whether worker thread `worker` may be started: an error when a test has refused it.
#[cfg(feature = "fault-injection")]
pub(crate) fn check_start(worker: usize) -> io::Result<()> {
    if REFUSED.get() == Some(worker) {
        Err(io::Error::other("start refused by fault injection"))
    } else {
        Ok(())
    }
}

/// Whether worker thread `worker` may be started: always, without fault injection.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn check_start(_worker: usize) -> io::Result<()> {
    Ok(())
}

#[cfg(feature = "fault-injection")]
thread_local! {
    /// Whether the `stealing` runs begun on this thread lose each worker's first stolen task.
    static LOSE_STOLEN: Cell<bool> = const { Cell::new(false) };
}

/// A copy of `stealing` with a bug: each worker counts the first task it steals as run, and
/// drops it. The run ends (the task counts as finished), but a task never ran.
///
/// ```
/// # use std::num::NonZeroUsize;
/// use balancers::WorkStealing;
/// use balancers::conformance::{self, Property};
/// use balancers::fault::LosesAStolenTask;
///
/// let broken = LosesAStolenTask(WorkStealing::default());
/// let violation = conformance::check(&broken).unwrap_err();
/// assert_eq!(violation.property, Property::ExactlyOnce);
/// ```
#[cfg(feature = "fault-injection")]
#[derive(Clone, Copy, Debug)]
pub struct LosesAStolenTask(pub crate::WorkStealing);

#[cfg(feature = "fault-injection")]
impl crate::Balancer for LosesAStolenTask {
    fn name(&self) -> String {
        format!("{}/loses-a-stolen-task", self.0.name())
    }

    fn run<T, R>(
        &self,
        workers: std::num::NonZeroUsize,
        tasks: &[T],
        runner: &R,
    ) -> Result<crate::Outcome<R::Local>, crate::SpawnError>
    where
        T: Clone + Send + Sync,
        R: crate::TaskRunner<T>,
    {
        /// Disarms the fault also when the run panics.
        struct Disarm(bool);
        impl Drop for Disarm {
            fn drop(&mut self) {
                LOSE_STOLEN.set(self.0);
            }
        }
        let _disarm = Disarm(LOSE_STOLEN.replace(true));
        self.0.run(workers, tasks, runner)
    }
}

/// Whether the `stealing` run begun now on the calling thread loses stolen tasks.
#[cfg(feature = "fault-injection")]
pub(crate) fn loses_stolen_tasks() -> bool {
    LOSE_STOLEN.get()
}

/// Whether the `stealing` run begun now loses stolen tasks: never, without fault injection.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn loses_stolen_tasks() -> bool {
    false
}
