//! `raylb bench sweep`: time per pixel against tile edge, for each balancer and scene.

use std::collections::BTreeMap;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;

use anyhow::{Result, bail};
use renderer::render::CpuBalancer;
use renderer::render::{FrameExtras, RenderOptions, render};
use renderer::scene::Scene;
use renderer::stats::counted;
use serde::Serialize;

use crate::progress::Progress;
use crate::report::{
    Axes, OutputFiles, Panel, Series, Table, csv_text, line_chart, quantiles, rounded,
};
use crate::scene::{SceneSettings, warn_one_tile_edges};

/// What `--out` receives.
const FILES: &[&str] = &[
    "sweep.csv",
    "sweep-best.csv",
    "sweep-paired.csv",
    "sweep.svg",
];

/// Each round's µs per pixel of each (scene, tile edge, balancer), indexed by the scene's and
/// balancer's positions, in round order.
type Rounds = BTreeMap<(usize, u32, usize), Vec<f64>>;

/// A row of `sweep.csv`: one render.
#[derive(Debug, Serialize)]
struct RenderRow {
    scene: String,
    /// The acceleration structure, `wide` or `octree`.
    structure: &'static str,
    balancer: String,
    tile: u32,
    threads: usize,
    round: usize,
    seconds: f64,
    us_per_pixel: f64,
}

/// A row of `sweep-best.csv`: one balancer's best round at one scene and tile edge.
#[derive(Debug, Serialize)]
struct BestRow {
    scene: String,
    tile: u32,
    balancer: String,
    us_per_pixel: f64,
    /// How much slower than the fastest balancer at this edge, in percent (0 for it).
    vs_fastest_percent: f64,
    /// Whether it is the fastest at this edge.
    fastest: bool,
}

/// A row of `sweep-paired.csv`: one balancer against the leader, round by round, at one scene
/// and tile edge (`tile` = `best` pairs each round's fastest edge).
#[derive(Debug, Serialize)]
struct PairedRow {
    scene: String,
    tile: String,
    balancer: String,
    leader: String,
    median_vs_leader_percent: f64,
    q1_percent: f64,
    q3_percent: f64,
    rounds_fastest: usize,
    rounds: usize,
}

/// What `raylb bench sweep` renders, and where it writes.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use experiments::scene::SceneSettings;
/// # use renderer::render::{CpuBalancer, FrameExtras};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # #[derive(Debug)]
/// # struct Small;
/// # impl SceneSettings for Small {
/// #     fn check_options(&self) -> anyhow::Result<()> {
/// #         Ok(())
/// #     }
/// #     fn load_file(&self, file: &std::path::Path, _: bool) -> anyhow::Result<Scene> {
/// #         let small = SceneOverrides {
/// #             width: Some(32),
/// #             height: Some(32),
/// #             ..Default::default()
/// #         };
/// #         Ok(Scene::load(file, small)?)
/// #     }
/// #     fn check_frames(
/// #         &self,
/// #         _: &Scene,
/// #         _: &[CpuBalancer],
/// #         _: &[NonZeroUsize],
/// #         _: &[NonZeroU32],
/// #         _: FrameExtras,
/// #     ) -> anyhow::Result<()> {
/// #         Ok(())
/// #     }
/// # }
/// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// use balancers::BalancerKind;
/// use experiments::sweep::SweepOptions;
///
/// // `Small` reads scenes at 32×32 (see `SceneSettings`).
/// let out = std::env::temp_dir().join(format!("raylb-sweep-{}", std::process::id()));
/// let chunk = |n| CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::new(n).unwrap()));
/// let options = SweepOptions {
///     scenes: vec![file.into()],
///     scene: &Small,
///     balancers: vec![chunk(1), chunk(4)],
///     tiles: vec![NonZeroU32::new(8).unwrap(), NonZeroU32::new(16).unwrap()],
///     threads: NonZeroUsize::new(2).unwrap(),
///     repeat: NonZeroUsize::MIN,
///     out: out.clone(),
///     quiet: true,
/// };
/// experiments::sweep::run(&options)?;
/// assert!(out.join("sweep-best.csv").is_file());
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SweepOptions<'a> {
    /// Scene files [default: scenes/treasure.toml and scenes/treasure-calm.toml].
    pub scenes: Vec<PathBuf>,
    /// How the scenes are read and their frames checked.
    pub scene: &'a dyn SceneSettings,
    /// The balancers compared, in this order.
    pub balancers: Vec<CpuBalancer>,
    /// Tile edges in pixels.
    pub tiles: Vec<NonZeroU32>,
    /// Worker threads.
    pub threads: NonZeroUsize,
    /// Rounds: each renders every combination once.
    pub repeat: NonZeroUsize,
    /// The folder for the CSV and the chart.
    pub out: PathBuf,
    /// Print nothing.
    pub quiet: bool,
}

