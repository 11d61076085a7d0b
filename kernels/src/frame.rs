//! One frame on the GPU: upload, launch, read back.

use std::time::Duration;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};

use crate::{Gpu, GpuError};

/// Threads of a persistent block: four warps (`RL_WARPS_PER_BLOCK` in the kernels).
const PERSISTENT_THREADS: u32 = 128;
const WARPS_PER_BLOCK: u32 = PERSISTENT_THREADS / 32;
/// Threads of a `cuda-managed` block (`RL_MANAGED_THREADS`).
const MANAGED_THREADS: u32 = 128;
/// Ray tasks a warp's shared buffer holds (`RL_BUFFER`).
const BUFFER: u32 = 64;
/// Figures per warp or slot (`RL_STATS`), in the order of [`Stat`].
const STATS: usize = 16;
/// Bytes of one task (`rl_task`).
const TASK_BYTES: usize = 48;
const ERROR_DEQUE_FULL: u32 = 1;
const ERROR_STACK_FULL: u32 = 2;

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
    },
    /// One block per tile; the hardware's block scheduler balances.
    CudaManaged,
}

impl GpuBalancer {
    /// Every GPU balancer and setting the byte-compare checks: static, counter (chunk 1),
    /// stealing with steal half and steal one, cuda-managed.
    pub const EVERY: [GpuBalancer; 5] = [
        GpuBalancer::Static,
        GpuBalancer::Counter { chunk: 1 },
        GpuBalancer::Stealing { half: true },
        GpuBalancer::Stealing { half: false },
        GpuBalancer::CudaManaged,
    ];

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

    /// The name in reports, e.g. `gpu-stealing/half`.
    pub fn name(&self) -> String {
        match self {
            GpuBalancer::Static => "gpu-static".into(),
            GpuBalancer::Counter { chunk } => format!("gpu-counter/chunk={chunk}"),
            GpuBalancer::Stealing { half } => {
                format!("gpu-stealing/{}", if *half { "half" } else { "one" })
            }
            GpuBalancer::CudaManaged => "cuda-managed".into(),
        }
    }

    fn mode(&self) -> u32 {
        match self {
            GpuBalancer::Static => 0,
            GpuBalancer::Counter { .. } => 1,
            GpuBalancer::Stealing { .. } => 2,
            GpuBalancer::CudaManaged => u32::MAX,
        }
    }
}

/// The scene as the kernels read it: byte images of the renderer's `#[repr(C)]` arrays.
#[derive(Clone, Copy, Debug)]
pub struct SceneData<'a> {
    /// The eight pre-order node arrays (one per ray octant), one after the other.
    pub nodes: &'a [u8],
    /// Nodes in one order.
    pub node_count: u32,
    /// Triangles in leaf order.
    pub triangles: &'a [u8],
    /// Original index of each triangle.
    pub ids: &'a [u8],
    /// Shading data per triangle.
    pub shading: &'a [u8],
    /// Materials.
    pub materials: &'a [u8],
    /// Lights.
    pub lights: &'a [u8],
    /// Number of lights.
    pub light_count: u32,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The BVH's box padding.
    pub padding: f32,
    /// The camera (52 bytes).
    pub camera: [u8; 52],
    /// The render settings (36 bytes).
    pub settings: [u8; 36],
    /// The deepest generation of secondary rays, to size the task stacks.
    pub max_depth: u32,
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
    /// Tiles started (initial and split halves).
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

/// The result of a frame.
#[derive(Clone, Debug)]
pub struct GpuFrame {
    /// Fixed-point sums per pixel (row-major), exactly as the CPU film keeps them.
    pub sums: Vec<[u64; 3]>,
    /// Rays per pixel, if asked for.
    pub rays: Option<Vec<u32>>,
    /// One entry per worker.
    pub workers: Vec<WarpStats>,
    /// Kernel time, from events around the launch(es).
    pub kernel_time: Duration,
    /// Threads per block and blocks launched (for `cuda-managed`, one per tile).
    pub launch: (u32, u32),
}

impl GpuFrame {
    /// Mean active lanes per warp step over 32: the SIMT efficiency.
    pub fn simt_efficiency(&self) -> f64 {
        let steps: u64 = self.workers.iter().map(|w| w.steps).sum();
        let active: u64 = self.workers.iter().map(|w| w.active_lanes).sum();
        active as f64 / (32.0 * steps.max(1) as f64)
    }
}

