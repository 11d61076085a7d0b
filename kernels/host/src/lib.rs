//! The host build of the kernels' math: `kernels/cuda/raylb_math.cuh`, the header the CUDA
//! kernels trace with, compiled by the host C++ compiler (where `RL_ON_DEVICE` is 0, without
//! fused multiply-add or fast math) and wrapped in a small safe API.
//!
//! Used only by tests (a dev-dependency of `renderer`): they call these functions and the
//! renderer's Rust twins on the same inputs and require the same bits, which is what keeps the
//! GPU's image identical to the CPU's. The data crosses into C++ in the shared layout: the
//! `layout` crate's types, which are the renderer's own and whose C declarations the header
//! includes, generated from the same definitions.

use std::ffi::c_int;

use bytemuck::Zeroable;
use kernels::{SceneData, Structure};
use layout::kernel::Counts;
use layout::params;
use layout::task::Task;
use layout::wide::{WIDE_CHILDREN, WIDE_STACK, WideNode};
use layout::{Camera, Light, Ptr, PtrMut, Triangle};

/// A vector: `x, y, z`.
pub type Vec3 = [f32; 3];

/// A ray `origin + t · dir` over the open interval `(t_min, t_max)`. (Handed to C++ field by
/// field.)
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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

/// The index the header's traversals return for a miss.
const MISS: u32 = u32::MAX;

/// A closest-hit traversal of the header, on a structure described by a `P`.
type ClosestHit<P> =
    unsafe extern "C" fn(*const P, *const f32, *const f32, f32, f32, *mut f32) -> u32;
/// An occlusion traversal of the header, on a structure described by a `P`.
type Occluded<P> = unsafe extern "C" fn(*const P, *const f32, *const f32, f32, f32) -> c_int;

/// `traverse`'s closest hit of `ray` in the structure `params` describes.
///
/// # Safety
/// `params` must point only at live arrays whose contents `traverse` can follow without
/// leaving them (what each structure's `new` checks).
unsafe fn closest_hit<P>(traverse: ClosestHit<P>, params: &P, ray: &Ray) -> Option<Hit> {
    let mut t = 0.0;
    // SAFETY: `params` is valid (the caller's promise); the ray's 3 + 3 floats are read, `t`
    // written.
    let index = unsafe {
        traverse(
            params,
            ray.origin.as_ptr(),
            ray.dir.as_ptr(),
            ray.t_min,
            ray.t_max,
            &mut t,
        )
    };
    (index != MISS).then_some(Hit { index, t })
}

/// Whether `traverse` finds a triangle blocking `ray` in the structure `params` describes.
///
/// # Safety
/// As [`closest_hit`].
unsafe fn occluded<P>(traverse: Occluded<P>, params: &P, ray: &Ray) -> bool {
    // SAFETY: as in `closest_hit`.
    let blocked = unsafe {
        traverse(
            params,
            ray.origin.as_ptr(),
            ray.dir.as_ptr(),
            ray.t_min,
            ray.t_max,
        )
    };
    blocked != 0
}

unsafe extern "C" {
    fn rlh_check_result(x: u32, k: u32) -> u64;
    fn rlh_check_term(x: u32, k: u32, result: u64) -> u64;
    fn rlh_octant(origin: *const f32, dir: *const f32) -> c_int;
    fn rlh_slab_box(
        origin: *const f32,
        dir: *const f32,
        min: *const f32,
        max: *const f32,
        t_min: f32,
        t_max: f32,
        out: *mut f32,
    );
    fn rlh_triangle_hit(
        tri: *const Triangle,
        origin: *const f32,
        dir: *const f32,
        t_min: f32,
        t_max: f32,
        padding: f32,
        out: *mut f32,
    ) -> c_int;
    fn rlh_closest_hit(
        scene: *const params::Scene,
        origin: *const f32,
        dir: *const f32,
        t_min: f32,
        t_max: f32,
        t: *mut f32,
    ) -> u32;
    fn rlh_occluded(
        scene: *const params::Scene,
        origin: *const f32,
        dir: *const f32,
        t_min: f32,
        t_max: f32,
    ) -> c_int;
    fn rlh_wide_closest_hit(
        bvh: *const params::WideBvh,
        origin: *const f32,
        dir: *const f32,
        t_min: f32,
        t_max: f32,
        t: *mut f32,
    ) -> u32;
    fn rlh_wide_occluded(
        bvh: *const params::WideBvh,
        origin: *const f32,
        dir: *const f32,
        t_min: f32,
        t_max: f32,
    ) -> c_int;
    fn rlh_normalize(v: *const f32, out: *mut f32);
    fn rlh_reflect(d: *const f32, n: *const f32, out: *mut f32);
    fn rlh_refract(d: *const f32, n: *const f32, eta: f32, out: *mut f32) -> c_int;
    fn rlh_powi(x: f32, n: u32) -> f32;
    fn rlh_to_fixed(x: f32) -> u64;
    fn rlh_primary_dir(camera: *const Camera, x: u32, y: u32, w: u32, h: u32, out: *mut f32);
    fn rlh_cone_factor(light: *const Light, to_point: *const f32) -> f32;
    fn rlh_camera_task(scene: *const params::Scene, x: u32, y: u32, sample: u32, out: *mut Task);
    fn rlh_trace(
        scene: *const params::Scene,
        task: *const Task,
        film: *const params::Film,
        counts: *mut Counts,
        children: *mut Task,
    ) -> c_int;
}

