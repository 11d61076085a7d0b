//! One frame: a scene, a balancer and its settings in; a film and the run's figures out.

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;

use balancers::{Balancer, BalancerKind, Order, Outcome, SpawnError};

use crate::film::Film;
use crate::frame::Frame;
use crate::integrator::{RenderTask, SPLIT_ABOVE, Tile, Whitted, WorkerRays, tiles};
use crate::memory::{Budget, format_bytes};
use crate::scene::Scene;
use crate::user_balancer::UserBalancer;
use crate::watch::{FrameObserver, FrameWatch, Unwatched};

/// A balancer of the CPU's workers: one of raylb's, or one the program registered.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::BalancerKind;
/// use renderer::render::CpuBalancer;
///
/// let counter: CpuBalancer = BalancerKind::counter(NonZeroUsize::MIN).into();
/// assert_eq!(counter.name(), "counter/chunk=1");
/// assert_eq!(counter.family(), "counter");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuBalancer {
    /// A built-in balancer.
    Builtin(BalancerKind),
    /// A registered balancer ([`crate::user_balancer`]).
    User(UserBalancer),
}

impl CpuBalancer {
    /// The balancer's name, e.g. `counter/chunk=1`.
    ///
    /// ```
    /// use balancers::{Assignment, BalancerKind};
    /// use renderer::render::CpuBalancer;
    ///
    /// let tiles = CpuBalancer::Builtin(BalancerKind::static_tiles(Assignment::Blocked));
    /// assert_eq!(tiles.name(), "static/blocked");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Self::Builtin(b) => b.name(),
            Self::User(b) => b.balancer().name(),
        }
    }

    /// The order its workers run the tasks they hold in, where it is known: a registered
    /// balancer's is not.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use balancers::{BalancerKind, Order};
    /// use renderer::render::CpuBalancer;
    ///
    /// let counter = CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
    /// assert_eq!(counter.order(), Some(Order::DepthFirst));
    /// ```
    pub fn order(&self) -> Option<Order> {
        match self {
            Self::Builtin(b) => b.order(),
            Self::User(_) => None,
        }
    }

    /// The bytes its queues hold beyond the tasks ([`BalancerKind::queue_bytes`]); a
    /// registered balancer's queues are not known, and count as none.
    ///
    /// ```
    /// use balancers::BalancerKind;
    /// use renderer::render::CpuBalancer;
    ///
    /// // Work stealing keeps a deque a worker: more workers, more bytes.
    /// let stealing = CpuBalancer::Builtin(BalancerKind::Stealing(Default::default()));
    /// assert!(stealing.queue_bytes(8, 1000, 48) > stealing.queue_bytes(2, 1000, 48));
    /// ```
    pub fn queue_bytes(&self, workers: usize, tasks: usize, task_bytes: usize) -> u64 {
        match self {
            Self::Builtin(b) => b.queue_bytes(workers, tasks, task_bytes),
            Self::User(_) => 0,
        }
    }

    /// Runs a frame's `tiles` on `threads` workers with `runner`, which nobody watches.
    ///
    /// # Errors
    /// When a worker thread cannot be started.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # use renderer::film::Film;
    /// # use renderer::integrator::{RenderTask, Whitted, tiles};
    /// # let film = Film::new(scene.width, scene.height, false);
    /// # let tasks: Vec<RenderTask> =
    /// #     tiles(32, 32, NonZeroU32::new(8).unwrap()).into_iter().map(RenderTask::Tile).collect();
    /// use renderer::render::CpuBalancer;
    /// use renderer::watch::Unwatched;
    ///
    /// let balancer = CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
    /// let runner = Whitted::new(&scene, &film, &Unwatched);
    /// let outcome = balancer.run_frame(NonZeroUsize::new(2).unwrap(), &tasks, &runner)?;
    /// let camera: u64 = outcome.locals.iter().map(|w| w.rays.camera).sum();
    /// assert_eq!(camera, 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_frame(
        &self,
        threads: NonZeroUsize,
        tiles: &[RenderTask],
        runner: &Whitted<'_, Unwatched>,
    ) -> Result<Outcome<WorkerRays>, SpawnError> {
        match self {
            Self::Builtin(b) => b.run(threads, tiles, runner),
            Self::User(b) => b.balancer().run_frame(threads, tiles, runner),
        }
    }

    /// Runs a frame's `tiles` on `threads` workers with `runner`, which a window or a progress
    /// bar watches.
    ///
    /// # Errors
    /// When a worker thread cannot be started.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # use renderer::film::Film;
    /// # use renderer::integrator::{RenderTask, Whitted, tiles};
    /// # let film = Film::new(scene.width, scene.height, false);
    /// # let tasks: Vec<RenderTask> =
    /// #     tiles(32, 32, NonZeroU32::new(8).unwrap()).into_iter().map(RenderTask::Tile).collect();
    /// use renderer::render::CpuBalancer;
    /// use renderer::watch::FrameWatch;
    ///
    /// let balancer = CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
    /// let watch = FrameWatch::new(scene.width, scene.height);
    /// let runner = Whitted::new(&scene, &film, &watch);
    /// balancer.run_watched(NonZeroUsize::new(2).unwrap(), &tasks, &runner)?;
    /// assert_eq!(watch.pixels_done(), 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_watched(
        &self,
        threads: NonZeroUsize,
        tiles: &[RenderTask],
        runner: &Whitted<'_, FrameWatch>,
    ) -> Result<Outcome<WorkerRays>, SpawnError> {
        match self {
            Self::Builtin(b) => b.run(threads, tiles, runner),
            Self::User(b) => b.balancer().run_watched(threads, tiles, runner),
        }
    }

    /// The balancer's family (`static`, `counter`, `stealing`, `rayon`), or a registered
    /// balancer's keyword.
    ///
    /// ```
    /// use balancers::{BalancerKind, RayonScope};
    /// use renderer::render::CpuBalancer;
    ///
    /// assert_eq!(CpuBalancer::Builtin(BalancerKind::Rayon(RayonScope)).family(), "rayon");
    /// ```
    pub fn family(&self) -> &'static str {
        match self {
            Self::Builtin(b) => b.family(),
            Self::User(b) => b.keyword(),
        }
    }
}

