//! `raylb bench trace`: the traversal's throughput on the rays of a frame, by kind (camera rays
//! are coherent, the rays a frame spawns are not), or on the rays of a ray file
//! ([`renderer::ray_file`]), each asked for its closest hit or for occlusion as its kind or
//! file says. A frame's rays can be written to a ray file, for other tracers to trace.
//! Camera rays can be traced in packets, a block of 4×4 pixels to a packet where the wide BVH's
//! traversal runs on AVX-512 and of 4×2 elsewhere ([`WideBvh::packet_lanes`]), through its
//! packet traversal (`--packets on`), which finds the same hits.

use std::borrow::Cow;
use std::num::{NonZeroU32, NonZeroUsize};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use balancers::{Assignment, Balancer, BalancerKind, Choice, Spawn, TaskRunner};
use renderer::accel::Packets;
use renderer::bvh::wide::{LaneMask, PACKET_LANES, PixelBlock, RayPacket};
use renderer::bvh::{NoCounters, TestCounts, TraversalCounters, WideBvh};
use renderer::file_errors::io_reason;
use renderer::geometry::Ray;
use renderer::integrator::{Tile, tiles};
use renderer::math::Vec3;
use renderer::memory::format_bytes;
use renderer::output::StagedFiles;
use renderer::ray_file::{FrameRays, FrameRaysError, MAX_RAYS, Query, RayFile, frame_rays};
use renderer::render::{FrameExtras, FrameMemory, RenderOptions};
use renderer::scene::{CameraExt, Scene};
use renderer::stats::counted;

use crate::progress::Progress;
use crate::scene::SceneSettings;

/// Where the rays `raylb bench trace` traces come from.
///
/// ```
/// use experiments::trace::RaySource;
/// use renderer::ray_file::FrameRays;
///
/// // The reflection rays of a frame: recorded from one frame, then traced on their own.
/// let rays = RaySource::Frame(FrameRays::Reflection);
/// assert!(matches!(rays, RaySource::Frame(FrameRays::Reflection)));
/// ```
#[derive(Debug)]
pub enum RaySource {
    /// A frame's rays of one kind: its camera rays made tile by tile as a frame makes them,
    /// or the rays it traces of another kind, recorded from one frame first.
    Frame(FrameRays),
    /// The rays of a ray file, read beforehand.
    File {
        /// The file, for the report.
        path: PathBuf,
        /// Its rays.
        rays: RayFile,
    },
}

/// What `raylb bench trace` traces.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use experiments::scene::SceneSettings;
/// # use renderer::render::{CpuBalancer, FrameExtras};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # #[derive(Debug)]
/// # struct Small;
/// # impl SceneSettings for Small {
/// #     fn check_options(&self) -> anyhow::Result<()> {
/// #         Ok(())
/// #     }
/// #     fn load_file(&self, file: &std::path::Path, _: bool) -> anyhow::Result<Scene> {
/// #         let small = SceneOverrides {
/// #             width: Some(32),
/// #             height: Some(32),
/// #             ..Default::default()
/// #         };
/// #         Ok(Scene::load(file, small)?)
/// #     }
/// #     fn check_frames(
/// #         &self,
/// #         _: &Scene,
/// #         _: &[CpuBalancer],
/// #         _: &[NonZeroUsize],
/// #         _: &[NonZeroU32],
/// #         _: FrameExtras,
/// #     ) -> anyhow::Result<()> {
/// #         Ok(())
/// #     }
/// # }
/// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// use experiments::trace::{RaySource, TraceOptions};
/// use renderer::accel::Packets;
/// use renderer::ray_file::{FrameRays, RayFile};
///
/// // `Small` reads scenes at 32×32 (see `SceneSettings`).
/// let scene = Small.load_file(file.as_ref(), true)?;
/// let dump = std::env::temp_dir().join(format!("raylb-trace-{}.rays", std::process::id()));
/// let options = TraceOptions {
///     scene: &scene,
///     settings: &Small,
///     threads: NonZeroUsize::new(2).unwrap(),
///     repeat: 1,
///     rays: RaySource::Frame(FrameRays::Camera),
///     packets: Packets::Off,
///     dump: Some(dump.clone()),
///     quiet: true,
/// };
/// experiments::trace::run(&options)?;
/// // One camera ray per pixel, written to the ray file.
/// assert_eq!(RayFile::read(&dump)?.rays.len(), 32 * 32);
/// std::fs::remove_file(&dump)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct TraceOptions<'a> {
    /// The scene, loaded.
    pub scene: &'a Scene,
    /// The settings it was loaded with, which check the frame that records secondary rays.
    pub settings: &'a dyn SceneSettings,
    /// Worker threads.
    pub threads: NonZeroUsize,
    /// Timed passes; the best is reported.
    pub repeat: u32,
    /// Which rays.
    pub rays: RaySource,
    /// Camera rays one at a time or in packets (only a frame's camera rays, in the wide BVH).
    pub packets: Packets,
    /// Where to write the frame's rays as a ray file (checked writable by the caller), with
    /// [`RaySource::Frame`].
    pub dump: Option<PathBuf>,
    /// Print nothing.
    pub quiet: bool,
}

