//! What a render reports: one structure, printed as a terminal summary and written as JSON
//! (`--stats`).

use std::fmt::{self, Write as _};
use std::time::Duration;

use serde::Serialize;

use crate::accel::Packets;
use crate::bvh::BvhStats;
use crate::frame::Frame;
use crate::integrator::RayCounts;
use crate::memory::format_bytes;
use crate::scene::Scene;
use crate::scene::{BvhReport, SceneReport};

/// Everything a render measured.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::render::{RenderOptions, render};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::stats::RenderReport;
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: true,
/// # };
/// # let frame = render(&scene, &options)?;
/// let report = RenderReport::new(&scene, 8, &frame);
/// assert_eq!(report.workers.len(), 2);
/// assert_eq!(report.render.tiles, 16);
/// // `--stats` writes it as JSON.
/// assert!(report.to_json().contains("\"mrays_per_second\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct RenderReport {
    /// The scene.
    pub scene: SceneReport,
    /// Its acceleration structure.
    pub bvh: BvhReport,
    /// The run.
    pub render: RunReport,
    /// One entry per worker.
    pub workers: Vec<WorkerReport>,
    /// The work map's range, when one was drawn.
    pub work_map: Option<WorkMapReport>,
    /// How the frame was split between CPU workers and devices (`--device hybrid`); absent
    /// otherwise. The `workers` above are then the CPU workers, then the devices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<HybridReport>,
    /// How the frame was split over MPI ranks (`--cluster`); absent for one process. The
    /// `workers` above are then every rank's, rank 0's first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterReport>,
}

/// A frame traced by CPU workers and devices together.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::stats::HybridReport;
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// # let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// # let frame = render_hybrid(&scene, &options, vec![device])?;
/// # let report = HybridReport::new(&frame, frame.hybrid.as_ref().unwrap());
/// // The CPU workers together, then the device.
/// let kinds: Vec<&str> = report.shares.iter().map(|s| s.processor.as_str()).collect();
/// assert_eq!(kinds, ["cpu", "2 CPU threads"]);
/// assert_eq!(report.processors.len(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct HybridReport {
    /// Per processor, in the order of the report's `workers`.
    pub processors: Vec<ProcessorReport>,
    /// The share of the frame's rays each kind of processor traced: the CPU workers together,
    /// and each device.
    pub shares: Vec<ShareReport>,
}

/// One processor of a hybrid frame.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::stats::HybridReport;
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// # let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// # let frame = render_hybrid(&scene, &options, vec![device])?;
/// # let report = HybridReport::new(&frame, frame.hybrid.as_ref().unwrap());
/// let dealt: u64 = report.processors.iter().map(|p| p.tiles_dealt).sum();
/// assert_eq!(dealt, 16);
/// assert_eq!(report.processors[2].kind, "2 CPU threads");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct ProcessorReport {
    /// Its number in the report's `workers`.
    pub worker: usize,
    /// `cpu`, or the device's name.
    pub kind: String,
    /// Batches of tiles launched (devices).
    pub batches: u64,
    /// Tiles dealt to it before the run.
    pub tiles_dealt: u64,
    /// Tiles other processors took from its pool.
    pub tiles_given: u64,
    /// Tiles it took from other processors' pools.
    pub tiles_taken: u64,
    /// Seconds from its last task's end to the end of the frame: its idle time at the end.
    pub idle_at_end_seconds: f64,
    /// Its batches, in order (devices; empty for CPU workers).
    pub batch_timeline: Vec<BatchReport>,
}

/// One batch of tiles a device traced in a hybrid frame: when it began and how long it took
/// on the host, beside the time the device measured for it where it keeps one (a GPU's kernel
/// time): the difference is the host's part (the upload, the wait, the figures read back).
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::stats::HybridReport;
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// # let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// # let frame = render_hybrid(&scene, &options, vec![device])?;
/// # let report = HybridReport::new(&frame, frame.hybrid.as_ref().unwrap());
/// let device = &report.processors[2];
/// assert_eq!(device.batch_timeline.len() as u64, device.batches);
/// let tiles: u64 = device.batch_timeline.iter().map(|b| b.tiles).sum();
/// assert_eq!(tiles, report.shares[1].tiles);
/// // CPU threads posing as a device keep no clock of their own.
/// assert!(device.batch_timeline.iter().all(|b| b.device_seconds.is_none()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct BatchReport {
    /// Tiles in the batch.
    pub tiles: u64,
    /// When it began, in seconds from the start of the frame.
    pub began_seconds: f64,
    /// Seconds from its start to its end on the host.
    pub seconds: f64,
    /// Seconds the device measured for it, where it measures.
    pub device_seconds: Option<f64>,
}

