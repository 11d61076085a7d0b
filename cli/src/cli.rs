//! The command line: every subcommand and flag, with its help text.

use std::io::{self, Write};
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use balancers::{Assignment, DequeKind, FirstBatch, Order, StealAmount, VictimPolicy};
use clap::{Args, Parser, Subcommand, ValueEnum};
use renderer::accel::{AccelKind, Packets};
use renderer::bvh::{BvhSplit, Width};
use renderer::device::{BalancerName, BalancerRequest, DeviceKind, FrameJob, Schedule};
use renderer::gpu::{EmulatorOptions, Gpu, GpuError};
use renderer::memory::Budget;
use renderer::preview::Layer;
use renderer::ray_file::FrameRays;
use renderer::render::{CpuBalancer, FrameExtras, RenderOptions};
use renderer::scene::{
    AxisDirection, LoadObserver, MeshFraming, Scene, SceneOverrides, SceneTriangles,
};

use crate::choice::{choice, choice_where};
use crate::progress::LoadProgress;
use crate::terminal::StdoutError;

/// A Whitted ray tracer whose secondary rays are tasks, driven by interchangeable load
/// balancers; every balancer writes the same bytes for the same scene.
#[derive(Debug, Parser)]
#[command(
    name = "raylb",
    version,
    after_help = "Examples:
  raylb render scenes/cornell.toml -o cornell.png
  raylb render scenes/treasure.toml --balancer counter --threads 2 --tile 32 --stats run.json
  raylb render scenes/treasure.toml --device gpu --balancer stealing --width 2048 --height 2048
  raylb render --mesh bunny.obj -o bunny.png --workmap bunny-work.png
  raylb view scenes/treasure.toml --width 512 --height 512
  raylb scenes
  raylb compare a.png b.png --diff where.png
  raylb validate scenes/quick.toml
  raylb validate scenes/cornell.toml --balancers static --threads 16 --gpu
  raylb bench trace --mesh bunny.obj --threads 1"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

impl Cli {
    /// The process's command line, parsed, with every list of values checked for repeats
    /// ([`refuse_repeated_values`]).
    pub(crate) fn parse_args() -> Result<Self, clap::Error> {
        Self::parse_args_from(std::env::args_os())
    }

    /// [`parse_args`](Self::parse_args) of `args`, the program's name first.
    pub(crate) fn parse_args_from<I>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator,
        I::Item: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        let mut command = Self::command();
        let matches = command.try_get_matches_from_mut(args)?;
        refuse_repeated_values(&command, &matches)?;
        Self::from_arg_matches(&matches)
    }
}

/// Flags whose values may repeat: each occurrence is a word passed on, not an item to run.
const REPEATABLE: [&str; 2] = [
    // An argument for the MPI launcher (`-x` before each variable it exports).
    "mpirun_arg",
    // The words of a subcommand's name (`man bench sweep`).
    "command",
];

/// Refuses a value given twice to a flag that takes a list (`--workers 4,4`, `--balancers
/// static,static`, two scene files the same), in `matches` and its subcommands: each value is
/// a row, a column or a run of its own, and a repeat would measure, print and plot it twice
/// as if it were two. Values are compared as written, numbers by their value (`4` and `04`),
/// and files by where they are (`a.toml` and `./a.toml`). (A `--unit-cost` repeated as
/// written is refused here; one name given two costs, by `sim` itself.)
fn refuse_repeated_values(
    command: &clap::Command,
    matches: &clap::ArgMatches,
) -> Result<(), clap::Error> {
    use clap::parser::ValueSource;
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if !matches!(arg.get_action(), clap::ArgAction::Append)
            || REPEATABLE.contains(&id)
            || matches.value_source(id) != Some(ValueSource::CommandLine)
        {
            continue;
        }
        let Some(values) = matches.get_raw(id) else {
            continue;
        };
        let is_path = arg.get_value_parser().type_id() == std::any::TypeId::of::<PathBuf>();
        let mut seen: Vec<(String, String)> = Vec::new();
        for value in values {
            let text = value.to_string_lossy();
            let key = match (text.parse::<u128>(), is_path) {
                (Ok(number), false) => number.to_string(),
                (_, true) => std::fs::canonicalize(value)
                    .map_or_else(|_| text.to_string(), |p| p.to_string_lossy().into_owned()),
                (Err(_), false) => text.to_string(),
            };
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                let flag = match (arg.get_long(), arg.get_value_names()) {
                    (Some(long), _) => format!("--{long}"),
                    (None, Some([name, ..])) => name.to_string(),
                    (None, _) => id.to_uppercase(),
                };
                let spelled = if *first == text {
                    String::new()
                } else {
                    format!(" (first as {first})")
                };
                return Err(command.clone().error(
                    clap::error::ErrorKind::ValueValidation,
                    format!("{flag}: {text} is given twice{spelled}"),
                ));
            }
            seen.push((key, text.into_owned()));
        }
    }
    match matches.subcommand() {
        Some((name, sub_matches)) => {
            let sub_command = command
                .find_subcommand(name)
                .expect("clap matched a subcommand of this command");
            refuse_repeated_values(sub_command, sub_matches)
        }
        None => Ok(()),
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Render a scene file (or a bare OBJ or PLY mesh) to an image (PNG, OpenEXR or PFM) and
    /// report what it took.
    #[command(after_help = "Examples:
  raylb render scenes/cornell.toml -o cornell.png
  raylb render scenes/treasure.toml --balancer stealing --victim sample --threads 8 --tile 64
  raylb render scenes/treasure.toml --stats run.json --workmap work.png
  raylb render scenes/quick.toml --json | jq .render.mrays_per_second
  raylb render scenes/treasure.toml --device gpu --balancer cuda-managed --tile 16
  mpirun -np 4 raylb render scenes/treasure.toml --cluster stealing --threads 4 -o t.png
  raylb render --mesh bunny.obj --width 800 --height 600 -o bunny.png
  raylb render --mesh bun_zipper.ply -o bunny.png")]
    Render(RenderArgs),
    /// Compare two images pixel by pixel (PNG, OpenEXR or PFM, at their native depth): exit 0
    /// if identical, 1 if they differ (in size or in any pixel), 2 on an error.
    #[command(
        after_help = "Prints `identical: W×H` or `differ: ...` (how many pixels, the largest \
channel difference, the first differing pixel) and then the MSE, the PSNR and the largest \
difference with full scale as 1. An integer image (PNG) against a float one (OpenEXR, PFM) \
compares each code over full scale with the value: raylb's PNGs hold sRGB-encoded codes and its \
OpenEXR and PFM files linear values, so one render written both ways differs.

Examples:
  raylb compare cpu.png gpu.png && echo same bytes
  raylb compare reference.exr render.pfm --diff where.png
  raylb compare huge-a.png huge-b.png --max-memory 4G"
    )]
    Compare(CompareArgs),
    /// Render one scene with every balancer, thread count and tile size given and check
    /// that all write the same bytes: exit 0 if so, 1 if not.
    #[command(after_help = "Examples:
  raylb validate scenes/quick.toml
  raylb validate scenes/treasure.toml --balancers stealing --threads 2,32 --tiles 8,512
  raylb validate scenes/cornell.toml --gpu -o reference.png
  raylb validate scenes/quick.toml --json > matrix.json")]
    Validate(ValidateArgs),
    /// Open a window that shows the scene as it renders; move the camera and switch
    /// balancers, threads and tile size with the keyboard and mouse (keys: see below).
    #[command(after_help = VIEW_HELP)]
    View(ViewArgs),
    /// List the scenes shipped in scenes/, one line each.
    #[command(after_help = "Examples:
  raylb scenes
  raylb scenes my-scenes/")]
    Scenes(ScenesArgs),
    /// Record a frame's task tree for the simulator: every tile and every reflection and
    /// refraction ray, what each spawned and the work each did (box and triangle tests, shadow
    /// rays, rays), with a cost model fitted to one thread's times on this machine.
    #[command(
        after_help = "The tree is the frame's, not the balancer's: any --balancer and \
--threads record the same file, byte for byte, apart from the fitted model (which comes from \
a second run on one thread, timed).