impl From<BalancerKind> for CpuBalancer {
    fn from(b: BalancerKind) -> Self {
        Self::Builtin(b)
    }
}

/// How to render a frame.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// use renderer::render::{RenderOptions, render};
///
/// let options = RenderOptions {
///     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
///     threads: NonZeroUsize::new(2).unwrap(),
///     tile: NonZeroU32::new(8).unwrap(),
///     work_map: true,
/// };
/// let frame = render(&scene, &options)?;
/// assert_eq!(frame.tiles, 16);
/// assert_eq!(frame.telemetry.workers.len(), 2);
/// assert!(frame.film.ray_counts().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// The balancer that distributes tiles and rays over the workers.
    pub balancer: CpuBalancer,
    /// Worker threads.
    pub threads: NonZeroUsize,
    /// Tile edge in pixels.
    pub tile: NonZeroU32,
    /// Count rays per pixel for a work map.
    pub work_map: bool,
}

/// What a frame will take in memory besides its scene, part by part: estimated before any of
/// it is allocated, so that a frame too large for the machine is refused in one line instead
/// of failing part-way.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # use renderer::render::RenderOptions;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::render::FrameMemory;
///
/// let memory = FrameMemory::estimate(&scene, &options, Default::default());
/// // Largest part first.
/// assert!(memory.parts.windows(2).all(|p| p[0].1 >= p[1].1));
/// assert_eq!(memory.total(), memory.parts.iter().map(|p| p.1).sum::<u64>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameMemory {
    /// `(what, bytes)`, largest first.
    pub parts: Vec<(&'static str, u64)>,
}

