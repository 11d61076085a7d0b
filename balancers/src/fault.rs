//! Refusing a worker thread's start on purpose, so that tests can check what every balancer
//! does when the operating system refuses one: end promptly with [`SpawnError`], every started
//! worker joined.
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