/// A batch of rays one task traces.
#[derive(Clone, Debug)]
enum Batch {
    /// The camera rays of a tile.
    Tile(Tile),
    /// Recorded rays, by their indices.
    Recorded(Range<usize>),
}

/// The tiles of the camera rays, and of the frame that records the secondary ones: small,
/// so that every worker gets many.
const TILE: NonZeroU32 = NonZeroU32::new(16).expect("16 is not 0");

/// Recorded rays a task traces at most: enough that a task costs far more than handing it
/// out, few enough that every worker gets many.
const RECORDED_PER_TASK: usize = 4096;

/// Traces batches of rays for their closest hit, nothing more, reporting every box and
/// triangle test to a `C` (which [`NoCounters`] compiles away).
struct TraceRays<'a, C> {
    scene: &'a Scene,
    recorded: &'a [Ray],
    query: Query,
    /// The tree that traces camera rays in packets, where they are.
    packets: Option<&'a WideBvh>,
    counters: std::marker::PhantomData<C>,
}

impl<'a, C> TraceRays<'a, C> {
    fn new(
        scene: &'a Scene,
        recorded: &'a [Ray],
        query: Query,
        packets: Option<&'a WideBvh>,
    ) -> Self {
        Self {
            scene,
            recorded,
            query,
            packets,
            counters: std::marker::PhantomData,
        }
    }
}

/// One worker's rays, hits and tests.
#[derive(Default)]
struct TraceCounts<C> {
    rays: u64,
    hits: u64,
    tests: C,
}

impl<C: TraversalCounters> TraceCounts<C> {
    #[inline(always)]
    fn trace(&mut self, scene: &Scene, ray: &Ray, query: Query) {
        self.rays += 1;
        let hit = match query {
            Query::ClosestHit => scene
                .accel
                .closest_hit_counted(ray, &mut self.tests)
                .is_some(),
            Query::Occlusion => scene.accel.occluded_counted(ray, &mut self.tests),
        };
        self.hits += u64::from(hit);
    }

    /// Traces the camera rays of `packet` for their closest hits, together.
    #[inline(always)]
    fn trace_packet(&mut self, bvh: &WideBvh, packet: &RayPacket) {
        self.rays += u64::from(packet.active.count());
        let hits = bvh.closest_hit_packet_counted(packet, &mut self.tests);
        self.hits += hits.iter().filter(|hit| hit.is_some()).count() as u64;
    }
}

impl<C: TraversalCounters + Default + Send + Sync> TaskRunner<Batch> for TraceRays<'_, C> {
    type Local = TraceCounts<C>;

    fn local(&self, _worker: usize) -> TraceCounts<C> {
        TraceCounts::default()
    }

    fn run<S: Spawn<Batch>>(&self, batch: Batch, counts: &mut TraceCounts<C>, _spawn: &mut S) {
        let s = self.scene;
        match batch {
            Batch::Tile(tile) if self.packets.is_some() => self.trace_blocks(&tile, counts),
            Batch::Tile(tile) => {
                for y in tile.y0..tile.y1 {
                    for x in tile.x0..tile.x1 {
                        for &offset in s.samples.offsets() {
                            let ray = s.camera.sample_ray(x, y, offset, s.width, s.height);
                            counts.trace(s, &ray, Query::ClosestHit);
                        }
                    }
                }
            }
            Batch::Recorded(range) => {
                for ray in &self.recorded[range] {
                    counts.trace(s, ray, self.query);
                }
            }
        }
    }
}

