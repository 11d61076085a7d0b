//! `raylb bench sweep`: time per pixel against tile edge, for each balancer and scene.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use balancers::Balancer;
use renderer::render::{RenderOptions, render};

use super::report::{Axes, Panel, Series, Table, line_chart, save};
use crate::cli::{SceneSource, SweepArgs, threads};
use crate::progress::Progress;

pub(crate) fn run(args: &SweepArgs, quiet: bool) -> Result<ExitCode> {
    let files = if args.scenes.is_empty() {
        vec![
            PathBuf::from("scenes/treasure.toml"),
            PathBuf::from("scenes/treasure-calm.toml"),
        ]
    } else {
        args.scenes.clone()
    };
    let balancers = args.set.kinds()?;
    let workers = threads(args.threads);
    let mut scenes = Vec::new();
    for file in &files {
        if !file.exists() {
            bail!(
                "{}: no such scene file (run from the repository root, or name scene files)",
                file.display()
            );
        }
        scenes.push(args.scene.load(&SceneSource {
            scene: Some(file.clone()),
            mesh: None,
        })?);
    }

    // Every round renders every combination once: drift in the machine's speed then touches
    // all of them alike, and the best round of each is kept.
    let mut all = Table::new(&[
        "scene",
        "balancer",
        "tile",
        "threads",
        "round",
        "seconds",
        "us_per_pixel",
    ]);
    let mut best: BTreeMap<(usize, u32, usize), f64> = BTreeMap::new();
    // Every round's time of each combination, in round order, for the paired comparison.
    let mut rounds: BTreeMap<(usize, u32, usize), Vec<f64>> = BTreeMap::new();
    let runs = args.repeat.get() * scenes.len() * args.tiles.len() * balancers.len();
    let mut progress = Progress::new(runs as u64, "renders", quiet);
    for round in 1..=args.repeat.get() {
        for (s, scene) in scenes.iter().enumerate() {
            for &tile in &args.tiles {
                // The balancers take turns going first, so that none always runs right
                // after the same other one.
                for k in 0..balancers.len() {
                    let b = (k + round - 1) % balancers.len();
                    let balancer = &balancers[b];
                    let options = RenderOptions {
                        balancer: *balancer,
                        threads: workers,
                        tile,
                        work_map: false,
                    };
                    let seconds = render(scene, &options)?.wall().as_secs_f64();
                    let per_pixel = seconds * 1e6 / f64::from(scene.width * scene.height);
                    progress.step(&format!(
                        "round {round}/{}: {} tile {tile} {}: {seconds:.3} s",
                        args.repeat,
                        scene.name,
                        balancer.name()
                    ));
                    all.row(vec![
                        scene.name.clone(),
                        balancer.name(),
                        tile.to_string(),
                        workers.to_string(),
                        round.to_string(),
                        format!("{seconds:.6}"),
                        format!("{per_pixel:.6}"),
                    ]);
                    let entry = best.entry((s, tile.get(), b)).or_insert(f64::MAX);
                    *entry = entry.min(per_pixel);
                    rounds
                        .entry((s, tile.get(), b))
                        .or_default()
                        .push(per_pixel);
                }
            }
        }
    }

    progress.finish();
    let names: Vec<String> = balancers.iter().map(|b| b.name()).collect();
    let mut header = vec!["scene".to_string(), "tile".to_string()];
    header.extend(names.iter().map(|n| format!("{n} µs/px")));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut summary = Table::new(&header);
    let mut panels = Vec::new();
    for (s, scene) in scenes.iter().enumerate() {
        let mut series: Vec<Series> = names
            .iter()
            .map(|n| Series {
                label: n.clone(),
                points: Vec::new(),
            })
            .collect();
        for &tile in &args.tiles {
            let mut row = vec![scene.name.clone(), tile.to_string()];
            let times: Vec<f64> = (0..balancers.len())
                .map(|b| best[&(s, tile.get(), b)])
                .collect();
            let fastest = times.iter().copied().fold(f64::MAX, f64::min);
            for (b, &t) in times.iter().enumerate() {
                let mark = if t == fastest { "*" } else { "" };
                row.push(format!(
                    "{t:.3}{mark} ({:+.1}%)",
                    (t / fastest - 1.0) * 100.0
                ));
                series[b].points.push((f64::from(tile.get()), t));
            }
            summary.row(row);
        }
        panels.push(Panel {
            title: format!("{} ({} threads)", scene.name, workers),
            series,
        });
    }
    say!(
        quiet,
        "Best of {} rounds, µs per pixel; * marks the fastest balancer at each tile edge, and the\npercentage is each balancer's distance from it.",
        args.repeat
    );
    say!(quiet, "{}", summary.render().trim_end());
    let paired = paired_table(&scenes, &args.tiles, &names, &rounds);
    say!(
        quiet,
        "\nPaired by round: the median over rounds of each balancer's time against the fastest\nof the same round (the same minute of the machine), and how many rounds it was fastest in."
    );
    say!(quiet, "{}", paired.render().trim_end());
    let axes = Axes {
        x: "tile edge (pixels)",
        y: "time per pixel (µs)",
        log_x: true,
        y_from_zero: true,
    };
    save(&args.out, "sweep.csv", &all.csv())?;
    save(&args.out, "sweep-best.csv", &summary.csv())?;
    save(&args.out, "sweep-paired.csv", &paired.csv())?;
    save(
        &args.out,
        "sweep.svg",
        &line_chart("Time per pixel against tile edge", &axes, &panels)?,
    )?;
    say!(
        quiet,
        "wrote   {}/sweep.csv, sweep-best.csv, sweep-paired.csv, sweep.svg",
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// For each scene and tile edge, each balancer's median over rounds of its time over the
/// fastest time of the same round, and the rounds in which it was the fastest. Within a round
/// the balancers ran minutes apart at most, so the ratio is free of the machine's slow drift,
/// which the best-of-rounds table is not.
fn paired_table(
    scenes: &[renderer::scene::Scene],
    tiles: &[std::num::NonZeroU32],
    names: &[String],
    rounds: &BTreeMap<(usize, u32, usize), Vec<f64>>,
) -> Table {
    let mut header = vec!["scene".to_string(), "tile".to_string()];
    header.extend(names.iter().map(|n| format!("{n} vs fastest")));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for (s, scene) in scenes.iter().enumerate() {
        for &tile in tiles {
            let times: Vec<&Vec<f64>> = (0..names.len())
                .map(|b| &rounds[&(s, tile.get(), b)])
                .collect();
            let count = times[0].len();
            let fastest: Vec<f64> = (0..count)
                .map(|r| times.iter().map(|t| t[r]).fold(f64::MAX, f64::min))
                .collect();
            let mut row = vec![scene.name.clone(), tile.to_string()];
            for t in &times {
                let mut ratios: Vec<f64> = t.iter().zip(&fastest).map(|(a, f)| a / f).collect();
                ratios.sort_by(f64::total_cmp);
                let median = if count % 2 == 1 {
                    ratios[count / 2]
                } else {
                    (ratios[count / 2 - 1] + ratios[count / 2]) / 2.0
                };
                let wins = t.iter().zip(&fastest).filter(|(a, f)| a == f).count();
                row.push(format!("{:+.1}% ({wins}/{count})", (median - 1.0) * 100.0));
            }
            table.row(row);
        }
    }
    table
}
