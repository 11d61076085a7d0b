//! The pinhole camera and the camera ray of each pixel.

use crate::geometry::Ray;
use crate::math::{Vec3, cross, normalize, scale};

/// A pinhole camera: an orthonormal frame at `origin` and the half-extent of the image plane
/// at distance 1. The tangent of the half field of view is computed once on the host and
/// handed to every device as a value.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Camera {
    /// The eye.
    pub origin: Vec3,
    /// Unit viewing direction.
    pub forward: Vec3,
    /// Unit vector to the right of the image.
    pub right: Vec3,
    /// Unit vector to the top of the image.
    pub up: Vec3,
    /// `tan(fov / 2)`: half the height of the image plane at distance 1.
    pub tan_half_fov: f32,
}

impl Camera {
    /// A camera at `origin` looking along `direction` with `up` roughly up and a vertical
    /// field of view of `fov_degrees`. `None` when `direction` is zero or parallel to `up`.
    ///
    /// Vectors too short to normalise in single precision count as zero.
    pub fn new(origin: Vec3, direction: Vec3, up: Vec3, fov_degrees: f32) -> Option<Self> {
        let forward = unit(direction)?;
        let right = unit(cross(forward, up))?;
        let up = cross(right, forward);
        let tan_half_fov = libm::tanf(fov_degrees.to_radians() * 0.5);
        Some(Self {
            origin,
            forward,
            right,
            up,
            tan_half_fov,
        })
    }

    /// The ray through the centre of pixel `(x, y)` of a `width × height` image, `y = 0` at
    /// the top:
    ///
    /// ```text
    /// sx  = (2 (x + ½) / width − 1) · tan_half_fov · width / height
    /// sy  = (1 − 2 (y + ½) / height) · tan_half_fov
    /// dir = normalize(forward + sx · right + sy · up)
    /// ```
    #[inline]
    pub fn primary_ray(&self, x: u32, y: u32, width: u32, height: u32) -> Ray {
        let (w, h) = (width as f32, height as f32);
        let aspect = w / h;
        let sx = (2.0 * (x as f32 + 0.5) / w - 1.0) * self.tan_half_fov * aspect;
        let sy = (1.0 - 2.0 * (y as f32 + 0.5) / h) * self.tan_half_fov;
        let dir = normalize(self.forward + scale(self.right, sx) + scale(self.up, sy));
        Ray::new(self.origin, dir)
    }
}

/// Where a camera stands and looks, as a scene file's `[camera]` table gives it: the values a
/// [`Camera`] is built from, kept so that a viewer can move the camera and print where it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewpoint {
    /// The eye.
    pub position: Vec3,
    /// The viewing direction (any length but zero).
    pub direction: Vec3,
    /// Which way is up; the camera turns about it and never rolls.
    pub up: Vec3,
    /// Vertical field of view in degrees, in `(0, 180)`.
    pub fov: f32,
}

impl Viewpoint {
    /// The camera seen from here; `None` when `direction` is zero or parallel to `up`.
    pub fn camera(&self) -> Option<Camera> {
        Camera::new(self.position, self.direction, self.up, self.fov)
    }

    /// The `[camera]` table of a scene file that puts the camera here, to paste into one.
    pub fn to_toml(&self) -> String {
        let v = |v: Vec3| format!("[{}, {}, {}]", v.x, v.y, v.z);
        format!(
            "[camera]\nposition = {}\ndirection = {}\nup = {}\nfov = {}\n",
            v(self.position),
            v(self.direction),
            v(self.up),
            self.fov
        )
    }
}

/// `v` normalised, or `None` when it is zero or so short (or long) that its normalisation
/// is not finite.
pub(crate) fn unit(v: Vec3) -> Option<Vec3> {
    let n = normalize(v);
    (n.is_finite() && n != Vec3::ZERO).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_pixel_looks_forward_and_corners_spread() {
        let cam = Camera::new(Vec3::ZERO, -Vec3::Z, Vec3::Y, 90.0).unwrap();
        let centre = cam.primary_ray(1, 1, 3, 3);
        assert_eq!(centre.dir, -Vec3::Z);
        let top_left = cam.primary_ray(0, 0, 3, 3).dir;
        assert!(top_left.x < 0.0 && top_left.y > 0.0);
    }

    #[test]
    fn a_viewpoint_prints_as_a_camera_table() {
        let v = Viewpoint {
            position: Vec3::new(2.0, 6.0, 16.5),
            direction: Vec3::new(-1.0, -0.5, -2.0),
            up: Vec3::Y,
            fov: 60.0,
        };
        assert_eq!(
            v.to_toml(),
            "[camera]\nposition = [2, 6, 16.5]\ndirection = [-1, -0.5, -2]\nup = [0, 1, 0]\nfov = 60\n"
        );
        assert_eq!(
            v.camera(),
            Camera::new(v.position, v.direction, v.up, v.fov)
        );
    }

    #[test]
    fn degenerate_frames_are_rejected() {
        assert!(Camera::new(Vec3::ZERO, Vec3::ZERO, Vec3::Y, 45.0).is_none());
        assert!(Camera::new(Vec3::ZERO, Vec3::Y, Vec3::Y, 45.0).is_none());
        // Underflows when normalised: as good as zero.
        assert!(Camera::new(Vec3::ZERO, Vec3::new(1e-25, -1e-25, 0.0), Vec3::Y, 45.0).is_none());
        assert!(Camera::new(Vec3::ZERO, Vec3::new(1e-25, -1.0, 0.0), Vec3::Y, 45.0).is_none());
    }
}
