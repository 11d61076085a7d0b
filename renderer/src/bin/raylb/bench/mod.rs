//! `raylb bench`: benchmarks that print a table and write CSV and an SVG plot.

mod deque;
mod report;
mod scaling;
mod sweep;
mod trace;

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{Bench, BenchArgs};

pub(crate) fn run(args: &BenchArgs) -> Result<ExitCode> {
    match &args.bench {
        Bench::Trace(a) => trace::run(a),
        Bench::Sweep(a) => sweep::run(a),
        Bench::Scaling(a) => scaling::run(a),
        Bench::Deque(a) => deque::run(a),
    }
}
