//! `raylb bench sim-sweep`: the thesis's tile sweep (time per pixel against tile edge) on
//! simulated workers, as many as a machine does not have.
//!
//! The frame is recorded once per tile edge (its task tree, counted), and every tree is
//! replayed on one cost model, fitted to the timed run of the `--model-tile` recording, so
//! that the edges differ in their trees alone and not in the machine's mood while each was
//! timed.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;

use anyhow::{Result, anyhow};
use balancers::sim::Costs;
use balancers::{Assignment, BalancerKind};
use renderer::record::{TaskRoom, count_within, record_within};
use renderer::render::RenderOptions;
use serde::Serialize;

use crate::progress::Progress;
use crate::report::{Axes, OutputFiles, Panel, Series, Table, csv_text, line_chart, rounded};
use crate::scene::{SceneSettings, load_scene, warn_one_tile_edges};
use crate::sim::Replayed;

/// What `--out` receives.
const FILES: &[&str] = &["sim-sweep.csv", "sim-sweep.svg"];

/// A row of `sim-sweep.csv`: one balancer on one worker count at one tile edge.
#[derive(Debug, Serialize)]
struct Row {
    scene: String,
    tile: u32,
    balancer: String,
    workers: usize,
    makespan_seconds: f64,
    us_per_pixel: f64,
    speedup: f64,
    steal_attempts: u64,
    idle_share: f64,
    peak_outstanding: u64,
}

/// What `raylb bench sim-sweep` records and simulates, and where it writes.
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
/// use experiments::sim::Replayed;
/// use experiments::sim_sweep::SimSweepOptions;
///
/// // `Small` reads scenes at 32×32 (see `SceneSettings`).
/// let out = std::env::temp_dir().join(format!("raylb-sim-sweep-{}", std::process::id()));
/// let counter = Replayed::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
/// let options = SimSweepOptions {
///     scene_file: Some(file.into()),
///     scene: &Small,
///     balancers: vec![counter],
///     workers: vec![NonZeroUsize::new(4).unwrap()],
///     tiles: vec![NonZeroU32::new(8).unwrap(), NonZeroU32::new(16).unwrap()],
///     model_tile: NonZeroU32::new(16).unwrap(),
///     threads: NonZeroUsize::new(2).unwrap(),
///     out: out.clone(),
///     quiet: true,
/// };
/// experiments::sim_sweep::run(&options)?;
/// assert!(out.join("sim-sweep.csv").is_file());
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SimSweepOptions<'a> {
    /// The scene file [default: scenes/treasure.toml].
    pub scene_file: Option<PathBuf>,
    /// How the scene is read and its frames checked.
    pub scene: &'a dyn SceneSettings,
    /// The balancers simulated, in this order.
    pub balancers: Vec<Replayed>,
    /// Simulated worker counts.
    pub workers: Vec<NonZeroUsize>,
    /// Tile edges in pixels.
    pub tiles: Vec<NonZeroU32>,
    /// The tile edge whose recording is timed for the cost model of every edge.
    pub model_tile: NonZeroU32,
    /// Threads of the counting runs.
    pub threads: NonZeroUsize,
    /// The folder for the CSV and the chart.
    pub out: PathBuf,
    /// Print nothing.
    pub quiet: bool,
}

