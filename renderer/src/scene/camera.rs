//! The pinhole camera and the camera ray of each pixel.

pub use layout::Camera;

use crate::geometry::Ray;
use crate::math::{Vec3, cross, dot, normalize, scale};

/// What the renderer makes of a [`Camera`] (a type of the shared layout, which the GPU reads
/// as it is): one from a scene's view, and the ray through a point of a pixel.
pub trait CameraExt: Sized {
    /// A camera at `origin` looking along `direction` with `up` roughly up and a vertical
    /// field of view of `fov_degrees`. `None` when `direction` is zero or parallel to `up`.
    ///
    /// Vectors too short to normalise in single precision count as zero.
    fn new(origin: Vec3, direction: Vec3, up: Vec3, fov_degrees: f32) -> Option<Self>;

    /// The ray through the centre of pixel `(x, y)` of a `width × height` image, `y = 0` at
    /// the top:
    ///
    /// ```text
    /// sx  = (2 (x + ½) / width − 1) · tan_half_fov · width / height
    /// sy  = (1 − 2 (y + ½) / height) · tan_half_fov
    /// dir = normalize(forward + sx · right + sy · up)
    /// ```
    fn primary_ray(&self, x: u32, y: u32, width: u32, height: u32) -> Ray;

    /// The camera ray through the point `offset` (each coordinate in `[0, 1)`, from the
    /// pixel's top left corner) of pixel `(x, y)`; `[0.5, 0.5]` is the pixel's centre.
    fn sample_ray(&self, x: u32, y: u32, offset: [f32; 2], width: u32, height: u32) -> Ray;
}

impl CameraExt for Camera {
    fn new(origin: Vec3, direction: Vec3, up: Vec3, fov_degrees: f32) -> Option<Self> {
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

    #[inline]
    fn primary_ray(&self, x: u32, y: u32, width: u32, height: u32) -> Ray {
        self.sample_ray(x, y, [0.5, 0.5], width, height)
    }

    #[inline]
    fn sample_ray(&self, x: u32, y: u32, offset: [f32; 2], width: u32, height: u32) -> Ray {
        let (w, h) = (width as f32, height as f32);
        let aspect = w / h;
        let sx = (2.0 * (x as f32 + offset[0]) / w - 1.0) * self.tan_half_fov * aspect;
        let sy = (1.0 - 2.0 * (y as f32 + offset[1]) / h) * self.tan_half_fov;
        let dir = normalize(self.forward + scale(self.right, sx) + scale(self.up, sy));
        Ray::new(self.origin, dir)
    }
}

/// The camera rays of a pixel: a fixed stratified pattern of `n` points, the same for every
/// pixel, each point's ray traced as its own camera ray and its contribution weighted by
/// `1 / n` in the film.
///
/// The pattern is Hammersley's: point `i` is at `((i + ½) / n, φ(i) + ½ / 2^k)`, where `φ` is
/// the base-2 radical inverse and `2^k` the smallest power of two of at least `n`. Every
/// column `1/n` wide holds one point, and for `n` a power of two every dyadic box of area
/// `1/n` does. One sample is the pixel's centre, so a frame of one sample per pixel is the
/// frame of a renderer without anti-aliasing, byte for byte. The offsets are computed once,
/// here, and handed to every device as values.
#[derive(Clone, Debug, PartialEq)]
pub struct PixelSamples {
    offsets: Vec<[f32; 2]>,
    weight: f32,
}

impl PixelSamples {
    /// `n` samples per pixel (at least 1).
    ///
    /// # Panics
    /// When `n` is 0.
    pub fn new(n: u32) -> Self {
        assert!(n > 0, "at least one sample per pixel");
        let k = n.next_power_of_two().trailing_zeros();
        let offsets = (0..n)
            .map(|i| {
                let x = (i as f32 + 0.5) / n as f32;
                // The radical inverse of i in k bits, and half a step: exact in f32.
                let reversed = if k == 0 {
                    0
                } else {
                    i.reverse_bits() >> (32 - k)
                };
                let y = (reversed as f32 + 0.5) / (1u64 << k) as f32;
                [x, y]
            })
            .collect();
        Self {
            offsets,
            weight: 1.0 / n as f32,
        }
    }