/// What a frame writes or shows besides its 8-bit image, for [`FrameMemory::estimate`].
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # use renderer::render::RenderOptions;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::render::{FrameExtras, FrameMemory};
///
/// let plain = FrameMemory::estimate(&scene, &options, FrameExtras::default());
/// let hdr = FrameMemory::estimate(&scene, &options, FrameExtras { hdr: true, ..Default::default() });
/// // A float image to write costs its bytes.
/// assert!(hdr.total() > plain.total());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameExtras {
    /// A float image (EXR, PFM) is written.
    pub hdr: bool,
    /// A window shows the frame (the viewer's preview and window buffers).
    pub window: bool,
    /// A copy of another frame's sums is kept beside this one (`raylb validate`'s reference).
    pub reference: bool,
    /// Bytes of the scene in another acceleration structure, built beside this one
    /// ([`Scene::with_accel`](crate::scene::Scene::with_accel)): what its build peaks at.
    pub another_structure: u64,
    /// The film is reduced over MPI ranks (`--cluster`): its sums (and counts) are copied out
    /// to be sent, and rank 0 receives the total beside them.
    pub reduced: bool,
}

impl FrameMemory {
    /// The memory of rendering `scene` as `options` say and writing its outputs.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # use renderer::render::RenderOptions;
    /// # let options = RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # };
    /// use renderer::render::FrameMemory;
    ///
    /// let small = FrameMemory::estimate(&scene, &options, Default::default());
    /// let counted = RenderOptions { work_map: true, ..options };
    /// // Counting rays per pixel adds a count a pixel.
    /// assert!(FrameMemory::estimate(&scene, &counted, Default::default()).total() > small.total());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn estimate(scene: &Scene, options: &RenderOptions, extras: FrameExtras) -> Self {
        let pixels = u64::from(scene.width) * u64::from(scene.height);
        let tiles =
            tiles_across(scene.width, options.tile) * tiles_across(scene.height, options.tile);
        let task = std::mem::size_of::<RenderTask>() as u64;
        let workers = options.threads.get() as u64;
        let tile_pixels = u64::from(options.tile.get()).pow(2);
        let samples = u64::from(scene.samples.count());
        let spawned = match options.balancer.order() {
            // Breadth-first, the workers hold a whole generation of rays at once: the first,
            // two a camera ray, is the widest unless most of the image sees glass.
            Some(Order::BreadthFirst) => 2 * pixels * samples * task,
            // Depth-first, a worker holds at most the pieces of one tile, and the children
            // of one piece's camera rays (two each) before they run.
            _ => {
                workers
                    * (tile_pixels.div_ceil(u64::from(SPLIT_ABOVE))
                        + 2 * tile_pixels.min(u64::from(SPLIT_ABOVE)) * samples)
                    * task
            }
        };
        let mut parts = vec![
            ("film", pixels * 24),
            ("watch", pixels * 2),
            // The tiles as the balancer gets them, and as they are cut out of the image.
            ("tiles", tiles * (task + std::mem::size_of::<Tile>() as u64)),
            (
                "balancer queues",
                options
                    .balancer
                    .queue_bytes(options.threads.get(), tiles as usize, task as usize),
            ),
            ("spawned tasks", spawned),
        ];
        if options.work_map {
            parts.push(("ray counts", pixels * 4));
        }
        Self::with_outputs(scene, parts, options.work_map, extras)
    }

    /// `parts` and what writing and showing the frame adds to them, largest first.
    pub(crate) fn with_outputs(
        scene: &Scene,
        mut parts: Vec<(&'static str, u64)>,
        work_map: bool,
        extras: FrameExtras,
    ) -> Self {
        let pixels = u64::from(scene.width) * u64::from(scene.height);
        parts.push(("8-bit image and its PNG", pixels * 6));
        if work_map {
            let legend = u64::from(scene.width) * u64::from(crate::workmap::LEGEND_HEIGHT);
            parts.push(("work map", (pixels + legend) * 6));
        }
        if extras.hdr {
            parts.push(("float image and its file", pixels * 24));
        }
        if extras.window {
            parts.push(("preview and window", pixels * 9));
        }
        if extras.reference {
            parts.push(("reference sums", pixels * 24));
        }
        if extras.another_structure > 0 {
            parts.push(("the other structure", extras.another_structure));
        }
        if extras.reduced {
            let per_pixel = 24 + if work_map { 4 } else { 0 };
            parts.push((
                "sums sent and received for the reduction",
                pixels * per_pixel * 2,
            ));
        }
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        Self { parts }
    }

    /// All of it.
    ///
    /// ```
    /// use renderer::render::FrameMemory;
    ///
    /// let memory = FrameMemory { parts: vec![("the film", 3_000), ("the queues", 500)] };
    /// assert_eq!(memory.total(), 3_500);
    /// ```
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|p| p.1).sum()
    }

    /// What `max_memory` (else what the machine has free) leaves once `scene` is built and a
    /// frame of it rendered as `options` say has taken its memory: the room for what a run
    /// keeps beside the frame (a recording's tasks, a frame's rays). `None` where no limit is
    /// known.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// use renderer::render::{FrameMemory, RenderOptions};
    ///
    /// let options = RenderOptions {
    ///     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    ///     threads: NonZeroUsize::MIN,
    ///     tile: NonZeroU32::new(8).unwrap(),
    ///     work_map: false,
    /// };
    /// let frame = FrameMemory::estimate(&scene, &options, Default::default()).total();
    /// let limit = scene.resident_bytes() + frame + 1000;
    /// let left = FrameMemory::left_beside(&scene, &options, Some(limit)).unwrap();
    /// assert_eq!(left.bytes, 1000);
    /// assert!(left.source.ends_with("for the frame"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn left_beside(
        scene: &Scene,
        options: &RenderOptions,
        max_memory: Option<u64>,
    ) -> Option<Budget> {
        let left = Budget::of(max_memory)?.after(scene.resident_bytes())?;
        let frame = Self::estimate(scene, options, FrameExtras::default()).total();
        Some(Budget {
            bytes: left.bytes.saturating_sub(frame),
            source: format!(
                "{}, less {} for the frame",
                left.source,
                format_bytes(frame)
            ),
        })
    }

    /// Refuses a frame that needs more than `budget`, naming the figures.
    ///
    /// # Errors
    /// A one-line explanation when it does not fit.
    ///
    /// ```
    /// use renderer::memory::Budget;
    /// use renderer::render::FrameMemory;
    ///
    /// let memory = FrameMemory { parts: vec![("the film", 3_000_000)] };
    /// let budget = |bytes| Budget { bytes, source: "--max-memory".into() };
    /// assert!(memory.check(&budget(4_000_000)).is_ok());
    /// let refused = memory.check(&budget(1_000_000)).unwrap_err();
    /// assert!(refused.contains("--max-memory") && !refused.contains('\n'));
    /// ```
    pub fn check(&self, budget: &Budget) -> Result<(), String> {
        let total = self.total();
        if total <= budget.bytes {
            return Ok(());
        }
        let largest: Vec<String> = self
            .parts
            .iter()
            .take(2)
            .map(|(what, bytes)| format!("{what} {}", format_bytes(*bytes)))
            .collect();
        Err(format!(
            "the frame needs about {} ({}, …), more than the {} available ({})",
            format_bytes(total),
            largest.join(", "),
            format_bytes(budget.bytes),
            budget.source
        ))
    }
}

