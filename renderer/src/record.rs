//! A frame's task tree, for the simulator: every tile and every reflection and refraction ray
//! of one frame, with what each spawned and the work each did, counted in deterministic units,
//! and the seconds those units cost on this machine, fitted against one thread's times.
//!
//! The frame is rendered twice. The first run counts: each task's box and triangle tests (of
//! its closest-hit queries and its shadow rays), its shadow rays and its rays, and how far
//! through its tests it was when it spawned each child; its workers do not remember their
//! shadow rays' blockers, so that a task's counts do not depend on what its worker ran
//! before. The second runs with nothing counted and times every task, tracing as a frame
//! does, blockers and all; the two runs make the same tree (it is the frame's, not the
//! balancer's; compared by shape), so each time is matched to its task's counts, and a
//! least-squares fit gives the cost of a task and of each unit ([`CostModel::fit`]).
//!
//! The timed run is `static` on one thread unless asked for more: on a machine whose cores
//! slow each other down when all are busy (siblings of one physical core, shared caches and
//! memory bandwidth, a host shared with other work), a task takes longer while the other
//! workers run, and a model fitted on `n` busy threads is the one to simulate `n` workers
//! with.
//!
//! ```
//! use std::num::{NonZeroU32, NonZeroUsize};
//! use balancers::BalancerKind;
//! use renderer::record::{KINDS, count};
//! use renderer::scene::{Scene, SceneOverrides};
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
//! # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
//! let scene = Scene::load(path.as_ref(), overrides)?;
//! let one = NonZeroUsize::MIN;
//! let tree = count(&scene, NonZeroU32::new(8).unwrap(), &BalancerKind::counter(one), one)?;
//! // Every task after the tiles was spawned by another.
//! assert!((tree.initial()..tree.len()).all(|i| tree.parent(i).is_some()));
//! assert!((0..tree.len()).all(|i| usize::from(tree.kind(i)) < KINDS.len()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use balancers::sim::{CostModel, FitError, MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
use balancers::{Assignment, Balancer, BalancerKind, Spawn, SpawnError, TaskRunner};

use crate::bvh::{NoCounters, TraversalCounters};
use crate::film::Film;
use crate::integrator::{RayKind, RenderTask, Tile, TraceObserver, Whitted, WorkerRays, tiles};
use crate::memory::{Budget, format_bytes};
use crate::render::{FrameMemory, RenderOptions};
use crate::scene::Scene;
use crate::watch::Unwatched;

/// The kinds of task, by [`TaskTree::kind`]: the camera rays of a tile (or of a piece of a
/// large tile), one reflection ray, one refraction ray.
pub const KINDS: [&str; 3] = ["tile", "reflection", "refraction"];

/// The work counts of a task, in the order of [`TaskTree::work`]. A tile's tests are counted
/// apart from a ray task's: its camera rays are coherent, and a test costs less in them than
/// in scattered secondary rays, so that one cost for both misjudges whole tiles. A hit costs
/// its shading besides its tests; a camera ray, making it.
pub const FEATURES: [&str; 7] = [
    "tile box tests",
    "tile triangle tests",
    "box tests",
    "triangle tests",
    "shadow rays",
    "hits",
    "camera rays",
];

/// A recorded frame, and how long recording it took.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let (tile, one) = (NonZeroU32::new(8).unwrap(), NonZeroUsize::MIN);
/// # let balancer = BalancerKind::counter(one);
/// let recording = renderer::record::record(&scene, tile, &balancer, one, one)?;
/// // A 32×32 frame in tiles of 8: 16 tiles, then the rays they spawned.
/// assert_eq!(recording.tree.initial(), 16);
/// assert!(recording.tree.len() >= 16);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Recording {
    /// The tree, with the fitted model.
    pub tree: TaskTree,
    /// The counting run's wall time.
    pub counted: Duration,
    /// The timed run's wall time.
    pub timed: Duration,
}

