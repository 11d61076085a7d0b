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
///
/// ```
/// use std::num::{NonZeroU32, NonZeroUsize};
/// use std::path::Path;
///
/// use experiments::scene::SceneSettings;
/// use renderer::render::{CpuBalancer, FrameExtras};
/// use renderer::scene::{Scene, SceneOverrides};
///
/// /// Every scene at 32×32, and every frame let through.
/// #[derive(Debug)]
/// struct Small;
///
/// impl SceneSettings for Small {
///     fn check_options(&self) -> anyhow::Result<()> {
///         Ok(())
///     }
///
///     fn load_file(&self, file: &Path, _quiet: bool) -> anyhow::Result<Scene> {
///         let small = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
///         Ok(Scene::load(file, small)?)
///     }
///
///     fn check_frames(
///         &self,
///         _scene: &Scene,
///         _balancers: &[CpuBalancer],
///         _threads: &[NonZeroUsize],
///         _tiles: &[NonZeroU32],
///         _extras: FrameExtras,
///     ) -> anyhow::Result<()> {
///         Ok(())
///     }
/// }
///
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let scene = Small.load_file(file.as_ref(), true)?;
/// assert_eq!((scene.width, scene.height), (32, 32));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait SceneSettings: std::fmt::Debug {
    /// Refuses settings that do not apply to the acceleration structure they build.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use experiments::scene::SceneSettings;
    /// # use renderer::render::{CpuBalancer, FrameExtras};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # #[derive(Debug)]
    /// # struct Small;
    /// # impl SceneSettings for Small {
    /// #     fn check_options(&self) -> anyhow::Result<()> {
    /// #         Ok(())
    /// #     }
    /// #     fn load_file(&self, file: &std::path::Path, _: bool) -> anyhow::Result<Scene> {
    /// #         let small = SceneOverrides {
    /// #             width: Some(32),
    /// #             height: Some(32),
    /// #             ..Default::default()
    /// #         };
    /// #         Ok(Scene::load(file, small)?)
    /// #     }
    /// #     fn check_frames(
    /// #         &self,
    /// #         _: &Scene,
    /// #         _: &[CpuBalancer],
    /// #         _: &[NonZeroUsize],
    /// #         _: &[NonZeroU32],
    /// #         _: FrameExtras,
    /// #     ) -> anyhow::Result<()> {
    /// #         Ok(())
    /// #     }
    /// # }
    /// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// // A benchmark checks the settings before it reads any scene.
    /// let settings: &dyn SceneSettings = &Small;
    /// assert!(settings.check_options().is_ok());
    /// ```
    fn check_options(&self) -> Result<()>;

    /// The memory the scene and each frame may take (`--max-memory`), where it was given;
    /// `None` leaves the limit to what the machine has free.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use experiments::scene::SceneSettings;
    /// # use renderer::render::{CpuBalancer, FrameExtras};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # #[derive(Debug)]
    /// # struct Small;
    /// # impl SceneSettings for Small {
    /// #     fn check_options(&self) -> anyhow::Result<()> {
    /// #         Ok(())
    /// #     }
    /// #     fn load_file(&self, file: &std::path::Path, _: bool) -> anyhow::Result<Scene> {
    /// #         Ok(Scene::load(file, SceneOverrides::default())?)
    /// #     }
    /// #     fn check_frames(
    /// #         &self,
    /// #         _: &Scene,
    /// #         _: &[CpuBalancer],
    /// #         _: &[NonZeroUsize],
    /// #         _: &[NonZeroU32],
    /// #         _: FrameExtras,
    /// #     ) -> anyhow::Result<()> {
    /// #         Ok(())
    /// #     }
    /// # }
    /// // Settings that give no limit of their own.
    /// assert_eq!(Small.max_memory(), None);
    /// ```
    fn max_memory(&self) -> Option<u64> {
        None
    }

    /// Loads the scene file `file`; its warnings go to standard error unless `quiet`.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use experiments::scene::SceneSettings;
    /// # use renderer::render::{CpuBalancer, FrameExtras};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # #[derive(Debug)]
    /// # struct Small;
    /// # impl SceneSettings for Small {
    /// #     fn check_options(&self) -> anyhow::Result<()> {
    /// #         Ok(())
    /// #     }
    /// #     fn load_file(&self, file: &std::path::Path, _: bool) -> anyhow::Result<Scene> {
    /// #         let small = SceneOverrides {
    /// #             width: Some(32),
    /// #             height: Some(32),
    /// #             ..Default::default()
    /// #         };
    /// #         Ok(Scene::load(file, small)?)
    /// #     }
    /// #     fn check_frames(
    /// #         &self,
    /// #         _: &Scene,
    /// #         _: &[CpuBalancer],
    /// #         _: &[NonZeroUsize],
    /// #         _: &[NonZeroU32],
    /// #         _: FrameExtras,
    /// #     ) -> anyhow::Result<()> {
    /// #         Ok(())
    /// #     }
    /// # }
    /// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// let scene = Small.load_file(file.as_ref(), true)?;
    /// assert_eq!(scene.width, 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn load_file(&self, file: &Path, quiet: bool) -> Result<Scene>;

    /// Refuses, before any is rendered, a frame of `scene` for any combination of `balancers`,
    /// `threads` and `tiles` that would take more memory than is left once the scene is built.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use experiments::scene::SceneSettings;
    /// # use renderer::render::{CpuBalancer, FrameExtras};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # #[derive(Debug)]
    /// # struct Small;
    /// # impl SceneSettings for Small {
    /// #     fn check_options(&self) -> anyhow::Result<()> {
    /// #         Ok(())
    /// #     }
    /// #     fn load_file(&self, file: &std::path::Path, _: bool) -> anyhow::Result<Scene> {
    /// #         let small = SceneOverrides {
    /// #             width: Some(32),
    /// #             height: Some(32),
    /// #             ..Default::default()
    /// #         };
    /// #         Ok(Scene::load(file, small)?)
    /// #     }
    /// #     fn check_frames(
    /// #         &self,
    /// #         _: &Scene,
    /// #         _: &[CpuBalancer],
    /// #         _: &[NonZeroUsize],
    /// #         _: &[NonZeroU32],
    /// #         _: FrameExtras,
    /// #     ) -> anyhow::Result<()> {
    /// #         Ok(())
    /// #     }
    /// # }
    /// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// use balancers::BalancerKind;
    ///
    /// let scene = Small.load_file(file.as_ref(), true)?;
    /// let counter = CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
    /// let (threads, tiles) = ([NonZeroUsize::MIN], [NonZeroU32::new(16).unwrap()]);
    /// Small.check_frames(&scene, &[counter], &threads, &tiles, FrameExtras::default())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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

