//! `raylb bench sweep`: time per pixel against tile edge, for each balancer and scene.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use balancers::Balancer;
use renderer::render::{RenderOptions, render};
use renderer::stats::counted;

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
        scenes.push(args.scene.load(
            &SceneSource {
                scene: Some(file.clone()),
                mesh: None,
            },
            quiet,
        )?);
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
    // Every round's time of each combination, in round order: the best of them for the
    // summary, all of them for the paired comparison.
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
                .map(|b| {
                    rounds[&(s, tile.get(), b)]
                        .iter()
                        .copied()
                        .fold(f64::MAX, f64::min)
                })
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
            title: format!(
                "{} ({})",
                scene.name,
                counted(workers.get() as u64, "thread")
            ),
            series,
        });
    }
    say!(
        quiet,
        "Best of {}, µs per pixel; * marks the fastest balancer at each tile edge, and the\npercentage is each balancer's distance from it.",
        counted(args.repeat.get() as u64, "round")
    );
    say!(quiet, "{}", summary.render().trim_end());
    let paired = paired_table(&scenes, &args.tiles, &names, &rounds);
    say!(
        quiet,
        "\nPaired by round: at each tile edge the leader (*) is the balancer of the lowest median\ntime; each balancer's time over the leader's in the same round (the same minutes of the\nmachine), median over rounds [quartiles], and (rounds in which it was fastest of all).\nThe row `best` pairs each round's fastest time over all tile edges."
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

/// For each scene and tile edge, each balancer paired round by round with the leader (the
/// balancer of the lowest median time there): the median over rounds of its time over the
/// leader's time in the same round, the quartiles of that ratio, and the rounds in which it was
/// the fastest of all. Within a round the balancers ran minutes apart at most, so the ratio is
/// free of the machine's slow drift, which the best-of-rounds table is not; the quartiles say
/// how far the machine's noise leaves the median in doubt. A last row per scene pairs the
/// balancers' best tile edges: each round's fastest time over all edges.
fn paired_table(
    scenes: &[renderer::scene::Scene],
    tiles: &[std::num::NonZeroU32],
    names: &[String],
    rounds: &BTreeMap<(usize, u32, usize), Vec<f64>>,
) -> Table {
    let mut header = vec!["scene".to_string(), "tile".to_string()];
    header.extend(names.iter().map(|n| format!("{n} vs leader")));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for (s, scene) in scenes.iter().enumerate() {
        // Per tile edge, each balancer's times by round.
        let per_edge: Vec<Vec<&[f64]>> = tiles
            .iter()
            .map(|t| {
                (0..names.len())
                    .map(|b| rounds[&(s, t.get(), b)].as_slice())
                    .collect()
            })
            .collect();
        for (&tile, times) in tiles.iter().zip(&per_edge) {
            let mut row = vec![scene.name.clone(), tile.to_string()];
            row.extend(paired_cells(times));
            table.row(row);
        }
        // Each round's best over the tile edges, per balancer.
        let best: Vec<Vec<f64>> = (0..names.len())
            .map(|b| {
                (0..per_edge[0][b].len())
                    .map(|r| per_edge.iter().map(|e| e[b][r]).fold(f64::MAX, f64::min))
                    .collect()
            })
            .collect();
        let best: Vec<&[f64]> = best.iter().map(Vec::as_slice).collect();
        let mut row = vec![scene.name.clone(), "best".to_string()];
        row.extend(paired_cells(&best));
        table.row(row);
    }
    table
}

/// One row of the paired table from each balancer's times by round (all of equal length):
/// `+1.2% [-0.4 +2.9] (3/10)` is a median 1.2% above the leader, quartiles −0.4% and +2.9%,
/// fastest of all in 3 of 10 rounds; the leader's cell carries a `*`.
fn paired_cells(times: &[&[f64]]) -> Vec<String> {
    let count = times[0].len();
    let medians: Vec<f64> = times.iter().map(|t| quantiles(t)[1]).collect();
    let leader = (0..times.len())
        .min_by(|&a, &b| medians[a].total_cmp(&medians[b]))
        .expect("at least one balancer");
    let fastest: Vec<f64> = (0..count)
        .map(|r| times.iter().map(|t| t[r]).fold(f64::MAX, f64::min))
        .collect();
    times
        .iter()
        .enumerate()
        .map(|(b, t)| {
            let ratios: Vec<f64> = t.iter().zip(times[leader]).map(|(a, l)| a / l).collect();
            let [q1, median, q3] = quantiles(&ratios).map(|q| (q - 1.0) * 100.0);
            let wins = t.iter().zip(&fastest).filter(|(a, f)| a == f).count();
            let mark = if b == leader { "*" } else { "" };
            format!("{median:+.1}%{mark} [{q1:+.1} {q3:+.1}] ({wins}/{count})")
        })
        .collect()
}

/// The lower quartile, median and upper quartile of `values` (not empty), interpolating
/// linearly between order statistics.
fn quantiles(values: &[f64]) -> [f64; 3] {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    [0.25, 0.5, 0.75].map(|q| {
        let at = q * (sorted.len() - 1) as f64;
        let (low, high) = (at.floor() as usize, at.ceil() as usize);
        sorted[low] + (sorted[high] - sorted[low]) * (at - low as f64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        assert_eq!(quantiles(&[4.0, 1.0, 3.0, 2.0]), [1.75, 2.5, 3.25]);
        assert_eq!(quantiles(&[5.0, 1.0, 3.0]), [2.0, 3.0, 4.0]);
        assert_eq!(quantiles(&[7.0]), [7.0, 7.0, 7.0]);
    }

    #[test]
    fn paired_cells_compare_with_the_leader_round_by_round() {
        // Balancer 1 leads (lowest median); balancer 0 is 10% slower in every round even
        // though its best round beats the leader's worst.
        let times: [&[f64]; 3] = [
            &[1.10, 2.20, 1.65],
            &[1.00, 2.00, 1.50],
            &[1.00, 2.40, 1.80],
        ];
        let cells = paired_cells(&times);
        assert_eq!(cells[0], "+10.0% [+10.0 +10.0] (0/3)");
        assert_eq!(cells[1], "+0.0%* [+0.0 +0.0] (3/3)");
        assert_eq!(cells[2], "+20.0% [+10.0 +20.0] (1/3)");
    }
}
