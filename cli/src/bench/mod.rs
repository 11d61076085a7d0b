//! `raylb bench`: benchmarks that print a table and write CSV and an SVG plot.

mod cluster;
mod costs;
mod deque;
mod scaling;
mod sim_sweep;
mod sweep;
mod trace;

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{Bench, BenchArgs, SceneArgs, SceneSource};

/// The scene file a benchmark names, or `scenes/treasure.toml`, which must exist.
pub(crate) fn scene_file(given: Option<&std::path::Path>) -> Result<std::path::PathBuf> {
    let file = given.map_or_else(
        || std::path::PathBuf::from("scenes/treasure.toml"),
        std::path::Path::to_path_buf,
    );
    if !file.is_file() {
        anyhow::bail!(
            "{}: no such scene file (run from the repository root, or name a scene file)",
            file.display()
        );
    }
    Ok(file)
}

/// The benchmark's scene (see [`scene_file`]), loaded with `scene`'s settings in the one
/// structure they name.
pub(crate) fn load_scene(
    given: Option<&std::path::Path>,
    scene: &SceneArgs,
    quiet: bool,
) -> Result<renderer::scene::Scene> {
    let file = scene_file(given)?;
    scene.check_structure_options(&[scene.accel_kind()])?;
    scene.load(
        &SceneSource {
            scene: Some(file),
            mesh: None,
        },
        quiet,
    )
}

pub(crate) fn run(args: &BenchArgs) -> Result<ExitCode> {
    match &args.bench {
        Bench::Trace(a) => trace::run(a, args.quiet),
        Bench::Sweep(a) => sweep::run(a, args.quiet),
        Bench::Scaling(a) => scaling::run(a, args.quiet),
        Bench::Deque(a) => deque::run(a, args.quiet),
        Bench::Costs(a) => costs::run(a, args.quiet),
        Bench::SimSweep(a) => sim_sweep::run(a, args.quiet),
        Bench::Cluster(a) => cluster::run(a, args.quiet),
    }
}
