//! GPU balancers against the CPU, byte for byte, and what only the device can answer: its
//! own rounding, min, max, square root, division and fixed-point conversion on every 32-bit
//! pattern, and its traversals of both structures, against the host's. These need an NVIDIA
//! GPU, so they are `#[ignore]`d; `scripts/gpu-check.sh` runs them on a machine that has one.
//! The one test that runs everywhere checks that a machine without a GPU gets an error, not a
//! panic.

use std::fmt::Write as _;
use std::num::NonZeroU32;

use kernels::check::{
    self, CHUNK, CHUNK_BITS, CHUNKS, DeviceChecks, Digests, FUNCTIONS, ProbeRay, RESULTS,
    WideArrays,
};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rayon::prelude::*;
use renderer::accel::AccelKind;
use renderer::bvh::wide::Width;
use renderer::bvh::{BvhSettings, OctreeBvh, WideBvh};
use renderer::geometry::{Ray, Triangle};
use renderer::gpu::{Gpu, GpuBalancer, GpuError, GpuOptions, render_gpu};
use renderer::scene::Scene;

mod common;
use common::meshes::{self, scene_rays};
use common::{RustFloats, load_scene};

/// Shipped scene `name` at `width × height`, built with the octree, the GPU's default
/// structure (the CPU's is the wide BVH).
fn scene(name: &str, width: u32, height: u32) -> Scene {
    common::load_scene_as(name, width, height, AccelKind::Octree, 1)
}