/// Why a frame could not be recorded.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let (tile, one) = (NonZeroU32::new(8).unwrap(), NonZeroUsize::MIN);
/// # let balancer = BalancerKind::counter(one);
/// use renderer::record::{RecordError, record_within};
///
/// let refused = record_within(&scene, tile, &balancer, one, one, 4);
/// assert!(matches!(refused, Err(RecordError::TooManyTasks(4))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum RecordError {
    /// A worker thread could not be started.
    Spawn(SpawnError),
    /// The film could not be made.
    Film(String),
    /// The two runs made different trees, or the tasks did not make one (a bug).
    Tree(String),
    /// The times could not be fitted.
    Fit(FitError),
    /// The frame has more tasks than the recording may hold (the bound given to
    /// [`record_within`]); the tasks past it were neither run nor kept.
    TooManyTasks(u64),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Spawn(e) => write!(f, "{e}"),
            RecordError::Film(e) => write!(f, "{e}"),
            RecordError::Tree(e) => write!(f, "the recorded tasks: {e}"),
            RecordError::Fit(e @ FitError::TooFewRows { .. }) => write!(
                f,
                "fitting the cost model: {e}; record a frame of more tasks (a larger image, or smaller tiles)"
            ),
            RecordError::Fit(e) => write!(f, "fitting the cost model: {e}"),
            RecordError::TooManyTasks(max) => write!(
                f,
                "the frame has more than {max} tasks, the most a recording may hold at about {BYTES_PER_TASK} bytes each"
            ),
        }
    }
}

impl std::error::Error for RecordError {}

/// Records the frame of `scene` cut into tiles of edge `tile`: counted with `balancer` on
/// `threads` workers (the tree does not depend on either), then timed by `static` on
/// `timing_threads` workers.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let (tile, one) = (NonZeroU32::new(8).unwrap(), NonZeroUsize::MIN);
/// # let balancer = BalancerKind::counter(one);
/// let recording = renderer::record::record(&scene, tile, &balancer, one, one)?;
/// let tiles = (0..recording.tree.len()).filter(|&i| recording.tree.kind(i) == 0);
/// assert_eq!(tiles.count(), 16);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn record(
    scene: &Scene,
    tile: NonZeroU32,
    balancer: &BalancerKind,
    threads: NonZeroUsize,
    timing_threads: NonZeroUsize,
) -> Result<Recording, RecordError> {
    record_within(scene, tile, balancer, threads, timing_threads, u64::MAX)
}

/// [`record`], holding at most `max_tasks` tasks: a frame with more is refused
/// ([`RecordError::TooManyTasks`]) as soon as the counting run passes the bound, before their
/// records are kept. A recording peaks at about [`BYTES_PER_TASK`] a task.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let (tile, one) = (NonZeroU32::new(8).unwrap(), NonZeroUsize::MIN);
/// # let balancer = BalancerKind::counter(one);
/// use renderer::record::{RecordError, record_within};
///
/// let e = record_within(&scene, tile, &balancer, one, one, 10).unwrap_err();
/// assert!(matches!(e, RecordError::TooManyTasks(10)));
/// assert!(e.to_string().starts_with("the frame has more than 10 tasks"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn record_within(
    scene: &Scene,
    tile: NonZeroU32,
    balancer: &BalancerKind,
    threads: NonZeroUsize,
    timing_threads: NonZeroUsize,
    max_tasks: u64,
) -> Result<Recording, RecordError> {
    let start = Instant::now();
    let mut tree = count_within(scene, tile, balancer, threads, max_tasks)?;
    let counted_time = start.elapsed();
    if timing_threads.get() > 1 {
        tree.description += &format!(", timed on {timing_threads} threads");
    }

    let start = Instant::now();
    let fixed = BalancerKind::static_tiles(Assignment::Interleaved);
    let timed = run::<NoCounting>(scene, tile, &fixed, timing_threads, max_tasks)?;
    let timed_time = start.elapsed();
    let (shape, number) = TaskTree::from_recorded_numbered(
        tree.description.clone(),
        names(&KINDS),
        names(&FEATURES),
        untimed(),
        &timed.tasks,
    )
    .map_err(RecordError::Tree)?;
    if !shape.same_shape(&tree) {
        return Err(RecordError::Tree(
            "the timed run made another tree than the counted one".into(),
        ));
    }
    let mut seconds = vec![0.0f64; tree.len()];
    for (k, &n) in number.iter().enumerate() {
        seconds[n as usize] = timed.seconds[k];
    }
    let work: Vec<u32> = (0..tree.len())
        .flat_map(|i| tree.work(i).iter().copied())
        .collect();
    tree.model = CostModel::fit(FEATURES.len(), &work, &seconds, &tree.subtrees())
        .map_err(RecordError::Fit)?;
    Ok(Recording {
        tree,
        counted: counted_time,
        timed: timed_time,
    })
}

