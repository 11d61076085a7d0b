//! The host build of the kernels' math: `kernels/cuda/raylb_math.cuh`, the header the CUDA
//! kernels trace with, compiled by the host C++ compiler (where `RL_ON_DEVICE` is 0, without
//! fused multiply-add or fast math) and wrapped in a small safe API.
//!
//! Used only by tests (a dev-dependency of `renderer`): they call these functions and the
//! renderer's Rust twins on the same inputs and require the same bits, which is what keeps the
//! GPU's image identical to the CPU's. The types here mirror the renderer's `#[repr(C)]`
//! structs field by field, as plain arrays, so a test can cast the renderer's slices to them
//! with `bytemuck`.

use std::ffi::c_int;

/// A vector: `x, y, z`, like `glam::Vec3`.
pub type Vec3 = [f32; 3];

/// A ray `origin + t · dir` over `(t_min, t_max)`, like `renderer::geometry::Ray`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Ray {
    /// Where the ray starts.
    pub origin: Vec3,
    /// Where it goes.
    pub dir: Vec3,
    /// Lower end of the open interval of `t`.
    pub t_min: f32,
    /// Upper end.
    pub t_max: f32,
}

/// `rl_node`, like `renderer::bvh::FlatNode` (whose alignment of 32 only raises its address).
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Node {
    /// Near faces, then the bits of the skip index.
    pub near_skip: [f32; 4],
    /// Far faces, then the bits of the leaf word (`first << 5 | count`, 0 for an inner node).
    pub far_leaf: [f32; 4],
}

/// `rl_triangle`, like `renderer::geometry::Triangle`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Triangle {
    /// The vertices.
    pub v: [Vec3; 3],
}

/// `rl_shading`, like `renderer::scene::TriangleShading`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Shading {
    /// Vertex normals.
    pub normals: [Vec3; 3],
    /// Index into the materials.
    pub material: u32,
}

/// `rl_material`, like `renderer::scene::Material`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Material {
    /// Multiplies the ambient light.
    pub ambient: Vec3,
    /// Diffuse reflectance.
    pub diffuse: Vec3,
    /// Specular reflectance.
    pub specular: Vec3,
    /// Specular exponent.
    pub shininess: u32,
    /// Weight of reflection rays.
    pub reflectivity: Vec3,
    /// Weight of refraction rays.
    pub refractivity: Vec3,
    /// Index of refraction.
    pub ior: f32,
}

/// `rl_light`, like `renderer::scene::Light`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Light {
    /// Position.
    pub position: Vec3,
    /// Colour times intensity.
    pub color: Vec3,
    /// Spot direction.
    pub direction: Vec3,
    /// Cosine of the outer half-angle.
    pub cos_outer: f32,
    /// Cosine of the inner half-angle.
    pub cos_inner: f32,
}

/// `rl_camera`, like `renderer::scene::Camera`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Camera {
    /// The eye.
    pub origin: Vec3,
    /// Viewing direction.
    pub forward: Vec3,
    /// Right of the image.
    pub right: Vec3,
    /// Top of the image.
    pub up: Vec3,
    /// `tan(fov / 2)`.
    pub tan_half_fov: f32,
}

/// `rl_settings`, like `renderer::scene::RenderSettings`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Settings {
    /// Deepest generation of secondary rays.
    pub max_depth: u32,
    /// Weight below which secondary rays are not spawned.
    pub weight_cutoff: f32,
    /// Ambient light.
    pub ambient: Vec3,
    /// What rays that hit nothing see.
    pub background: Vec3,
    /// Offset of secondary and shadow ray origins.
    pub ray_offset: f32,
}