impl<C: TraversalCounters> TraceRays<'_, C> {
    /// The camera rays of `tile` in packets: the rays of each block of pixels (fewer where the
    /// tile's edge cuts it) for each sample offset.
    fn trace_blocks(&self, tile: &Tile, counts: &mut TraceCounts<C>) {
        let (s, bvh) = (self.scene, self.packets.expect("a tree for packets"));
        let PixelBlock {
            columns: width,
            rows: height,
        } = bvh.packet_block();
        let lanes = (width * height) as usize;
        for y in (tile.y0..tile.y1).step_by(height as usize) {
            for x in (tile.x0..tile.x1).step_by(width as usize) {
                let rows = y..(y + height).min(tile.y1);
                let columns = x..(x + width).min(tile.x1);
                let active = (0..lanes as u32)
                    .filter(|&lane| lane % width < columns.len() as u32)
                    .filter(|&lane| lane / width < rows.len() as u32)
                    .fold(LaneMask::NONE, |mask, lane| mask.with(lane as usize));
                for &offset in s.samples.offsets() {
                    // Lane `k`: pixel `k % 4` of row `k / 4`, the first row's where the tile's
                    // edge cuts the block (ordinary rays, never looked at). Written lane by lane
                    // into the packet: made by `std::array::from_fn`, the rays were once left
                    // to a closure out of line, which took more time than tracing them.
                    let mut packet = RayPacket {
                        rays: [Ray::new(Vec3::ZERO, Vec3::Z); PACKET_LANES],
                        active,
                    };
                    for (lane, ray) in packet.rays[..lanes].iter_mut().enumerate() {
                        let x = (x + lane as u32 % width).min(columns.end - 1);
                        let y = (y + lane as u32 / width).min(rows.end - 1);
                        *ray = s.camera.sample_ray(x, y, offset, s.width, s.height);
                    }
                    counts.trace_packet(bvh, &packet);
                }
            }
        }
    }
}

/// The traversal's throughput: the first pass counts box and triangle tests; the timed passes
/// count nothing.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use experiments::scene::SceneSettings;
/// # use renderer::render::{CpuBalancer, FrameExtras};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # #[derive(Debug)]
/// # struct Small;
/// # impl SceneSettings for Small {
/// #     fn check_options(&self) -> anyhow::Result<()> {
/// #         Ok(())
/// #     }
/// #     fn load_file(&self, file: &std::path::Path, _: bool) -> anyhow::Result<Scene> {
/// #         let small = SceneOverrides {
/// #             width: Some(32),
/// #             height: Some(32),
/// #             ..Default::default()
/// #         };
/// #         Ok(Scene::load(file, small)?)
/// #     }
/// #     fn check_frames(
/// #         &self,
/// #         _: &Scene,
/// #         _: &[CpuBalancer],
/// #         _: &[NonZeroUsize],
/// #         _: &[NonZeroU32],
/// #         _: FrameExtras,
/// #     ) -> anyhow::Result<()> {
/// #         Ok(())
/// #     }
/// # }
/// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # use experiments::trace::{RaySource, TraceOptions};
/// # use renderer::accel::Packets;
/// # use renderer::ray_file::{FrameRays, RayFile};
/// #
/// # // `Small` reads scenes at 32×32 (see `SceneSettings`).
/// # let scene = Small.load_file(file.as_ref(), true)?;
/// # let dump = std::env::temp_dir().join(format!("raylb-trace-{}.rays", std::process::id()));
/// # let options = TraceOptions {
/// #     scene: &scene,
/// #     settings: &Small,
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     repeat: 1,
/// #     rays: RaySource::Frame(FrameRays::Camera),
/// #     packets: Packets::Off,
/// #     dump: Some(dump.clone()),
/// #     quiet: true,
/// # };
/// experiments::trace::run(&TraceOptions { dump: None, ..options })?;
/// assert!(!dump.exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &TraceOptions<'_>) -> Result<()> {
    let (scene, quiet) = (options.scene, options.quiet);
    let packets = packet_tree(options)?;
    let workers = options.threads;
    let balancer = BalancerKind::static_tiles(Assignment::Interleaved);
    let recorded = recorded_rays(options, scene, balancer)?;
    let tasks: Vec<Batch> = match &recorded {
        None => tiles(scene.width, scene.height, TILE)
            .into_iter()
            .map(Batch::Tile)
            .collect(),
        Some(file) => (0..file.rays.len())
            .step_by(RECORDED_PER_TASK)
            .map(|start| Batch::Recorded(start..(start + RECORDED_PER_TASK).min(file.rays.len())))
            .collect(),
    };
    let (rays, query) = recorded
        .as_ref()
        .map_or((&[][..], Query::ClosestHit), |f| (&f.rays[..], f.query));
    let first_pass = balancer.run(
        workers,
        &tasks,
        &TraceRays::<TestCounts>::new(scene, rays, query, packets),
    )?;
    let mut counts = TraceCounts::<TestCounts>::default();
    for c in &first_pass.locals {
        counts.rays += c.rays;
        counts.hits += c.hits;
        counts.tests.add(&c.tests);
    }
    let mut best = Duration::MAX;
    let mut progress = Progress::new(u64::from(options.repeat), "passes", quiet);
    for pass in 1..=options.repeat {
        let started = Instant::now();
        let run = balancer.run(
            workers,
            &tasks,
            &TraceRays::<NoCounters>::new(scene, rays, query, packets),
        )?;
        best = best.min(started.elapsed());
        progress.step(&format!(
            "pass {pass}/{}: {:.3} s",
            options.repeat,
            started.elapsed().as_secs_f64()
        ));
        let again: u64 = run.locals.iter().map(|c| c.hits).sum();
        assert_eq!(again, counts.hits, "timed passes find the same hits");
    }
    progress.finish();
    report(options, workers, query, &counts, best)
}