/// Unless `quiet`, warns where two or more of the tile edges `tiles` reach across the whole of
/// `scene` (at or beyond both its width and its height): each makes it one tile, so a sweep
/// over them renders, or replays, the same frame again at each.
pub(crate) fn warn_one_tile_edges(scene: &Scene, tiles: &[NonZeroU32], quiet: bool) {
    if !quiet && let Some(warning) = one_tile_edges(&scene.name, (scene.width, scene.height), tiles)
    {
        crate::errln!("raylb: warning: {warning}");
    }
}

/// The warning of [`warn_one_tile_edges`] for the scene `name` of `width × height` pixels, if
/// there is one.
fn one_tile_edges(name: &str, (width, height): (u32, u32), tiles: &[NonZeroU32]) -> Option<String> {
    let whole: Vec<String> = tiles
        .iter()
        .filter(|t| t.get() >= width && t.get() >= height)
        .map(|t| t.to_string())
        .collect();
    (whole.len() > 1).then(|| {
        format!(
            "{name} ({width}×{height} pixels) is one tile at each of the tile edges {}: \
             they measure the same frame",
            whole.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(tiles: &[u32]) -> Vec<NonZeroU32> {
        tiles.iter().map(|&t| NonZeroU32::new(t).unwrap()).collect()
    }

    #[test]
    fn edges_that_each_make_the_frame_one_tile_are_named() {
        let warning = one_tile_edges("quick", (96, 64), &edges(&[8, 64, 96, 128])).unwrap();
        assert_eq!(
            warning,
            "quick (96×64 pixels) is one tile at each of the tile edges 96, 128: \
             they measure the same frame"
        );
        // 64 is the height alone: two tiles across.
        assert_eq!(one_tile_edges("quick", (96, 64), &edges(&[64, 96])), None);
        assert_eq!(one_tile_edges("quick", (96, 64), &edges(&[8, 512])), None);
        assert!(one_tile_edges("tall", (64, 96), &edges(&[96, 100])).is_some());
    }
}
