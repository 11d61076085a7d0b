//! The scene file format (TOML), as parsed. Every table rejects unknown keys.
//!
//! docs/scenes.md documents the format for users; the types here are its single definition.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::values::{
    Bounded, Exactly, FieldOfView, Finite, ImageSide, Ior, MaxDepth, NonNegative, Positive, Rgb,
    Scale, Shininess, Vector, WeightCutoff,
};

/// A whole scene file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SceneConfig {
    pub(crate) image: ImageConfig,
    pub(crate) camera: Spanned<CameraConfig>,
    #[serde(default)]
    pub(crate) render: RenderConfig,
    #[serde(default)]
    pub(crate) bvh: BvhConfig,
    #[serde(default)]
    pub(crate) lights: Vec<Spanned<LightConfig>>,
    #[serde(default)]
    pub(crate) materials: BTreeMap<String, Spanned<MaterialConfig>>,
    #[serde(default)]
    pub(crate) objects: Vec<Spanned<ObjectConfig>>,
}

/// `[image]`: the size of the rendered image.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImageConfig {
    pub(crate) width: ImageSide,
    pub(crate) height: ImageSide,
    /// Camera rays per pixel, 1 to 1024 ([`super::MAX_SAMPLES`]); default 1.
    pub(crate) samples: Option<Bounded<1, { super::MAX_SAMPLES }>>,
}

/// `[camera]`: a pinhole camera.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CameraConfig {
    pub(crate) position: Vector,
    /// The point looked at; give this or `direction`.
    pub(crate) look_at: Option<Vector>,
    /// The viewing direction; give this or `look_at`.
    pub(crate) direction: Option<Vector>,
    /// Default `[0, 1, 0]`.
    pub(crate) up: Option<Vector>,
    /// Vertical field of view in degrees; default 45.
    pub(crate) fov: Option<FieldOfView>,
}

/// `[render]`: what the integrator does.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RenderConfig {
    /// Deepest generation of reflection and refraction rays (camera rays are generation 0).
    #[serde(default = "default_max_depth")]
    pub(crate) max_depth: MaxDepth,
    /// A secondary ray is spawned only if its largest weight component reaches this.
    #[serde(default = "default_weight_cutoff")]
    pub(crate) weight_cutoff: WeightCutoff,
    /// Ambient light, multiplied by each material's ambient coefficient.
    #[serde(default = "default_ambient")]
    pub(crate) ambient: Rgb,
    /// What rays that hit nothing see.
    #[serde(default = "default_background")]
    pub(crate) background: Rgb,
}

fn default_max_depth() -> MaxDepth {
    MaxDepth(8)
}
fn default_weight_cutoff() -> WeightCutoff {
    WeightCutoff(0.01)
}
fn default_ambient() -> Rgb {
    Rgb([0.1; 3])
}
fn default_background() -> Rgb {
    Rgb([0.0; 3])
}

impl Default for RenderConfig {
    fn default() -> Self {
        Self {
            max_depth: default_max_depth(),
            weight_cutoff: default_weight_cutoff(),
            ambient: default_ambient(),
            background: default_background(),
        }
    }
}

/// `[bvh]`: settings of the octree build.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BvhConfig {
    /// 1 to 31 triangles per leaf; default 4.
    pub(crate) leaf_size: Option<Bounded<1, 31>>,
    /// 1 to 64 levels; default 24. Spanned, for the warning where it shapes nothing.
    pub(crate) max_depth: Option<Spanned<Bounded<1, 64>>>,
}

/// `[[lights]]`: a point light, or a spot light when `spot` is given.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LightConfig {
    pub(crate) position: Vector,
    /// Default white.
    pub(crate) color: Option<Rgb>,
    /// Multiplies `color`; default 1.
    pub(crate) intensity: Option<NonNegative>,
    pub(crate) spot: Option<SpotConfig>,
}

/// `spot = { ... }` of a light: the cone it lights.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpotConfig {
    /// The point the spot aims at; give this or `direction`.
    pub(crate) look_at: Option<Vector>,
    /// The direction the spot aims in; give this or `look_at`.
    pub(crate) direction: Option<Vector>,
    /// Half-angle of the cone in degrees, beyond which the spot gives no light.
    pub(crate) angle: Spanned<FieldOfView>,
    /// Half-angle in degrees inside which the spot is at full strength (default: `angle`,
    /// a hard edge); between the two the light falls off linearly in the cosine.
    pub(crate) inner_angle: Option<Spanned<FieldOfView>>,
}

