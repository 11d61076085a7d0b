//! Whitted ray tracing with secondary rays as tasks.
//!
//! A [`RenderTask`] is either a tile, whose camera rays are traced in place, or one
//! [`RayTask`]. Tracing a ray adds its pixel's contribution to the film at once and spawns
//! its reflection and refraction rays as new tasks, each carrying everything it needs: ray,
//! pixel, depth and cumulative weight. Nothing waits for a child, so tasks can run in any
//! order on any worker, and the film's exact sums make the image the same whatever order
//! that is.
//!
//! ```
//! use std::num::{NonZeroU32, NonZeroUsize};
//! use balancers::{Balancer, BalancerKind};
//! use renderer::film::Film;
//! use renderer::integrator::{RenderTask, Whitted, tiles};
//! use renderer::scene::{Scene, SceneOverrides};
//! use renderer::watch::Unwatched;
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
//! # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
//! let scene = Scene::load(path.as_ref(), overrides)?;
//! let film = Film::new(32, 32, false);
//! let tasks: Vec<RenderTask> = tiles(32, 32, NonZeroU32::new(8).unwrap())
//!     .into_iter()
//!     .map(RenderTask::Tile)
//!     .collect();
//! let balancer = BalancerKind::counter(NonZeroUsize::MIN);
//! let outcome = balancer.run(NonZeroUsize::new(2).unwrap(), &tasks, &Whitted::new(&scene, &film, &Unwatched))?;
//! let camera: u64 = outcome.locals.iter().map(|worker| worker.rays.camera).sum();
//! assert_eq!(camera, 32 * 32 * scene.samples.offsets().len() as u64);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod packet;

use std::num::NonZeroU32;

use balancers::{Spawn, TaskRunner};
use layout::task::TaskKind;

use crate::accel::Packets;
use crate::bvh::{Blockers, BvhHit, NoCounters, TestCounts, TraversalCounters};
use crate::film::Film;
use crate::geometry::{Ray, Triangle, TriangleExt};
use crate::math::{
    Vec3, dot, interpolate, max_component, normalize, powi, reflect, refract, scale, surface_offset,
};
use crate::scene::{CameraExt, Light, LightExt, Material, Scene, TriangleShading};
use crate::watch::FrameObserver;

/// Why a ray was traced; its value is the kernels' code for the same kind of task.
///
/// ```
/// use renderer::integrator::{RayKind, RayRole};
///
/// assert_ne!(RayKind::Reflection as u8, RayKind::Refraction as u8);
/// assert_eq!(RayRole::from(RayKind::Camera), RayRole::Camera);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RayKind {
    /// From the eye through a pixel.
    Camera = TaskKind::Camera as u8,
    /// A mirror reflection, or a refraction turned back by total internal reflection.
    Reflection = TaskKind::Reflection as u8,
    /// Through a refracting surface.
    Refraction = TaskKind::Refraction as u8,
}

/// Which of a frame's rays a ray is: one of the three kinds of task, or a shadow ray a hit
/// casts towards a light.
///
/// ```
/// use renderer::integrator::{RayKind, RayRole};
///
/// assert_eq!(RayRole::from(RayKind::Refraction), RayRole::Refraction);
/// // Shadow rays are rays, but never tasks: no kind of task turns into one.
/// assert!([RayKind::Camera, RayKind::Reflection, RayKind::Refraction]
///     .iter()
///     .all(|&kind| RayRole::from(kind) != RayRole::Shadow));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RayRole {
    /// From the eye through a pixel.
    Camera,
    /// From a hit towards a light: an occlusion query.
    Shadow,
    /// A mirror reflection, or a refraction turned back by total internal reflection.
    Reflection,
    /// Through a refracting surface.
    Refraction,
}

impl From<RayKind> for RayRole {
    fn from(kind: RayKind) -> Self {
        match kind {
            RayKind::Camera => Self::Camera,
            RayKind::Reflection => Self::Reflection,
            RayKind::Refraction => Self::Refraction,
        }
    }
}