Examples:
  raylb record scenes/treasure.toml -o treasure.tasks
  raylb record scenes/cornell.toml --width 256 --height 256 --tile 16 -o cornell.tasks"
    )]
    Record(RecordArgs),
    /// Write a scene's triangles in world space as a mesh (OBJ or binary PLY): the float bits
    /// the tracer uses, in its order, so that another tracer loads the very same geometry
    /// (and traces the rays of `raylb bench trace --dump` through it).
    #[command(after_help = "Examples:
  raylb export scenes/treasure.toml -o treasure.ply
  raylb export scenes/cornell.toml -o cornell.obj")]
    Export(ExportArgs),
    /// Replay a recorded frame (`raylb record`) under the CPU balancers' policies on simulated
    /// workers, 1 to thousands: makespan, speedup, efficiency, steals, idle share and peak
    /// outstanding tasks, as a table, CSV and an SVG chart. Or run Faxén and Ardelius's
    /// `tree` model (--wool-tree).
    #[command(
        after_help = "Deterministic: the same file and options give the same figures \
on any machine. Task times come from the file's cost model (--task-cost and --unit-cost \
override it); scheduling costs are the options from --steal-cost to --rayon-cost.

With --wool-tree, no file: the balanced binary tree of the Wool paper's simulation (depth \
log2(workers) + 2, leaves of 1 µs on average, exponentially distributed), stolen from one \
task at a time, with steal attempts and samples as Poisson processes (defaults: \
--steal-cost and --failed-steal-cost 1000, --probe-cost 500, --samples 2, the other costs \
0), averaged over --runs seeds; times are in leaf times.

Examples:
  raylb sim treasure.tasks
  raylb sim treasure.tasks --workers 16,64,256,1024 --balancers stealing --victim random,sample,set
  raylb sim cornell.tasks --workers 2 --balancers static,counter --chunk 1,4 --out sim/
  raylb sim treasure.tasks --workers 1,16,256 --order depth-first,breadth-first
  raylb sim --wool-tree --workers 2,4,8,16,32,64,128,256,512,1024 --out wool/"
    )]
    Sim(SimArgs),
    /// Benchmarks: tables on stdout, CSV and SVG plots in a folder.
    #[command(after_help = "Examples:
  raylb bench sweep --threads 2 --repeat 3
  raylb bench scaling scenes/treasure.toml --threads 1,2,4,8,16 --tile 64
  raylb bench deque --threads 4 --steal half
  raylb bench costs --rounds 9
  raylb bench sim-sweep scenes/treasure.toml --workers 16,64,256,1024
  raylb bench trace --mesh bunny.obj --threads 1 --repeat 10
  raylb bench cluster scenes/treasure.toml --workers 2 --ranks 2 --modes stealing --repeat 10")]
    Bench(BenchArgs),
    /// Print the completion script of a shell: subcommands, flags and their values complete
    /// at the Tab key.
    #[command(after_help = "Examples (each shell's own folder for completions):
  raylb completions bash > ~/.local/share/bash-completion/completions/raylb
  raylb completions zsh > ~/.zfunc/_raylb        (with fpath+=~/.zfunc before compinit)
  raylb completions fish > ~/.config/fish/completions/raylb.fish
  raylb completions elvish >> ~/.config/elvish/rc.elv
  raylb completions powershell >> $PROFILE")]
    Completions(CompletionsArgs),
    /// Print raylb's manual page (roff) or a subcommand's, or write them all to a folder.
    #[command(after_help = "Examples:
  raylb man | man -l -
  raylb man bench sweep | man -l -
  raylb man --out ~/.local/share/man/man1      (then: man raylb, man raylb-render)")]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// The subcommand whose page to print, e.g. `render` or `bench sweep` [default: raylb's
    /// own page, which lists the others].
    #[arg(value_name = "COMMAND", conflicts_with = "out")]
    pub(crate) command: Vec<String>,
    /// Write every page instead, one file each (raylb.1, raylb-render.1, raylb-bench-sweep.1,
    /// …), into this folder (made if missing).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

