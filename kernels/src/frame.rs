//! One frame on the GPU: upload, launch, read back.
//!
//! Every struct, code and constant the kernels share with the host comes from the `layout`
//! crate, whose definitions the kernels' header `raylb_layout.cuh` is generated from.

use std::time::Duration;

pub use layout::kernel::WarpDeque;
use layout::kernel::{
    BUFFER, DequeHead, ErrorBit, MANAGED_THREADS, Mode, PERSISTENT_THREADS, STAT_SLOTS, Stat,
    WARPS_PER_BLOCK,
};
use layout::params;
use layout::task::{TILE_CORNER_BITS, Task};
use layout::wide::WideNode;
use layout::{
    Camera, FlatNode, Light, Material, Ptr, PtrMut, RenderSettings, Triangle, TriangleShading,
};

use crate::engine::{DeviceArray, KernelResources, Mark, Memory, Param};
use crate::{Gpu, GpuError};

/// The GPU balancers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuBalancer {
    /// Persistent warps, each with an interleaved share of the tiles.
    Static,
    /// Persistent warps taking `chunk` tiles at a time from one global counter.
    Counter {
        /// Tiles per grab.
        chunk: u32,
    },
    /// Persistent warps with deques in global memory, pre-filled with each warp's share of the
    /// tiles; idle warps steal from random victims, half of the victim's tasks (at most 32) or
    /// one.
    Stealing {
        /// Steal up to half rather than one.
        half: bool,
        /// The deque: locked, or non-blocking.
        deque: WarpDeque,
    },
    /// One block per tile; the hardware's block scheduler balances.
    CudaManaged,
}

impl GpuBalancer {
    /// Every GPU balancer and setting the byte-compare checks: static, counter (chunk 1),
    /// stealing with each deque, steal half and steal one, cuda-managed.
    pub const EVERY: [GpuBalancer; 7] = [
        GpuBalancer::Static,
        GpuBalancer::Counter { chunk: 1 },
        GpuBalancer::Stealing {
            half: true,
            deque: WarpDeque::Locked,
        },
        GpuBalancer::Stealing {
            half: false,
            deque: WarpDeque::Locked,
        },
        GpuBalancer::Stealing {
            half: true,
            deque: WarpDeque::NonBlocking,
        },
        GpuBalancer::Stealing {
            half: false,
            deque: WarpDeque::NonBlocking,
        },
        GpuBalancer::CudaManaged,
    ];

    /// `stealing` as it runs unless told otherwise: the locked deque, steal half.
    pub const STEALING: GpuBalancer = GpuBalancer::Stealing {
        half: true,
        deque: WarpDeque::Locked,
    };

    /// The balancer's name on the command line: `static`, `counter`, `stealing` or
    /// `cuda-managed`.
    pub fn family(&self) -> &'static str {
        match self {
            GpuBalancer::Static => "static",
            GpuBalancer::Counter { .. } => "counter",
            GpuBalancer::Stealing { .. } => "stealing",
            GpuBalancer::CudaManaged => "cuda-managed",
        }
    }

    /// The name in reports, e.g. `gpu-stealing/half` (the locked deque) or
    /// `gpu-stealing/abp/one` (the non-blocking one).
    pub fn name(&self) -> String {
        match self {
            GpuBalancer::Static => "gpu-static".into(),
            GpuBalancer::Counter { chunk } => format!("gpu-counter/chunk={chunk}"),
            GpuBalancer::Stealing { half, deque } => format!(
                "gpu-stealing/{}{}",
                match deque {
                    WarpDeque::Locked => "",
                    WarpDeque::NonBlocking => "abp/",
                },
                if *half { "half" } else { "one" }
            ),
            GpuBalancer::CudaManaged => "cuda-managed".into(),
        }
    }

    /// The persistent kernel's code for the balancer; `None` for `cuda-managed`, which is
    /// another kernel.
    fn mode(&self) -> Option<Mode> {
        match self {
            GpuBalancer::Static => Some(Mode::Static),
            GpuBalancer::Counter { .. } => Some(Mode::Counter),
            GpuBalancer::Stealing { .. } => Some(Mode::Stealing),
            GpuBalancer::CudaManaged => None,
        }
    }
}

