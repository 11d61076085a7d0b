use std::fs;
use std::path::Path;

use ::exr::prelude::f16;
use ::png::{BitDepth, ColorType, Encoder};

use super::*;
use crate::output::StagedFiles;

const MIB: u64 = 1 << 20;

/// A PNG of the given layout, `data` being its packed rows as the format stores them.
fn png_file(
    width: u32,
    height: u32,
    color: ColorType,
    depth: BitDepth,
    palette: Option<(&[u8], &[u8])>,
    data: &[u8],
) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut encoder = Encoder::new(&mut bytes, width, height);
    encoder.set_color(color);
    encoder.set_depth(depth);
    if let Some((palette, trns)) = palette {
        encoder.set_palette(palette.to_vec());
        encoder.set_trns(trns.to_vec());
    }
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(data).unwrap();
    writer.finish().unwrap();
    bytes
}

/// A PNG whose header declares `width × height` 16-bit RGBA but holds no pixel data: a few
/// dozen bytes that would decode to gigabytes.
fn png_header_only(width: u32, height: u32) -> Vec<u8> {
    png_with_idat(width, height, &[])
}

/// A PNG whose header declares `width × height` 16-bit RGBA, with `idat` as its image data.
fn png_with_idat(width: u32, height: u32, idat: &[u8]) -> Vec<u8> {
    let mut bytes = super::png::MAGIC.to_vec();
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

/// A small linear RGB image with values a float format must keep: fractions, zero, values above
/// 1, a negative.
fn gradient(width: u32, height: u32) -> Vec<f32> {
    (0..width * height * 3)
        .map(|i| match i % 7 {
            0 => 0.0,
            1 => 12.75,
            2 => -0.5,
            _ => i as f32 / 97.0,
        })
        .collect()
}

fn floats(image: &Image) -> &[f32] {
    match image.samples() {
        Samples::F32(v) => v,
        other => panic!("expected float samples, got {:?}", other.depth()),
    }
}

fn staged(path: &Path, write: impl FnOnce(&mut StagedFiles, &Path) -> std::io::Result<()>) {
    let mut files = StagedFiles::new();
    write(&mut files, path).unwrap();
    files.commit().unwrap();
}

#[test]
fn pfm_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.pfm");
    let rgb = gradient(5, 3);
    staged(&path, |f, p| f.pfm(p, 5, 3, &rgb));

    let bytes = fs::read(&path).unwrap();
    let header = b"PF\n5 3\n-1.0\n";
    assert_eq!(&bytes[..header.len()], header);
    assert_eq!(bytes.len(), header.len() + 5 * 3 * 3 * 4);
    // The bottom row comes first, little-endian.
    let first = f32::from_le_bytes(bytes[header.len()..header.len() + 4].try_into().unwrap());
    assert_eq!(first, rgb[2 * 5 * 3]);

    let image = read_image(&path, MIB).unwrap();
    assert_eq!((image.width(), image.height()), (5, 3));
    assert_eq!(image.channels(), Channels::Rgb);
    assert_eq!(floats(&image), &rgb[..]);
}

#[test]
fn pfm_grey_big_endian_and_scaled() {
    // `Pf`, positive scale: big-endian; a scale of 2 doubles every sample.
    let mut bytes = b"Pf\n2 2\n2.0\n".to_vec();
    for v in [1.0f32, 2.0, 3.0, 4.0] {
        bytes.extend(v.to_be_bytes());
    }
    let image = decode_image(&bytes, MIB).unwrap();
    assert_eq!(image.channels(), Channels::Grey);
    // Rows bottom first in the file: [1, 2] is the bottom row.
    assert_eq!(floats(&image), &[6.0, 8.0, 2.0, 4.0]);
}

