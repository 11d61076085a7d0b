//! Criterion benchmarks of the traversal and of whole frames, on the project's own scenes
//! (the public meshes are benchmarked by `raylb bench trace --mesh`, see BENCHMARKS.md).

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;

use balancers::{Assignment, BalancerKind};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use renderer::accel::AccelKind;
use renderer::bvh::wide::{PACKET_LANES, RayPacket, Simd};
use renderer::bvh::{BvhSettings, WideBvh};
use renderer::geometry::Ray;
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

/// Closest hit of every camera ray, one thread, in the wide BVH of eight children: ray by ray
/// and in packets of 4×2 and of 4×4 pixels (eight rays and sixteen), with the best
/// instructions the processor has (AVX-512 or AVX2), held to AVX2, and through the portable
/// path (SSE halves).
fn camera_packets(c: &mut Criterion) {
    let mut group = c.benchmark_group("closest_hit_camera_packets");
    for name in ["cornell", "treasure"] {
        let s = scene(name, 256, 256);
        let triangles = s.accel.input_triangles();
        // Blocks of 4 × `rows` pixels, a block to a packet (the image's sides are multiples
        // of four).
        let blocks = |rows: u32| -> Vec<RayPacket> {
            (0..s.height)
                .step_by(rows as usize)
                .flat_map(|y| (0..s.width).step_by(4).map(move |x| (x, y)))
                .map(|(x, y)| {
                    let rays: Vec<Ray> = (0..4 * rows)
                        .map(|lane| {
                            s.camera
                                .primary_ray(x + lane % 4, y + lane / 4, s.width, s.height)
                        })
                        .collect();
                    RayPacket::new(&rays)
                })
                .collect()
        };
        let packets = [(8, blocks(2)), (PACKET_LANES, blocks(4))];
        let rays: Vec<Ray> = (0..s.height)
            .flat_map(|y| (0..s.width).map(move |x| s.camera.primary_ray(x, y, s.width, s.height)))
            .collect();
        group.throughput(Throughput::Elements(rays.len() as u64));
        let built = WideBvh::build(&triangles, BvhSettings::default());
        let avx2 = WideBvh::build(&triangles, BvhSettings::default()).limited_to(Simd::Avx2);
        let portable =
            WideBvh::build(&triangles, BvhSettings::default()).limited_to(Simd::Baseline);
        let levels = [&built, &avx2, &portable];
        // A level the processor lacks is the one below it: each is measured once.
        for (k, bvh) in levels.iter().enumerate() {
            if levels[..k]
                .iter()
                .any(|b| b.stats().simd == bvh.stats().simd)
            {
                continue;
            }
            let simd = bvh.stats().simd;
            let id = format!("{name}/{simd}/rays");
            group.bench_function(BenchmarkId::from_parameter(id), |b| {
                b.iter(|| rays.iter().filter(|r| bvh.closest_hit(r).is_some()).count())
            });
            for (lanes, packets) in &packets {
                let id = format!("{name}/{simd}/packets of {lanes}");
                group.bench_function(BenchmarkId::from_parameter(id), |b| {
                    b.iter(|| {
                        packets
                            .iter()
                            .map(|p| bvh.closest_hit_packet(p).iter().flatten().count())
                            .sum::<usize>()
                    })
                });
            }
        }
    }
    group.finish();
}

/// Whole frames of the quick scene, one thread, static tiles.
fn frames(c: &mut Criterion) {
    let s = scene("quick", 96, 64);
    let options = RenderOptions {
        balancer: BalancerKind::static_tiles(Assignment::Interleaved).into(),
        threads: NonZeroUsize::MIN,
        tile: NonZeroU32::new(16).unwrap(),
        work_map: false,
    };
    c.bench_function("frame/quick", |b| {
        b.iter(|| render(&s, &options).expect("workers start").total_rays())
    });
}

criterion_group!(benches, camera_rays, camera_packets, frames);
criterion_main!(benches);
