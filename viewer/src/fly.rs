//! Moving the viewer's camera: steps along the view, turns about the scene's up, zoom.
//!
//! This is viewer arithmetic, outside the determinism contract: it only decides where the
//! next frame's camera stands, and the frame is then built from that viewpoint as any scene
//! file's camera is.

use glam::{Quat, Vec3};
use renderer::scene::Viewpoint;

/// The narrowest and widest field of view the viewer allows, in degrees.
const FOV_RANGE: (f32, f32) = (5.0, 150.0);
/// How close to straight up or down the view may turn, in degrees.
const PITCH_MARGIN: f32 = 1.0;

/// A camera the user moves around a scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Fly {
    /// Where the camera is now.
    pub(crate) viewpoint: Viewpoint,
    /// Distance of one step: a fiftieth of the scene's size.
    step: f32,
}

impl Fly {
    /// A camera at `viewpoint` in a scene whose bounding box has diagonal `scene_size`.
    pub(crate) fn new(viewpoint: Viewpoint, scene_size: f32) -> Self {
        Self {
            viewpoint,
            step: (scene_size / 50.0).max(f32::MIN_POSITIVE),
        }
    }

    fn up(&self) -> Vec3 {
        self.viewpoint.up.normalize()
    }

    fn forward(&self) -> Vec3 {
        self.viewpoint.direction.normalize()
    }

    fn right(&self) -> Vec3 {
        self.forward().cross(self.up()).normalize()
    }

    /// Moves `forward` steps along the view, `right` steps sideways and `up` steps along the
    /// scene's up (negative: the other way).
    pub(crate) fn walk(&mut self, forward: f32, right: f32, up: f32) {
        let delta = self.forward() * forward + self.right() * right + self.up() * up;
        self.viewpoint.position += delta * self.step;
    }

    /// Turns the view `yaw` degrees to the right about the scene's up and `pitch` degrees
    /// upwards, never past straight up or down.
    pub(crate) fn turn(&mut self, yaw: f32, pitch: f32) {
        let up = self.up();
        let mut dir = Quat::from_axis_angle(up, -yaw.to_radians()) * self.forward();
        let elevation = dir.dot(up).clamp(-1.0, 1.0).asin().to_degrees();
        let limit = 90.0 - PITCH_MARGIN;
        let pitch = (elevation + pitch).clamp(-limit, limit) - elevation;
        let right = dir.cross(up).normalize();
        dir = Quat::from_axis_angle(right, pitch.to_radians()) * dir;
        self.viewpoint.direction = dir.normalize();
    }

    /// Multiplies the field of view by `factor`, within 5° to 150°.
    pub(crate) fn zoom(&mut self, factor: f32) {
        self.viewpoint.fov = (self.viewpoint.fov * factor).clamp(FOV_RANGE.0, FOV_RANGE.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> Fly {
        Fly::new(
            Viewpoint {
                position: Vec3::ZERO,
                direction: Vec3::new(0.0, 0.0, -2.0),
                up: Vec3::Y,
                fov: 60.0,
            },
            50.0,
        )
    }

    #[test]
    fn walking_follows_the_view() {
        let mut fly = start();
        fly.walk(1.0, 0.0, 0.0);
        assert!((fly.viewpoint.position - Vec3::new(0.0, 0.0, -1.0)).length() < 1e-6);
        fly.walk(0.0, 2.0, -1.0);
        assert!((fly.viewpoint.position - Vec3::new(2.0, -1.0, -1.0)).length() < 1e-6);
    }

    #[test]
    fn turning_keeps_the_horizon_and_stops_short_of_the_pole() {
        let mut fly = start();
        fly.turn(90.0, 0.0);
        assert!(
            (fly.viewpoint.direction - Vec3::X).length() < 1e-6,
            "yaw right"
        );
        fly.turn(0.0, 200.0);
        let elevation = fly.viewpoint.direction.y.asin().to_degrees();
        assert!(
            (elevation - 89.0).abs() < 1e-3,
            "pitch stops at 89°: {elevation}"
        );
        assert!(fly.viewpoint.camera().is_some(), "still a valid camera");
        fly.turn(0.0, -89.0);
        assert!(fly.viewpoint.direction.y.abs() < 1e-5, "back level");
    }

    #[test]
    fn zoom_stays_in_range() {
        let mut fly = start();
        fly.zoom(10.0);
        assert_eq!(fly.viewpoint.fov, 150.0);
        fly.zoom(0.001);
        assert_eq!(fly.viewpoint.fov, 5.0);
    }
}