/// What one kind of processor traced of a hybrid frame.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::stats::HybridReport;
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// # let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// # let frame = render_hybrid(&scene, &options, vec![device])?;
/// # let report = HybridReport::new(&frame, frame.hybrid.as_ref().unwrap());
/// let shares: f64 = report.shares.iter().map(|s| s.share).sum();
/// assert!((shares - 1.0).abs() < 1e-9);
/// assert_eq!(report.shares.iter().map(|s| s.tiles).sum::<u64>(), 16);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct ShareReport {
    /// `cpu` (every CPU worker together), or a device's name.
    pub processor: String,
    /// Rays it traced.
    pub rays: u64,
    /// Those over all the frame's rays.
    pub share: f64,
    /// Tiles it ran.
    pub tiles: u64,
    /// The least of its processors' idle times at the end of the frame, in seconds: how long
    /// before the end the kind had nothing left to do.
    pub idle_at_end_seconds: f64,
}

impl HybridReport {
    /// The report of a hybrid frame.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::hybrid::{CpuTiles, HybridOptions, render_hybrid};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::stats::HybridReport;
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = HybridOptions {
    /// #     balancer: Default::default(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// # let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
    /// # let frame = render_hybrid(&scene, &options, vec![device])?;
    /// # let report = HybridReport::new(&frame, frame.hybrid.as_ref().unwrap());
    /// let rays: u64 = report.shares.iter().map(|s| s.rays).sum();
    /// assert_eq!(rays, frame.total_rays().total());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(frame: &Frame, hybrid: &crate::frame::HybridFigures) -> Self {
        let wall = frame.telemetry.wall.as_secs_f64();
        let cpus = hybrid.cpu_workers();
        let kind = |k: usize| {
            if k < cpus {
                "cpu".to_string()
            } else {
                hybrid.devices[k - cpus].clone()
            }
        };
        let processors: Vec<ProcessorReport> = hybrid
            .processors
            .iter()
            .enumerate()
            .map(|(k, p)| ProcessorReport {
                worker: k,
                kind: kind(k),
                batches: p.batches.len() as u64,
                batch_timeline: p
                    .batches
                    .iter()
                    .enumerate()
                    .map(|(b, record)| BatchReport {
                        tiles: record.tasks,
                        began_seconds: record.began.as_secs_f64(),
                        seconds: record.took.as_secs_f64(),
                        device_seconds: k
                            .checked_sub(cpus)
                            .and_then(|d| hybrid.batch_times.get(d)?.get(b))
                            .map(Duration::as_secs_f64),
                    })
                    .collect(),
                tiles_dealt: p.dealt,
                tiles_given: p.given,
                tiles_taken: p.taken,
                idle_at_end_seconds: (wall - p.last_task_end.as_secs_f64()).max(0.0),
            })
            .collect();
        let total = frame.total_rays().total().max(1) as f64;
        let share = |name: String, members: std::ops::Range<usize>| {
            let rays: u64 = frame.rays[members.clone()]
                .iter()
                .map(RayCounts::total)
                .sum();
            ShareReport {
                processor: name,
                rays,
                share: rays as f64 / total,
                tiles: frame.telemetry.workers[members.clone()]
                    .iter()
                    .map(|w| w.initial_tasks)
                    .sum(),
                idle_at_end_seconds: processors[members]
                    .iter()
                    .map(|p| p.idle_at_end_seconds)
                    .fold(f64::INFINITY, f64::min),
            }
        };
        let mut shares = vec![share("cpu".into(), 0..cpus)];
        for (d, name) in hybrid.devices.iter().enumerate() {
            shares.push(share(name.clone(), cpus + d..cpus + d + 1));
        }
        Self { processors, shares }
    }
}

