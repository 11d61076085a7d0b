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

use balancers::{
    Assignment, Balancer, BalancerKind, BatchRunner, HybridError, HybridStealing,
    ProcessorTelemetry,
};

use crate::film::Film;
use crate::integrator::{RayCounts, RenderTask, Tile, Whitted, tiles};
use crate::render::Frame;
use crate::scene::Scene;
use crate::watch::Unwatched;

/// A processor that traces whole batches of tiles, with every ray they spawn, into sums of
/// its own: a GPU, for `--device hybrid`.
pub trait TileDevice: Send {
    /// What the device is, for reports.
    fn name(&self) -> String;

    /// The most tiles worth launching at once: a batch that fills the device.
    fn max_batch(&self) -> usize;

    /// Traces `tiles` and everything they spawn.
    ///
    /// # Errors
    /// When the device fails; the frame is then abandoned.
    fn trace(&mut self, tiles: &[Tile]) -> Result<(), String>;

    /// What the device traced, once its last batch is done.
    ///
    /// # Errors
    /// When the sums cannot be read back.
    fn finish(&mut self) -> Result<DeviceSums, String>;
}

/// A device's share of a frame: its fixed-point sums and ray counts per pixel, row-major, and
/// its rays by kind.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSums {
    /// Per pixel, what the device's rays added.
    pub sums: Vec<[u64; 3]>,
    /// Per pixel, the rays it traced, if counted.
    pub rays_per_pixel: Option<Vec<u32>>,
    /// Its rays by kind.
    pub rays: RayCounts,
}

/// How to render a frame on the CPU and devices together.
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

/// What a hybrid frame adds to a [`Frame`]: each processor's hybrid figures (CPU workers
/// first, in the order of the telemetry) and the devices' names.
#[derive(Clone, Debug, PartialEq)]
pub struct HybridFigures {
    /// Per processor, as the telemetry's workers.
    pub processors: Vec<ProcessorTelemetry>,
    /// The devices' names, in order.
    pub devices: Vec<String>,
}

/// Why a hybrid frame could not be rendered.
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

/// A device as the scheduler drives it: tasks in, tiles out.
struct Batches<D> {
    device: D,
}

impl<D: TileDevice> BatchRunner<RenderTask> for Batches<D> {
    type Error = String;

    fn max_batch(&self) -> usize {
        self.device.max_batch()
    }

    fn run_batch(&mut self, batch: &[RenderTask]) -> Result<(), String> {
        let tiles: Vec<Tile> = batch
            .iter()
            .map(|task| match task {
                RenderTask::Tile(tile) => *tile,
                RenderTask::Ray(_) => unreachable!("batches hold initial tasks: tiles"),
            })
            .collect();
        self.device.trace(&tiles)
    }
}

/// Renders `scene` on `options.threads` CPU workers and `devices` together.
///
/// # Errors
/// When a thread cannot be started, the film's memory cannot be had, or a device fails.
pub fn render_hybrid<D: TileDevice>(
    scene: &Scene,
    options: &HybridOptions,
    devices: Vec<D>,
) -> Result<Frame, HybridRenderError> {
    let film = Film::try_new(scene.width, scene.height, options.work_map)
        .map_err(HybridRenderError::Memory)?;
    let names: Vec<String> = devices.iter().map(TileDevice::name).collect();
    let tasks: Vec<RenderTask> = tiles(scene.width, scene.height, options.tile)
        .into_iter()
        .map(RenderTask::Tile)
        .collect();
    let runners: Vec<Batches<D>> = devices
        .into_iter()
        .map(|device| Batches { device })
        .collect();
    let whitted = Whitted::new(scene, &film, &Unwatched);
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
    }
    Ok(Frame {
        film: Arc::new(film),
        telemetry: outcome.telemetry,
        rays,
        tiles: tasks.len(),
        device: None,
        hybrid: Some(HybridFigures {
            processors: outcome.processors,
            devices: names,
        }),
        cancelled: false,
    })
}

/// A tile device made of CPU threads: each batch is rendered by `static` on its own threads
/// into a film of its own. It is how the hybrid scheduler and the film's integer sum are
/// tested where no GPU is, through the interface a GPU's device has; it is no faster than as
/// many CPU workers.
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
        })
    }
}
