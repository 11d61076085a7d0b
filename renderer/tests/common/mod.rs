//! What several test files need: the shipped scenes, the meshes and rays of [`meshes`], and
//! running `raylb` and checking that a run succeeded.
//! Each test binary uses its own part of this.
#![allow(dead_code)]

pub(crate) mod batches;
pub(crate) mod meshes;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use renderer::scene::{Scene, SceneOverrides};

/// Runs the `raylb` binary with `args` in `dir`.
pub(crate) fn raylb(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("raylb runs")
}

/// The path of shipped scene `name` (`scenes/NAME.toml`): from the renderer's folder that
/// `cargo test` names at run time, or else the one it was built in (a test binary carried to
/// another machine, as `scripts/gpu-check.sh` runs it, is given the folder there).
pub(crate) fn scene_path(name: &str) -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../scenes")
        .join(format!("{name}.toml"))
}

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
pub(crate) fn cpu_reference(scene: &Scene) -> renderer::render::Frame {
    use std::num::{NonZeroU32, NonZeroUsize};
    renderer::render::render(
        scene,
        &renderer::render::RenderOptions {
            balancer: balancers::BalancerKind::static_tiles(balancers::Assignment::Interleaved),
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
    gpu: &renderer::render::Frame,
    cpu: &renderer::render::Frame,
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

/// The stdout of a run that must have succeeded (its stderr in the failure message if not).
pub(crate) fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A PNG whose header declares `width × height` 16-bit RGBA but holds no pixel data: a few
/// dozen bytes that would decode to gigabytes.
pub(crate) fn png_header_only(width: u32, height: u32) -> Vec<u8> {
    png_with_idat(width, height, &[])
}

/// A PNG whose header declares `width × height` 16-bit RGBA, with `idat` as its image data:
/// with as many bytes as the pixels could compress to (their size over deflate's 1032:1), a
/// file that passes for the image until it is decoded.
pub(crate) fn png_with_idat(width: u32, height: u32, idat: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    let mut ihdr = Vec::new();
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([16, 6, 0, 0, 0]); // 16-bit, RGBA, deflate, adaptive filters, no interlace
    for (kind, data) in [(&b"IHDR"[..], &ihdr[..]), (b"IDAT", idat), (b"IEND", &[])] {
        bytes.extend((data.len() as u32).to_be_bytes());
        let start = bytes.len();
        bytes.extend(kind);
        bytes.extend(data);
        let crc = crc32(&bytes[start..]);
        bytes.extend(crc.to_be_bytes());
    }
    bytes
}

/// The CRC-32 of PNG chunks (ISO 3309, reflected, polynomial 0xEDB88320).
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A 16-bit RGB PNG of `width × height` pixels, `samples` row-major.
pub(crate) fn png16(path: &std::path::Path, width: u32, height: u32, samples: &[u16]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).expect("create PNG"));
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Sixteen);
    let data: Vec<u8> = samples.iter().flat_map(|s| s.to_be_bytes()).collect();
    let mut writer = encoder.write_header().expect("PNG header");
    writer.write_image_data(&data).expect("PNG data");
    writer.finish().expect("PNG end");
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
