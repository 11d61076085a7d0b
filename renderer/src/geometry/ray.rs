//! A ray, and the same ray prepared for the box and triangle tests.

use glam::Vec4;

use crate::math::Vec3;
use layout::FlatNode;

/// A ray `origin + t · dir` for `t` in the open interval `(t_min, t_max)`.
///
/// `dir` need not be unit length for intersection; shading always passes unit directions so
/// that `t` is a distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// Where the ray starts.
    pub origin: Vec3,
    /// Where it goes.
    pub dir: Vec3,
    /// Hits at or before this distance are ignored.
    pub t_min: f32,
    /// Hits at or beyond this distance are ignored (`f32::INFINITY` for none).
    pub t_max: f32,
}

impl Ray {
    /// A ray over `(0, ∞)`.
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        Self {
            origin,
            dir,
            t_min: 0.0,
            t_max: f32::INFINITY,
        }
    }
}

/// A ray with everything the box and triangle tests need computed once: the reciprocal
/// direction and octant for the slab test, the axis permutation and shear for the watertight
/// triangle test.
#[derive(Clone, Copy, Debug)]
pub struct PreparedRay {
    pub(crate) origin: [f32; 3],
    /// `1 / dir`, ±∞ for a zero component (signed like the component, so `-0.0` gives −∞).
    pub(crate) inv: [f32; 3],
    /// Bit `i` set when the direction is negative (sign bit set) along axis `i`.
    pub(crate) octant: usize,
    /// The origin with +∞ in the fourth lane, for the near faces of [`slab`](Self::slab).
    origin_near: Vec4,
    /// The origin with −∞ in the fourth lane, for the far faces.
    origin_far: Vec4,
    /// `inv` with 1 in the fourth lane.
    inv4: Vec4,
    /// The axes `kx`, `ky`, `kz` of the watertight test; `kz` is the dominant axis.
    pub(crate) axes: [usize; 3],
    /// Shear `(dx / dz, dy / dz, 1 / dz)` in the permuted axes.
    pub(crate) shear: [f32; 3],
    /// Hits at or before this distance are ignored.
    pub t_min: f32,
    /// Hits at or beyond this distance are ignored.
    pub t_max: f32,
}

/// What the box tests need of a ray: its origin, reciprocal direction and octant. The first
/// part of a [`PreparedRay`], made on its own where a traversal can be over before it needs the
/// triangle test's part.
#[derive(Clone, Copy, Debug)]
pub struct BoxRay {
    pub(crate) origin: [f32; 3],
    /// `1 / dir`, ±∞ for a zero component (signed like the component, so `-0.0` gives −∞).
    pub(crate) inv: [f32; 3],
    /// Bit `i` set when the direction is negative (sign bit set) along axis `i`.
    pub(crate) octant: usize,
}

impl BoxRay {
    /// The box tests' part of `ray`.
    #[inline(always)]
    pub fn new(ray: &Ray) -> Self {
        let d = ray.dir;
        // One vector division: the box tests need it first, and should not wait on the
        // triangle test's choice of the dominant axis.
        let inv = Vec4::ONE / Vec4::new(d.x, d.y, d.z, 1.0);
        Self {
            origin: ray.origin.to_array(),
            inv: [inv.x, inv.y, inv.z],
            octant: Self::octant_of(d),
        }
    }

    /// The octant of a direction: bit `i` set when its component `i` has its sign bit set
    /// (`-0.0` included).
    #[inline(always)]
    pub(crate) fn octant_of(d: Vec3) -> usize {
        usize::from(d.x.is_sign_negative())
            | usize::from(d.y.is_sign_negative()) << 1
            | usize::from(d.z.is_sign_negative()) << 2
    }
}

impl PreparedRay {
    /// Prepares `ray`. A zero direction gives a ray that hits nothing.
    #[inline(always)]
    pub fn new(ray: &Ray) -> Self {
        Self::with_boxes(ray, BoxRay::new(ray))
    }

    /// Prepares `ray`, whose box part `boxes` is already made.
    #[inline(always)]
    pub fn with_boxes(ray: &Ray, boxes: BoxRay) -> Self {
        let d = ray.dir.to_array();
        let [kx, ky, kz] = Self::watertight_axes(ray.dir);
        let BoxRay {
            origin: o,
            inv,
            octant,
        } = boxes;
        Self {
            origin: o,
            inv,
            origin_near: Vec4::new(o[0], o[1], o[2], f32::INFINITY),
            origin_far: Vec4::new(o[0], o[1], o[2], f32::NEG_INFINITY),
            inv4: Vec4::new(inv[0], inv[1], inv[2], 1.0),
            octant,
            axes: [kx, ky, kz],
            shear: [d[kx] / d[kz], d[ky] / d[kz], 1.0 / d[kz]],
            t_min: ray.t_min,
            t_max: ray.t_max,
        }
    }