/// `rl_task`: one ray task (`renderer::integrator::RayTask`, with `depth | kind << 8`).
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Task {
    /// Origin.
    pub origin: Vec3,
    /// Unit direction.
    pub dir: Vec3,
    /// Weight in its pixel.
    pub weight: Vec3,
    /// Row-major pixel index.
    pub pixel: u32,
    /// `depth | kind << 8`, kind 0 camera, 1 reflection, 2 refraction.
    pub depth_kind: u32,
    /// Unused by ray tasks.
    pub tile_end: u32,
}

/// `rl_counts`: rays traced, by kind (`renderer::integrator::RayCounts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Counts {
    /// Camera rays.
    pub camera: u64,
    /// Shadow rays.
    pub shadow: u64,
    /// Reflection rays.
    pub reflection: u64,
    /// Refraction rays.
    pub refraction: u64,
}

// The sizes of the C structs in raylb_math.cuh (and of the renderer's structs they mirror).
const _: () = assert!(size_of::<Node>() == 32);
const _: () = assert!(size_of::<Triangle>() == 36);
const _: () = assert!(size_of::<Shading>() == 40);
const _: () = assert!(size_of::<Material>() == 68);
const _: () = assert!(size_of::<Light>() == 44);
const _: () = assert!(size_of::<Camera>() == 52);
const _: () = assert!(size_of::<Settings>() == 36);
const _: () = assert!(size_of::<Task>() == 48);
const _: () = assert!(size_of::<Counts>() == 32);
const _: () = assert!(size_of::<RawScene>() == 160);

/// `rl_scene`: pointers into the slices of a [`Scene`].
#[repr(C)]
struct RawScene {
    nodes: *const Node,
    triangles: *const Triangle,
    ids: *const u32,
    shading: *const Shading,
    materials: *const Material,
    lights: *const Light,
    node_count: u32,
    light_count: u32,
    width: u32,
    height: u32,
    padding: f32,
    camera: Camera,
    settings: Settings,
}

unsafe extern "C" {
    fn rlh_octant(ray: *const Ray) -> c_int;
    fn rlh_slab_box(
        ray: *const Ray,
        min: *const f32,
        max: *const f32,
        t_min: f32,
        t_max: f32,
        out: *mut f32,
    );
    fn rlh_triangle_hit(
        tri: *const Triangle,
        ray: *const Ray,
        padding: f32,
        out: *mut f32,
    ) -> c_int;
    fn rlh_normalize(v: *const f32, out: *mut f32);
    fn rlh_reflect(d: *const f32, n: *const f32, out: *mut f32);
    fn rlh_refract(d: *const f32, n: *const f32, eta: f32, out: *mut f32) -> c_int;
    fn rlh_powi(x: f32, n: u32) -> f32;
    fn rlh_to_fixed(x: f32) -> u64;
    fn rlh_primary_dir(camera: *const Camera, x: u32, y: u32, w: u32, h: u32, out: *mut f32);
    fn rlh_cone_factor(light: *const Light, to_point: *const f32) -> f32;
    fn rlh_camera_task(scene: *const RawScene, x: u32, y: u32, out: *mut Task);
    fn rlh_trace(
        scene: *const RawScene,
        task: *const Task,
        sums: *mut u64,
        rays: *mut u32,
        counts: *mut Counts,
        children: *mut Task,
    ) -> c_int;
}

/// The prepared ray's octant (`rl_prepare`): bit `i` set when `dir[i]` has its sign bit set.
pub fn octant(ray: &Ray) -> u32 {
    // SAFETY: `ray` is a valid `rlh_ray` (same layout) that the callee only reads.
    let octant = unsafe { rlh_octant(ray) };
    octant as u32
}

/// `rl_slab_box` of the prepared `ray` against the box `[min, max]`: `(enter, leave)`.
pub fn slab_box(ray: &Ray, min: Vec3, max: Vec3, t_min: f32, t_max: f32) -> (f32, f32) {
    let mut out = [0.0f32; 2];
    // SAFETY: `min` and `max` hold the 3 floats the callee reads, `out` the 2 it writes.
    unsafe {
        rlh_slab_box(
            ray,
            min.as_ptr(),
            max.as_ptr(),
            t_min,
            t_max,
            out.as_mut_ptr(),
        )
    };
    (out[0], out[1])
}

