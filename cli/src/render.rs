//! `raylb render`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use renderer::device::{DeviceKind, FrameJob};
use renderer::file_errors::io_reason;
use renderer::frame::Frame;
use renderer::gpu::Gpu;
use renderer::live::LiveFrame;
use renderer::output::{ExrPrecision, ImageFormat, StagedFiles};
use renderer::render::FrameExtras;
use renderer::scene::Scene;
use renderer::stats::{RenderReport, WorkMapReport};
use renderer::workmap::work_map;

use crate::cli::RenderArgs;
use crate::outputs::{Outputs, image_format, png_only};
use crate::terminal::quiet_rank;
use experiments::progress::Progress;

/// `raylb render` on one machine (`--cluster` goes to `cluster::run`).
pub(crate) fn run(args: &RenderArgs) -> Result<ExitCode> {
    if args.cluster_chunk.is_some() {
        bail!("--cluster-chunk applies to --cluster counter");
    }
    let mut plan = OutputPlan::check(args)?;
    let device = args.run.device;
    let scene_args = args.scene.for_device(args.run.device);
    // The device first: on the GPU no structure traces packets.
    if device == DeviceKind::Gpu && scene_args.packets.is_some() {
        bail!(
            "--packets applies to the CPU's threads (--device cpu or hybrid); the GPU traces each ray on its own lane"
        );
    }
    scene_args.check_structure_options(&[scene_args.accel_kind()])?;
    if device == DeviceKind::Cpu && args.gpu_source.gpu_emulator {
        bail!(
            "--gpu-emulator runs the GPU's kernels, which --device cpu does not: give --device gpu or hybrid"
        );
    }
    // The device and balancer are checked before the scene is loaded: a missing GPU is
    // reported at once.
    let schedule = args.run.schedule()?;
    let gpu = match device {
        DeviceKind::Cpu => None,
        DeviceKind::Gpu => Some(Arc::new(args.gpu_source.open_for("--device gpu")?)),
        DeviceKind::Hybrid => Some(Arc::new(
            args.gpu_source
                .open_for("--device hybrid needs an NVIDIA GPU")?,
        )),
    };
    let job = schedule.job(
        args.run.device_threads(),
        args.run.tile,
        args.workmap.is_some(),
    );
    warn_fewer_threads(&job, args.quiet);
    let quiet = args.quiet || args.json;
    let scene = Arc::new(scene_args.load_reporting(&args.source, quiet, args.quiet)?);
    plan.check_scene(&scene)?;
    args.scene.check_job(&scene, &job, plan.extras())?;
    let frame = render_with_progress(&scene, job, gpu, quiet)?;
    let report = RenderReport::new(&scene, args.run.tile.get(), &frame);
    plan.write(args, &scene, &frame, report)?;
    Ok(ExitCode::SUCCESS)
}

/// Unless `quiet`, says in a warning line where the frame starts fewer threads than
/// `--threads` asks for.
pub(crate) fn warn_fewer_threads(job: &FrameJob, quiet: bool) {
    if let Some(warning) = job.fewer_threads()
        && !quiet
        && !quiet_rank()
    {
        errln!("raylb: warning: {warning}");
    }
}

/// What `render` writes, checked before any work and written together at the end.
#[derive(Debug)]
pub(crate) struct OutputPlan {
    outputs: Outputs,
    format: ImageFormat,
    precision: ExrPrecision,
    /// The image's path, once known (the default comes from the scene's name).
    output: Option<PathBuf>,
}

