//! `raylb bench trace`: closest-hit throughput of the traversal, on the camera rays of a frame
//! (coherent) or on the reflection and refraction rays a frame spawns (incoherent).

use std::num::{NonZeroU32, NonZeroUsize};
use std::ops::Range;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use balancers::{Assignment, Balancer, BalancerKind, Spawn, TaskRunner};
use renderer::bvh::{NoCounters, TestCounts, TraversalCounters};
use renderer::film::Film;
use renderer::geometry::Ray;
use renderer::integrator::{RenderTask, Tile, Whitted, WorkerRays, tiles};
use renderer::render::FrameExtras;
use renderer::scene::{CameraExt, Scene};
use renderer::stats::counted;
use renderer::watch::Unwatched;

use crate::progress::Progress;
use crate::scene::SceneSettings;

/// The rays `raylb bench trace` traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaySet {
    /// One per pixel and sample, from the camera.
    Camera,
    /// Every reflection and refraction ray of a frame.
    Secondary,
}

/// What `raylb bench trace` traces.
#[derive(Debug)]
pub struct TraceOptions<'a> {
    /// The scene, loaded.
    pub scene: &'a Scene,
    /// The settings it was loaded with, which check the frame that records secondary rays.
    pub settings: &'a dyn SceneSettings,
    /// Worker threads.
    pub threads: NonZeroUsize,
    /// Timed passes; the best is reported.
    pub repeat: u32,
    /// Which rays.
    pub rays: RaySet,
    /// Print nothing.
    pub quiet: bool,
}

/// A batch of rays one task traces.
#[derive(Clone, Debug)]
enum Batch {
    /// The camera rays of a tile.
    Tile(Tile),
    /// Recorded rays, by their indices.
    Recorded(Range<usize>),
}

/// The tiles of the camera rays, and of the frame that records the secondary ones: small,
/// so that every worker gets many.
const TILE: NonZeroU32 = NonZeroU32::new(16).expect("16 is not 0");

/// Recorded rays a task traces at most: enough that a task costs far more than handing it
/// out, few enough that every worker gets many.
const RECORDED_PER_TASK: usize = 4096;

/// Traces batches of rays for their closest hit, nothing more, reporting every box and
/// triangle test to a `C` (which [`NoCounters`] compiles away).
struct TraceRays<'a, C> {
    scene: &'a Scene,
    recorded: &'a [Ray],
    counters: std::marker::PhantomData<C>,
}

impl<'a, C> TraceRays<'a, C> {
    fn new(scene: &'a Scene, recorded: &'a [Ray]) -> Self {
        Self {
            scene,
            recorded,
            counters: std::marker::PhantomData,
        }
    }
}

/// One worker's rays, hits and tests.
#[derive(Default)]
struct TraceCounts<C> {
    rays: u64,
    hits: u64,
    tests: C,
}

impl<C: TraversalCounters> TraceCounts<C> {
    #[inline(always)]
    fn trace(&mut self, scene: &Scene, ray: &Ray) {
        self.rays += 1;
        self.hits += u64::from(
            scene
                .accel
                .closest_hit_counted(ray, &mut self.tests)
                .is_some(),
        );
    }
}

impl<C: TraversalCounters + Default + Send + Sync> TaskRunner<Batch> for TraceRays<'_, C> {
    type Local = TraceCounts<C>;

    fn local(&self, _worker: usize) -> TraceCounts<C> {
        TraceCounts::default()
    }

    fn run<S: Spawn<Batch>>(&self, batch: Batch, counts: &mut TraceCounts<C>, _spawn: &mut S) {
        let s = self.scene;
        match batch {
            Batch::Tile(tile) => {
                for y in tile.y0..tile.y1 {
                    for x in tile.x0..tile.x1 {
                        for &offset in s.samples.offsets() {
                            counts.trace(s, &s.camera.sample_ray(x, y, offset, s.width, s.height));
                        }
                    }
                }
            }
            Batch::Recorded(range) => {
                for ray in &self.recorded[range] {
                    counts.trace(s, ray);
                }
            }
        }
    }
}

/// Runs the Whitted integrator over a frame and records every reflection and refraction ray
/// it traces, as the integrator asks for its closest hit.
struct Recorder<'a>(Whitted<'a, Unwatched>);

impl TaskRunner<RenderTask> for Recorder<'_> {
    type Local = (WorkerRays, Vec<Ray>);

    fn local(&self, worker: usize) -> Self::Local {
        (self.0.local(worker), Vec::new())
    }

    fn run<S: Spawn<RenderTask>>(&self, task: RenderTask, local: &mut Self::Local, spawn: &mut S) {
        if let RenderTask::Ray(ray) = &task {
            local.1.push(Ray::new(ray.origin, ray.dir));
        }
        self.0.run(task, &mut local.0, spawn);
    }
}

