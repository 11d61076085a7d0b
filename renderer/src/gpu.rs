//! Rendering on an NVIDIA GPU: the scene's flat arrays handed to the `kernels` crate as they
//! are (their types are the shared layout of the `layout` crate), and its fixed-point sums
//! brought back into a [`Film`], resolved like the CPU's.

use std::num::NonZeroU32;
use std::sync::Arc;

use balancers::{BalancerKind, Telemetry, WorkerTelemetry};
pub use kernels::emulator::EmulatorOptions;
use kernels::{FrameRequest, GpuBatches, GpuFrame, SceneData, Structure};
pub use kernels::{Gpu, GpuBalancer, GpuError, WarpDeque};

use crate::accel::Accel;
use crate::bvh::FlatNode;
use crate::bvh::wide::GpuWideBvh;
use crate::film::Film;
use crate::frame::{DeviceFigures, Frame};
use crate::hybrid::{DeviceSums, HybridOptions, TileDevice};
use crate::integrator::{RayCounts, Tile, tiles};
use crate::render::{FrameExtras, FrameMemory, RenderOptions};
use crate::scene::Scene;
use crate::scene::TriangleShading;

/// How to render a frame on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
///
/// ```
/// use std::num::NonZeroU32;
/// use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
/// use renderer::scene::{Scene, SceneOverrides};
///
/// let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let scene = Scene::load(path.as_ref(), overrides)?;
/// // `Gpu::open()` on a machine with an NVIDIA GPU; here the kernels on the warp emulator.
/// let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
/// let options = GpuOptions {
///     balancer: GpuBalancer::STEALING,
///     tile: NonZeroU32::new(8).unwrap(),
///     work_map: true,
///     max_warps: None,
/// };
/// let frame = render_gpu(&gpu, &scene, &options)?;
/// assert_eq!(frame.tiles, 16);
/// assert!(frame.film.ray_counts().unwrap().iter().all(|&n| n >= 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GpuOptions {
    /// The GPU balancer.
    pub balancer: GpuBalancer,
    /// Tile edge in pixels.
    pub tile: NonZeroU32,
    /// Count rays per pixel for a work map.
    pub work_map: bool,
    /// At most this many persistent warps (`None`: all that can be resident).
    pub max_warps: Option<u32>,
}

/// A scene's arrays as the kernels take them: the nodes of its structure in their device
/// form, and, for the wide BVH, the shading data brought into that form's leaf order (the
/// octree's device form keeps the scene's own order). Built once a frame, or once for a
/// hybrid frame's upload.
///
/// ```
/// # use std::num::NonZeroU32;
/// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
/// use kernels::Structure;
/// use renderer::gpu::DeviceScene;
///
/// // quick.toml is built as the wide BVH: its GPU form is what the kernels read.
/// let device = DeviceScene::new(&scene);
/// let data = device.data(&scene);
/// assert!(matches!(data.structure, Structure::Wide(_)));
/// assert_eq!((data.width, data.height), (32, 32));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct DeviceScene {
    structure: DeviceStructure,
}

#[derive(Debug)]
enum DeviceStructure {
    /// The octree's eight node orders, one after the other.
    Octree(Vec<FlatNode>),
    /// The wide BVH in its GPU form, and the scene's shading data in that form's leaf order.
    Wide(GpuWideBvh, Vec<TriangleShading>),
}

