//! `raylb validate`: the byte-compare matrix of the determinism contract, at full size.

use std::num::NonZeroUsize;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use balancers::{BalancerKind, Choice};
use renderer::accel::{AccelKind, Packets};
use renderer::device::FrameJob;
use renderer::file_errors::io_reason;
use renderer::frame::Frame;
use renderer::gpu::{Gpu, GpuBalancer};
use renderer::output::{ExrPrecision, ImageFormat, StagedFiles};
use renderer::render::{CpuBalancer, FrameExtras};
use renderer::scene::Scene;
use renderer::stats::counted;
use renderer::validate::{SameSums, Verdict};

use crate::cli::{SceneArgs, ValidateArgs};
use crate::outputs::{Outputs, image_format};

pub(crate) fn run(args: &ValidateArgs) -> Result<ExitCode> {
    let outputs = check_outputs(args)?;
    let plan = Plan::new(args)?;
    let gpu = open_gpu(args)?;
    // Warnings go to standard error, out of the JSON's way: only --quiet silences them.
    let first = SceneArgs {
        accel: Some(plan.accels[0]),
        ..args.scene.clone()
    };
    let mut scene = first.load(&args.source, args.quiet)?;
    outputs.check_inputs(&scene.inputs)?;
    check_memory(args, &plan, &scene)?;
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
    let runs = plan.matrix.runs();
    // The widest label the matrix will print, so that every line's columns line up.
    let label_width = plan
        .accels
        .iter()
        .flat_map(|&accel| plan.packets(accel).into_iter().map(move |p| (accel, p)))
        .flat_map(|(accel, packets)| runs.iter().map(move |run| run_label(accel, packets, run)))
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    let mut matrix = Matrix {
        output: args.output.as_deref(),
        sums: SameSums::default(),
        staged: None,
        runs: Vec::new(),
        lines,
        label_width,
    };
    for (k, &accel) in plan.accels.iter().enumerate() {
        if k > 0 {
            scene = scene
                .with_accel(accel)?
                .expect("--accels names each structure once");
        }
        for (variant, packets) in plan.packets(accel).into_iter().enumerate() {
            scene.packets = packets;
            for run in &runs {
                // The GPU traces each ray on its own: its frames are rendered once a structure.
                let on_gpu = matches!(run, FrameJob::Gpu(_));
                if on_gpu && variant > 0 {
                    continue;
                }
                let frame = run.render(&scene, gpu.as_ref()).map_err(|e| match run {
                    FrameJob::Hybrid(_) => anyhow!("--hybrid: {e}"),
                    _ => e,
                })?;
                matrix.check(run_label(accel, packets, run), &frame)?;
            }
        }
    }
    matrix.finish(args, &scene)
}

/// A run's line label: the structure, `+packets` where the CPU traces packets (the GPU
/// traces each ray on its own), then the run.
fn run_label(accel: AccelKind, packets: Packets, run: &FrameJob) -> String {
    let packets = match (packets, run) {
        (Packets::On, FrameJob::Gpu(_)) | (Packets::Off, _) => "",
        (Packets::On, _) => "+packets",
    };
    format!("{}{packets} {}", accel.name(), run.label())
}

/// Checks `-o` before any work: writable, not an input, a format raylb writes.
fn check_outputs(args: &ValidateArgs) -> Result<Outputs> {
    let mut outputs = Outputs::new();
    outputs.add("-o", args.output.as_deref()).writes_to_stdout(
        if args.json {
            "--json"
        } else {
            "the matrix's lines (leave them out with -q)"
        },
        !args.quiet,
    );
    outputs.check_writable()?;
    outputs.check_inputs(&args.source.paths())?;
    if let Some(path) = &args.output {
        image_format("-o", path)?;
    }
    Ok(outputs)
}

/// The GPU of `--gpu` or `--hybrid`, opened before any work so that a missing one is said
/// first.
fn open_gpu(args: &ValidateArgs) -> Result<Option<Gpu>> {
    Ok(match (args.gpu, args.hybrid) {
        (true, _) => Some(args.gpu_source.open_for("--gpu")?),
        (false, true) => Some(args.gpu_source.open_for("--hybrid needs an NVIDIA GPU")?),
        (false, false) if args.gpu_source.gpu_emulator => {
            bail!("--gpu-emulator runs the GPU's kernels: give --gpu or --hybrid as well")
        }
        (false, false) => None,
    })
}

/// Refuses a matrix whose frames would not fit in memory, before the first.
fn check_memory(args: &ValidateArgs, plan: &Plan, scene: &Scene) -> Result<()> {
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
            .map(|&a| a.bytes_per_triangle() * scene.stats.triangles as u64)
            .max()
            .unwrap_or(0),
        reduced: false,
    };
    for job in plan.matrix.runs() {
        args.scene.check_job(scene, &job, extras)?;
    }
    Ok(())
}