/// `rl_triangle_hit` of the prepared `ray`: `(t, barycentrics)` on a hit, the barycentrics
/// being `uvw[i] / det` as `Triangle::intersect_with_barycentrics` divides them.
pub fn triangle_hit(tri: &Triangle, ray: &Ray, padding: f32) -> Option<(f32, [f32; 3])> {
    let mut out = [0.0f32; 4];
    // SAFETY: `tri` and `ray` are read only; `out` has the 4 floats the callee writes.
    let hit = unsafe { rlh_triangle_hit(tri, ray, padding, out.as_mut_ptr()) };
    (hit != 0).then_some((out[0], [out[1], out[2], out[3]]))
}

/// `rl_normalize`.
pub fn normalize(v: Vec3) -> Vec3 {
    let mut out = [0.0; 3];
    // SAFETY: 3 floats read from `v`, 3 written to `out`.
    unsafe { rlh_normalize(v.as_ptr(), out.as_mut_ptr()) };
    out
}

/// `rl_reflect`.
pub fn reflect(d: Vec3, n: Vec3) -> Vec3 {
    let mut out = [0.0; 3];
    // SAFETY: 3 floats read from `d` and `n`, 3 written to `out`.
    unsafe { rlh_reflect(d.as_ptr(), n.as_ptr(), out.as_mut_ptr()) };
    out
}

/// `rl_refract`; `None` on total internal reflection.
pub fn refract(d: Vec3, n: Vec3, eta: f32) -> Option<Vec3> {
    let mut out = [0.0; 3];
    // SAFETY: 3 floats read from `d` and `n`, 3 written to `out`.
    let ok = unsafe { rlh_refract(d.as_ptr(), n.as_ptr(), eta, out.as_mut_ptr()) };
    (ok != 0).then_some(out)
}

/// `rl_powi`.
pub fn powi(x: f32, n: u32) -> f32 {
    // SAFETY: a pure function of its arguments.
    unsafe { rlh_powi(x, n) }
}

/// `rl_to_fixed`.
pub fn to_fixed(x: f32) -> u64 {
    // SAFETY: a pure function of its arguments.
    unsafe { rlh_to_fixed(x) }
}

/// `rl_primary_dir`: the unit direction of the camera ray through pixel `(x, y)`.
pub fn primary_dir(camera: &Camera, x: u32, y: u32, width: u32, height: u32) -> Vec3 {
    let mut out = [0.0; 3];
    // SAFETY: `camera` is read only; 3 floats written to `out`.
    unsafe { rlh_primary_dir(camera, x, y, width, height, out.as_mut_ptr()) };
    out
}

/// `rl_cone_factor`.
pub fn cone_factor(light: &Light, to_point: Vec3) -> f32 {
    // SAFETY: `light` and the 3 floats of `to_point` are read only.
    unsafe { rlh_cone_factor(light, to_point.as_ptr()) }
}

/// A scene for [`Scene::trace`]: borrowed slices in the renderer's layout, checked once so
/// that the C++ traversal and shading can only index inside them.
#[derive(Debug)]
pub struct Scene<'a> {
    raw: RawScene,
    width: u32,
    height: u32,
    _borrows: std::marker::PhantomData<&'a [u8]>,
}

// The raw pointers are what `RawScene` is for, not a reason to print them.
impl std::fmt::Debug for RawScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawScene")
            .field("node_count", &self.node_count)
            .field("light_count", &self.light_count)
            .finish_non_exhaustive()
    }
}

