//! Load balancers for irregular task-parallel work.
//!
//! A run starts from a list of *initial tasks* (for a renderer: image tiles). Running a task may
//! *spawn* more tasks (for a renderer: reflection and refraction rays), so the total work is not
//! known up front and is very uneven between initial tasks. A [`Balancer`] decides which worker
//! thread runs which task and when; the work itself is a [`TaskRunner`], which knows nothing
//! about threads.
//!
//! A frame can also be split between processes (MPI ranks, each running a balancer on its
//! threads): [`cluster`] moves initial tasks between ranks over any transport and decides when
//! the frame is over.
//!
//! The crate knows nothing about rays. Everything it measures is reported in [`Telemetry`],
//! with the same schema for every balancer, so balancers can be compared on equal terms.
//!
//! ```
//! use std::num::NonZeroUsize;
//! use balancers::{Balancer, BalancerKind, Spawn, TaskRunner};
//!
//! /// Counts down: task `n` spawns `n - 1` twice, so task `n` stands for 2^(n+1) - 1 tasks.
//! struct Countdown;
//! impl TaskRunner<u32> for Countdown {
//!     type Local = u64;
//!     fn local(&self, _worker: usize) -> u64 { 0 }
//!     fn run<S: Spawn<u32>>(&self, n: u32, done: &mut u64, spawn: &mut S) {
//!         *done += 1;
//!         if n > 0 {
//!             spawn.spawn(n - 1);
//!             spawn.spawn(n - 1);
//!         }
//!     }
//! }
//!
//! let balancer = BalancerKind::counter(NonZeroUsize::MIN);
//! let outcome = balancer.run(NonZeroUsize::new(4).unwrap(), &[3, 5, 0], &Countdown)?;
//! let total: u64 = outcome.locals.iter().sum();
//! assert_eq!(total, 15 + 63 + 1);
//! assert_eq!(outcome.telemetry.total_tasks(), total);
//! # Ok::<(), balancers::SpawnError>(())
//! ```

#![deny(missing_docs)]

mod balancer;
mod choice;
pub mod cluster;
pub mod conformance;
mod counter;
pub mod deque;
#[cfg(feature = "fault-injection")]
pub mod fault;
#[cfg(not(feature = "fault-injection"))]
mod fault;
pub mod hybrid;
mod kind;
mod local_queue;
mod order;
pub mod rayon_scope;
pub mod sim;
mod static_tiles;
mod stealing;
mod sync;
mod telemetry;
pub mod termination;
mod victim;

pub use balancer::{
    Balancer, Outcome, Spawn, SpawnError, Stop, TaskRunner, run_workers, worker_stack_size,
};
pub use choice::Choice;
pub use counter::CentralCounter;
pub use hybrid::{
    BatchRecord, BatchRunner, FirstBatch, HybridError, HybridOutcome, HybridStealing,
    ProcessorKind, ProcessorTelemetry,
};
pub use kind::BalancerKind;
pub use local_queue::LocalQueue;
pub use order::Order;
pub use rayon_scope::RayonScope;
pub use static_tiles::{Assignment, StaticTiles};
pub use stealing::{DequeKind, StealAmount, WorkStealing, YIELD_EVERY};
pub use telemetry::{Telemetry, WorkerTelemetry};
pub use victim::{Prospect, VictimPolicy, VictimSelector};
