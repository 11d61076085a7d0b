//! Where a frame is traced, said once: the CPU's worker threads, a GPU (an NVIDIA one or the
//! warp emulator), or both together under one scheduler. A [`DeviceKind`] knows which
//! balancers it runs, with which settings, which structure it builds by default and how many
//! CPU threads it starts; a [`FrameJob`] is one frame's settings on a device, and estimates
//! the frame's memory and renders it. `raylb render`, `view`, `validate`, `record` and the
//! benchmarks all ask these rather than restating the rules.
//!
//! Settings that do not apply to the device or balancer chosen are refused, never ignored.
//! The refusals name each setting as the command line spells it (`--deque`), as the scene
//! file and the command line name them alike.
//!
//! ```
//! # use renderer::device::{BalancerName, BalancerRequest, DeviceKind, Schedule};
//! let request = BalancerRequest {
//!     name: Some(BalancerName::Counter),
//!     chunk: std::num::NonZeroUsize::new(4),
//!     ..BalancerRequest::default()
//! };
//! assert!(matches!(DeviceKind::Gpu.schedule(&request), Ok(Schedule::Gpu(_))));
//! let refused = DeviceKind::Hybrid.schedule(&request).unwrap_err();
//! assert!(refused.to_string().contains("leave --balancer out or say stealing"));
//! ```

use std::num::{NonZeroU32, NonZeroUsize};

use anyhow::{Result, anyhow, bail};
use balancers::{
    Assignment, BalancerKind, Choice, DequeKind, FirstBatch, HybridStealing, Order, RayonScope,
    StealAmount, VictimPolicy, WorkStealing,
};

use crate::accel::AccelKind;
use crate::frame::Frame;
use crate::gpu::{Gpu, GpuBalancer, GpuOptions, GpuTiles, WarpDeque, render_gpu};
use crate::hybrid::{HybridOptions, render_hybrid};
use crate::memory::{Budget, thread_address_space};
use crate::render::{CpuBalancer, FrameExtras, FrameMemory, RenderOptions, render};
use crate::scene::Scene;
use crate::user_balancer::{self, UserBalancer};

/// Where rays are traced.
///
/// ```
/// use balancers::Choice;
/// use renderer::device::{BalancerName, DeviceKind};
///
/// assert_eq!(DeviceKind::from_keyword("hybrid"), Some(DeviceKind::Hybrid));
/// assert!(DeviceKind::Gpu.balancers().contains(&BalancerName::CudaManaged));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// Worker threads on the CPU.
    Cpu,
    /// An NVIDIA GPU through CUDA, or the warp emulator: persistent warps for `static`,
    /// `counter` and `stealing`, or `cuda-managed`.
    Gpu,
    /// The CPU's threads and the GPU together, one work-stealing scheduler over both.
    Hybrid,
}

/// The balancers by name, on whichever device runs them.
///
/// ```
/// use balancers::Choice;
/// use renderer::device::BalancerName;
///
/// assert_eq!(BalancerName::from_keyword("cuda-managed"), Some(BalancerName::CudaManaged));
/// assert_eq!(BalancerName::Stealing.keyword(), "stealing");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalancerName {
    /// Tiles dealt out before the run; spawned rays stay local.
    Static,
    /// Workers take the next tiles from one atomic counter; spawned rays stay local.
    Counter,
    /// A deque per worker, pre-filled with its share of tiles; idle workers steal.
    Stealing,
    /// rayon's pool through `rayon::scope` (the CPU's baseline).
    Rayon,
    /// One block per tile, the hardware's block scheduler as the balancer (the GPU's
    /// baseline).
    CudaManaged,
    /// A balancer registered by the program ([`user_balancer::register`]); CPU only.
    User(UserBalancer),
}