/// The structure the kernels trace a scene through.
#[derive(Clone, Copy, Debug)]
pub enum Structure<'a> {
    /// The octree's eight pre-order node arrays (one per ray octant), one after the other,
    /// each of the same length.
    Octree(&'a [FlatNode]),
    /// The wide BVH's nodes in its GPU form; the root is node 0.
    Wide(&'a [WideNode]),
}

impl Structure<'_> {
    /// The structure's name, as `--accel` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Structure::Octree(_) => "octree",
            Structure::Wide(_) => "wide",
        }
    }
}

/// The scene as the kernels read it: the renderer's arrays, whose types are the shared
/// layout, uploaded as they are. The per-triangle arrays are in the structure's leaf order.
#[derive(Clone, Copy, Debug)]
pub struct SceneData<'a> {
    /// The structure traced.
    pub structure: Structure<'a>,
    /// Triangles in leaf order.
    pub triangles: &'a [Triangle],
    /// The index in the scene's input of each triangle.
    pub ids: &'a [u32],
    /// Shading data per triangle.
    pub shading: &'a [TriangleShading],
    /// Materials.
    pub materials: &'a [Material],
    /// Lights.
    pub lights: &'a [Light],
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The BVH's box padding.
    pub padding: f32,
    /// The camera.
    pub camera: Camera,
    /// The integrator's settings.
    pub settings: RenderSettings,
    /// Camera rays per pixel (at least 1), placed as the CPU's `PixelSamples` places them.
    pub samples: u32,
}

/// How to render one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRequest {
    /// The balancer.
    pub balancer: GpuBalancer,
    /// Tile edge in pixels.
    pub tile: u32,
    /// Count rays per pixel.
    pub work_map: bool,
    /// Seed of the victim choice.
    pub seed: u32,
    /// At most this many persistent warps (never more than can be resident, whatever this
    /// says); `None`: all that can be resident.
    pub max_warps: Option<u32>,
}

/// One worker's figures: a persistent warp's, or for `cuda-managed` those of the blocks that
/// ran in one resident slot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarpStats {
    /// Tiles started (initial ones and the parts large ones are cut into).
    pub tiles: u64,
    /// Camera rays traced.
    pub camera: u64,
    /// Shadow rays traced.
    pub shadow: u64,
    /// Reflection rays traced.
    pub reflection: u64,
    /// Refraction rays traced.
    pub refraction: u64,
    /// Child tasks spawned.
    pub spawned: u64,
    /// Warp steps (each traces one ray per active lane).
    pub steps: u64,
    /// Active lanes summed over steps.
    pub active_lanes: u64,
    /// Steal attempts.
    pub steal_attempts: u64,
    /// Successful steals.
    pub steal_successes: u64,
    /// Tasks brought back by steals.
    pub tasks_stolen: u64,
    /// Time tracing and taking work.
    pub busy: Duration,
    /// Time with nothing to trace.
    pub idle: Duration,
    /// Most tasks in the warp's deque at once.
    pub peak_queued: u64,
}

impl WarpStats {
    /// Adds `other`'s figures (another launch of the same worker) to these; the peak is the
    /// larger.
    fn add(&mut self, other: &WarpStats) {
        self.tiles += other.tiles;
        self.camera += other.camera;
        self.shadow += other.shadow;
        self.reflection += other.reflection;
        self.refraction += other.refraction;
        self.spawned += other.spawned;
        self.steps += other.steps;
        self.active_lanes += other.active_lanes;
        self.steal_attempts += other.steal_attempts;
        self.steal_successes += other.steal_successes;
        self.tasks_stolen += other.tasks_stolen;
        self.busy += other.busy;
        self.idle += other.idle;
        self.peak_queued = self.peak_queued.max(other.peak_queued);
    }
}

/// The result of a frame.
#[derive(Clone, Debug)]
pub struct GpuFrame {
    /// Fixed-point sums per pixel (row-major), exactly as the CPU film keeps them.
    pub sums: Vec<[u64; 3]>,
    /// Rays per pixel, if asked for.
    pub rays: Option<Vec<u32>>,
    /// One entry per worker.
    pub workers: Vec<WarpStats>,
    /// Kernel time of each launch, from events around it: one launch for a whole frame, one
    /// a batch for a frame traced in batches ([`Gpu::batches`]).
    pub launch_times: Vec<Duration>,
    /// Threads per block and blocks launched (for `cuda-managed`, one per tile).
    pub launch: (u32, u32),
    /// The kernel that traced the frame: its registers, local and shared memory, and the
    /// occupancy they give (`None` when nothing was launched).
    pub resources: Option<KernelResources>,
}