#[test]
fn pfm_header_and_data_checked_strictly() {
    let pixels = |n: usize| vec![0u8; n * 4];
    let with = |header: &str, data: Vec<u8>| {
        let mut bytes = header.as_bytes().to_vec();
        bytes.extend(data);
        bytes
    };
    for (bytes, expected) in [
        (with("PF\n1 1\n-1.0\n", pixels(3)), None),
        (with("PF 1 1 -1 ", pixels(3)), None),
        (with("PF", vec![]), Some("header ends before its width")),
        (
            with("PFX 1 1 -1\n", pixels(3)),
            Some("no white space before its width"),
        ),
        (
            with("PF\n-3 1\n-1\n", pixels(3)),
            Some("width `-3` is not a whole number"),
        ),
        (with("PF\n1 0\n-1\n", vec![]), Some("height is 0")),
        (
            with("PF\n4294967296 1\n-1\n", vec![]),
            Some("width `4294967296` is too large"),
        ),
        (with("PF\n1 1\nnan\n", pixels(3)), Some("scale `nan`")),
        (with("PF\n1 1\n0\n", pixels(3)), Some("scale `0`")),
        (
            with("PF\n1 1\n-1", vec![]),
            Some("header ends after its scale"),
        ),
        (
            with(&format!("PF\n{} 1\n-1\n", "9".repeat(70)), vec![]),
            Some("longer than 64"),
        ),
        (with("PF\n1 1\n-1\n", pixels(2)), Some("truncated")),
        (
            with("PF\n1 1\n-1\n", pixels(4)),
            Some("4 bytes of trailing data"),
        ),
        (
            with("PF\n1 1\n-1\r\n", pixels(3)),
            Some("1 byte of trailing data"),
        ),
        (with("PF\n\x001 1\n-1\n", pixels(3)), Some("byte 0x00")),
        // Sizes whose product overflows 64 bits are refused in their own figures, not wrapped
        // or saturated.
        (
            with("PF\n4294967295 4294967295\n-1\n", vec![]),
            Some(
                "it declares 4294967295×4294967295 pixels of 32-bit float RGB: 221360928781435404300 bytes of samples, more than can be addressed",
            ),
        ),
        // A header promising 100 GB on a few bytes is refused as truncated before anything is
        // allocated, under any limit.
        (
            with("PF\n100000 100000\n-1\n", vec![]),
            Some("truncated): 100000×100000 RGB pixels need 120000000000 bytes, 0 follow"),
        ),
    ] {
        let result = decode_image(&bytes, MIB);
        match expected {
            None => assert!(
                result.is_ok(),
                "{:?}: {result:?}",
                String::from_utf8_lossy(&bytes)
            ),
            Some(part) => {
                let error = result.expect_err(part);
                assert!(error.contains(part), "expected `{part}` in: {error}");
            }
        }
    }
    let promise = b"PF\n100000 100000\n-1\n";
    let error = decode_image(promise, u64::MAX).unwrap_err();
    assert!(error.contains("truncated"), "{error}");
}

#[test]
fn exr_round_trip_in_float_and_half() {
    let dir = tempfile::tempdir().unwrap();
    let rgb = gradient(7, 5);
    for precision in [ExrPrecision::Float, ExrPrecision::Half] {
        let path = dir.path().join(format!("x-{precision:?}.exr"));
        staged(&path, |f, p| f.exr(p, 7, 5, &rgb, precision));
        let image = read_image(&path, MIB).unwrap();
        assert_eq!((image.width(), image.height()), (7, 5));
        assert_eq!(image.channels(), Channels::Rgb);
        let expected: Vec<f32> = match precision {
            ExrPrecision::Float => rgb.clone(),
            ExrPrecision::Half => rgb.iter().map(|&v| f16::from_f32(v).to_f32()).collect(),
        };
        assert_eq!(floats(&image), &expected[..], "{precision:?}");
    }
}

#[test]
fn exr_bytes_are_the_same_every_time() {
    let dir = tempfile::tempdir().unwrap();
    // Tall enough for many 16-line chunks, written from two threads at once.
    let (width, height) = (37, 211);
    let rgb = gradient(width, height);
    for precision in [ExrPrecision::Float, ExrPrecision::Half] {
        let paths: Vec<_> = (0..3)
            .map(|i| dir.path().join(format!("{precision:?}-{i}.exr")))
            .collect();
        std::thread::scope(|s| {
            for path in &paths {
                s.spawn(|| staged(path, |f, p| f.exr(p, width, height, &rgb, precision)));
            }
        });
        let first = fs::read(&paths[0]).unwrap();
        for path in &paths[1..] {
            assert!(
                first == fs::read(path).unwrap(),
                "{precision:?}: {path:?} differs"
            );
        }
        // Nothing in the file names the moment or the machine it was written on.
        for word in [&b"capDate"[..], b"utcOffset", b"owner", b"comments"] {
            assert!(!first.windows(word.len()).any(|w| w == word));
        }
    }
}