/// A frame split over MPI ranks.
///
/// ```
/// # use renderer::stats::{ClusterReport, RankReport, RaysReport};
/// # let rank = |rank: usize, busy_seconds: f64| RankReport {
/// #     rank,
/// #     host: format!("node{rank}"),
/// #     threads: 4,
/// #     first_worker: 4 * rank,
/// #     tiles: 100,
/// #     batches: 1,
/// #     tasks: 5_000,
/// #     rays: RaysReport { camera: 6_400, shadow: 3_000, reflection: 900, refraction: 100, total: 10_400 },
/// #     busy_seconds,
/// #     idle_seconds: 0.1,
/// #     wait_seconds: 0.0,
/// #     tiles_sent: 0,
/// #     tiles_received: 0,
/// #     bytes_sent: 0,
/// #     bytes_received: 0,
/// #     requests: 0,
/// #     requests_granted: 0,
/// # };
/// let report = ClusterReport::new("stealing/half".into(), vec![rank(0, 2.0), rank(1, 1.0)]);
/// // The busiest rank over the mean: 2 / 1.5.
/// assert!((report.rank_imbalance - 4.0 / 3.0).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct ClusterReport {
    /// How tiles were split between ranks: `static`, `counter/chunk=N` or `stealing/half`.
    pub mode: String,
    /// Busiest rank's busy time (its workers' together) over the mean: 1 = perfect balance.
    pub rank_imbalance: f64,
    /// One entry per rank.
    pub ranks: Vec<RankReport>,
}

/// One rank's figures.
///
/// ```
/// # use renderer::stats::{ClusterReport, RankReport, RaysReport};
/// # let rank = |rank: usize, busy_seconds: f64| RankReport {
/// #     rank,
/// #     host: format!("node{rank}"),
/// #     threads: 4,
/// #     first_worker: 4 * rank,
/// #     tiles: 100,
/// #     batches: 1,
/// #     tasks: 5_000,
/// #     rays: RaysReport { camera: 6_400, shadow: 3_000, reflection: 900, refraction: 100, total: 10_400 },
/// #     busy_seconds,
/// #     idle_seconds: 0.1,
/// #     wait_seconds: 0.0,
/// #     tiles_sent: 0,
/// #     tiles_received: 0,
/// #     bytes_sent: 0,
/// #     bytes_received: 0,
/// #     requests: 0,
/// #     requests_granted: 0,
/// # };
/// let r = rank(1, 1.5);
/// assert_eq!((r.first_worker, r.rays.total), (4, 10_400));
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct RankReport {
    /// Rank number.
    pub rank: usize,
    /// The processor name MPI gives its host.
    pub host: String,
    /// Worker threads.
    pub threads: usize,
    /// Numbers of its workers in the report's `workers` list.
    pub first_worker: usize,
    /// Tiles rendered.
    pub tiles: u64,
    /// Batches the local balancer ran.
    pub batches: u64,
    /// Tasks run.
    pub tasks: u64,
    /// Rays traced.
    pub rays: RaysReport,
    /// Seconds its workers were busy, together.
    pub busy_seconds: f64,
    /// Seconds its workers were idle, together.
    pub idle_seconds: f64,
    /// Seconds it held no tile to begin and waited for some (or for the end).
    pub wait_seconds: f64,
    /// Tiles handed to other ranks.
    pub tiles_sent: u64,
    /// Tiles received from other ranks.
    pub tiles_received: u64,
    /// Bytes of messages sent (payload).
    pub bytes_sent: u64,
    /// Bytes of messages received (payload).
    pub bytes_received: u64,
    /// Requests for tiles (steal attempts, or visits to the counter).
    pub requests: u64,
    /// Requests that brought tiles.
    pub requests_granted: u64,
}