/// A balancer as asked for: a name and only the settings given, so that a setting the
/// device or balancer has no use for is refused rather than ignored. What is left out takes
/// the device's default.
///
/// ```
/// use balancers::StealAmount;
/// use renderer::device::{BalancerName, BalancerRequest, DeviceKind};
///
/// let request = BalancerRequest { steal: Some(StealAmount::One), ..Default::default() };
/// assert_eq!(request.chosen(DeviceKind::Hybrid), BalancerName::Stealing);
/// // `static` takes no steal setting: refused, not ignored.
/// let refused = DeviceKind::Cpu.schedule(&request).unwrap_err();
/// assert_eq!(refused.to_string(), "--steal applies to stealing, not to --balancer static");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BalancerRequest {
    /// The balancer [default: `static`; on the hybrid, `stealing`].
    pub name: Option<BalancerName>,
    /// How `static` and `stealing` deal tiles out on the CPU [default: interleaved].
    pub assign: Option<Assignment>,
    /// The deque of `stealing` [default: `abp` on the CPU, locked on the GPU].
    pub deque: Option<DequeKind>,
    /// Victim selection of `stealing` on the CPU [default: random].
    pub victim: Option<VictimPolicy>,
    /// How much a steal takes [default: half].
    pub steal: Option<StealAmount>,
    /// Tiles `counter` hands out per visit [default: 1].
    pub chunk: Option<NonZeroUsize>,
    /// Which of its tasks a CPU worker runs first [default: depth-first].
    pub order: Option<Order>,
    /// What the GPU's first batch of a hybrid frame holds [default: its own pool].
    pub first_batch: Option<FirstBatch>,
}

/// How a device schedules a frame's work: the balancer it runs, with its settings.
///
/// ```
/// use renderer::device::{BalancerRequest, DeviceKind, Schedule};
///
/// let schedule = DeviceKind::Hybrid.schedule(&BalancerRequest::default())?;
/// assert!(matches!(schedule, Schedule::Hybrid(_)));
/// assert_eq!(schedule.device(), DeviceKind::Hybrid);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A balancer over CPU worker threads.
    Cpu(CpuBalancer),
    /// A balancer over a GPU's warps.
    Gpu(GpuBalancer),
    /// One work-stealing scheduler over CPU threads and the GPU.
    Hybrid(HybridStealing),
}

balancers::choices!(DeviceKind {
    Cpu => "cpu", "Worker threads on the CPU.";
    Gpu => "gpu", "An NVIDIA GPU through CUDA (driver and NVRTC loaded at run time): persistent warps for `static`, `counter` and `stealing`, or `cuda-managed`.";
    Hybrid => "hybrid", "The CPU's threads and the GPU together, one work-stealing scheduler over both: each CPU thread and the GPU a processor with a pool of tiles, the GPU tracing batches.";
});

/// The built-in balancers, and those the program registered after them.
impl Choice for BalancerName {
    const ALL: &'static [Self] = &[
        Self::Static,
        Self::Counter,
        Self::Stealing,
        Self::Rayon,
        Self::CudaManaged,
    ];

    fn every() -> Vec<Self> {
        let registered = user_balancer::registered().iter().copied().map(Self::User);
        Self::ALL.iter().copied().chain(registered).collect()
    }

    fn keyword(self) -> &'static str {
        match self {
            Self::Static => "static",
            Self::Counter => "counter",
            Self::Stealing => "stealing",
            Self::Rayon => "rayon",
            Self::CudaManaged => "cuda-managed",
            Self::User(b) => b.keyword(),
        }
    }

    fn about(self) -> &'static str {
        match self {
            Self::Static => "Tiles dealt out to workers before the run; spawned rays stay local.",
            Self::Counter => {
                "Workers take the next tiles from one atomic counter; spawned rays stay local."
            }
            Self::Stealing => {
                "A deque per worker, pre-filled with its share of tiles; idle workers steal."
            }
            Self::Rayon => {
                "rayon's pool through rayon::scope: every tile and ray a scope.spawn (the baseline); at most 512 threads, or one per core where there are more."
            }
            Self::CudaManaged => {
                "GPU only: one block per tile, the hardware's block scheduler as the balancer."
            }
            Self::User(b) => b.about(),
        }
    }
}

/// The structure the GPU builds where none is asked for: its kernels traverse either, and the
/// octree's is the form they were first written for.
const GPU_DEFAULT_ACCEL: AccelKind = AccelKind::Octree;

impl DeviceKind {
    /// The balancers this device runs: on the CPU, the registered ones too.
    ///
    /// ```
    /// use renderer::device::{BalancerName, DeviceKind};
    ///
    /// assert_eq!(DeviceKind::Hybrid.balancers(), [BalancerName::Stealing]);
    /// assert!(DeviceKind::Cpu.balancers().contains(&BalancerName::Rayon));
    /// assert!(!DeviceKind::Gpu.balancers().contains(&BalancerName::Rayon));
    /// ```
    pub fn balancers(self) -> Vec<BalancerName> {
        use BalancerName::*;
        match self {
            Self::Cpu => [Static, Counter, Stealing, Rayon]
                .into_iter()
                .chain(user_balancer::registered().iter().copied().map(User))
                .collect(),
            Self::Gpu => vec![Static, Counter, Stealing, CudaManaged],
            Self::Hybrid => vec![Stealing],
        }
    }