/// `rl_check_result`: result `k` of pattern `x` in the device's float check
/// (`kernels::check`), computed with the host's C library.
pub fn check_result(x: u32, k: u32) -> u64 {
    // SAFETY: a pure function of two integers.
    unsafe { rlh_check_result(x, k) }
}

/// `rl_check_term`: the term result `k` of pattern `x` adds to the float check's digest.
pub fn check_term(x: u32, k: u32, result: u64) -> u64 {
    // SAFETY: a pure function of three integers.
    unsafe { rlh_check_term(x, k, result) }
}

/// The prepared ray's octant (`rl_prepare`): bit `i` set when `dir[i]` has its sign bit set.
pub fn octant(ray: &Ray) -> u32 {
    // SAFETY: the callee reads 3 floats from each pointer.
    let octant = unsafe { rlh_octant(ray.origin.as_ptr(), ray.dir.as_ptr()) };
    octant as u32
}

/// `rl_slab_box` of the prepared `ray` against the box `[min, max]`: `(enter, leave)`.
pub fn slab_box(ray: &Ray, min: Vec3, max: Vec3, t_min: f32, t_max: f32) -> (f32, f32) {
    let mut out = [0.0f32; 2];
    // SAFETY: the four input pointers each hold the 3 floats the callee reads, `out` the 2 it
    // writes.
    unsafe {
        rlh_slab_box(
            ray.origin.as_ptr(),
            ray.dir.as_ptr(),
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
    // SAFETY: `tri` and the ray's 3 + 3 floats are read only; `out` has the 4 floats the
    // callee writes.
    let hit = unsafe {
        rlh_triangle_hit(
            tri,
            ray.origin.as_ptr(),
            ray.dir.as_ptr(),
            ray.t_min,
            ray.t_max,
            padding,
            out.as_mut_ptr(),
        )
    };
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

/// A closest hit as the header's traversals report it: the triangle's index in the
/// structure's leaf order and the distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// The triangle's leaf-order index.
    pub index: u32,
    /// Distance along the ray.
    pub t: f32,
}

/// A scene for [`Scene::trace`] and the octree's queries: borrowed slices in the shared
/// layout, checked once so that the C++ traversal and shading can only index inside them.
#[derive(Debug)]
pub struct Scene<'a> {
    params: params::Scene,
    _borrows: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> Scene<'a> {
    /// Checks the scene's arrays, as the kernels are handed them, and wraps them.
    ///
    /// # Panics
    /// When the node arrays are not eight of equal length, a node's skip index or a leaf's
    /// triangles lie outside their arrays, a material index lies outside its slice, or the
    /// per-triangle slices differ in length: all things the C++ code trusts.
    pub fn new(parts: &SceneData<'a>) -> Self {
        let n = parts.triangles.len();
        assert!(parts.ids.len() == n && parts.shading.len() == n);
        assert!(parts.samples > 0, "at least one sample per pixel");
        let (nodes, wide_nodes, node_count) = match parts.structure {
            Structure::Octree(nodes) => {
                assert!(nodes.len().is_multiple_of(8), "eight node arrays");
                let node_count = nodes.len() / 8;
                for node in nodes {
                    assert!(node.leaf_range().end <= n, "leaf out of range");
                    assert!(node.skip() as usize <= node_count, "skip out of range");
                }
                (Ptr::host(nodes), Ptr::NULL, node_count)
            }
            Structure::Wide(nodes) => {
                check_wide(nodes, n);
                (Ptr::NULL, Ptr::host(nodes), 0)
            }
        };
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
            params: params::Scene {
                nodes,
                triangles: Ptr::host(parts.triangles),
                ids: Ptr::host(parts.ids),
                shading: Ptr::host(parts.shading),
                materials: Ptr::host(parts.materials),
                lights: Ptr::host(parts.lights),
                node_count: to_u32(node_count),
                light_count: to_u32(parts.lights.len()),
                width: parts.width,
                height: parts.height,
                padding: parts.padding,
                camera: parts.camera,
                settings: parts.settings,
                samples: parts.samples,
                wide_nodes,
            },
            _borrows: std::marker::PhantomData,
        }
    }

    /// `rl_closest_hit`: the closest hit in the scene's structure, `None` for a miss.
    pub fn closest_hit(&self, ray: &Ray) -> Option<Hit> {
        // SAFETY: the scene's slices are valid for `'a` and checked in `new`.
        unsafe { closest_hit(rlh_closest_hit, &self.params, ray) }
    }

    /// `rl_occluded`: whether a triangle of the scene blocks the ray.
    pub fn occluded(&self, ray: &Ray) -> bool {
        // SAFETY: as in `closest_hit`.
        unsafe { occluded(rlh_occluded, &self.params, ray) }
    }

    /// `rl_camera_task`: the camera ray task of sample `sample` of pixel `(x, y)`.
    ///
    /// # Panics
    /// When the pixel is outside the image or the sample past the scene's samples.
    pub fn camera_task(&self, x: u32, y: u32, sample: u32) -> Task {
        assert!(
            x < self.params.width && y < self.params.height,
            "pixel outside the image"
        );
        assert!(
            sample < self.params.samples,
            "sample past the pixel's samples"
        );
        let mut task = Task::zeroed();
        // SAFETY: the scene's pointers are valid for `'a` (checked in `new`); `task` is written.
        unsafe { rlh_camera_task(&self.params, x, y, sample, &mut task) };
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
        let pixels = self.params.width as usize * self.params.height as usize;
        assert!((task.pixel as usize) < pixels, "pixel outside the image");
        assert!(sums.len() >= 3 * pixels, "film too small");
        let film = params::Film {
            sums: PtrMut::host(sums),
            rays: match rays {
                Some(r) => {
                    assert!(r.len() >= pixels, "ray counts too small");
                    PtrMut::host(r)
                }
                None => PtrMut::NULL,
            },
        };
        let mut children = [Task::zeroed(); 2];
        // SAFETY: the scene's slices are valid for `'a` and checked in `new`; the pixel is in
        // the image and the film (borrowed mutably for this call) covers it; `children` has
        // room for the two tasks at most.
        let n = unsafe { rlh_trace(&self.params, task, &film, counts, children.as_mut_ptr()) };
        children[..n as usize].to_vec()
    }
}