impl GpuFrame {
    /// Kernel time, summed over the launches.
    pub fn kernel_time(&self) -> Duration {
        self.launch_times.iter().sum()
    }

    /// Mean active lanes per warp step over 32: the SIMT efficiency.
    pub fn simt_efficiency(&self) -> f64 {
        let steps: u64 = self.workers.iter().map(|w| w.steps).sum();
        let active: u64 = self.workers.iter().map(|w| w.active_lanes).sum();
        active as f64 / (32.0 * steps.max(1) as f64)
    }
}

impl Gpu {
    /// Renders one frame of `scene` as `request` says: every tile in one launch.
    ///
    /// # Errors
    /// On a request the kernels cannot run, a driver failure, or when a kernel reports that a
    /// task queue overflowed.
    pub fn render(&self, scene: &SceneData, request: &FrameRequest) -> Result<GpuFrame, GpuError> {
        let mut batches = self.batches(scene, request)?;
        batches.launch(None)?;
        batches.finish()
    }

    /// How many persistent warps the device holds at once: as many tiles as one launch
    /// traces side by side, a warp each.
    ///
    /// # Errors
    /// When the occupancy query fails, or the kernel does not fit.
    pub fn resident_warps(&self) -> Result<u32, GpuError> {
        // The fewer of the two structures' kernels: a hybrid frame sizes its batches before
        // it knows which it launches.
        let blocks = self
            .engine
            .resident_blocks(&self.octree.persistent, PERSISTENT_THREADS)?
            .min(
                self.engine
                    .resident_blocks(&self.wide.persistent, PERSISTENT_THREADS)?,
            );
        let warps = blocks * WARPS_PER_BLOCK;
        if warps == 0 {
            return Err(GpuError::Request(
                "the persistent kernel does not fit on this device".into(),
            ));
        }
        Ok(warps)
    }

