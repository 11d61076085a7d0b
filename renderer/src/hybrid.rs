//! One frame on the CPU's worker threads and tile devices (GPUs) together, under one
//! work-stealing scheduler ([`HybridStealing`]): every CPU worker and every device is a
//! processor with a pool of tiles; a device traces whole batches of tiles, with every ray they
//! spawn, into sums of its own; idle processors steal tiles from each other.
//!
//! The bytes do not depend on the split: the CPU workers add to the film as ever, each device
//! hands back its fixed-point sums, and these are added to the film as integers
//! ([`Film::add_sums`]), whose sum is the same in any order.

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;
use std::time::Duration;

use balancers::{Assignment, Balancer, BalancerKind, BatchRunner, HybridError, HybridStealing};

use crate::film::Film;
use crate::frame::{Frame, HybridFigures};
use crate::integrator::{RayCounts, RenderTask, Tile, Whitted, tiles};
use crate::scene::Scene;
use crate::watch::{FrameObserver, FrameWatch, Unwatched};

/// A processor that traces whole batches of tiles, with every ray they spawn, into sums of
/// its own: a GPU, for `--device hybrid`.
///
/// ```
/// use std::num::{NonZeroU32, NonZeroUsize};
/// use renderer::hybrid::{CpuTiles, HybridOptions, render_hybrid};
/// use renderer::scene::{Scene, SceneOverrides};
///
/// let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let scene = Scene::load(path.as_ref(), overrides)?;
/// let options = HybridOptions {
///     balancer: Default::default(),
///     threads: NonZeroUsize::new(2).unwrap(),
///     tile: NonZeroU32::new(8).unwrap(),
///     work_map: false,
/// };
/// // A device of two CPU threads, where a GPU would be (`renderer::gpu::GpuTiles`).
/// let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// let frame = render_hybrid(&scene, &options, vec![device])?;
/// assert_eq!(frame.tiles, 16);
/// assert_eq!(frame.hybrid.unwrap().devices, ["2 CPU threads"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait TileDevice: Send {
    /// What the device is, for reports.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = HybridOptions {
    /// #     balancer: Default::default(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// let device = CpuTiles::new(&scene, NonZeroUsize::new(3).unwrap(), 4, false);
    /// assert_eq!(device.name(), "3 CPU threads");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn name(&self) -> String;

    /// The most tiles worth launching at once: a batch that fills the device.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = HybridOptions {
    /// #     balancer: Default::default(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
    /// assert_eq!(device.max_batch(), 4);
    /// let frame = render_hybrid(&scene, &options, vec![device])?;
    /// // 16 tiles: the device's batches took at most 4 each.
    /// let device = frame.hybrid.unwrap().processors[2].clone();
    /// assert!(device.batches.iter().all(|b| b.tasks <= 4));
    /// let batched: u64 = device.batches.iter().map(|b| b.tasks).sum();
    /// assert_eq!(batched, device.dealt - device.given + device.taken);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn max_batch(&self) -> usize;

    /// Traces `tiles` and everything they spawn.
    ///
    /// # Errors
    /// When the device fails; the frame is then abandoned.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = HybridOptions {
    /// #     balancer: Default::default(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// use renderer::integrator::tiles;
    ///
    /// let mut device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 16, false);
    /// let all = tiles(scene.width, scene.height, NonZeroU32::new(8).unwrap());
    /// device.trace(&all[..10])?;
    /// device.trace(&all[10..])?;
    /// assert_eq!(device.batches, [10, 6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn trace(&mut self, tiles: &[Tile]) -> Result<(), String>;

    /// What the device traced, once its last batch is done.
    ///
    /// # Errors
    /// When the sums cannot be read back.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = HybridOptions {
    /// #     balancer: Default::default(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// use renderer::integrator::tiles;
    ///
    /// let mut device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 16, true);
    /// device.trace(&tiles(scene.width, scene.height, NonZeroU32::new(8).unwrap()))?;
    /// let traced = device.finish()?;
    /// // One camera ray a pixel at one sample, every pixel counted.
    /// assert_eq!(traced.rays.camera, 32 * 32);
    /// assert_eq!(traced.sums.len(), 32 * 32);
    /// assert!(traced.rays_per_pixel.unwrap().iter().all(|&n| n >= 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn finish(&mut self) -> Result<DeviceSums, String>;
}