impl OutputPlan {
    /// Checks every output named on the command line: each can be written, none is named
    /// twice or replaces an input, and each flag suits its format.
    pub(crate) fn check(args: &RenderArgs) -> Result<Self> {
        let mut outputs = Outputs::new();
        outputs
            .add("-o", args.output.as_deref())
            .add("--workmap", args.workmap.as_deref())
            .add("--stats", args.stats.as_deref())
            .writes_to_stdout(
                if args.json {
                    "--json"
                } else {
                    "the summary (leave it out with -q)"
                },
                !args.quiet,
            );
        outputs.check_writable()?;
        outputs.check_inputs(&args.source.paths())?;
        let format = match &args.output {
            Some(path) => image_format("-o", path)?,
            None => ImageFormat::Png,
        };
        png_only("--workmap", args.workmap.as_deref())?;
        if args.half && format != ImageFormat::Exr {
            bail!("--half applies to -o FILE.exr, the one format with half-precision channels");
        }
        let precision = if args.half {
            ExrPrecision::Half
        } else {
            ExrPrecision::Float
        };
        Ok(Self {
            outputs,
            format,
            precision,
            output: args.output.clone(),
        })
    }

    /// Once the scene is loaded: the default image path, and no output replacing a file the
    /// scene read.
    pub(crate) fn check_scene(&mut self, scene: &Scene) -> Result<()> {
        if self.output.is_none() {
            let path = PathBuf::from(format!("{}.png", scene.name));
            self.outputs.add("-o", Some(&path)).check_writable()?;
            self.output = Some(path);
        }
        self.outputs.check_inputs(&scene.inputs)
    }

    /// What the outputs add to a frame's memory.
    pub(crate) fn extras(&self) -> FrameExtras {
        FrameExtras {
            hdr: self.format != ImageFormat::Png,
            window: false,
            ..FrameExtras::default()
        }
    }

    /// Writes the image, the work map and the stats of `frame`, all put in place together,
    /// and prints the summary (or the JSON).
    pub(crate) fn write(
        &self,
        args: &RenderArgs,
        scene: &Scene,
        frame: &Frame,
        mut report: RenderReport,
    ) -> Result<()> {
        let output = self.output.as_deref().expect("checked against the scene");
        let mut staged = StagedFiles::new();
        // The files for the summary, each but the image named for what it holds.
        let mut written = vec![output.display().to_string()];
        staged
            .frame(output, &frame.film, self.precision)
            .map_err(|e| write_error(output, &e))?;
        if let (Some(path), Some(counts)) = (&args.workmap, frame.film.ray_counts()) {
            let map = work_map(&counts, scene.width, scene.height);
            staged
                .png(path, map.width, map.height, &map.rgb)
                .map_err(|e| write_error(path, &e))?;
            written.push(format!("{} (work map)", path.display()));
            report.work_map = Some(WorkMapReport {
                min_rays_per_pixel: map.min,
                max_rays_per_pixel: map.max,
            });
        }
        if let Some(path) = &args.stats {
            staged
                .text(path, &report.to_json())
                .map_err(|e| write_error(path, &e))?;
            written.push(format!("{} (stats)", path.display()));
        }
        staged.commit()?;
        if args.json {
            out!("{}", report.to_json());
        } else if !args.quiet {
            out!("{report}");
            outln!("wrote   {}", written.join(", "));
        }
        Ok(())
    }
}

/// Renders `job`; on the CPU and on a terminal, with a bar of the pixels traced once it takes
/// a second.
fn render_with_progress(
    scene: &Arc<Scene>,
    job: FrameJob,
    gpu: Option<Arc<Gpu>>,
    quiet: bool,
) -> Result<Frame> {
    if job.device() != DeviceKind::Cpu || !Progress::can_show(quiet) {
        return job
            .render(scene, gpu.as_deref())
            .map_err(|e| match job.device() {
                DeviceKind::Hybrid => anyhow!("--device hybrid: {e}"),
                _ => e,
            });
    }
    let live = LiveFrame::start(Arc::clone(scene), job, None)?;
    let pixels = u64::from(scene.width) * u64::from(scene.height);
    let mut progress = Progress::new(pixels, "pixels", quiet);
    while !live.is_finished() {
        progress.set(live.watch().pixels_done());
        std::thread::sleep(Duration::from_millis(20));
    }
    progress.finish();
    live.finish()
}

fn write_error(path: &Path, e: &std::io::Error) -> anyhow::Error {
    anyhow!("cannot write {}: {}", path.display(), io_reason(e))
}
