//! `raylb record`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use balancers::Choice;
use balancers::sim::TaskTree;
use renderer::device::DeviceKind;
use renderer::file_errors::io_reason;
use renderer::output::StagedFiles;
use renderer::record::{FEATURES, KINDS, TaskRoom, record_within};
use renderer::render::{CpuBalancer, FrameExtras, RenderOptions};
use renderer::stats::counted;

use crate::cli::RecordArgs;
use crate::outputs::{Outputs, named_with};

pub(crate) fn run(args: &RecordArgs) -> Result<ExitCode> {
    let mut outputs = Outputs::new();
    outputs
        .add("-o", args.output.as_deref())
        .writes_to_stdout("the summary (leave it out with -q)", !args.quiet);
    outputs.check_writable()?;
    outputs.check_inputs(&args.source.paths())?;
    named_with("-o", args.output.as_deref(), "tasks", "a task file")?;
    if args.run.device != DeviceKind::Cpu {
        bail!(
            "--device {}: raylb record counts and times the CPU's tasks; leave --device out",
            args.run.device.keyword()
        );
    }
    args.scene
        .check_structure_options(&[args.scene.accel_kind()])?;
    let balancer = match args.run.balancer()? {
        CpuBalancer::Builtin(balancer) => balancer,
        // The tree does not depend on the balancer that ran it; the timing run's does not
        // matter either, its times are per task.
        CpuBalancer::User(b) => bail!(
            "--balancer {}: raylb record runs a built-in balancer (static, counter, stealing or rayon); the task tree it writes is the same whichever runs it",
            b.keyword()
        ),
    };
    let threads = args.run.threads();
    let scene = args
        .scene
        .load_reporting(&args.source, args.quiet, args.quiet)?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.tasks", scene.name)));
    if args.output.is_none() {
        outputs.add("-o", Some(&output)).check_writable()?;
    }
    outputs.check_inputs(&scene.inputs)?;
    let options = RenderOptions {
        balancer: balancer.into(),
        threads,
        tile: args.run.tile,
        work_map: false,
    };
    args.scene
        .check_frame(&scene, &options, FrameExtras::default())?;
    if !args.quiet {
        outln!(
            "record  {} {}×{}, {} structure: counting with {} on {}, then timing on {}",
            scene.name,
            scene.width,
            scene.height,
            scene.accel.kind().name(),
            balancer_name(&options),
            counted(threads.get() as u64, "thread"),
            args.timing_threads
        );
    }
    let room = TaskRoom::of(&scene, &options, args.scene.max_memory);
    let recording = record_within(
        &scene,
        args.run.tile,
        &balancer,
        threads,
        args.timing_threads,
        room.tasks,
    )
    .map_err(|e| anyhow!(room.refusal(&scene, &e)))?;
    let tree = &recording.tree;
    let mut staged = StagedFiles::new();
    let mut bytes = 0u64;
    staged
        .write(&output, |out| {
            let mut counted = Counted { out, bytes: 0 };
            tree.write_to(&mut counted)?;
            bytes = counted.bytes;
            Ok(())
        })
        .map_err(|e| anyhow!("cannot write {}: {}", output.display(), io_reason(&e)))?;
    staged.commit()?;
    if !args.quiet {
        print_summary(tree, &recording, bytes, args.timing_threads)?;
        outln!("wrote   {}", output.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn balancer_name(options: &RenderOptions) -> String {
    options.balancer.name()
}

/// The tasks by kind, the file's size, the runs' times and the fit.
fn print_summary(
    tree: &TaskTree,
    recording: &renderer::record::Recording,
    bytes: u64,
    timing_threads: std::num::NonZeroUsize,
) -> Result<()> {
    let mut by_kind = [0u64; KINDS.len()];
    // Work summed over tiles and over ray tasks.
    let mut work = [[0u64; FEATURES.len()]; 2];
    for i in 0..tree.len() {
        by_kind[usize::from(tree.kind(i))] += 1;
        let group = &mut work[usize::from(tree.kind(i) != 0)];
        for (total, &w) in group.iter_mut().zip(tree.work(i)) {
            *total += u64::from(w);
        }
    }
    outln!(
        "tasks   {} ({} initial tiles; {} tiles, {} reflection, {} refraction)",
        tree.len(),
        tree.initial(),
        by_kind[0],
        by_kind[1],
        by_kind[2]
    );
    let ray_tasks = (tree.len() as u64 - by_kind[0]).max(1) as f64;
    let tiles = by_kind[0].max(1) as f64;
    outln!(
        "work    per tile {:.0} box and {:.0} triangle tests, {:.0} hits, {:.0} shadow rays; per ray task {:.1}, {:.1}, {:.2}, {:.2}",
        work[0][0] as f64 / tiles,
        work[0][1] as f64 / tiles,
        work[0][5] as f64 / tiles,
        work[0][4] as f64 / tiles,
        work[1][2] as f64 / ray_tasks,
        work[1][3] as f64 / ray_tasks,
        work[1][5] as f64 / ray_tasks,
        work[1][4] as f64 / ray_tasks
    );
    outln!(
        "file    {bytes} bytes ({:.1} per task)",
        bytes as f64 / tree.len().max(1) as f64
    );
    outln!(
        "runs    counting {:.2} s, timing ({}) {:.2} s",
        recording.counted.as_secs_f64(),
        counted(timing_threads.get() as u64, "thread"),
        recording.timed.as_secs_f64()
    );
    let m = &tree.model;
    let per_unit: Vec<String> = FEATURES
        .iter()
        .zip(&m.per_unit)
        .map(|(name, c)| format!("{} {:.2}", name.strip_suffix('s').unwrap_or(name), c * 1e9))
        .collect();
    outln!(
        "model   ns per task {:.1}; per {}",
        m.per_task * 1e9,
        per_unit.join(", ")
    );
    if let Some(fit) = &m.fit {
        outln!(
            "fit     {} tasks, R² {:.3}; a tile's subtree off by {:.1}% (median), {:.1}% (90th percentile)",
            fit.rows,
            fit.r_squared,
            fit.subtree_median_error * 100.0,
            fit.subtree_p90_error * 100.0
        );
    }
    Ok(())
}

/// A writer that counts the bytes through it.
struct Counted<'a, W: ?Sized> {
    out: &'a mut W,
    bytes: u64,
}

impl<W: std::io::Write + ?Sized> std::io::Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
