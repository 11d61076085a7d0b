//! A rendered frame and its figures, whatever rendered it: the film, the balancer's account,
//! the rays by kind, and what a GPU or a hybrid frame adds. Every frame driver (`render`,
//! `gpu`, `hybrid`, `cluster`) returns one, and the reports (`stats`) read it.

use std::sync::Arc;
use std::time::Duration;

use balancers::{ProcessorTelemetry, Telemetry};

use crate::film::Film;
use crate::integrator::RayCounts;

/// A rendered frame and how it went.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::render::{RenderOptions, render};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// let frame = render(&scene, &options)?;
/// assert!(!frame.cancelled);
/// assert_eq!(frame.rays.len(), 2);
/// // A CPU frame has neither a device's nor a hybrid's figures.
/// assert!(frame.device.is_none() && frame.hybrid.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Frame {
    /// The accumulated image (shared with whoever watched it render).
    pub film: Arc<Film>,
    /// The balancer's per-worker account.
    pub telemetry: Telemetry,
    /// Rays traced by each worker, by kind.
    pub rays: Vec<RayCounts>,
    /// Initial tasks handed to the balancer.
    pub tiles: usize,
    /// What the GPU adds, for frames rendered on one.
    pub device: Option<DeviceFigures>,
    /// What CPU workers and devices together add, for frames rendered by `hybrid`.
    pub hybrid: Option<HybridFigures>,
    /// Whether the frame was cancelled before all its work was done: the film is then
    /// incomplete.
    pub cancelled: bool,
}

/// Figures of a frame rendered on a GPU.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::render::{RenderOptions, render};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
///
/// let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
/// let gpu_options = GpuOptions {
///     balancer: GpuBalancer::CudaManaged,
///     tile: options.tile,
///     work_map: false,
///     max_warps: None,
/// };
/// let figures = render_gpu(&gpu, &scene, &gpu_options)?.device.unwrap();
/// assert!(figures.name.contains("emulator"));
/// assert!(figures.simt_efficiency > 0.0 && figures.simt_efficiency <= 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceFigures {
    /// The device's name.
    pub name: String,
    /// Mean active lanes per warp step over the warp size.
    pub simt_efficiency: f64,
    /// What the workers of the telemetry are: persistent warps or resident block slots.
    pub workers_are: &'static str,
    /// Threads per block launched.
    pub threads_per_block: u32,
    /// Blocks launched.
    pub blocks: u32,
    /// The kernel's registers, local and shared memory, and the occupancy they give.
    pub kernel: Option<kernels::KernelResources>,
}

impl Frame {
    /// Rays of all workers together.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::render::{RenderOptions, render};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// let frame = render(&scene, &options)?;
    /// // At one sample, one camera ray a pixel.
    /// assert_eq!(frame.total_rays().camera, 32 * 32);
    /// assert!(frame.total_rays().total() >= 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn total_rays(&self) -> RayCounts {
        let mut all = RayCounts::default();
        for r in &self.rays {
            all.merge(r);
        }
        all
    }

    /// Wall-clock time of the balancer's run.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::render::{RenderOptions, render};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// let frame = render(&scene, &options)?;
    /// assert_eq!(frame.wall(), frame.telemetry.wall);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wall(&self) -> Duration {
        self.telemetry.wall
    }

    /// Millions of rays (of every kind) per second of wall-clock time.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::render::{RenderOptions, render};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// let frame = render(&scene, &options)?;
    /// let by_hand = frame.total_rays().total() as f64 / frame.wall().as_secs_f64() / 1e6;
    /// assert!((frame.mrays_per_second() - by_hand).abs() <= 1e-9 * by_hand.max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mrays_per_second(&self) -> f64 {
        self.total_rays().total() as f64 / self.wall().as_secs_f64().max(1e-9) / 1e6
    }
}

/// What a hybrid frame adds to a [`Frame`]: each processor's hybrid figures (CPU workers
/// first, in the order of the telemetry) and the devices' names.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::render::{RenderOptions, render};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::hybrid::{CpuTiles, HybridOptions, render_hybrid};
///
/// let hybrid = HybridOptions {
///     balancer: Default::default(),
///     threads: NonZeroUsize::new(2).unwrap(),
///     tile: NonZeroU32::new(8).unwrap(),
///     work_map: false,
/// };
/// let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// let figures = render_hybrid(&scene, &hybrid, vec![device])?.hybrid.unwrap();
/// // Two CPU workers, then the device.
/// assert_eq!(figures.processors.len(), 3);
/// assert_eq!(figures.devices, ["2 CPU threads"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct HybridFigures {
    /// Per processor, as the telemetry's workers.
    pub processors: Vec<ProcessorTelemetry>,
    /// The devices' names, in order.
    pub devices: Vec<String>,
    /// Per device, in the same order, the time it measured for each of its batches
    /// ([`DeviceSums::batch_times`](crate::hybrid::DeviceSums::batch_times)).
    pub batch_times: Vec<Vec<Duration>>,
}

impl HybridFigures {
    /// The CPU's workers: the processors before the devices.
    pub(crate) fn cpu_workers(&self) -> usize {
        self.processors.len() - self.devices.len()
    }
}
