//! Criterion benchmarks of the traversal and of whole frames, on the project's own scenes
//! (the public meshes are benchmarked by `raylb bench trace --mesh`, see BENCHMARKS.md).

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;

use balancers::{Assignment, BalancerKind};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use renderer::accel::AccelKind;
use renderer::render::{RenderOptions, render};
use renderer::scene::{CameraExt, Scene, SceneOverrides};

fn scene(name: &str, width: u32, height: u32) -> Scene {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenes")
        .join(format!("{name}.toml"));
    Scene::load(
        &path,
        SceneOverrides {
            width: Some(width),
            height: Some(height),
            ..Default::default()
        },
    )
    .expect("shipped scenes load")
}

/// Closest hit of every camera ray, one thread.
fn camera_rays(c: &mut Criterion) {
    let mut group = c.benchmark_group("closest_hit_camera_rays");
    for name in ["cornell", "treasure"] {
        let wide = scene(name, 256, 256);
        let octree = wide
            .with_accel(AccelKind::Octree)
            .expect("the build's threads start")
            .expect("another structure");
        let rays: Vec<_> = (0..wide.height)
            .flat_map(|y| (0..wide.width).map(move |x| (x, y)))
            .map(|(x, y)| wide.camera.primary_ray(x, y, wide.width, wide.height))
            .collect();
        group.throughput(Throughput::Elements(rays.len() as u64));
        for s in [&wide, &octree] {
            let id = format!("{name}/{}", s.accel.kind().name());
            group.bench_function(BenchmarkId::from_parameter(id), |b| {
                b.iter(|| {
                    rays.iter()
                        .filter(|r| s.accel.closest_hit(r).is_some())
                        .count()
                })
            });
        }
    }
    group.finish();
}

/// Whole frames of the quick scene, one thread, static tiles.
fn frames(c: &mut Criterion) {
    let s = scene("quick", 96, 64);
    let options = RenderOptions {
        balancer: BalancerKind::static_tiles(Assignment::Interleaved),
        threads: NonZeroUsize::MIN,
        tile: NonZeroU32::new(16).unwrap(),
        work_map: false,
    };
    c.bench_function("frame/quick", |b| {
        b.iter(|| render(&s, &options).expect("workers start").total_rays())
    });
}

criterion_group!(benches, camera_rays, frames);
criterion_main!(benches);