/// What the integrator reports as it traces: the traversal's box and triangle tests, and
/// each ray just before it is traced. What ignores a report costs nothing: the calls are
/// inlined away.
///
/// ```
/// # use std::num::NonZeroU32;
/// # use balancers::{Spawn, TaskRunner};
/// # use renderer::film::Film;
/// # use renderer::integrator::{RenderTask, Whitted, tiles};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::watch::Unwatched;
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # struct Collect(Vec<RenderTask>);
/// # impl Spawn<RenderTask> for Collect {
/// #     fn spawn(&mut self, task: RenderTask) { self.0.push(task); }
/// # }
/// use renderer::bvh::TraversalCounters;
/// use renderer::geometry::Ray;
/// use renderer::integrator::{RayRole, TraceObserver};
///
/// /// Counts the shadow rays, and ignores the tests.
/// #[derive(Default)]
/// struct Shadows(u64);
/// impl TraversalCounters for Shadows {
///     fn box_test(&mut self) {}
///     fn triangle_test(&mut self) {}
/// }
/// impl TraceObserver for Shadows {
///     fn ray(&mut self, role: RayRole, _ray: &Ray) {
///         self.0 += u64::from(role == RayRole::Shadow);
///     }
/// }
///
/// # let film = Film::new(32, 32, false);
/// # let whitted = Whitted::new(&scene, &film, &Unwatched);
/// # let (mut local, mut spawned) = (whitted.local(0), Collect(Vec::new()));
/// let mut shadows = Shadows::default();
/// for tile in tiles(32, 32, NonZeroU32::new(8).unwrap()) {
///     whitted.run_counted(RenderTask::Tile(tile), &mut local, &mut shadows, &mut spawned);
/// }
/// assert_eq!(shadows.0, local.rays.shadow);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait TraceObserver: TraversalCounters {
    /// `ray`, of `role`, is about to be traced.
    ///
    /// ```
    /// use renderer::bvh::TestCounts;
    /// use renderer::geometry::Ray;
    /// use renderer::integrator::{RayRole, TraceObserver};
    /// use renderer::math::Vec3;
    ///
    /// // What counts tests alone hears of a ray and keeps nothing of it.
    /// let mut counts = TestCounts::default();
    /// counts.ray(RayRole::Camera, &Ray::new(Vec3::ZERO, Vec3::Z));
    /// assert_eq!(counts, TestCounts::default());
    /// ```
    #[inline(always)]
    fn ray(&mut self, role: RayRole, ray: &Ray) {
        let _ = (role, ray);
    }
}

impl TraceObserver for NoCounters {}
impl TraceObserver for TestCounts {}

/// A ray still to be traced, with everything it needs to contribute to its pixel.
///
/// ```
/// # use std::num::NonZeroU32;
/// # use balancers::{Spawn, TaskRunner};
/// # use renderer::film::Film;
/// # use renderer::integrator::{RenderTask, Whitted, tiles};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::watch::Unwatched;
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # struct Collect(Vec<RenderTask>);
/// # impl Spawn<RenderTask> for Collect {
/// #     fn spawn(&mut self, task: RenderTask) { self.0.push(task); }
/// # }
/// # let film = Film::new(32, 32, false);
/// # let whitted = Whitted::new(&scene, &film, &Unwatched);
/// # let (mut local, mut spawned) = (whitted.local(0), Collect(Vec::new()));
/// for tile in tiles(32, 32, NonZeroU32::new(32).unwrap()) {
///     whitted.run(RenderTask::Tile(tile), &mut local, &mut spawned);
/// }
/// // quick.toml has a mirror ball: some camera rays spawn a reflection, one generation down.
/// let RenderTask::Ray(ray) = spawned.0[0] else { panic!("a tile spawns rays") };
/// assert_eq!(ray.depth, 1);
/// assert!(ray.pixel < 32 * 32);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayTask {
    /// Where the ray starts.
    pub origin: Vec3,
    /// Unit direction.
    pub dir: Vec3,
    /// The product of the coefficients along the path from the eye: what this ray's
    /// radiance is worth in its pixel.
    pub weight: Vec3,
    /// Row-major pixel index.
    pub pixel: u32,
    /// Generation: 0 for camera rays, parent's + 1 for the rays a hit spawns.
    pub depth: u8,
    /// Why it was spawned.
    pub kind: RayKind,
}

/// A rectangle of pixels `[x0, x1) × [y0, y1)`.
///
/// ```
/// use renderer::integrator::Tile;
///
/// let tile = Tile { x0: 8, y0: 0, x1: 16, y1: 4 };
/// assert_eq!(tile.pixels(), 32);
/// assert_eq!(tile.pieces().count(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Left column.
    pub x0: u32,
    /// Top row.
    pub y0: u32,
    /// One past the right column.
    pub x1: u32,
    /// One past the bottom row.
    pub y1: u32,
}

impl Tile {
    /// Pixels in the tile.
    ///
    /// ```
    /// # use renderer::integrator::Tile;
    /// assert_eq!(Tile { x0: 0, y0: 0, x1: 3, y1: 2 }.pixels(), 6);
    /// ```
    pub fn pixels(&self) -> u32 {
        (self.x1 - self.x0) * (self.y1 - self.y0)
    }