/// Renders every scene at every tile edge with every balancer, round after round; prints the
/// best and the paired tables unless quiet, and writes `sweep.csv`, `sweep-best.csv`,
/// `sweep-paired.csv` and `sweep.svg`.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use experiments::scene::SceneSettings;
/// # use renderer::render::{CpuBalancer, FrameExtras};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # #[derive(Debug)]
/// # struct Small;
/// # impl SceneSettings for Small {
/// #     fn check_options(&self) -> anyhow::Result<()> {
/// #         Ok(())
/// #     }
/// #     fn load_file(&self, file: &std::path::Path, _: bool) -> anyhow::Result<Scene> {
/// #         let small = SceneOverrides {
/// #             width: Some(32),
/// #             height: Some(32),
/// #             ..Default::default()
/// #         };
/// #         Ok(Scene::load(file, small)?)
/// #     }
/// #     fn check_frames(
/// #         &self,
/// #         _: &Scene,
/// #         _: &[CpuBalancer],
/// #         _: &[NonZeroUsize],
/// #         _: &[NonZeroU32],
/// #         _: FrameExtras,
/// #     ) -> anyhow::Result<()> {
/// #         Ok(())
/// #     }
/// # }
/// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # use balancers::BalancerKind;
/// # use experiments::sweep::SweepOptions;
/// #
/// # // `Small` reads scenes at 32×32 (see `SceneSettings`).
/// # let out = std::env::temp_dir().join(format!("raylb-sweep-{}", std::process::id()));
/// # let chunk = |n| CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::new(n).unwrap()));
/// # let options = SweepOptions {
/// #     scenes: vec![file.into()],
/// #     scene: &Small,
/// #     balancers: vec![chunk(1), chunk(4)],
/// #     tiles: vec![NonZeroU32::new(8).unwrap(), NonZeroU32::new(16).unwrap()],
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     repeat: NonZeroUsize::MIN,
/// #     out: out.clone(),
/// #     quiet: true,
/// # };
/// experiments::sweep::run(&options)?;
/// let files = ["sweep.csv", "sweep-best.csv", "sweep-paired.csv", "sweep.svg"];
/// assert!(files.iter().all(|f| out.join(f).is_file()));
/// # std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &SweepOptions<'_>) -> Result<()> {
    let balancers = &options.balancers;
    let quiet = options.quiet;
    let files = OutputFiles::check(&options.out, FILES)?;
    let scenes = load_scenes(options, quiet)?;
    let inputs: Vec<_> = scenes.iter().flat_map(|s| s.inputs.clone()).collect();
    files.check_inputs(&inputs)?;
    let workers = options.threads;
    for scene in &scenes {
        options.scene.check_frames(
            scene,
            balancers,
            &[workers],
            &options.tiles,
            FrameExtras::default(),
        )?;
    }
    for scene in &scenes {
        warn_one_tile_edges(scene, &options.tiles, quiet);
    }
    let (renders, rounds) = run_rounds(options, &scenes, balancers, workers, quiet)?;

    let names: Vec<String> = balancers.iter().map(|b| b.name()).collect();
    let scene_names: Vec<String> = scenes.iter().map(|s| s.name.clone()).collect();
    let best = best_rows(&scene_names, &options.tiles, &names, &rounds);
    let paired = paired_rows(&scene_names, &options.tiles, &names, &rounds);
    let axes = Axes {
        x: "tile edge (pixels)",
        y: "time per pixel (µs)",
        log_x: true,
        y_from_zero: true,
    };
    let chart = line_chart(
        "Time per pixel against tile edge",
        &axes,
        &panels(&scene_names, &names, workers, &best),
    )?;
    // The files first: a reader that closes our output early must not cost the results.
    files.write(&[
        &csv_text(&renders)?,
        &csv_text(&best)?,
        &csv_text(&paired)?,
        &chart,
    ])?;
    say!(
        quiet,
        "Best of {}, µs per pixel; * marks the fastest balancer at each tile edge, and the\npercentage is each balancer's distance from it.",
        counted(options.repeat.get() as u64, "round")
    );
    say!(quiet, "{}", best_table(&names, &best).render().trim_end());
    say!(
        quiet,
        "\nPaired by round: at each tile edge the leader (*) is the balancer of the lowest median\ntime; each balancer's time over the leader's in the same round (the same minutes of the\nmachine), median over rounds [quartiles], and (rounds in which it was fastest of all).\nThe row `best` pairs each round's fastest time over all tile edges."
    );
    say!(
        quiet,
        "{}",
        paired_table(&names, &paired).render().trim_end()
    );
    say!(quiet, "{}", files.summary());
    Ok(())
}

