//! `raylb bench`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use balancers::{Assignment, Balancer, BalancerKind, Spawn, TaskRunner};
use renderer::bvh::TestCounts;
use renderer::integrator::{Tile, tiles};
use renderer::scene::Scene;

use crate::cli::{Bench, BenchArgs, TraceArgs, threads};

pub(crate) fn run(args: &BenchArgs) -> Result<ExitCode> {
    match &args.bench {
        Bench::Trace(a) => trace(a),
    }
}

/// Traces the camera rays of a tile for their closest hit, nothing more.
struct CameraRays<'a> {
    scene: &'a Scene,
}

/// Hits and test counts of one worker.
#[derive(Default)]
struct TraceCounts {
    rays: u64,
    hits: u64,
    tests: TestCounts,
}

impl TaskRunner<Tile> for CameraRays<'_> {
    type Local = TraceCounts;

    fn local(&self, _worker: usize) -> TraceCounts {
        TraceCounts::default()
    }

    fn run<S: Spawn<Tile>>(&self, tile: Tile, counts: &mut TraceCounts, _spawn: &mut S) {
        let s = self.scene;
        for y in tile.y0..tile.y1 {
            for x in tile.x0..tile.x1 {
                let ray = s.camera.primary_ray(x, y, s.width, s.height);
                counts.rays += 1;
                counts.hits +=
                    u64::from(s.bvh.closest_hit_counted(&ray, &mut counts.tests).is_some());
            }
        }
    }
}

/// Camera rays only: the traversal's throughput. The first pass counts box and triangle
/// tests; the timed passes count nothing.
fn trace(args: &TraceArgs) -> Result<ExitCode> {
    let scene = args.scene.load(&args.source)?;
    let workers = threads(Some(args.threads));
    let balancer = BalancerKind::static_tiles(Assignment::Interleaved);
    let tasks = tiles(scene.width, scene.height, 16);
    let runner = CameraRays { scene: &scene };

    let counted = balancer.run(workers, &tasks, &runner);
    let (mut rays, mut hits, mut boxes, mut triangles) = (0, 0, 0, 0);
    for c in &counted.locals {
        rays += c.rays;
        hits += c.hits;
        boxes += c.tests.boxes;
        triangles += c.tests.triangles;
    }
    let mut best = Duration::MAX;
    for _ in 0..args.repeat {
        let started = Instant::now();
        let run = balancer.run(workers, &tasks, &UncountedCameraRays(&runner));
        best = best.min(started.elapsed());
        let again: u64 = run.locals.iter().sum();
        assert_eq!(again, hits, "timed passes find the same hits");
    }
    println!(
        "{}: {}×{} camera rays, {} triangles, {} thread{}, closest hit only",
        scene.name,
        scene.width,
        scene.height,
        scene.stats.triangles,
        workers,
        if workers.get() == 1 { "" } else { "s" }
    );
    println!("hits    {hits} of {rays} rays");
    println!(
        "tests   {:.1} box and {:.1} triangle tests per ray",
        boxes as f64 / rays as f64,
        triangles as f64 / rays as f64
    );
    println!(
        "time    best of {}: {:.4} s, {:.2} Mrays/s",
        args.repeat,
        best.as_secs_f64(),
        rays as f64 / best.as_secs_f64() / 1e6
    );
    Ok(ExitCode::SUCCESS)
}

/// The timed variant: counts hits only.
struct UncountedCameraRays<'a>(&'a CameraRays<'a>);

impl TaskRunner<Tile> for UncountedCameraRays<'_> {
    type Local = u64;

    fn local(&self, _worker: usize) -> u64 {
        0
    }

    fn run<S: Spawn<Tile>>(&self, tile: Tile, hits: &mut u64, _spawn: &mut S) {
        let s = self.0.scene;
        for y in tile.y0..tile.y1 {
            for x in tile.x0..tile.x1 {
                let ray = s.camera.primary_ray(x, y, s.width, s.height);
                *hits += u64::from(s.bvh.closest_hit(&ray).is_some());
            }
        }
    }
}
