//! Rendering on an NVIDIA GPU: the scene's flat arrays handed to the `kernels` crate as they
//! are (their types are the shared layout of the `layout` crate), and its fixed-point sums
//! brought back into a [`Film`], resolved like the CPU's.

use std::num::NonZeroU32;
use std::sync::Arc;

use balancers::{Telemetry, WorkerTelemetry};
use kernels::{FrameRequest, GpuBatches, GpuFrame, SceneData};
pub use kernels::{Gpu, GpuBalancer, GpuError};

use crate::bvh::{FlatNode, OctreeBvh};
use crate::film::Film;
use crate::hybrid::{DeviceSums, TileDevice};
use crate::integrator::{RayCounts, Tile, tiles};
use crate::render::{DeviceFigures, Frame};
use crate::scene::Scene;

/// How to render a frame on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// The octree the kernels traverse.
///
/// # Panics
/// When the scene was built with another structure; [`check_gpu_scene`] refuses those first.
fn octree(scene: &Scene) -> &OctreeBvh {
    scene
        .accel
        .octree()
        .expect("GPU scenes are built with the octree (check_gpu_scene)")
}

/// The eight node orders of the scene's octree, one after the other, as the kernels index
/// them.
pub fn all_node_orders(scene: &Scene) -> Vec<FlatNode> {
    let bvh = octree(scene);
    (0..8).flat_map(|o| bvh.nodes(o).iter().copied()).collect()
}

/// The scene as the kernels read it; `nodes` must be [`all_node_orders`] of the same scene.
/// Its arrays are the scene's own: their types are the shared layout.
pub fn scene_data<'a>(scene: &'a Scene, nodes: &'a [FlatNode]) -> SceneData<'a> {
    let bvh = octree(scene);
    SceneData {
        nodes,
        triangles: bvh.triangles(),
        ids: bvh.original_indices(),
        shading: &scene.shading,
        materials: &scene.materials,
        lights: &scene.lights,
        width: scene.width,
        height: scene.height,
        padding: bvh.padding(),
        camera: scene.camera,
        settings: scene.settings,
    }
}

/// Renders `scene` on `gpu`.
///
/// # Errors
/// When a CUDA call fails or a task queue on the device overflows, and for a scene of more
/// than one sample per pixel: the kernels trace the pixel's centre alone.
pub fn render_gpu(gpu: &Gpu, scene: &Scene, options: &GpuOptions) -> Result<Frame, GpuError> {
    check_gpu_scene(scene)?;
    let nodes = all_node_orders(scene);
    let request = FrameRequest {
        max_warps: options.max_warps,
        ..request(options.balancer, options.tile, options.work_map)
    };
    let frame = gpu.render(&scene_data(scene, &nodes), &request)?;
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

/// Refuses a scene the GPU kernels cannot render as the CPU does: today, one built with
/// another structure than the octree, or of more than one sample per pixel. Called before any work, so that a user hears of it at once.
///
/// # Errors
/// When the scene is not built with the octree, or has more than one sample per pixel.
pub fn check_gpu_scene(scene: &Scene) -> Result<(), GpuError> {
    if scene.accel.octree().is_none() {
        return Err(GpuError::Request(format!(
            "the GPU kernels traverse the octree; this scene was built with the {} structure (use --accel octree)",
            scene.accel.kind().name()
        )));
    }
    check_gpu_samples(scene)
}

/// Refuses a scene of more than one sample per pixel: the kernels trace the pixel's centre
/// alone. (Its structure can be changed, [`Scene::with_accel`]; its samples cannot.)
///
/// # Errors
/// When the scene has more than one sample per pixel.
pub fn check_gpu_samples(scene: &Scene) -> Result<(), GpuError> {
    let samples = scene.samples.count();
    if samples > 1 {
        return Err(GpuError::Request(format!(
            "{samples} samples per pixel: the GPU kernels trace one camera ray per pixel; render this scene with --device cpu, or with --spp 1"
        )));
    }
    Ok(())
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
            wall: frame.kernel_time,
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
#[derive(Debug)]
pub struct GpuTiles<'g> {
    name: String,
    batches: Option<GpuBatches<'g>>,
    tile: NonZeroU32,
    max_batch: usize,
}

impl<'g> GpuTiles<'g> {
    /// The GPU ready to trace batches of `scene`'s tiles of edge `tile`. A scene in another
    /// structure than the octree is built again as one for the upload, and that copy dropped
    /// once it is on the device: the CPU's workers keep their structure.
    ///
    /// # Errors
    /// When the scene is not one the kernels can render ([`check_gpu_samples`]), or the
    /// upload fails.
    pub fn new(
        gpu: &'g Gpu,
        scene: &Scene,
        tile: NonZeroU32,
        work_map: bool,
    ) -> Result<Self, GpuError> {
        check_gpu_samples(scene)?;
        let octree = scene
            .with_accel(crate::accel::AccelKind::Octree)
            .map_err(|e| GpuError::Request(e.to_string()))?;
        let scene = octree.as_ref().unwrap_or(scene);
        let nodes = all_node_orders(scene);
        let request = request(GpuBalancer::Stealing { half: true }, tile, work_map);
        let batches = gpu.batches(&scene_data(scene, &nodes), &request)?;
        Ok(Self {
            name: gpu.info().name.clone(),
            batches: Some(batches),
            tile,
            // A batch fills the device: a tile for each resident warp.
            max_batch: gpu.resident_warps()? as usize,
        })
    }
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
        let edge = self.tile.get();
        let numbers: Vec<u32> = tiles
            .iter()
            .map(|t| (t.y0 / edge) * across + t.x0 / edge)
            .collect();
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
        })
    }
}