/// A device's share of a frame: its fixed-point sums and ray counts per pixel, row-major, and
/// its rays by kind.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::integrator::tiles;
///
/// let mut device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 16, false);
/// let all = tiles(scene.width, scene.height, NonZeroU32::new(8).unwrap());
/// device.trace(&all[..1])?;
/// let traced = device.finish()?;
/// // One 8×8 tile traced: the other pixels' sums are zero.
/// assert_eq!(traced.rays.camera, 64);
/// assert_eq!(traced.sums[31 * 32 + 31], [0, 0, 0]);
/// assert_eq!(traced.rays_per_pixel, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSums {
    /// Per pixel, what the device's rays added.
    pub sums: Vec<[u64; 3]>,
    /// Per pixel, the rays it traced, if counted.
    pub rays_per_pixel: Option<Vec<u32>>,
    /// Its rays by kind.
    pub rays: RayCounts,
    /// Per batch, in order, the time the device itself measured for it (a GPU's kernel time,
    /// without the host's part); empty for a device without a clock of its own.
    pub batch_times: Vec<Duration>,
}

/// How to render a frame on the CPU and devices together.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, true);
/// let frame = render_hybrid(&scene, &HybridOptions { work_map: true, ..options }, vec![device])?;
/// // With a work map the film counts rays per pixel.
/// assert!(frame.film.ray_counts().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HybridOptions {
    /// The scheduler, with the CPU workers' stealing settings.
    pub balancer: HybridStealing,
    /// CPU worker threads.
    pub threads: NonZeroUsize,
    /// Tile edge in pixels.
    pub tile: NonZeroU32,
    /// Count rays per pixel for a work map.
    pub work_map: bool,
}

/// Why a hybrid frame could not be rendered.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::hybrid::{DeviceSums, HybridRenderError};
/// use renderer::integrator::Tile;
///
/// struct Unplugged;
/// impl TileDevice for Unplugged {
///     fn name(&self) -> String {
///         "GPU 0".into()
///     }
///     fn max_batch(&self) -> usize {
///         64
///     }
///     fn trace(&mut self, _tiles: &[Tile]) -> Result<(), String> {
///         Err("the device is gone".into())
///     }
///     fn finish(&mut self) -> Result<DeviceSums, String> {
///         Err("nothing traced".into())
///     }
/// }
///
/// let failed = render_hybrid(&scene, &options, vec![Unplugged]).unwrap_err();
/// assert!(matches!(failed, HybridRenderError::Device { .. }));
/// assert_eq!(failed.to_string(), "GPU 0: the device is gone");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum HybridRenderError {
    /// A thread could not be started.
    Spawn(balancers::SpawnError),
    /// The film's memory could not be had.
    Memory(String),
    /// A device failed.
    Device {
        /// Its name.
        name: String,
        /// What it said.
        error: String,
    },
}

impl std::fmt::Display for HybridRenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Spawn(e) => e.fmt(f),
            Self::Memory(e) => f.write_str(e),
            Self::Device { name, error } => write!(f, "{name}: {error}"),
        }
    }
}

impl std::error::Error for HybridRenderError {}

/// A device as the scheduler drives it: tasks in, tiles out. It remembers the tiles it
/// traced, for the observer to hear of once its sums are in the film; once the frame is
/// cancelled it traces no more batches.
struct Batches<'o, D, O> {
    device: D,
    observer: &'o O,
    traced: Vec<Tile>,
}

impl<D: TileDevice, O: FrameObserver> BatchRunner<RenderTask> for Batches<'_, D, O> {
    type Error = String;

    fn max_batch(&self) -> usize {
        self.device.max_batch()
    }

    fn run_batch(&mut self, batch: &[RenderTask]) -> Result<(), String> {
        if self.observer.cancel_requested() {
            self.observer.note_dropped();
            return Ok(());
        }
        let tiles: Vec<Tile> = batch
            .iter()
            .map(|task| match task {
                RenderTask::Tile(tile) => *tile,
                RenderTask::Ray(_) => unreachable!("batches hold initial tasks: tiles"),
            })
            .collect();
        self.device.trace(&tiles)?;
        self.traced.extend(tiles);
        Ok(())
    }
}