impl DeviceScene {
    /// The device form of `scene`'s structure: the octree's node orders, or the wide BVH's
    /// GPU form.
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
    /// use renderer::gpu::DeviceScene;
    ///
    /// let device = DeviceScene::new(&scene);
    /// // Every triangle of the scene, in the device form's order.
    /// assert_eq!(device.data(&scene).triangles.len(), scene.stats.bvh.triangles);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(scene: &Scene) -> Self {
        let structure = match &scene.accel {
            Accel::Octree(bvh) => {
                DeviceStructure::Octree((0..8).flat_map(|o| bvh.nodes(o).iter().copied()).collect())
            }
            Accel::Wide(bvh) => {
                let gpu = bvh.to_gpu();
                let shading = gpu
                    .source_indices()
                    .iter()
                    .map(|&k| scene.shading[k as usize])
                    .collect();
                DeviceStructure::Wide(gpu, shading)
            }
        };
        Self { structure }
    }

    /// The bytes [`new`](Self::new) allocates for `scene`, at most: the octree's eight node
    /// orders, or the wide BVH's GPU form (a node for each of the CPU tree's, and every
    /// triangle with its two indices and its shading data in that form's order).
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
    /// use renderer::gpu::DeviceScene;
    ///
    /// let device = DeviceScene::new(&scene);
    /// let data = device.data(&scene);
    /// # use kernels::Structure;
    /// let Structure::Wide(nodes) = data.structure else { unreachable!() };
    /// let held = std::mem::size_of_val(nodes)
    ///     + std::mem::size_of_val(data.triangles)
    ///     + std::mem::size_of_val(data.ids)
    ///     + std::mem::size_of_val(data.shading);
    /// assert!(held as u64 <= DeviceScene::bytes(&scene));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bytes(scene: &Scene) -> u64 {
        let nodes = scene.stats.bvh.nodes as u64;
        let triangles = scene.stats.bvh.triangles as u64;
        match scene.accel {
            Accel::Octree(_) => 8 * nodes * size_of::<FlatNode>() as u64,
            Accel::Wide(_) => {
                nodes * size_of::<layout::wide::WideNode>() as u64
                    + triangles
                        * (size_of::<crate::geometry::Triangle>()
                            + 2 * size_of::<u32>()
                            + size_of::<TriangleShading>()) as u64
            }
        }
    }

    /// The scene as the kernels read it: `scene` must be the one this was built from.
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
    /// use renderer::gpu::DeviceScene;
    ///
    /// let device = DeviceScene::new(&scene);
    /// let data = device.data(&scene);
    /// assert_eq!(data.lights.len(), scene.lights.len());
    /// assert_eq!(data.ids.len(), data.triangles.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn data<'a>(&'a self, scene: &'a Scene) -> SceneData<'a> {
        let (structure, triangles, ids, shading, padding) = match &self.structure {
            DeviceStructure::Octree(nodes) => {
                let bvh = scene
                    .accel
                    .octree()
                    .expect("a DeviceScene is read with the scene it was built from");
                (
                    Structure::Octree(nodes),
                    bvh.triangles(),
                    bvh.original_indices(),
                    &scene.shading[..],
                    bvh.padding(),
                )
            }
            DeviceStructure::Wide(bvh, shading) => (
                Structure::Wide(bvh.nodes()),
                bvh.triangles(),
                bvh.original_indices(),
                &shading[..],
                bvh.padding(),
            ),
        };
        SceneData {
            structure,
            triangles,
            ids,
            shading,
            materials: &scene.materials,
            lights: &scene.lights,
            width: scene.width,
            height: scene.height,
            padding,
            camera: scene.camera,
            settings: scene.settings,
            samples: scene.samples.count(),
        }
    }
}

/// Renders `scene` on `gpu`, through the structure it was built with.
///
/// # Errors
/// When a CUDA call fails or a task queue on the device overflows.
///
/// ```
/// # use std::num::NonZeroU32;
/// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
/// // Every GPU balancer writes the same film.
/// let films: Vec<_> = [GpuBalancer::STEALING, GpuBalancer::CudaManaged]
///     .iter()
///     .map(|&balancer| {
///         let options = GpuOptions {
///             balancer,
///             tile: NonZeroU32::new(8).unwrap(),
///             work_map: false,
///             max_warps: None,
///         };
///         render_gpu(&gpu, &scene, &options).map(|frame| frame.film.sums())
///     })
///     .collect::<Result<_, _>>()?;
/// assert_eq!(films[0], films[1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render_gpu(gpu: &Gpu, scene: &Scene, options: &GpuOptions) -> Result<Frame, GpuError> {
    let device_scene = DeviceScene::new(scene);
    let request = FrameRequest {
        max_warps: options.max_warps,
        ..request(options.balancer, options.tile, options.work_map)
    };
    let frame = gpu.render(&device_scene.data(scene), &request)?;
    Ok(frame_of(gpu, scene, options, frame))
}

/// A frame request of `balancer` over tiles of `tile`, on every warp that can be resident,
/// its victims chosen from a fixed seed (the image does not depend on it).
fn request(balancer: GpuBalancer, tile: NonZeroU32, work_map: bool) -> FrameRequest {
    FrameRequest {
        balancer,
        tile: tile.get(),
        work_map,
        seed: 0x2545_f491,
        max_warps: None,
    }
}