impl ClusterReport {
    /// The report of `mode` over `ranks`, and the rank imbalance they show.
    ///
    /// ```
    /// # use renderer::stats::{ClusterReport, RankReport, RaysReport};
    /// # let rank = |rank: usize, busy_seconds: f64| RankReport {
    /// #     rank,
    /// #     host: format!("node{rank}"),
    /// #     threads: 4,
    /// #     first_worker: 4 * rank,
    /// #     tiles: 100,
    /// #     batches: 1,
    /// #     tasks: 5_000,
    /// #     rays: RaysReport { camera: 6_400, shadow: 3_000, reflection: 900, refraction: 100, total: 10_400 },
    /// #     busy_seconds,
    /// #     idle_seconds: 0.1,
    /// #     wait_seconds: 0.0,
    /// #     tiles_sent: 0,
    /// #     tiles_received: 0,
    /// #     bytes_sent: 0,
    /// #     bytes_received: 0,
    /// #     requests: 0,
    /// #     requests_granted: 0,
    /// # };
    /// // Ranks equally busy: balanced.
    /// let even = ClusterReport::new("static".into(), vec![rank(0, 1.0), rank(1, 1.0)]);
    /// assert_eq!(even.rank_imbalance, 1.0);
    /// // Nobody busy at all counts as balanced too.
    /// assert_eq!(ClusterReport::new("static".into(), vec![rank(0, 0.0)]).rank_imbalance, 1.0);
    /// ```
    pub fn new(mode: String, ranks: Vec<RankReport>) -> Self {
        let busy: Vec<f64> = ranks.iter().map(|r| r.busy_seconds).collect();
        let mean = busy.iter().sum::<f64>() / busy.len().max(1) as f64;
        let max = busy.iter().copied().fold(0.0, f64::max);
        Self {
            mode,
            rank_imbalance: if mean > 0.0 { max / mean } else { 1.0 },
            ranks,
        }
    }
}

/// Rays traced, by kind.
///
/// ```
/// use renderer::integrator::RayCounts;
/// use renderer::stats::RaysReport;
///
/// let counts = RayCounts { camera: 4, shadow: 3, reflection: 2, refraction: 1 };
/// let report = RaysReport::from(&counts);
/// assert_eq!(report.total, 10);
/// ```
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RaysReport {
    /// Camera rays.
    pub camera: u64,
    /// Shadow rays.
    pub shadow: u64,
    /// Reflection rays.
    pub reflection: u64,
    /// Refraction rays.
    pub refraction: u64,
    /// All of them.
    pub total: u64,
}

impl From<&RayCounts> for RaysReport {
    fn from(r: &RayCounts) -> Self {
        Self {
            camera: r.camera,
            shadow: r.shadow,
            reflection: r.reflection,
            refraction: r.refraction,
            total: r.total(),
        }
    }
}

/// A GPU kernel's resources, as the driver reports them once it is loaded.
///
/// ```
/// use kernels::{KernelCode, KernelResources};
/// use renderer::stats::KernelReport;
///
/// // What an H100 reported for the persistent kernel.
/// let loaded = KernelResources {
///     kernel: "rl_persistent",
///     registers: 64,
///     local_bytes: 416,
///     shared_bytes: 12_288,
///     threads_per_block: 128,
///     blocks_per_multiprocessor: 8,
///     occupancy: 0.5,
///     code: KernelCode::Cubin,
/// };
/// let report = KernelReport::from(&loaded);
/// assert_eq!((report.registers, report.code.as_str()), (64, "CUBIN"));
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct KernelReport {
    /// The kernel's name.
    pub name: &'static str,
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread in bytes: the stack frame, spilled registers included.
    pub local_bytes: u32,
    /// Static shared memory per block in bytes.
    pub shared_bytes: u32,
    /// Threads per block launched.
    pub threads_per_block: u32,
    /// Blocks a multiprocessor holds at once.
    pub blocks_per_multiprocessor: u32,
    /// Resident threads over the most a multiprocessor holds.
    pub occupancy: f64,
    /// What it was loaded from: `CUBIN` (machine code), `PTX` (compiled by the driver) or
    /// `emulated` (the warp emulator).
    pub code: String,
}

impl From<&kernels::KernelResources> for KernelReport {
    fn from(k: &kernels::KernelResources) -> Self {
        Self {
            name: k.kernel,
            registers: k.registers,
            local_bytes: k.local_bytes,
            shared_bytes: k.shared_bytes,
            threads_per_block: k.threads_per_block,
            blocks_per_multiprocessor: k.blocks_per_multiprocessor,
            occupancy: k.occupancy,
            code: k.code.to_string(),
        }
    }
}

