//! A tile's camera rays traced in packets: blocks of pixels ([`Accel::packet_block`]: 4×4
//! where the wide BVH's traversal runs on AVX-512, 4×2 elsewhere), their samples taken
//! [`Accel::packet_lanes`] at a time through one closest-hit traversal, then the
//! shadow rays of the hits towards each light through one occlusion traversal. Rays that
//! start at one eye through neighbouring pixels, and rays from neighbouring points towards one
//! light, go through the same nodes, which a packet visits once for all of them.
//!
//! Each ray gets the bits it gets on its own ([`Accel::closest_hits`]), and each hit the same
//! color, added up in the same order (ambient, then the lights in turn), and the same children:
//! only the order in which the film receives the adds changes, and its sums are exact.

use balancers::Spawn;

use crate::accel::{Accel, PACKET_LANES};
use crate::bvh::BvhHit;
use crate::geometry::Ray;
use crate::math::Vec3;
use crate::scene::Material;
use crate::watch::FrameObserver;

use super::{
    RayCounts, RayRole, RayTask, RenderTask, SurfacePoint, Tile, TraceObserver, Whitted, WorkerRays,
};

impl<O: FrameObserver> Whitted<'_, O> {
    /// Traces the camera rays of `band` (at most a block's rows of a tile,
    /// [`Accel::packet_block`]), a block at a time, in packets.
    pub(super) fn trace_in_packets<S: Spawn<RenderTask>, C: TraceObserver>(
        &self,
        band: Tile,
        local: &mut WorkerRays,
        tests: &mut C,
        spawn: &mut S,
    ) {
        let lanes = self.scene.accel.packet_lanes();
        let columns = self.scene.accel.packet_block().columns;
        let mut packet = CameraPacket::new(self.camera_task(band.x0, band.y0, [0.0; 2]));
        for x0 in (band.x0..band.x1).step_by(columns as usize) {
            let x1 = (x0 + columns).min(band.x1);
            for y in band.y0..band.y1 {
                for x in x0..x1 {
                    for &offset in self.scene.samples.offsets() {
                        if packet.len == lanes {
                            self.trace_packet(packet.tasks(), &mut local.rays, tests, spawn);
                            packet.len = 0;
                        }
                        packet.push(self.camera_task(x, y, offset));
                    }
                }
            }
            self.trace_packet(packet.tasks(), &mut local.rays, tests, spawn);
            packet.len = 0;
            for y in band.y0..band.y1 {
                for x in x0..x1 {
                    self.watch.stamp(y * self.scene.width + x, local.worker);
                }
            }
        }
    }

    /// Traces `tasks` (at most [`PACKET_LANES`]) together: their closest hits, then their
    /// shadow rays towards each light, then each ray's color and children.
    fn trace_packet<S: Spawn<RenderTask>, C: TraceObserver>(
        &self,
        tasks: &[RayTask],
        counts: &mut RayCounts,
        tests: &mut C,
        spawn: &mut S,
    ) {
        let scene = self.scene;
        let bvh = &scene.accel;
        let n = tasks.len();
        let mut rays = [Ray::new(Vec3::ZERO, Vec3::Z); PACKET_LANES];
        for (ray, task) in rays.iter_mut().zip(tasks) {
            counts.add(task.kind);
            *ray = Ray::new(task.origin, task.dir);
            tests.ray(task.kind.into(), ray);
        }
        let mut hits: [Option<BvhHit>; PACKET_LANES] = [None; PACKET_LANES];
        bvh.closest_hits(&rays[..n], &mut hits[..n], tests);
        let mut shaded: [Option<Shaded<'_>>; PACKET_LANES] = [None; PACKET_LANES];
        for ((task, hit), shaded) in tasks.iter().zip(&hits).zip(&mut shaded) {
            match hit {
                None => self.miss(task),
                Some(hit) => {
                    let (surface, material) = self.surface(task, hit);
                    *shaded = Some(Shaded {
                        surface,
                        material,
                        color: scene.settings.ambient * material.ambient,
                        shadow_rays: 0,
                    });
                }
            }
        }
        for light in &scene.lights {
            self.light_packet(tasks, &mut shaded[..n], light, bvh, tests);
        }
        for (task, shaded) in tasks.iter().zip(&shaded) {
            if let Some(s) = shaded {
                self.finish(
                    task,
                    &s.surface,
                    s.material,
                    s.color,
                    s.shadow_rays,
                    counts,
                    spawn,
                );
            }
        }
    }

    /// Casts the shadow rays of the hits `shaded` (of `tasks`) towards `light` as one packet,
    /// and adds the light to each hit it reaches.
    #[inline(always)]
    fn light_packet<C: TraceObserver>(
        &self,
        tasks: &[RayTask],
        shaded: &mut [Option<Shaded<'_>>],
        light: &crate::scene::Light,
        bvh: &Accel,
        tests: &mut C,
    ) {
        let mut lanes = [0usize; PACKET_LANES];
        let mut shadows = [Ray::new(Vec3::ZERO, Vec3::Z); PACKET_LANES];
        let mut paths = [None; PACKET_LANES];
        let mut m = 0;
        for (lane, shaded) in shaded.iter_mut().enumerate() {
            let Some(s) = shaded else { continue };
            let Some(path) = self.light_path(&s.surface, light) else {
                continue;
            };
            s.shadow_rays += 1;
            tests.ray(RayRole::Shadow, &path.shadow);
            lanes[m] = lane;
            shadows[m] = path.shadow;
            paths[m] = Some(path);
            m += 1;
        }
        if m == 0 {
            return;
        }
        let mut blocked = [false; PACKET_LANES];
        bvh.occluded_rays(&shadows[..m], &mut blocked[..m], tests);
        for k in 0..m {
            let lane = lanes[k];
            if !blocked[k]
                && let (Some(s), Some(path)) = (&mut shaded[lane], &paths[k])
            {
                s.color += self.lit(&tasks[lane], &s.surface, s.material, light, path);
            }
        }
    }
}

/// The camera rays of a block waiting to be traced together.
struct CameraPacket {
    tasks: [RayTask; PACKET_LANES],
    len: usize,
}

impl CameraPacket {
    /// An empty packet (`filler` stands in the unused lanes).
    fn new(filler: RayTask) -> Self {
        Self {
            tasks: [filler; PACKET_LANES],
            len: 0,
        }
    }

    fn push(&mut self, task: RayTask) {
        self.tasks[self.len] = task;
        self.len += 1;
    }

    fn tasks(&self) -> &[RayTask] {
        &self.tasks[..self.len]
    }
}

/// A hit of a packet on its way to its color.
#[derive(Clone, Copy, Debug)]
struct Shaded<'m> {
    surface: SurfacePoint,
    material: &'m Material,
    /// The ambient term and the lights found so far.
    color: Vec3,
    shadow_rays: u32,
}
