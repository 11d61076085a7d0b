//! Replaying a run without the machine: a run's task tree, recorded once with each task's work
//! in deterministic units ([`tree`]), a linear model that turns that work into time
//! ([`model`]), fitted against measured times, and a discrete-event simulation of the
//! balancers' policies over that tree on any number of workers ([`engine`]). A balancer's
//! policy is a [`Policy`] ([`policy`]): the built-in balancers' and one's own run through the
//! same interface.
//!
//! The tree is a property of the work, not of the balancer that ran it: every task's children
//! and their order follow from the task alone, so the recording of a run is the same whichever
//! balancer, thread count or order produced it, and its tasks are numbered canonically
//! ([`TaskTree::from_recorded`]).

mod builtin;
pub mod engine;
pub mod model;
pub mod policy;
pub mod tree;
pub mod wool;

pub use engine::{
    Costs, Sampling, SimResult, Simulation, Timing, WorkerResult, simulate, simulate_policy,
};
pub use model::{CostModel, Fit, FitError};
pub use policy::{Children, DynSimulated, Next, Policy, Queued, Simulated, Victim};
pub use tree::{MAX_FEATURES, NO_PARENT, ReadError, RecordedTask, TaskTree};
