//! `raylb view`: the command line's side of the viewer (the `viewer` crate). It checks the
//! outputs, chooses the balancer the window starts with, opens the GPU if any, loads the
//! scene and checks that its frames fit in memory, then hands the window to the viewer.

use std::fmt;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use renderer::device::DeviceKind;
use renderer::gpu::{Gpu, GpuError};
use renderer::input::{MAX_MESH_BYTES, MAX_SCENE_BYTES, open_regular_file};
use renderer::preview::Layer;
use renderer::render::FrameExtras;
use viewer::{Lines, Lineup, Options, Script};

use crate::cli::{GpuSource, ViewArgs};
use crate::outputs::{Outputs, png_only};

pub(crate) fn run(args: &ViewArgs) -> Result<ExitCode> {
    let mut outputs = Outputs::new();
    outputs.add("--screenshot", args.screenshot.as_deref());
    outputs.check_writable()?;
    outputs.check_inputs(&args.source.paths())?;
    png_only("--screenshot", args.screenshot.as_deref())?;
    let first = args.run.schedule()?;
    let scene_args = args.scene.for_device(args.run.device);
    scene_args.check_structure_options(&[scene_args.accel_kind()])?;
    // A scene or mesh that cannot be read is said before a missing display, as `render`
    // would say it; the rest of the loading waits for the window.
    let input = &args.source.input;
    let files = (input.scene.iter().map(|p| (p, MAX_SCENE_BYTES)))
        .chain(input.mesh.iter().map(|p| (p, MAX_MESH_BYTES)));
    for (path, max_bytes) in files {
        open_regular_file(path, max_bytes).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    }
    viewer::ensure_display()?;
    let gpu = match args.run.device {
        DeviceKind::Gpu => Some(Arc::new(args.gpu_source.open_for("--device gpu")?)),
        DeviceKind::Hybrid => Some(Arc::new(
            args.gpu_source
                .open_for("--device hybrid needs an NVIDIA GPU")?,
        )),
        DeviceKind::Cpu => find_gpu(&args.gpu_source, args.quiet),
    };
    let scene = scene_args.load(&args.source, args.quiet)?;
    outputs.check_inputs(&scene.inputs)?;
    let lineup = Lineup::new(first, args.run.device_threads(), args.run.tile, gpu);
    let extras = FrameExtras {
        hdr: false,
        window: true,
        ..FrameExtras::default()
    };
    let job = lineup.job(args.layer == Layer::WorkMap);
    args.scene.check_job(&scene, &job, extras)?;
    let options = Options {
        layer: args.layer,
        script: args
            .frames
            .zip(args.screenshot.clone())
            .map(|(frames, screenshot)| Script { frames, screenshot }),
        quiet: args.quiet,
    };
    viewer::run(scene, lineup, &options, &mut Stdout)?;
    Ok(ExitCode::SUCCESS)
}

/// The GPU, if this machine has one (or the emulator, with --gpu-emulator); its balancers
/// then join the lineup. A machine without a driver or device has none, silently; a GPU that
/// fails to open is reported and left out.
fn find_gpu(source: &GpuSource, quiet: bool) -> Option<Arc<Gpu>> {
    match source.open() {
        Ok(gpu) => {
            if !quiet {
                errln!(
                    "GPU: {}; its balancers and the hybrid are on B",
                    gpu.info().name
                );
            }
            Some(Arc::new(gpu))
        }
        Err(GpuError::NoDriver | GpuError::NoDevice) => None,
        Err(e) => {
            errln!("raylb: the GPU is left out: {e}");
            None
        }
    }
}

/// The viewer's lines go to standard output as every command's do: a failed write is a
/// [`crate::terminal::StdoutError`], and a reader that went away ends raylb quietly.
#[derive(Debug)]
struct Stdout;

impl Lines for Stdout {
    fn line(&mut self, line: fmt::Arguments<'_>) -> Result<()> {
        outln!("{line}");
        Ok(())
    }
}