    /// A frame of `scene` to be traced in batches of tiles ([`GpuBatches::run`]), as a hybrid
    /// frame's GPU does: the scene is uploaded and the film allocated once, and every batch
    /// adds to the film.
    ///
    /// # Errors
    /// On a request the kernels cannot run, or a driver failure.
    pub fn batches(
        &self,
        scene: &SceneData,
        request: &FrameRequest,
    ) -> Result<GpuBatches<'_>, GpuError> {
        let shape = check_request(scene, request)?;
        let uploaded = self.upload_scene(scene)?;
        let sums = self
            .engine
            .zeros::<u64>(shape.pixels * 3, "allocating the film")?;
        let rays = if request.work_map {
            Some(
                self.engine
                    .zeros::<u32>(shape.pixels, "allocating the work map")?,
            )
        } else {
            None
        };
        let error = self.engine.zeros::<u32>(1, "allocating the error word")?;
        let film = params::Film {
            sums: sums.ptr_mut(&self.engine),
            rays: rays
                .as_ref()
                .map_or(PtrMut::NULL, |r| r.ptr_mut(&self.engine)),
        };
        Ok(GpuBatches {
            gpu: self,
            request: *request,
            shape,
            scene: uploaded,
            film,
            sums,
            rays,
            error,
            workers: Vec::new(),
            launch_times: Vec::new(),
            launch: (0, 0),
            resources: None,
        })
    }

    /// The scene's arrays copied to the device, and the kernels' scene parameter pointing at
    /// them.
    pub(crate) fn upload_scene(&self, scene: &SceneData) -> Result<UploadedScene, GpuError> {
        let (nodes, wide_nodes, node_count) = match scene.structure {
            Structure::Octree(nodes) => (
                Some(self.engine.upload(nodes, "uploading the octree's nodes")?),
                None,
                (nodes.len() / 8) as u32,
            ),
            Structure::Wide(nodes) => (
                None,
                Some(
                    self.engine
                        .upload(nodes, "uploading the wide BVH's nodes")?,
                ),
                0,
            ),
        };
        let triangles = self
            .engine
            .upload(scene.triangles, "uploading the triangles")?;
        let ids = self
            .engine
            .upload(scene.ids, "uploading the triangle ids")?;
        let shading = self
            .engine
            .upload(scene.shading, "uploading the shading data")?;
        let materials = self
            .engine
            .upload(scene.materials, "uploading the materials")?;
        let lights = self.engine.upload(scene.lights, "uploading the lights")?;
        let params = params::Scene {
            nodes: nodes.as_ref().map_or(Ptr::NULL, |n| n.ptr(&self.engine)),
            triangles: triangles.ptr(&self.engine),
            ids: ids.ptr(&self.engine),
            shading: shading.ptr(&self.engine),
            materials: materials.ptr(&self.engine),
            lights: lights.ptr(&self.engine),
            node_count,
            light_count: scene.lights.len() as u32,
            width: scene.width,
            height: scene.height,
            padding: scene.padding,
            camera: scene.camera,
            settings: scene.settings,
            samples: scene.samples,
            wide_nodes: wide_nodes
                .as_ref()
                .map_or(Ptr::NULL, |n| n.ptr(&self.engine)),
        };
        let structure = nodes.map_or_else(|| wide_nodes.map(|n| n.memory), |n| Some(n.memory));
        Ok(UploadedScene {
            params,
            _arrays: structure
                .into_iter()
                .chain([
                    triangles.memory,
                    ids.memory,
                    shading.memory,
                    materials.memory,
                    lights.memory,
                ])
                .collect(),
        })
    }

    /// Launches `cuda-managed`: one block per tile.
    fn launch_managed(&self, args: &LaunchArgs) -> Result<Launched, GpuError> {
        let (scene, frame) = (args.scene, args.frame);
        let kernels = self.tracing(scene);
        let slots = self
            .engine
            .resident_blocks(&kernels.block_per_tile, MANAGED_THREADS)?
            .max(1);
        // Depth-first, a block's stack holds at most a block's worth of tasks per generation,
        // plus one.
        let capacity = MANAGED_THREADS * (scene.settings.max_depth + 2);
        let slot_taken = self
            .engine
            .zeros::<u32>(slots as usize, "allocating the slots")?;
        let stacks = self.engine.zeros::<Task>(
            slots as usize * capacity as usize,
            "allocating the task stacks",
        )?;
        let stats = self
            .engine
            .zeros::<u64>(slots as usize * STAT_SLOTS, "allocating the figures")?;
        let managed = params::Managed {
            tile_edge: frame.tile,
            tiles_x: frame.tiles_x,
            slots,
            capacity,
            slot_taken: slot_taken.ptr_mut(&self.engine),
            stacks: stacks.ptr_mut(&self.engine),
            stats: stats.ptr_mut(&self.engine),
            error: args.error.ptr_mut(&self.engine),
            tiles: args.tiles,
        };
        let params = (Param(*scene), Param(*args.film), Param(managed));
        let start = self.engine.mark()?;
        // SAFETY: the arguments are `rl_block_per_tile`'s parameters, in order, in the shared
        // layout; every address in them is a live allocation of the size the kernel indexes:
        // film and work map of the image's pixels, `slots` stacks of `capacity` tasks and
        // figures.
        unsafe {
            self.engine.launch(
                &kernels.block_per_tile,
                frame.tile_count,
                MANAGED_THREADS,
                &params,
                "launching cuda-managed",
            )?;
        }
        // The stacks and slots must outlive the kernel: the stream is synchronised before
        // `render` returns, and they are dropped with `Launched`.
        Ok(Launched {
            workers: slots,
            stats,
            launch: (MANAGED_THREADS, frame.tile_count),
            resources: self
                .engine
                .resources(&kernels.block_per_tile, MANAGED_THREADS)?,
            start,
            _scratch: vec![slot_taken.memory, stacks.memory],
        })
    }

    /// Launches the persistent kernel (after filling the deques, for stealing).
    fn launch_persistent(
        &self,
        args: &LaunchArgs,
        request: &FrameRequest,
        mode: Mode,
    ) -> Result<Launched, GpuError> {
        let (scene, frame) = (args.scene, args.frame);
        // Exactly the warps that can be resident at once: more would deadlock (a waiting warp
        // never starts, the running ones wait for its tasks).
        let resident = self.resident_warps()?;
        let warps = request.max_warps.map_or(resident, |m| m.clamp(1, resident));
        let blocks = warps.div_ceil(WARPS_PER_BLOCK);
        let capacity = deque_capacity(frame, scene, warps);
        let tile_counter = self.engine.zeros::<u32>(1, "allocating the tile counter")?;
        let pending = self.engine.zeros::<i32>(1, "allocating the task count")?;
        let heads = self
            .engine
            .zeros::<DequeHead>(warps as usize, "allocating the deques")?;
        let items = self
            .engine
            .zeros::<Task>(warps as usize * capacity as usize, "allocating the deques")?;
        let stats = self
            .engine
            .zeros::<u64>(warps as usize * STAT_SLOTS, "allocating the figures")?;
        let (chunk, half, deque) = match request.balancer {
            GpuBalancer::Counter { chunk } => (chunk.max(1), false, WarpDeque::Locked),
            GpuBalancer::Stealing { half, deque } => (1, half, deque),
            _ => (1, false, WarpDeque::Locked),
        };
        let work = params::Work {
            mode: mode as u32,
            warps,
            tile_edge: frame.tile,
            tiles_x: frame.tiles_x,
            tile_count: frame.tile_count,
            chunk,
            capacity,
            steal_half: u32::from(half),
            seed: request.seed | 1,
            deque: deque as u32,
            tile_counter: tile_counter.ptr_mut(&self.engine),
            pending: pending.ptr_mut(&self.engine),
            heads: heads.ptr_mut(&self.engine),
            items: items.ptr_mut(&self.engine),
            stats: stats.ptr_mut(&self.engine),
            error: args.error.ptr_mut(&self.engine),
            tiles: args.tiles,
        };
        let params = (Param(*scene), Param(*args.film), Param(work));
        let start = self.engine.mark()?;
        if mode == Mode::Stealing {
            let fill = (Param(*scene), Param(work));
            // SAFETY: the arguments are `rl_fill_deques`'s parameters, in order, in the shared
            // layout; it writes `warps` deque heads and at most `capacity` tasks per deque (it
            // checks).
            unsafe {
                self.engine.launch(
                    &self.fill_deques,
                    warps.div_ceil(128),
                    128,
                    &fill,
                    "launching the deque fill",
                )?;
            }
        }
        let kernels = self.tracing(args.scene);
        // SAFETY: the arguments are `rl_persistent`'s parameters, in order, in the shared
        // layout; every address is a live allocation of the size the kernel indexes: `warps`
        // heads, deques of `capacity` tasks and figures, film and work map of the image's
        // pixels. `blocks` is within the occupancy bound, so every warp is resident.
        unsafe {
            self.engine.launch(
                &kernels.persistent,
                blocks,
                PERSISTENT_THREADS,
                &params,
                "launching the persistent kernel",
            )?;
        }
        Ok(Launched {
            workers: warps,
            stats,
            launch: (PERSISTENT_THREADS, blocks),
            resources: self
                .engine
                .resources(&kernels.persistent, PERSISTENT_THREADS)?,
            start,
            _scratch: vec![
                tile_counter.memory,
                pending.memory,
                heads.memory,
                items.memory,
            ],
        })
    }

    /// One worker's figures, from its slots.
    fn worker_stats(&self, s: &[u64]) -> WarpStats {
        let cycles = |c: u64| {
            Duration::from_secs_f64(c as f64 / (f64::from(self.info.clock_khz.max(1)) * 1e3))
        };
        WarpStats {
            tiles: s[Stat::Tiles as usize],
            camera: s[Stat::Camera as usize],
            shadow: s[Stat::Shadow as usize],
            reflection: s[Stat::Reflection as usize],
            refraction: s[Stat::Refraction as usize],
            spawned: s[Stat::Spawned as usize],
            steps: s[Stat::Steps as usize],
            active_lanes: s[Stat::ActiveLanes as usize],
            steal_attempts: s[Stat::StealAttempts as usize],
            steal_successes: s[Stat::StealSuccesses as usize],
            tasks_stolen: s[Stat::TasksStolen as usize],
            busy: cycles(s[Stat::BusyCycles as usize]),
            idle: cycles(s[Stat::IdleCycles as usize]),
            peak_queued: s[Stat::PeakQueued as usize],
        }
    }
}