const VIEW_HELP: &str = "\
Keys:
  arrows       walk forward/back and sideways; PgUp/PgDn rise and sink
  left drag    turn; scroll or +/- zoom; R back to the scene's camera
  P            print the camera as a [camera] table to paste into a scene file
  A            switch the acceleration structure: wide / octree (the same image)
  B, Shift+B   next / previous balancer (every CPU variant; the GPU's where there is one)
  ], [         one thread more / less;  . and ,  double / halve the tile edge
  W            show image / work map (rays per pixel) / workers (who traced each pixel)
  S            save what the window shows as raylb-SCENE-NNN.png;  Space render again
  H            print these keys;  Esc, Q  quit

Examples:
  raylb view scenes/treasure.toml --width 512 --height 512 --balancer stealing --threads 4
  raylb view scenes/cornell.toml --layer workers --tile 64
  raylb view scenes/quick.toml --frames 3 --screenshot shot.png   (no input; for scripts)";

#[derive(Debug, Args)]
pub(crate) struct ViewArgs {
    #[command(flatten)]
    pub(crate) source: SceneSource,
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) gpu_source: GpuSource,
    /// What the window shows at first (W switches).
    #[arg(long, value_parser = choice::<Layer>(), default_value = "image")]
    pub(crate) layer: Layer,
    /// Render this many frames without reading input, write the last one as the window
    /// shows it to --screenshot, and exit.
    #[arg(long, value_name = "N", requires = "screenshot", value_parser = positive::<1000>)]
    pub(crate) frames: Option<NonZeroUsize>,
    /// With --frames: the PNG to write.
    #[arg(long, value_name = "FILE.png", requires = "frames")]
    pub(crate) screenshot: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ScenesArgs {
    /// The folder to list (default: ./scenes, else the scenes folder raylb was built with).
    pub(crate) dir: Option<PathBuf>,
}

/// Where the geometry comes from, and how a bare mesh is framed.
#[derive(Debug, Args)]
#[group(skip)]
pub(crate) struct SceneSource {
    #[command(flatten)]
    pub(crate) input: SceneInput,
    #[command(flatten)]
    pub(crate) framing: FramingArgs,
}

/// A scene file or a bare mesh: one of the two.
#[derive(Clone, Debug, Args)]
#[group(required = true, multiple = false)]
pub(crate) struct SceneInput {
    /// A scene file (TOML; docs/scenes.md describes the format).
    pub(crate) scene: Option<PathBuf>,
    /// A bare mesh (OBJ or PLY, told by the extension) instead of a scene: an automatic camera
    /// that frames it, one light above and to the left of the camera, no reflection or
    /// refraction.
    #[arg(long, value_name = "FILE.obj|FILE.ply")]
    pub(crate) mesh: Option<PathBuf>,
}

/// How the automatic camera frames a bare --mesh: only commands that take one have these.
#[derive(Clone, Debug, Default, Args)]
#[group(skip)]
pub(crate) struct FramingArgs {
    /// With --mesh: the mesh's up direction, which the automatic camera keeps up, `x`, `y`,
    /// `z` or `-x`, `-y`, `-z` [default: y] (scans and CAD often have z up).
    #[arg(long, value_name = "AXIS", value_parser = AxisDirection::parse, allow_hyphen_values = true)]
    pub(crate) up: Option<AxisDirection>,
    /// With --mesh: the direction the camera looks in, `+x`, `-x`, `+y`, `-y`, `+z` or `-z`
    /// [default: -z].
    #[arg(long, value_name = "AXIS", value_parser = AxisDirection::parse, allow_hyphen_values = true)]
    pub(crate) view: Option<AxisDirection>,
}

impl SceneSource {
    /// `input` with no framing flags, for a command that takes none.
    pub(crate) fn unframed(input: SceneInput) -> Self {
        Self {
            input,
            framing: FramingArgs::default(),
        }
    }

    /// The scene file `path`, as a benchmark that takes scene files alone loads it.
    pub(crate) fn file(path: &Path) -> Self {
        Self::unframed(SceneInput {
            scene: Some(path.to_path_buf()),
            mesh: None,
        })
    }
}

/// Where the GPU's kernels run: an NVIDIA GPU, or the warp emulator.
#[derive(Clone, Debug, Args)]
pub(crate) struct GpuSource {
    /// Run the GPU's kernels on the warp emulator, on this machine's CPU, instead of an NVIDIA
    /// GPU: the same kernels and host code, each thread a fiber switched at every atomic and
    /// collective in an order drawn from --emulator-seed. Its figures are the emulated
    /// schedule's; its times mean nothing. Needs a build with `--features gpu-emulator`.
    #[arg(long)]
    pub(crate) gpu_emulator: bool,
    /// With --gpu-emulator: blocks resident at once (four warps each) [default: 2].
    #[arg(long, value_name = "N", requires = "gpu_emulator", value_parser = positive::<64>)]
    pub(crate) emulator_blocks: Option<NonZeroUsize>,
    /// With --gpu-emulator: the scheduler's seed [default: 1].
    #[arg(long, value_name = "SEED", requires = "gpu_emulator")]
    pub(crate) emulator_seed: Option<u64>,
}

impl GpuSource {
    /// The GPU asked for: the emulator with --gpu-emulator, else device 0. NVRTC's warnings
    /// on compiling the kernels (from an NVRTC other than the one CI compiles with, where any
    /// warning fails) are printed, in one line, and do not stop the run.
    pub(crate) fn open(&self) -> Result<Gpu, GpuError> {
        if !self.gpu_emulator {
            let gpu = Gpu::open()?;
            if let Some(first) = gpu.compile_log().lines().find(|l| !l.trim().is_empty()) {
                errln!("raylb: NVRTC warned compiling the kernels: {first}");
            }
            return Ok(gpu);
        }
        let defaults = EmulatorOptions::default();
        Gpu::emulated(EmulatorOptions {
            blocks: self
                .emulator_blocks
                .map_or(defaults.blocks, |b| b.get() as u32),
            seed: self.emulator_seed.unwrap_or(defaults.seed),
            ..defaults
        })
    }

    /// [`open`](Self::open) for the flag `asked_by` (`--device gpu`, `--hybrid needs an NVIDIA
    /// GPU`…), whose error names that flag, or `--gpu-emulator` where it is the emulator that
    /// could not be had (a build without it): the flag the user is to change.
    pub(crate) fn open_for(&self, asked_by: &str) -> anyhow::Result<Gpu> {
        self.open().map_err(|e| self.failure(asked_by, &e))
    }

    /// The error of [`open_for`](Self::open_for).
    fn failure(&self, asked_by: &str, e: &GpuError) -> anyhow::Error {
        let flag = if self.gpu_emulator {
            "--gpu-emulator"
        } else {
            asked_by
        };
        anyhow::anyhow!("{flag}: {e}")
    }
}

/// Settings that shape the scene.
#[derive(Clone, Debug, Default, Args)]
pub(crate) struct SceneArgs {
    /// The acceleration structure [default: wide on the CPU and in a hybrid frame, octree on
    /// the GPU]; both give the same bytes on every device.
    #[arg(long, value_parser = choice::<AccelKind>())]
    pub(crate) accel: Option<AccelKind>,
    /// Image width in pixels, instead of the scene's.
    #[arg(long, value_name = "PIXELS", value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub(crate) width: Option<u32>,
    /// Image height in pixels, instead of the scene's.
    #[arg(long, value_name = "PIXELS", value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub(crate) height: Option<u32>,
    /// Triangles per BVH leaf (1 to 31), instead of the scene's (default: 8 for the wide BVH, one
    /// pack of its triangle test; 4 for the octree).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=31))]
    pub(crate) leaf_size: Option<u32>,
    /// With --accel octree: the depth at which octant splitting stops (1 to 64), instead of
    /// the scene's (default 24); deeper nodes split by input order only, at most eight
    /// children each.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) bvh_depth: Option<u32>,
    /// With the wide BVH: children per node, 4 (one SSE register per plane of their boxes)
    /// or 8 (one AVX register, on AVX-512 or AVX2 as the processor has them, or two SSE ones
    /// where it lacks AVX2 or FMA) [default: 8 where the processor has AVX2 and FMA, else 4];
    /// both give the same bytes.
    #[arg(long, value_name = "N", value_parser = parse_bvh_width)]
    pub(crate) bvh_width: Option<Width>,
    /// With the wide BVH: how a node is split [default: sah].
    #[arg(long, value_parser = choice::<BvhSplit>(), value_name = "SPLIT")]
    pub(crate) bvh_split: Option<BvhSplit>,
    /// The memory the scene and each frame may take, checked before they are built: 512M,
    /// 4G, 1.5GiB, or bytes (default: what the machine has free, from /proc/meminfo, the
    /// cgroup limit and ulimit -v).
    #[arg(long, value_name = "SIZE", value_parser = renderer::memory::byte_size)]
    pub(crate) max_memory: Option<u64>,
    /// Camera rays per pixel (1 to 1024), instead of the scene's `[image] samples` (default
    /// 1): a fixed stratified pattern, the same bytes on every balancer.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(renderer::scene::MAX_SAMPLES)))]
    pub(crate) spp: Option<u32>,
    /// A tile's camera rays, and their hits' shadow rays towards each light, traced in packets
    /// of up to sixteen (eight without AVX-512) through one traversal [default: on with the wide BVH, off with the
    /// octree, which has no packet traversal; `bench trace`: off]; both give the same bytes.
    #[arg(long, value_parser = choice::<Packets>(), value_name = "ON|OFF")]
    pub(crate) packets: Option<Packets>,
}

impl SceneSource {
    /// The file named on the command line.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.input
            .scene
            .iter()
            .chain(&self.input.mesh)
            .cloned()
            .collect()
    }
}

impl SceneArgs {
    /// Refuses the options of a structure that is not among `structures`: `--bvh-depth`
    /// without the octree (the wide BVH has no depth at which a heuristic stops),
    /// `--bvh-width` without the wide BVH (the octree's nodes have up to eight children).
    pub(crate) fn check_structure_options(&self, structures: &[AccelKind]) -> Result<()> {
        if self.bvh_depth.is_some() && !structures.contains(&AccelKind::Octree) {
            bail!("--bvh-depth applies to --accel octree; the wide BVH is not cut at a depth");
        }
        if self.bvh_width.is_some() && !structures.contains(&AccelKind::Wide) {
            bail!(
                "--bvh-width applies to --accel wide; the octree's nodes have up to eight children"
            );
        }
        if self.bvh_split.is_some() && !structures.contains(&AccelKind::Wide) {
            bail!("--bvh-split applies to --accel wide; the octree always splits by octant");
        }
        if self.packets == Some(Packets::On) && !structures.iter().any(|s| s.traces_packets()) {
            bail!("--packets on applies to --accel wide; the octree traces one ray at a time");
        }
        Ok(())
    }

    /// The structure these settings build.
    pub(crate) fn accel_kind(&self) -> AccelKind {
        self.accel.unwrap_or_default()
    }

    /// These settings for a scene rendered on `device`: the structure asked for, or where
    /// none is, the device's own default ([`DeviceKind::accel`]).
    pub(crate) fn for_device(&self, device: DeviceKind) -> SceneArgs {
        SceneArgs {
            accel: Some(device.accel(self.accel)),
            ..self.clone()
        }
    }

    /// [`check_frame`](Self::check_frame) for every combination of balancer, thread count and
    /// tile edge a command will render.
    pub(crate) fn check_frames(
        &self,
        scene: &Scene,
        balancers: &[CpuBalancer],
        threads: &[NonZeroUsize],
        tiles: &[NonZeroU32],
        extras: FrameExtras,
    ) -> Result<()> {
        for &balancer in balancers {
            for &threads in threads {
                for &tile in tiles {
                    let options = RenderOptions {
                        balancer,
                        threads,
                        tile,
                        work_map: false,
                    };
                    self.check_frame(scene, &options, extras)?;
                }
            }
        }
        Ok(())
    }

    /// Refuses a frame of `scene` rendered on the CPU as `options` say when it would take
    /// more memory than is left once the scene is built.
    pub(crate) fn check_frame(
        &self,
        scene: &Scene,
        options: &RenderOptions,
        extras: FrameExtras,
    ) -> Result<()> {
        self.check_job(scene, &FrameJob::Cpu(*options), extras)
    }