/// The scene files named, or the two `treasure` scenes.
fn load_scenes(options: &SweepOptions<'_>, quiet: bool) -> Result<Vec<Scene>> {
    options.scene.check_options()?;
    let files = if options.scenes.is_empty() {
        vec![
            PathBuf::from("scenes/treasure.toml"),
            PathBuf::from("scenes/treasure-calm.toml"),
        ]
    } else {
        options.scenes.clone()
    };
    let mut scenes = Vec::new();
    for file in &files {
        if !file.exists() {
            bail!(
                "{}: no such scene file (run from the repository root, or name scene files)",
                file.display()
            );
        }
        scenes.push(options.scene.load_file(file, quiet)?);
    }
    // Scenes are labelled by name in the tables, CSV and chart; two files of one name (`a/q.toml`
    // and `b/q.toml`) are labelled by their paths instead.
    let names: Vec<String> = scenes.iter().map(|s| s.name.clone()).collect();
    for (scene, file) in scenes.iter_mut().zip(&files) {
        if names.iter().filter(|&n| *n == scene.name).count() > 1 {
            scene.name = file.display().to_string();
        }
    }
    Ok(scenes)
}

/// Renders every combination once per round: drift in the machine's speed then touches all of
/// them alike. Returns every render, and each combination's times by round.
fn run_rounds(
    options: &SweepOptions<'_>,
    scenes: &[Scene],
    balancers: &[CpuBalancer],
    workers: NonZeroUsize,
    quiet: bool,
) -> Result<(Vec<RenderRow>, Rounds)> {
    let mut renders = Vec::new();
    let mut rounds = Rounds::new();
    let runs = options.repeat.get() * scenes.len() * options.tiles.len() * balancers.len();
    let mut progress = Progress::new(runs as u64, "renders", quiet);
    for round in 1..=options.repeat.get() {
        for (s, scene) in scenes.iter().enumerate() {
            for &tile in &options.tiles {
                // The balancers take turns going first, so that none always runs right
                // after the same other one.
                for k in 0..balancers.len() {
                    let b = (k + round - 1) % balancers.len();
                    let balancer = &balancers[b];
                    let frame = RenderOptions {
                        balancer: *balancer,
                        threads: workers,
                        tile,
                        work_map: false,
                    };
                    let seconds = render(scene, &frame)?.wall().as_secs_f64();
                    let per_pixel = seconds * 1e6 / f64::from(scene.width * scene.height);
                    progress.step(&format!(
                        "round {round}/{}: {} tile {tile} {}: {seconds:.3} s",
                        options.repeat,
                        scene.name,
                        balancer.name()
                    ));
                    renders.push(RenderRow {
                        scene: scene.name.clone(),
                        structure: scene.accel.kind().name(),
                        balancer: balancer.name(),
                        tile: tile.get(),
                        threads: workers.get(),
                        round,
                        seconds: rounded(seconds, 6),
                        us_per_pixel: rounded(per_pixel, 6),
                    });
                    rounds
                        .entry((s, tile.get(), b))
                        .or_default()
                        .push(per_pixel);
                }
            }
        }
    }
    progress.finish();
    Ok((renders, rounds))
}