    /// The tile cut into pieces of at most [`PIECE`] × [`PIECE`] pixels, row-major; a tile of
    /// at most [`SPLIT_ABOVE`] pixels is its own only piece.
    ///
    /// ```
    /// use renderer::integrator::{PIECE, SPLIT_ABOVE, Tile};
    ///
    /// let large = Tile { x0: 0, y0: 0, x1: 4 * PIECE, y1: 4 * PIECE };
    /// assert!(large.pixels() > SPLIT_ABOVE);
    /// assert!(large.pieces().all(|piece| piece.pixels() == PIECE * PIECE));
    /// assert_eq!(large.pieces().map(|piece| piece.pixels()).sum::<u32>(), large.pixels());
    /// ```
    pub fn pieces(&self) -> impl DoubleEndedIterator<Item = Tile> + use<> {
        let tile = *self;
        let (edge_x, edge_y) = if tile.pixels() <= SPLIT_ABOVE {
            (tile.x1 - tile.x0, tile.y1 - tile.y0)
        } else {
            (PIECE, PIECE)
        };
        let across = (tile.x1 - tile.x0).div_ceil(edge_x);
        let down = (tile.y1 - tile.y0).div_ceil(edge_y);
        (0..across * down).map(move |i| {
            let (x0, y0) = (tile.x0 + i % across * edge_x, tile.y0 + i / across * edge_y);
            Tile {
                x0,
                y0,
                x1: (x0 + edge_x).min(tile.x1),
                y1: (y0 + edge_y).min(tile.y1),
            }
        })
    }
}

/// How large tiles are cut, shared with the GPU kernels: the edge of the pieces, and the size
/// above which a tile cuts itself into them.
pub use layout::task::{PIECE, SPLIT_ABOVE};

/// The tiles of edge `edge` covering a `width × height` image, row-major; the last row and
/// column are clipped to the image.
///
/// ```
/// use std::num::NonZeroU32;
/// use renderer::integrator::{Tile, tiles};
///
/// let all = tiles(40, 20, NonZeroU32::new(16).unwrap());
/// assert_eq!(all.len(), 3 * 2);
/// assert_eq!(all[5], Tile { x0: 32, y0: 16, x1: 40, y1: 20 });
/// ```
pub fn tiles(width: u32, height: u32, edge: NonZeroU32) -> Vec<Tile> {
    let edge = edge.get();
    let mut out = Vec::with_capacity((width.div_ceil(edge) * height.div_ceil(edge)) as usize);
    for y0 in (0..height).step_by(edge as usize) {
        for x0 in (0..width).step_by(edge as usize) {
            out.push(Tile {
                x0,
                y0,
                x1: (x0 + edge).min(width),
                y1: (y0 + edge).min(height),
            });
        }
    }
    out
}

/// The unit of work handed to a balancer.
///
/// ```
/// use std::num::NonZeroU32;
/// use renderer::integrator::{RenderTask, tiles};
///
/// let tasks: Vec<RenderTask> = tiles(64, 64, NonZeroU32::new(32).unwrap())
///     .into_iter()
///     .map(RenderTask::Tile)
///     .collect();
/// assert_eq!(tasks.len(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RenderTask {
    /// Trace the camera rays of a tile.
    Tile(Tile),
    /// Trace one secondary ray.
    Ray(RayTask),
}

/// Rays one worker traced, by kind.
///
/// ```
/// use renderer::integrator::RayCounts;
///
/// let counts = RayCounts { camera: 64, shadow: 100, reflection: 7, refraction: 3 };
/// assert_eq!(counts.total(), 174);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RayCounts {
    /// Camera rays.
    pub camera: u64,
    /// Shadow rays (one per light per hit that faces it).
    pub shadow: u64,
    /// Reflection rays, including total internal reflections.
    pub reflection: u64,
    /// Refraction rays.
    pub refraction: u64,
}

impl RayCounts {
    /// Counts one ray of `kind`.
    #[inline(always)]
    fn add(&mut self, kind: RayKind) {
        match kind {
            RayKind::Camera => self.camera += 1,
            RayKind::Reflection => self.reflection += 1,
            RayKind::Refraction => self.refraction += 1,
        }
    }

    /// All rays.
    ///
    /// ```
    /// # use renderer::integrator::RayCounts;
    /// assert_eq!(RayCounts { camera: 4, shadow: 2, ..Default::default() }.total(), 6);
    /// ```
    pub fn total(&self) -> u64 {
        self.camera + self.shadow + self.reflection + self.refraction
    }

