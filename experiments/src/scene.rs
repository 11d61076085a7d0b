//! The scenes a benchmark renders: read with the settings raylb's command line gives, each
//! frame checked against the memory at hand before it is rendered.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};

use anyhow::Result;
use renderer::render::CpuBalancer;
use renderer::render::FrameExtras;
use renderer::scene::Scene;

/// How a benchmark reads its scenes and checks its frames: raylb's command line implements it
/// with its scene flags (`--accel`, `--width`, `--max-memory`, …).
pub trait SceneSettings: std::fmt::Debug {
    /// Refuses settings that do not apply to the acceleration structure they build.
    fn check_options(&self) -> Result<()>;

    /// Loads the scene file `file`; its warnings go to standard error unless `quiet`.
    fn load_file(&self, file: &Path, quiet: bool) -> Result<Scene>;

    /// Refuses, before any is rendered, a frame of `scene` for any combination of `balancers`,
    /// `threads` and `tiles` that would take more memory than is left once the scene is built.
    fn check_frames(
        &self,
        scene: &Scene,
        balancers: &[CpuBalancer],
        threads: &[NonZeroUsize],
        tiles: &[NonZeroU32],
        extras: FrameExtras,
    ) -> Result<()>;
}

/// The scene file a benchmark names, or `scenes/treasure.toml`, which must exist.
pub(crate) fn scene_file(given: Option<&Path>) -> Result<PathBuf> {
    let file = given.map_or_else(|| PathBuf::from("scenes/treasure.toml"), Path::to_path_buf);
    if !file.is_file() {
        anyhow::bail!(
            "{}: no such scene file (run from the repository root, or name a scene file)",
            file.display()
        );
    }
    Ok(file)
}

/// The benchmark's scene (see [`scene_file`]), loaded with `settings`.
pub(crate) fn load_scene(
    given: Option<&Path>,
    settings: &dyn SceneSettings,
    quiet: bool,
) -> Result<Scene> {
    let file = scene_file(given)?;
    settings.check_options()?;
    settings.load_file(&file, quiet)
}