    /// The structure a frame on this device builds: `asked`, or the device's default (the
    /// CPU's on the CPU and in a hybrid frame, whose GPU traces the structure its CPU
    /// workers do; the octree on the GPU, the form its kernels were first written for).
    ///
    /// ```
    /// use renderer::accel::AccelKind;
    /// use renderer::device::DeviceKind;
    ///
    /// assert_eq!(DeviceKind::Gpu.accel(None), AccelKind::Octree);
    /// assert_eq!(DeviceKind::Cpu.accel(None), AccelKind::default());
    /// assert_eq!(DeviceKind::Gpu.accel(Some(AccelKind::Wide)), AccelKind::Wide);
    /// ```
    pub fn accel(self, asked: Option<AccelKind>) -> AccelKind {
        match (asked, self) {
            (Some(accel), _) => accel,
            (None, Self::Gpu) => GPU_DEFAULT_ACCEL,
            (None, Self::Cpu | Self::Hybrid) => AccelKind::default(),
        }
    }

    /// The CPU worker threads a frame starts: `given`, or every core the process may use; in
    /// a hybrid frame one fewer, the last being the GPU's host thread's.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use renderer::device::DeviceKind;
    ///
    /// let four = NonZeroUsize::new(4).unwrap();
    /// assert_eq!(DeviceKind::Cpu.threads(Some(four)), four);
    /// let cores = std::thread::available_parallelism()?;
    /// assert_eq!(DeviceKind::Cpu.threads(None), cores);
    /// assert_eq!(DeviceKind::Hybrid.threads(None).get(), (cores.get() - 1).max(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn threads(self, given: Option<NonZeroUsize>) -> NonZeroUsize {
        let cores = || std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
        match (given, self) {
            (Some(n), _) => n,
            (None, Self::Hybrid) => {
                NonZeroUsize::new(cores().get() - 1).unwrap_or(NonZeroUsize::MIN)
            }
            (None, Self::Cpu | Self::Gpu) => cores(),
        }
    }

    /// Whether a thread count may be given: the GPU runs as many warps as can be resident.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use renderer::device::DeviceKind;
    ///
    /// assert!(DeviceKind::Cpu.check_threads(NonZeroUsize::new(8)).is_ok());
    /// assert!(DeviceKind::Gpu.check_threads(NonZeroUsize::new(8)).is_err());
    /// assert!(DeviceKind::Gpu.check_threads(None).is_ok());
    /// ```
    ///
    /// # Errors
    /// On the GPU, when `given`.
    pub fn check_threads(self, given: Option<NonZeroUsize>) -> Result<()> {
        if self == Self::Gpu && given.is_some() {
            bail!(
                "--threads applies to --device cpu; on the GPU as many warps run as can be resident"
            );
        }
        Ok(())
    }

    /// The schedule `request` asks for on this device.
    ///
    /// ```
    /// use renderer::device::{BalancerName, BalancerRequest, DeviceKind};
    ///
    /// let rayon = BalancerRequest { name: Some(BalancerName::Rayon), ..Default::default() };
    /// assert_eq!(DeviceKind::Cpu.schedule(&rayon)?.device(), DeviceKind::Cpu);
    /// let refused = DeviceKind::Gpu.schedule(&rayon).unwrap_err();
    /// assert_eq!(refused.to_string(), "--balancer rayon runs only with --device cpu");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// When the balancer does not run on this device, or a setting given does not apply to
    /// it, naming the setting.
    pub fn schedule(self, request: &BalancerRequest) -> Result<Schedule> {
        match self {
            Self::Cpu => cpu_balancer(request).map(Schedule::Cpu),
            Self::Gpu => gpu_balancer(request).map(Schedule::Gpu),
            Self::Hybrid => hybrid_balancer(request).map(Schedule::Hybrid),
        }
    }
}

impl BalancerName {
    /// The balancer a request without a name runs on `device`.
    fn default_on(device: DeviceKind) -> Self {
        match device {
            DeviceKind::Hybrid => Self::Stealing,
            DeviceKind::Cpu | DeviceKind::Gpu => Self::Static,
        }
    }
}

