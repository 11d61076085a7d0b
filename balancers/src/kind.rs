//! One type that names any balancer of this crate, for callers that choose at run time.

use std::num::NonZeroUsize;

use crate::balancer::{Balancer, Outcome, SpawnError, TaskRunner};
use crate::counter::CentralCounter;
use crate::static_tiles::{Assignment, StaticTiles};

/// Any balancer of this crate, chosen at run time (from a command line, say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalancerKind {
    /// See [`StaticTiles`].
    Static(StaticTiles),
    /// See [`CentralCounter`].
    Counter(CentralCounter),
}

impl BalancerKind {
    /// Static assignment dealt out as `assignment`.
    pub fn static_tiles(assignment: Assignment) -> Self {
        Self::Static(StaticTiles { assignment })
    }

    /// A central counter handing out `chunk` initial tasks at a time.
    pub fn counter(chunk: NonZeroUsize) -> Self {
        Self::Counter(CentralCounter { chunk })
    }
}

impl Balancer for BalancerKind {
    fn name(&self) -> String {
        match self {
            Self::Static(b) => b.name(),
            Self::Counter(b) => b.name(),
        }
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
        match self {
            Self::Static(b) => b.run(workers, tasks, runner),
            Self::Counter(b) => b.run(workers, tasks, runner),
        }
    }
}
