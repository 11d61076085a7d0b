//! Replaying a run without the machine: a run's task tree, recorded once with each task's work
//! in deterministic units ([`tree`]), and a linear model that turns that work into time
//! ([`model`]), fitted against measured times.
//!
//! The tree is a property of the work, not of the balancer that ran it: every task's children
//! and their order follow from the task alone, so the recording of a run is the same whichever
//! balancer, thread count or order produced it, and its tasks are numbered canonically
//! ([`TaskTree::from_recorded`]).

pub mod model;
pub mod tree;

pub use model::{CostModel, Fit, FitError};
pub use tree::{MAX_FEATURES, NO_PARENT, ReadError, RecordedTask, TaskTree};