    /// Adds `other` to `self`.
    ///
    /// ```
    /// # use renderer::integrator::RayCounts;
    /// let mut all = RayCounts { camera: 4, ..Default::default() };
    /// all.merge(&RayCounts { camera: 1, refraction: 2, ..Default::default() });
    /// assert_eq!(all, RayCounts { camera: 5, refraction: 2, ..Default::default() });
    /// ```
    pub fn merge(&mut self, other: &RayCounts) {
        self.camera += other.camera;
        self.shadow += other.shadow;
        self.reflection += other.reflection;
        self.refraction += other.refraction;
    }
}

/// What one worker of a frame keeps: its number and the rays it traced.
///
/// ```
/// # use std::num::NonZeroU32;
/// # use balancers::{Spawn, TaskRunner};
/// # use renderer::film::Film;
/// # use renderer::integrator::{RenderTask, Whitted, tiles};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::watch::Unwatched;
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # struct Collect(Vec<RenderTask>);
/// # impl Spawn<RenderTask> for Collect {
/// #     fn spawn(&mut self, task: RenderTask) { self.0.push(task); }
/// # }
/// # let film = Film::new(32, 32, false);
/// let whitted = Whitted::new(&scene, &film, &Unwatched);
/// let mut local = whitted.local(3);
/// assert_eq!((local.worker, local.rays.total()), (3, 0));
/// let tile = tiles(32, 32, NonZeroU32::new(8).unwrap())[0];
/// whitted.run(RenderTask::Tile(tile), &mut local, &mut Collect(Vec::new()));
/// assert!(local.rays.camera >= 64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerRays {
    /// The worker's number, stamped on the pixels whose camera rays it traces.
    pub worker: usize,
    /// Rays traced, by kind.
    pub rays: RayCounts,
    /// For each of the scene's lights, what blocked the worker's latest shadow rays towards
    /// it, tested first by the next: a worker's rays come mostly from one part of the image.
    /// Empty for a worker whose tasks must do the same work whoever ran what before
    /// ([`Whitted::local_without_blockers`]).
    blockers: Vec<Blockers>,
}

/// The Whitted integrator over one scene and film: the [`TaskRunner`] the balancers drive.
/// `O` hears of its progress and may cancel it ([`Unwatched`](crate::watch::Unwatched) for a
/// frame nobody watches, which costs nothing).
///
/// ```
/// # use std::num::NonZeroU32;
/// # use balancers::{Spawn, TaskRunner};
/// # use renderer::film::Film;
/// # use renderer::integrator::{RenderTask, Whitted, tiles};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::watch::Unwatched;
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # struct Collect(Vec<RenderTask>);
/// # impl Spawn<RenderTask> for Collect {
/// #     fn spawn(&mut self, task: RenderTask) { self.0.push(task); }
/// # }
/// let film = Film::new(32, 32, false);
/// let whitted = Whitted::new(&scene, &film, &Unwatched);
/// let (mut local, mut spawned) = (whitted.local(0), Collect(Vec::new()));
/// for tile in tiles(32, 32, NonZeroU32::new(8).unwrap()) {
///     whitted.run(RenderTask::Tile(tile), &mut local, &mut spawned);
/// }
/// // Secondary rays are tasks of their own, left to whoever runs the frame.
/// while let Some(task) = spawned.0.pop() {
///     whitted.run(task, &mut local, &mut spawned);
/// }
/// assert!(film.sums().iter().all(|s| *s != [0; 3]), "every pixel lit");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Whitted<'a, O: FrameObserver> {
    scene: &'a Scene,
    film: &'a Film,
    watch: &'a O,
}