/// The secondary rays of a frame of `scene`, in the order one worker traces them.
fn secondary_rays(scene: &Scene) -> Result<Vec<Ray>> {
    let film = Film::try_new(scene.width, scene.height, false).map_err(|e| anyhow!(e))?;
    let tasks: Vec<RenderTask> = tiles(scene.width, scene.height, TILE)
        .into_iter()
        .map(RenderTask::Tile)
        .collect();
    let recorder = Recorder(Whitted::new(scene, &film, &Unwatched));
    let outcome = BalancerKind::static_tiles(Assignment::Interleaved).run(
        NonZeroUsize::MIN,
        &tasks,
        &recorder,
    )?;
    Ok(outcome
        .locals
        .into_iter()
        .flat_map(|(_, rays)| rays)
        .collect())
}

/// The traversal's throughput: the first pass counts box and triangle tests; the timed passes
/// count nothing.
pub fn run(options: &TraceOptions<'_>) -> Result<()> {
    let (scene, quiet) = (options.scene, options.quiet);
    let workers = options.threads;
    let balancer = BalancerKind::static_tiles(Assignment::Interleaved);
    let recorded = recorded_rays(options, scene, balancer)?;
    let tasks: Vec<Batch> = match options.rays {
        RaySet::Camera => tiles(scene.width, scene.height, TILE)
            .into_iter()
            .map(Batch::Tile)
            .collect(),
        RaySet::Secondary => (0..recorded.len())
            .step_by(RECORDED_PER_TASK)
            .map(|start| Batch::Recorded(start..(start + RECORDED_PER_TASK).min(recorded.len())))
            .collect(),
    };

    let first_pass = balancer.run(
        workers,
        &tasks,
        &TraceRays::<TestCounts>::new(scene, &recorded),
    )?;
    let mut counts = TraceCounts::<TestCounts>::default();
    for c in &first_pass.locals {
        counts.rays += c.rays;
        counts.hits += c.hits;
        counts.tests.boxes += c.tests.boxes;
        counts.tests.triangles += c.tests.triangles;
    }
    let mut best = Duration::MAX;
    let mut progress = Progress::new(u64::from(options.repeat), "passes", quiet);
    for pass in 1..=options.repeat {
        let started = Instant::now();
        let run = balancer.run(
            workers,
            &tasks,
            &TraceRays::<NoCounters>::new(scene, &recorded),
        )?;
        best = best.min(started.elapsed());
        progress.step(&format!(
            "pass {pass}/{}: {:.3} s",
            options.repeat,
            started.elapsed().as_secs_f64()
        ));
        let again: u64 = run.locals.iter().map(|c| c.hits).sum();
        assert_eq!(again, counts.hits, "timed passes find the same hits");
    }
    progress.finish();
    report(options, workers, &counts, best)
}

/// With `--rays secondary`, the reflection and refraction rays of one frame of `scene`,
/// recorded as `render` would trace them; with `--rays camera`, none (they are made per tile).
fn recorded_rays(
    options: &TraceOptions<'_>,
    scene: &Scene,
    balancer: BalancerKind,
) -> Result<Vec<Ray>> {
    if let RaySet::Camera = options.rays {
        return Ok(Vec::new());
    }
    // The recording renders the frame once, as `render` would, on one thread.
    options.settings.check_frames(
        scene,
        &[balancer],
        &[NonZeroUsize::MIN],
        &[TILE],
        FrameExtras::default(),
    )?;
    let rays = secondary_rays(scene)?;
    if rays.is_empty() {
        bail!(
            "--rays secondary: a frame of {} spawns no reflection or refraction rays",
            scene.name
        );
    }
    Ok(rays)
}

/// What was traced, the hits and tests per ray of the counted pass, and the best time.
fn report(
    options: &TraceOptions<'_>,
    workers: NonZeroUsize,
    counts: &TraceCounts<TestCounts>,
    best: Duration,
) -> Result<()> {
    let (scene, quiet) = (options.scene, options.quiet);
    let (rays, hits) = (counts.rays, counts.hits);
    let what = match options.rays {
        RaySet::Camera => format!(
            "{}×{}{} camera rays",
            scene.width,
            scene.height,
            match scene.samples.count() {
                1 => String::new(),
                n => format!(" × {n}"),
            }
        ),
        RaySet::Secondary => format!(
            "{} of a {}×{} frame",
            counted(rays, "reflection and refraction ray"),
            scene.width,
            scene.height
        ),
    };
    say!(
        quiet,
        "{}: {what}, {} in the {} structure, {}, closest hit only",
        scene.name,
        counted(scene.stats.triangles as u64, "triangle"),
        scene.accel.kind().name(),
        counted(workers.get() as u64, "thread")
    );
    say!(quiet, "hits    {hits} of {rays} rays");
    say!(
        quiet,
        "tests   {:.1} box and {:.1} triangle tests per ray",
        counts.tests.boxes as f64 / rays as f64,
        counts.tests.triangles as f64 / rays as f64
    );
    say!(
        quiet,
        "time    best of {}: {:.4} s, {:.2} Mrays/s",
        counted(u64::from(options.repeat), "pass"),
        best.as_secs_f64(),
        rays as f64 / best.as_secs_f64() / 1e6
    );
    Ok(())
}