/// The task tree of the frame of `scene` cut into tiles of edge `tile`, counted with
/// `balancer` on `threads` workers, with a model of no cost: [`record`] without its timed run,
/// for trees to be simulated on another recording's model.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let (tile, one) = (NonZeroU32::new(8).unwrap(), NonZeroUsize::MIN);
/// # let balancer = BalancerKind::counter(one);
/// let tree = renderer::record::count(&scene, tile, &balancer, one)?;
/// let again = renderer::record::count(&scene, tile, &BalancerKind::counter(one), one)?;
/// assert!(tree.same_shape(&again));
/// assert_eq!(tree.initial(), 16);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn count(
    scene: &Scene,
    tile: NonZeroU32,
    balancer: &BalancerKind,
    threads: NonZeroUsize,
) -> Result<TaskTree, RecordError> {
    count_within(scene, tile, balancer, threads, u64::MAX)
}

/// [`count`], holding at most `max_tasks` tasks (see [`record_within`]).
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let (tile, one) = (NonZeroU32::new(8).unwrap(), NonZeroUsize::MIN);
/// use renderer::record::{RecordError, count_within};
///
/// let balancer = BalancerKind::counter(one);
/// let tree = count_within(&scene, tile, &balancer, one, 1 << 20)?;
/// let too_many = count_within(&scene, tile, &balancer, one, tree.len() as u64 - 1);
/// assert!(matches!(too_many, Err(RecordError::TooManyTasks(_))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn count_within(
    scene: &Scene,
    tile: NonZeroU32,
    balancer: &BalancerKind,
    threads: NonZeroUsize,
    max_tasks: u64,
) -> Result<TaskTree, RecordError> {
    let counted = run::<Counting>(scene, tile, balancer, threads, max_tasks)?;
    let samples = scene.samples.offsets().len();
    let description = format!(
        "{} {}×{}, {} sample{} per pixel, tiles of {}",
        scene.name,
        scene.width,
        scene.height,
        samples,
        if samples == 1 { "" } else { "s" },
        tile
    );
    TaskTree::from_recorded(
        description,
        names(&KINDS),
        names(&FEATURES),
        untimed(),
        &counted.tasks,
    )
    .map_err(RecordError::Tree)
}

/// `list` as owned strings.
fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A model in which nothing costs anything.
fn untimed() -> CostModel {
    CostModel {
        per_task: 0.0,
        per_unit: vec![0.0; FEATURES.len()],
        fit: None,
    }
}

/// Every task of one run, as recorded, with its seconds.
struct Run {
    tasks: Vec<RecordedTask>,
    seconds: Vec<f64>,
}

/// Renders the frame once with `balancer`, recording every task, or fails once more than
/// `max_tasks` are.
fn run<M: Measure>(
    scene: &Scene,
    tile: NonZeroU32,
    balancer: &BalancerKind,
    threads: NonZeroUsize,
    max_tasks: u64,
) -> Result<Run, RecordError> {
    let film = Film::try_new(scene.width, scene.height, false).map_err(RecordError::Film)?;
    let initial: Vec<Tracked> = tiles(scene.width, scene.height, tile)
        .into_iter()
        .enumerate()
        .map(|(i, t)| Tracked {
            id: INITIAL | i as u64,
            parent: NO_PARENT,
            index: i as u32,
            progress_at_spawn: 0,
            task: RenderTask::Tile(t),
        })
        .collect();
    let recorder = Recorder {
        whitted: Whitted::new(scene, &film, &Unwatched),
        width: scene.width,
        limit: TaskLimit {
            max: max_tasks,
            claimed: AtomicU64::new(0),
        },
        measure: PhantomData::<M>,
    };
    let outcome = balancer
        .run(threads, &initial, &recorder)
        .map_err(RecordError::Spawn)?;
    if outcome.locals.iter().any(|log| log.over) {
        return Err(RecordError::TooManyTasks(max_tasks));
    }
    let mut tasks = Vec::new();
    let mut seconds = Vec::new();
    for log in outcome.locals {
        tasks.extend(log.tasks);
        seconds.extend(log.seconds);
    }
    Ok(Run { tasks, seconds })
}

