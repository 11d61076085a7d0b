//! The threads a BVH is built on, started for the build and joined before it returns.
//!
//! The wide BVH ([`WideBvh::build_on`](super::WideBvh::build_on)) is built on raylb's own
//! work-stealing balancer, which starts and joins its workers itself. The octree's build
//! ([`OctreeBvh::build`](super::OctreeBvh::build)) is rayon code: its parallel iterators and
//! `join`s run on the pool they are called from, and, called from outside any, on rayon's
//! global pool, which panics when it cannot start its threads. [`Accel::build`] calls it on a
//! pool of its own instead ([`on_threads`]). Either way a thread the operating system refuses
//! comes back as a [`BuildThreadError`], as a refused worker of a frame does.
//!
//! Why not build on the calling thread alone when no thread can be started: it would postpone
//! the failure rather than avoid it: the frame that follows starts a thread of its own and its
//! workers, under the same limit. Where some threads can start but not one per core,
//! `RAYON_NUM_THREADS` asks for fewer, and the error says so.
//!
//! [`Accel::build`]: crate::accel::Accel::build

use std::fmt;
use std::io;
use std::num::NonZeroUsize;
use std::thread;

use balancers::rayon_scope::{join_all, start_pool};

/// The operating system refused to start a thread of a BVH build.
#[derive(Debug)]
pub struct BuildThreadError {
    /// Which thread could not be started (from 0).
    pub thread: usize,
    /// How many the build asked for.
    pub threads: usize,
    /// The operating system's reason.
    pub source: io::Error,
}

impl fmt::Display for BuildThreadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot start the BVH build's thread {} of {}",
            self.thread + 1,
            self.threads
        )?;
        if self.threads > 1 {
            write!(f, " (RAYON_NUM_THREADS asks for fewer)")?;
        }
        write!(f, ": {}", self.source)
    }
}

impl From<balancers::SpawnError> for BuildThreadError {
    fn from(e: balancers::SpawnError) -> Self {
        Self {
            thread: e.worker,
            threads: e.workers,
            source: e.source,
        }
    }
}

/// The reason is part of the message (`Display`), so `source` is left empty: error chains
/// would print it twice.
impl std::error::Error for BuildThreadError {}

/// How many threads a build starts: `RAYON_NUM_THREADS` where it is a whole number above 0,
/// as for rayon's own pools, else one per core the process may use.
pub(crate) fn thread_count() -> NonZeroUsize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.trim().parse::<NonZeroUsize>().ok())
        .or_else(|| thread::available_parallelism().ok())
        .unwrap_or(NonZeroUsize::MIN)
}

/// Runs `build` on a rayon pool of `workers` threads started for it, every one of them joined
/// before this returns: no thread of the build is left to hold its stack, or to count against
/// a limit on threads, while the frame starts its own.
///
/// # Errors
/// When the operating system refuses to start one of the threads; those already started are
/// joined first, and `build` does not run.
pub(crate) fn on_threads<R: Send>(
    workers: NonZeroUsize,
    build: impl FnOnce() -> R + Send,
) -> Result<R, BuildThreadError> {
    let (pool, threads) = start_pool(workers, "raylb-bvh")?;
    let result = pool.install(build);
    // rayon does not join its threads when the pool is dropped: it tells them to end.
    drop(pool);
    join_all(threads);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_runs_on_the_threads_started_for_it() {
        let count = thread_count().get();
        let (threads, names) = on_threads(thread_count(), || {
            let names = rayon::broadcast(|_| thread::current().name().map(String::from));
            (rayon::current_num_threads(), names)
        })
        .expect("threads start");
        assert_eq!(threads, count);
        assert!(
            names
                .iter()
                .all(|n| n.as_deref().is_some_and(|n| n.starts_with("raylb-bvh-"))),
            "{names:?}"
        );
    }

    #[test]
    fn a_refused_thread_is_named_in_one_line() {
        let refused = |thread, threads| {
            BuildThreadError {
                thread,
                threads,
                source: io::Error::from_raw_os_error(11),
            }
            .to_string()
        };
        let eleven = io::Error::from_raw_os_error(11).to_string();
        assert_eq!(
            refused(2, 8),
            format!(
                "cannot start the BVH build's thread 3 of 8 (RAYON_NUM_THREADS asks for fewer): {eleven}"
            )
        );
        // With one thread asked for, there is no fewer to ask for.
        assert_eq!(
            refused(0, 1),
            format!("cannot start the BVH build's thread 1 of 1: {eleven}")
        );
    }
}