    /// Refuses `job`, a frame of `scene`, when it would take more memory than is left once
    /// the scene is built.
    pub(crate) fn check_job(
        &self,
        scene: &Scene,
        job: &FrameJob,
        extras: FrameExtras,
    ) -> Result<()> {
        job.check_memory(scene, extras, self.max_memory)
    }

    /// Loads the scene; its warnings go to standard error unless `quiet`.
    pub(crate) fn load(&self, source: &SceneSource, quiet: bool) -> Result<Scene> {
        self.load_observed(source, quiet, &mut ())
    }

    /// Loads the scene, printing its `scene` and `bvh` lines as each stage ends (with a
    /// spinner on a terminal) unless `silent`; its warnings go to standard error unless
    /// `quiet`.
    pub(crate) fn load_reporting(
        &self,
        source: &SceneSource,
        silent: bool,
        quiet: bool,
    ) -> Result<Scene> {
        let what = source.paths()[0].display().to_string();
        let mut progress = LoadProgress::start(&what, silent);
        let scene = self.load_observed(source, quiet, &mut progress);
        progress.finish()?;
        scene
    }

    fn load_observed(
        &self,
        source: &SceneSource,
        quiet: bool,
        observer: &mut dyn LoadObserver,
    ) -> Result<Scene> {
        let overrides = self.overrides();
        let FramingArgs { up, view } = source.framing;
        let mut scene = match (&source.input.scene, &source.input.mesh) {
            (Some(_), None) if up.is_some() || view.is_some() => {
                bail!("--up and --view frame a bare --mesh; a scene file has its own [camera]")
            }
            (Some(path), None) => Scene::load_observed(path, overrides, observer)?,
            (None, Some(path)) => {
                let framing = MeshFraming {
                    up: up.unwrap_or(MeshFraming::default().up),
                    view: view.unwrap_or(MeshFraming::default().view),
                };
                if framing.up.same_axis(framing.view) {
                    bail!(
                        "--up {} and --view {}: one axis cannot be both up and the way the camera looks",
                        framing.up,
                        framing.view
                    );
                }
                Scene::from_mesh_observed(path, overrides, framing, observer)?
            }
            _ => bail!("give a scene file or --mesh FILE.obj|FILE.ply"),
        };
        if let Some(packets) = self.packets {
            scene.packets = packets;
        }
        if !quiet {
            for warning in &scene.warnings {
                errln!("raylb: warning: {warning}");
            }
        }
        Ok(scene)
    }

    /// The triangles alone of the scene or bare mesh `source`, with no structure built over
    /// them (`raylb export`); warnings go to standard error unless `quiet`.
    pub(crate) fn load_triangles(
        &self,
        source: &SceneSource,
        quiet: bool,
    ) -> Result<SceneTriangles> {
        let overrides = self.overrides();
        let triangles = match (&source.input.scene, &source.input.mesh) {
            (Some(path), None) => SceneTriangles::load(path, overrides)?,
            (None, Some(path)) => SceneTriangles::from_mesh(path, overrides)?,
            _ => bail!("give a scene file or --mesh FILE.obj|FILE.ply"),
        };
        if !quiet {
            for warning in &triangles.warnings {
                errln!("raylb: warning: {warning}");
            }
        }
        Ok(triangles)
    }

    /// The command line's values over the scene's own.
    fn overrides(&self) -> SceneOverrides {
        SceneOverrides {
            width: self.width,
            height: self.height,
            leaf_size: self.leaf_size,
            bvh_max_depth: self.bvh_depth,
            bvh_width: self.bvh_width,
            bvh_split: self.bvh_split,
            samples: self.spp,
            accel: self.accel,
            memory: Budget::of(self.max_memory).map(|b| b.bytes),
            memory_is_address_space: Budget::of(self.max_memory)
                .is_some_and(|b| b.counts_address_space()),
        }
    }
}

/// Settings of the run. The balancer's own settings are options without defaults here, so
/// that one given to a balancer or device it does not apply to is refused rather than
/// ignored; their defaults are in [`RunArgs::balancer`] and [`RunArgs::gpu_balancer`].
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Where to trace: the CPU's threads, an NVIDIA GPU, or both together.
    #[arg(long, value_parser = choice::<DeviceKind>(), default_value = "cpu")]
    pub(crate) device: DeviceKind,
    /// Load balancer [default: static; with --device hybrid, stealing].
    #[arg(long, value_parser = choice::<BalancerName>())]
    pub(crate) balancer: Option<BalancerName>,
    /// How `static` and `stealing` deal tiles out on the CPU [default: interleaved].
    #[arg(long, value_parser = choice::<Assignment>())]
    pub(crate) assign: Option<Assignment>,
    /// The deque of `stealing` [default: abp on the CPU, locked on the GPU].
    #[arg(long, value_parser = choice::<DequeKind>())]
    pub(crate) deque: Option<DequeKind>,
    /// Victim selection of `stealing` on the CPU [default: random].
    #[arg(long, value_parser = choice::<VictimPolicy>())]
    pub(crate) victim: Option<VictimPolicy>,
    /// How much a steal takes in `stealing` [default: half].
    #[arg(long, value_parser = choice::<StealAmount>())]
    pub(crate) steal: Option<StealAmount>,
    /// Tiles `counter` hands out per visit [default: 1].
    #[arg(long, value_name = "N", value_parser = positive::<1_000_000>)]
    pub(crate) chunk: Option<NonZeroUsize>,
    /// Which of its tasks a CPU worker of `static`, `counter` or `stealing` runs first
    /// [default: depth-first].
    #[arg(long, value_parser = choice::<Order>())]
    pub(crate) order: Option<Order>,
    /// What the GPU's first batch of a `--device hybrid` frame holds [default: own].
    #[arg(long, value_parser = choice::<FirstBatch>())]
    pub(crate) first_batch: Option<FirstBatch>,
    /// Worker threads on the CPU (default: every core; with --device hybrid one fewer, the
    /// last core driving the GPU).
    #[arg(long, value_name = "N", value_parser = positive::<4096>)]
    pub(crate) threads: Option<NonZeroUsize>,
    /// Tile edge in pixels.
    #[arg(long, value_name = "PIXELS", default_value = "32", value_parser = tile_edge)]
    pub(crate) tile: NonZeroU32,
}

impl RunArgs {
    /// The balancer and its settings as given, none filled in.
    pub(crate) fn request(&self) -> BalancerRequest {
        BalancerRequest {
            name: self.balancer,
            assign: self.assign,
            deque: self.deque,
            victim: self.victim,
            steal: self.steal,
            chunk: self.chunk,
            order: self.order,
            first_batch: self.first_batch,
        }
    }

    /// How the device asked for schedules the frame; a setting that does not apply to the
    /// device or its balancer is refused.
    pub(crate) fn schedule(&self) -> Result<Schedule> {
        self.device.check_threads(self.threads)?;
        self.device.schedule(&self.request())
    }

    /// The CPU balancer asked for; a setting that does not apply to it is refused.
    pub(crate) fn balancer(&self) -> Result<CpuBalancer> {
        match DeviceKind::Cpu.schedule(&self.request())? {
            Schedule::Cpu(balancer) => Ok(balancer),
            _ => unreachable!("the CPU schedules its own balancers"),
        }
    }

    /// The CPU worker threads of the device asked for (`--threads`, or its default).
    pub(crate) fn device_threads(&self) -> NonZeroUsize {
        self.device.threads(self.threads)
    }

    pub(crate) fn threads(&self) -> NonZeroUsize {
        threads(self.threads)
    }
}

/// `n`, or every core the process may use.
pub(crate) fn threads(n: Option<NonZeroUsize>) -> NonZeroUsize {
    n.unwrap_or_else(|| std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN))
}

/// Parses a whole number from 1 to `MAX`.
pub(crate) fn positive<const MAX: usize>(text: &str) -> Result<NonZeroUsize, String> {
    text.parse::<NonZeroUsize>()
        .ok()
        .filter(|n| n.get() <= MAX)
        .ok_or_else(|| format!("must be a whole number from 1 to {MAX}"))
}

/// Parses a tile edge: a whole number of pixels from 1 to 16384.
pub(crate) fn tile_edge(text: &str) -> Result<NonZeroU32, String> {
    positive::<16384>(text).map(|n| NonZeroU32::try_from(n).expect("16384 fits in u32"))
}

