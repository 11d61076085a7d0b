//! `raylb bench scaling`: time and parallel efficiency against thread count.

use std::collections::BTreeMap;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;

use anyhow::Result;
use renderer::render::CpuBalancer;
use renderer::render::{FrameExtras, RenderOptions, render};
use renderer::stats::counted;
use serde::Serialize;

use crate::progress::Progress;
use crate::report::{Axes, OutputFiles, Panel, Series, Table, csv_text, line_chart, rounded};
use crate::scene::{SceneSettings, load_scene};

/// What `--out` receives.
const FILES: &[&str] = &["scaling.csv", "scaling-best.csv", "scaling.svg"];

/// A row of `scaling.csv`: one render.
#[derive(Debug, Serialize)]
struct RenderRow {
    scene: String,
    /// The acceleration structure, `wide` or `octree`.
    structure: &'static str,
    balancer: String,
    threads: usize,
    tile: u32,
    round: usize,
    seconds: f64,
}

/// A row of `scaling-best.csv`: one balancer's best round at one thread count. Speedup and
/// efficiency are empty when no 1-thread run was asked for.
#[derive(Debug, Serialize)]
struct BestRow {
    scene: String,
    tile: u32,
    balancer: String,
    threads: usize,
    seconds: f64,
    speedup: Option<f64>,
    efficiency: Option<f64>,
}

/// What `raylb bench scaling` renders, and where it writes.
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
/// use experiments::scaling::ScalingOptions;
///
/// // `Small` reads scenes at 32×32 (see `SceneSettings`).
/// let out = std::env::temp_dir().join(format!("raylb-scaling-{}", std::process::id()));
/// let counter = CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
/// let options = ScalingOptions {
///     scene_file: Some(file.into()),
///     scene: &Small,
///     balancers: vec![counter],
///     threads: vec![NonZeroUsize::MIN, NonZeroUsize::new(2).unwrap()],
///     tile: NonZeroU32::new(16).unwrap(),
///     repeat: NonZeroUsize::MIN,
///     out: out.clone(),
///     quiet: true,
/// };
/// experiments::scaling::run(&options)?;
/// assert!(out.join("scaling-best.csv").is_file());
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ScalingOptions<'a> {
    /// The scene file [default: scenes/treasure.toml].
    pub scene_file: Option<PathBuf>,
    /// How the scene is read and its frames checked.
    pub scene: &'a dyn SceneSettings,
    /// The balancers compared, in this order.
    pub balancers: Vec<CpuBalancer>,
    /// Thread counts.
    pub threads: Vec<NonZeroUsize>,
    /// Tile edge in pixels.
    pub tile: NonZeroU32,
    /// Rounds: each renders every combination once.
    pub repeat: NonZeroUsize,
    /// The folder for the CSV and the chart.
    pub out: PathBuf,
    /// Print nothing.
    pub quiet: bool,
}

/// Renders the scene on every thread count with every balancer, round after round; prints
/// each one's best time, speedup and efficiency unless quiet, and writes `scaling.csv`,
/// `scaling-best.csv` and `scaling.svg`.
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
/// # use experiments::scaling::ScalingOptions;
/// #
/// # // `Small` reads scenes at 32×32 (see `SceneSettings`).
/// # let out = std::env::temp_dir().join(format!("raylb-scaling-{}", std::process::id()));
/// # let counter = CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
/// # let options = ScalingOptions {
/// #     scene_file: Some(file.into()),
/// #     scene: &Small,
/// #     balancers: vec![counter],
/// #     threads: vec![NonZeroUsize::MIN, NonZeroUsize::new(2).unwrap()],
/// #     tile: NonZeroU32::new(16).unwrap(),
/// #     repeat: NonZeroUsize::MIN,
/// #     out: out.clone(),
/// #     quiet: true,
/// # };
/// experiments::scaling::run(&options)?;
/// let files = ["scaling.csv", "scaling-best.csv", "scaling.svg"];
/// assert!(files.iter().all(|f| out.join(f).is_file()));
/// # std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &ScalingOptions<'_>) -> Result<()> {
    let (balancers, counts, quiet) = (&options.balancers, &options.threads, options.quiet);
    let files = OutputFiles::check(&options.out, FILES)?;
    let scene = load_scene(options.scene_file.as_deref(), options.scene, quiet)?;
    files.check_inputs(&scene.inputs)?;
    options.scene.check_frames(
        &scene,
        balancers,
        counts,
        &[options.tile],
        FrameExtras::default(),
    )?;

    let mut renders = Vec::new();
    let mut best: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    let runs = options.repeat.get() * counts.len() * balancers.len();
    let mut progress = Progress::new(runs as u64, "renders", quiet);
    for round in 1..=options.repeat.get() {
        for &workers in counts {
            for (b, balancer) in balancers.iter().enumerate() {
                let frame = RenderOptions {
                    balancer: *balancer,
                    threads: workers,
                    tile: options.tile,
                    work_map: false,
                };
                let seconds = render(&scene, &frame)?.wall().as_secs_f64();
                progress.step(&format!(
                    "round {round}/{}: {} {}: {seconds:.3} s",
                    options.repeat,
                    counted(workers.get() as u64, "thread"),
                    balancer.name()
                ));
                renders.push(RenderRow {
                    scene: scene.name.clone(),
                    structure: scene.accel.kind().name(),
                    balancer: balancer.name(),
                    threads: workers.get(),
                    tile: options.tile.get(),
                    round,
                    seconds: rounded(seconds, 6),
                });
                let entry = best.entry((b, workers.get())).or_insert(f64::MAX);
                *entry = entry.min(seconds);
            }
        }
    }
    progress.finish();

    let names: Vec<String> = balancers.iter().map(|b| b.name()).collect();
    let rows = best_rows(&scene.name, options.tile.get(), &names, counts, &best);
    let speedups = names
        .iter()
        .map(|name| Series {
            label: name.clone(),
            points: rows
                .iter()
                .filter(|r| &r.balancer == name)
                .filter_map(|r| Some((r.threads as f64, r.speedup?)))
                .collect(),
        })
        .collect();
    let axes = Axes {
        x: "threads",
        y: "speedup over 1 thread",
        log_x: false,
        y_from_zero: true,
    };
    let panel = Panel {
        title: format!("{} ({}-pixel tiles)", scene.name, options.tile),
        series: speedups,
    };
    // The files first: a reader that closes our output early must not cost the results.
    files.write(&[
        &csv_text(&renders)?,
        &csv_text(&rows)?,
        &line_chart("Speedup against threads", &axes, &[panel])?,
    ])?;
    say!(
        quiet,
        "{}: {}×{}, {}-pixel tiles, best of {}; speedup = T(1) / T(p), efficiency = speedup / p.",
        scene.name,
        scene.width,
        scene.height,
        options.tile,
        counted(options.repeat.get() as u64, "round")
    );
    say!(quiet, "{}", best_table(&rows).render().trim_end());
    say!(quiet, "{}", files.summary());
    Ok(())
}