/// Figures of the run.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::render::{RenderOptions, render};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::stats::RenderReport;
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: true,
/// # };
/// # let frame = render(&scene, &options)?;
/// let run = RenderReport::new(&scene, 8, &frame).render;
/// assert_eq!((run.balancer.as_str(), run.device.as_str()), ("counter/chunk=1", "cpu"));
/// assert_eq!(run.rays.camera, 32 * 32);
/// // A CPU frame has no SIMT figure.
/// assert!(run.simt_efficiency.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Balancer and settings.
    pub balancer: String,
    /// `cpu`, or the GPU's name.
    pub device: String,
    /// Workers: threads on the CPU (in a hybrid frame the CPU's threads alone, without the
    /// devices); persistent warps, or resident block slots for `cuda-managed`, on a GPU.
    pub threads: usize,
    /// Whether the CPU's workers traced camera rays and their shadow rays in packets
    /// (`--packets on` with the wide BVH); a GPU traces each ray on its own.
    pub packets: bool,
    /// Mean active lanes per warp step over the warp size (GPU only).
    pub simt_efficiency: Option<f64>,
    /// The GPU kernel that traced the frame: what the compiler gave it and the occupancy that
    /// gives (GPU only).
    pub kernel: Option<KernelReport>,
    /// Tile edge in pixels.
    pub tile: u32,
    /// Tiles (initial tasks).
    pub tiles: usize,
    /// Wall-clock seconds of the run.
    pub wall_seconds: f64,
    /// Rays traced.
    pub rays: RaysReport,
    /// Millions of rays per second of wall-clock time.
    pub mrays_per_second: f64,
    /// Upper bound on the spawned tasks queued at once (the memory footprint); `null` where
    /// the balancer does not show its queues (rayon).
    pub peak_outstanding_tasks: Option<u64>,
    /// Successful steals of all workers; `null` where the balancer does not report them.
    pub steals: Option<u64>,
    /// Busiest worker's busy time over the mean (1 = perfect balance).
    pub imbalance: f64,
}

/// One worker's figures.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::render::{RenderOptions, render};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::stats::RenderReport;
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: true,
/// # };
/// # let frame = render(&scene, &options)?;
/// let workers = RenderReport::new(&scene, 8, &frame).workers;
/// assert_eq!(workers.iter().map(|w| w.tiles).sum::<u64>(), 16);
/// // A counter does not steal.
/// assert!(workers.iter().all(|w| w.steal_successes.unwrap_or(0) == 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct WorkerReport {
    /// Worker number.
    pub worker: usize,
    /// Tasks run.
    pub tasks: u64,
    /// Tiles run.
    pub tiles: u64,
    /// Tasks spawned.
    pub spawned: u64,
    /// Rays traced.
    pub rays: RaysReport,
    /// Seconds busy.
    pub busy_seconds: f64,
    /// Seconds idle.
    pub idle_seconds: f64,
    /// Steal attempts (`null` where the balancer does not report them, as for all the steal
    /// figures).
    pub steal_attempts: Option<u64>,
    /// Successful steals.
    pub steal_successes: Option<u64>,
    /// Tasks stolen.
    pub tasks_stolen: Option<u64>,
    /// Most spawned tasks queued at once (`null` where the queues are not visible).
    pub peak_queued: Option<u64>,
}

/// The work map's scale.
///
/// ```
/// use renderer::stats::WorkMapReport;
///
/// // `raylb render --workmap` fills it from the film's counts of rays per pixel.
/// let scale = WorkMapReport { min_rays_per_pixel: 1, max_rays_per_pixel: 57 };
/// let json = serde_json::to_string(&scale)?;
/// assert_eq!(json, r#"{"min_rays_per_pixel":1,"max_rays_per_pixel":57}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Serialize)]
pub struct WorkMapReport {
    /// Fewest rays of a pixel (left end of the legend).
    pub min_rays_per_pixel: u32,
    /// Most rays of a pixel (right end of the legend).
    pub max_rays_per_pixel: u32,
}

impl SceneReport {
    /// The figures of `scene`.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::render::{RenderOptions, render};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::stats::RenderReport;
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: true,
    /// # };
    /// # let frame = render(&scene, &options)?;
    /// use renderer::scene::SceneReport;
    ///
    /// let report = SceneReport::new(&scene);
    /// assert_eq!((report.width, report.height), (32, 32));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(scene: &Scene) -> Self {
        let s = &scene.stats;
        Self {
            name: scene.name.clone(),
            width: scene.width,
            height: scene.height,
            samples: scene.samples.count(),
            triangles: s.triangles,
            dropped_triangles: s.dropped_triangles,
            objects: s.objects,
            lights: scene.lights.len(),
            materials: scene.materials.len(),
            max_depth: scene.settings.max_depth,
            load_seconds: s.load_time.as_secs_f64(),
        }
    }
}

