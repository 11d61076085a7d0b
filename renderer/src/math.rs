//! The arithmetic of the traced result, with its operation order fixed.
//!
//! Every function here is written so that each floating-point operation is spelled out: no
//! fused multiply-add (Rust never contracts `a * b + c`), no approximate reciprocal or square
//! root, no transcendental function. The same sequence of IEEE operations on another device
//! gives the same bits, which is what lets every balancer on every device write the same image
//! (the determinism contract). Vectors are `glam::Vec3`, used only as plain `x, y, z` storage
//! with component-wise `+ - *`; products that combine components are written out here rather
//! than taken from glam, so their order is ours to keep.

pub use glam::Vec3;

/// `a · b`, summed left to right.
///
/// ```
/// use renderer::math::{Vec3, dot};
///
/// assert_eq!(dot(Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)), 32.0);
/// ```
#[inline(always)]
pub fn dot(a: Vec3, b: Vec3) -> f32 {
    a.x * b.x + a.y * b.y + a.z * b.z
}

/// `a × b`.
///
/// ```
/// use renderer::math::{Vec3, cross};
///
/// assert_eq!(cross(Vec3::X, Vec3::Y), Vec3::Z);
/// ```
#[inline(always)]
pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    Vec3::new(
        a.y * b.z - a.z * b.y,
        a.z * b.x - a.x * b.z,
        a.x * b.y - a.y * b.x,
    )
}

/// `v / |v|`, as one correctly rounded square root and three divisions.
///
/// Dividing each component (rather than multiplying by `1 / |v|`) keeps one rounding per
/// component. The zero vector gives NaNs; callers never pass one.
///
/// ```
/// use renderer::math::{Vec3, normalize};
///
/// assert_eq!(normalize(Vec3::new(3.0, 0.0, 4.0)), Vec3::new(0.6, 0.0, 0.8));
/// ```
#[inline(always)]
pub fn normalize(v: Vec3) -> Vec3 {
    let length = dot(v, v).sqrt();
    Vec3::new(v.x / length, v.y / length, v.z / length)
}

/// `v · s` for a scalar `s`.
///
/// ```
/// use renderer::math::{Vec3, scale};
///
/// assert_eq!(scale(Vec3::new(1.0, -2.0, 0.5), 2.0), Vec3::new(2.0, -4.0, 1.0));
/// ```
#[inline(always)]
pub fn scale(v: Vec3, s: f32) -> Vec3 {
    Vec3::new(v.x * s, v.y * s, v.z * s)
}

/// The mirror direction of `d` about the unit normal `n`: `d − 2 (d · n) n`.
///
/// ```
/// use renderer::math::{Vec3, reflect};
///
/// // A ray going down and right bounces off the floor going up and right.
/// let r = reflect(Vec3::new(1.0, -1.0, 0.0), Vec3::Y);
/// assert_eq!(r, Vec3::new(1.0, 1.0, 0.0));
/// ```
#[inline(always)]
pub fn reflect(d: Vec3, n: Vec3) -> Vec3 {
    let twice = 2.0 * dot(d, n);
    d - scale(n, twice)
}

/// The direction of `d` (unit) refracted through a surface with unit normal `n` facing
/// against `d`, where `eta` is the ratio of refractive indices (incident over transmitted).
/// `None` on total internal reflection.
///
/// ```
/// use renderer::math::{Vec3, normalize, refract};
///
/// // Straight down into glass: the direction is kept.
/// let down = Vec3::new(0.0, -1.0, 0.0);
/// assert_eq!(refract(down, Vec3::Y, 1.0 / 1.5), Some(down));
/// // Leaving glass at a grazing angle: total internal reflection.
/// let grazing = normalize(Vec3::new(1.0, -0.2, 0.0));
/// assert_eq!(refract(grazing, Vec3::Y, 1.5), None);
/// ```
#[inline(always)]
pub fn refract(d: Vec3, n: Vec3, eta: f32) -> Option<Vec3> {
    let cos_i = -dot(d, n);
    let k = 1.0 - eta * eta * (1.0 - cos_i * cos_i);
    if k < 0.0 {
        return None;
    }
    let along_normal = eta * cos_i - k.sqrt();
    Some(normalize(scale(d, eta) + scale(n, along_normal)))
}

/// `x^n` for a whole exponent, by repeated squaring from the low bit up. Exact same sequence
/// of multiplications for the same `n` on every device.
///
/// ```
/// use renderer::math::powi;
///
/// assert_eq!(powi(2.0, 10), 1024.0);
/// assert_eq!(powi(0.5, 3), 0.125);
/// assert_eq!(powi(7.0, 0), 1.0);
/// ```
#[inline(always)]
pub fn powi(mut x: f32, mut n: u32) -> f32 {
    let mut result = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            result *= x;
        }
        x *= x;
        n >>= 1;
    }
    result
}