/// Renders `scene` on `options.threads` CPU workers and `devices` together.
///
/// # Errors
/// When a thread cannot be started, the film's memory cannot be had, or a device fails.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::render::{RenderOptions, render};
///
/// let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// let hybrid = render_hybrid(&scene, &options, vec![device])?;
/// // The same bytes as the CPU alone, whoever traced which tile.
/// let cpu = render(
///     &scene,
///     &RenderOptions {
///         balancer: balancers::BalancerKind::counter(NonZeroUsize::MIN).into(),
///         threads: NonZeroUsize::new(2).unwrap(),
///         tile: NonZeroU32::new(16).unwrap(),
///         work_map: false,
///     },
/// )?;
/// assert_eq!(hybrid.film.sums(), cpu.film.sums());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render_hybrid<D: TileDevice>(
    scene: &Scene,
    options: &HybridOptions,
    devices: Vec<D>,
) -> Result<Frame, HybridRenderError> {
    let film = Film::try_new(scene.width, scene.height, options.work_map)
        .map_err(HybridRenderError::Memory)?;
    render_hybrid_observed(scene, options, devices, Arc::new(film), &Unwatched)
}

/// Renders `scene` on CPU workers and `devices` together into `film`, as
/// [`render_hybrid`], for someone watching through `watch` (made with
/// [`FrameWatch::with_devices`] at `options.threads`): the CPU workers stamp their pixels as
/// they go, and a device's tiles are stamped with its number (`options.threads` on) once its
/// sums are in the film, at the end. A cancel drops the CPU's tasks and the batches not yet
/// launched; a batch running on a device is waited for.
///
/// # Errors
/// As [`render_hybrid`].
///
/// # Panics
/// When `film` or `watch` is not of the scene's size, the film counts rays per pixel where
/// `options.work_map` says not (or the other way round), or the watch does not take worker
/// `options.threads` for a device: checked before any work, not when the sums come back.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use std::sync::Arc;
/// use renderer::film::Film;
/// use renderer::hybrid::render_hybrid_watched;
/// use renderer::watch::FrameWatch;
///
/// let film = Arc::new(Film::new(scene.width, scene.height, false));
/// let watch = FrameWatch::with_devices(scene.width, scene.height, options.threads.get());
/// let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// let frame = render_hybrid_watched(&scene, &options, vec![device], film, &watch)?;
/// assert!(!frame.cancelled);
/// assert_eq!(watch.pixels_done(), 32 * 32);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render_hybrid_watched<D: TileDevice>(
    scene: &Scene,
    options: &HybridOptions,
    devices: Vec<D>,
    film: Arc<Film>,
    watch: &FrameWatch,
) -> Result<Frame, HybridRenderError> {
    assert_eq!(
        (watch.width(), watch.height()),
        (scene.width, scene.height),
        "watch of the scene's size"
    );
    assert_eq!(
        film.pixel_rays(0).is_some(),
        options.work_map,
        "a film that counts rays exactly for a work map"
    );
    assert!(
        watch.is_device(FrameWatch::worker_number(options.threads.get())),
        "a watch made with FrameWatch::with_devices at the CPU's thread count"
    );
    render_hybrid_observed(scene, options, devices, film, watch)
}

fn render_hybrid_observed<D: TileDevice, O: FrameObserver>(
    scene: &Scene,
    options: &HybridOptions,
    devices: Vec<D>,
    film: Arc<Film>,
    observer: &O,
) -> Result<Frame, HybridRenderError> {
    assert_eq!(
        (film.width(), film.height()),
        (scene.width, scene.height),
        "film of the scene's size"
    );
    let names: Vec<String> = devices.iter().map(TileDevice::name).collect();
    let tasks: Vec<RenderTask> = tiles(scene.width, scene.height, options.tile)
        .into_iter()
        .map(RenderTask::Tile)
        .collect();
    let runners: Vec<Batches<D, O>> = devices
        .into_iter()
        .map(|device| Batches {
            device,
            observer,
            traced: Vec::new(),
        })
        .collect();
    let whitted = Whitted::new(scene, &film, observer);
    let cpus = options.threads.get();
    let outcome = options
        .balancer
        .run(options.threads, &tasks, &whitted, runners)
        .map_err(|e| match e {
            HybridError::Spawn(e) => HybridRenderError::Spawn(e),
            HybridError::Batch { processor, error } => HybridRenderError::Device {
                name: names[processor - cpus].clone(),
                error,
            },
        })?;
    let mut rays: Vec<RayCounts> = outcome.locals.iter().map(|l| l.rays).collect();
    let mut batch_times = Vec::new();
    for (k, mut runner) in outcome.batch_runners.into_iter().enumerate() {
        let device = runner
            .device
            .finish()
            .map_err(|error| HybridRenderError::Device {
                name: names[k].clone(),
                error,
            })?;
        film.add_sums(&device.sums, device.rays_per_pixel.as_deref());
        rays.push(device.rays);
        batch_times.push(device.batch_times);
        for tile in &runner.traced {
            for y in tile.y0..tile.y1 {
                for x in tile.x0..tile.x1 {
                    observer.stamp(y * scene.width + x, cpus + k);
                }
            }
            observer.count_done(u64::from(tile.pixels()));
        }
    }
    let cancelled = observer.work_dropped();
    Ok(Frame {
        film,
        telemetry: outcome.telemetry,
        rays,
        tiles: tasks.len(),
        device: None,
        hybrid: Some(HybridFigures {
            processors: outcome.processors,
            devices: names,
            batch_times,
        }),
        cancelled,
    })
}

