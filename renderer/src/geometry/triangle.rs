//! Ray–triangle intersection: the watertight test of Woop, Benthin and Wald (JCGT 2013),
//! with the reported distance kept inside the triangle's padded box.
//!
//! The ray is turned into a frame where it runs along +z from the origin; the triangle is
//! sheared into that frame and the test becomes "is the 2-D origin inside the projected
//! triangle", decided by the signs of three edge functions. Triangles that share an edge
//! evaluate that edge's function from the same two vertices with the same operations, so a
//! ray through a shared edge or vertex hits at least one of them: no cracks. When an edge
//! function rounds to exactly zero it is recomputed in double precision (the paper's fallback).
//!
//! The distance `t` is a weighted mean of the vertices' depths, and for slivers (triangles far
//! thinner than they are long) the weights carry large relative errors, so the point at `t`
//! can lie well outside the triangle. A hit is therefore also required to meet the triangle's
//! own box, grown by the same padding as the BVH's nodes, and `t` is clamped into the stretch
//! of the ray inside that box. Every node above the triangle contains that box, so a node's
//! box test can never reject a hit the triangle test reports: the closest hit is the same for
//! any traversal order and for brute force.

pub use layout::Triangle;

use crate::math::Vec3;

use super::aabb::Aabb;
use super::ray::PreparedRay;

/// Where a ray meets a triangle: the distance and the barycentric weights of the vertices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleHit {
    /// Distance along the ray (in units of the ray's direction length).
    pub t: f32,
    /// Weights of `v[0]`, `v[1]`, `v[2]`; non-negative, summing to 1 up to rounding.
    pub bary: [f32; 3],
}

/// What the renderer does with a [`Triangle`] (a type of the shared layout, which the GPU
/// reads as it is): its box, centroid and normal, and the watertight ray test.
pub trait TriangleExt {
    /// The unnormalised geometric normal `(v1 − v0) × (v2 − v0)`; its length is twice the
    /// area.
    fn normal(&self) -> Vec3;

    /// The triangle's box: the smallest that holds its vertices.
    fn bounds(&self) -> Aabb;

    /// The mean of the vertices: where a BVH build places the triangle.
    fn centroid(&self) -> Vec3;

    /// The triangle's box grown by `padding` on every side: the same arithmetic that pads the
    /// BVH's node boxes, so a node's padded box always contains its triangles' padded boxes.
    fn padded_bounds(&self, padding: f32) -> ([f32; 3], [f32; 3]);

    /// The distance at which `ray` crosses the triangle within `(t_min, t_max)`, if it does.
    /// `padding` must be the padding of the BVH the triangle belongs to.
    fn intersect(&self, ray: &PreparedRay, padding: f32) -> Option<f32>;

    /// Like [`intersect`](Self::intersect), also giving the barycentric weights.
    fn intersect_with_barycentrics(&self, ray: &PreparedRay, padding: f32) -> Option<TriangleHit>;
}

impl TriangleExt for Triangle {
    fn normal(&self) -> Vec3 {
        crate::math::cross(self.v[1] - self.v[0], self.v[2] - self.v[0])
    }

    #[inline]
    fn bounds(&self) -> Aabb {
        Aabb::EMPTY.grow(self.v[0]).grow(self.v[1]).grow(self.v[2])
    }

    #[inline]
    fn centroid(&self) -> Vec3 {
        (self.v[0] + self.v[1] + self.v[2]) * (1.0 / 3.0)
    }

    #[inline(always)]
    fn padded_bounds(&self, padding: f32) -> ([f32; 3], [f32; 3]) {
        let [a, b, c] = self.v;
        let min = a.min(b).min(c) - Vec3::splat(padding);
        let max = a.max(b).max(c) + Vec3::splat(padding);
        (min.to_array(), max.to_array())
    }

    #[inline(always)]
    fn intersect(&self, ray: &PreparedRay, padding: f32) -> Option<f32> {
        hit(self, ray, padding).map(|(t, _, _)| t)
    }

    fn intersect_with_barycentrics(&self, ray: &PreparedRay, padding: f32) -> Option<TriangleHit> {
        hit(self, ray, padding).map(|(t, uvw, det)| TriangleHit {
            t,
            bary: barycentrics(uvw, det),
        })
    }
}

/// Like [`TriangleExt::intersect`], also giving the unnormalised edge functions and their sum,
/// from which [`barycentrics`] makes the weights: a traversal keeps these for its closest hit
/// so far and divides once, for the hit it returns.
#[inline(always)]
pub(crate) fn intersect_unnormalised(
    triangle: &Triangle,
    ray: &PreparedRay,
    padding: f32,
) -> Option<(f32, [f32; 3], f32)> {
    hit(triangle, ray, padding)
}

/// The test for the ray's axis permutation, with the axes as constants so that each
/// coordinate is a plain load. The branch is the same for every triangle a ray meets, so it is
/// always predicted.
#[inline(always)]
fn hit(triangle: &Triangle, ray: &PreparedRay, padding: f32) -> Option<(f32, [f32; 3], f32)> {
    match ray.axes {
        [1, 2, 0] => hit_in::<1, 2, 0>(triangle, ray, padding),
        [2, 1, 0] => hit_in::<2, 1, 0>(triangle, ray, padding),
        [2, 0, 1] => hit_in::<2, 0, 1>(triangle, ray, padding),
        [0, 2, 1] => hit_in::<0, 2, 1>(triangle, ray, padding),
        [0, 1, 2] => hit_in::<0, 1, 2>(triangle, ray, padding),
        _ => hit_in::<1, 0, 2>(triangle, ray, padding),
    }
}