/// Each balancer's best round at each thread count (`best`, keyed by the balancer's position
/// and the thread count), with its speedup over its own 1-thread run where there is one.
fn best_rows(
    scene: &str,
    tile: u32,
    names: &[String],
    counts: &[NonZeroUsize],
    best: &BTreeMap<(usize, usize), f64>,
) -> Vec<BestRow> {
    let mut rows = Vec::new();
    for (b, name) in names.iter().enumerate() {
        let one = best.get(&(b, 1)).copied();
        for &workers in counts {
            let t = best[&(b, workers.get())];
            let speedup = one.map(|one| one / t);
            rows.push(BestRow {
                scene: scene.to_string(),
                tile,
                balancer: name.clone(),
                threads: workers.get(),
                seconds: rounded(t, 6),
                speedup: speedup.map(|s| rounded(s, 4)),
                efficiency: speedup.map(|s| rounded(s / workers.get() as f64, 4)),
            });
        }
    }
    rows
}

/// The table for the terminal: `-` where there is no 1-thread run to compare with.
fn best_table(rows: &[BestRow]) -> Table {
    let mut table = Table::new(&["balancer", "threads", "seconds", "speedup", "efficiency"]);
    let or_dash = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |x| format!("{x:.3}"));
    for row in rows {
        table.row(vec![
            row.balancer.clone(),
            row.threads.to_string(),
            format!("{:.3}", row.seconds),
            or_dash(row.speedup),
            or_dash(row.efficiency),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed record's fields.
    fn fields(record: &csv::StringRecord) -> Vec<&str> {
        record.iter().collect()
    }

    fn parse(text: &str) -> (csv::StringRecord, Vec<csv::StringRecord>) {
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().unwrap().clone();
        (header, reader.records().map(Result::unwrap).collect())
    }

    #[test]
    fn best_rows_hold_numbers_and_leave_speedup_empty_without_a_one_thread_run() {
        let names = ["a".to_string(), "b".to_string()];
        let counts = [1, 2].map(|n| NonZeroUsize::new(n).unwrap());
        let mut best = BTreeMap::new();
        best.insert((0, 1), 2.0);
        best.insert((0, 2), 1.25);
        best.insert((1, 1), 3.0);
        best.insert((1, 2), 1.5);
        let rows = best_rows("quick", 32, &names, &counts, &best);
        let (header, records) = parse(&csv_text(&rows).unwrap());
        assert_eq!(
            header.iter().collect::<Vec<_>>(),
            [
                "scene",
                "tile",
                "balancer",
                "threads",
                "seconds",
                "speedup",
                "efficiency"
            ]
        );
        assert_eq!(
            fields(&records[1]),
            ["quick", "32", "a", "2", "1.25", "1.6", "0.8"]
        );
        assert_eq!(
            fields(&records[3]),
            ["quick", "32", "b", "2", "1.5", "2.0", "1.0"]
        );

        // Without 1-thread runs there is nothing to compare with: empty, not `-`.
        let counts = [NonZeroUsize::new(2).unwrap()];
        let rows = best_rows("quick", 32, &names, &counts, &best.split_off(&(0, 2)));
        let (_, records) = parse(&csv_text(&rows).unwrap());
        assert_eq!(
            fields(&records[0]),
            ["quick", "32", "a", "2", "1.25", "", ""]
        );
        let table = best_table(&rows).render();
        assert!(table.lines().nth(1).unwrap().ends_with('-'), "{table}");
    }
}
