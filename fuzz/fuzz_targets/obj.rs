//! An OBJ mesh from memory, read as `raylb` reads one from disk (its MTL files are not
//! followed): whatever the bytes, an error or a mesh, never a panic, a hang or an allocation out
//! of proportion to the input.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use renderer::scene::parse_obj;

/// The most triangles a mesh may have here: large enough for any input libFuzzer makes (it
/// keeps inputs to a few KB), small enough that a fan of polygons cannot take much memory.
const MAX_TRIANGLES: usize = 100_000;

fuzz_target!(|data: &[u8]| {
    let _ = parse_obj(data, Path::new("fuzz.obj"), MAX_TRIANGLES);
});