#[test]
fn exr_with_alpha_reads_as_rgba_and_other_channels_are_refused() {
    use ::exr::prelude::{AnyChannel, AnyChannels, FlatSamples, SmallVec, WritableImage};
    let write = |names: &[&str]| {
        let channels: SmallVec<[AnyChannel<FlatSamples>; 4]> = names
            .iter()
            .enumerate()
            .map(|(i, n)| AnyChannel::new(*n, FlatSamples::F32(vec![i as f32 + 0.5; 6])))
            .collect();
        let image = ::exr::prelude::Image::from_channels((3, 2), AnyChannels::sort(channels));
        let mut bytes = std::io::Cursor::new(Vec::new());
        image.write().to_buffered(&mut bytes).unwrap();
        bytes.into_inner()
    };
    let image = decode_image(&write(&["R", "G", "B", "A"]), MIB).unwrap();
    assert_eq!(image.channels(), Channels::Rgba);
    assert_eq!(&floats(&image)[..4], &[0.5, 1.5, 2.5, 3.5]);

    let error = decode_image(&write(&["Y"]), MIB).unwrap_err();
    assert!(
        error.contains("channels Y; only R, G, B and optionally A"),
        "{error}"
    );
    let error = decode_image(&write(&["R", "G", "B", "Z"]), MIB).unwrap_err();
    assert!(error.contains("B, G, R, Z"), "{error}");
}

#[test]
fn png_16_bit_keeps_every_bit() {
    // Two samples that are the same in their top 8 bits.
    let samples: [u16; 6] = [0x1234, 0x1235, 0xffff, 0, 1, 0x8000];
    let data: Vec<u8> = samples.iter().flat_map(|s| s.to_be_bytes()).collect();
    let bytes = png_file(2, 1, ColorType::Rgb, BitDepth::Sixteen, None, &data);
    let image = decode_image(&bytes, MIB).unwrap();
    assert_eq!(image.channels(), Channels::Rgb);
    assert_eq!(image.samples(), &Samples::U16(samples.to_vec()));
}

#[test]
fn one_bit_and_palette_pngs_become_8_bit_no_wider() {
    // 1-bit grey, 10 pixels: 1011001110 → two bytes.
    let bytes = png_file(
        10,
        1,
        ColorType::Grayscale,
        BitDepth::One,
        None,
        &[0b1011_0011, 0b1000_0000],
    );
    let image = decode_image(&bytes, MIB).unwrap();
    assert_eq!(image.channels(), Channels::Grey);
    let expected: Vec<u8> = [1, 0, 1, 1, 0, 0, 1, 1, 1, 0]
        .iter()
        .map(|b| b * 255)
        .collect();
    assert_eq!(image.samples(), &Samples::U8(expected));
    assert_eq!(image.bytes(), 10);

    // A 2-bit palette of three colours, the second half transparent: RGBA, 8-bit.
    let palette = [255, 0, 0, 0, 255, 0, 0, 0, 255];
    let bytes = png_file(
        3,
        1,
        ColorType::Indexed,
        BitDepth::Two,
        Some((&palette, &[255, 128])),
        &[0b0001_1000],
    );
    let image = decode_image(&bytes, MIB).unwrap();
    assert_eq!(image.channels(), Channels::Rgba);
    assert_eq!(
        image.samples(),
        &Samples::U8(vec![255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 255])
    );
}

#[test]
fn a_palette_of_part_of_an_entry_is_an_error_not_a_panic() {
    // A fuzzer's find: PLTE of 4 bytes (one RGB entry and a third of one); the decoder indexed
    // past its end when expanding the palette.
    let bytes = png_file(
        3,
        1,
        ColorType::Indexed,
        BitDepth::Two,
        Some((&[255, 0, 0, 7], &[])),
        &[0b0000_0000],
    );
    assert_eq!(
        decode_image(&bytes, MIB).unwrap_err(),
        "not a readable PNG image: its palette (PLTE) holds 4 bytes, not a whole number of RGB entries"
    );
}