    /// The axes `kx`, `ky`, `kz` of the watertight test of a ray along `dir`: `kz` is the
    /// dominant axis (the first of the largest components), and `kx`, `ky` follow it in
    /// cyclic order, swapped where `dir` points down `kz`.
    #[inline(always)]
    pub(crate) fn watertight_axes(dir: Vec3) -> [usize; 3] {
        let a = dir.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let kx = (kz + 1) % 3;
        let ky = (kx + 1) % 3;
        // Swapping keeps the winding of the projected triangle, so the edge-function signs of
        // front faces stay positive whichever way the ray points.
        if dir[kz] < 0.0 {
            [ky, kx, kz]
        } else {
            [kx, ky, kz]
        }
    }

    /// The box tests' part.
    #[inline(always)]
    pub fn boxes(&self) -> BoxRay {
        BoxRay {
            origin: self.origin,
            inv: self.inv,
            octant: self.octant,
        }
    }

    /// The octant of the direction: bit `i` set when negative along axis `i`.
    #[inline(always)]
    pub fn octant(&self) -> usize {
        self.octant
    }

    /// The part of `[t_min, t_max]` (both inclusive) the ray spends inside a BVH node's box,
    /// as `(enter, leave)`; the ray misses the box when `enter > leave`. The node's faces are
    /// already ordered for this ray's octant (near faces first met, far faces last left).
    ///
    /// A zero direction component with the origin exactly on that slab's face gives
    /// `0 · ∞ = NaN`; NaN lanes count as no constraint, which is right for a ray running inside
    /// the face's plane. With the origin off the face the product is ±∞ and the slab rejects or
    /// accepts the whole ray, also right.
    #[inline(always)]
    pub fn slab(&self, node: &FlatNode, t_min: f32, t_max: f32) -> (f32, f32) {
        // Four lanes (SSE2 on x86-64). The fourth holds the node's skip index or leaf word;
        // against an origin lane of +∞ (near) or −∞ (far) it becomes −∞ or +∞ (or NaN), all
        // neutral below. `Vec4::max`/`min` give their argument (`t_min`, `t_max`) for NaN
        // lanes, so a NaN lane is no constraint.
        let t_near = (Vec4::from_array(node.near_skip) - self.origin_near) * self.inv4;
        let t_far = (Vec4::from_array(node.far_leaf) - self.origin_far) * self.inv4;
        let enter = t_near.max(Vec4::splat(t_min)).max_element();
        let leave = t_far.min(Vec4::splat(t_max)).min_element();
        (enter, leave)
    }

    /// The slab test one axis at a time, for a box given by its faces. Gives the same bits as
    /// [`slab`](Self::slab): the per-axis distances come from the same subtraction and
    /// multiplication, and the maximum or minimum of a set of numbers is exact whatever the
    /// order (NaNs skipped in both).
    #[inline(always)]
    fn slab_scalar(&self, near: &[f32; 3], far: &[f32; 3], t_min: f32, t_max: f32) -> (f32, f32) {
        let o = self.origin;
        let inv = self.inv;
        let n = [
            (near[0] - o[0]) * inv[0],
            (near[1] - o[1]) * inv[1],
            (near[2] - o[2]) * inv[2],
        ];
        let f = [
            (far[0] - o[0]) * inv[0],
            (far[1] - o[1]) * inv[1],
            (far[2] - o[2]) * inv[2],
        ];
        // `f32::max` and `f32::min` return the other operand when one is NaN.
        let enter = n[0].max(n[1]).max(n[2].max(t_min));
        let leave = f[0].min(f[1]).min(f[2].min(t_max));
        (enter, leave)
    }

    /// The slab test for a box given by its corners.
    #[inline(always)]
    pub fn slab_box(&self, min: [f32; 3], max: [f32; 3], t_min: f32, t_max: f32) -> (f32, f32) {
        let (mut near, mut far) = (min, max);
        for axis in 0..3 {
            if self.octant >> axis & 1 == 1 {
                near[axis] = max[axis];
                far[axis] = min[axis];
            }
        }
        self.slab_scalar(&near, &far, t_min, t_max)
    }
}