/// The largest component.
///
/// ```
/// use renderer::math::{Vec3, max_component};
///
/// assert_eq!(max_component(Vec3::new(-5.0, 2.0, 1.5)), 2.0);
/// ```
#[inline(always)]
pub fn max_component(v: Vec3) -> f32 {
    v.x.max(v.y).max(v.z)
}

/// The relative scale of [`surface_offset`]: 2^-16, about 128 units in the last place.
pub const SURFACE_OFFSET_SCALE: f32 = 1.0 / 65536.0;

/// The hit point on triangle `v` with barycentric weights `bary`: `v0·b0 + v1·b1 + v2·b2`,
/// summed in that order. Off the triangle's plane by a few units in the last place of the
/// vertices' coordinates, axis by axis: exactly on a plane that is perpendicular to an axis.
///
/// ```
/// use renderer::math::{Vec3, interpolate};
///
/// let v = [Vec3::ZERO, Vec3::X, Vec3::Y];
/// assert_eq!(interpolate(&v, [1.0, 0.0, 0.0]), Vec3::ZERO);
/// assert_eq!(interpolate(&v, [0.0, 0.5, 0.5]), Vec3::new(0.5, 0.5, 0.0));
/// ```
#[inline(always)]
pub fn interpolate(v: &[Vec3; 3], bary: [f32; 3]) -> Vec3 {
    scale(v[0], bary[0]) + scale(v[1], bary[1]) + scale(v[2], bary[2])
}

/// How far a ray leaving `point` (from [`interpolate`]) on triangle `v` starts off the
/// surface, along its normal: `(m + s) · s`, where `m` is the largest magnitude of any
/// coordinate of the vertices and the point, and `s` the scene's `offset_scale`
/// ([`SURFACE_OFFSET_SCALE`], about 128 units in the last place of `m`). Two roundings must be
/// cleared: the point's own (a few units in the last place of the vertices' coordinates), and
/// the triangle test of the new ray, whose shear mixes the axes, so that its error near the
/// origin scales with every coordinate of the triangles there, not with the normal's axis
/// alone. The offset depends on the hit triangle alone: geometry elsewhere in the scene,
/// however far, moves no ray, and a scene scaled about its camera scales its offsets with it.
/// This is Wächter and Binder's self-intersection avoidance ("A Fast and Robust Method for
/// Avoiding Self-Intersection") with its scale taken from the triangle rather than the point.
/// A triangle much larger than the detail beside it (a floor of ±50,000 under objects of unit
/// size) has a large offset: its shadow rays start above small objects standing on it; split
/// such a triangle. The `s²` term lets a ray leave a triangle at the origin.
///
/// ```
/// use renderer::math::{SURFACE_OFFSET_SCALE, Vec3, interpolate, surface_offset};
///
/// let s = SURFACE_OFFSET_SCALE;
/// let v = [Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0), Vec3::new(0.0, 4.0, 0.0)];
/// let point = interpolate(&v, [0.5, 0.25, 0.25]);
/// // The largest coordinate of the vertices is 4.
/// assert_eq!(surface_offset(&v, point, s), (4.0 + s) * s);
/// // Scaling the triangle scales its offset.
/// let far = v.map(|p| p * 1024.0);
/// assert!(surface_offset(&far, point, s) > 1000.0 * surface_offset(&v, point, s));
/// ```
#[inline(always)]
pub fn surface_offset(v: &[Vec3; 3], point: Vec3, s: f32) -> f32 {
    let m = v[0].abs().max(v[1].abs()).max(v[2].abs()).max(point.abs());
    (m.x.max(m.y).max(m.z) + s) * s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powi_matches_multiplication() {
        assert_eq!(powi(1.5, 0), 1.0);
        assert_eq!(powi(1.5, 1), 1.5);
        assert_eq!(powi(2.0, 10), 1024.0);
        assert_eq!(powi(0.5, 3), 0.125);
    }

    #[test]
    fn reflect_flips_the_normal_component() {
        let r = reflect(Vec3::new(1.0, -1.0, 0.0), Vec3::Y);
        assert_eq!(r, Vec3::new(1.0, 1.0, 0.0));
    }

    #[test]
    fn refract_straight_through_and_total_internal_reflection() {
        let d = Vec3::new(0.0, -1.0, 0.0);
        assert_eq!(refract(d, Vec3::Y, 1.0 / 1.5), Some(d));
        // Grazing exit from glass (eta = 1.5) is beyond the critical angle.
        let grazing = normalize(Vec3::new(1.0, -0.2, 0.0));
        assert_eq!(refract(grazing, Vec3::Y, 1.5), None);
    }
}