impl From<&BvhStats> for BvhReport {
    fn from(b: &BvhStats) -> Self {
        Self {
            structure: b.structure,
            children: b.children,
            simd: b.simd,
            nodes: b.nodes,
            leaves: b.leaves,
            depth: b.depth,
            max_leaf_triangles: b.max_leaf_triangles,
            bytes: b.bytes,
            build_seconds: b.build_time.as_secs_f64(),
        }
    }
}

impl RenderReport {
    /// The report of `frame`, rendered from `scene` in tiles of edge `tile`.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::render::{RenderOptions, render};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::stats::RenderReport;
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: true,
    /// # };
    /// # let frame = render(&scene, &options)?;
    /// let report = RenderReport::new(&scene, 8, &frame);
    /// assert_eq!(report.render.tile, 8);
    /// assert_eq!(report.scene.width, 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(scene: &Scene, tile: u32, frame: &Frame) -> Self {
        let t = &frame.telemetry;
        let hybrid = frame.hybrid.as_ref().map(|h| HybridReport::new(frame, h));
        let on_cpu = frame.device.is_none() || hybrid.is_some();
        Self {
            scene: SceneReport::new(scene),
            bvh: (&scene.stats.bvh).into(),
            render: RunReport {
                balancer: t.balancer.clone(),
                device: frame
                    .device
                    .as_ref()
                    .map_or_else(|| "cpu".into(), |d| d.name.clone()),
                threads: frame
                    .hybrid
                    .as_ref()
                    .map_or(t.workers.len(), |h| h.cpu_workers()),
                packets: on_cpu
                    && scene.packets == Packets::On
                    && scene.accel.kind().traces_packets(),
                simt_efficiency: frame.device.as_ref().map(|d| d.simt_efficiency),
                kernel: frame
                    .device
                    .as_ref()
                    .and_then(|d| d.kernel.as_ref())
                    .map(KernelReport::from),
                tile,
                tiles: frame.tiles,
                wall_seconds: t.wall.as_secs_f64(),
                rays: (&frame.total_rays()).into(),
                mrays_per_second: frame.mrays_per_second(),
                peak_outstanding_tasks: t.peak_outstanding(),
                steals: t.steals_observed.then(|| t.total_steals()),
                imbalance: t.imbalance(),
            },
            workers: t
                .workers
                .iter()
                .zip(&frame.rays)
                .enumerate()
                .map(|(worker, (w, rays))| WorkerReport {
                    worker,
                    tasks: w.tasks,
                    tiles: w.initial_tasks,
                    spawned: w.spawned,
                    rays: rays.into(),
                    busy_seconds: w.busy.as_secs_f64(),
                    idle_seconds: w.idle.as_secs_f64(),
                    steal_attempts: t.steals_observed.then_some(w.steal_attempts),
                    steal_successes: t.steals_observed.then_some(w.steal_successes),
                    tasks_stolen: t.steals_observed.then_some(w.tasks_stolen),
                    peak_queued: w.peak_queued,
                })
                .collect(),
            work_map: None,
            hybrid,
            cluster: None,
        }
    }

    /// As pretty-printed JSON.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::render::{RenderOptions, render};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::stats::RenderReport;
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: true,
    /// # };
    /// # let frame = render(&scene, &options)?;
    /// let json = RenderReport::new(&scene, 8, &frame).to_json();
    /// assert!(json.starts_with('{') && json.contains("\"workers\""));
    /// // No hybrid or cluster section for a CPU frame.
    /// assert!(!json.contains("\"hybrid\"") && !json.contains("\"cluster\""));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises") + "\n"
    }
}

/// `1234567` as `1,234,567`. (A dozen lines, where `num-format` would bring locale tables
/// raylb does not use: its output is the same in every locale.)
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count, or `?` where the balancer does not report it.
fn known(n: Option<u64>) -> String {
    n.map_or_else(|| "?".into(), grouped)
}