fn frame_of(gpu: &Gpu, scene: &Scene, options: &GpuOptions, frame: GpuFrame) -> Frame {
    let film = Arc::new(Film::from_sums(
        scene.width,
        scene.height,
        &frame.sums,
        frame.rays.as_deref(),
    ));
    let workers = frame
        .workers
        .iter()
        .map(|w| WorkerTelemetry {
            tasks: w.tiles + w.reflection + w.refraction,
            initial_tasks: w.tiles,
            spawned: w.spawned,
            busy: w.busy,
            idle: w.idle,
            steal_attempts: w.steal_attempts,
            steal_successes: w.steal_successes,
            tasks_stolen: w.tasks_stolen,
            peak_queued: Some(w.peak_queued),
        })
        .collect();
    let rays = frame
        .workers
        .iter()
        .map(|w| RayCounts {
            camera: w.camera,
            shadow: w.shadow,
            reflection: w.reflection,
            refraction: w.refraction,
        })
        .collect();
    let is_managed = options.balancer == GpuBalancer::CudaManaged;
    Frame {
        film,
        telemetry: Telemetry {
            balancer: options.balancer.name(),
            wall: frame.kernel_time(),
            workers,
            // cuda-managed moves no work between workers: zero steals is the truth there.
            steals_observed: true,
        },
        rays,
        tiles: tiles(scene.width, scene.height, options.tile).len(),
        device: Some(DeviceFigures {
            name: gpu.info().name.clone(),
            simt_efficiency: frame.simt_efficiency(),
            workers_are: if is_managed {
                "resident block slots"
            } else {
                "persistent warps"
            },
            threads_per_block: frame.launch.0,
            blocks: frame.launch.1,
            kernel: frame.resources.clone(),
        }),
        hybrid: None,
        cancelled: false,
    }
}

/// The GPU as a tile device of a hybrid frame (`--device hybrid`): the scene uploaded once,
/// each batch of tiles one launch of the persistent kernel under `stealing` (steal half), the
/// GPU balancer that traces fastest, adding to a film on the device that is read back at the
/// end.
///
/// ```
/// # use std::num::NonZeroU32;
/// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
/// use std::num::NonZeroUsize;
/// use renderer::gpu::GpuTiles;
/// use renderer::hybrid::{HybridOptions, render_hybrid};
///
/// let options = HybridOptions {
///     balancer: Default::default(),
///     threads: NonZeroUsize::new(2).unwrap(),
///     tile: NonZeroU32::new(8).unwrap(),
///     work_map: false,
/// };
/// let device = GpuTiles::new(&gpu, &scene, options.tile, options.work_map)?;
/// let frame = render_hybrid(&scene, &options, vec![device])?;
/// assert_eq!(frame.hybrid.unwrap().devices.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct GpuTiles<'g> {
    name: String,
    batches: Option<GpuBatches<'g>>,
    /// The edge of the pieces the GPU traces the frame's tiles in ([`gpu_piece`]).
    piece: NonZeroU32,
    max_batch: usize,
}

/// The tile edge at which the persistent kernel traces fastest: 4 pixels, under `stealing`
/// on an H100 and on an H200, 1.1–2.6 times its speed at 8 to 32 (BENCHMARKS.md).
pub const GPU_PIECE: u32 = 4;

/// The edge of the pieces a GPU traces a hybrid frame's tiles of edge `tile` in: [`GPU_PIECE`]
/// where it divides `tile`, so that the CPU threads work at their edge and the GPU at its own;
/// else `tile` itself.
///
/// ```
/// use std::num::NonZeroU32;
/// use renderer::gpu::gpu_piece;
///
/// let edge = |e| NonZeroU32::new(e).unwrap();
/// assert_eq!(gpu_piece(edge(32)), edge(4));
/// assert_eq!(gpu_piece(edge(4)), edge(4));
/// assert_eq!(gpu_piece(edge(6)), edge(6));
/// ```
pub fn gpu_piece(tile: NonZeroU32) -> NonZeroU32 {
    if tile.get().is_multiple_of(GPU_PIECE) {
        NonZeroU32::new(GPU_PIECE).expect("a positive constant")
    } else {
        tile
    }
}