/// `rl_scene` (kernels/cuda/raylb_math.cuh).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct RlScene {
    nodes: u64,
    triangles: u64,
    ids: u64,
    shading: u64,
    materials: u64,
    lights: u64,
    node_count: u32,
    light_count: u32,
    width: u32,
    height: u32,
    padding: f32,
    camera: [u8; 52],
    settings: [u8; 36],
}
const _: () = assert!(size_of::<RlScene>() == 160);

/// `rl_film`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct RlFilm {
    sums: u64,
    rays: u64,
}

/// `rl_work` (kernels/cuda/raylb_kernels.cu).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct RlWork {
    mode: u32,
    warps: u32,
    tile_edge: u32,
    tiles_x: u32,
    tile_count: u32,
    chunk: u32,
    capacity: u32,
    steal_half: u32,
    seed: u32,
    pad: u32,
    tile_counter: u64,
    pending: u64,
    heads: u64,
    items: u64,
    stats: u64,
    error: u64,
}
const _: () = assert!(size_of::<RlWork>() == 88);

/// `rl_managed`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct RlManaged {
    tile_edge: u32,
    tiles_x: u32,
    slots: u32,
    capacity: u32,
    slot_taken: u64,
    stacks: u64,
    stats: u64,
    error: u64,
}
const _: () = assert!(size_of::<RlManaged>() == 48);

// SAFETY: plain `#[repr(C)]` values of integers, floats and bytes whose layout matches the
// kernels' parameter structs field for field (sizes asserted above); device pointers are
// passed as 64-bit integers.
unsafe impl DeviceRepr for RlScene {}
// SAFETY: as above.
unsafe impl DeviceRepr for RlFilm {}
// SAFETY: as above.
unsafe impl DeviceRepr for RlWork {}
// SAFETY: as above.
unsafe impl DeviceRepr for RlManaged {}

impl Gpu {
    fn ptr<T>(&self, slice: &CudaSlice<T>) -> u64 {
        let (ptr, _sync) = slice.device_ptr(&self.stream);
        ptr
    }

    fn upload(&self, bytes: &[u8], what: &'static str) -> Result<CudaSlice<u8>, GpuError> {
        // A zero-length allocation is refused; an empty array gets one unread byte.
        let bytes = if bytes.is_empty() { &[0u8][..] } else { bytes };
        self.stream
            .clone_htod(bytes)
            .map_err(GpuError::driver(what))
    }