impl BalancerRequest {
    /// The balancer named, or the device's default.
    ///
    /// ```
    /// use renderer::device::{BalancerName, BalancerRequest, DeviceKind};
    ///
    /// let request = BalancerRequest::default();
    /// assert_eq!(request.chosen(DeviceKind::Cpu), BalancerName::Static);
    /// assert_eq!(request.chosen(DeviceKind::Hybrid), BalancerName::Stealing);
    /// ```
    pub fn chosen(&self, device: DeviceKind) -> BalancerName {
        self.name
            .unwrap_or_else(|| BalancerName::default_on(device))
    }

    /// The CPU balancer named (or `static`), built from the settings its family takes and
    /// the defaults for those not given; settings it does not take are passed over here
    /// ([`DeviceKind::schedule`] refuses them). `None` for `cuda-managed`, which runs on the
    /// GPU alone.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use balancers::BalancerKind;
    /// use renderer::device::{BalancerName, BalancerRequest};
    ///
    /// let counter = BalancerRequest {
    ///     name: Some(BalancerName::Counter),
    ///     chunk: NonZeroUsize::new(4),
    ///     ..Default::default()
    /// };
    /// let want = BalancerKind::counter(NonZeroUsize::new(4).unwrap()).into();
    /// assert_eq!(counter.cpu_balancer(), Some(want));
    /// let managed = BalancerRequest { name: Some(BalancerName::CudaManaged), ..Default::default() };
    /// assert_eq!(managed.cpu_balancer(), None);
    /// ```
    pub fn cpu_balancer(&self) -> Option<CpuBalancer> {
        let assignment = self.assign.unwrap_or(Assignment::Interleaved);
        let balancer = match self.chosen(DeviceKind::Cpu) {
            BalancerName::Static => BalancerKind::static_tiles(assignment),
            BalancerName::Counter => BalancerKind::counter(self.chunk.unwrap_or(NonZeroUsize::MIN)),
            BalancerName::Stealing => BalancerKind::Stealing(self.work_stealing()),
            BalancerName::Rayon => BalancerKind::Rayon(RayonScope),
            BalancerName::CudaManaged => return None,
            // A registered balancer takes none of the settings.
            BalancerName::User(b) => return Some(CpuBalancer::User(b)),
        };
        Some(CpuBalancer::Builtin(match self.order {
            // rayon has no order of its own to set: it keeps its own.
            Some(order) => balancer.with_order(order).unwrap_or(balancer),
            None => balancer,
        }))
    }

    /// The CPU's work stealing with the settings given and the defaults for the rest.
    fn work_stealing(&self) -> WorkStealing {
        let defaults = WorkStealing::default();
        WorkStealing {
            deque: self.deque.unwrap_or(defaults.deque),
            victim: self.victim.unwrap_or(defaults.victim),
            amount: self.steal.unwrap_or(defaults.amount),
            assignment: self.assign.unwrap_or(defaults.assignment),
            order: defaults.order,
        }
    }

    /// Fails naming the first setting given that is not in `uses`.
    fn refuse_unused(&self, uses: &[&str], chosen: &str) -> Result<()> {
        let given = [
            ("--assign", self.assign.is_some()),
            ("--deque", self.deque.is_some()),
            ("--victim", self.victim.is_some()),
            ("--steal", self.steal.is_some()),
            ("--chunk", self.chunk.is_some()),
            ("--order", self.order.is_some()),
            ("--first-batch", self.first_batch.is_some()),
        ];
        for (flag, _) in given.iter().filter(|(_, given)| *given) {
            if !uses.contains(flag) {
                let applies = match *flag {
                    "--assign" => "static and stealing on the CPU",
                    "--chunk" => "counter",
                    "--order" => "static, counter and stealing on the CPU",
                    "--first-batch" => "--device hybrid",
                    _ => "stealing",
                };
                bail!("{flag} applies to {applies}, not to {chosen}");
            }
        }
        Ok(())
    }
}

/// The CPU balancer `request` asks for.
fn cpu_balancer(request: &BalancerRequest) -> Result<CpuBalancer> {
    let chosen = request.chosen(DeviceKind::Cpu);
    let uses: &[&str] = match chosen {
        BalancerName::Static => &["--assign", "--order"],
        BalancerName::Counter => &["--chunk", "--order"],
        BalancerName::Stealing => &["--assign", "--deque", "--victim", "--steal", "--order"],
        BalancerName::Rayon | BalancerName::User(_) => &[],
        BalancerName::CudaManaged => {
            bail!("--balancer cuda-managed runs only with --device gpu")
        }
    };
    request.refuse_unused(uses, &format!("--balancer {}", chosen.keyword()))?;
    Ok(request
        .cpu_balancer()
        .expect("cuda-managed is refused above"))
}