#[inline(always)]
fn hit_in<const KX: usize, const KY: usize, const KZ: usize>(
    triangle: &Triangle,
    ray: &PreparedRay,
    padding: f32,
) -> Option<(f32, [f32; 3], f32)> {
    let [sx, sy, sz] = ray.shear;
    let o = ray.origin;
    let rel = |v: Vec3| {
        let v = v.to_array();
        [v[KX] - o[KX], v[KY] - o[KY], v[KZ] - o[KZ]]
    };
    let (a, b, c) = (rel(triangle.v[0]), rel(triangle.v[1]), rel(triangle.v[2]));
    let (ax, ay) = (a[0] - sx * a[2], a[1] - sy * a[2]);
    let (bx, by) = (b[0] - sx * b[2], b[1] - sy * b[2]);
    let (cx, cy) = (c[0] - sx * c[2], c[1] - sy * c[2]);
    let mut u = cx * by - cy * bx;
    let mut v = ax * cy - ay * cx;
    let mut w = bx * ay - by * ax;
    if u == 0.0 || v == 0.0 || w == 0.0 {
        u = edge_f64(cx, cy, bx, by);
        v = edge_f64(ax, ay, cx, cy);
        w = edge_f64(bx, by, ax, ay);
    }
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return None;
    }
    let det = u + v + w;
    if det == 0.0 {
        return None;
    }
    let t_raw = (u * (sz * a[2]) + v * (sz * b[2]) + w * (sz * c[2])) / det;
    let (min, max) = triangle.padded_bounds(padding);
    let (enter, leave) = ray.slab_box(min, max, f32::NEG_INFINITY, f32::INFINITY);
    if enter > leave {
        return None;
    }
    let t = t_raw.max(enter).min(leave);
    (t > ray.t_min && t < ray.t_max).then_some((t, [u, v, w], det))
}

/// The barycentric weights from the edge functions `uvw` and their sum `det`, as every
/// intersection reports them.
#[inline]
pub(crate) fn barycentrics(uvw: [f32; 3], det: f32) -> [f32; 3] {
    [uvw[0] / det, uvw[1] / det, uvw[2] / det]
}

/// `cx · by − cy · bx` with the products exact (two 24-bit significands fit in 53 bits) and
/// one rounding to double, then one to single precision.
#[cold]
fn edge_f64(cx: f32, cy: f32, bx: f32, by: f32) -> f32 {
    (f64::from(cx) * f64::from(by) - f64::from(cy) * f64::from(bx)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Ray;

    const PAD: f32 = 1e-6;

    fn tri() -> Triangle {
        Triangle {
            v: [
                Vec3::new(0.0, 0.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
            ],
        }
    }

    fn shoot(origin: Vec3, dir: Vec3, t: &Triangle) -> Option<TriangleHit> {
        t.intersect_with_barycentrics(&PreparedRay::new(&Ray::new(origin, dir)), PAD)
    }

    #[test]
    fn hits_front_and_back() {
        let t = tri();
        let hit = shoot(Vec3::new(0.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0), &t).unwrap();
        assert_eq!(hit.t, 1.0);
        assert_eq!(hit.bary, [0.5, 0.25, 0.25]);
        let back = shoot(Vec3::new(0.25, 0.25, -2.0), Vec3::new(0.0, 0.0, 1.0), &t).unwrap();
        assert_eq!(back.t, 2.0);
    }

    #[test]
    fn misses_outside_behind_and_parallel() {
        let t = tri();
        assert!(shoot(Vec3::new(0.75, 0.75, 1.0), Vec3::new(0.0, 0.0, -1.0), &t).is_none());
        assert!(shoot(Vec3::new(0.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0), &t).is_none());
        assert!(shoot(Vec3::new(-1.0, 0.25, 0.0), Vec3::new(1.0, 0.0, 0.0), &t).is_none());
        assert!(shoot(Vec3::new(0.25, 0.25, 1.0), Vec3::ZERO, &t).is_none());
    }

    #[test]
    fn shared_edge_is_watertight() {
        // Two triangles sharing the diagonal of the unit square; rays exactly on the diagonal
        // must hit at least one of them.
        let a = Triangle {
            v: [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0)],
        };
        let b = Triangle {
            v: [Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0), Vec3::Y],
        };
        for i in 1..100 {
            let s = i as f32 / 100.0;
            let o = Vec3::new(s, s, 3.0);
            let d = Vec3::new(0.0, 0.0, -1.0);
            assert!(
                shoot(o, d, &a).is_some() || shoot(o, d, &b).is_some(),
                "crack at {s}"
            );
        }
    }

    #[test]
    fn sliver_distance_stays_in_its_box() {
        // A face of a box one millionth thick: the raw distance of this ray lands 1e-4 short of
        // the plane x = -1; the clamped one lies in the padded box.
        let sliver = Triangle {
            v: [
                Vec3::new(-1.0, 0.25, 0.5),
                Vec3::new(-1.0, 0.250001, 1.0),
                Vec3::new(-1.0, 0.25, 1.0),
            ],
        };
        let o = Vec3::new(1.6411972, 0.40191793, -2.6690104);
        let d = Vec3::new(-2.6411972, -0.15191793, 3.4190104);
        let hit = shoot(o, d, &sliver).unwrap();
        let x = o.x + hit.t * d.x;
        assert!((x + 1.0).abs() <= 2.0 * PAD, "hit point x = {x}");
    }
}