    /// Where in the pixel each sample's ray passes, from its top left corner.
    pub fn offsets(&self) -> &[[f32; 2]] {
        &self.offsets
    }

    /// What one sample's contribution counts for: `1 / n`.
    pub fn weight(&self) -> f32 {
        self.weight
    }

    /// Samples per pixel.
    pub fn count(&self) -> u32 {
        self.offsets.len() as u32
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

/// Why a [`Viewpoint`] gives no camera.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewError {
    /// A coordinate of the viewing direction is not finite: `look_at − position` overflowed
    /// single precision.
    DirectionOverflows,
    /// The viewing direction is finite but so long that its length overflows single
    /// precision, so it cannot be normalised.
    DirectionTooLong,
    /// `up` is so long that its length overflows single precision.
    UpTooLong,
    /// The viewing direction is zero (or too short to normalise) or parallel to `up`.
    Degenerate,
}

impl ViewError {
    /// The error for a scene file's `[camera]` table, naming its keys: `direction` names what
    /// the viewing direction was given as (`` `direction` `` or `` `look_at` − `position` ``).
    pub fn message(self, view: &Viewpoint, direction: &str) -> String {
        let subject = "the viewing direction";
        match self {
            ViewError::DirectionOverflows => {
                NotUnit::Overflows.message(subject, direction, view.direction, view.position)
            }
            ViewError::DirectionTooLong => {
                NotUnit::TooLong.message(subject, direction, view.direction, view.position)
            }
            ViewError::UpTooLong => format!(
                "`up` = {} is too long for single precision (its length overflows); a shorter vector gives the same direction",
                debug_form(view.up)
            ),
            ViewError::Degenerate => "the viewing direction is zero or parallel to `up`".into(),
        }
    }
}

/// Why a direction from a scene file has no unit vector in single precision; the camera's
/// view and a spot's aim share it, and so say it in the same words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotUnit {
    /// A coordinate is not finite: `look_at − position` overflowed.
    Overflows,
    /// Finite, but its length overflows.
    TooLong,
    /// Zero, or so short that its length underflows.
    TooShort,
}

impl NotUnit {
    /// `v` normalised, or why it cannot be.
    pub(crate) fn unit(v: Vec3) -> Result<Vec3, NotUnit> {
        if !v.is_finite() {
            return Err(NotUnit::Overflows);
        }
        if !dot(v, v).is_finite() {
            return Err(NotUnit::TooLong);
        }
        unit(v).ok_or(NotUnit::TooShort)
    }

    /// The reason in one line: `subject` is the direction's name in prose ("the viewing
    /// direction"), `given_as` the keys it came from (`` `direction` `` or
    /// `` `look_at` − `position` ``), `v` its value and `position` where it starts.
    pub(crate) fn message(self, subject: &str, given_as: &str, v: Vec3, position: Vec3) -> String {
        let v = debug_form(v);
        match self {
            NotUnit::Overflows => format!(
                "{subject}, {given_as} = {v}, overflows single precision: `position` {} is too far from what it looks at",
                debug_form(position)
            ),
            NotUnit::TooLong => format!(
                "{subject}, {given_as} = {v}, is too long for single precision (its length overflows); keep its coordinates below about 1e19"
            ),
            NotUnit::TooShort => {
                format!("{subject}, {given_as} = {v}, is zero or too short to normalise")
            }
        }
    }
}

/// A vector as an error shows it: the debug form, 3e38 rather than its 39 digits.
fn debug_form(v: Vec3) -> String {
    format!("{:?}", v.to_array())
}

impl Viewpoint {
    /// The camera seen from here; `None` when `direction` is zero or parallel to `up`, or a
    /// vector is too long to normalise ([`checked_camera`](Self::checked_camera) says which).
    pub fn camera(&self) -> Option<Camera> {
        self.checked_camera().ok()
    }