/// The hybrid scheduler `request` asks for: `stealing` over CPU threads and the GPU, its CPU
/// side set by the deque, victim and steal settings.
fn hybrid_balancer(request: &BalancerRequest) -> Result<HybridStealing> {
    if request.name.is_some_and(|b| b != BalancerName::Stealing) {
        bail!(
            "--device hybrid runs one work-stealing scheduler over the CPU and the GPU; leave --balancer out or say stealing"
        );
    }
    if request.assign.is_some() {
        bail!(
            "--assign does not apply to --device hybrid: each CPU thread starts with an equal share of half the tiles, the GPU with the other half"
        );
    }
    request.refuse_unused(
        &["--deque", "--victim", "--steal", "--first-batch"],
        "--device hybrid",
    )?;
    let cpu = request.work_stealing();
    Ok(HybridStealing {
        deque: cpu.deque,
        victim: cpu.victim,
        amount: cpu.amount,
        first_batch: request.first_batch.unwrap_or_default(),
    })
}

/// The GPU balancer `request` asks for.
fn gpu_balancer(request: &BalancerRequest) -> Result<GpuBalancer> {
    if request.victim.is_some() || request.assign.is_some() {
        bail!(
            "--victim and --assign apply to --device cpu; GPU warps steal from random victims and take interleaved shares"
        );
    }
    if request.order.is_some() {
        bail!(
            "--order applies to --device cpu; a GPU warp refills its lanes from a buffer of the rays its lanes spawned"
        );
    }
    let chosen = request.chosen(DeviceKind::Gpu);
    let uses: &[&str] = match chosen {
        BalancerName::Counter => &["--chunk"],
        BalancerName::Stealing => &["--steal", "--deque"],
        BalancerName::Static | BalancerName::CudaManaged => &[],
        BalancerName::Rayon => bail!("--balancer rayon runs only with --device cpu"),
        BalancerName::User(b) => bail!("--balancer {} runs only with --device cpu", b.keyword()),
    };
    request.refuse_unused(uses, &format!("--balancer {} on the GPU", chosen.keyword()))?;
    let chunk = u32::try_from(request.chunk.unwrap_or(NonZeroUsize::MIN).get())
        .map_err(|_| anyhow!("--chunk on the GPU: at most {} tiles", u32::MAX))?;
    Ok(match chosen {
        BalancerName::Static => GpuBalancer::Static,
        BalancerName::Counter => GpuBalancer::Counter { chunk },
        BalancerName::Stealing => GpuBalancer::Stealing {
            half: request.steal.unwrap_or(StealAmount::Half) == StealAmount::Half,
            deque: match request.deque {
                None | Some(DequeKind::Locked) => WarpDeque::Locked,
                Some(DequeKind::Abp) => WarpDeque::NonBlocking,
            },
        },
        BalancerName::CudaManaged => GpuBalancer::CudaManaged,
        BalancerName::Rayon | BalancerName::User(_) => unreachable!("refused above"),
    })
}

