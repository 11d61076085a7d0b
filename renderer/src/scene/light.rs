//! Point and spot lights.

use crate::math::{Vec3, dot};

/// A light in the layout every device reads. A point light has `cos_outer = −2`, so every
/// direction is inside its "cone".
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Light {
    /// Where the light is.
    pub position: Vec3,
    /// Colour times intensity.
    pub color: Vec3,
    /// Unit direction the spot points in (unused by point lights).
    pub direction: Vec3,
    /// Cosine of the cone's half-angle: no light beyond it. Computed on the host.
    pub cos_outer: f32,
    /// Cosine of the full-strength half-angle; between the two the strength is linear in the
    /// cosine. Computed on the host.
    pub cos_inner: f32,
}

impl Light {
    /// A light that shines equally in all directions.
    pub fn point(position: Vec3, color: Vec3) -> Self {
        Self {
            position,
            color,
            direction: Vec3::Y,
            cos_outer: -2.0,
            cos_inner: -2.0,
        }
    }

    /// The fraction of the light's strength sent along `to_point` (unit, from the light).
    #[inline]
    pub fn cone_factor(&self, to_point: Vec3) -> f32 {
        let c = dot(to_point, self.direction);
        if c >= self.cos_inner {
            1.0
        } else if c <= self.cos_outer {
            0.0
        } else {
            (c - self.cos_outer) / (self.cos_inner - self.cos_outer)
        }
    }
}