/// Records the frame at every tile edge and simulates each balancer on every worker count;
/// prints µs per pixel unless quiet, and writes `sim-sweep.csv` and `sim-sweep.svg`.
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
/// # use experiments::sim::Replayed;
/// # use experiments::sim_sweep::SimSweepOptions;
/// #
/// # // `Small` reads scenes at 32×32 (see `SceneSettings`).
/// # let out = std::env::temp_dir().join(format!("raylb-sim-sweep-{}", std::process::id()));
/// # let counter = Replayed::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
/// # let options = SimSweepOptions {
/// #     scene_file: Some(file.into()),
/// #     scene: &Small,
/// #     balancers: vec![counter],
/// #     workers: vec![NonZeroUsize::new(4).unwrap()],
/// #     tiles: vec![NonZeroU32::new(8).unwrap(), NonZeroU32::new(16).unwrap()],
/// #     model_tile: NonZeroU32::new(16).unwrap(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     out: out.clone(),
/// #     quiet: true,
/// # };
/// experiments::sim_sweep::run(&options)?;
/// let csv = std::fs::read_to_string(out.join("sim-sweep.csv"))?;
/// // A header, then a row per tile edge, balancer and worker count.
/// assert_eq!(csv.lines().count(), 1 + 2);
/// # std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &SimSweepOptions<'_>) -> Result<()> {
    let (balancers, quiet) = (&options.balancers, options.quiet);
    let files = OutputFiles::check(&options.out, FILES)?;
    let scene = load_scene(options.scene_file.as_deref(), options.scene, quiet)?;
    files.check_inputs(&scene.inputs)?;
    let counting = options.threads;
    let fixed = BalancerKind::static_tiles(Assignment::Interleaved);
    let edges: Vec<NonZeroU32> = std::iter::once(options.model_tile)
        .chain(options.tiles.iter().copied())
        .collect();
    options.scene.check_frames(
        &scene,
        &[fixed.into()],
        &[counting],
        &edges,
        renderer::render::FrameExtras::default(),
    )?;
    warn_one_tile_edges(&scene, &options.tiles, quiet);
    // Each recording is held on its own, and may take what the frame leaves of the memory.
    let room = |tile: NonZeroU32| {
        let frame = RenderOptions {
            balancer: fixed.into(),
            threads: counting,
            tile,
            work_map: false,
        };
        TaskRoom::of(&scene, &frame, options.scene.max_memory())
    };
    let mut progress = Progress::new(1 + options.tiles.len() as u64, "recordings", quiet);
    let model_room = room(options.model_tile);
    let model = record_within(
        &scene,
        options.model_tile,
        &fixed,
        counting,
        NonZeroUsize::MIN,
        model_room.tasks,
    )
    .map_err(|e| anyhow!(model_room.refusal(&scene, &e)))?
    .tree
    .model;
    progress.step(&format!(
        "the cost model, from tiles of {}",
        options.model_tile
    ));
    let pixels = f64::from(scene.width) * f64::from(scene.height);
    let costs = Costs::default();
    let mut rows = Vec::new();
    for &tile in &options.tiles {
        let tile_room = room(tile);
        let tree = count_within(&scene, tile, &fixed, counting, tile_room.tasks)
            .map_err(|e| anyhow!(tile_room.refusal(&scene, &e)))?;
        let seconds = tree.costs(&model);
        for balancer in balancers {
            for &workers in &options.workers {
                let r = balancer.simulate(&tree, &seconds, workers.get(), &costs);
                rows.push(Row {
                    scene: scene.name.clone(),
                    tile: tile.get(),
                    balancer: balancer.name(),
                    workers: workers.get(),
                    makespan_seconds: r.makespan,
                    us_per_pixel: rounded(r.makespan / pixels * 1e6, 6),
                    speedup: rounded(r.speedup(), 4),
                    steal_attempts: r.steal_attempts(),
                    idle_share: rounded(r.idle_share(), 4),
                    peak_outstanding: r.peak_outstanding,
                });
            }
        }
        progress.step(&format!("tiles of {tile}: {} tasks", tree.len()));
    }
    drop(progress);
    let chart = chart(options, &scene.name, &rows)?;
    files.write(&[&csv_text(&rows)?, &chart])?;
    say!(
        quiet,
        "µs per pixel (the simulated makespan over the image's {} pixels), on the cost model of tiles of {}:",
        pixels,
        options.model_tile
    );
    say!(
        quiet,
        "{}",
        table(options, balancers, &rows).render().trim_end()
    );
    say!(quiet, "{}", files.summary());
    Ok(())
}

/// One panel per worker count: each balancer's µs per pixel against tile edge.
fn chart(options: &SimSweepOptions<'_>, scene: &str, rows: &[Row]) -> Result<String> {
    let axes = Axes {
        x: "tile edge (pixels)",
        y: "time per pixel (µs)",
        log_x: true,
        y_from_zero: true,
    };
    let panels: Vec<Panel> = options
        .workers
        .iter()
        .map(|w| Panel {
            title: format!("{} simulated workers", w),
            series: options
                .balancers
                .iter()
                .map(|b| Series {
                    label: b.name(),
                    points: rows
                        .iter()
                        .filter(|r| r.workers == w.get() && r.balancer == b.name())
                        .map(|r| (f64::from(r.tile), r.us_per_pixel))
                        .collect(),
                })
                .collect(),
        })
        .collect();
    line_chart(
        &format!("{scene}: time per pixel against tile edge, simulated"),
        &axes,
        &panels,
    )
}

/// Rows balancer and workers, columns tile edges.
fn table(options: &SimSweepOptions<'_>, balancers: &[Replayed], rows: &[Row]) -> Table {
    let mut header = vec!["balancer".to_string(), "workers".to_string()];
    header.extend(options.tiles.iter().map(|t| t.to_string()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for &workers in &options.workers {
        for balancer in balancers {
            let mut cells = vec![balancer.name(), workers.to_string()];
            for tile in &options.tiles {
                let cell = rows
                    .iter()
                    .find(|r| {
                        r.workers == workers.get()
                            && r.tile == tile.get()
                            && r.balancer == balancer.name()
                    })
                    .map_or_else(|| "-".into(), |r| format!("{:.4}", r.us_per_pixel));
                cells.push(cell);
            }
            table.row(cells);
        }
    }
    table
}