/// `[materials.NAME]`: a Phong material with mirror and glass terms. The largest channel of
/// `reflectivity` plus that of `refractivity` may not exceed 1: a surface returns at most the
/// light it receives (which also bounds the rays a pixel can spawn).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MaterialConfig {
    /// Default `diffuse`.
    pub(crate) ambient: Option<Rgb>,
    /// Default 0.8 grey.
    pub(crate) diffuse: Option<Rgb>,
    /// Default black.
    pub(crate) specular: Option<Rgb>,
    /// Default 0 (no highlight when `specular` is black anyway).
    pub(crate) shininess: Option<Shininess>,
    /// Weight of the mirror reflection ray; default black.
    pub(crate) reflectivity: Option<Rgb>,
    /// Weight of the refraction ray; default black.
    pub(crate) refractivity: Option<Rgb>,
    /// Index of refraction of the inside; default 1.5.
    pub(crate) ior: Option<Ior>,
}

/// `[[objects]]`: one shape (exactly one of the shape keys), its material and transform.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObjectConfig {
    /// An OBJ file, relative to the scene file; its MTL materials apply unless `material`
    /// is given.
    pub(crate) mesh: Option<Spanned<String>>,
    pub(crate) quad: Option<QuadConfig>,
    #[serde(rename = "box")]
    pub(crate) cuboid: Option<BoxConfig>,
    pub(crate) sphere: Option<SphereConfig>,
    pub(crate) lathe: Option<Spanned<LatheConfig>>,
    pub(crate) heightfield: Option<HeightfieldConfig>,
    pub(crate) scatter: Option<ScatterConfig>,
    /// The name of a material of `[materials]`; overrides an OBJ's own materials.
    pub(crate) material: Option<Spanned<String>>,
    /// Scale first, then rotate (degrees about x, then y, then z), then translate.
    pub(crate) scale: Option<Scale>,
    pub(crate) rotate: Option<Vector>,
    pub(crate) translate: Option<Vector>,
    /// Interpolate vertex normals where the shape has them (default true).
    pub(crate) smooth: Option<bool>,
}

/// `quad = { corners = [a, b, c, d] }`: two triangles `a b c` and `a c d`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QuadConfig {
    pub(crate) corners: Exactly<Vector, 4>,
}

/// `box = { min = [...], max = [...] }`: an axis-aligned box (before the transform).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BoxConfig {
    pub(crate) min: Vector,
    pub(crate) max: Vector,
}

/// `sphere = { center, radius, subdivisions }`: an icosphere of `20 · 4^subdivisions`
/// triangles with smooth normals.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SphereConfig {
    pub(crate) center: Vector,
    pub(crate) radius: Positive,
    /// 0 to 8; default 3.
    pub(crate) subdivisions: Option<Bounded<0, 8>>,
}

/// `lathe = { profile = [[r, y], ...], segments }`: the surface swept by turning a profile
/// of `(radius, height)` points about the y axis (goblets, vases, columns).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LatheConfig {
    pub(crate) profile: Vec<Exactly<Finite, 2>>,
    /// Steps around the axis: 3 to 4096.
    pub(crate) segments: Bounded<3, 4096>,
}

/// `heightfield = { size, resolution, height, seed }`: rolling ground over
/// `[-size/2, size/2]` in x and z, from a hashed value noise (no two seeds alike).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HeightfieldConfig {
    /// Extent in x and in z.
    pub(crate) size: Exactly<Positive, 2>,
    /// Cells in x and in z: 1 to 4096 each.
    pub(crate) resolution: Exactly<Bounded<1, 4096>, 2>,
    /// Peak-to-peak height of the bumps.
    pub(crate) height: NonNegative,
    /// Width of a bump in units of the scene; default a tenth of the smaller extent.
    pub(crate) feature_size: Option<Positive>,
    #[serde(default)]
    pub(crate) seed: u32,
}

/// `scatter = { shape, count, center, radius, height, size, seed }`: a heap of small shapes
/// piled in a cone around `center` — a treasure hoard.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScatterConfig {
    pub(crate) shape: ScatterShape,
    /// 1 to 100000 pieces.
    pub(crate) count: Bounded<1, 100_000>,
    /// The centre of the heap's base.
    pub(crate) center: Vector,
    /// Radius of the heap's base.
    pub(crate) radius: Positive,
    /// Height of the heap's peak.
    pub(crate) height: NonNegative,
    /// Size of one piece (a coin's diameter, a gem's width).
    pub(crate) size: Positive,
    /// Segments around a coin or a gem: 3 to 256; default 16.
    pub(crate) segments: Option<Bounded<3, 256>>,
    #[serde(default)]
    pub(crate) seed: u32,
}

/// The pieces of a [`ScatterConfig`].
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ScatterShape {
    /// A flat disc with a rim.
    Coin,
    /// A cut gem: a flat table, a crown and a pointed pavilion.
    Gem,
}
