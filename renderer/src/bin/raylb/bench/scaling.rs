//! `raylb bench scaling`: time and parallel efficiency against thread count.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use balancers::Balancer;
use renderer::render::{RenderOptions, render};
use renderer::stats::counted;

use super::report::{Axes, Panel, Series, Table, line_chart, save};
use crate::cli::{ScalingArgs, SceneSource, threads};
use crate::progress::Progress;

pub(crate) fn run(args: &ScalingArgs, quiet: bool) -> Result<ExitCode> {
    let file = args
        .scene_file
        .clone()
        .unwrap_or_else(|| PathBuf::from("scenes/treasure.toml"));
    if !file.exists() {
        bail!(
            "{}: no such scene file (run from the repository root, or name a scene file)",
            file.display()
        );
    }
    let scene = args.scene.load(
        &SceneSource {
            scene: Some(file),
            mesh: None,
        },
        quiet,
    )?;
    let counts: Vec<NonZeroUsize> = if args.threads.is_empty() {
        (1..=threads(None).get())
            .filter_map(NonZeroUsize::new)
            .collect()
    } else {
        args.threads.clone()
    };
    let balancers = args.set.kinds()?;

    let mut all = Table::new(&["scene", "balancer", "threads", "tile", "round", "seconds"]);
    let mut best: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    let runs = args.repeat.get() * counts.len() * balancers.len();
    let mut progress = Progress::new(runs as u64, "renders", quiet);
    for round in 1..=args.repeat.get() {
        for &workers in &counts {
            for (b, balancer) in balancers.iter().enumerate() {
                let options = RenderOptions {
                    balancer: *balancer,
                    threads: workers,
                    tile: args.tile,
                    work_map: false,
                };
                let seconds = render(&scene, &options)?.wall().as_secs_f64();
                progress.step(&format!(
                    "round {round}/{}: {} {}: {seconds:.3} s",
                    args.repeat,
                    counted(workers.get() as u64, "thread"),
                    balancer.name()
                ));
                all.row(vec![
                    scene.name.clone(),
                    balancer.name(),
                    workers.to_string(),
                    args.tile.to_string(),
                    round.to_string(),
                    format!("{seconds:.6}"),
                ]);
                let entry = best.entry((b, workers.get())).or_insert(f64::MAX);
                *entry = entry.min(seconds);
            }
        }
    }

    progress.finish();
    let mut summary = Table::new(&["balancer", "threads", "seconds", "speedup", "efficiency"]);
    let mut speedups = Vec::new();
    for (b, balancer) in balancers.iter().enumerate() {
        let one = best.get(&(b, 1)).copied();
        let mut points = Vec::new();
        for &workers in &counts {
            let t = best[&(b, workers.get())];
            let (speedup, efficiency) = match one {
                Some(one) => {
                    let s = one / t;
                    (
                        format!("{s:.3}"),
                        format!("{:.3}", s / workers.get() as f64),
                    )
                }
                None => ("-".into(), "-".into()),
            };
            if let Some(one) = one {
                points.push((workers.get() as f64, one / t));
            }
            summary.row(vec![
                balancer.name(),
                workers.to_string(),
                format!("{t:.3}"),
                speedup,
                efficiency,
            ]);
        }
        speedups.push(Series {
            label: balancer.name(),
            points,
        });
    }
    say!(
        quiet,
        "{}: {}×{}, {}-pixel tiles, best of {}; speedup = T(1) / T(p), efficiency = speedup / p.",
        scene.name,
        scene.width,
        scene.height,
        args.tile,
        counted(args.repeat.get() as u64, "round")
    );
    say!(quiet, "{}", summary.render().trim_end());
    let axes = Axes {
        x: "threads",
        y: "speedup over 1 thread",
        log_x: false,
        y_from_zero: true,
    };
    let panel = Panel {
        title: format!("{} ({}-pixel tiles)", scene.name, args.tile),
        series: speedups,
    };
    save(&args.out, "scaling.csv", &all.csv())?;
    save(&args.out, "scaling-best.csv", &summary.csv())?;
    save(
        &args.out,
        "scaling.svg",
        &line_chart("Speedup against threads", &axes, &[panel])?,
    )?;
    say!(
        quiet,
        "wrote   {}/scaling.csv, scaling-best.csv, scaling.svg",
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
