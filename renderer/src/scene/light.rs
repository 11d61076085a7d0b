//! Point and spot lights.

pub use layout::Light;

use crate::math::{Vec3, dot};

/// What shading asks of a [`Light`] (a type of the shared layout, which the GPU reads as it
/// is).
pub trait LightExt {
    /// The fraction of the light's strength sent along `to_point` (unit, from the light).
    fn cone_factor(&self, to_point: Vec3) -> f32;
}

impl LightExt for Light {
    #[inline]
    fn cone_factor(&self, to_point: Vec3) -> f32 {
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
