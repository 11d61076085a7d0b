//! raylb's experiments: the benchmark sweeps over tile edges ([`sweep`]) and thread counts
//! ([`scaling`]), the fits of the simulator's scheduling costs ([`costs`]), the deque
//! micro-benchmark ([`deque`]), runs over MPI ranks ([`cluster`]), the ray-tracing benchmark
//! ([`trace`]), the build's speed ([`build`]), the tile sweep on simulated workers ([`sim_sweep`]) and the simulator's runs
//! over a recorded frame or Wool's tree model ([`sim`]). Each is driven from a plain options
//! struct that raylb's command line fills in; the scenes are read with the command line's
//! settings through [`scene::SceneSettings`].
//!
//! Each reports in three ways: an aligned table on the terminal (unless quiet), CSV with one
//! row per observation, and SVG line plots, written together into an output folder that is
//! checked before any work is done. Standard output is written through [`outln!`] and
//! [`out!`], which hand a closed or full output back as an error rather than panicking.

#![deny(missing_docs)]

#[macro_use]
pub mod terminal;

pub mod build;
pub mod cluster;
pub mod costs;
pub mod deque;
pub mod outputs;
pub mod progress;
mod report;
pub mod scaling;
pub mod scene;
pub mod sim;
pub mod sim_sweep;
mod start_line;
pub mod sweep;
pub mod trace;