/// Tiles of edge `tile` across `extent` pixels.
fn tiles_across(extent: u32, tile: NonZeroU32) -> u64 {
    u64::from(extent.div_ceil(tile.get()))
}

/// Why a frame could not be rendered.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # use renderer::render::RenderOptions;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::render::{RenderError, render};
///
/// // A frame whose film cannot be had is an error, not an abort.
/// let huge = Scene { width: u32::MAX, height: u32::MAX, ..scene };
/// let failed = render(&huge, &options).unwrap_err();
/// assert!(matches!(failed, RenderError::Memory(_)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum RenderError {
    /// A worker thread could not be started.
    Spawn(SpawnError),
    /// The frame's memory could not be had.
    Memory(String),
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Spawn(e) => e.fmt(f),
            Self::Memory(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for RenderError {}

impl From<SpawnError> for RenderError {
    fn from(e: SpawnError) -> Self {
        Self::Spawn(e)
    }
}

/// Renders `scene` as `options` say.
///
/// # Errors
/// When a worker thread cannot be started, or the film's memory cannot be had.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # use renderer::render::RenderOptions;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use renderer::render::render;
///
/// let frame = render(&scene, &options)?;
/// // The same bytes whatever the balancer and thread count.
/// let one = renderer::render::RenderOptions { threads: NonZeroUsize::MIN, ..options };
/// assert_eq!(render(&scene, &one)?.film.sums(), frame.film.sums());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render(scene: &Scene, options: &RenderOptions) -> Result<Frame, RenderError> {
    let film =
        Film::try_new(scene.width, scene.height, options.work_map).map_err(RenderError::Memory)?;
    Ok(render_observed(
        scene,
        options.tile,
        Arc::new(film),
        &Unwatched,
        |tiles, runner| options.balancer.run_frame(options.threads, tiles, runner),
    )?)
}