impl<'a, O: FrameObserver> Whitted<'a, O> {
    /// An integrator that traces `scene` into `film` (of the scene's size), reporting its
    /// progress to `watch` and dropping its tasks once `watch` is cancelled.
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use balancers::{Spawn, TaskRunner};
    /// # use renderer::film::Film;
    /// # use renderer::integrator::{RenderTask, Whitted, tiles};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::watch::Unwatched;
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # struct Collect(Vec<RenderTask>);
    /// # impl Spawn<RenderTask> for Collect {
    /// #     fn spawn(&mut self, task: RenderTask) { self.0.push(task); }
    /// # }
    /// use renderer::watch::FrameWatch;
    ///
    /// # let film = Film::new(32, 32, false);
    /// let watch = FrameWatch::new(32, 32);
    /// watch.cancel();
    /// let whitted = Whitted::new(&scene, &film, &watch);
    /// let mut local = whitted.local(0);
    /// let tile = tiles(32, 32, NonZeroU32::new(8).unwrap())[0];
    /// whitted.run(RenderTask::Tile(tile), &mut local, &mut Collect(Vec::new()));
    /// assert_eq!(local.rays.total(), 0, "a cancelled frame drops its tasks");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(scene: &'a Scene, film: &'a Film, watch: &'a O) -> Self {
        Self { scene, film, watch }
    }

    /// A worker's state, as [`TaskRunner::local`] makes it, but without remembered blockers:
    /// each shadow ray traverses the structure, so a task's box and triangle tests do not
    /// depend on the tasks its worker ran before. The recorder uses it, since the task tree
    /// it records must be the same under every balancer; the image is the same either way.
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use balancers::{Spawn, TaskRunner};
    /// # use renderer::film::Film;
    /// # use renderer::integrator::{RenderTask, Whitted, tiles};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::watch::Unwatched;
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # struct Collect(Vec<RenderTask>);
    /// # impl Spawn<RenderTask> for Collect {
    /// #     fn spawn(&mut self, task: RenderTask) { self.0.push(task); }
    /// # }
    /// # let film = Film::new(32, 32, false);
    /// let whitted = Whitted::new(&scene, &film, &Unwatched);
    /// let mut local = whitted.local_without_blockers(0);
    /// let tile = tiles(32, 32, NonZeroU32::new(8).unwrap())[0];
    /// whitted.run(RenderTask::Tile(tile), &mut local, &mut Collect(Vec::new()));
    /// assert!(local.rays.camera >= 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn local_without_blockers(&self, worker: usize) -> WorkerRays {
        WorkerRays {
            worker,
            rays: RayCounts::default(),
            blockers: Vec::new(),
        }
    }

    /// Traces one ray: adds its contribution to the film and spawns its children. A ray's
    /// weight is its path's alone (a camera ray's is 1, so that the weight cutoff means the
    /// same at any number of samples); what it adds to the film is that times the sample
    /// weight, `1 / samples`.
    ///
    /// Its steps ([`surface`](Self::surface), [`light_path`](Self::light_path),
    /// [`lit`](Self::lit), [`finish`](Self::finish)) are `#[inline(always)]`: this is the CPU's hot path, and with
    /// the direct light called out of line, as LLVM left it under a plain `#[inline]`, a
    /// frame took about 1% more instructions.
    fn trace<S: Spawn<RenderTask>, C: TraceObserver>(
        &self,
        task: RayTask,
        local: &mut WorkerRays,
        tests: &mut C,
        spawn: &mut S,
    ) {
        local.rays.add(task.kind);
        let scene = self.scene;
        let bvh = &scene.accel;
        let ray = Ray::new(task.origin, task.dir);
        tests.ray(task.kind.into(), &ray);
        let Some(hit) = bvh.closest_hit_counted(&ray, tests) else {
            self.miss(&task);
            return;
        };
        let (surface, material) = self.surface(&task, &hit);
        let mut color = scene.settings.ambient * material.ambient;
        let mut shadow_rays = 0;
        for (k, light) in scene.lights.iter().enumerate() {
            let Some(path) = self.light_path(&surface, light) else {
                continue;
            };
            shadow_rays += 1;
            tests.ray(RayRole::Shadow, &path.shadow);
            let blocked = match local.blockers.get_mut(k) {
                Some(recent) => bvh.occluded_remembering(&path.shadow, recent, tests),
                None => bvh.occluded_counted(&path.shadow, tests),
            };
            if !blocked {
                color += self.lit(&task, &surface, material, light, &path);
            }
        }
        self.finish(
            &task,
            &surface,
            material,
            color,
            shadow_rays,
            &mut local.rays,
            spawn,
        );
    }

    /// What a ray that hits nothing adds: the background.
    #[inline(always)]
    fn miss(&self, task: &RayTask) {
        self.film.count_rays(task.pixel, 1);
        self.film.add(
            task.pixel,
            task.weight * self.scene.settings.background * self.scene.samples.weight(),
        );
    }

    /// Where `task`'s ray hit, and the material there.
    #[inline(always)]
    fn surface(&self, task: &RayTask, hit: &BvhHit) -> (SurfacePoint, &Material) {
        let scene = self.scene;
        let k = hit.index as usize;
        let triangle = &scene.accel.triangles()[k];
        let shading = &scene.shading[k];
        let material = &scene.materials[shading.material as usize];
        let surface = SurfacePoint::new(
            triangle,
            shading,
            hit.bary,
            task.dir,
            scene.settings.offset_scale,
        );
        (surface, material)
    }

    /// The shadow ray from `surface` towards `light`, with what [`lit`](Self::lit) needs
    /// once it gets through; `None` where the light is behind the surface or outside its cone,
    /// and casts no shadow ray.
    #[inline(always)]
    fn light_path(&self, surface: &SurfacePoint, light: &Light) -> Option<LightPath> {
        let (normal, facing, outside) = (surface.normal, surface.facing, surface.outside);
        let to_light = light.position - outside;
        let distance = dot(to_light, to_light).sqrt();
        let l = Vec3::new(
            to_light.x / distance,
            to_light.y / distance,
            to_light.z / distance,
        );
        let cos_n = dot(normal, l);
        if cos_n <= 0.0 || dot(facing, l) <= 0.0 {
            return None;
        }
        let cone = light.cone_factor(-l);
        if cone == 0.0 {
            return None;
        }
        Some(LightPath {
            shadow: Ray {
                origin: outside,
                dir: l,
                t_min: 0.0,
                t_max: distance,
            },
            cos_n,
            cone,
        })
    }

    /// What `light` adds to `task`'s ray at `surface` along `path`, its shadow ray having got
    /// through: Phong's diffuse and specular terms in the light's cone.
    #[inline(always)]
    fn lit(
        &self,
        task: &RayTask,
        surface: &SurfacePoint,
        material: &Material,
        light: &Light,
        path: &LightPath,
    ) -> Vec3 {
        let l = path.shadow.dir;
        let highlight = dot(reflect(-l, surface.normal), -task.dir).max(0.0);
        let lit =
            material.diffuse * path.cos_n + material.specular * powi(highlight, material.shininess);
        light.color * lit * path.cone
    }

    /// Adds what `task`'s ray takes back from `surface` to its pixel (`color`, the ambient
    /// term and each light not shadowed, found with `shadow_rays` shadow rays) and spawns its
    /// children.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn finish<S: Spawn<RenderTask>>(
        &self,
        task: &RayTask,
        surface: &SurfacePoint,
        material: &Material,
        color: Vec3,
        shadow_rays: u32,
        counts: &mut RayCounts,
        spawn: &mut S,
    ) {
        counts.shadow += u64::from(shadow_rays);
        self.film.count_rays(task.pixel, 1 + shadow_rays);
        self.film.add(
            task.pixel,
            task.weight * color * self.scene.samples.weight(),
        );
        self.spawn_children(task, surface, material, spawn);
    }

    /// Spawns the reflection and refraction rays of `task` at `surface`, those whose weight
    /// reaches the cutoff, unless `task` is of the deepest generation; a refraction that is
    /// totally reflected is spawned as a reflection.
    #[inline(always)]
    fn spawn_children<S: Spawn<RenderTask>>(
        &self,
        task: &RayTask,
        surface: &SurfacePoint,
        material: &Material,
        spawn: &mut S,
    ) {
        let settings = &self.scene.settings;
        if u32::from(task.depth) >= settings.max_depth {
            return;
        }
        let cutoff = settings.weight_cutoff;
        let worth = |w: Vec3| {
            let m = max_component(w);
            m > 0.0 && m >= cutoff
        };
        let child = |origin: Vec3, dir: Vec3, weight: Vec3, kind: RayKind| {
            RenderTask::Ray(RayTask {
                origin,
                dir,
                weight,
                pixel: task.pixel,
                depth: task.depth + 1,
                kind,
            })
        };
        let (normal, outside) = (surface.normal, surface.outside);
        let reflected = task.weight * material.reflectivity;
        if worth(reflected) {
            spawn.spawn(child(
                outside,
                reflect(task.dir, normal),
                reflected,
                RayKind::Reflection,
            ));
        }
        let refracted = task.weight * material.refractivity;
        if worth(refracted) {
            let eta = if surface.entering {
                1.0 / material.ior
            } else {
                material.ior
            };
            match refract(task.dir, normal, eta) {
                Some(dir) => {
                    let inside = surface.point - scale(surface.facing, surface.offset);
                    spawn.spawn(child(inside, dir, refracted, RayKind::Refraction));
                }
                // Total internal reflection: the refracted share is reflected instead.
                None => spawn.spawn(child(
                    outside,
                    reflect(task.dir, normal),
                    refracted,
                    RayKind::Reflection,
                )),
            }
        }
    }
}