/// Each balancer's best round at each scene and tile edge, against the fastest there.
fn best_rows(
    scenes: &[String],
    tiles: &[NonZeroU32],
    names: &[String],
    rounds: &Rounds,
) -> Vec<BestRow> {
    let mut rows = Vec::new();
    for (s, scene) in scenes.iter().enumerate() {
        for &tile in tiles {
            let times: Vec<f64> = (0..names.len())
                .map(|b| {
                    rounds[&(s, tile.get(), b)]
                        .iter()
                        .copied()
                        .fold(f64::MAX, f64::min)
                })
                .collect();
            let fastest = times.iter().copied().fold(f64::MAX, f64::min);
            rows.extend(names.iter().zip(times).map(|(name, t)| BestRow {
                scene: scene.clone(),
                tile: tile.get(),
                balancer: name.clone(),
                us_per_pixel: rounded(t, 6),
                vs_fastest_percent: rounded((t / fastest - 1.0) * 100.0, 3),
                fastest: t == fastest,
            }));
        }
    }
    rows
}

/// The best-of-rounds table for the terminal: a row per scene and tile edge, a column per
/// balancer, `3.649* (+0.0%)`.
fn best_table(names: &[String], best: &[BestRow]) -> Table {
    let mut header = vec!["scene".to_string(), "tile".to_string()];
    header.extend(names.iter().map(|n| format!("{n} µs/px")));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for edge in best.chunks(names.len()) {
        let mut row = vec![edge[0].scene.clone(), edge[0].tile.to_string()];
        row.extend(edge.iter().map(|r| {
            let mark = if r.fastest { "*" } else { "" };
            format!(
                "{:.3}{mark} ({:+.1}%)",
                r.us_per_pixel, r.vs_fastest_percent
            )
        }));
        table.row(row);
    }
    table
}