/// [`counted`], or `? nouns` when the balancer does not know.
fn known_counted(n: Option<u64>, noun: &str) -> String {
    n.map_or_else(|| format!("? {noun}s"), |n| counted(n, noun))
}

/// `n noun`, the noun in the plural unless `n` is 1, the number grouped by thousands:
/// `1 thread`, `1,024 tiles`, `7 leaves`, `3 passes`, `2 batches`.
///
/// ```
/// use renderer::stats::counted;
///
/// assert_eq!(counted(1, "thread"), "1 thread");
/// assert_eq!(counted(1024, "tile"), "1,024 tiles");
/// assert_eq!(counted(2, "batch"), "2 batches");
/// ```
pub fn counted(n: u64, noun: &str) -> String {
    let noun = match (n, noun) {
        (1, _) => noun.to_string(),
        (_, "leaf") => "leaves".to_string(),
        (_, noun) if ["s", "x", "ch", "sh"].iter().any(|e| noun.ends_with(e)) => {
            format!("{noun}es")
        }
        _ => format!("{noun}s"),
    };
    format!("{} {noun}", grouped(n))
}

impl fmt::Display for HybridReport {
    /// The `hybrid` line: each kind's share of the rays and its idle time at the end.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shares: Vec<String> = self
            .shares
            .iter()
            .map(|s| {
                format!(
                    "{} {:.1}% of rays ({}, idle {:.3} s at the end)",
                    s.processor,
                    s.share * 100.0,
                    counted(s.tiles, "tile"),
                    s.idle_at_end_seconds
                )
            })
            .collect();
        let batches: Vec<&BatchReport> = self
            .processors
            .iter()
            .flat_map(|p| &p.batch_timeline)
            .collect();
        // The batches' time on the host, and by the devices' own clocks where they keep one.
        let mut times = String::new();
        if !batches.is_empty() {
            let host: f64 = batches.iter().map(|b| b.seconds).sum();
            write!(times, " ({host:.3} s on the host")?;
            let timed: Vec<f64> = batches.iter().filter_map(|b| b.device_seconds).collect();
            // The two sums over the same batches: every batch timed by its device.
            if timed.len() == batches.len() {
                let device: f64 = timed.iter().sum();
                write!(times, ", {device:.3} s by the device's clock")?;
            }
            times.push(')');
        }
        let moved: u64 = self.processors.iter().map(|p| p.tiles_taken).sum();
        writeln!(
            f,
            "hybrid  {}; {}{times}, {} stolen",
            shares.join(", "),
            counted(batches.len() as u64, "batch"),
            counted(moved, "tile")
        )
    }
}

impl fmt::Display for ClusterReport {
    /// The `cluster` line and a table of the ranks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let moved: u64 = self.ranks.iter().map(|r| r.tiles_received).sum();
        let bytes: u64 = self.ranks.iter().map(|r| r.bytes_sent).sum();
        writeln!(
            f,
            "cluster {} over {}: rank imbalance {:.3}, {} moved, {} of messages",
            self.mode,
            counted(self.ranks.len() as u64, "rank"),
            self.rank_imbalance,
            counted(moved, "tile"),
            format_bytes(bytes)
        )?;
        writeln!(
            f,
            "rank  host          threads   tiles  sent  recv   requests   busy s   wait s"
        )?;
        for r in &self.ranks {
            writeln!(
                f,
                "{:>4}  {:<12} {:>8} {:>7} {:>5} {:>5} {:>10} {:>8.3} {:>8.3}",
                r.rank,
                r.host.chars().take(12).collect::<String>(),
                r.threads,
                grouped(r.tiles),
                grouped(r.tiles_sent),
                grouped(r.tiles_received),
                format!("{}/{}", grouped(r.requests_granted), grouped(r.requests)),
                r.busy_seconds,
                r.wait_seconds
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for SceneReport {
    /// The summary's `scene` line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "scene   {}: {}×{}{}, {} ({} zero-area dropped), {}, {}, max depth {}, loaded in {:.1} ms",
            self.name,
            self.width,
            self.height,
            if self.samples > 1 {
                format!(" × {} samples", self.samples)
            } else {
                String::new()
            },
            counted(self.triangles as u64, "triangle"),
            grouped(self.dropped_triangles as u64),
            counted(self.objects as u64, "object"),
            counted(self.lights as u64, "light"),
            self.max_depth,
            self.load_seconds * 1e3
        )
    }
}

impl fmt::Display for BvhReport {
    /// The summary's `bvh` line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bvh     {} ({} children a node, {}): {}, {}, depth {}, {}, built in {:.1} ms",
            self.structure,
            self.children,
            self.simd,
            counted(self.nodes as u64, "node"),
            counted(self.leaves as u64, "leaf"),
            self.depth,
            format_bytes(self.bytes as u64),
            self.build_seconds * 1e3
        )
    }
}