#[test]
fn huge_declared_png_is_refused_from_its_header() {
    // Without its pixels: corrupt, whatever the limit.
    let bytes = png_header_only(23000, 23000);
    assert!(bytes.len() < 100);
    let corrupt = "not a readable PNG image: its 57 bytes cannot hold the 23000×23000 pixels its header declares (they compress to at least 4100776 bytes); it is truncated or corrupt";
    assert_eq!(decode_image(&bytes, 1 << 30).unwrap_err(), corrupt);
    assert_eq!(decode_image(&bytes, u64::MAX).unwrap_err(), corrupt);
    // 23000 × 23000 × 8 bytes over deflate's 1032:1.
    let bytes = png_with_idat(23000, 23000, &vec![0; 4_100_776]);
    let error = decode_image(&bytes, 1 << 30).unwrap_err();
    assert_eq!(
        error,
        "decoding needs 3.9 GiB (23000×23000, 16-bit RGBA), more than the 1.0 GiB allowed"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.png");
    fs::write(&path, &bytes).unwrap();
    let info = read_info(&path, u64::MAX).unwrap();
    assert_eq!(info.decoded_bytes(), 23000 * 23000 * 8);
    assert_eq!(read_info(&path, 1 << 30).unwrap_err(), error);
    assert_eq!(read_image(&path, 1 << 30).unwrap_err(), error);
}

#[test]
fn a_png_beyond_the_address_space_is_described_in_its_own_figures() {
    // (2^31 − 1)² pixels of 8 bytes: 2^65 bytes, which no figure in bytes of 64 bits holds.
    let side = i32::MAX as u32;
    let error = decode_image(&png_header_only(side, side), u64::MAX).unwrap_err();
    assert_eq!(
        error,
        "not a readable PNG image: it declares 2147483647×2147483647 pixels of 16-bit RGBA: 36893488113059364872 bytes of samples, more than can be addressed"
    );
}

/// `bytes` of an OpenEXR file with its data window set to `window` (x min, y min, x max,
/// y max), as the file stores it.
fn with_data_window(mut bytes: Vec<u8>, window: [i32; 4]) -> Vec<u8> {
    let key = b"dataWindow\0box2i\0\x10\0\0\0";
    let at = bytes
        .windows(key.len())
        .position(|w| w == key)
        .expect("a data window")
        + key.len();
    for (k, v) in window.iter().enumerate() {
        bytes[at + 4 * k..at + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    bytes
}

#[test]
fn exr_headers_that_cannot_be_true_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.exr");
    staged(&path, |f, p| {
        f.exr(p, 4, 4, &gradient(4, 4), ExrPrecision::Float)
    });
    let bytes = fs::read(&path).unwrap();
    assert!(decode_image(&with_data_window(bytes.clone(), [0, 0, 3, 3]), MIB).is_ok());
    // The exr crate swaps a maximum below its minimum: this would read as 2000001×4 pixels.
    let inverted = with_data_window(bytes.clone(), [1_000_000, 0, -1_000_000, 3]);
    assert_eq!(
        decode_image(&inverted, u64::MAX).unwrap_err(),
        "not a readable OpenEXR image: its data window runs from (1000000, 0) to (-1000000, 3), a maximum below its minimum"
    );
    // A million lines in 16-line chunks: an offset table of 62500 entries, in a file of a few
    // hundred bytes.
    let tall = with_data_window(bytes.clone(), [0, 0, 3, 999_999]);
    let error = decode_image(&tall, u64::MAX).unwrap_err();
    assert!(
        error.starts_with(&format!(
            "not a readable OpenEXR image: its {} bytes cannot hold the 62500 chunks of the 4×1000000 pixels its header declares (at least 1000000 bytes)",
            tall.len()
        )),
        "{error}"
    );
}

#[test]
fn only_regular_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let error = read_image(dir.path(), MIB).unwrap_err();
    assert_eq!(error, "not a regular file (a directory)");
    for device in ["/dev/zero", "/dev/null"] {
        if Path::new(device).exists() {
            assert_eq!(
                read_image(Path::new(device), MIB).unwrap_err(),
                "not a regular file (a character device)"
            );
        }
    }
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    // Would block forever if it were opened.
    assert_eq!(
        read_image(&fifo, MIB).unwrap_err(),
        "not a regular file (a FIFO)"
    );
    assert_eq!(
        read_image(&dir.path().join("missing.png"), MIB).unwrap_err(),
        "cannot read: no such file or directory"
    );

    let big = dir.path().join("big.pfm");
    staged(&big, |f, p| f.pfm(p, 4, 4, &gradient(4, 4)));
    let error = read_image(&big, 100).unwrap_err();
    assert_eq!(
        error,
        "too large: 204 bytes, where files of this kind may have at most 100"
    );
}

#[test]
fn unknown_and_empty_content() {
    assert_eq!(
        decode_image(b"GIF89a\x01\x00", MIB).unwrap_err(),
        "not a PNG, OpenEXR or PFM image (it starts with 47 49 46 38 39 61 01 00)"
    );
    assert_eq!(
        decode_image(b"", MIB).unwrap_err(),
        "empty file; expected a PNG, OpenEXR or PFM image"
    );
}

#[test]
fn format_chosen_by_extension() {
    for (name, format) in [
        ("a.png", ImageFormat::Png),
        ("dir.d/b.PNG", ImageFormat::Png),
        ("c.exr", ImageFormat::Exr),
        ("d.Pfm", ImageFormat::Pfm),
    ] {
        assert_eq!(ImageFormat::of(Path::new(name)), Ok(format), "{name}");
    }
    let error = ImageFormat::of(Path::new("out.tif")).unwrap_err();
    assert!(
        error.contains("`.tif`") && error.contains(".png, .exr or .pfm"),
        "{error}"
    );
    let error = ImageFormat::of(Path::new("dir.d/out")).unwrap_err();
    assert!(
        error.contains("no file extension") && error.contains(".png, .exr or .pfm"),
        "{error}"
    );
}

#[test]
fn writers_refuse_buffers_of_the_wrong_length() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = StagedFiles::new();
    let short = vec![0.0; 5];
    let error = files
        .pfm(&dir.path().join("a.pfm"), 2, 1, &short)
        .unwrap_err();
    assert!(
        error.to_string().contains("need 6 floats, got 5"),
        "{error}"
    );
    let error = files
        .exr(&dir.path().join("a.exr"), 2, 1, &short, ExrPrecision::Half)
        .unwrap_err();
    assert!(
        error.to_string().contains("need 6 floats, got 5"),
        "{error}"
    );
    let error = files
        .exr(&dir.path().join("b.exr"), 0, 0, &[], ExrPrecision::Float)
        .unwrap_err();
    assert!(error.to_string().contains("cannot be 0×0"), "{error}");
    drop(files);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing left behind"
    );
}