/// A frame traced in batches of tiles on one GPU ([`Gpu::batches`]): the scene and film stay
/// on the device between launches, and each launch adds to the film and to the figures.
pub struct GpuBatches<'g> {
    gpu: &'g Gpu,
    request: FrameRequest,
    shape: FrameShape,
    scene: UploadedScene,
    film: params::Film,
    sums: DeviceArray<u64>,
    rays: Option<DeviceArray<u32>>,
    error: DeviceArray<u32>,
    /// Each worker's figures, summed over the launches so far.
    workers: Vec<WarpStats>,
    launch_times: Vec<Duration>,
    launch: (u32, u32),
    resources: Option<KernelResources>,
}

impl std::fmt::Debug for GpuBatches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBatches")
            .field("request", &self.request)
            .field("launch_times", &self.launch_times)
            .finish_non_exhaustive()
    }
}

impl GpuBatches<'_> {
    /// Tiles across the image, and tiles in it: tile `(x0 / edge, y0 / edge)` is number
    /// `y · across + x`.
    pub fn tiles(&self) -> (u32, u32) {
        (self.shape.tiles_x, self.shape.tile_count)
    }

    /// Traces the image's tiles numbered `tiles` (row-major) and every ray they spawn, in one
    /// launch, adding to the film.
    ///
    /// # Errors
    /// When a tile number is not the image's, a driver call fails, or the kernel reports that
    /// a task queue overflowed.
    pub fn run(&mut self, tiles: &[u32]) -> Result<(), GpuError> {
        if let Some(&t) = tiles.iter().find(|&&t| t >= self.shape.tile_count) {
            return Err(GpuError::Request(format!(
                "tile {t} of an image of {} tiles",
                self.shape.tile_count
            )));
        }
        if tiles.is_empty() {
            return Ok(());
        }
        self.launch(Some(tiles))
    }

    /// One launch over `tiles`, or over every tile of the image.
    fn launch(&mut self, tiles: Option<&[u32]>) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let list = match tiles {
            Some(t) => Some(gpu.engine.upload(t, "uploading the batch's tiles")?),
            None => None,
        };
        let launch_shape = FrameShape {
            tile_count: tiles.map_or(self.shape.tile_count, |t| t.len() as u32),
            ..self.shape
        };
        let args = LaunchArgs {
            scene: &self.scene.params,
            film: &self.film,
            frame: &launch_shape,
            tiles: list.as_ref().map_or(Ptr::NULL, |l| l.ptr(&gpu.engine)),
            error: &self.error,
        };
        let launched = match self.request.balancer.mode() {
            None => gpu.launch_managed(&args)?,
            Some(mode) => gpu.launch_persistent(&args, &self.request, mode)?,
        };
        let end = gpu.engine.mark()?;
        let elapsed = gpu.engine.finish_launches(&launched.start, &end)?;
        let error = gpu.engine.read(&self.error, "reading the error word")?[0];
        if error & ErrorBit::DequeFull as u32 != 0 {
            return Err(GpuError::Overflow("a warp's deque"));
        }
        if error & ErrorBit::StackFull as u32 != 0 {
            return Err(GpuError::Overflow("a block's task stack"));
        }
        let stats = gpu.engine.read(&launched.stats, "reading the figures")?;
        let figures = stats
            .chunks_exact(STAT_SLOTS)
            .take(launched.workers as usize)
            .map(|s| gpu.worker_stats(s));
        for (k, w) in figures.enumerate() {
            match self.workers.get_mut(k) {
                Some(sum) => sum.add(&w),
                None => self.workers.push(w),
            }
        }
        self.launch_times.push(elapsed);
        self.launch = launched.launch;
        self.resources = launched.resources;
        Ok(())
    }

    /// The film and figures of every launch so far.
    ///
    /// # Errors
    /// When the film cannot be read back.
    pub fn finish(self) -> Result<GpuFrame, GpuError> {
        let gpu = self.gpu;
        let pixels = self.shape.pixels;
        let flat_sums = gpu.engine.read(&self.sums, "reading the film")?;
        let rays = match &self.rays {
            Some(r) => Some(gpu.engine.read(r, "reading the work map")?),
            None => None,
        };
        Ok(GpuFrame {
            sums: flat_sums
                .chunks_exact(3)
                .take(pixels)
                .map(|c| [c[0], c[1], c[2]])
                .collect(),
            rays: rays.map(|mut r| {
                r.truncate(pixels);
                r
            }),
            workers: self.workers,
            launch_times: self.launch_times,
            launch: self.launch,
            resources: self.resources,
        })
    }
}

