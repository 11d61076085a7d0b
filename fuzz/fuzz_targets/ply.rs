//! A PLY mesh from memory (ASCII or binary of either byte order), read as `raylb` reads one from
//! disk: whatever the bytes, an error or a mesh, never a panic, a hang or an allocation sized by
//! the counts a header declares rather than by the bytes given.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use renderer::scene::parse_ply;

/// The most triangles a mesh may have here: large enough for any input libFuzzer makes (it
/// keeps inputs to a few KB), small enough that a fan of polygons cannot take much memory.
const MAX_TRIANGLES: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    let _ = parse_ply(data, Path::new("fuzz.ply"), MAX_TRIANGLES);
});