/// The way from a hit to a light: its shadow ray, and the cosines a lit hit is shaded with.
#[derive(Clone, Copy, Debug)]
struct LightPath {
    /// From the hit towards the light (unit direction), ending at the light.
    shadow: Ray,
    /// The cosine between the shading normal and the way to the light.
    cos_n: f32,
    /// The light's cone factor in that direction.
    cone: f32,
}

impl<O: FrameObserver> Whitted<'_, O> {
    /// The camera ray of pixel (`x`, `y`) through sample `offset`.
    #[inline(always)]
    fn camera_task(&self, x: u32, y: u32, offset: [f32; 2]) -> RayTask {
        let (w, h) = (self.scene.width, self.scene.height);
        let ray = self.scene.camera.sample_ray(x, y, offset, w, h);
        RayTask {
            origin: ray.origin,
            dir: ray.dir,
            weight: Vec3::ONE,
            pixel: y * w + x,
            depth: 0,
            kind: RayKind::Camera,
        }
    }

    /// Traces the camera rays of `tile`'s pixels, one ray at a time, pixel by pixel.
    fn trace_one_by_one<S: Spawn<RenderTask>, C: TraceObserver>(
        &self,
        tile: Tile,
        local: &mut WorkerRays,
        tests: &mut C,
        spawn: &mut S,
    ) {
        for y in tile.y0..tile.y1 {
            for x in tile.x0..tile.x1 {
                for &offset in self.scene.samples.offsets() {
                    let task = self.camera_task(x, y, offset);
                    self.trace(task, local, tests, spawn);
                }
                self.watch.stamp(y * self.scene.width + x, local.worker);
            }
        }
    }
}

