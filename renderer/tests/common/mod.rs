//! What several test files need: the shipped scenes ([`paths`] is shared with the command
//! line's tests), the meshes and rays of [`meshes`], the CPU's reference frames, and the
//! Rust twins of the device's float functions. Each test binary uses its own part of this.
#![allow(dead_code)]

pub(crate) mod batches;
pub(crate) mod meshes;
pub(crate) mod paths;

pub(crate) use paths::scene_path;

use renderer::scene::{Scene, SceneOverrides};

/// Shipped scene `name`, at `width × height` where given.
pub(crate) fn load_scene(name: &str, width: Option<u32>, height: Option<u32>) -> Scene {
    let overrides = SceneOverrides {
        width,
        height,
        ..Default::default()
    };
    Scene::load(&scene_path(name), overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// Shipped scene `name` at `width × height` and `samples` per pixel, built with `accel`.
pub(crate) fn load_scene_as(
    name: &str,
    width: u32,
    height: u32,
    accel: renderer::accel::AccelKind,
    samples: u32,
) -> Scene {
    let overrides = SceneOverrides {
        width: Some(width),
        height: Some(height),
        accel: Some(accel),
        samples: Some(samples),
        ..Default::default()
    };
    Scene::load(&scene_path(name), overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// The CPU's frame of `scene` that GPU frames are compared with: `static` on two threads,
/// 16-pixel tiles, with rays counted per pixel.
pub(crate) fn cpu_reference(scene: &Scene) -> renderer::frame::Frame {
    use std::num::{NonZeroU32, NonZeroUsize};
    renderer::render::render(
        scene,
        &renderer::render::RenderOptions {
            balancer: balancers::BalancerKind::static_tiles(balancers::Assignment::Interleaved)
                .into(),
            threads: NonZeroUsize::new(2).unwrap(),
            tile: NonZeroU32::new(16).unwrap(),
            work_map: true,
        },
    )
    .unwrap()
}

/// Requires a GPU frame (on a device or the emulator) to hold the CPU frame's fixed-point sums,
/// rays per pixel and rays by kind, and a SIMT efficiency in (0, 1].
pub(crate) fn assert_cpus_bytes(
    label: &str,
    gpu: &renderer::frame::Frame,
    cpu: &renderer::frame::Frame,
) {
    assert_eq!(gpu.film.sums(), cpu.film.sums(), "{label}: sums");
    assert_eq!(
        gpu.film.ray_counts(),
        cpu.film.ray_counts(),
        "{label}: rays per pixel"
    );
    assert_eq!(gpu.total_rays(), cpu.total_rays(), "{label}: rays by kind");
    let simt = gpu.device.as_ref().expect("a GPU frame").simt_efficiency;
    assert!(simt > 0.0 && simt <= 1.0, "{label}: simt {simt}");
}

/// Rust's twins of the functions the device's float check covers (`kernels::check`): what the
/// CPU renderer computes with.
#[derive(Debug)]
pub(crate) struct RustFloats;

impl kernels::check::FloatFunctions for RustFloats {
    fn round(x: f32) -> f32 {
        x.round()
    }
    fn sqrt(x: f32) -> f32 {
        x.sqrt()
    }
    fn recip(x: f32) -> f32 {
        1.0 / x
    }
    fn to_fixed(x: f32) -> u64 {
        renderer::film::to_fixed(x)
    }
    fn min(a: f32, b: f32) -> f32 {
        a.min(b)
    }
    fn max(a: f32, b: f32) -> f32 {
        a.max(b)
    }
}
