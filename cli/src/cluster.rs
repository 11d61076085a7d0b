//! `raylb render --cluster`: one frame over the ranks of an MPI job.

use std::num::NonZeroUsize;
#[cfg(not(feature = "mpi"))]
use std::process::ExitCode;

use anyhow::{Result, bail};
use balancers::Choice;
use balancers::cluster::ClusterMode;
use renderer::device::DeviceKind;

use crate::cli::{ClusterName, RenderArgs};

/// Refuses `what` (`--cluster`, `bench cluster`) in a raylb built without the `mpi` feature,
/// saying how to build one with it.
pub(crate) fn require_mpi(what: &str) -> Result<()> {
    if cfg!(feature = "mpi") {
        return Ok(());
    }
    bail!(
        "{what}: this raylb was built without MPI support; build it with `cargo build --release --features mpi` where Open MPI is installed (Debian: openmpi-bin, libopenmpi-dev, libclang-dev; see docs/cluster.md)"
    )
}

/// The mode `name` names with the chunk given, or the reason a flag does not apply.
fn mode(args: &RenderArgs, name: ClusterName) -> Result<ClusterMode> {
    if args.run.device != DeviceKind::Cpu {
        bail!(
            "--cluster runs on the CPU's threads of each rank; --device {} does not apply",
            args.run.device.keyword()
        );
    }
    match (name, args.cluster_chunk) {
        (ClusterName::Counter, chunk) => Ok(ClusterMode::Counter {
            chunk: chunk.unwrap_or_else(|| {
                args.run
                    .threads()
                    .checked_mul(NonZeroUsize::new(2).expect("2 is not 0"))
                    .unwrap_or(NonZeroUsize::MAX)
            }),
        }),
        (_, Some(_)) => bail!("--cluster-chunk applies to --cluster counter"),
        (ClusterName::Static, None) => Ok(ClusterMode::Static),
        (ClusterName::Stealing, None) => Ok(ClusterMode::Stealing),
    }
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn run(args: &RenderArgs, name: ClusterName) -> Result<ExitCode> {
    mode(args, name)?;
    require_mpi("--cluster")?;
    unreachable!("refused above")
}

#[cfg(feature = "mpi")]
pub(crate) use with_mpi::run;

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::time::Instant;

    use anyhow::{Result, anyhow, bail};
    use balancers::Telemetry;
    use balancers::cluster::ClusterMode;
    use renderer::cluster::{Cluster, RankFigures, Refused, Whole, fingerprint};
    use renderer::device::FrameJob;
    use renderer::frame::Frame;
    use renderer::integrator::RayCounts;
    use renderer::render::{FrameExtras, RenderOptions};
    use renderer::scene::Scene;
    use renderer::stats::{ClusterReport, RankReport, RaysReport, RenderReport};

    use super::mode;
    use crate::cli::{ClusterName, RenderArgs};
    use crate::render::{OutputPlan, warn_fewer_threads};
    use crate::terminal::{Reported, mpi_rank};

    /// Whether this process was started by an MPI launcher, which tells every rank its number.
    fn under_mpirun() -> bool {
        mpi_rank().is_some()
    }

    /// What a rank has ready once the agreement has passed.
    struct Ready {
        scene: Scene,
        options: RenderOptions,
        mode: ClusterMode,
        /// Rank 0's outputs.
        plan: Option<OutputPlan>,
    }

    pub(crate) fn run(args: &RenderArgs, name: ClusterName) -> Result<ExitCode> {
        // Flags that do not apply are refused first, the same on every rank (rank 0 says it).
        mode(args, name)?;
        if !under_mpirun() {
            bail!(
                "--cluster runs under mpirun, one process per rank: mpirun -np N raylb render SCENE --cluster {} …",
                clap::ValueEnum::to_possible_value(&name)
                    .map_or_else(String::new, |v| v.get_name().to_string())
            );
        }
        let cluster = Cluster::init().map_err(|e| anyhow!("--cluster: {e}"))?;
        let rank = cluster.rank();
        // Every rank checks and loads; they agree before any renders, so that one failure
        // ends the job once, said by rank 0.
        let ready = prepare(args, name, rank == 0);
        let arguments: Vec<String> = std::env::args().collect();
        let fingerprint = ready
            .as_ref()
            .map(|r| fingerprint(&r.scene, &arguments))
            .map_err(|e| format!("{e:#}"));
        if let Err(refused) = cluster.agree(fingerprint) {
            if let Refused::Because(line) = refused {
                errln!("raylb: error: {line}");
            }
            // No rank ends before rank 0 has said why: mpirun ends the whole job as soon as
            // one rank exits with an error, and rank 0's line would be lost with it.
            cluster.barrier();
            return Err(Reported.into());
        }
        let ready = ready.expect("agreed");
        let started = Instant::now();
        let part = cluster
            .render_part(&ready.scene, &ready.options, ready.mode)
            .unwrap_or_else(|e| {
                // The other ranks would wait for this one's tiles for ever: end the job.
                errln!("raylb: error: rank {rank}: {e}");
                cluster.abort(2)
            });
        let Some(whole) = cluster.gather(part, started) else {
            return Ok(ExitCode::SUCCESS);
        };
        let plan = ready.plan.as_ref().expect("rank 0 plans the outputs");
        let (frame, ranks) = frame_of(whole, &ready);
        let mut report = RenderReport::new(&ready.scene, ready.options.tile.get(), &frame);
        report.cluster = Some(ClusterReport::new(ready.mode.name(), ranks));
        plan.write(args, &ready.scene, &frame, report)?;
        Ok(ExitCode::SUCCESS)
    }

    /// The CPU frame's options, from the command line (`--cluster` runs on each rank's CPU).
    fn cpu_options(args: &RenderArgs) -> Result<RenderOptions> {
        let options = RenderOptions {
            balancer: args.run.balancer()?,
            threads: args.run.threads(),
            tile: args.run.tile,
            work_map: args.workmap.is_some(),
        };
        warn_fewer_threads(&FrameJob::Cpu(options), args.quiet);
        Ok(options)
    }

    /// Checks the command line, loads the scene and checks the frame's memory; on rank 0
    /// also the outputs, and only rank 0 prints.
    fn prepare(args: &RenderArgs, name: ClusterName, rank0: bool) -> Result<Ready> {
        let mode = mode(args, name)?;
        let mut plan = rank0.then(|| OutputPlan::check(args)).transpose()?;
        args.scene
            .check_structure_options(&[args.scene.accel_kind()])?;
        let options = cpu_options(args)?;
        let silent = !rank0 || args.quiet || args.json;
        let scene = args
            .scene
            .load_reporting(&args.source, silent, !rank0 || args.quiet)?;
        if let Some(plan) = &mut plan {
            plan.check_scene(&scene)?;
        }
        let extras = FrameExtras {
            reduced: true,
            ..plan.as_ref().map(OutputPlan::extras).unwrap_or_default()
        };
        args.scene.check_frame(&scene, &options, extras)?;
        Ok(Ready {
            scene,
            options,
            mode,
            plan,
        })
    }

    /// Rank 0's frame of the whole job (every rank's workers in turn) and the ranks' reports.
    fn frame_of(whole: Whole, ready: &Ready) -> (Frame, Vec<RankReport>) {
        let mut reports = Vec::with_capacity(whole.ranks.len());
        let mut first_worker = 0;
        for figures in &whole.ranks {
            reports.push(rank_report(figures, first_worker));
            first_worker += figures.workers.len();
        }
        let workers = whole.ranks.iter().flat_map(|r| r.workers.clone()).collect();
        let rays = whole.ranks.iter().flat_map(|r| r.rays.clone()).collect();
        let balancer = &ready.options.balancer;
        let telemetry = Telemetry {
            balancer: balancer.name(),
            wall: whole.wall,
            workers,
            // rayon moves tasks without telling.
            steals_observed: balancer.family() != "rayon",
        };
        let tiles: u64 = whole.ranks.iter().map(|r| r.cluster.tiles).sum();
        let frame = Frame {
            film: Arc::new(whole.film),
            telemetry,
            rays,
            tiles: tiles as usize,
            device: None,
            hybrid: None,
            cancelled: false,
        };
        (frame, reports)
    }

    fn rank_report(figures: &RankFigures, first_worker: usize) -> RankReport {
        let c = &figures.cluster;
        let mut rays = RayCounts::default();
        for r in &figures.rays {
            rays.merge(r);
        }
        RankReport {
            rank: c.rank,
            host: figures.host.clone(),
            threads: figures.workers.len(),
            first_worker,
            tiles: c.tiles,
            batches: c.batches,
            tasks: figures.workers.iter().map(|w| w.tasks).sum(),
            rays: RaysReport::from(&rays),
            busy_seconds: figures.workers.iter().map(|w| w.busy.as_secs_f64()).sum(),
            idle_seconds: figures.workers.iter().map(|w| w.idle.as_secs_f64()).sum(),
            wait_seconds: c.waited.as_secs_f64(),
            tiles_sent: c.tiles_sent,
            tiles_received: c.tiles_received,
            bytes_sent: c.bytes_sent,
            bytes_received: c.bytes_received,
            requests: c.requests,
            requests_granted: c.requests_granted,
        }
    }
}