impl Schedule {
    /// The device that runs this schedule.
    ///
    /// ```
    /// # use renderer::device::{BalancerRequest, DeviceKind};
    /// let schedule = DeviceKind::Gpu.schedule(&BalancerRequest::default())?;
    /// assert_eq!(schedule.device(), DeviceKind::Gpu);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn device(&self) -> DeviceKind {
        match self {
            Self::Cpu(_) => DeviceKind::Cpu,
            Self::Gpu(_) => DeviceKind::Gpu,
            Self::Hybrid(_) => DeviceKind::Hybrid,
        }
    }

    /// The schedule's name, e.g. `stealing/abp/random/half` or `gpu-counter/1`.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use balancers::{Balancer, BalancerKind};
    /// use renderer::device::{BalancerName, BalancerRequest, DeviceKind};
    ///
    /// let request = BalancerRequest { name: Some(BalancerName::Counter), ..Default::default() };
    /// let schedule = DeviceKind::Cpu.schedule(&request)?;
    /// assert_eq!(schedule.name(), BalancerKind::counter(NonZeroUsize::MIN).name());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self) -> String {
        match self {
            Self::Cpu(b) => b.name(),
            Self::Gpu(b) => b.name(),
            Self::Hybrid(b) => b.name(),
        }
    }

    /// A frame of this schedule: `threads` CPU workers (unused on the GPU), tiles of edge
    /// `tile`, rays counted per pixel with `work_map`.
    ///
    /// ```
    /// use std::num::{NonZeroU32, NonZeroUsize};
    /// use renderer::device::{BalancerRequest, DeviceKind, FrameJob};
    ///
    /// let schedule = DeviceKind::Cpu.schedule(&BalancerRequest::default())?;
    /// let job = schedule.job(NonZeroUsize::new(4).unwrap(), NonZeroU32::new(16).unwrap(), true);
    /// assert!(matches!(job, FrameJob::Cpu(options) if options.threads.get() == 4));
    /// assert!(job.work_map());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn job(self, threads: NonZeroUsize, tile: NonZeroU32, work_map: bool) -> FrameJob {
        match self {
            Self::Cpu(balancer) => FrameJob::Cpu(RenderOptions {
                balancer,
                threads,
                tile,
                work_map,
            }),
            Self::Gpu(balancer) => FrameJob::Gpu(GpuOptions {
                balancer,
                tile,
                work_map,
                max_warps: None,
            }),
            Self::Hybrid(balancer) => FrameJob::Hybrid(HybridOptions {
                balancer,
                threads,
                tile,
                work_map,
            }),
        }
    }
}

/// One frame's settings on a device.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use renderer::device::{BalancerRequest, DeviceKind};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let (two, tile) = (NonZeroUsize::new(2).unwrap(), NonZeroU32::new(8).unwrap());
/// let job = DeviceKind::Cpu.schedule(&BalancerRequest::default())?.job(two, tile, false);
/// let frame = job.render(&scene, None)?;
/// assert_eq!(frame.tiles, 16);
/// assert_eq!(frame.film.width(), 32);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameJob {
    /// The CPU's workers under one balancer.
    Cpu(RenderOptions),
    /// The CPU's workers and the GPU, one scheduler over both.
    Hybrid(HybridOptions),
    /// The GPU under one of its balancers.
    Gpu(GpuOptions),
}