#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    #[command(flatten)]
    pub(crate) source: SceneSource,
    /// The image, in the format its extension names: .png (8-bit sRGB), .exr (linear
    /// OpenEXR, 32-bit float unless --half) or .pfm (linear float); all resolved from the same
    /// fixed-point sums, so all are the same bytes on every balancer, and in each a ray adds
    /// at most 256 to a pixel's channel (default: the scene's name with .png, in the current
    /// directory).
    #[arg(short, long, value_name = "FILE.png|.exr|.pfm")]
    pub(crate) output: Option<PathBuf>,
    /// With -o FILE.exr: 16-bit half-float channels instead of 32-bit float.
    #[arg(long)]
    pub(crate) half: bool,
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) gpu_source: GpuSource,
    /// Also write every figure of the run as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub(crate) stats: Option<PathBuf>,
    /// Also write the work map: rays per pixel as a heat map, fewest blue to most red, with
    /// the scale as a bar along the bottom.
    #[arg(long, value_name = "FILE.png")]
    pub(crate) workmap: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Print every figure of the run as JSON on stdout (what --stats writes) instead of the
    /// summary.
    #[arg(long, conflicts_with = "quiet")]
    pub(crate) json: bool,
    /// Split the frame over the ranks of an MPI job: run under `mpirun -np N`, with a raylb
    /// built with `--features mpi`. Each rank loads the scene and runs --balancer on its
    /// --threads; tiles move between ranks, rays stay where their tile is; rank 0 writes.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) cluster: Option<ClusterName>,
    /// With --cluster counter: tiles rank 0 hands out per request [default: 2 × --threads].
    #[arg(long, value_name = "N", value_parser = positive::<1_000_000>)]
    pub(crate) cluster_chunk: Option<NonZeroUsize>,
}

/// How `--cluster` splits tiles between ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ClusterName {
    /// Tile i to rank i mod N, dealt before the start; nothing moves.
    Static,
    /// Rank 0 hands out --cluster-chunk tiles at a time to whichever rank asks.
    Counter,
    /// Each rank starts with its static share; a rank that runs dry steals half of the tiles a
    /// random other rank has not begun.
    Stealing,
}

