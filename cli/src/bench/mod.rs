//! `raylb bench`: the command line's options for the benchmarks of [`experiments`], which
//! print a table and write CSV and an SVG plot.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use balancers::{Choice, StealAmount};
use clap::ValueEnum;
use experiments::build::BuildOptions;
use experiments::cluster::ClusterOptions;
use experiments::costs::CostsOptions;
use experiments::deque::DequeOptions;
use experiments::outputs::Outputs;
use experiments::scaling::ScalingOptions;
use experiments::scene::SceneSettings;
use experiments::sim::Replayed;
use experiments::sim_sweep::SimSweepOptions;
use experiments::sweep::SweepOptions;
use experiments::trace::{RaySource, TraceOptions};
use renderer::accel::Packets;
use renderer::ray_file::{FrameRays, RayFile};
use renderer::render::{CpuBalancer, FrameExtras};
use renderer::scene::Scene;

use crate::cli::{
    Bench, BenchArgs, BuildArgs, ClusterBenchArgs, CostsArgs, DequeArgs, ScalingArgs, SceneArgs,
    SceneSource, SimSweepArgs, SweepArgs, TraceArgs, threads,
};
use crate::outputs::named_with;

pub(crate) fn run(args: &BenchArgs) -> Result<ExitCode> {
    let quiet = args.quiet;
    match &args.bench {
        Bench::Trace(a) => trace(a, quiet)?,
        Bench::Build(a) => build(a, quiet)?,
        Bench::Sweep(a) => experiments::sweep::run(&sweep(a, quiet)?)?,
        Bench::Scaling(a) => experiments::scaling::run(&scaling(a, quiet)?)?,
        Bench::Deque(a) => experiments::deque::run(&deque(a, quiet)?)?,
        Bench::Costs(a) => experiments::costs::run(&costs(a, quiet))?,
        Bench::SimSweep(a) => experiments::sim_sweep::run(&sim_sweep(a, quiet)?)?,
        Bench::Cluster(a) => {
            crate::cluster::require_mpi("bench cluster")?;
            experiments::cluster::run(&cluster(a, quiet))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The scene flags read a benchmark's scene files and check its frames.
impl SceneSettings for SceneArgs {
    fn check_options(&self) -> Result<()> {
        self.check_structure_options(&[self.accel_kind()])
    }

    fn max_memory(&self) -> Option<u64> {
        self.max_memory
    }

    fn load_file(&self, file: &Path, quiet: bool) -> Result<Scene> {
        self.load(&SceneSource::file(file), quiet)
    }

    fn check_frames(
        &self,
        scene: &Scene,
        balancers: &[CpuBalancer],
        threads: &[NonZeroUsize],
        tiles: &[NonZeroU32],
        extras: FrameExtras,
    ) -> Result<()> {
        SceneArgs::check_frames(self, scene, balancers, threads, tiles, extras)
    }
}

/// `bench trace` on the scene or mesh named, loaded here: a mesh has no scene file.
fn trace(args: &TraceArgs, quiet: bool) -> Result<()> {
    let timed = &args.timed;
    let mut outputs = Outputs::new();
    outputs
        .add("--dump", args.dump.as_deref())
        .writes_to_stdout("the figures (leave them out with -q)", !quiet);
    outputs.check_writable()?;
    let inputs: Vec<PathBuf> = timed
        .source
        .paths()
        .into_iter()
        .chain(args.ray_file.clone())
        .collect();
    outputs.check_inputs(&inputs)?;
    named_with("--dump", args.dump.as_deref(), "rays", "a ray file")?;
    timed.scene.check_options()?;
    let rays = match &args.ray_file {
        Some(path) => RaySource::File {
            rays: RayFile::read(path).map_err(|e| anyhow!("{}: {e}", path.display()))?,
            path: path.clone(),
        },
        None => RaySource::Frame(args.rays.unwrap_or(FrameRays::Camera)),
    };
    let mut scene = timed.scene.load(&timed.source, quiet)?;
    // The frame whose rays are recorded (and dumped) traces as bench trace's own default says:
    // one ray at a time, in the order of the files written before packets.
    let packets = args.timed.scene.packets.unwrap_or(Packets::Off);
    scene.packets = packets;
    outputs.check_inputs(&scene.inputs)?;
    experiments::trace::run(&TraceOptions {
        scene: &scene,
        settings: &timed.scene,
        threads: timed.threads,
        repeat: timed.repeat,
        rays,
        packets,
        dump: args.dump.clone(),
        quiet,
    })
}

fn build(args: &BuildArgs, quiet: bool) -> Result<()> {
    let timed = &args.timed;
    timed.scene.check_options()?;
    // The structure alone is built: no frame, whose size, samples, packets and camera these
    // set.
    let scene = &timed.scene;
    let frame_flags = [
        ("--width", scene.width.is_some()),
        ("--height", scene.height.is_some()),
        ("--spp", scene.spp.is_some()),
        ("--packets", scene.packets.is_some()),
        ("--up", timed.source.framing.up.is_some()),
        ("--view", timed.source.framing.view.is_some()),
    ];
    if let Some((flag, _)) = frame_flags.iter().find(|(_, given)| *given) {
        bail!("{flag}: bench build builds the acceleration structure alone, and traces no frame");
    }
    if args.against == Some(timed.threads) {
        bail!(
            "--against {}: the same as --threads; name another thread count to compare with",
            timed.threads
        );
    }
    let scene = timed.scene.load(&timed.source, quiet)?;
    experiments::build::run(&BuildOptions {
        scene: &scene,
        threads: timed.threads,
        against: args.against,
        repeat: timed.repeat,
        quiet,
    })
}

fn sweep(args: &SweepArgs, quiet: bool) -> Result<SweepOptions<'_>> {
    Ok(SweepOptions {
        balancers: args.set.kinds()?,
        scenes: args.scenes.clone(),
        scene: &args.scene,
        tiles: args.tiles.clone(),
        threads: threads(args.threads),
        repeat: args.repeat,
        out: args.out.clone(),
        quiet,
    })
}

fn scaling(args: &ScalingArgs, quiet: bool) -> Result<ScalingOptions<'_>> {
    let every_count = || {
        (1..=threads(None).get())
            .filter_map(NonZeroUsize::new)
            .collect()
    };
    Ok(ScalingOptions {
        balancers: args.set.kinds()?,
        scene_file: args.scene_file.clone(),
        scene: &args.scene,
        threads: if args.threads.is_empty() {
            every_count()
        } else {
            args.threads.clone()
        },
        tile: args.tile,
        repeat: args.repeat,
        out: args.out.clone(),
        quiet,
    })
}

fn sim_sweep(args: &SimSweepArgs, quiet: bool) -> Result<SimSweepOptions<'_>> {
    let balancers = args
        .set
        .kinds()?
        .into_iter()
        .map(Replayed::of)
        .collect::<Result<Vec<_>>>()?;
    Ok(SimSweepOptions {
        balancers,
        scene_file: args.scene_file.clone(),
        scene: &args.scene,
        workers: args.workers.clone(),
        tiles: args.tiles.clone(),
        model_tile: args.model_tile,
        threads: threads(args.threads),
        out: args.out.clone(),
        quiet,
    })
}

