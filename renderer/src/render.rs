//! One frame: a scene, a balancer and its settings in; a film and the run's figures out.

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;
use std::time::Duration;

use balancers::{Balancer, BalancerKind, SpawnError, Telemetry};

use crate::film::Film;
use crate::integrator::{RayCounts, RenderTask, Whitted, tiles};
use crate::scene::Scene;
use crate::watch::FrameWatch;

/// How to render a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// The balancer that distributes tiles and rays over the workers.
    pub balancer: BalancerKind,
    /// Worker threads.
    pub threads: NonZeroUsize,
    /// Tile edge in pixels.
    pub tile: NonZeroU32,
    /// Count rays per pixel for a work map.
    pub work_map: bool,
}

/// A rendered frame and how it went.
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
    /// Whether the frame was cancelled before all its work was done: the film is then
    /// incomplete.
    pub cancelled: bool,
}

/// Figures of a frame rendered on a GPU.
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
}

impl Frame {
    /// Rays of all workers together.
    pub fn total_rays(&self) -> RayCounts {
        let mut all = RayCounts::default();
        for r in &self.rays {
            all.merge(r);
        }
        all
    }

    /// Wall-clock time of the balancer's run.
    pub fn wall(&self) -> Duration {
        self.telemetry.wall
    }

    /// Millions of rays (of every kind) per second of wall-clock time.
    pub fn mrays_per_second(&self) -> f64 {
        self.total_rays().total() as f64 / self.wall().as_secs_f64().max(1e-9) / 1e6
    }
}

/// Renders `scene` as `options` say.
///
/// # Errors
/// When a worker thread cannot be started.
pub fn render(scene: &Scene, options: &RenderOptions) -> Result<Frame, SpawnError> {
    let film = Arc::new(Film::new(scene.width, scene.height, options.work_map));
    render_watched(
        scene,
        options,
        film,
        &FrameWatch::new(scene.width, scene.height),
    )
}

/// Renders `scene` into `film` (black, of the scene's size), reporting to `watch` (new, of
/// the same size) as it goes: another thread may show `film` and `watch` while this runs,
/// or cancel the frame through `watch`. Returns when every worker has been joined, also
/// after a cancel.
///
/// # Errors
/// When a worker thread cannot be started.
///
/// # Panics
/// When `film` or `watch` is not of the scene's size.
pub fn render_watched(
    scene: &Scene,
    options: &RenderOptions,
    film: Arc<Film>,
    watch: &FrameWatch,
) -> Result<Frame, SpawnError> {
    let size = (scene.width, scene.height);
    assert_eq!(
        (film.width(), film.height()),
        size,
        "film of the scene's size"
    );
    assert_eq!(
        (watch.width(), watch.height()),
        size,
        "watch of the scene's size"
    );
    let tasks: Vec<RenderTask> = tiles(scene.width, scene.height, options.tile)
        .into_iter()
        .map(RenderTask::Tile)
        .collect();
    let outcome =
        options
            .balancer
            .run(options.threads, &tasks, &Whitted::new(scene, &film, watch))?;
    Ok(Frame {
        film,
        telemetry: outcome.telemetry,
        rays: outcome.locals.iter().map(|l| l.rays).collect(),
        tiles: tasks.len(),
        device: None,
        cancelled: watch.work_dropped(),
    })
}