/// `--device` of the shared group, which `record` refuses but for `cpu`, and the hybrid's
/// `--first-batch`, left out of its help.
#[derive(Debug, Args)]
#[command(
    mut_arg("device", |a| a.hide(true)),
    mut_arg("first_batch", |a| a.hide(true)),
    mut_arg("balancer", |a| a
        .value_parser(choice_where(runs_on_cpu))
        .help("Load balancer of the counting run [default: static]")),
    mut_arg("threads", |a| a.help("Worker threads of the counting run (default: every core)"))
)]
pub(crate) struct RecordArgs {
    #[command(flatten)]
    pub(crate) source: SceneSource,
    /// The task file, named .tasks (default: the scene's name with .tasks, in the current
    /// directory).
    #[arg(short, long, value_name = "FILE.tasks")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    /// The counting run: its balancer, threads and tiles (the timed run is `static` with the
    /// same tiles, on --timing-threads).
    #[command(flatten)]
    pub(crate) run: RunArgs,
    /// Threads of the timed run whose task times the cost model is fitted to: 1 for the
    /// speed of a worker alone; the number of workers to be simulated where the machine's
    /// cores slow each other down when all are busy.
    #[arg(long, value_name = "N", default_value = "1", value_parser = positive::<4096>)]
    pub(crate) timing_threads: NonZeroUsize,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The triangles alone are written: no camera, so no framing flags.
    #[command(flatten)]
    pub(crate) input: SceneInput,
    /// The mesh to write, OBJ or PLY as its extension says.
    #[arg(short, long, value_name = "FILE.obj|FILE.ply")]
    pub(crate) output: PathBuf,
    /// The memory reading the scene's triangles may take: about 100 bytes a triangle, since no
    /// structure is built over them, and what an OBJ file's text and faces take while it is
    /// read (default: what the machine has free).
    #[arg(long, value_name = "SIZE", value_parser = renderer::memory::byte_size)]
    pub(crate) max_memory: Option<u64>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SimArgs {
    /// The task file (`raylb record`'s).
    #[arg(required_unless_present = "wool_tree")]
    pub(crate) tasks: Option<PathBuf>,
    /// Instead of a recorded frame, Faxén and Ardelius's `tree` model (see below).
    #[arg(long, conflicts_with_all = ["tasks", "model_from", "task_cost", "unit_cost"])]
    pub(crate) wool_tree: bool,
    /// --wool-tree: runs (seeds) averaged per point [default: 100].
    #[arg(long, value_name = "N", value_parser = positive::<10_000>)]
    pub(crate) runs: Option<NonZeroUsize>,
    /// --wool-tree: the first run's seed; run k uses seed + k [default: 1].
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// Simulated worker counts (1 to 4096).
    #[arg(long, value_name = "N,…", value_delimiter = ',', value_parser = positive::<4096>, default_values_t = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024].map(|n| NonZeroUsize::new(n).expect("not 0")))]
    pub(crate) workers: Vec<NonZeroUsize>,
    /// Policies to simulate: `static`, `counter`, `stealing` (each in every setting given
    /// below) and `rayon` [default: all four; with --wool-tree, stealing].
    #[arg(long, value_parser = choice_where(runs_on_cpu), value_delimiter = ',')]
    pub(crate) balancers: Vec<BalancerName>,
    /// How `static` and `stealing` deal tiles out [default: interleaved].
    #[arg(long, value_parser = choice::<Assignment>(), value_delimiter = ',')]
    pub(crate) assign: Vec<Assignment>,
    /// Tiles `counter` takes per visit [default: 1].
    #[arg(long, value_name = "N,…", value_delimiter = ',', value_parser = positive::<1_000_000>)]
    pub(crate) chunk: Vec<NonZeroUsize>,
    /// The deque of `stealing`, whose push and pop cost differ [default: abp]; with --wool-tree,
    /// whose model charges them nothing, only beside its cost (--abp-cost, --locked-cost).
    #[arg(long, value_parser = choice::<DequeKind>(), value_delimiter = ',')]
    pub(crate) deque: Vec<DequeKind>,
    /// Victim selection of `stealing` [default: random; with --wool-tree, random,sample].
    #[arg(long, value_parser = choice::<VictimPolicy>(), value_delimiter = ',')]
    pub(crate) victim: Vec<VictimPolicy>,
    /// Workers `sample` reads at the start of a search [default: √workers; with --wool-tree,
    /// 2, before every attempt, as the Wool paper's model samples].
    #[arg(long, value_name = "N", value_parser = positive::<4096>)]
    pub(crate) samples: Option<NonZeroUsize>,
    /// How much a steal takes [default: half; with --wool-tree, one].
    #[arg(long, value_parser = choice::<StealAmount>(), value_delimiter = ',')]
    pub(crate) steal: Vec<StealAmount>,
    /// Which of its tasks a worker of `static`, `counter` or `stealing` runs first
    /// [default: depth-first].
    #[arg(long, value_parser = choice::<Order>(), value_delimiter = ',')]
    pub(crate) order: Vec<Order>,
    /// The cost model of another recording instead of this file's (to compare recordings, of
    /// other tile sizes or other scenes, on the same costs); its work counts must be this
    /// file's. --task-cost and --unit-cost then change that one.
    #[arg(long, value_name = "FILE.tasks")]
    pub(crate) model_from: Option<PathBuf>,
    /// Seconds any task costs besides its work, in nanoseconds, instead of the file's model.
    #[arg(long, value_name = "NS", value_parser = nanoseconds)]
    pub(crate) task_cost: Option<f64>,
    /// The cost of one unit of a work count, instead of the file's model: `NAME=NS`, the name
    /// as the file's features call it (`raylb sim FILE` lists them), e.g. `"box tests=2.5"`;
    /// repeat for several.
    #[arg(long, value_name = "NAME=NS")]
    pub(crate) unit_cost: Vec<String>,
    /// A steal that finds work, from attempt to the stolen task's start [default: 155].
    #[arg(long, value_name = "NS", value_parser = nanoseconds)]
    pub(crate) steal_cost: Option<f64>,
    /// A steal attempt that finds nothing; at least 1 [default: 160].
    #[arg(long, value_name = "NS", value_parser = positive_nanoseconds)]
    pub(crate) failed_steal_cost: Option<f64>,
    /// Each task a steal takes beyond the first; also how long taking each task, the first
    /// included, holds the victim's deque, where another thief's attempt fails (so it acts
    /// under `--steal one` and on `rayon` too) [default: 83].
    #[arg(long, value_name = "NS", value_parser = nanoseconds)]
    pub(crate) stolen_task_cost: Option<f64>,
    /// Reading one worker's deque for `sample`'s choice [default: 4].
    #[arg(long, value_name = "NS", value_parser = nanoseconds)]
    pub(crate) probe_cost: Option<f64>,
    /// The counter's fetch-and-add, one worker at a time [default: 13.5].
    #[arg(long, value_name = "NS", value_parser = nanoseconds)]
    pub(crate) counter_cost: Option<f64>,
    /// A push and pop on the `abp` deque beyond a local queue's [default: 4].
    #[arg(long, value_name = "NS", value_parser = nanoseconds)]
    pub(crate) abp_cost: Option<f64>,
    /// A push and pop on the `locked` deque beyond a local queue's [default: 6.5].
    #[arg(long, value_name = "NS", value_parser = nanoseconds)]
    pub(crate) locked_cost: Option<f64>,
    /// A rayon job beyond a push and pop on its deque, each worker paying it once for every
    /// worker (the scope's shared lines, written in turn) [default: 32.6].
    #[arg(long, value_name = "NS", value_parser = nanoseconds)]
    pub(crate) rayon_cost: Option<f64>,
    /// Folder for sim.csv and sim.svg (speedup against workers); with --wool-tree,
    /// wool.csv, wool-time.svg and wool-steals.svg.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

/// Parses a duration in nanoseconds: a finite number, not negative.
fn nanoseconds(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0 && *x <= 1e12)
        .ok_or_else(|| "must be a number of nanoseconds from 0 to 10^12".into())
}

/// Parses a duration of at least a nanosecond.
fn positive_nanoseconds(text: &str) -> Result<f64, String> {
    nanoseconds(text)
        .ok()
        .filter(|x| *x >= 1.0)
        .ok_or_else(|| "must be a number of nanoseconds from 1 to 10^12".into())
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// First image (PNG, OpenEXR or PFM; the format is read from the contents, not the name).
    pub(crate) a: PathBuf,
    /// Second image.
    pub(crate) b: PathBuf,
    /// Also write an 8-bit RGB PNG of where the images differ: each channel's difference,
    /// scaled so that the largest is white and any difference shows; black where they agree.
    /// Refused if it is (or links to) one of the inputs, or if the sizes differ.
    #[arg(long, value_name = "FILE.png")]
    pub(crate) diff: Option<PathBuf>,
    /// Refuse, before decoding, images whose decoded pixels together (with the difference
    /// image) would take more than this: 512M, 4G, 1.5GiB, or bytes (default: the memory
    /// available, from /proc/meminfo, the cgroup limit and ulimit -v).
    #[arg(long, value_name = "SIZE", value_parser = renderer::memory::byte_size)]
    pub(crate) max_memory: Option<u64>,
}

/// `--accel` of the shared group, which `validate` refuses for its own `--accels`, left out of
/// its help.
#[derive(Debug, Args)]
#[command(mut_arg("accel", |a| a.hide(true)))]
pub(crate) struct ValidateArgs {
    #[command(flatten)]
    pub(crate) source: SceneSource,
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    /// Balancers to run (default: all): on the CPU `static` with both assignments, `counter`
    /// with chunks of 1 and 4, `stealing` with every deque, victim selection and steal amount
    /// (12 variants), `rayon`; with --gpu also `static`, `counter`, `stealing` (steal one and
    /// half) and `cuda-managed` on the GPU.
    #[arg(long, value_parser = choice::<BalancerName>(), value_delimiter = ',')]
    pub(crate) balancers: Option<Vec<BalancerName>>,
    /// Acceleration structures to render with, each with every balancer [default:
    /// wide,octree]; with --gpu, the GPU's balancers run on the octree.
    #[arg(long, value_parser = choice::<AccelKind>(), value_delimiter = ',')]
    pub(crate) accels: Option<Vec<AccelKind>>,
    /// Thread counts to run the CPU balancers at [default: 1,2,3,8,32].
    #[arg(long, value_delimiter = ',', value_parser = positive::<4096>)]
    pub(crate) threads: Option<Vec<NonZeroUsize>>,
    /// Tile edges to run.
    #[arg(long, value_delimiter = ',', default_value = "8,64,512", value_parser = tile_edge)]
    pub(crate) tiles: Vec<NonZeroU32>,
    /// Write the reference image (the first run's) here, once every render has run, in the
    /// format its extension names (.png, .exr, .pfm).
    #[arg(short, long, value_name = "FILE.png|.exr|.pfm")]
    pub(crate) output: Option<PathBuf>,
    /// Also render with every GPU balancer (static, counter, stealing with steal one and
    /// half, cuda-managed) at every tile edge and compare with the same reference.
    #[arg(long)]
    pub(crate) gpu: bool,
    /// The GPU balancers to run with --gpu, when they are not those of --balancers: e.g.
    /// `--balancers static --gpu-balancers static,counter,stealing,cuda-managed` compares
    /// every GPU balancer with the CPU's `static` alone.
    #[arg(long, value_parser = choice::<BalancerName>(), value_delimiter = ',', requires = "gpu")]
    pub(crate) gpu_balancers: Option<Vec<BalancerName>>,
    /// Also render with the CPU's threads and the GPU together (`--device hybrid`, the CPU
    /// side stealing as `stealing` does by default) at every thread count and tile edge, and
    /// compare with the same reference.
    #[arg(long)]
    pub(crate) hybrid: bool,
    #[command(flatten)]
    pub(crate) gpu_source: GpuSource,
    /// Print nothing; the exit code says whether all renders were identical.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Print the runs and the verdict as JSON on stdout instead of lines.
    #[arg(long, conflicts_with = "quiet")]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    pub(crate) bench: Bench,
    /// Print nothing but errors (the files a benchmark writes, its CSV and plots, are still
    /// written).
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Bench {
    /// The traversal's throughput alone (no shading): a frame's rays of one kind (camera,
    /// shadow, reflection, refraction), each asked for its closest hit or for occlusion, or the
    /// rays of a ray file; --dump writes the frame's rays for other tracers.
    #[command(after_help = "Examples:
  raylb bench trace scenes/treasure.toml --rays shadow --dump treasure-shadow.rays
  raylb bench trace scenes/treasure.toml --ray-file treasure-shadow.rays --threads 2")]
    Trace(TraceArgs),
    /// How fast the scene's acceleration structure is built (--accel, --leaf-size, …), in
    /// triangles a second, on --threads threads of the build's own.
    #[command(after_help = "Examples:
  raylb bench build scenes/treasure.toml --threads 1
  raylb bench build --mesh bunny.obj --threads 2 --repeat 10
  raylb bench build --mesh bunny.obj --threads 2 --against 1 --repeat 100")]
    Build(BuildArgs),
    /// Time per pixel against tile edge for each balancer (Wende's figures 4.6 to 4.9).
    Sweep(SweepArgs),
    /// Time and parallel efficiency against thread count for each balancer.
    Scaling(ScalingArgs),
    /// Deque throughput and steal success (Wende's table 3.2): every thread pops its own
    /// deque (setup i), then steals (ii), then also pushes at random (iii).
    Deque(DequeArgs),
    /// The scheduling costs `raylb sim` charges, measured here: deque pushes and pops,
    /// steals that find work and that do not, samples, the counter under contention.
    Costs(CostsArgs),
    /// Time per pixel against tile edge on simulated workers (`raylb sim` over the frame
    /// recorded at each edge, on one cost model): the sweep for machines you do not have.
    SimSweep(SimSweepArgs),
    /// One frame over MPI ranks (`mpirun -np R raylb render --cluster MODE`, R ranks × T
    /// threads) against one process with as many threads: time, speed paired round by round,
    /// and the ranks' imbalance. Needs a raylb built with `--features mpi`.
    Cluster(ClusterBenchArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ClusterBenchArgs {
    /// Scene file (default: scenes/treasure.toml).
    pub(crate) scene_file: Option<PathBuf>,
    /// Workers in all: the one process's threads, and ranks × threads of each job (default:
    /// every core).
    #[arg(long, value_name = "N", value_parser = positive::<4096>)]
    pub(crate) workers: Option<NonZeroUsize>,
    /// Rank counts; each must divide --workers.
    #[arg(long, value_name = "R,…", value_delimiter = ',', default_value = "2", value_parser = positive::<4096>)]
    pub(crate) ranks: Vec<NonZeroUsize>,
    /// How the jobs split tiles between ranks.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [ClusterName::Static, ClusterName::Counter, ClusterName::Stealing])]
    pub(crate) modes: Vec<ClusterName>,
    /// The balancer of the one process and of every rank (with its defaults).
    #[arg(long, value_parser = choice_where(runs_on_cpu), default_value = "stealing")]
    pub(crate) balancer: BalancerName,
    /// Tile edge in pixels.
    #[arg(long, value_name = "PIXELS", default_value = "32", value_parser = tile_edge)]
    pub(crate) tile: NonZeroU32,
    /// Image width in pixels, instead of the scene's.
    #[arg(long, value_name = "PIXELS", value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub(crate) width: Option<u32>,
    /// Image height in pixels, instead of the scene's.
    #[arg(long, value_name = "PIXELS", value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub(crate) height: Option<u32>,
    /// Rounds: each renders with the one process and with every job once, starting one
    /// further along each round, and pairs each job's time with the one process's of its round.
    #[arg(long, value_name = "N", default_value = "5", value_parser = positive::<1000>)]
    pub(crate) repeat: NonZeroUsize,
    /// The MPI launcher.
    #[arg(long, value_name = "PROGRAM", default_value = "mpirun")]
    pub(crate) mpirun: PathBuf,
    /// An argument for the launcher, given before `-np` (repeat for several), e.g.
    /// `--mpirun-arg=--oversubscribe`.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub(crate) mpirun_arg: Vec<String>,
    /// Folder for cluster.csv, cluster-paired.csv and cluster.svg.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub(crate) out: PathBuf,
}

/// Whether the CPU runs `balancer`: the commands that run only the CPU's balancers (`sim`,
/// `bench`) offer only these.
fn runs_on_cpu(balancer: BalancerName) -> bool {
    DeviceKind::Cpu.balancers().contains(&balancer)
}

/// Which balancers a benchmark compares.
#[derive(Debug, Args)]
pub(crate) struct BalancerSet {
    /// Balancers to compare: `static` (interleaved), `counter` (chunk 1), `stealing` (as set
    /// by --deque, --victim and --steal) and `rayon`.
    #[arg(long, value_parser = choice_where(runs_on_cpu), value_delimiter = ',', default_values = ["static", "counter", "stealing", "rayon"])]
    pub(crate) balancers: Vec<BalancerName>,
    /// The deque of `stealing` [default: abp].
    #[arg(long, value_parser = choice::<DequeKind>())]
    pub(crate) deque: Option<DequeKind>,
    /// Victim selection of `stealing` [default: random].
    #[arg(long, value_parser = choice::<VictimPolicy>())]
    pub(crate) victim: Option<VictimPolicy>,
    /// How much a steal takes in `stealing` [default: half].
    #[arg(long, value_parser = choice::<StealAmount>())]
    pub(crate) steal: Option<StealAmount>,
}

impl BalancerSet {
    /// The balancers to compare, in the order given.
    pub(crate) fn kinds(&self) -> Result<Vec<CpuBalancer>> {
        let settings = [
            ("--deque", self.deque.is_some()),
            ("--victim", self.victim.is_some()),
            ("--steal", self.steal.is_some()),
        ];
        if !self.balancers.contains(&BalancerName::Stealing)
            && let Some((flag, _)) = settings.iter().find(|(_, given)| *given)
        {
            bail!("{flag} applies to stealing, which is not among --balancers");
        }
        Ok(self
            .balancers
            .iter()
            .map(|&b| {
                // The defaults fill in the settings not given (interleaved, chunk 1, abp,
                // random, half); those of other families are passed over.
                let request = BalancerRequest {
                    name: Some(b),
                    deque: self.deque,
                    victim: self.victim,
                    steal: self.steal,
                    ..BalancerRequest::default()
                };
                request
                    .cpu_balancer()
                    .expect("--balancers offers only the CPU's balancers")
            })
            .collect())
    }
}

#[derive(Debug, Args)]
pub(crate) struct SweepArgs {
    /// Scene files (default: scenes/treasure.toml and scenes/treasure-calm.toml).
    pub(crate) scenes: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    #[command(flatten)]
    pub(crate) set: BalancerSet,
    /// Tile edges in pixels.
    #[arg(long, value_delimiter = ',', default_value = "8,16,32,64,128,256,512", value_parser = tile_edge)]
    pub(crate) tiles: Vec<NonZeroU32>,
    /// Worker threads (default: every core).
    #[arg(long, value_name = "N", value_parser = positive::<4096>)]
    pub(crate) threads: Option<NonZeroUsize>,
    /// Rounds: every round renders every combination once (the balancers taking turns to go
    /// first), so that drift in the machine's speed spreads evenly; the best round counts, and
    /// a second table pairs each balancer's time with the leader's in the same round.
    #[arg(long, value_name = "N", default_value = "3", value_parser = positive::<1000>)]
    pub(crate) repeat: NonZeroUsize,
    /// Folder for sweep.csv, sweep-best.csv, sweep-paired.csv and sweep.svg.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct ScalingArgs {
    /// Scene file (default: scenes/treasure.toml).
    pub(crate) scene_file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    #[command(flatten)]
    pub(crate) set: BalancerSet,
    /// Thread counts (default: 1 to every core).
    #[arg(long, value_delimiter = ',', value_parser = positive::<4096>)]
    pub(crate) threads: Vec<NonZeroUsize>,
    /// Tile edge in pixels.
    #[arg(long, value_name = "PIXELS", default_value = "32", value_parser = tile_edge)]
    pub(crate) tile: NonZeroU32,
    /// Rounds, as for `sweep`.
    #[arg(long, value_name = "N", default_value = "3", value_parser = positive::<1000>)]
    pub(crate) repeat: NonZeroUsize,
    /// Folder for scaling.csv, scaling-best.csv and scaling.svg.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct DequeArgs {
    /// Threads, each owning one deque (default: every core).
    #[arg(long, value_name = "N", value_parser = positive::<4096>)]
    pub(crate) threads: Option<NonZeroUsize>,
    /// Elements each deque is filled with at the start of an iteration (and, in setup iii,
    /// pushes during it).
    #[arg(long, value_name = "N", default_value = "32000", value_parser = positive::<100_000_000>)]
    pub(crate) elements: NonZeroUsize,
    /// Iterations per setup: throughput and latency are taken over all of them, and the steal
    /// attempts and elements stolen are their totals.
    #[arg(long, value_name = "N", default_value = "50", value_parser = positive::<100_000>)]
    pub(crate) iterations: NonZeroUsize,
    /// How much a steal takes [default: one].
    #[arg(long, value_parser = choice::<StealAmount>())]
    pub(crate) steal: Option<StealAmount>,
    /// The memory the deques may take, checked before they are made: 512M, 4G, 1.5GiB, or
    /// bytes (default: what the machine has free, from /proc/meminfo, the cgroup limit and
    /// ulimit -v).
    #[arg(long, value_name = "SIZE", value_parser = renderer::memory::byte_size)]
    pub(crate) max_memory: Option<u64>,
    /// Folder for deque.csv.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct SimSweepArgs {
    /// Scene file (default: scenes/treasure.toml).
    pub(crate) scene_file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    #[command(flatten)]
    pub(crate) set: BalancerSet,
    /// Simulated worker counts (1 to 4096).
    #[arg(long, value_name = "N,…", value_delimiter = ',', value_parser = positive::<4096>, default_values_t = [2, 16, 64, 256, 1024].map(|n| NonZeroUsize::new(n).expect("not 0")))]
    pub(crate) workers: Vec<NonZeroUsize>,
    /// Tile edges in pixels.
    #[arg(long, value_delimiter = ',', default_value = "8,16,32,64,128,256,512", value_parser = tile_edge)]
    pub(crate) tiles: Vec<NonZeroU32>,
    /// The tile edge whose recording is timed for the cost model every edge is simulated on.
    #[arg(long, value_name = "PIXELS", default_value = "32", value_parser = tile_edge)]
    pub(crate) model_tile: NonZeroU32,
    /// Threads of the counting runs (default: every core); the model's run is timed on one.
    #[arg(long, value_name = "N", value_parser = positive::<4096>)]
    pub(crate) threads: Option<NonZeroUsize>,
    /// Folder for sim-sweep.csv and sim-sweep.svg.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct CostsArgs {
    /// Threads at the counter at once (default: every core; at least 2).
    #[arg(long, value_name = "N", value_parser = positive::<4096>)]
    pub(crate) threads: Option<NonZeroUsize>,
    /// Rounds per cost; the median and quartiles are reported.
    #[arg(long, value_name = "N", default_value = "5", value_parser = positive::<1000>)]
    pub(crate) rounds: NonZeroUsize,
    /// Folder for costs.csv.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub(crate) out: PathBuf,
}

/// The scene a timed benchmark loads, the threads it runs on, and how often it repeats.
#[derive(Debug, Args)]
pub(crate) struct TimedScene {
    #[command(flatten)]
    pub(crate) source: SceneSource,
    #[command(flatten)]
    pub(crate) scene: SceneArgs,
    /// Threads: the workers that trace, or those of each build.
    #[arg(long, value_name = "N", default_value = "1", value_parser = positive::<4096>)]
    pub(crate) threads: NonZeroUsize,
    /// Timed repetitions; the best is reported.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) repeat: u32,
}

#[derive(Debug, Args)]
pub(crate) struct TraceArgs {
    #[command(flatten)]
    pub(crate) timed: TimedScene,
    /// Which of a frame's rays [default: camera]: camera rays are made tile by tile as a
    /// frame makes them; the others are recorded from one frame first, then traced in every
    /// pass.
    #[arg(long, value_parser = choice::<FrameRays>(), conflicts_with = "ray_file")]
    pub(crate) rays: Option<FrameRays>,
    /// Trace the rays of this ray file instead of a frame's (the RAYLBRAY format: docs/running.md),
    /// each for its closest hit or for occlusion as the file says; the frame's flags (--width,
    /// --height, --spp, --up, --view) have nothing to act on then, and are refused.
    #[arg(long, value_name = "RAYS", conflicts_with_all = ["width", "height", "spp", "up", "view"])]
    pub(crate) ray_file: Option<PathBuf>,
    /// Write the frame's rays of the kind --rays names to this ray file (named .rays), in the
    /// order one worker traces them, then trace them.
    #[arg(long, value_name = "RAYS", conflicts_with = "ray_file")]
    pub(crate) dump: Option<PathBuf>,
}

/// The frame's flags of the shared groups, which `bench build` refuses, left out of its help.
#[derive(Debug, Args)]
#[command(
    mut_arg("width", |a| a.hide(true)),
    mut_arg("height", |a| a.hide(true)),
    mut_arg("spp", |a| a.hide(true)),
    mut_arg("packets", |a| a.hide(true)),
    mut_arg("up", |a| a.hide(true)),
    mut_arg("view", |a| a.hide(true))
)]
pub(crate) struct BuildArgs {
    #[command(flatten)]
    pub(crate) timed: TimedScene,
    /// Also build on N threads, alternating with --threads build by build (--repeat times
    /// each), and report the speed on --threads over the speed on N: the scaling, from
    /// builds side by side, so that a machine whose speed drifts slows both alike.
    #[arg(long, value_name = "N", value_parser = positive::<4096>)]
    pub(crate) against: Option<NonZeroUsize>,
}

/// Prints a command-line error on one line (help and version in full) and gives the exit
/// code: 0 for help and version, 2 for mistakes.
pub(crate) fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        // Asked for, on standard output: help or a version that cannot be written there is
        // an error, as any other output is.
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let printed = e.print().and_then(|()| io::stdout().lock().flush());
            match printed.map_err(StdoutError) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.reader_gone() => ExitCode::from(crate::READER_GONE),
                Err(e) => {
                    errln!("raylb: error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        // The help in place of a mistake, on standard error.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(2)
        }
        // Rank 0 of an MPI job says it, once.
        _ if crate::terminal::quiet_rank() => ExitCode::from(2),
        _ => {
            // clap's message, without its usage and hints, folded onto one line.
            let text = e.render().to_string();
            let message: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
                .collect();
            let message = message.join(" ");
            errln!(
                "raylb: error: {}",
                message.strip_prefix("error: ").unwrap_or(&message)
            );
            ExitCode::from(2)
        }
    }
}

/// How the wide BVH splits a node (`--bvh-split`).
/// `--bvh-width`: 4 or 8.
fn parse_bvh_width(s: &str) -> std::result::Result<Width, String> {
    match s {
        "4" => Ok(Width::Four),
        "8" => Ok(Width::Eight),
        _ => Err(format!("children per node: 4 or 8, not {s}")),
    }
}

#[cfg(test)]
mod repeated_values {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::parse_args_from(std::iter::once("raylb").chain(args.iter().copied()))
    }

