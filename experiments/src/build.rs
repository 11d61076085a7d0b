//! `raylb bench build`: how fast the scene's acceleration structure is built, in triangles a
//! second, on a given number of threads (the build's own, started and joined for each build).

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use anyhow::Result;
use renderer::accel::Accel;
use renderer::scene::Scene;
use renderer::stats::counted;

use crate::progress::Progress;

/// What `raylb bench build` builds.
///
/// ```
/// use std::num::NonZeroUsize;
///
/// use experiments::build::BuildOptions;
/// use renderer::scene::{Scene, SceneOverrides};
///
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let scene = Scene::load(file.as_ref(), SceneOverrides::default())?;
/// let threads = NonZeroUsize::MIN;
/// let options = BuildOptions { scene: &scene, threads, repeat: 2, quiet: true };
/// assert!(experiments::build::run(&options).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct BuildOptions<'a> {
    /// The scene, loaded: its triangles, structure and BVH settings are rebuilt.
    pub scene: &'a Scene,
    /// Threads of each build.
    pub threads: NonZeroUsize,
    /// Timed builds; the best is reported.
    pub repeat: u32,
    /// Print nothing.
    pub quiet: bool,
}

/// Builds the scene's structure `repeat` times and reports the best.
///
/// # Errors
/// When a build's thread cannot be started.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use experiments::build::BuildOptions;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(file.as_ref(), SceneOverrides::default())?;
/// let two_threads = NonZeroUsize::new(2).unwrap();
/// let options = BuildOptions { scene: &scene, threads: two_threads, repeat: 1, quiet: true };
/// experiments::build::run(&options)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &BuildOptions<'_>) -> Result<()> {
    let scene = options.scene;
    let kind = scene.accel.kind();
    // In the order the scene was built from, so that each build is the scene's own.
    let triangles = scene.accel.input_triangles();
    let mut best = Duration::MAX;
    let mut progress = Progress::new(u64::from(options.repeat), "builds", options.quiet);
    for round in 1..=options.repeat {
        let started = Instant::now();
        let built = Accel::build_on(kind, &triangles, scene.bvh_settings, options.threads)?;
        let took = started.elapsed();
        // Dropped outside the timing: freeing the tree is not the build.
        drop(built);
        best = best.min(took);
        progress.step(&format!(
            "build {round}/{}: {:.3} s",
            options.repeat,
            took.as_secs_f64()
        ));
    }
    progress.finish();
    say!(
        options.quiet,
        "{}: {} in the {} structure, {}",
        scene.name,
        counted(triangles.len() as u64, "triangle"),
        kind.name(),
        counted(options.threads.get() as u64, "thread")
    );
    say!(
        options.quiet,
        "time    best of {}: {:.4} s, {:.2} Mtriangles/s",
        counted(u64::from(options.repeat), "build"),
        best.as_secs_f64(),
        triangles.len() as f64 / best.as_secs_f64() / 1e6
    );
    Ok(())
}