/// The numbers (row-major, `across` a row) of the pieces of edge `piece` that `tiles` are cut
/// into; every tile's corner is a multiple of `piece`, as in a grid of tiles whose edge it
/// divides.
fn pieces_of(tiles: &[Tile], piece: u32, across: u32) -> Vec<u32> {
    let mut numbers = Vec::new();
    for t in tiles {
        for y in (t.y0..t.y1).step_by(piece as usize) {
            for x in (t.x0..t.x1).step_by(piece as usize) {
                numbers.push((y / piece) * across + x / piece);
            }
        }
    }
    numbers
}

impl<'g> GpuTiles<'g> {
    /// The GPU ready to trace batches of `scene`'s tiles of edge `tile`, through the
    /// structure the scene was built with, each tile cut into pieces of edge
    /// [`gpu_piece`]`(tile)`.
    ///
    /// # Errors
    /// When the upload fails.
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
    /// use renderer::gpu::GpuTiles;
    /// use renderer::hybrid::TileDevice;
    /// use renderer::integrator::tiles;
    ///
    /// let mut device = GpuTiles::new(&gpu, &scene, NonZeroU32::new(8).unwrap(), false)?;
    /// device.trace(&tiles(32, 32, NonZeroU32::new(8).unwrap()))?;
    /// let traced = device.finish()?;
    /// assert_eq!(traced.rays.camera, 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(
        gpu: &'g Gpu,
        scene: &Scene,
        tile: NonZeroU32,
        work_map: bool,
    ) -> Result<Self, GpuError> {
        let device_scene = DeviceScene::new(scene);
        let piece = gpu_piece(tile);
        let request = request(GpuBalancer::STEALING, piece, work_map);
        let batches = gpu.batches(&device_scene.data(scene), &request)?;
        Ok(Self {
            name: gpu.info().name.clone(),
            batches: Some(batches),
            piece,
            max_batch: batch_fills_the_device(gpu.resident_warps()?, tile),
        })
    }
}

/// The most tiles of edge `tile` a batch on a GPU with `warps` resident warps holds: for each
/// warp a 32×32 piece's pixels (one 32-pixel tile, sixty-four 4-pixel ones), as many as it
/// traces between two steals when it renders a frame alone. One tile a warp, at the small
/// tiles where the GPU is fastest, left half of each warp's lanes without a camera ray and
/// cost a launch, with its tail of long reflection chains, for every few thousand tiles.
fn batch_fills_the_device(warps: u32, tile: NonZeroU32) -> usize {
    let pixels = u64::from(tile.get()).pow(2);
    let per_warp = (u64::from(crate::integrator::SPLIT_ABOVE) / pixels).max(1);
    usize::try_from(u64::from(warps) * per_warp).unwrap_or(usize::MAX)
}

impl TileDevice for GpuTiles<'_> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn trace(&mut self, tiles: &[Tile]) -> Result<(), String> {
        let batches = self
            .batches
            .as_mut()
            .ok_or_else(|| "the GPU's frame is already finished".to_string())?;
        let (across, _) = batches.tiles();
        let numbers = pieces_of(tiles, self.piece.get(), across);
        batches.run(&numbers).map_err(|e| e.to_string())
    }

    fn finish(&mut self) -> Result<DeviceSums, String> {
        let batches = self
            .batches
            .take()
            .ok_or_else(|| "the GPU's frame is already finished".to_string())?;
        let frame = batches.finish().map_err(|e| e.to_string())?;
        let mut rays = RayCounts::default();
        for w in &frame.workers {
            rays.merge(&RayCounts {
                camera: w.camera,
                shadow: w.shadow,
                reflection: w.reflection,
                refraction: w.refraction,
            });
        }
        Ok(DeviceSums {
            sums: frame.sums,
            rays_per_pixel: frame.rays,
            rays,
            batch_times: frame.launch_times,
        })
    }
}