    #[test]
    fn a_value_given_twice_to_a_list_is_refused() {
        assert!(parse(&["sim", "--wool-tree", "--workers", "4,8"]).is_ok());
        for args in [
            &["sim", "--wool-tree", "--workers", "4,8,4"][..],
            &["sim", "--wool-tree", "--workers", "4", "--workers", "+4"],
            &["sim", "--wool-tree", "--victim", "random,random"],
        ] {
            let e = parse(args)
                .err()
                .unwrap_or_else(|| panic!("{args:?} parsed"));
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{args:?}"
            );
            assert!(e.to_string().contains("is given twice"), "{args:?}: {e}");
        }
    }

    #[test]
    fn words_passed_on_may_repeat() {
        let cluster = ["bench", "cluster", "scenes/quick.toml"];
        let args = [&cluster[..], &["--mpirun-arg=-x", "--mpirun-arg=-x"]].concat();
        assert!(parse(&args).is_ok());
    }

    /// Every name in [`REPEATABLE`] is a flag or argument of some command that takes many
    /// values: a renamed one would otherwise lose its exemption unseen.
    #[test]
    fn every_repeatable_name_is_a_list_somewhere() {
        use clap::CommandFactory;
        fn lists(command: &clap::Command, found: &mut Vec<String>) {
            for arg in command.get_arguments() {
                if matches!(arg.get_action(), clap::ArgAction::Append) {
                    found.push(arg.get_id().to_string());
                }
            }
            for sub in command.get_subcommands() {
                lists(sub, found);
            }
        }
        let mut found = Vec::new();
        lists(&Cli::command(), &mut found);
        for name in REPEATABLE {
            assert!(found.iter().any(|f| f == name), "{name} is no list");
        }
    }
}

#[cfg(test)]
mod gpu_source {
    use super::*;

    fn source(gpu_emulator: bool) -> GpuSource {
        GpuSource {
            gpu_emulator,
            emulator_blocks: None,
            emulator_seed: None,
        }
    }

    /// A GPU that cannot be opened is blamed on the flag that asked for it, but for an
    /// emulator this build lacks, which is blamed on `--gpu-emulator`.
    #[test]
    fn the_flag_named_is_the_one_to_change() {
        let e = GpuError::Request("this raylb is built without the warp emulator".into());
        assert_eq!(
            source(true).failure("--device gpu", &e).to_string(),
            "--gpu-emulator: this raylb is built without the warp emulator"
        );
        assert_eq!(
            source(false)
                .failure("--hybrid needs an NVIDIA GPU", &GpuError::NoDriver)
                .to_string(),
            "--hybrid needs an NVIDIA GPU: no NVIDIA driver: libcuda.so cannot be loaded"
        );
    }
}
