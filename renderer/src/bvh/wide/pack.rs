//! A leaf's triangles eight at a time: their vertices stored coordinate by coordinate, so that
//! the watertight test runs on all eight in the lanes of one AVX register (two SSE halves where
//! the processor has no AVX2), at about the cost of four in SSE's lanes. A wide BVH's leaf is
//! by default one such pack: against packs of four and leaves of four, a ray visits fewer nodes
//! for a few more triangle tests (`treasure`'s reflection rays: 90.3 against 101.0 box tests,
//! 44.1 against 25.8 triangle tests, 1.11 times as fast; BENCHMARKS.md).
//!
//! The test is the one-triangle test (`geometry::intersect_unnormalised`) lane by lane, with
//! the same operations in the same order, so each lane gives the bits the one-triangle test
//! gives: IEEE arithmetic rounds the same in a vector lane as in a scalar register, the minimum
//! and maximum of a set of numbers do not depend on the order they are taken in, and a NaN is
//! skipped by both (the NaN operand comes first, as in the node test). One difference is left:
//! of `+0` and `−0`, SSE's and AVX's `max` give their second operand and `f32::max` either, so a distance
//! of exactly zero may differ in sign; no ray with `t_min ≥ 0`, as every ray the renderer
//! traces, reports a hit at zero. The one step that is not lane-wise, the double-precision edge
//! function when an edge rounds to zero, sends the pack to the one-triangle test instead; it is
//! rare (a ray through a vertex or along an edge).

use super::lanes::Lanes;

use crate::geometry::{PreparedRay, Triangle, intersect_unnormalised};
use crate::math::Vec3;

/// Triangles per pack: the eight lanes of an AVX register.
pub const LANES: usize = 8;

/// Up to eight triangles of one leaf, coordinate by coordinate. Aligned to a cache line, so that
/// a pack is eight whole lines: a traversal that enters a leaf asks for all eight of its first
/// pack's.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub struct TrianglePack {
    /// `v[vertex][axis][lane]`: coordinate `axis` of vertex `vertex` of the triangle in `lane`.
    /// Unused lanes repeat lane 0 and are masked off.
    pub v: [[[f32; LANES]; 3]; 3],
    /// `bounds[2 axis][lane]` and `bounds[2 axis + 1][lane]`: the lowest and highest
    /// coordinate `axis` of the triangle in `lane`, padded by the hierarchy's padding; the
    /// box the triangle test clamps its distance to, computed once here.
    pub bounds: [[f32; LANES]; 6],
    /// The leaf-order index of lane 0's triangle; lane `k` holds the next `k`th.
    pub first: u32,
    /// Lanes in use, 1 to 8.
    pub lanes: u32,
    _pad: [u32; 6],
}

const _: () = assert!(size_of::<TrianglePack>() == 512);

/// The watertight test's edge functions, lane by lane, of a triangle's vertices `a`, `b`, `c`
/// taken relative to the ray's origin in its permuted axes: the operations of the
/// one-triangle test (`geometry::intersect_unnormalised`) in its order. Shared by the pack's
/// test (a triangle in each lane) and the packet's (a ray in each lane).
pub(super) struct EdgeFunctions<P> {
    /// `u`, `v`, `w`: the unnormalised edge functions.
    pub(super) uvw: [P; 3],
    /// Their sum.
    pub(super) det: P,
    /// The lanes where one of them is zero: the one-triangle test then computes all three
    /// again in double precision, which the lanes do not.
    pub(super) zero: u32,
    /// The lanes the ray passes outside the triangle (edge functions of both signs), or
    /// whose edge functions sum to zero.
    pub(super) missed: u32,
}

