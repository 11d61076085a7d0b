//! `raylb bench`: benchmarks that print a table and write CSV and an SVG plot.

/// `outln!` unless `quiet`.
macro_rules! say {
    ($quiet:expr, $($arg:tt)*) => {
        if !$quiet {
            outln!($($arg)*);
        }
    };
}

mod cluster;
mod costs;
mod deque;
pub(crate) mod report;
mod scaling;
mod sim_sweep;
mod sweep;
mod trace;

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{Bench, BenchArgs};

pub(crate) fn run(args: &BenchArgs) -> Result<ExitCode> {
    match &args.bench {
        Bench::Trace(a) => trace::run(a, args.quiet),
        Bench::Sweep(a) => sweep::run(a, args.quiet),
        Bench::Scaling(a) => scaling::run(a, args.quiet),
        Bench::Deque(a) => deque::run(a, args.quiet),
        Bench::Costs(a) => costs::run(a, args.quiet),
        Bench::SimSweep(a) => sim_sweep::run(a, args.quiet),
        Bench::Cluster(a) => cluster::run(a, args.quiet),
    }
}