impl FrameJob {
    /// The device the frame runs on.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::device::{BalancerRequest, DeviceKind};
    /// # let (two, tile) = (NonZeroUsize::new(2).unwrap(), NonZeroU32::new(8).unwrap());
    /// let job = DeviceKind::Hybrid.schedule(&BalancerRequest::default())?.job(two, tile, false);
    /// assert_eq!(job.device(), DeviceKind::Hybrid);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn device(&self) -> DeviceKind {
        match self {
            Self::Cpu(_) => DeviceKind::Cpu,
            Self::Gpu(_) => DeviceKind::Gpu,
            Self::Hybrid(_) => DeviceKind::Hybrid,
        }
    }

    /// Whether rays are counted per pixel (a work map).
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::device::{BalancerRequest, DeviceKind};
    /// # let (two, tile) = (NonZeroUsize::new(2).unwrap(), NonZeroU32::new(8).unwrap());
    /// let job = DeviceKind::Gpu.schedule(&BalancerRequest::default())?.job(two, tile, true);
    /// assert!(job.work_map());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn work_map(&self) -> bool {
        match self {
            Self::Cpu(o) => o.work_map,
            Self::Gpu(o) => o.work_map,
            Self::Hybrid(o) => o.work_map,
        }
    }

    /// The frame's name within a structure, e.g. `stealing/abp/random/half threads=8
    /// tile=32` or `gpu-stealing/half tile=8`.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::device::{BalancerRequest, DeviceKind};
    /// # let (two, tile) = (NonZeroUsize::new(2).unwrap(), NonZeroU32::new(8).unwrap());
    /// let schedule = DeviceKind::Cpu.schedule(&BalancerRequest::default())?;
    /// let label = schedule.job(two, tile, false).label();
    /// assert_eq!(label, format!("{} threads=2 tile=8", schedule.name()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn label(&self) -> String {
        match self {
            Self::Cpu(o) => format!(
                "{} threads={} tile={}",
                o.balancer.name(),
                o.threads,
                o.tile
            ),
            Self::Hybrid(o) => format!(
                "{} threads={} tile={}",
                o.balancer.name(),
                o.threads,
                o.tile
            ),
            Self::Gpu(o) => format!("{} tile={}", o.balancer.name(), o.tile),
        }
    }

    /// The CPU workers the frame starts beyond what `threads` says, and why, when it does:
    /// rayon starts at most [`RayonScope::max_workers`].
    ///
    /// ```
    /// use std::num::{NonZeroU32, NonZeroUsize};
    /// use balancers::RayonScope;
    /// use renderer::device::{BalancerName, BalancerRequest, DeviceKind};
    ///
    /// let rayon = BalancerRequest { name: Some(BalancerName::Rayon), ..Default::default() };
    /// let tile = NonZeroU32::new(32).unwrap();
    /// let many = RayonScope::max_workers().checked_add(1).unwrap();
    /// let schedule = DeviceKind::Cpu.schedule(&rayon)?;
    /// assert!(schedule.job(many, tile, false).fewer_threads().is_some());
    /// assert!(schedule.job(NonZeroUsize::MIN, tile, false).fewer_threads().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fewer_threads(&self) -> Option<String> {
        let Self::Cpu(options) = self else {
            return None;
        };
        let most = RayonScope::max_workers();
        match options.balancer {
            CpuBalancer::Builtin(BalancerKind::Rayon(_)) if options.threads > most => {
                Some(format!(
                    "--balancer rayon starts {most} threads, not {}: each idle rayon worker searches every other's queue before it sleeps, which with thousands of threads takes seconds to minutes",
                    options.threads
                ))
            }
            _ => None,
        }
    }

    /// What the frame takes in memory besides its scene, with `extras`; where the memory at
    /// hand is address space (`ulimit -v`), the CPU workers' stacks and malloc arenas too.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::device::{BalancerRequest, DeviceKind};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let (two, tile) = (NonZeroUsize::new(2).unwrap(), NonZeroU32::new(8).unwrap());
    /// use renderer::render::FrameExtras;
    ///
    /// let job = DeviceKind::Cpu.schedule(&BalancerRequest::default())?.job(two, tile, false);
    /// let plain = job.memory(&scene, FrameExtras::default(), false);
    /// let with_stacks = job.memory(&scene, FrameExtras::default(), true);
    /// assert!(with_stacks.total() > plain.total());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn memory(&self, scene: &Scene, extras: FrameExtras, address_space: bool) -> FrameMemory {
        match self {
            Self::Cpu(options) => {
                let mut memory = FrameMemory::estimate(scene, options, extras);
                if address_space {
                    memory.parts.push((
                        "the workers' stacks and malloc arenas",
                        thread_address_space(options.threads.get()),
                    ));
                    memory
                        .parts
                        .sort_by_key(|&(_, bytes)| std::cmp::Reverse(bytes));
                }
                memory
            }
            Self::Gpu(options) => FrameMemory::estimate_gpu(scene, options.work_map, extras),
            Self::Hybrid(options) => FrameMemory::estimate_hybrid(scene, options, extras),
        }
    }

    /// Refuses the frame when it would take more memory than is left of `max_memory` (or
    /// of what the machine has free, where it is `None`) once `scene` is built.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::device::{BalancerRequest, DeviceKind};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let (two, tile) = (NonZeroUsize::new(2).unwrap(), NonZeroU32::new(8).unwrap());
    /// use renderer::render::FrameExtras;
    ///
    /// let job = DeviceKind::Cpu.schedule(&BalancerRequest::default())?.job(two, tile, false);
    /// let plenty = Some(scene.resident_bytes() + (1 << 30));
    /// assert!(job.check_memory(&scene, FrameExtras::default(), plenty).is_ok());
    /// let none_left = Some(scene.resident_bytes());
    /// assert!(job.check_memory(&scene, FrameExtras::default(), none_left).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Naming the image's size, the figures and where the limit comes from.
    pub fn check_memory(
        &self,
        scene: &Scene,
        extras: FrameExtras,
        max_memory: Option<u64>,
    ) -> Result<()> {
        let Some(left) = Budget::of(max_memory).and_then(|b| b.after(scene.resident_bytes()))
        else {
            return Ok(());
        };
        self.memory(scene, extras, left.counts_address_space())
            .check(&left)
            .map_err(|e| anyhow!("{}×{}: {e}", scene.width, scene.height))
    }

    /// Renders `scene` so; `gpu` is the device of the hybrid and GPU frames.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use renderer::device::{BalancerRequest, DeviceKind};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let (two, tile) = (NonZeroUsize::new(2).unwrap(), NonZeroU32::new(8).unwrap());
    /// let cpu = DeviceKind::Cpu.schedule(&BalancerRequest::default())?.job(two, tile, false);
    /// let frame = cpu.render(&scene, None)?;
    /// assert!(!frame.cancelled);
    /// let gpu = DeviceKind::Gpu.schedule(&BalancerRequest::default())?.job(two, tile, false);
    /// let e = gpu.render(&scene, None).unwrap_err();
    /// assert!(e.to_string().ends_with("needs a GPU"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// When the frame cannot be rendered (its memory, its workers, the device), or a hybrid
    /// or GPU frame is given no GPU.
    pub fn render(&self, scene: &Scene, gpu: Option<&Gpu>) -> Result<Frame> {
        let device = || gpu.ok_or_else(|| anyhow!("{} needs a GPU", self.label()));
        Ok(match self {
            Self::Cpu(options) => render(scene, options)?,
            Self::Hybrid(options) => {
                let tiles = GpuTiles::new(device()?, scene, options.tile, options.work_map)?;
                render_hybrid(scene, options, vec![tiles])?
            }
            Self::Gpu(options) => render_gpu(device()?, scene, options)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY_NAME: [BalancerName; 5] = [
        BalancerName::Static,
        BalancerName::Counter,
        BalancerName::Stealing,
        BalancerName::Rayon,
        BalancerName::CudaManaged,
    ];

    #[test]
    fn a_device_schedules_exactly_the_balancers_it_lists() {
        for device in [DeviceKind::Cpu, DeviceKind::Gpu, DeviceKind::Hybrid] {
            for name in EVERY_NAME {
                let request = BalancerRequest {
                    name: Some(name),
                    ..BalancerRequest::default()
                };
                let scheduled = device.schedule(&request);
                assert_eq!(
                    scheduled.is_ok(),
                    device.balancers().contains(&name),
                    "{device:?} {name:?}: {scheduled:?}"
                );
                if let Ok(schedule) = scheduled {
                    assert_eq!(schedule.device(), device);
                }
            }
        }
    }

    #[test]
    fn defaults_are_the_devices_own() {
        let none = BalancerRequest::default();
        assert_eq!(
            DeviceKind::Cpu.schedule(&none).unwrap(),
            Schedule::Cpu(BalancerKind::static_tiles(Assignment::Interleaved).into())
        );
        assert_eq!(
            DeviceKind::Gpu.schedule(&none).unwrap(),
            Schedule::Gpu(GpuBalancer::Static)
        );
        assert_eq!(
            DeviceKind::Hybrid.schedule(&none).unwrap(),
            Schedule::Hybrid(HybridStealing::default())
        );
        let stealing = BalancerRequest {
            name: Some(BalancerName::Stealing),
            ..none
        };
        assert_eq!(
            DeviceKind::Gpu.schedule(&stealing).unwrap(),
            Schedule::Gpu(GpuBalancer::Stealing {
                half: true,
                deque: WarpDeque::Locked
            })
        );
        assert_eq!(DeviceKind::Gpu.accel(None), AccelKind::Octree);
        assert_eq!(DeviceKind::Hybrid.accel(None), AccelKind::default());
        assert_eq!(
            DeviceKind::Gpu.accel(Some(AccelKind::Wide)),
            AccelKind::Wide
        );
    }

    #[test]
    fn a_setting_the_balancer_does_not_take_is_refused_by_name() {
        let counter_with_deque = BalancerRequest {
            name: Some(BalancerName::Counter),
            deque: Some(DequeKind::Locked),
            ..BalancerRequest::default()
        };
        for device in [DeviceKind::Cpu, DeviceKind::Gpu] {
            let e = device.schedule(&counter_with_deque).unwrap_err();
            assert!(
                e.to_string().starts_with("--deque applies to stealing"),
                "{e}"
            );
        }
        let order_on_gpu = BalancerRequest {
            order: Some(Order::BreadthFirst),
            ..BalancerRequest::default()
        };
        assert!(DeviceKind::Gpu.schedule(&order_on_gpu).is_err());
        assert!(DeviceKind::Cpu.schedule(&order_on_gpu).is_ok());
        assert!(DeviceKind::Gpu.check_threads(NonZeroUsize::new(2)).is_err());
        assert!(
            DeviceKind::Hybrid
                .check_threads(NonZeroUsize::new(2))
                .is_ok()
        );
    }
}