impl<P> EdgeFunctions<P> {
    /// The edge functions of `a`, `b`, `c` sheared by `sx`, `sy` (the ray's shear).
    #[inline(always)]
    pub(super) fn of<const N: usize>(a: &[P; 3], b: &[P; 3], c: &[P; 3], sx: P, sy: P) -> Self
    where
        P: Lanes<N>,
    {
        let (ax, ay) = (a[0].sub(sx.mul(a[2])), a[1].sub(sy.mul(a[2])));
        let (bx, by) = (b[0].sub(sx.mul(b[2])), b[1].sub(sy.mul(b[2])));
        let (cx, cy) = (c[0].sub(sx.mul(c[2])), c[1].sub(sy.mul(c[2])));
        let u = cx.mul(by).sub(cy.mul(bx));
        let v = ax.mul(cy).sub(ay.mul(cx));
        let w = bx.mul(ay).sub(by.mul(ax));
        let zero = P::splat(0.0);
        let outside = (u.lt_mask(zero) | v.lt_mask(zero) | w.lt_mask(zero))
            & (u.gt_mask(zero) | v.gt_mask(zero) | w.gt_mask(zero));
        let det = u.add(v).add(w);
        Self {
            uvw: [u, v, w],
            det,
            zero: u.eq_mask(zero) | v.eq_mask(zero) | w.eq_mask(zero),
            missed: outside | det.eq_mask(zero),
        }
    }

    /// The distance along the ray before the clamp to the triangle's padded box, with `sz`
    /// the ray's third shear component.
    #[inline(always)]
    pub(super) fn distance<const N: usize>(&self, a: &[P; 3], b: &[P; 3], c: &[P; 3], sz: P) -> P
    where
        P: Lanes<N>,
    {
        let [u, v, w] = self.uvw;
        u.mul(sz.mul(a[2]))
            .add(v.mul(sz.mul(b[2])))
            .add(w.mul(sz.mul(c[2])))
            .div(self.det)
    }
}

/// What a pack's test found: which lanes hit, and for each its distance, unnormalised edge
/// functions and their sum (the outputs of the one-triangle test).
pub(crate) struct PackHits {
    /// Bit `k` set: the triangle in lane `k` is hit.
    pub mask: u32,
    pub t: [f32; LANES],
    pub uvw: [[f32; LANES]; 3],
    pub det: [f32; LANES],
}

impl TrianglePack {
    /// The pack holding `triangles` (1 to 8 of them), whose first has leaf-order index `first`,
    /// in a hierarchy padded by `padding`.
    pub fn new(triangles: &[Triangle], first: u32, padding: f32) -> Self {
        assert!(
            (1..=LANES).contains(&triangles.len()),
            "a pack holds one to eight triangles"
        );
        // Unused lanes repeat the first triangle.
        let v = std::array::from_fn(|vertex| {
            std::array::from_fn(|axis| {
                std::array::from_fn(|lane| {
                    triangles.get(lane).unwrap_or(&triangles[0]).v[vertex][axis]
                })
            })
        });
        let bounds = std::array::from_fn(|plane| {
            let axis = plane / 2;
            std::array::from_fn(|lane| {
                let c = |vertex: usize| v[vertex][axis][lane];
                if plane % 2 == 0 {
                    c(0).min(c(1)).min(c(2)) - padding
                } else {
                    c(0).max(c(1)).max(c(2)) + padding
                }
            })
        });
        Self {
            v,
            bounds,
            first,
            lanes: triangles.len() as u32,
            _pad: [0; 6],
        }
    }

    /// The triangle in `lane`, as it was given.
    pub fn triangle(&self, lane: usize) -> Triangle {
        let vertex =
            |i: usize| Vec3::new(self.v[i][0][lane], self.v[i][1][lane], self.v[i][2][lane]);
        Triangle {
            v: [vertex(0), vertex(1), vertex(2)],
        }
    }

    /// The lanes in use, as a bit mask.
    #[inline(always)]
    pub(super) fn used(&self) -> u32 {
        ((1u64 << self.lanes) - 1) as u32
    }