#[test]
fn without_a_gpu_opening_says_what_is_missing() {
    match Gpu::open() {
        Ok(gpu) => eprintln!("a GPU is present: {}", gpu.info().name),
        Err(e @ (GpuError::NoDriver | GpuError::NoDevice | GpuError::NoNvrtc)) => {
            let message = e.to_string();
            assert!(message.starts_with("no "), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
        Err(e) => panic!("unexpected: {e}"),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; scripts/gpu-check.sh runs it"]
fn every_gpu_balancer_writes_the_cpu_bytes() {
    let gpu = Gpu::open().expect("a GPU");
    let shapes = [
        (AccelKind::Octree, 1),
        (AccelKind::Wide, 1),
        (AccelKind::Octree, 4),
        (AccelKind::Wide, 4),
    ];
    for ((name, w, h), (accel, samples)) in [
        ("quick", 96, 64),
        ("cornell", 128, 96),
        ("treasure", 160, 160),
        ("treasure-calm", 128, 128),
    ]
    .into_iter()
    .flat_map(|scene| shapes.map(|shape| (scene, shape)))
    {
        let scene = common::load_scene_as(name, w, h, accel, samples);
        let cpu = common::cpu_reference(&scene);
        let want = cpu.film.resolve();
        for balancer in GpuBalancer::EVERY {
            // Every edge kind at one sample (one pixel, a power of two, an odd edge, a tile cut
            // into pieces); two at four samples, where the camera rays alone differ.
            let edges: &[u32] = if samples == 1 {
                &[1, 8, 33, 512]
            } else {
                &[8, 64]
            };
            for &tile in edges {
                // Few warps as well as all of them: stealing and termination with many
                // idle warps, and with every warp loaded.
                for max_warps in [Some(3), None] {
                    let options = GpuOptions {
                        balancer,
                        tile: NonZeroU32::new(tile).unwrap(),
                        work_map: true,
                        max_warps,
                    };
                    let frame = render_gpu(&gpu, &scene, &options).unwrap();
                    let label = format!(
                        "{name} {} spp {samples} {} tile {tile} warps {max_warps:?}",
                        accel.name(),
                        balancer.name()
                    );
                    common::assert_cpus_bytes(&label, &frame, &cpu);
                    assert_eq!(frame.film.resolve(), want, "{label}: image");
                }
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU; scripts/gpu-check.sh runs it"]
fn stealing_warps_steal_and_account_for_every_tile() {
    let gpu = Gpu::open().expect("a GPU");
    let scene = scene("treasure", 256, 256);
    let options = GpuOptions {
        balancer: GpuBalancer::STEALING,
        tile: NonZeroU32::new(8).unwrap(),
        work_map: false,
        max_warps: None,
    };
    let frame = render_gpu(&gpu, &scene, &options).unwrap();
    let t = &frame.telemetry;
    assert!(t.total_steals() > 0, "no warp stole on an irregular scene");
    let tiles: u64 = t.workers.iter().map(|w| w.initial_tasks).sum();
    assert_eq!(
        tiles,
        (256 / 8) * (256 / 8),
        "every tile started exactly once"
    );
    let camera: u64 = frame.rays.iter().map(|r| r.camera).sum();
    assert_eq!(camera, 256 * 256);
}

#[test]
#[ignore = "needs an NVIDIA GPU; scripts/gpu-check.sh runs it"]
fn batches_of_shuffled_uneven_tile_lists_add_up_to_one_launch() {
    let gpu = Gpu::open().expect("a GPU");
    common::batches::batches_add_up_to_one_launch(&gpu, &scene("treasure", 256, 256));
}

#[test]
#[ignore = "needs an NVIDIA GPU; scripts/gpu-check.sh runs it"]
fn the_devices_float_functions_match_rusts_on_every_32_bit_pattern() {
    let gpu = Gpu::open().expect("a GPU");
    let checks = DeviceChecks::new(&gpu).expect("the check kernels");
    let mut device: Vec<Digests> = Vec::with_capacity(CHUNKS as usize);
    for first in (0..CHUNKS).step_by(256) {
        device.extend(checks.float_digests(first, 256).expect("the float check"));
    }
    let host: Vec<Digests> = (0..CHUNKS)
        .into_par_iter()
        .map(check::host_digests::<RustFloats>)
        .collect();
    let differing: Vec<(u32, usize)> = (0..CHUNKS)
        .flat_map(|c| (0..FUNCTIONS.len()).map(move |f| (c, f)))
        .filter(|&(c, f)| device[c as usize][f] != host[c as usize][f])
        .collect();
    // For the first few chunks that differ, the patterns whose results differ.
    let mut report = String::new();
    for &(chunk, f) in differing.iter().take(4) {
        let first = chunk << CHUNK_BITS;
        let results = checks.float_results(first, CHUNK).expect("the results");
        let mut shown = 0;
        for i in 0..CHUNK {
            let x = first | i;
            for k in (0..RESULTS).filter(|&k| check::function_of(k) == f) {
                let got = results[(i * RESULTS + k) as usize];
                let want = check::result::<RustFloats>(x, k);
                if got != want && shown < 8 {
                    shown += 1;
                    writeln!(
                        report,
                        "  x = {:?} ({x:#010x}): {} is {got:#x} on the device, {want:#x} in Rust",
                        f32::from_bits(x),
                        check::describe(x, k)
                    )
                    .unwrap();
                }
            }
        }
    }
    let functions: Vec<&str> = FUNCTIONS.to_vec();
    eprintln!(
        "{} patterns × {RESULTS} results ({}): {} of {} chunk digests differ",
        u64::from(CHUNKS) * u64::from(CHUNK),
        functions.join(", "),
        differing.len(),
        CHUNKS as usize * FUNCTIONS.len()
    );
    assert!(
        differing.is_empty(),
        "the device differs from Rust in {} chunk digests, first (chunk, function) {:?}:\n{report}",
        differing.len(),
        &differing[..differing.len().min(8)]
    );
}

/// The device's traversals of the octree and of the wide BVH's GPU form (at both widths)
/// against the Rust traversals of the same trees: the same closest hit (distance bits and input
/// index) and the same occlusion answer for every ray.
fn device_traversals_match(
    checks: &DeviceChecks,
    name: &str,
    triangles: &[Triangle],
    settings: BvhSettings,
    rays: &[Ray],
) {
    let octree = OctreeBvh::build(triangles, settings);
    let traversal_scene = meshes::TraversalScene::new(&octree);
    let scene = traversal_scene.data();
    let probe: Vec<ProbeRay> = rays
        .iter()
        .map(|r| {
            let (o, d) = (r.origin, r.dir);
            [o.x, o.y, o.z, d.x, d.y, d.z, r.t_min, r.t_max]
        })
        .collect();
    let mut hits = 0;
    for width in [Width::Eight, Width::Four] {
        let cpu = WideBvh::build_with_width(triangles, settings, width);
        let form = cpu.to_gpu();
        let wide = WideArrays {
            nodes: form.nodes(),
            triangles: form.triangles(),
            ids: form.original_indices(),
            padding: form.padding(),
        };
        let answers = checks
            .traversals(&scene, &wide, &probe)
            .expect("the traversal check");
        hits = 0;
        for (n, (ray, a)) in rays.iter().zip(&answers).enumerate() {
            let want = cpu.closest_hit(ray).map(|h| (h.t.to_bits(), h.original));
            hits += usize::from(want.is_some());
            let found = |(index, t): (u32, u32), ids: &[u32]| {
                (index != u32::MAX).then(|| (t, ids[index as usize]))
            };
            assert_eq!(
                found(a.wide, form.original_indices()),
                want,
                "{name}, wide {width:?}: ray {n} {ray:?}"
            );
            assert_eq!(
                a.wide_occluded,
                cpu.occluded(ray),
                "{name}, wide {width:?}: occlusion of ray {n} {ray:?}"
            );
            assert_eq!(
                found(a.octree, octree.original_indices()),
                want,
                "{name}, octree: ray {n} {ray:?}"
            );
            assert_eq!(
                a.octree_occluded,
                octree.occluded(ray),
                "{name}, octree: occlusion of ray {n} {ray:?}"
            );
        }
    }
    eprintln!("{name}: {hits} of {} rays hit", rays.len());
    // A check that never hits, or never misses, proves little.
    assert!(hits > rays.len() / 10, "{name}: only {hits} hits");
    assert!(hits < rays.len(), "{name}: no misses");
}

#[test]
#[ignore = "needs an NVIDIA GPU; scripts/gpu-check.sh runs it"]
fn the_devices_traversals_of_both_structures_match_the_hosts_on_random_rays() {
    let gpu = Gpu::open().expect("a GPU");
    let checks = DeviceChecks::new(&gpu).expect("the check kernels");
    let mut rng = StdRng::seed_from_u64(0x6b75_dace);
    for name in ["quick", "cornell", "treasure", "treasure-calm"] {
        let scene = load_scene(name, Some(128), Some(96));
        let rays = scene_rays(&scene, &mut rng, 50_000);
        device_traversals_match(
            &checks,
            name,
            &scene.accel.input_triangles(),
            scene.bvh_settings,
            &rays,
        );
    }
    let cases = [
        ("soup", meshes::soup(&mut rng, 500)),
        ("flat grid", meshes::flat_grid(16)),
        ("boxes", meshes::boxes()),
        ("coincident", meshes::coincident(&mut rng)),
        ("piles", meshes::piles(&mut rng)),
    ];
    for (name, triangles) in cases {
        for leaf_size in [1, 4, 31] {
            let settings = BvhSettings {
                leaf_size,
                ..BvhSettings::default()
            };
            let rays = meshes::rays(&mut rng, &triangles, 20_000);
            device_traversals_match(
                &checks,
                &format!("{name}, leaf size {leaf_size}"),
                &triangles,
                settings,
                &rays,
            );
        }
    }
}
