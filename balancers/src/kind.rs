//! One type that names any balancer of this crate, for callers that choose at run time.

use std::num::NonZeroUsize;

use crate::balancer::{Balancer, Outcome, SpawnError, TaskRunner};
use crate::counter::CentralCounter;
use crate::order::Order;
use crate::rayon_scope::RayonScope;
use crate::static_tiles::{Assignment, StaticTiles};
use crate::stealing::{DequeKind, StealAmount, WorkStealing};
use crate::victim::VictimPolicy;

/// Any balancer of this crate, chosen at run time (from a command line, say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalancerKind {
    /// See [`StaticTiles`].
    Static(StaticTiles),
    /// See [`CentralCounter`].
    Counter(CentralCounter),
    /// See [`WorkStealing`].
    Stealing(WorkStealing),
    /// See [`RayonScope`].
    Rayon(RayonScope),
}

impl BalancerKind {
    /// Static assignment dealt out as `assignment`, depth-first.
    pub fn static_tiles(assignment: Assignment) -> Self {
        Self::Static(StaticTiles {
            assignment,
            order: Order::DepthFirst,
        })
    }

    /// A central counter handing out `chunk` initial tasks at a time, depth-first.
    pub fn counter(chunk: NonZeroUsize) -> Self {
        Self::Counter(CentralCounter {
            chunk,
            order: Order::DepthFirst,
        })
    }

    /// The order in which its workers run the tasks they hold; `None` for `rayon`, whose
    /// order is rayon's own.
    pub fn order(&self) -> Option<Order> {
        match self {
            Self::Static(b) => Some(b.order),
            Self::Counter(b) => Some(b.order),
            Self::Stealing(b) => Some(b.order),
            Self::Rayon(_) => None,
        }
    }

    /// This balancer running its tasks in `order`; `None` for `rayon`, whose order cannot be
    /// chosen.
    pub fn with_order(self, order: Order) -> Option<Self> {
        Some(match self {
            Self::Static(b) => Self::Static(StaticTiles { order, ..b }),
            Self::Counter(b) => Self::Counter(CentralCounter { order, ..b }),
            Self::Stealing(b) => Self::Stealing(WorkStealing { order, ..b }),
            Self::Rayon(_) => return None,
        })
    }

    /// The bytes this balancer holds for a run of `tasks` initial tasks of `task_bytes` each
    /// on `workers` workers, beyond the tasks slice itself and what running tasks spawn: the
    /// queues it allocates up front and the copies of initial tasks it keeps. For estimating a
    /// run's memory before it starts.
    pub fn queue_bytes(&self, workers: usize, tasks: usize, task_bytes: usize) -> u64 {
        let (workers, tasks, task_bytes) = (workers as u64, tasks as u64, task_bytes as u64);
        match self {
            // A local queue per worker, of `INITIAL_CAPACITY` tasks to start with.
            Self::Static(_) | Self::Counter(_) => {
                workers * crate::local_queue::INITIAL_CAPACITY as u64 * task_bytes
            }
            // A deque of `CAPACITY` slots per worker (a task and its depth each), and each
            // worker's share of the initial tasks copied into its private backlog.
            Self::Stealing(_) => {
                let slot = task_bytes + 8;
                workers * crate::stealing::CAPACITY as u64 * slot + tasks * slot
            }
            // Every initial task a heap job of its own on rayon's queues: the task and a
            // closure's references, about 64 bytes besides.
            Self::Rayon(_) => tasks * (task_bytes + 64),
        }
    }

    /// One of each configuration worth checking against the others: `static` with both
    /// assignments, `counter` with chunks of 1 and 4, `stealing` with every deque, victim
    /// selection and steal amount, `rayon`, and breadth-first `static`, `counter` and
    /// `stealing` (with each deque). The byte-compare matrix runs all of them.
    pub fn every_variant() -> Vec<Self> {
        let mut all = vec![
            Self::static_tiles(Assignment::Interleaved),
            Self::static_tiles(Assignment::Blocked),
            Self::counter(NonZeroUsize::MIN),
            Self::counter(NonZeroUsize::new(4).expect("4 is not 0")),
        ];
        for deque in [DequeKind::Abp, DequeKind::Locked] {
            for victim in [
                VictimPolicy::Random,
                VictimPolicy::Sample,
                VictimPolicy::Set,
            ] {
                for amount in [StealAmount::One, StealAmount::Half] {
                    let assignment = Assignment::Interleaved;
                    all.push(Self::Stealing(WorkStealing {
                        deque,
                        victim,
                        amount,
                        assignment,
                        order: Order::DepthFirst,
                    }));
                }
            }
        }
        all.push(Self::Rayon(RayonScope));
        let breadth_first = [
            Self::static_tiles(Assignment::Interleaved),
            Self::counter(NonZeroUsize::MIN),
            Self::Stealing(WorkStealing::default()),
            Self::Stealing(WorkStealing {
                deque: DequeKind::Locked,
                ..WorkStealing::default()
            }),
        ];
        all.extend(breadth_first.map(|b| b.with_order(Order::BreadthFirst).expect("not rayon")));
        all
    }

    /// The balancer's family: `static`, `counter`, `stealing` or `rayon`.
    pub fn family(&self) -> &'static str {
        match self {
            Self::Static(_) => "static",
            Self::Counter(_) => "counter",
            Self::Stealing(_) => "stealing",
            Self::Rayon(_) => "rayon",
        }
    }
}

impl Balancer for BalancerKind {
    fn name(&self) -> String {
        match self {
            Self::Static(b) => b.name(),
            Self::Counter(b) => b.name(),
            Self::Stealing(b) => b.name(),
            Self::Rayon(b) => b.name(),
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
            Self::Stealing(b) => b.run(workers, tasks, runner),
            Self::Rayon(b) => b.run(workers, tasks, runner),
        }
    }
}