/// Where a ray meets a triangle, with the normals that shading and the spawned rays use.
#[derive(Clone, Copy, Debug)]
struct SurfacePoint {
    /// The point hit.
    point: Vec3,
    /// Whether the ray comes from the side the triangle's normal points to: it enters the
    /// surface (which decides the ratio of refraction).
    entering: bool,
    /// The triangle's own normal, turned to face the side the ray came from.
    facing: Vec3,
    /// The interpolated normal, turned the same way, or `facing` where the ray meets it from
    /// behind.
    normal: Vec3,
    /// How far off the surface spawned rays start, along `facing`.
    offset: f32,
    /// `point` moved `offset` off the surface on the ray's side: where shadow and reflection
    /// rays start.
    outside: Vec3,
}

impl SurfacePoint {
    /// The point at barycentric coordinates `bary` of `triangle` (whose shading data is
    /// `shading`) that a ray in direction `dir` hit; `offset_scale` scales how far off the
    /// surface spawned rays start.
    #[inline(always)]
    fn new(
        triangle: &Triangle,
        shading: &TriangleShading,
        bary: [f32; 3],
        dir: Vec3,
        offset_scale: f32,
    ) -> Self {
        let point = interpolate(&triangle.v, bary);
        let geometric = normalize(triangle.normal());
        let entering = dot(dir, geometric) < 0.0;
        // Both normals turned to face the side the ray came from.
        let facing = if entering { geometric } else { -geometric };
        let [n0, n1, n2] = shading.normals;
        let smooth = normalize(scale(n0, bary[0]) + scale(n1, bary[1]) + scale(n2, bary[2]));
        let smooth = if dot(smooth, facing) < 0.0 {
            -smooth
        } else {
            smooth
        };
        // At silhouettes an interpolated normal can lean so far that the ray meets it from
        // behind; reflecting or refracting about it would send the ray the wrong way, so the
        // face's own normal stands in.
        let normal = if dot(dir, smooth) < 0.0 {
            smooth
        } else {
            facing
        };
        let offset = surface_offset(&triangle.v, point, offset_scale);
        let outside = point + scale(facing, offset);
        Self {
            point,
            entering,
            facing,
            normal,
            offset,
            outside,
        }
    }
}

impl<O: FrameObserver> TaskRunner<RenderTask> for Whitted<'_, O> {
    type Local = WorkerRays;

    fn local(&self, worker: usize) -> WorkerRays {
        WorkerRays {
            blockers: vec![Blockers::default(); self.scene.lights.len()],
            ..self.local_without_blockers(worker)
        }
    }

    fn run<S: Spawn<RenderTask>>(&self, task: RenderTask, local: &mut WorkerRays, spawn: &mut S) {
        self.run_counted(task, local, &mut NoCounters, spawn);
    }
}

