//! raylb's experiments: the benchmark sweeps over tile edges and thread counts, the fits of the
//! simulator's scheduling costs, the deque micro-benchmark, runs over MPI ranks, the
//! ray-tracing benchmarks and the simulator's runs, each driven from a plain options struct
//! that raylb's command line fills in.
//!
//! Each reports in three ways: an aligned table on the terminal (unless quiet), CSV with one
//! row per observation, and SVG line plots, written together into an output folder that is
//! checked before any work is done. Standard output is written through [`outln!`] and
//! [`out!`], which hand a closed or full output back as an error rather than panicking.

#[macro_use]
pub mod terminal;

pub mod outputs;
pub mod progress;
pub mod report;