/// What the command line asks to validate: the structures, each rendered with every run of
/// the library's matrix, with and without packets where it traces them.
struct Plan {
    /// The structures, each rendered with every balancer.
    accels: Vec<AccelKind>,
    /// `--packets`: only with or only without packets.
    packets: Option<Packets>,
    matrix: renderer::validate::Plan,
}

impl Plan {
    /// How many frames the validation renders: each structure's runs with each of its packet
    /// settings, the GPU's once.
    fn renders(&self) -> usize {
        let gpu = self.matrix.gpu.len() * self.matrix.tiles.len();
        let per_structure = self.matrix.renders_per_structure();
        self.accels
            .iter()
            .map(|&a| per_structure + (self.packets(a).len() - 1) * (per_structure - gpu))
            .sum()
    }

    /// The packet settings `accel` is rendered with: the one asked for where it applies,
    /// else both where the structure traces packets.
    fn packets(&self, accel: AccelKind) -> Vec<Packets> {
        match (self.packets, accel.traces_packets()) {
            (_, false) => vec![Packets::Off],
            (Some(packets), true) => vec![packets],
            (None, true) => vec![Packets::On, Packets::Off],
        }
    }

    /// Every variant of the balancers named (all when none are), refusing a balancer that
    /// cannot run on the devices chosen and a matrix with nothing to compare.
    fn new(args: &ValidateArgs) -> Result<Self> {
        if args.scene.accel.is_some() {
            bail!("--accel: validate compares structures; name them with --accels wide,octree");
        }
        let accels = args
            .accels
            .clone()
            .unwrap_or_else(|| vec![AccelKind::Wide, AccelKind::Octree]);
        let kinds: Vec<AccelKind> = accels.to_vec();
        args.scene.check_structure_options(&kinds)?;

        let named = |family: &str| {
            args.balancers
                .as_ref()
                .is_none_or(|list| list.iter().any(|&b| b.keyword() == family))
        };
        let registered = renderer::user_balancer::registered().iter().copied();
        let cpu: Vec<CpuBalancer> = BalancerKind::every_variant()
            .into_iter()
            .map(CpuBalancer::Builtin)
            .chain(registered.map(CpuBalancer::User))
            .filter(|b| named(b.family()))
            .collect();
        let named_for_gpu = |family: &str| match &args.gpu_balancers {
            Some(list) => list.iter().any(|&b| b.keyword() == family),
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
            && list.contains(&renderer::device::BalancerName::CudaManaged)
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
        let matrix = renderer::validate::Plan {
            cpu,
            threads,
            tiles: args.tiles.clone(),
            hybrid: args.hybrid,
            gpu,
        };
        let plan = Self {
            packets: args.scene.packets,
            accels,
            matrix,
        };
        renderer::validate::Plan::check_compares(plan.renders())?;
        Ok(plan)
    }
}

/// The renders so far, each against the first, as the command line reports them.
struct Matrix<'a> {
    output: Option<&'a Path>,
    sums: SameSums,
    /// The first render's image, written to `output` and put in place at the end.
    staged: Option<StagedFiles>,
    /// One JSON object per render so far.
    runs: Vec<serde_json::Value>,
    /// Print a line per render.
    lines: bool,
    /// The width of the label column.
    label_width: usize,
}

impl Matrix<'_> {
    /// Compares `frame` with the reference (or makes it the reference) and prints one line:
    /// label, time, speed, and on a GPU the SIMT efficiency and steals, then the verdict.
    fn check(&mut self, label: String, frame: &Frame) -> Result<()> {
        let verdict = self.sums.check(&label, &frame.film);
        if let (Verdict::Reference, Some(path)) = (&verdict, self.output) {
            let mut staged = StagedFiles::new();
            staged
                .frame(path, &frame.film, ExrPrecision::Float)
                .map_err(|e| anyhow!("cannot write {}: {}", path.display(), io_reason(&e)))?;
            self.staged = Some(staged);
        }
        let (verdict, differing_pixels) = match verdict {
            Verdict::Reference => ("reference".to_string(), 0),
            Verdict::Identical => ("identical".to_string(), 0),
            Verdict::Differs { first, pixels } => (
                format!(
                    "DIFFERS from {first} in {}",
                    counted(pixels as u64, "pixel")
                ),
                pixels,
            ),
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
                "{label:<width$} {:>8.3} s {:>9.1} Mrays/s{device}  {verdict}",
                frame.wall().as_secs_f64(),
                frame.mrays_per_second(),
                width = self.label_width,
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

    /// Puts the reference image in place (only once every render has run) and reports the
    /// matrix: a summary line, or the JSON of every render; exit code 1 if any differs.
    fn finish(self, args: &ValidateArgs, scene: &Scene) -> Result<ExitCode> {
        let differing = self.sums.differing();
        let runs = self.runs;
        if let (Some(_), Some(staged)) = (&args.output, self.staged) {
            staged.commit()?;
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
        } else if self.lines {
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
}
