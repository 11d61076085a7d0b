//! `raylb`: render scenes to PNG, view them in a window, compare images, validate balancers,
//! benchmark.

mod bench;
mod cli;
mod compare;
mod progress;
mod render;
mod scenes;
mod validate;
mod view;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return cli::usage_error(e),
    };
    let result = match cli.command {
        Command::Render(args) => render::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::View(args) => view::run(&args),
        Command::Scenes(args) => scenes::run(&args),
        Command::Bench(args) => bench::run(&args),
    };
    result.unwrap_or_else(|e| {
        eprintln!("raylb: error: {e:#}");
        ExitCode::from(2)
    })
}