/// Renders `scene` with any balancer, one of this project's or a user's own: the frame's tiles
/// of edge `tile` are its initial tasks, and every reflection and refraction ray a task
/// spawned by the ray before it, on `threads` workers.
///
/// ```
/// use std::num::{NonZeroU32, NonZeroUsize};
/// use balancers::BalancerKind;
/// use renderer::scene::{Scene, SceneOverrides};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let scene = Scene::load(path.as_ref(), SceneOverrides::default())?;
/// let balancer = BalancerKind::counter(NonZeroUsize::MIN);
/// let frame = renderer::render::render_with(
///     &scene,
///     &balancer,
///     NonZeroUsize::new(4).unwrap(),
///     NonZeroU32::new(32).unwrap(),
/// )?;
/// println!("{:.1} Mrays/s", frame.mrays_per_second());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// When a worker thread cannot be started, or the film's memory cannot be had.
pub fn render_with<B: Balancer>(
    scene: &Scene,
    balancer: &B,
    threads: NonZeroUsize,
    tile: NonZeroU32,
) -> Result<Frame, RenderError> {
    let film = Film::try_new(scene.width, scene.height, false).map_err(RenderError::Memory)?;
    Ok(render_observed(
        scene,
        tile,
        Arc::new(film),
        &Unwatched,
        |t, r| balancer.run(threads, t, r),
    )?)
}

/// Renders `scene` into `film` (black, of the scene's size), reporting to `watch` (new, of
/// the same size) as it goes: another thread may show `film` and `watch` while this runs,
/// or cancel the frame through `watch`. Returns when every worker has been joined, also
/// after a cancel.
///
/// # Errors
/// When a worker thread cannot be started.
///
/// # Panics
/// When `film` or `watch` is not of the scene's size.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # use renderer::render::RenderOptions;
/// # let options = RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # };
/// use std::sync::Arc;
/// use renderer::film::Film;
/// use renderer::render::render_watched;
/// use renderer::watch::FrameWatch;
///
/// let film = Arc::new(Film::new(scene.width, scene.height, false));
/// let watch = FrameWatch::new(scene.width, scene.height);
/// let frame = render_watched(&scene, &options, Arc::clone(&film), &watch)?;
/// assert!(!frame.cancelled);
/// assert_eq!(watch.pixels_done(), 32 * 32);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render_watched(
    scene: &Scene,
    options: &RenderOptions,
    film: Arc<Film>,
    watch: &FrameWatch,
) -> Result<Frame, SpawnError> {
    assert_eq!(
        (watch.width(), watch.height()),
        (scene.width, scene.height),
        "watch of the scene's size"
    );
    render_observed(scene, options.tile, film, watch, |tiles, runner| {
        options.balancer.run_watched(options.threads, tiles, runner)
    })
}