/// Ids of initial tasks: this bit and their index. Spawned tasks get the spawning worker's
/// number above [`WORKER_SHIFT`] and its count of spawns below.
const INITIAL: u64 = 1 << 63;
const WORKER_SHIFT: u32 = 40;

/// A task with the names the recording gives it.
#[derive(Clone, Debug)]
struct Tracked {
    id: u64,
    parent: u64,
    index: u32,
    /// The parent's tests when it spawned this task.
    progress_at_spawn: u64,
    task: RenderTask,
}

/// How one run measures its tasks: the counting run counts tests, the timed one counts
/// nothing, so that its times are a plain render's.
trait Measure: Sync {
    /// Whether the tasks' tests are counted.
    const COUNTS: bool;
}

struct Counting;
impl Measure for Counting {
    const COUNTS: bool = true;
}

struct NoCounting;
impl Measure for NoCounting {
    const COUNTS: bool = false;
}

/// The integrator, recording every task it runs.
struct Recorder<'a, M> {
    whitted: Whitted<'a, Unwatched>,
    width: u32,
    limit: TaskLimit,
    measure: PhantomData<M>,
}

/// One worker's record.
struct Log {
    rays: WorkerRays,
    worker: u64,
    spawned: u64,
    tasks: Vec<RecordedTask>,
    seconds: Vec<f64>,
    /// Tasks this worker may still record before it claims more of the [`TaskLimit`].
    allowance: u64,
    /// A task was dropped: the run passed its limit.
    over: bool,
}

/// What a recording peaks at per task: each worker's records (a [`RecordedTask`] and its
/// seconds, in vectors that grow by doubling), the records gathered from all workers, and the
/// trees made from both runs, with the tree's arrays, the matched seconds, work and subtrees
/// beside the second run's records. Measured with `/usr/bin/time -v` on `raylb record` of
/// `scenes/treasure.toml` at 512² to 2048² (peak resident size less the scene and the frame,
/// over the tasks), rounded up.
pub const BYTES_PER_TASK: u64 = 400;

/// The memory a recording may take, and the most tasks that fit in it at [`BYTES_PER_TASK`]
/// each: the memory at hand (`--max-memory`, or what the machine has free) less the built
/// scene and the frame's own memory.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let (tile, one) = (NonZeroU32::new(8).unwrap(), NonZeroUsize::MIN);
/// use renderer::record::{BYTES_PER_TASK, TaskRoom, count_within};
/// use renderer::render::RenderOptions;
///
/// let options = RenderOptions {
///     balancer: BalancerKind::counter(one).into(),
///     threads: one,
///     tile,
///     work_map: false,
/// };
/// // Room for the scene, the frame and ten tasks.
/// let bytes = scene.resident_bytes()
///     + renderer::render::FrameMemory::estimate(&scene, &options, Default::default()).total()
///     + 10 * BYTES_PER_TASK;
/// let room = TaskRoom::of(&scene, &options, Some(bytes));
/// assert_eq!(room.tasks, 10);
/// let e = count_within(&scene, tile, &BalancerKind::counter(one), one, room.tasks).unwrap_err();
/// assert!(room.refusal(&scene, &e).starts_with("32×32: the frame has more than 10 tasks"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct TaskRoom {
    /// What is left for the recording, and where the figure comes from; `None` where the
    /// machine reports no limit.
    pub left: Option<Budget>,
    /// The most tasks that fit in it (`u64::MAX` without a limit).
    pub tasks: u64,
}