impl<O: FrameObserver> Whitted<'_, O> {
    /// Runs `task` as [`TaskRunner::run`] does, reporting every box and triangle test of its
    /// rays (closest hits and shadow rays) to `tests`; with [`NoCounters`] that is `run`.
    ///
    /// ```
    /// # use std::num::NonZeroU32;
    /// # use balancers::{Spawn, TaskRunner};
    /// # use renderer::film::Film;
    /// # use renderer::integrator::{RenderTask, Whitted, tiles};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::watch::Unwatched;
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # struct Collect(Vec<RenderTask>);
    /// # impl Spawn<RenderTask> for Collect {
    /// #     fn spawn(&mut self, task: RenderTask) { self.0.push(task); }
    /// # }
    /// use renderer::bvh::TestCounts;
    ///
    /// # let film = Film::new(32, 32, false);
    /// # let whitted = Whitted::new(&scene, &film, &Unwatched);
    /// # let mut local = whitted.local(0);
    /// let mut tests = TestCounts::default();
    /// let tile = tiles(32, 32, NonZeroU32::new(8).unwrap())[0];
    /// whitted.run_counted(RenderTask::Tile(tile), &mut local, &mut tests, &mut Collect(Vec::new()));
    /// assert!(tests.boxes > 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_counted<S: Spawn<RenderTask>, C: TraceObserver>(
        &self,
        task: RenderTask,
        local: &mut WorkerRays,
        tests: &mut C,
        spawn: &mut S,
    ) {
        if self.watch.cancel_requested() {
            self.watch.note_dropped();
            return;
        }
        match task {
            RenderTask::Ray(ray) => self.trace(ray, local, tests, spawn),
            RenderTask::Tile(tile) => {
                // A large tile hands all its pieces but the first out as new tiles, last first,
                // and traces the first: a worker then goes on through its pieces in order (the
                // newest spawn first), while a balancer that moves work finds equal pieces to
                // move, so that stealing half of them moves half of the tile's work. One that
                // does not move work runs the pieces on the same worker anyway.
                let mut pieces = tile.pieces();
                let tile = pieces.next().expect("a tile has at least one piece");
                for piece in pieces.rev() {
                    spawn.spawn(RenderTask::Tile(piece));
                }
                let rows = match self.scene.packets {
                    Packets::On => self.scene.accel.packet_block().rows,
                    Packets::Off => 1,
                };
                for y in (tile.y0..tile.y1).step_by(rows as usize) {
                    // A cancel request is also looked at every row of pixels, or of packets
                    // (up to four rows of pixels), so that a frame stops within a row's worth
                    // of camera rays rather than a tile's.
                    if self.watch.cancel_requested() {
                        self.watch.note_dropped();
                        self.watch
                            .count_done(u64::from((y - tile.y0) * (tile.x1 - tile.x0)));
                        return;
                    }
                    let band = Tile {
                        y0: y,
                        y1: (y + rows).min(tile.y1),
                        ..tile
                    };
                    match self.scene.packets {
                        Packets::On => self.trace_in_packets(band, local, tests, spawn),
                        Packets::Off => self.trace_one_by_one(band, local, tests, spawn),
                    }
                }
                self.watch.count_done(u64::from(tile.pixels()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_image_once() {
        let t = tiles(70, 33, NonZeroU32::new(32).unwrap());
        assert_eq!(t.len(), 3 * 2);
        let area: u32 = t.iter().map(|t| (t.x1 - t.x0) * (t.y1 - t.y0)).sum();
        assert_eq!(area, 70 * 33);
        assert_eq!(
            t[2],
            Tile {
                x0: 64,
                y0: 0,
                x1: 70,
                y1: 32
            }
        );
        assert_eq!(
            t[5],
            Tile {
                x0: 64,
                y0: 32,
                x1: 70,
                y1: 33
            }
        );
    }

    #[test]
    fn large_tiles_cut_into_pieces_that_cover_them_once() {
        let tile = Tile {
            x0: 100,
            y0: 10,
            x1: 170,
            y1: 75,
        };
        let pieces: Vec<Tile> = tile.pieces().collect();
        assert_eq!(pieces.len(), 3 * 3);
        assert_eq!(
            pieces[0],
            Tile {
                x0: 100,
                y0: 10,
                x1: 132,
                y1: 42
            }
        );
        assert_eq!(
            pieces[8],
            Tile {
                x0: 164,
                y0: 74,
                x1: 170,
                y1: 75
            },
            "the last row and column are clipped"
        );
        let mut covered = std::collections::HashSet::new();
        for p in &pieces {
            assert!(p.pixels() <= SPLIT_ABOVE && p.pixels() > 0);
            for y in p.y0..p.y1 {
                for x in p.x0..p.x1 {
                    assert!(covered.insert((x, y)), "({x}, {y}) twice");
                }
            }
        }
        assert_eq!(covered.len() as u32, tile.pixels());
        // Small tiles, whatever their shape, are left whole.
        let strip = Tile {
            x0: 0,
            y0: 0,
            x1: 1024,
            y1: 1,
        };
        assert_eq!(strip.pieces().collect::<Vec<_>>(), vec![strip]);
    }
}