impl FrameMemory {
    /// The memory of rendering `scene` on the CPU and a GPU together (`--device hybrid`): the
    /// CPU's frame as `stealing` with `options`' settings, the GPU's sums read back (and, for a
    /// moment, copied), and the scene's structure in the form the GPU reads.
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
    /// use std::num::NonZeroUsize;
    /// use renderer::hybrid::HybridOptions;
    /// use renderer::render::FrameMemory;
    ///
    /// let options = HybridOptions {
    ///     balancer: Default::default(),
    ///     threads: NonZeroUsize::new(2).unwrap(),
    ///     tile: NonZeroU32::new(8).unwrap(),
    ///     work_map: false,
    /// };
    /// let memory = FrameMemory::estimate_hybrid(&scene, &options, Default::default());
    /// assert!(memory.parts.iter().any(|(what, _)| *what == "the scene's form for the GPU"));
    /// assert!(memory.total() > 32 * 32 * 24);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn estimate_hybrid(scene: &Scene, options: &HybridOptions, extras: FrameExtras) -> Self {
        let cpu = RenderOptions {
            balancer: BalancerKind::Stealing(options.balancer.cpu()).into(),
            threads: options.threads,
            tile: options.tile,
            work_map: options.work_map,
        };
        let mut memory = Self::estimate(scene, &cpu, extras);
        memory
            .parts
            .push(("the scene's form for the GPU", DeviceScene::bytes(scene)));
        let pixels = u64::from(scene.width) * u64::from(scene.height);
        let per_pixel = 24 + if options.work_map { 4 } else { 0 };
        memory
            .parts
            .push(("the GPU's sums read back", 2 * pixels * per_pixel));
        memory.parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        memory
    }

    /// The host's memory of a frame rendered on a GPU: the film, the sums (and counts) read
    /// back from the device before they fill it, and the scene's structure in the form the
    /// GPU reads.
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let gpu = Gpu::emulated(kernels::emulator::EmulatorOptions::default())?;
    /// use renderer::render::FrameMemory;
    ///
    /// let plain = FrameMemory::estimate_gpu(&scene, false, Default::default());
    /// let counted = FrameMemory::estimate_gpu(&scene, true, Default::default());
    /// // A work map adds a 32-bit count a pixel read back.
    /// assert!(counted.total() > plain.total());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn estimate_gpu(scene: &Scene, work_map: bool, extras: FrameExtras) -> Self {
        let pixels = u64::from(scene.width) * u64::from(scene.height);
        // Three 64-bit sums a pixel, and a 32-bit ray count with a work map.
        let per_pixel = 24 + if work_map { 4 } else { 0 };
        let parts = vec![
            ("film", pixels * per_pixel),
            ("sums read back", pixels * per_pixel),
            ("the scene's form for the GPU", DeviceScene::bytes(scene)),
        ];
        Self::with_outputs(scene, parts, work_map, extras)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_holds_a_pieces_pixels_for_each_warp() {
        let edge = |e| NonZeroU32::new(e).unwrap();
        // An H100's 4,224 resident warps.
        assert_eq!(batch_fills_the_device(4224, edge(32)), 4224);
        assert_eq!(batch_fills_the_device(4224, edge(8)), 4224 * 16);
        assert_eq!(batch_fills_the_device(4224, edge(4)), 4224 * 64);
        // Tiles larger than a piece: still one a warp.
        assert_eq!(batch_fills_the_device(4224, edge(64)), 4224);
        assert_eq!(batch_fills_the_device(8, edge(33)), 8);
    }

    #[test]
    fn a_batchs_tiles_cut_into_the_gpus_pieces_cover_each_pixel_once() {
        // 8-pixel tiles of a 20 × 12 image, the last column and row cut short, in 4-pixel
        // pieces (5 across): every piece of the image once, whatever order the tiles come in.
        let edge = NonZeroU32::new(8).unwrap();
        let mut all = crate::integrator::tiles(20, 12, edge);
        all.reverse();
        let mut numbers = pieces_of(&all, 4, 5);
        numbers.sort_unstable();
        assert_eq!(numbers, (0..15).collect::<Vec<u32>>());
        // One tile: its four pieces.
        let first = crate::integrator::tiles(20, 12, edge)[0];
        assert_eq!(pieces_of(&[first], 4, 5), [0, 1, 5, 6]);
        // Pieces of the tile's own edge: the tile's number.
        assert_eq!(pieces_of(&all[..1], 8, 3), [5]);
    }
}