/// The parts of a [`Scene`], as the renderer holds them.
#[derive(Clone, Copy, Debug)]
pub struct SceneParts<'a> {
    /// The eight per-octant node arrays, concatenated (each of the same length).
    pub nodes: &'a [Node],
    /// Triangles in leaf order.
    pub triangles: &'a [Triangle],
    /// Original index of each triangle.
    pub ids: &'a [u32],
    /// Shading of each triangle.
    pub shading: &'a [Shading],
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
    /// Integrator settings.
    pub settings: Settings,
}

impl<'a> Scene<'a> {
    /// Checks `parts` and wraps them.
    ///
    /// # Panics
    /// When the node arrays are not eight of equal length, a leaf's triangles or a material
    /// index lie outside their slices, or the per-triangle slices differ in length: all
    /// things the C++ code trusts.
    pub fn new(parts: SceneParts<'a>) -> Self {
        let n = parts.triangles.len();
        assert!(parts.nodes.len().is_multiple_of(8), "eight node arrays");
        assert!(parts.ids.len() == n && parts.shading.len() == n);
        for node in parts.nodes {
            let leaf = node.far_leaf[3].to_bits();
            assert!(
                (leaf >> 5) as usize + (leaf & 31) as usize <= n,
                "leaf out of range"
            );
        }
        assert!(
            parts
                .shading
                .iter()
                .all(|s| (s.material as usize) < parts.materials.len()),
            "material out of range"
        );
        let to_u32 = |len: usize| u32::try_from(len).expect("fits in u32");
        assert!(parts.width.checked_mul(parts.height).is_some());
        Self {
            raw: RawScene {
                nodes: parts.nodes.as_ptr(),
                triangles: parts.triangles.as_ptr(),
                ids: parts.ids.as_ptr(),
                shading: parts.shading.as_ptr(),
                materials: parts.materials.as_ptr(),
                lights: parts.lights.as_ptr(),
                node_count: to_u32(parts.nodes.len() / 8),
                light_count: to_u32(parts.lights.len()),
                width: parts.width,
                height: parts.height,
                padding: parts.padding,
                camera: parts.camera,
                settings: parts.settings,
            },
            width: parts.width,
            height: parts.height,
            _borrows: std::marker::PhantomData,
        }
    }

    /// `rl_camera_task`: the camera ray task of pixel `(x, y)`.
    ///
    /// # Panics
    /// When the pixel is outside the image.
    pub fn camera_task(&self, x: u32, y: u32) -> Task {
        assert!(x < self.width && y < self.height, "pixel outside the image");
        let mut task = Task::default();
        // SAFETY: the scene's pointers are valid for `'a` (checked in `new`); `task` is written.
        unsafe { rlh_camera_task(&self.raw, x, y, &mut task) };
        task
    }

    /// `rl_trace`: traces `task`, adding to `sums` (three per pixel) and, when given, `rays`
    /// (one per pixel); counts its rays in `counts` and returns its children, reflection first.
    ///
    /// # Panics
    /// When the task's pixel is outside the image, or the film is smaller than the image.
    pub fn trace(
        &self,
        task: &Task,
        sums: &mut [u64],
        rays: Option<&mut [u32]>,
        counts: &mut Counts,
    ) -> Vec<Task> {
        let pixels = self.width as usize * self.height as usize;
        assert!((task.pixel as usize) < pixels, "pixel outside the image");
        assert!(sums.len() >= 3 * pixels, "film too small");
        let rays = match rays {
            Some(r) => {
                assert!(r.len() >= pixels, "ray counts too small");
                r.as_mut_ptr()
            }
            None => std::ptr::null_mut(),
        };
        let mut children = [Task::default(); 2];
        // SAFETY: the scene's slices are valid for `'a` and checked in `new`; the pixel is in
        // the image and the film covers it; `children` has room for the two tasks at most.
        let n = unsafe {
            rlh_trace(
                &self.raw,
                task,
                sums.as_mut_ptr(),
                rays,
                counts,
                children.as_mut_ptr(),
            )
        };
        children[..n as usize].to_vec()
    }
}
