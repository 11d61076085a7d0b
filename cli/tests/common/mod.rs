//! What the command line's test files need: running `raylb`, checking that a run succeeded,
//! the shipped scenes, and PNG files built byte by byte. Each test binary uses its own part.
#![allow(dead_code)]

#[path = "../../../renderer/tests/common/paths.rs"]
mod paths;

use std::path::Path;
use std::process::{Command, Output};

#[allow(unused_imports)] // not every test binary looks for a scene
pub(crate) use paths::scene_path;

/// Runs the `raylb` binary with `args` in `dir`.
pub(crate) fn raylb(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("raylb runs")
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