impl fmt::Display for RenderReport {
    /// The terminal summary of the run: what follows the `scene` and `bvh` lines, which are
    /// printed as loading goes (see [`SceneReport`] and [`BvhReport`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.render;
        let mut workers = match &self.hybrid {
            Some(h) => format!(
                "{} and {}",
                counted(r.threads as u64, "CPU thread"),
                counted((h.processors.len() - r.threads) as u64, "device")
            ),
            None if r.device == "cpu" => counted(r.threads as u64, "thread"),
            None => format!("{}, {}", r.device, counted(r.threads as u64, "worker")),
        };
        if r.packets {
            workers += ", packets on";
        }
        writeln!(
            f,
            "render  {}, {}, {}-pixel tiles ({}): {:.3} s, {:.2} Mrays/s, imbalance {:.3}, {}, peak {}",
            r.balancer,
            workers,
            r.tile,
            counted(r.tiles as u64, "tile"),
            r.wall_seconds,
            r.mrays_per_second,
            r.imbalance,
            known_counted(r.steals, "steal"),
            known_counted(r.peak_outstanding_tasks, "queued task")
        )?;
        writeln!(
            f,
            "rays    {} camera, {} shadow, {} reflection, {} refraction: {} in all",
            grouped(r.rays.camera),
            grouped(r.rays.shadow),
            grouped(r.rays.reflection),
            grouped(r.rays.refraction),
            grouped(r.rays.total)
        )?;
        if let Some(m) = &self.work_map {
            writeln!(
                f,
                "workmap {} to {} rays per pixel (legend: left to right)",
                m.min_rays_per_pixel, m.max_rays_per_pixel
            )?;
        }
        if let Some(h) = &self.hybrid {
            write!(f, "{h}")?;
        }
        if let Some(simt) = r.simt_efficiency {
            writeln!(
                f,
                "simt    {:.1}% of lanes active per warp step",
                simt * 100.0
            )?;
        }
        if let Some(k) = &r.kernel {
            writeln!(
                f,
                "kernel  {} ({}): {} registers, {} B local and {} B shared memory; {} blocks of {} threads per multiprocessor, {:.0}% occupancy",
                k.name,
                k.code,
                k.registers,
                k.local_bytes,
                k.shared_bytes,
                k.blocks_per_multiprocessor,
                k.threads_per_block,
                k.occupancy * 100.0
            )?;
        }
        if let Some(c) = &self.cluster {
            write!(f, "{c}")?;
        }
        let mut table = String::new();
        writeln!(
            table,
            "worker      tasks   tiles        rays   busy s   idle s  steals"
        )?;
        // Thousands of GPU warps: the table shows the first few; --stats has them all.
        const SHOWN: usize = 64;
        if self.workers.len() > SHOWN {
            writeln!(
                table,
                "(the first {SHOWN} of {} workers; --stats FILE.json lists all)",
                grouped(self.workers.len() as u64)
            )?;
        }
        for w in self.workers.iter().take(SHOWN) {
            writeln!(
                table,
                "{:>6} {:>10} {:>7} {:>11} {:>8.3} {:>8.3} {:>7}",
                w.worker,
                grouped(w.tasks),
                grouped(w.tiles),
                grouped(w.rays.total),
                w.busy_seconds,
                w.idle_seconds,
                known(w.steal_successes)
            )?;
        }
        f.write_str(&table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_their_plural_and_thousands() {
        assert_eq!(counted(1, "thread"), "1 thread");
        assert_eq!(counted(1024, "tile"), "1,024 tiles");
        assert_eq!(counted(7, "leaf"), "7 leaves");
        assert_eq!(counted(3, "pass"), "3 passes");
        assert_eq!(counted(2, "batch"), "2 batches");
        assert_eq!(counted(0, "box"), "0 boxes");
    }
}
