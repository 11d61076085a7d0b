//! `raylb render`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use balancers::{BalancerKind, RayonScope};
use renderer::file_errors::io_reason;
use renderer::frame::Frame;
use renderer::gpu::{Gpu, GpuOptions, GpuTiles, render_gpu};
use renderer::hybrid::{HybridOptions, render_hybrid};
use renderer::live::{FrameJob, LiveFrame};
use renderer::output::{ExrPrecision, ImageFormat, StagedFiles};
use renderer::render::{FrameExtras, FrameMemory, RenderOptions, render};
use renderer::scene::Scene;
use renderer::stats::{RenderReport, WorkMapReport};
use renderer::workmap::work_map;

use crate::cli::{DeviceName, GpuSource, RenderArgs};
use crate::outputs::{Outputs, image_format, png_only};
use crate::terminal::quiet_rank;
use experiments::progress::Progress;

/// `raylb render` on one machine (`--cluster` goes to `cluster::run`).
pub(crate) fn run(args: &RenderArgs) -> Result<ExitCode> {
    if args.cluster_chunk.is_some() {
        bail!("--cluster-chunk applies to --cluster counter");
    }
    let mut plan = OutputPlan::check(args)?;
    let scene_args = args.scene.for_device(args.run.device);
    scene_args.check_structure_options(&[scene_args.accel_kind()])?;
    // The device and balancer are checked before the scene is loaded: a missing GPU is
    // reported at once.
    let device = match args.run.device {
        DeviceName::Cpu => Device::Cpu(cpu_options(args)?),
        DeviceName::Gpu => {
            let balancer = args.run.gpu_balancer()?;
            let gpu = open_gpu(&args.gpu_source)?;
            let options = GpuOptions {
                balancer,
                tile: args.run.tile,
                work_map: args.workmap.is_some(),
                max_warps: None,
            };
            Device::Gpu(Box::new(gpu), options)
        }
        DeviceName::Hybrid => {
            let balancer = args.run.hybrid_balancer()?;
            let gpu = args
                .gpu_source
                .open()
                .map_err(|e| anyhow!("--device hybrid needs an NVIDIA GPU: {e}"))?;
            let options = HybridOptions {
                balancer,
                threads: args.run.hybrid_threads(),
                tile: args.run.tile,
                work_map: args.workmap.is_some(),
            };
            Device::Hybrid(Box::new(gpu), options)
        }
    };
    let quiet = args.quiet || args.json;
    let scene = Arc::new(scene_args.load_reporting(&args.source, quiet, args.quiet)?);
    plan.check_scene(&scene)?;
    match &device {
        Device::Cpu(options) => args.scene.check_frame(&scene, options, plan.extras())?,
        Device::Gpu(_, options) => {
            let memory = FrameMemory::estimate_gpu(&scene, options.work_map, plan.extras());
            args.scene.check_memory(&scene, &memory)?;
        }
        Device::Hybrid(_, options) => {
            let memory = FrameMemory::estimate_hybrid(&scene, options, plan.extras());
            args.scene.check_memory(&scene, &memory)?;
        }
    }
    let frame = match &device {
        Device::Cpu(options) => render_with_progress(&scene, options, quiet)?,
        Device::Gpu(gpu, options) => render_gpu(gpu, &scene, options)?,
        Device::Hybrid(gpu, options) => {
            let device = GpuTiles::new(gpu, &scene, options.tile, options.work_map)
                .map_err(|e| anyhow!("--device hybrid: {e}"))?;
            render_hybrid(&scene, options, vec![device])?
        }
    };
    let report = RenderReport::new(&scene, args.run.tile.get(), &frame);
    plan.write(args, &scene, &frame, report)?;
    Ok(ExitCode::SUCCESS)
}

/// The CPU render's options, from the command line. Unless --quiet, says in a warning line
/// where the balancer starts fewer threads than --threads asks for.
pub(crate) fn cpu_options(args: &RenderArgs) -> Result<RenderOptions> {
    let options = RenderOptions {
        balancer: args.run.balancer()?,
        threads: args.run.threads(),
        tile: args.run.tile,
        work_map: args.workmap.is_some(),
    };
    let most = RayonScope::max_workers();
    if let BalancerKind::Rayon(_) = options.balancer
        && options.threads > most
        && !args.quiet
        && !quiet_rank()
    {
        errln!(
            "raylb: warning: --balancer rayon starts {most} threads, not {}: each idle rayon worker searches every other's queue before it sleeps, which with thousands of threads takes seconds to minutes",
            options.threads
        );
    }
    Ok(options)
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
            .add("--stats", args.stats.as_deref());
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
        staged
            .frame(output, &frame.film, self.precision)
            .map_err(|e| write_error(output, &e))?;
        if let (Some(path), Some(counts)) = (&args.workmap, frame.film.ray_counts()) {
            let map = work_map(&counts, scene.width, scene.height);
            staged
                .png(path, map.width, map.height, &map.rgb)
                .map_err(|e| write_error(path, &e))?;
            report.work_map = Some(WorkMapReport {
                min_rays_per_pixel: map.min,
                max_rays_per_pixel: map.max,
            });
        }
        if let Some(path) = &args.stats {
            staged
                .text(path, &report.to_json())
                .map_err(|e| write_error(path, &e))?;
        }
        staged
            .commit()
            .map_err(|e| anyhow!("cannot put the outputs in place: {}", io_reason(&e)))?;
        if args.json {
            out!("{}", report.to_json());
        } else if !args.quiet {
            out!("{report}");
            outln!("wrote   {}", output.display());
        }
        Ok(())
    }
}

/// Renders on the CPU; on a terminal, with a bar of the pixels traced once it takes a
/// second.
fn render_with_progress(scene: &Arc<Scene>, options: &RenderOptions, quiet: bool) -> Result<Frame> {
    if !Progress::can_show(quiet) {
        return Ok(render(scene, options)?);
    }
    let live = LiveFrame::start(Arc::clone(scene), FrameJob::Cpu(*options))?;
    let pixels = u64::from(scene.width) * u64::from(scene.height);
    let mut progress = Progress::new(pixels, "pixels", quiet);
    while !live.is_finished() {
        progress.set(live.watch().pixels_done());
        std::thread::sleep(Duration::from_millis(20));
    }
    progress.finish();
    live.finish()
}

/// Where `raylb render` traces.
enum Device {
    Cpu(RenderOptions),
    Gpu(Box<Gpu>, GpuOptions),
    Hybrid(Box<Gpu>, HybridOptions),
}

/// Opens the GPU for `--device gpu` (or the emulator, with --gpu-emulator), saying which part
/// is missing when it cannot.
pub(crate) fn open_gpu(source: &GpuSource) -> Result<Gpu> {
    source.open().map_err(|e| anyhow!("--device gpu: {e}"))
}

fn write_error(path: &Path, e: &std::io::Error) -> anyhow::Error {
    anyhow!("cannot write {}: {}", path.display(), io_reason(e))
}