impl TaskRoom {
    /// The room left for recording a frame of `scene` rendered as `options` say, within
    /// `max_memory` (else the machine's free memory).
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// use renderer::record::TaskRoom;
    /// use renderer::render::RenderOptions;
    ///
    /// let options = RenderOptions {
    ///     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    ///     threads: NonZeroUsize::MIN,
    ///     tile: NonZeroU32::new(8).unwrap(),
    ///     work_map: false,
    /// };
    /// // Less memory than the scene takes: no room at all.
    /// assert_eq!(TaskRoom::of(&scene, &options, Some(1)).tasks, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of(scene: &Scene, options: &RenderOptions, max_memory: Option<u64>) -> Self {
        let left = FrameMemory::left_beside(scene, options, max_memory);
        Self {
            tasks: left.as_ref().map_or(u64::MAX, |l| l.bytes / BYTES_PER_TASK),
            left,
        }
    }

    /// `e`, a recording's error, said with the frame's size and, where the frame had more tasks
    /// than this room holds, the memory it had.
    ///
    /// ```
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// use renderer::memory::Budget;
    /// use renderer::record::{RecordError, TaskRoom};
    ///
    /// let left = Budget { bytes: 4000, source: "--max-memory".into() };
    /// let room = TaskRoom { left: Some(left), tasks: 10 };
    /// let said = room.refusal(&scene, &RecordError::TooManyTasks(10));
    /// assert!(said.starts_with("32×32: the frame has more than 10 tasks"));
    /// assert!(said.ends_with("within the 3.9 KiB left of the memory at hand (--max-memory)"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn refusal(&self, scene: &Scene, e: &RecordError) -> String {
        match (e, &self.left) {
            (RecordError::TooManyTasks(_), Some(left)) => format!(
                "{}×{}: {e}, within the {} left of the memory at hand ({})",
                scene.width,
                scene.height,
                format_bytes(left.bytes),
                left.source
            ),
            _ => e.to_string(),
        }
    }
}

/// How many tasks a run may record, shared by its workers, who claim it [`TaskLimit::CHUNK`]
/// tasks at a time so that the shared count is touched once per chunk, not once per task.
struct TaskLimit {
    max: u64,
    claimed: AtomicU64,
}

impl TaskLimit {
    /// Tasks claimed at once: many enough that claiming costs nothing beside tracing that
    /// many rays. A claim is cut to what is left, so the workers never hold more than the
    /// bound; the last claims can leave up to `threads · CHUNK` of it unused.
    const CHUNK: u64 = 4096;

    /// Gives `log` more tasks to record, or marks it over the limit when none are left.
    /// Relaxed: the count orders nothing else, and every claim sees every earlier one.
    fn claim(&self, log: &mut Log) -> bool {
        let before = self.claimed.fetch_add(Self::CHUNK, Ordering::Relaxed);
        if before >= self.max {
            log.over = true;
            return false;
        }
        log.allowance = Self::CHUNK.min(self.max - before);
        true
    }
}

/// A task's box and triangle tests so far, in cells, so that the spawn handle can read them
/// while the traversal adds to them.
#[derive(Default)]
struct Tests {
    boxes: Cell<u64>,
    triangles: Cell<u64>,
    hits: Cell<u64>,
}

impl Tests {
    fn total(&self) -> u64 {
        self.boxes.get() + self.triangles.get()
    }
}

/// The traversal's counters, adding to [`Tests`].
struct CountInto<'a>(&'a Tests);

impl TraversalCounters for CountInto<'_> {
    #[inline(always)]
    fn box_test(&mut self) {
        self.0.boxes.set(self.0.boxes.get() + 1);
    }
    #[inline(always)]
    fn triangle_test(&mut self) {
        self.0.triangles.set(self.0.triangles.get() + 1);
    }
    #[inline(always)]
    fn closest_query(&mut self, hit: bool) {
        self.0.hits.set(self.0.hits.get() + u64::from(hit));
    }
}

impl TraceObserver for CountInto<'_> {}

/// The spawn handle a recorded task gets: names each child and passes it on.
struct Children<'a, S> {
    parent: u64,
    worker: u64,
    spawned: &'a mut u64,
    count: u32,
    tests: &'a Tests,
    inner: &'a mut S,
}

impl<S: Spawn<Tracked>> Spawn<RenderTask> for Children<'_, S> {
    fn spawn(&mut self, task: RenderTask) {
        let id = self.worker << WORKER_SHIFT | *self.spawned;
        *self.spawned += 1;
        self.inner.spawn(Tracked {
            id,
            parent: self.parent,
            index: self.count,
            progress_at_spawn: self.tests.total(),
            task,
        });
        self.count += 1;
    }
}