/// Renders `scene` into `film` in tiles of edge `tile`, telling `observer` as it goes: `run`
/// runs the tiles with the frame's runner, under the frame's balancer.
fn render_observed<O, F>(
    scene: &Scene,
    tile: NonZeroU32,
    film: Arc<Film>,
    observer: &O,
    run: F,
) -> Result<Frame, SpawnError>
where
    O: FrameObserver,
    F: FnOnce(&[RenderTask], &Whitted<'_, O>) -> Result<Outcome<WorkerRays>, SpawnError>,
{
    assert_eq!(
        (film.width(), film.height()),
        (scene.width, scene.height),
        "film of the scene's size"
    );
    let tasks: Vec<RenderTask> = tiles(scene.width, scene.height, tile)
        .into_iter()
        .map(RenderTask::Tile)
        .collect();
    let outcome = run(&tasks, &Whitted::new(scene, &film, observer))?;
    Ok(Frame {
        film,
        telemetry: outcome.telemetry,
        rays: outcome.locals.iter().map(|l| l.rays).collect(),
        tiles: tasks.len(),
        device: None,
        hybrid: None,
        cancelled: observer.work_dropped(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{MeshFraming, SceneOverrides};

    fn square(width: u32, height: u32) -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sq.obj");
        std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\n").unwrap();
        let overrides = SceneOverrides {
            width: Some(width),
            height: Some(height),
            ..Default::default()
        };
        Scene::from_mesh(&path, overrides, MeshFraming::default()).unwrap()
    }

    #[test]
    fn a_frame_is_estimated_part_by_part_and_refused_with_its_figures() {
        let scene = square(1000, 1000);
        let options = RenderOptions {
            balancer: BalancerKind::static_tiles(balancers::Assignment::Interleaved).into(),
            threads: NonZeroUsize::new(2).unwrap(),
            tile: NonZeroU32::new(1).unwrap(),
            work_map: false,
        };
        let memory = FrameMemory::estimate(&scene, &options, FrameExtras::default());
        let part = |name: &str| memory.parts.iter().find(|p| p.0 == name).unwrap().1;
        assert_eq!(part("film"), 24_000_000);
        let tile_bytes = (std::mem::size_of::<RenderTask>() + std::mem::size_of::<Tile>()) as u64;
        assert_eq!(part("tiles"), 1_000_000 * tile_bytes);
        assert_eq!(memory.parts[0].0, "tiles", "largest first");
        let budget = Budget {
            bytes: 1 << 20,
            source: "--max-memory".into(),
        };
        let e = memory.check(&budget).unwrap_err();
        assert!(e.starts_with("the frame needs about "), "{e}");
        assert!(
            e.ends_with("more than the 1.0 MiB available (--max-memory)"),
            "{e}"
        );
        assert!(e.contains("(tiles "), "{e}");
        let enough = Budget {
            bytes: memory.total(),
            source: "--max-memory".into(),
        };
        assert_eq!(memory.check(&enough), Ok(()));

        // Reduced over MPI ranks: the sums sent, and rank 0's total beside them.
        let reduced = FrameExtras {
            reduced: true,
            ..FrameExtras::default()
        };
        let cluster = FrameMemory::estimate(&scene, &options, reduced);
        let part = |name: &str| cluster.parts.iter().find(|p| p.0 == name).unwrap().1;
        assert_eq!(part("sums sent and received for the reduction"), 48_000_000);

        // On a GPU the host holds the film and the sums read back.
        let gpu = FrameMemory::estimate_gpu(&scene, true, FrameExtras::default());
        let part = |name: &str| gpu.parts.iter().find(|p| p.0 == name).unwrap().1;
        assert_eq!(part("film"), 28_000_000);
        assert_eq!(part("sums read back"), 28_000_000);
    }
}