/// One chart panel per scene: each balancer's best time per pixel against tile edge.
fn panels(
    scenes: &[String],
    names: &[String],
    workers: NonZeroUsize,
    best: &[BestRow],
) -> Vec<Panel> {
    // `best` holds, per scene, per tile edge, one row per balancer.
    let per_scene = best.len() / scenes.len().max(1);
    scenes
        .iter()
        .zip(best.chunks(per_scene.max(1)))
        .map(|(scene, rows)| Panel {
            title: format!("{scene} ({})", counted(workers.get() as u64, "thread")),
            series: names
                .iter()
                .enumerate()
                .map(|(b, name)| Series {
                    label: name.clone(),
                    points: rows
                        .iter()
                        .skip(b)
                        .step_by(names.len())
                        .map(|r| (f64::from(r.tile), r.us_per_pixel))
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

/// For each scene and tile edge, each balancer paired round by round with the leader (the
/// balancer of the lowest median time there): the median over rounds of its time over the
/// leader's time in the same round, the quartiles of that ratio, and the rounds in which it was
/// the fastest of all. Within a round the balancers ran minutes apart at most, so the ratio is
/// free of the machine's slow drift, which the best-of-rounds table is not; the quartiles say
/// how far the machine's noise leaves the median in doubt. A last row per scene pairs the
/// balancers' best tile edges: each round's fastest time over all edges.
fn paired_rows(
    scenes: &[String],
    tiles: &[NonZeroU32],
    names: &[String],
    rounds: &Rounds,
) -> Vec<PairedRow> {
    let mut rows = Vec::new();
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
        let mut add = |tile: String, times: &[&[f64]]| {
            let paired = pair(times);
            let leader = paired
                .iter()
                .position(|p| p.leader)
                .expect("one balancer leads");
            rows.extend(names.iter().zip(paired).map(|(name, p)| PairedRow {
                scene: scene.clone(),
                tile: tile.clone(),
                balancer: name.clone(),
                leader: names[leader].clone(),
                median_vs_leader_percent: rounded(p.median_percent, 3),
                q1_percent: rounded(p.q1_percent, 3),
                q3_percent: rounded(p.q3_percent, 3),
                rounds_fastest: p.wins,
                rounds: p.rounds,
            }));
        };
        for (&tile, times) in tiles.iter().zip(&per_edge) {
            add(tile.to_string(), times);
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
        add("best".to_string(), &best);
    }
    rows
}

/// The paired table for the terminal: a row per scene and tile edge, a column per balancer,
/// `+1.2% [-0.4 +2.9] (3/10)`: a median 1.2% above the leader, quartiles −0.4% and +2.9%,
/// fastest of all in 3 of 10 rounds; the leader's cell carries a `*`.
fn paired_table(names: &[String], paired: &[PairedRow]) -> Table {
    let mut header = vec!["scene".to_string(), "tile".to_string()];
    header.extend(names.iter().map(|n| format!("{n} vs leader")));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for edge in paired.chunks(names.len()) {
        let mut row = vec![edge[0].scene.clone(), edge[0].tile.clone()];
        row.extend(edge.iter().map(|r| {
            let mark = if r.balancer == r.leader { "*" } else { "" };
            format!(
                "{:+.1}%{mark} [{:+.1} {:+.1}] ({}/{})",
                r.median_vs_leader_percent, r.q1_percent, r.q3_percent, r.rounds_fastest, r.rounds
            )
        }));
        table.row(row);
    }
    table
}

/// One balancer paired with the leader over the rounds of one scene and tile edge.
#[derive(Debug, PartialEq)]
struct Paired {
    /// Whether this is the leader (the lowest median time).
    leader: bool,
    /// Quartiles and median of its time over the leader's in the same round, as percentages
    /// above it.
    q1_percent: f64,
    median_percent: f64,
    q3_percent: f64,
    /// Rounds in which it was the fastest of all, of `rounds`.
    wins: usize,
    rounds: usize,
}

/// Pairs each balancer's times by round (all of equal length) with the leader's.
fn pair(times: &[&[f64]]) -> Vec<Paired> {
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
            Paired {
                leader: b == leader,
                q1_percent: q1,
                median_percent: median,
                q3_percent: q3,
                wins: t.iter().zip(&fastest).filter(|(a, f)| a == f).count(),
                rounds: count,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed record's fields.
    fn fields(record: &csv::StringRecord) -> Vec<&str> {
        record.iter().collect()
    }

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        assert_eq!(quantiles(&[4.0, 1.0, 3.0, 2.0]), [1.75, 2.5, 3.25]);
        assert_eq!(quantiles(&[5.0, 1.0, 3.0]), [2.0, 3.0, 4.0]);
        assert_eq!(quantiles(&[7.0]), [7.0, 7.0, 7.0]);
    }

    #[test]
    fn pairing_compares_with_the_leader_round_by_round() {
        // Balancer 1 leads (lowest median); balancer 0 is 10% slower in every round even
        // though its best round beats the leader's worst.
        let times: [&[f64]; 3] = [
            &[1.10, 2.20, 1.65],
            &[1.00, 2.00, 1.50],
            &[1.00, 2.40, 1.80],
        ];
        let paired = pair(&times);
        assert!(paired[1].leader && !paired[0].leader && !paired[2].leader);
        assert_eq!((paired[0].wins, paired[1].wins, paired[2].wins), (0, 3, 1));
        assert!((paired[2].q1_percent - 10.0).abs() < 1e-9);
        assert!((paired[2].median_percent - 20.0).abs() < 1e-9);
    }

    /// Two scenes, tile edges 8 and 64, balancers `a` and `b/x`, three rounds: `a` takes
    /// 1, 2, 3 µs per pixel, `b/x` 10% more in each round, except at edge 64 of the second
    /// scene, where it is 10% faster.
    fn sample() -> (Vec<String>, Vec<NonZeroU32>, Vec<String>, Rounds) {
        let scenes = vec!["one".to_string(), "two".to_string()];
        let tiles: Vec<NonZeroU32> = [8, 64].map(|t| NonZeroU32::new(t).unwrap()).to_vec();
        let names = vec!["a".to_string(), "b/x".to_string()];
        let mut rounds = Rounds::new();
        for s in 0..2 {
            for tile in [8, 64] {
                let factor = if (s, tile) == (1, 64) { 0.9 } else { 1.1 };
                rounds.insert((s, tile, 0), vec![1.0, 2.0, 3.0]);
                rounds.insert((s, tile, 1), vec![factor, 2.0 * factor, 3.0 * factor]);
            }
        }
        (scenes, tiles, names, rounds)
    }

    /// Parses `text` back as CSV: its header and its records.
    fn parse(text: &str) -> (Vec<String>, Vec<csv::StringRecord>) {
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().unwrap().iter().map(String::from).collect();
        let records = reader.records().map(Result::unwrap).collect();
        (header, records)
    }

    #[test]
    fn best_rows_are_one_observation_each_with_numbers_in_their_own_columns() {
        let (scenes, tiles, names, rounds) = sample();
        let best = best_rows(&scenes, &tiles, &names, &rounds);
        let (header, records) = parse(&csv_text(&best).unwrap());
        assert_eq!(
            header,
            [
                "scene",
                "tile",
                "balancer",
                "us_per_pixel",
                "vs_fastest_percent",
                "fastest"
            ]
        );
        assert_eq!(records.len(), 2 * 2 * 2);
        for record in &records {
            assert_eq!(record.len(), 6);
            record[1].parse::<u32>().unwrap();
            record[3].parse::<f64>().unwrap();
            record[4].parse::<f64>().unwrap();
            record[5].parse::<bool>().unwrap();
        }
        // The second scene at edge 64: `b/x` at 0.9 µs is fastest, `a` 11.1% behind it.
        assert_eq!(fields(&records[0]), ["one", "8", "a", "1.0", "0.0", "true"]);
        assert_eq!(
            fields(&records[1]),
            ["one", "8", "b/x", "1.1", "10.0", "false"]
        );
        assert_eq!(
            fields(&records[6]),
            ["two", "64", "a", "1.0", "11.111", "false"]
        );
        assert_eq!(
            fields(&records[7]),
            ["two", "64", "b/x", "0.9", "0.0", "true"]
        );
        // The terminal keeps its display strings.
        let table = best_table(&names, &best).render();
        assert!(table.contains("1.000* (+0.0%)  1.100 (+10.0%)"), "{table}");
    }

    #[test]
    fn paired_rows_are_one_observation_each_with_numbers_in_their_own_columns() {
        let (scenes, tiles, names, rounds) = sample();
        let paired = paired_rows(&scenes, &tiles, &names, &rounds);
        let (header, records) = parse(&csv_text(&paired).unwrap());
        assert_eq!(
            header,
            [
                "scene",
                "tile",
                "balancer",
                "leader",
                "median_vs_leader_percent",
                "q1_percent",
                "q3_percent",
                "rounds_fastest",
                "rounds"
            ]
        );
        // Per scene: edges 8 and 64 and the best edge, one row per balancer.
        assert_eq!(records.len(), 2 * 3 * 2);
        for record in &records {
            assert_eq!(record.len(), 9);
            assert!(record[1] == *"best" || record[1].parse::<u32>().is_ok());
            assert!(names.iter().any(|n| *n == record[3]));
            for column in 4..7 {
                record[column].parse::<f64>().unwrap();
            }
            assert_eq!(record[8].parse::<usize>().unwrap(), 3);
            record[7].parse::<usize>().unwrap();
        }
        assert_eq!(
            fields(&records[1]),
            ["one", "8", "b/x", "a", "10.0", "10.0", "10.0", "0", "3"]
        );
        assert_eq!(
            fields(&records[8]),
            [
                "two", "64", "a", "b/x", "11.111", "11.111", "11.111", "0", "3"
            ]
        );
        // The second scene's best edges: `b/x` at 64 beats `a` at either edge.
        assert_eq!(
            fields(&records[11]),
            ["two", "best", "b/x", "b/x", "0.0", "0.0", "0.0", "3", "3"]
        );
        let table = paired_table(&names, &paired).render();
        assert!(
            table.contains("+0.0%* [+0.0 +0.0] (3/3)  +10.0% [+10.0 +10.0] (0/3)"),
            "{table}"
        );
    }
}
