//! `raylb validate`: the byte-compare matrix of the determinism contract, at full size.

use std::num::NonZeroUsize;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use balancers::{Balancer, BalancerKind};
use renderer::accel::AccelKind;
use renderer::file_errors::io_reason;
use renderer::gpu::{GpuBalancer, GpuOptions, GpuTiles, render_gpu};
use renderer::hybrid::{HybridOptions, render_hybrid};
use renderer::output::{ExrPrecision, ImageFormat, StagedFiles};
use renderer::render::{Frame, FrameExtras, FrameMemory, RenderOptions, render};
use renderer::stats::counted;

use crate::cli::{AccelName, BalancerName, SceneArgs, ValidateArgs, name_of, threads};
use crate::outputs::{Outputs, image_format};

pub(crate) fn run(args: &ValidateArgs) -> Result<ExitCode> {
    let mut outputs = Outputs::new();
    outputs.add("-o", args.output.as_deref());
    outputs.check_writable()?;
    outputs.check_inputs(&args.source.paths())?;
    if let Some(path) = &args.output {
        image_format("-o", path)?;
    }
    let plan = Plan::new(args)?;
    // A missing GPU is reported before any work.
    let gpu = match (args.gpu, args.hybrid) {
        (true, _) => Some(args.gpu_source.open().map_err(|e| anyhow!("--gpu: {e}"))?),
        (false, true) => Some(
            args.gpu_source
                .open()
                .map_err(|e| anyhow!("--hybrid needs an NVIDIA GPU: {e}"))?,
        ),
        (false, false) => None,
    };
    // Warnings go to standard error, out of the JSON's way: only --quiet silences them.
    let first = SceneArgs {
        accel: Some(plan.accels[0]),
        ..args.scene.clone()
    };
    let mut scene = first.load(&args.source, args.quiet)?;
    outputs.check_inputs(&scene.inputs)?;
    let variants = plan.cpu;
    let extras = FrameExtras {
        hdr: args
            .output
            .as_deref()
            .is_some_and(|p| ImageFormat::of(p) != Ok(ImageFormat::Png)),
        window: false,
        reference: true,
        // Each further structure is built while the one before it is still there.
        another_structure: plan.accels[1..]
            .iter()
            .map(|&a| AccelKind::from(a).bytes_per_triangle() * scene.stats.triangles as u64)
            .max()
            .unwrap_or(0),
        reduced: false,
    };
    args.scene
        .check_frames(&scene, &variants, &plan.threads, &args.tiles, extras)?;
    if gpu.is_some() {
        if args.gpu {
            let memory = FrameMemory::estimate_gpu(&scene, false, extras);
            args.scene.check_memory(&scene, &memory)?;
        }
        if args.hybrid {
            for &t in &plan.threads {
                for &tile in &args.tiles {
                    let memory = FrameMemory::estimate_hybrid(&scene, &hybrid(t, tile), extras);
                    args.scene.check_memory(&scene, &memory)?;
                }
            }
        }
    }
    let lines = !args.quiet && !args.json;
    if lines {
        outln!(
            "{}: {}×{}, {}",
            scene.name,
            scene.width,
            scene.height,
            counted(scene.stats.triangles as u64, "triangle")
        );
    }
    let mut matrix = Matrix {
        output: args.output.as_deref(),
        reference: None,
        staged: None,
        runs: Vec::new(),
        differing: 0,
        lines,
    };
    for (k, &accel) in plan.accels.iter().enumerate() {
        if k > 0 {
            scene = scene
                .with_accel(accel.into())?
                .expect("--accels names each structure once");
        }
        let name = AccelKind::from(accel).name();
        for b in &variants {
            for &t in &plan.threads {
                for &tile in &args.tiles {
                    let options = RenderOptions {
                        balancer: *b,
                        threads: threads(Some(t)),
                        tile,
                        work_map: false,
                    };
                    let frame = render(&scene, &options)?;
                    let label = format!("{name} {} threads={t} tile={tile}", b.name());
                    matrix.check(label, &frame)?;
                }
            }
        }
        // The CPU's workers and the GPU together, both in this structure.
        if let (Some(gpu), true) = (&gpu, args.hybrid) {
            for &t in &plan.threads {
                for &tile in &args.tiles {
                    let options = hybrid(t, tile);
                    let device = GpuTiles::new(gpu, &scene, tile, false)
                        .map_err(|e| anyhow!("--hybrid: {e}"))?;
                    let frame = render_hybrid(&scene, &options, vec![device])?;
                    let label =
                        format!("{name} {} threads={t} tile={tile}", options.balancer.name());
                    matrix.check(label, &frame)?;
                }
            }
        }
        if let (Some(gpu), true) = (&gpu, args.gpu) {
            for &balancer in &plan.gpu {
                for &tile in &args.tiles {
                    let options = GpuOptions {
                        balancer,
                        tile,
                        work_map: false,
                        max_warps: None,
                    };
                    let frame = render_gpu(gpu, &scene, &options)?;
                    matrix.check(format!("{name} {} tile={tile}", balancer.name()), &frame)?;
                }
            }
        }
    }
    let Matrix {
        runs,
        differing,
        staged,
        ..
    } = matrix;
    // The reference image goes in place only once every render has run.
    if let (Some(path), Some(staged)) = (&args.output, staged) {
        staged
            .commit()
            .map_err(|e| anyhow!("cannot write {}: {}", path.display(), io_reason(&e)))?;
    }
    if args.json {
        let report = serde_json::json!({
            "scene": scene.name,
            "width": scene.width,
            "height": scene.height,
            "renders": runs.len(),
            "differing": differing,
            "identical": differing == 0,
            "runs": runs,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).expect("plain values serialise")
        );
    } else if lines {
        if differing == 0 {
            outln!("all {} renders identical", runs.len());
        } else {
            outln!("{differing} of {} renders differ", runs.len());
        }
    }
    Ok(if differing == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A hybrid frame's settings at `threads` CPU workers and tiles of `tile`: the CPU side
/// stealing as `stealing` does by default.
fn hybrid(threads: NonZeroUsize, tile: std::num::NonZeroU32) -> HybridOptions {
    HybridOptions {
        balancer: balancers::HybridStealing::default(),
        threads,
        tile,
        work_map: false,
    }
}

/// The balancers a validation runs, each at every thread count (CPU) and tile edge given.
struct Plan {
    /// The structures, each rendered with every balancer.
    accels: Vec<AccelName>,
    cpu: Vec<BalancerKind>,
    /// The thread counts of the CPU balancers.
    threads: Vec<NonZeroUsize>,
    gpu: Vec<GpuBalancer>,
}

impl Plan {
    /// Every variant of the balancers named (all when none are), refusing a balancer that
    /// cannot run on the devices chosen and a matrix with nothing to compare.
    fn new(args: &ValidateArgs) -> Result<Self> {
        if args.scene.accel.is_some() {
            bail!("--accel: validate compares structures; name them with --accels wide,octree");
        }
        let accels = args
            .accels
            .clone()
            .unwrap_or_else(|| vec![AccelName::Wide, AccelName::Octree]);
        let kinds: Vec<AccelKind> = accels.iter().map(|&a| a.into()).collect();
        args.scene.check_structure_options(&kinds)?;

        let mut seen = Vec::new();
        for &a in &accels {
            if seen.contains(&a) {
                bail!("--accels names {} twice", AccelKind::from(a).name());
            }
            seen.push(a);
        }
        let named = |family: &str| {
            args.balancers
                .as_ref()
                .is_none_or(|list| list.iter().any(|&b| name_of(b) == family))
        };
        let cpu: Vec<BalancerKind> = BalancerKind::every_variant()
            .into_iter()
            .filter(|b| named(b.family()))
            .collect();
        let named_for_gpu = |family: &str| match &args.gpu_balancers {
            Some(list) => list.iter().any(|&b| name_of(b) == family),
            None => named(family),
        };
        let gpu: Vec<GpuBalancer> = if args.gpu {
            GpuBalancer::EVERY
                .into_iter()
                .filter(|b| named_for_gpu(b.family()))
                .collect()
        } else {
            Vec::new()
        };
        if let Some(list) = &args.balancers
            && list.contains(&BalancerName::CudaManaged)
            && !args.gpu
        {
            bail!("--balancers: cuda-managed runs only on the GPU; add --gpu to validate it");
        }
        if args.gpu && gpu.is_empty() && (args.balancers.is_some() || args.gpu_balancers.is_some())
        {
            bail!(
                "--gpu: none of the balancers given runs on the GPU (rayon runs on the CPU alone)"
            );
        }
        if cpu.is_empty() && !args.hybrid && args.threads.is_some() {
            bail!("--threads applies to the CPU's balancers, and none of those given runs there");
        }
        let threads = args.threads.clone().unwrap_or_else(|| {
            [1, 2, 3, 8, 32]
                .map(|t| NonZeroUsize::new(t).expect("not 0"))
                .to_vec()
        });
        let hybrid = if args.hybrid { threads.len() } else { 0 };
        let renders = accels.len() * cpu.len() * threads.len() * args.tiles.len()
            + accels.len() * (gpu.len() + hybrid) * args.tiles.len();
        if renders < 2 {
            bail!(
                "nothing to compare: these balancers, thread counts and tile edges make {renders} render{}; validation needs at least two",
                if renders == 1 { "" } else { "s" }
            );
        }
        Ok(Self {
            accels,
            cpu,
            threads,
            gpu,
        })
    }
}

/// The renders so far, against the first.
struct Matrix<'a> {
    output: Option<&'a Path>,
    /// The first render's label and fixed-point sums.
    reference: Option<(String, Vec<[u64; 3]>)>,
    /// The first render's image, written to `output` and put in place at the end.
    staged: Option<StagedFiles>,
    /// One JSON object per render so far.
    runs: Vec<serde_json::Value>,
    differing: usize,
    /// Print a line per render.
    lines: bool,
}

impl Matrix<'_> {
    /// Compares `frame` with the reference (or makes it the reference) and prints one line:
    /// label, time, speed, and on a GPU the SIMT efficiency and steals, then the verdict.
    ///
    /// The fixed-point sums themselves are compared: every image format (the PNG's 8-bit
    /// codes, the EXR's and PFM's floats) is resolved from them, so equal sums are equal files
    /// in all of them.
    fn check(&mut self, label: String, frame: &Frame) -> Result<()> {
        let mut differing_pixels = 0;
        let verdict = match &self.reference {
            None => {
                if let Some(path) = self.output {
                    let mut staged = StagedFiles::new();
                    staged
                        .frame(path, &frame.film, ExrPrecision::Float)
                        .map_err(|e| {
                            anyhow!("cannot write {}: {}", path.display(), io_reason(&e))
                        })?;
                    self.staged = Some(staged);
                }
                self.reference = Some((label.clone(), frame.film.sums()));
                "reference".to_string()
            }
            Some((first, want)) => {
                // Pixel by pixel against the film itself: no second copy of the sums.
                differing_pixels = want
                    .iter()
                    .enumerate()
                    .filter(|&(i, w)| frame.film.pixel_sums(i) != *w)
                    .count();
                if differing_pixels == 0 {
                    "identical".to_string()
                } else {
                    self.differing += 1;
                    format!(
                        "DIFFERS from {first} in {}",
                        counted(differing_pixels as u64, "pixel")
                    )
                }
            }
        };
        let device = frame.device.as_ref().map_or_else(String::new, |d| {
            format!(
                "  simt {:>5.1}%  steals {:>9}",
                d.simt_efficiency * 100.0,
                frame.telemetry.total_steals()
            )
        });
        if self.lines {
            outln!(
                "{label:<48} {:>8.3} s {:>9.1} Mrays/s{device}  {verdict}",
                frame.wall().as_secs_f64(),
                frame.mrays_per_second()
            );
        }
        self.runs.push(serde_json::json!({
            "run": label,
            "seconds": frame.wall().as_secs_f64(),
            "mrays_per_second": frame.mrays_per_second(),
            "steals": frame.telemetry.total_steals(),
            "simt_efficiency": frame.device.as_ref().map(|d| d.simt_efficiency),
            "differing_pixels": differing_pixels,
            "verdict": verdict,
        }));
        Ok(())
    }
}
