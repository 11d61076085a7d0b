//! A scene file's text, built as `raylb render` builds it, without reading any file: whatever
//! the text, `Scene::from_toml` must return a scene or an error, never panic, hang or run out of
//! memory.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use renderer::scene::{Scene, SceneOverrides};

/// Keeps what a scene may generate small, so that each input runs in milliseconds: 64 MiB of
/// geometry is about 280,000 triangles in the wide BVH (240 bytes each, see
/// `AccelKind::bytes_per_triangle`), and a 16×16 image keeps the camera's per-pixel set-up
/// negligible. The limits themselves are what is under test: a scene asking for more must be
/// refused with an error.
const OVERRIDES: SceneOverrides = SceneOverrides {
    width: Some(16),
    height: Some(16),
    leaf_size: None,
    bvh_max_depth: None,
    bvh_width: None,
    bvh_split: None,
    samples: None,
    accel: None,
    memory: Some(64 << 20),
    memory_is_address_space: false,
};

fuzz_target!(|data: &[u8]| {
    // A scene file is UTF-8 text; the loader refuses other bytes before parsing.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Scene::from_toml(Path::new("fuzz.toml"), text, OVERRIDES);
});