/// A seeded stream of pseudo-random numbers (SplitMix64), so that a failure can be replayed.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Valid files of every format, damaged in thousands of seeded ways: each must decode or be
/// refused, never panic, and never take more than the limit.
#[test]
fn damaged_files_are_refused_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let rgb = gradient(9, 6);
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for precision in [ExrPrecision::Float, ExrPrecision::Half] {
        let path = dir.path().join(format!("{precision:?}.exr"));
        staged(&path, |f, p| f.exr(p, 9, 6, &rgb, precision));
        seeds.push(fs::read(&path).unwrap());
    }
    let path = dir.path().join("x.pfm");
    staged(&path, |f, p| f.pfm(p, 9, 6, &rgb));
    seeds.push(fs::read(&path).unwrap());
    let data16: Vec<u8> = (0..9 * 6 * 4 * 2).map(|i| (i * 7) as u8).collect();
    seeds.push(png_file(
        9,
        6,
        ColorType::Rgba,
        BitDepth::Sixteen,
        None,
        &data16,
    ));
    seeds.push(png_file(
        9,
        6,
        ColorType::Grayscale,
        BitDepth::Four,
        None,
        &[0x5a; 5 * 6],
    ));
    seeds.push(png_header_only(300, 200));

    const LIMIT: u64 = 4 * MIB;
    let mut random = SplitMix(0x5EED);
    let mut outcomes = [0usize; 2];
    for seed in &seeds {
        for _ in 0..1500 {
            let mut bytes = seed.clone();
            for _ in 0..1 + random.below(4) {
                let at = random.below(bytes.len().max(1));
                match random.below(4) {
                    0 => bytes.truncate(at),
                    1 => bytes.insert(at.min(bytes.len()), random.next() as u8),
                    _ if !bytes.is_empty() => bytes[at] = random.next() as u8,
                    _ => {}
                }
            }
            let result = decode_image(&bytes, LIMIT);
            if let Ok(image) = &result {
                assert!(image.bytes() <= LIMIT);
            }
            outcomes[usize::from(result.is_ok())] += 1;
        }
    }
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}

#[test]
fn a_png_chunk_with_a_bad_checksum_is_named_by_its_type() {
    let mut bytes = png_with_idat(1, 1, &[]);
    // The IHDR chunk's checksum: after the magic (8), the length and type (8) and 13 bytes.
    bytes[8 + 8 + 13] ^= 0xff;
    let error = decode_image(&bytes, MIB).unwrap_err();
    assert!(
        error.contains("CRC error") && error.contains("IHDR chunk"),
        "{error}"
    );
    assert!(!error.contains("ChunkType"), "{error}");
}