impl<M: Measure> TaskRunner<Tracked> for Recorder<'_, M> {
    type Local = Log;

    fn local(&self, worker: usize) -> Log {
        Log {
            // The counted run: every balancer must record the same tree and counts, so no
            // task's work may depend on what its worker ran before it. The timed run traces as
            // a frame does, remembered blockers and all, so that the fitted costs are the
            // real run's; its tree is compared by shape alone.
            rays: if M::COUNTS {
                self.whitted.local_without_blockers(worker)
            } else {
                self.whitted.local(worker)
            },
            worker: worker as u64,
            spawned: 0,
            tasks: Vec::new(),
            seconds: Vec::new(),
            allowance: 0,
            over: false,
        }
    }

    fn run<S: Spawn<Tracked>>(&self, tracked: Tracked, log: &mut Log, spawn: &mut S) {
        // Past the limit, a task is dropped unrun: it spawns nothing, and the run drains.
        if log.over || (log.allowance == 0 && !self.limit.claim(log)) {
            return;
        }
        log.allowance -= 1;
        let (kind, depth, place) = match &tracked.task {
            RenderTask::Tile(tile) => (0, 0, first_pixel(tile, self.width)),
            RenderTask::Ray(ray) => (
                match ray.kind {
                    RayKind::Reflection => 1,
                    RayKind::Refraction => 2,
                    RayKind::Camera => unreachable!("camera rays are traced by their tile"),
                },
                u16::from(ray.depth),
                ray.pixel,
            ),
        };
        let before = log.rays.rays;
        let tests = Tests::default();
        let mut children = Children {
            parent: tracked.id,
            worker: log.worker,
            spawned: &mut log.spawned,
            count: 0,
            tests: &tests,
            inner: spawn,
        };
        let start = Instant::now();
        if M::COUNTS {
            let mut counters = CountInto(&tests);
            self.whitted
                .run_counted(tracked.task, &mut log.rays, &mut counters, &mut children);
        } else {
            self.whitted
                .run_counted(tracked.task, &mut log.rays, &mut NoCounters, &mut children);
        }
        let seconds = start.elapsed().as_secs_f64();
        let after = log.rays.rays;
        let mut work = [0u32; MAX_FEATURES];
        let (boxes, triangles) = (tests.boxes.get(), tests.triangles.get());
        let (tile, ray) = if kind == 0 {
            ([boxes, triangles], [0, 0])
        } else {
            ([0, 0], [boxes, triangles])
        };
        let counts = [
            tile[0],
            tile[1],
            ray[0],
            ray[1],
            after.shadow - before.shadow,
            tests.hits.get(),
            after.camera - before.camera,
        ];
        for (w, c) in work.iter_mut().zip(counts) {
            *w = u32::try_from(c).unwrap_or(u32::MAX);
        }
        log.tasks.push(RecordedTask {
            id: tracked.id,
            parent: tracked.parent,
            index: tracked.index,
            kind,
            depth,
            place,
            work,
            progress_at_spawn: tracked.progress_at_spawn,
            progress: tests.total(),
        });
        log.seconds.push(seconds);
    }
}

/// The row-major index of a tile's top-left pixel.
fn first_pixel(tile: &Tile, width: u32) -> u32 {
    tile.y0 * width + tile.x0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::SceneOverrides;

    fn recorder<'a, M>(scene: &'a Scene, film: &'a Film) -> Recorder<'a, M> {
        Recorder {
            whitted: Whitted::new(scene, film, &Unwatched),
            width: scene.width,
            limit: TaskLimit {
                max: u64::MAX,
                claimed: AtomicU64::new(0),
            },
            measure: PhantomData,
        }
    }

    /// The counted run's workers do the same work whoever ran what before; the timed run's
    /// trace as a frame's do, so that the costs fitted to its seconds are a frame's.
    #[test]
    fn only_the_timed_run_remembers_blockers() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
        let overrides = SceneOverrides {
            width: Some(16),
            height: Some(16),
            ..Default::default()
        };
        let scene = Scene::load(path.as_ref(), overrides).unwrap();
        assert!(!scene.lights.is_empty());
        let film = Film::new(16, 16, false);
        let whitted = Whitted::new(&scene, &film, &Unwatched);
        let counted = recorder::<Counting>(&scene, &film).local(1);
        let timed = recorder::<NoCounting>(&scene, &film).local(1);
        assert_eq!(counted.rays, whitted.local_without_blockers(1));
        assert_eq!(timed.rays, whitted.local(1));
        assert_ne!(timed.rays, counted.rays);
    }
}
