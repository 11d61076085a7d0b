//! What several test files need: the shipped scenes, and checking a `raylb` run succeeded.
//! Each test binary uses its own part of this.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Output;

use renderer::scene::{Scene, SceneOverrides};

/// The path of shipped scene `name` (`scenes/NAME.toml`).
pub(crate) fn scene_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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

/// The stdout of a run that must have succeeded (its stderr in the failure message if not).
pub(crate) fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