/// The wide BVH that traces the camera rays in packets, with `--packets on`; refused for
/// rays other than the camera rays a frame makes, and for a structure other than the wide
/// BVH, neither of which has packets to trace.
fn packet_tree<'a>(options: &TraceOptions<'a>) -> Result<Option<&'a WideBvh>> {
    if options.packets == Packets::Off {
        return Ok(None);
    }
    match &options.rays {
        RaySource::Frame(FrameRays::Camera) if options.dump.is_none() => {}
        RaySource::Frame(FrameRays::Camera) => {
            bail!("--packets on traces camera rays as a frame makes them, not from --dump's list")
        }
        RaySource::Frame(which) => bail!(
            "--packets on traces camera rays, not --rays {}",
            which.keyword()
        ),
        RaySource::File { .. } => bail!("--packets on traces camera rays, not a --ray-file"),
    }
    match options.scene.accel.wide() {
        Some(bvh) => Ok(Some(bvh)),
        None => bail!(
            "--packets on needs the wide BVH (--accel wide), not --accel {}",
            options.scene.accel.kind().name()
        ),
    }
}

/// The rays traced from a list: a ray file's, or a frame's of the kind asked for, recorded as
/// `render` would trace them (and written to the dump, if one is asked for); `None` for a
/// frame's camera rays without a dump, which are made tile by tile as a frame makes them.
fn recorded_rays<'a>(
    options: &'a TraceOptions<'_>,
    scene: &Scene,
    balancer: BalancerKind,
) -> Result<Option<Cow<'a, RayFile>>> {
    let which = match &options.rays {
        // Borrowed: a file may hold 2^26 rays.
        RaySource::File { rays, .. } => return Ok(Some(Cow::Borrowed(rays))),
        RaySource::Frame(FrameRays::Camera) if options.dump.is_none() => return Ok(None),
        RaySource::Frame(which) => *which,
    };
    // The recording renders the frame once, as `render` would, on one thread.
    options.settings.check_frames(
        scene,
        &[balancer.into()],
        &[NonZeroUsize::MIN],
        &[TILE],
        FrameExtras::default(),
    )?;
    let frame = RenderOptions {
        balancer: balancer.into(),
        threads: NonZeroUsize::MIN,
        tile: TILE,
        work_map: false,
    };
    let limit = RecordedLimit::of(scene, &frame, options.settings.max_memory());
    let file = frame_rays(scene, which, TILE, limit.rays).map_err(|e| match e {
        FrameRaysError::MoreThan { limit: most, .. } => anyhow!(
            "--rays {}: a frame of {} at {}×{} traces more than {}, {}",
            which.keyword(),
            scene.name,
            scene.width,
            scene.height,
            counted(most as u64, &format!("{} ray", which.keyword())),
            limit.why
        ),
        FrameRaysError::Frame(reason) => anyhow!(reason),
    })?;
    if file.rays.is_empty() {
        let none = match which {
            FrameRays::Secondary => "spawns no reflection or refraction rays".to_string(),
            _ => format!("traces no {} rays", which.keyword()),
        };
        bail!(
            "--rays {}: a frame of {} {none}",
            which.keyword(),
            scene.name
        );
    }
    if let Some(path) = &options.dump {
        write_rays(path, &file)?;
        say!(
            options.quiet,
            "wrote   {} to {}",
            counted(file.rays.len() as u64, &format!("{} ray", which.keyword())),
            path.display()
        );
    }
    Ok(Some(Cow::Owned(file)))
}

