//! `raylb sim`: the command line's options for [`experiments::sim`], which replays a recorded
//! frame under the balancers' policies on simulated workers, or Faxén and Ardelius's `tree`
//! model (`--wool-tree`).

use std::process::ExitCode;

use anyhow::Result;
use experiments::sim::{CostOverrides, Policies, SimInput, SimOptions};

use crate::cli::SimArgs;

pub(crate) fn run(args: &SimArgs) -> Result<ExitCode> {
    experiments::sim::run(&options(args))?;
    Ok(ExitCode::SUCCESS)
}

/// What `args` asks the simulator for.
fn options(args: &SimArgs) -> SimOptions {
    SimOptions {
        input: args
            .tasks
            .clone()
            .map_or(SimInput::WoolTree, SimInput::Frame),
        runs: args.runs,
        seed: args.seed,
        workers: args.workers.clone(),
        policies: Policies {
            balancers: args.balancers.clone(),
            assign: args.assign.clone(),
            chunk: args.chunk.clone(),
            deque: args.deque.clone(),
            victim: args.victim.clone(),
            samples: args.samples,
            steal: args.steal.clone(),
            order: args.order.clone(),
        },
        model_from: args.model_from.clone(),
        task_cost: args.task_cost,
        unit_cost: args.unit_cost.clone(),
        costs: CostOverrides {
            steal: args.steal_cost,
            failed_steal: args.failed_steal_cost,
            stolen_task: args.stolen_task_cost,
            probe: args.probe_cost,
            counter: args.counter_cost,
            abp: args.abp_cost,
            locked: args.locked_cost,
            rayon: args.rayon_cost,
        },
        out: args.out.clone(),
        quiet: args.quiet,
    }
}