    /// The watertight test of every used lane against `ray`, for a hierarchy padded by
    /// `padding`, in the lanes of `P`: AVX inside the traversals compiled for it, two SSE
    /// halves elsewhere. Written without closures, which would be compiled as functions of
    /// their own, without the traversal's target features, and leave each vector operation a
    /// call.
    #[inline(always)]
    pub(in crate::bvh) fn hits_with<P: Lanes<LANES>>(
        &self,
        ray: &PreparedRay,
        padding: f32,
    ) -> PackHits {
        let o = ray.origin;
        let (sx, sy, sz) = (
            P::splat(ray.shear[0]),
            P::splat(ray.shear[1]),
            P::splat(ray.shear[2]),
        );
        let [k0, k1, k2] = ray.axes;
        let (o0, o1, o2) = (P::splat(o[k0]), P::splat(o[k1]), P::splat(o[k2]));
        let a = [
            P::load(&self.v[0][k0]).sub(o0),
            P::load(&self.v[0][k1]).sub(o1),
            P::load(&self.v[0][k2]).sub(o2),
        ];
        let b = [
            P::load(&self.v[1][k0]).sub(o0),
            P::load(&self.v[1][k1]).sub(o1),
            P::load(&self.v[1][k2]).sub(o2),
        ];
        let c = [
            P::load(&self.v[2][k0]).sub(o0),
            P::load(&self.v[2][k1]).sub(o1),
            P::load(&self.v[2][k2]).sub(o2),
        ];
        let edges = EdgeFunctions::of(&a, &b, &c, sx, sy);
        let [u, v, w] = edges.uvw;
        let used = self.used();
        if edges.zero & used != 0 {
            return self.hits_one_by_one(ray, padding);
        }
        let det = edges.det;
        let mut missed = edges.missed;
        if (!missed & used) == 0 {
            return PackHits {
                mask: 0,
                t: [0.0; LANES],
                uvw: [[0.0; LANES]; 3],
                det: [0.0; LANES],
            };
        }
        let t_raw = edges.distance(&a, &b, &c, sz);
        let mut enter = P::splat(f32::NEG_INFINITY);
        let mut leave = P::splat(f32::INFINITY);
        for (axis, (&origin, &inv)) in o.iter().zip(&ray.inv).enumerate() {
            // The plane the ray enters by: the box's `max` where the direction is negative.
            let near = 2 * axis + (ray.octant >> axis & 1);
            let far = near ^ 1;
            let (origin, inv) = (P::splat(origin), P::splat(inv));
            enter = P::load(&self.bounds[near]).sub(origin).mul(inv).max(enter);
            leave = P::load(&self.bounds[far]).sub(origin).mul(inv).min(leave);
        }
        missed |= enter.gt_mask(leave);
        let t = t_raw.max(enter).min(leave);
        let within = t.gt_mask(P::splat(ray.t_min)) & t.lt_mask(P::splat(ray.t_max));
        let mask = within & !missed & used;
        PackHits {
            mask,
            t: t.to_array(),
            uvw: [u.to_array(), v.to_array(), w.to_array()],
            det: det.to_array(),
        }
    }