fn deque(args: &DequeArgs, quiet: bool) -> Result<DequeOptions> {
    let threads = threads(args.threads);
    if let Some(steal) = args.steal
        && threads.get() == 1
    {
        bail!(
            "--steal {}: one thread has no deque to steal from; give --threads 2 or more",
            steal.keyword()
        );
    }
    Ok(DequeOptions {
        threads,
        elements: args.elements,
        iterations: args.iterations,
        steal: args.steal.unwrap_or(StealAmount::One),
        max_memory: args.max_memory,
        out: args.out.clone(),
        quiet,
    })
}

fn costs(args: &CostsArgs, quiet: bool) -> CostsOptions {
    CostsOptions {
        threads: threads(args.threads),
        rounds: args.rounds,
        out: args.out.clone(),
        quiet,
    }
}

fn cluster(args: &ClusterBenchArgs, quiet: bool) -> ClusterOptions {
    ClusterOptions {
        scene_file: args.scene_file.clone(),
        workers: threads(args.workers),
        ranks: args.ranks.clone(),
        modes: args
            .modes
            .iter()
            .filter_map(|m| m.to_possible_value())
            .map(|v| v.get_name().to_string())
            .collect(),
        balancer: args.balancer.keyword().to_string(),
        tile: args.tile,
        width: args.width,
        height: args.height,
        repeat: args.repeat,
        mpirun: args.mpirun.clone(),
        mpirun_arg: args.mpirun_arg.clone(),
        out: args.out.clone(),
        quiet,
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// `raylb bench cluster` with these flags.
    fn cluster_args(flags: &[&str]) -> ClusterBenchArgs {
        let cli = crate::cli::Cli::parse_from(["raylb", "bench", "cluster"].iter().chain(flags));
        match cli.command {
            crate::cli::Command::Bench(b) => match b.bench {
                Bench::Cluster(a) => a,
                _ => unreachable!(),
            },
            _ => unreachable!(),
        }
    }

    #[test]
    fn cluster_options_name_the_modes_and_balancer_as_render_does() {
        let args = cluster_args(&[
            "--workers",
            "4",
            "--ranks",
            "1,2,4",
            "--modes",
            "static,stealing",
        ]);
        let options = cluster(&args, false);
        assert_eq!(options.workers.get(), 4);
        let ranks: Vec<usize> = options.ranks.iter().map(|r| r.get()).collect();
        assert_eq!(ranks, [1, 2, 4]);
        assert_eq!(options.modes, ["static", "stealing"]);
        assert_eq!(options.balancer, "stealing");
        assert_eq!((options.tile.get(), options.repeat.get()), (32, 5));
    }
}