/// A tile device made of CPU threads: each batch is rendered by `static` on its own threads
/// into a film of its own. It is how the hybrid scheduler and the film's integer sum are
/// tested where no GPU is, through the interface a GPU's device has; it is no faster than as
/// many CPU workers.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let options = HybridOptions {
/// #     balancer: Default::default(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
/// let frame = render_hybrid(&scene, &options, vec![device])?;
/// // The device's figures follow the CPU workers'.
/// let figures = frame.hybrid.unwrap();
/// assert_eq!(figures.processors.len(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct CpuTiles<'a> {
    scene: &'a Scene,
    film: Film,
    threads: NonZeroUsize,
    max_batch: usize,
    rays: RayCounts,
    /// Batch sizes, in order.
    pub batches: Vec<usize>,
}

impl<'a> CpuTiles<'a> {
    /// A device rendering `scene` on `threads` threads, `max_batch` tiles at most a batch.
    ///
    /// # Panics
    /// When the film's memory cannot be had.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::hybrid::{CpuTiles, HybridOptions, TileDevice, render_hybrid};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let options = HybridOptions {
    /// #     balancer: Default::default(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// let device = CpuTiles::new(&scene, NonZeroUsize::new(2).unwrap(), 4, false);
    /// assert_eq!((device.name(), device.max_batch()), ("2 CPU threads".to_string(), 4));
    /// assert!(device.batches.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(scene: &'a Scene, threads: NonZeroUsize, max_batch: usize, work_map: bool) -> Self {
        Self {
            scene,
            film: Film::new(scene.width, scene.height, work_map),
            threads,
            max_batch,
            rays: RayCounts::default(),
            batches: Vec::new(),
        }
    }
}

impl TileDevice for CpuTiles<'_> {
    fn name(&self) -> String {
        format!("{} CPU threads", self.threads)
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn trace(&mut self, tiles: &[Tile]) -> Result<(), String> {
        self.batches.push(tiles.len());
        let tasks: Vec<RenderTask> = tiles.iter().copied().map(RenderTask::Tile).collect();
        let whitted = Whitted::new(self.scene, &self.film, &Unwatched);
        let outcome = BalancerKind::static_tiles(Assignment::Interleaved)
            .run(self.threads, &tasks, &whitted)
            .map_err(|e| e.to_string())?;
        for local in &outcome.locals {
            self.rays.merge(&local.rays);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<DeviceSums, String> {
        Ok(DeviceSums {
            sums: self.film.sums(),
            rays_per_pixel: self.film.ray_counts(),
            rays: self.rays,
            batch_times: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device that counts the tiles it is given.
    struct Counting(usize);

    impl TileDevice for Counting {
        fn name(&self) -> String {
            "counting".into()
        }
        fn max_batch(&self) -> usize {
            4
        }
        fn trace(&mut self, tiles: &[Tile]) -> Result<(), String> {
            self.0 += tiles.len();
            Ok(())
        }
        fn finish(&mut self) -> Result<DeviceSums, String> {
            Err("not needed here".into())
        }
    }

    #[test]
    fn no_batch_is_launched_once_the_frame_is_cancelled() {
        let watch = FrameWatch::new(8, 8);
        let mut batches = Batches {
            device: Counting(0),
            observer: &watch,
            traced: Vec::new(),
        };
        let tile = RenderTask::Tile(Tile {
            x0: 0,
            y0: 0,
            x1: 8,
            y1: 8,
        });
        batches.run_batch(&[tile]).unwrap();
        assert_eq!((batches.device.0, batches.traced.len()), (1, 1));
        watch.cancel();
        batches.run_batch(&[tile, tile]).unwrap();
        assert_eq!(batches.device.0, 1, "no launch after the cancel");
        assert_eq!(batches.traced.len(), 1, "nothing more to stamp");
        assert!(watch.work_dropped(), "the frame knows work was dropped");
    }
}