    /// The camera seen from here, or why there is none.
    pub fn checked_camera(&self) -> Result<Camera, ViewError> {
        match NotUnit::unit(self.direction) {
            Err(NotUnit::Overflows) => return Err(ViewError::DirectionOverflows),
            Err(NotUnit::TooLong) => return Err(ViewError::DirectionTooLong),
            // A zero direction is degenerate, as one parallel to `up` is.
            Err(NotUnit::TooShort) | Ok(_) => {}
        }
        if matches!(
            NotUnit::unit(self.up),
            Err(NotUnit::Overflows | NotUnit::TooLong)
        ) {
            return Err(ViewError::UpTooLong);
        }
        Camera::new(self.position, self.direction, self.up, self.fov).ok_or(ViewError::Degenerate)
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
    fn one_sample_is_the_pixel_centre_and_more_are_stratified() {
        let one = PixelSamples::new(1);
        assert_eq!(one.offsets(), &[[0.5, 0.5]]);
        assert_eq!(one.weight(), 1.0);
        let four = PixelSamples::new(4);
        assert_eq!(
            four.offsets(),
            &[
                [0.125, 0.125],
                [0.375, 0.625],
                [0.625, 0.375],
                [0.875, 0.875]
            ]
        );
        for n in [2, 3, 5, 16, 100, 1024] {
            let samples = PixelSamples::new(n);
            assert_eq!(samples.count(), n);
            let mut columns = vec![0; n as usize];
            let strata = n.next_power_of_two() as usize;
            let mut rows = vec![0; strata];
            for &[x, y] in samples.offsets() {
                assert!((0.0..1.0).contains(&x) && (0.0..1.0).contains(&y));
                columns[(x * n as f32) as usize] += 1;
                rows[(y * strata as f32) as usize] += 1;
            }
            assert!(columns.iter().all(|&c| c == 1), "n = {n}: one per column");
            assert!(rows.iter().all(|&r| r <= 1), "n = {n}: at most one per row");
        }
    }

    #[test]
    fn the_centre_sample_is_the_primary_ray() {
        let camera = Camera::new(Vec3::ZERO, -Vec3::Z, Vec3::Y, 50.0).unwrap();
        for (x, y) in [(0, 0), (7, 3), (99, 63)] {
            assert_eq!(
                camera.sample_ray(x, y, [0.5, 0.5], 100, 64),
                camera.primary_ray(x, y, 100, 64)
            );
        }
    }

    #[test]
    fn vectors_too_long_for_single_precision_are_named() {
        let view = |position: [f32; 3], direction: [f32; 3], up: [f32; 3]| Viewpoint {
            position: Vec3::from(position),
            direction: Vec3::from(direction),
            up: Vec3::from(up),
            fov: 45.0,
        };
        // A camera at z = 3e38 looking at the origin: finite, but its length overflows.
        let far = view([0.0, 0.0, 3e38], [0.0, 0.0, -3e38], [0.0, 1.0, 0.0]);
        assert_eq!(far.checked_camera(), Err(ViewError::DirectionTooLong));
        assert!(
            far.checked_camera()
                .unwrap_err()
                .message(&far, "`look_at` − `position`")
                .starts_with(
                    "the viewing direction, `look_at` − `position` = [0.0, 0.0, -3e38], is too long"
                )
        );
        let inf = view(
            [0.0, 0.0, 3e38],
            [0.0, 0.0, f32::NEG_INFINITY],
            [0.0, 1.0, 0.0],
        );
        assert_eq!(inf.checked_camera(), Err(ViewError::DirectionOverflows));
        let up = view([0.0; 3], [0.0, 0.0, -1.0], [0.0, 2e19, 0.0]);
        assert_eq!(up.checked_camera(), Err(ViewError::UpTooLong));
        // Long but within range: the same camera as a unit direction gives.
        let long = view([0.0; 3], [0.0, 0.0, -(2f32.powi(60))], [0.0, 1.0, 0.0]);
        assert_eq!(
            long.checked_camera(),
            Ok(Camera::new(Vec3::ZERO, -Vec3::Z, Vec3::Y, 45.0).unwrap())
        );
        let parallel = view([0.0; 3], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]);
        assert_eq!(parallel.checked_camera(), Err(ViewError::Degenerate));
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