    /// Every used lane through the one-triangle test: for a pack where an edge function
    /// rounded to zero and needs the double-precision fallback.
    #[cold]
    #[inline(never)]
    fn hits_one_by_one(&self, ray: &PreparedRay, padding: f32) -> PackHits {
        let mut hits = PackHits {
            mask: 0,
            t: [0.0; LANES],
            uvw: [[0.0; LANES]; 3],
            det: [0.0; LANES],
        };
        for lane in 0..self.lanes as usize {
            if let Some((t, uvw, det)) = intersect_unnormalised(&self.triangle(lane), ray, padding)
            {
                hits.mask |= 1 << lane;
                hits.t[lane] = t;
                for (edge, value) in hits.uvw.iter_mut().zip(uvw) {
                    edge[lane] = value;
                }
                hits.det[lane] = det;
            }
        }
        hits
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::lanes::Halves;
    use super::super::tests::floats;
    use super::*;
    use crate::geometry::Ray;

    /// The padding the packs of [`cases`] are tested with.
    pub(in crate::bvh::wide) const PADDING: f32 = 1.0 / 65536.0;

    /// `rounds` random packs of one to eight triangles, each with a ray: rays aimed inside
    /// the first triangle, at its vertices and along its edges (the double-precision
    /// fallback), some parallel to an axis, some with a bounded or negative interval.
    pub(in crate::bvh::wide) fn cases(
        seed: u64,
        rounds: usize,
    ) -> Vec<(Vec<Triangle>, TrianglePack, PreparedRay)> {
        let mut next = floats(seed);
        (0..rounds)
            .map(|round| {
                let lanes = 1 + round % LANES;
                let triangles: Vec<Triangle> = (0..lanes)
                    .map(|_| {
                        let c = Vec3::new(next(), next(), next());
                        let s = if round % 7 == 0 { 1e-3 } else { 0.5 };
                        let mut d = || c + Vec3::new(next(), next(), next()) * s;
                        Triangle { v: [d(), d(), d()] }
                    })
                    .collect();
                let pack = TrianglePack::new(&triangles, 0, PADDING);
                let origin = Vec3::new(next(), next(), next()) * 3.0;
                let target = match round % 5 {
                    // A vertex, or a point on an edge: edge functions of exactly zero.
                    0 => triangles[0].v[round % 3],
                    1 => (triangles[0].v[0] + triangles[0].v[1]) * 0.5,
                    _ => {
                        triangles[0].v[0] * 0.4 + triangles[0].v[1] * 0.3 + triangles[0].v[2] * 0.3
                    }
                };
                let mut dir = target - origin;
                if round % 11 == 0 {
                    dir[round % 3] = 0.0;
                }
                let mut ray = Ray::new(origin, dir);
                if round % 13 == 0 {
                    ray.t_min = 0.5;
                    ray.t_max = 0.9;
                } else if round % 17 == 0 {
                    ray.t_min = -0.25;
                }
                (triangles, pack, PreparedRay::new(&ray))
            })
            .collect()
    }

    /// Each lane of the pack test gives the bits of the one-triangle test, partly filled
    /// packs included ([`cases`]).
    #[test]
    fn every_lane_matches_the_one_triangle_test() {
        let mut hits = 0;
        for (round, (triangles, pack, prepared)) in
            cases(0x9e37_79b9_7f4a_7c15, 20_000).iter().enumerate()
        {
            let found = pack.hits_with::<Halves>(prepared, PADDING);
            for (lane, triangle) in triangles.iter().enumerate() {
                let expected = intersect_unnormalised(triangle, prepared, PADDING);
                let got = (found.mask >> lane & 1 == 1).then(|| {
                    (
                        found.t[lane],
                        [found.uvw[0][lane], found.uvw[1][lane], found.uvw[2][lane]],
                        found.det[lane],
                    )
                });
                let bits = |h: Option<(f32, [f32; 3], f32)>| {
                    h.map(|(t, uvw, det)| (t.to_bits(), uvw.map(f32::to_bits), det.to_bits()))
                };
                assert_eq!(bits(got), bits(expected), "round {round} lane {lane}");
                hits += usize::from(expected.is_some());
            }
            assert_eq!(found.mask >> triangles.len(), 0, "unused lanes never hit");
        }
        assert!(hits > 5_000, "only {hits} hits");
    }

    #[test]
    fn a_pack_gives_back_its_triangles() {
        let mut next = floats(7);
        let triangles: Vec<Triangle> = (0..3)
            .map(|_| Triangle {
                v: [0, 1, 2].map(|_| Vec3::new(next(), next(), next())),
            })
            .collect();
        let pack = TrianglePack::new(&triangles, 12, 0.0);
        assert_eq!((pack.first, pack.lanes), (12, 3));
        for (lane, t) in triangles.iter().enumerate() {
            assert_eq!(pack.triangle(lane), *t);
        }
    }
}
