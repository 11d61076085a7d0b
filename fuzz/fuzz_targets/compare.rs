//! Two images, as `raylb compare` reads and compares them: each is decoded from its bytes (PNG,
//! OpenEXR or PFM, told apart by content) and, when both decode, compared, and when their sizes
//! match, drawn as a difference image. Nothing may panic, hang or allocate beyond the bound.
//!
//! The input is `[n: u16, little-endian][first image: n bytes][second image: the rest]`, where
//! `n` is taken modulo the bytes left, so that every input splits somewhere and the seeds (see
//! `corpus/compare/`) split exactly where their two files meet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use renderer::compare::{compare, difference_image};
use renderer::image_io::decode_image;

/// The most the decoded samples of one image may take: 64 MiB, so that a header that declares
/// a huge image must be refused before its pixels are allocated, while the images libFuzzer
/// makes (a few KB, at most a few million pixels once decompressed) are still decoded in full.
const MAX_BYTES: u64 = 64 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let split = usize::from(u16::from_le_bytes(*head)) % (rest.len() + 1);
    let (first, second) = rest.split_at(split);
    let (Ok(a), Ok(b)) = (
        decode_image(first, MAX_BYTES),
        decode_image(second, MAX_BYTES),
    ) else {
        return;
    };
    let _ = compare(&a, &b);
    let _ = difference_image(&a, &b);
});
