//! GPU balancers against the CPU, byte for byte. These need an NVIDIA GPU, so they are
//! `#[ignore]`d; `scripts/gpu-check.sh` runs them on a machine that has one. The one test that
//! runs everywhere checks that a machine without a GPU gets an error, not a panic.

use std::num::{NonZeroU32, NonZeroUsize};

use balancers::{Assignment, BalancerKind};
use renderer::gpu::{Gpu, GpuBalancer, GpuError, GpuOptions, render_gpu};
use renderer::render::{RenderOptions, render};
use renderer::scene::Scene;

mod common;
use common::load_scene;

fn scene(name: &str, width: u32, height: u32) -> Scene {
    load_scene(name, Some(width), Some(height))
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
    for (name, w, h) in [
        ("quick", 96, 64),
        ("cornell", 128, 96),
        ("treasure", 160, 160),
        ("treasure-calm", 128, 128),
    ] {
        let scene = scene(name, w, h);
        let cpu = render(
            &scene,
            &RenderOptions {
                balancer: BalancerKind::static_tiles(Assignment::Interleaved),
                threads: NonZeroUsize::new(2).unwrap(),
                tile: NonZeroU32::new(16).unwrap(),
                work_map: true,
            },
        )
        .unwrap();
        let want = cpu.film.resolve();
        let want_rays = cpu.film.ray_counts();
        for balancer in GpuBalancer::EVERY {
            for tile in [1, 8, 33, 64, 512] {
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
                    let label =
                        format!("{name} {} tile {tile} warps {max_warps:?}", balancer.name());
                    assert_eq!(frame.film.sums(), cpu.film.sums(), "{label}: sums");
                    assert_eq!(frame.film.resolve(), want, "{label}: image");
                    assert_eq!(
                        frame.film.ray_counts(),
                        want_rays,
                        "{label}: rays per pixel"
                    );
                    assert_eq!(
                        frame.total_rays(),
                        cpu.total_rays(),
                        "{label}: rays by kind"
                    );
                    let simt = frame.device.as_ref().unwrap().simt_efficiency;
                    assert!(simt > 0.0 && simt <= 1.0, "{label}: simt {simt}");
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
        balancer: GpuBalancer::Stealing { half: true },
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