/// The wide BVH in its GPU form, for `rl_wide_closest_hit` and `rl_wide_occluded`: borrowed
/// slices in the shared layout, checked once so that the C++ traversal can only index inside
/// them and its stack cannot overflow.
#[derive(Debug)]
pub struct WideScene<'a> {
    params: params::WideBvh,
    _borrows: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> WideScene<'a> {
    /// Checks the tree and wraps it: `nodes` (the root first), the `triangles` in its leaf
    /// order with their original indices `ids`, and the boxes' `padding`.
    ///
    /// # Panics
    /// When there are no nodes, a child comes before its parent or past the last node, a
    /// node's leaves hold more triangles than a byte counts or reach past the triangles, the
    /// tree is deeper than the traversal's stack, or `ids` and `triangles` differ in length:
    /// all things the C++ code trusts.
    pub fn new(
        nodes: &'a [WideNode],
        triangles: &'a [Triangle],
        ids: &'a [u32],
        padding: f32,
    ) -> Self {
        assert_eq!(ids.len(), triangles.len());
        check_wide(nodes, triangles.len());
        Self {
            params: params::WideBvh {
                nodes: Ptr::host(nodes),
                triangles: Ptr::host(triangles),
                ids: Ptr::host(ids),
                padding,
                pad: 0,
            },
            _borrows: std::marker::PhantomData,
        }
    }

    /// `rl_wide_closest_hit`: the closest hit, `None` for a miss.
    pub fn closest_hit(&self, ray: &Ray) -> Option<Hit> {
        // SAFETY: the tree's slices are valid for `'a` and checked in `new`.
        unsafe { closest_hit(rlh_wide_closest_hit, &self.params, ray) }
    }

    /// `rl_wide_occluded`: whether a triangle blocks the ray.
    pub fn occluded(&self, ray: &Ray) -> bool {
        // SAFETY: as in `closest_hit`.
        unsafe { occluded(rlh_wide_occluded, &self.params, ray) }
    }
}

/// Checks what the C++ traversal of the wide BVH trusts: a root, every child after its parent
/// and before the end, no node's leaves holding more triangles than a byte counts or reaching
/// past the `triangles` triangles, and no path deeper than the traversal's stack.
///
/// # Panics
/// When any of those fails.
fn check_wide(nodes: &[WideNode], triangles: usize) {
    assert!(!nodes.is_empty(), "a root");
    // Children come after their parents, so one pass in index order sees every parent before
    // its children: the depth of each node is known when it is reached.
    let mut depth = vec![0usize; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        let leaves: u32 = n.counts.iter().map(|&c| u32::from(c)).sum();
        assert!(leaves <= 255, "node {i}: {leaves} triangles in its leaves");
        for slot in 0..WIDE_CHILDREN {
            if n.is_inner(slot) {
                let child = n.child(slot) as usize;
                assert!(child > i && child < nodes.len(), "node {i}: child {child}");
                depth[child] = depth[child].max(depth[i] + 1);
                assert!(depth[child] <= WIDE_STACK, "deeper than the stack");
            } else {
                assert!(
                    n.leaf(slot).end as usize <= triangles,
                    "node {i}: leaf out of range"
                );
            }
        }
    }
}
