//! `raylb bench trace`: closest-hit throughput of camera rays.

use std::num::NonZeroU32;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use balancers::{Assignment, Balancer, BalancerKind, Spawn, TaskRunner};
use renderer::bvh::{NoCounters, TestCounts, TraversalCounters};
use renderer::integrator::{Tile, tiles};
use renderer::scene::Scene;
use renderer::stats::counted;

use crate::cli::{TraceArgs, threads};
use crate::progress::Progress;

/// Traces the camera rays of a tile for their closest hit, nothing more, reporting every
/// box and triangle test to a `C` (which [`NoCounters`] compiles away).
struct CameraRays<'a, C> {
    scene: &'a Scene,
    counters: std::marker::PhantomData<C>,
}

impl<'a, C> CameraRays<'a, C> {
    fn new(scene: &'a Scene) -> Self {
        Self {
            scene,
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

impl<C: TraversalCounters + Default + Send + Sync> TaskRunner<Tile> for CameraRays<'_, C> {
    type Local = TraceCounts<C>;

    fn local(&self, _worker: usize) -> TraceCounts<C> {
        TraceCounts::default()
    }

    fn run<S: Spawn<Tile>>(&self, tile: Tile, counts: &mut TraceCounts<C>, _spawn: &mut S) {
        let s = self.scene;
        for y in tile.y0..tile.y1 {
            for x in tile.x0..tile.x1 {
                for &offset in s.samples.offsets() {
                    let ray = s.camera.sample_ray(x, y, offset, s.width, s.height);
                    counts.rays += 1;
                    counts.hits += u64::from(
                        s.accel
                            .closest_hit_counted(&ray, &mut counts.tests)
                            .is_some(),
                    );
                }
            }
        }
    }
}

/// Camera rays only: the traversal's throughput. The first pass counts box and triangle
/// tests; the timed passes count nothing.
pub(crate) fn run(args: &TraceArgs, quiet: bool) -> Result<ExitCode> {
    let scene = args.scene.load(&args.source, quiet)?;
    let workers = threads(Some(args.threads));
    let balancer = BalancerKind::static_tiles(Assignment::Interleaved);
    let tasks = tiles(
        scene.width,
        scene.height,
        NonZeroU32::new(16).expect("16 is not 0"),
    );

    let first_pass = balancer.run(workers, &tasks, &CameraRays::<TestCounts>::new(&scene))?;
    let (mut rays, mut hits, mut boxes, mut triangles) = (0, 0, 0, 0);
    for c in &first_pass.locals {
        rays += c.rays;
        hits += c.hits;
        boxes += c.tests.boxes;
        triangles += c.tests.triangles;
    }
    let mut best = Duration::MAX;
    let mut progress = Progress::new(u64::from(args.repeat), "passes", quiet);
    for pass in 1..=args.repeat {
        let started = Instant::now();
        let run = balancer.run(workers, &tasks, &CameraRays::<NoCounters>::new(&scene))?;
        best = best.min(started.elapsed());
        progress.step(&format!(
            "pass {pass}/{}: {:.3} s",
            args.repeat,
            started.elapsed().as_secs_f64()
        ));
        let again: u64 = run.locals.iter().map(|c| c.hits).sum();
        assert_eq!(again, hits, "timed passes find the same hits");
    }
    progress.finish();
    say!(
        quiet,
        "{}: {}×{}{} camera rays, {}, {}, closest hit only",
        scene.name,
        scene.width,
        scene.height,
        match scene.samples.count() {
            1 => String::new(),
            n => format!(" × {n}"),
        },
        counted(scene.stats.triangles as u64, "triangle"),
        counted(workers.get() as u64, "thread")
    );
    say!(quiet, "hits    {hits} of {rays} rays");
    say!(
        quiet,
        "tests   {:.1} box and {:.1} triangle tests per ray",
        boxes as f64 / rays as f64,
        triangles as f64 / rays as f64
    );
    say!(
        quiet,
        "time    best of {}: {:.4} s, {:.2} Mrays/s",
        counted(u64::from(args.repeat), "pass"),
        best.as_secs_f64(),
        rays as f64 / best.as_secs_f64() / 1e6
    );
    Ok(ExitCode::SUCCESS)
}