/// Bytes of memory a recorded ray may take: the list grows by doubling, so while it moves it
/// holds up to three times its rays.
const RECORDED_RAY_BYTES: u64 = 3 * size_of::<Ray>() as u64;

/// How many of a frame's rays may be recorded, and why no more.
struct RecordedLimit {
    rays: usize,
    why: String,
}

impl RecordedLimit {
    /// As many as a ray file holds ([`MAX_RAYS`]), and as fit, at [`RECORDED_RAY_BYTES`]
    /// each, in the memory that `scene` and its frame, rendered as `frame` says, leave
    /// (`--max-memory`'s, or the machine's).
    fn of(scene: &Scene, frame: &RenderOptions, max_memory: Option<u64>) -> Self {
        match FrameMemory::left_beside(scene, frame, max_memory) {
            Some(left) if left.bytes / RECORDED_RAY_BYTES < MAX_RAYS as u64 => Self {
                rays: (left.bytes / RECORDED_RAY_BYTES) as usize,
                why: format!(
                    "more than fit, at {RECORDED_RAY_BYTES} bytes each while they are \
                     recorded, in the {} available ({}): ask for fewer pixels or samples",
                    format_bytes(left.bytes),
                    left.source
                ),
            },
            _ => Self {
                rays: MAX_RAYS,
                why: "the most a ray file holds (2^26): ask for fewer pixels or samples"
                    .to_string(),
            },
        }
    }
}

/// Writes `file` to `path`, put in place whole or not at all.
fn write_rays(path: &Path, file: &RayFile) -> Result<()> {
    let cannot = |e: std::io::Error| anyhow!("cannot write {}: {}", path.display(), io_reason(&e));
    let mut staged = StagedFiles::new();
    staged.write(path, |out| file.encode(out)).map_err(cannot)?;
    Ok(staged.commit()?)
}

/// What was traced, the hits and tests per ray of the counted pass, and the best time.
fn report(
    options: &TraceOptions<'_>,
    workers: NonZeroUsize,
    query: Query,
    counts: &TraceCounts<TestCounts>,
    best: Duration,
) -> Result<()> {
    let (scene, quiet) = (options.scene, options.quiet);
    let (rays, hits) = (counts.rays, counts.hits);
    let what = match &options.rays {
        RaySource::Frame(FrameRays::Camera) => format!(
            "{}×{}{} camera rays",
            scene.width,
            scene.height,
            match scene.samples.count() {
                1 => String::new(),
                n => format!(" × {n}"),
            }
        ),
        RaySource::Frame(FrameRays::Secondary) => format!(
            "{} of a {}×{} frame",
            counted(rays, "reflection and refraction ray"),
            scene.width,
            scene.height
        ),
        RaySource::Frame(which) => format!(
            "{} of a {}×{} frame",
            counted(rays, &format!("{} ray", which.keyword())),
            scene.width,
            scene.height
        ),
        RaySource::File { path, .. } => format!("{} from {}", counted(rays, "ray"), path.display()),
    };
    let asked = match (query, options.packets, scene.accel.wide()) {
        (Query::ClosestHit, Packets::On, Some(bvh)) => {
            let block = bvh.packet_block();
            Cow::Owned(format!(
                "closest hit only, in packets of {}×{} pixels",
                block.columns, block.rows
            ))
        }
        (Query::ClosestHit, _, _) => Cow::Borrowed("closest hit only"),
        (Query::Occlusion, _, _) => Cow::Borrowed("occlusion (any hit)"),
    };
    say!(
        quiet,
        "{}: {what}, {} in the {} structure, {}, {asked}",
        scene.name,
        counted(scene.stats.triangles as u64, "triangle"),
        scene.accel.kind().name(),
        counted(workers.get() as u64, "thread")
    );
    say!(quiet, "hits    {hits} of {rays} rays");
    let per_ray = |count: u64| count as f64 / rays as f64;
    say!(
        quiet,
        "tests   {:.1} box and {:.1} triangle tests per ray",
        per_ray(counts.tests.boxes),
        per_ray(counts.tests.triangles)
    );
    say!(
        quiet,
        "steps   {:.2} nodes and {:.2} leaves visited per ray",
        per_ray(counts.tests.nodes),
        per_ray(counts.tests.leaves)
    );
    say!(
        quiet,
        "time    best of {}: {:.4} s, {:.2} Mrays/s",
        counted(u64::from(options.repeat), "pass"),
        best.as_secs_f64(),
        rays as f64 / best.as_secs_f64() / 1e6
    );
    Ok(())
}