    fn zeros<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        n: usize,
        what: &'static str,
    ) -> Result<CudaSlice<T>, GpuError> {
        self.stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(GpuError::driver(what))
    }

    /// Renders one frame of `scene` as `request` says.
    ///
    /// # Errors
    /// On a driver failure, or when a kernel reports that a task queue overflowed.
    pub fn render(&self, scene: &SceneData, request: &FrameRequest) -> Result<GpuFrame, GpuError> {
        if request.tile == 0 {
            return Err(GpuError::Request("the tile edge must be at least 1".into()));
        }
        let (width, height) = (scene.width, scene.height);
        // Tile tasks pack their corners in 16 bits each.
        if width == 0 || height == 0 || width > u32::from(u16::MAX) || height > u32::from(u16::MAX)
        {
            return Err(GpuError::Request(format!(
                "the GPU renders images of 1 to 65535 pixels a side, not {width}×{height}"
            )));
        }
        let pixels = width as usize * height as usize;
        let tiles_x = width.div_ceil(request.tile);
        let tile_count = tiles_x * height.div_ceil(request.tile);

        let nodes = self.upload(scene.nodes, "uploading the BVH nodes")?;
        let triangles = self.upload(scene.triangles, "uploading the triangles")?;
        let ids = self.upload(scene.ids, "uploading the triangle ids")?;
        let shading = self.upload(scene.shading, "uploading the shading data")?;
        let materials = self.upload(scene.materials, "uploading the materials")?;
        let lights = self.upload(scene.lights, "uploading the lights")?;
        let sums = self.zeros::<u64>(pixels * 3, "allocating the film")?;
        let rays = if request.work_map {
            Some(self.zeros::<u32>(pixels, "allocating the work map")?)
        } else {
            None
        };
        let error = self.zeros::<u32>(1, "allocating the error word")?;
        let rl_scene = RlScene {
            nodes: self.ptr(&nodes),
            triangles: self.ptr(&triangles),
            ids: self.ptr(&ids),
            shading: self.ptr(&shading),
            materials: self.ptr(&materials),
            lights: self.ptr(&lights),
            node_count: scene.node_count,
            light_count: scene.light_count,
            width,
            height,
            padding: scene.padding,
            camera: scene.camera,
            settings: scene.settings,
        };
        let film = RlFilm {
            sums: self.ptr(&sums),
            rays: rays.as_ref().map_or(0, |r| self.ptr(r)),
        };
        let sms = self.info.multiprocessors;
        let start = self
            .context
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(GpuError::driver("creating an event"))?;
        let end = self
            .context
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(GpuError::driver("creating an event"))?;

        let (workers, stats, launch) = if request.balancer == GpuBalancer::CudaManaged {
            let per_sm = self
                .block_per_tile
                .occupancy_max_active_blocks_per_multiprocessor(MANAGED_THREADS, 0, None)
                .map_err(GpuError::driver("querying occupancy"))?;
            let slots = (per_sm * sms).max(1);
            // Depth-first, a block's stack holds at most a block's worth of tasks per
            // generation, plus one.
            let capacity = MANAGED_THREADS * (scene.max_depth + 2);
            let slot_taken = self.zeros::<u32>(slots as usize, "allocating the slots")?;
            let stacks = self.zeros::<u8>(
                slots as usize * capacity as usize * TASK_BYTES,
                "allocating the task stacks",
            )?;
            let stats = self.zeros::<u64>(slots as usize * STATS, "allocating the figures")?;
            let managed = RlManaged {
                tile_edge: request.tile,
                tiles_x,
                slots,
                capacity,
                slot_taken: self.ptr(&slot_taken),
                stacks: self.ptr(&stacks),
                stats: self.ptr(&stats),
                error: self.ptr(&error),
            };
            let config = LaunchConfig {
                grid_dim: (tile_count, 1, 1),
                block_dim: (MANAGED_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            start
                .record(&self.stream)
                .map_err(GpuError::driver("recording an event"))?;
            let mut builder = self.stream.launch_builder(&self.block_per_tile);
            builder.arg(&rl_scene).arg(&film).arg(&managed);
            // SAFETY: the arguments match `rl_block_per_tile`'s parameters (layouts asserted
            // above) and every pointer in them is a live allocation of the size the kernel
            // indexes: film and work map of `pixels`, `slots` stacks of `capacity` tasks.
            unsafe { builder.launch(config) }
                .map_err(GpuError::driver("launching cuda-managed"))?;
            end.record(&self.stream)
                .map_err(GpuError::driver("recording an event"))?;
            (slots, stats, (MANAGED_THREADS, tile_count))
        } else {
            let per_sm = self
                .persistent
                .occupancy_max_active_blocks_per_multiprocessor(PERSISTENT_THREADS, 0, None)
                .map_err(GpuError::driver("querying occupancy"))?;
            // Exactly the warps that can be resident at once: more would deadlock (a waiting
            // warp never starts, the running ones wait for its tasks).
            let resident = per_sm * sms * WARPS_PER_BLOCK;
            if resident == 0 {
                return Err(GpuError::Request(
                    "the persistent kernel does not fit on this device".into(),
                ));
            }
            let warps = request.max_warps.map_or(resident, |m| m.clamp(1, resident));
            let blocks = warps.div_ceil(WARPS_PER_BLOCK);
            // A warp's deque holds its share of tiles, the halves a large tile splits into,
            // and what overflows the buffer: depth-first, at most a buffer's worth per
            // generation of rays.
            let share = tile_count.div_ceil(warps);
            let pixels_per_tile = u64::from(request.tile) * u64::from(request.tile);
            let halvings = 2 * (64 - (pixels_per_tile / 1024).max(1).leading_zeros());
            let capacity = share + halvings + BUFFER * (scene.max_depth + 2) + BUFFER;
            let tile_counter = self.zeros::<u32>(1, "allocating the tile counter")?;
            let pending = self.zeros::<i32>(1, "allocating the task count")?;
            let heads = self.zeros::<u32>(warps as usize * 4, "allocating the deques")?;
            let items = self.zeros::<u8>(
                warps as usize * capacity as usize * TASK_BYTES,
                "allocating the deques",
            )?;
            let stats = self.zeros::<u64>(warps as usize * STATS, "allocating the figures")?;
            let (chunk, half) = match request.balancer {
                GpuBalancer::Counter { chunk } => (chunk.max(1), false),
                GpuBalancer::Stealing { half } => (1, half),
                _ => (1, false),
            };
            let work = RlWork {
                mode: request.balancer.mode(),
                warps,
                tile_edge: request.tile,
                tiles_x,
                tile_count,
                chunk,
                capacity,
                steal_half: u32::from(half),
                seed: request.seed | 1,
                pad: 0,
                tile_counter: self.ptr(&tile_counter),
                pending: self.ptr(&pending),
                heads: self.ptr(&heads),
                items: self.ptr(&items),
                stats: self.ptr(&stats),
                error: self.ptr(&error),
            };
            start
                .record(&self.stream)
                .map_err(GpuError::driver("recording an event"))?;
            if matches!(request.balancer, GpuBalancer::Stealing { .. }) {
                let config = LaunchConfig {
                    grid_dim: (warps.div_ceil(128), 1, 1),
                    block_dim: (128, 1, 1),
                    shared_mem_bytes: 0,
                };
                let mut builder = self.stream.launch_builder(&self.fill_deques);
                builder.arg(&rl_scene).arg(&work);
                // SAFETY: the arguments match `rl_fill_deques`'s parameters; it writes
                // `warps` deque heads and at most `capacity` tasks per deque (it checks).
                unsafe { builder.launch(config) }
                    .map_err(GpuError::driver("launching the deque fill"))?;
            }
            let config = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (PERSISTENT_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut builder = self.stream.launch_builder(&self.persistent);
            builder.arg(&rl_scene).arg(&film).arg(&work);
            // SAFETY: the arguments match `rl_persistent`'s parameters (layouts asserted
            // above); every pointer is a live allocation of the size the kernel indexes:
            // `warps` heads, deques of `capacity` tasks and figures, film and work map of
            // `pixels`. `blocks` is within the occupancy bound, so every warp is resident.
            unsafe { builder.launch(config) }
                .map_err(GpuError::driver("launching the persistent kernel"))?;
            end.record(&self.stream)
                .map_err(GpuError::driver("recording an event"))?;
            (warps, stats, (PERSISTENT_THREADS, blocks))
        };
        self.stream
            .synchronize()
            .map_err(GpuError::driver("running the kernel"))?;
        let elapsed_ms = start
            .elapsed_ms(&end)
            .map_err(GpuError::driver("reading the kernel time"))?;
        let error = self
            .stream
            .clone_dtoh(&error)
            .map_err(GpuError::driver("reading the error word"))?[0];
        if error & ERROR_DEQUE_FULL != 0 {
            return Err(GpuError::Overflow("a warp's deque"));
        }
        if error & ERROR_STACK_FULL != 0 {
            return Err(GpuError::Overflow("a block's task stack"));
        }
        let flat_sums = self
            .stream
            .clone_dtoh(&sums)
            .map_err(GpuError::driver("reading the film"))?;
        let rays = match &rays {
            Some(r) => Some(
                self.stream
                    .clone_dtoh(r)
                    .map_err(GpuError::driver("reading the work map"))?,
            ),
            None => None,
        };
        let stats = self
            .stream
            .clone_dtoh(&stats)
            .map_err(GpuError::driver("reading the figures"))?;
        let cycles = |c: u64| {
            Duration::from_secs_f64(c as f64 / (f64::from(self.info.clock_khz.max(1)) * 1e3))
        };
        let workers = stats
            .chunks_exact(STATS)
            .take(workers as usize)
            .map(|s| WarpStats {
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
            })
            .collect();
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
            workers,
            kernel_time: Duration::from_secs_f64(f64::from(elapsed_ms.max(0.0)) / 1e3),
            launch,
        })
    }
}

/// The figures' slots (`RL_ST_*` in the kernels).
#[derive(Clone, Copy)]
enum Stat {
    Tiles = 0,
    Camera = 1,
    Shadow = 2,
    Reflection = 3,
    Refraction = 4,
    Steps = 5,
    ActiveLanes = 6,
    StealAttempts = 7,
    StealSuccesses = 8,
    TasksStolen = 9,
    BusyCycles = 10,
    IdleCycles = 11,
    PeakQueued = 12,
    Spawned = 13,
}