/// What both launches take: the kernels' scene and film, the launch's sizes and tiles, and the
/// error word.
#[derive(Clone, Copy)]
struct LaunchArgs<'a> {
    scene: &'a params::Scene,
    film: &'a params::Film,
    frame: &'a FrameShape,
    /// The launch's tile numbers (`frame.tile_count` of them), or null for every tile.
    tiles: Ptr<u32>,
    error: &'a DeviceArray<u32>,
}

/// The frame's sizes, checked.
#[derive(Clone, Copy)]
struct FrameShape {
    pixels: usize,
    tile: u32,
    tiles_x: u32,
    tile_count: u32,
}

/// Refuses what the kernels cannot run: no tile, an image whose sides do not fit a tile
/// task's packed corners, node arrays that are not eight orders of one length.
fn check_request(scene: &SceneData, request: &FrameRequest) -> Result<FrameShape, GpuError> {
    if request.tile == 0 {
        return Err(GpuError::Request("the tile edge must be at least 1".into()));
    }
    let (width, height) = (scene.width, scene.height);
    let most = (1u32 << TILE_CORNER_BITS) - 1;
    if width == 0 || height == 0 || width > most || height > most {
        return Err(GpuError::Request(format!(
            "the GPU renders images of 1 to {most} pixels a side, not {width}×{height}"
        )));
    }
    match scene.structure {
        Structure::Octree(nodes) if nodes.is_empty() || !nodes.len().is_multiple_of(8) => {
            return Err(GpuError::Request(format!(
                "{} octree nodes are not eight orders of one length",
                nodes.len()
            )));
        }
        Structure::Wide([]) => {
            return Err(GpuError::Request("the wide BVH has no root node".into()));
        }
        _ => {}
    }
    if scene.samples == 0 {
        return Err(GpuError::Request(
            "at least one sample per pixel is needed".into(),
        ));
    }
    // A tile's camera rays are counted in 31 bits.
    let per_tile = u64::from(request.tile.min(width))
        * u64::from(request.tile.min(height))
        * u64::from(scene.samples);
    if per_tile > i32::MAX as u64 {
        return Err(GpuError::Request(format!(
            "a tile of {0}×{0} pixels at {1} samples per pixel holds more camera rays than the kernels count (2^31); use a smaller --tile",
            request.tile, scene.samples
        )));
    }
    let tiles_x = width.div_ceil(request.tile);
    Ok(FrameShape {
        pixels: width as usize * height as usize,
        tile: request.tile,
        tiles_x,
        tile_count: tiles_x * height.div_ceil(request.tile),
    })
}

/// The scene on the device: its parameter struct, and the arrays it points to, kept alive
/// as long as it is.
pub(crate) struct UploadedScene {
    pub(crate) params: params::Scene,
    _arrays: Vec<Memory>,
}

/// What a launch leaves to read back: its workers' figures, the mark the kernel time starts
/// from, and the scratch memory its kernels use until the stream is synchronised.
struct Launched {
    workers: u32,
    stats: DeviceArray<u64>,
    launch: (u32, u32),
    resources: Option<KernelResources>,
    start: Mark,
    _scratch: Vec<Memory>,
}

/// The tasks a warp's deque must hold: its share of `warps`' tiles, the parts a large tile is
/// halved into on its way to pieces (at most one per halving of each side), and what
/// overflows the buffer: depth-first, at most a buffer's worth per generation of rays.
fn deque_capacity(frame: &FrameShape, scene: &params::Scene, warps: u32) -> u32 {
    let share = frame.tile_count.div_ceil(warps);
    let pixels_per_tile = u64::from(frame.tile) * u64::from(frame.tile);
    let halvings = 2 * (64 - (pixels_per_tile / 1024).max(1).leading_zeros());
    share + halvings + BUFFER * (scene.settings.max_depth + 2) + BUFFER
}
