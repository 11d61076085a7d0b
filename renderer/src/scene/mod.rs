//! Scenes: the TOML format, built-in, OBJ and PLY geometry, materials, lights and the camera,
//! assembled into the flat layout that rendering (on any device) reads.

mod camera;
mod config;
mod error;
mod light;
mod material;
mod mesh;
mod mesh_file;
mod obj;
mod ply;
mod shapes;
mod values;

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use glam::{EulerRot, Mat4, Quat};

use crate::accel::{Accel, AccelKind};
use crate::bvh::{BuildThreadError, BvhSettings, BvhSplit, BvhStats, Width};
use crate::geometry::{Aabb, Triangle, TriangleExt};
use crate::input::MAX_SCENE_BYTES;
use crate::math::{Vec3, dot, normalize};
use crate::memory::{AllocError, try_reserve, try_with_capacity};
use crate::stats::{BvhReport, SceneReport};

pub use camera::{Camera, CameraExt, PixelSamples, ViewError, Viewpoint};
pub use error::{Position, SceneError};
/// Settings of the integrator, from the scene's `[render]` table: a type of the shared layout,
/// which the GPU reads as it is.
pub use layout::RenderSettings;
/// What shading needs of one triangle beyond its vertices, in leaf order (indexed like
/// [`Accel::triangles`]): a type of the shared layout, which the GPU reads as it is.
pub use layout::TriangleShading;
pub use light::{Light, LightExt};
pub use material::Material;
pub use mesh_file::{MeshSummary, parse_obj, parse_ply};

use config::{ObjectConfig, ScatterShape, SceneConfig};
use mesh::Mesh;
use obj::MtlFiles;
use toml::Spanned;

/// Figures about a loaded scene.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneStats {
    /// Triangles in the scene.
    pub triangles: usize,
    /// Zero-area triangles found in the input and dropped.
    pub dropped_triangles: usize,
    /// Objects (entries of `[[objects]]`, or 1 for a bare mesh).
    pub objects: usize,
    /// Time to read and generate the geometry, excluding the BVH build.
    pub load_time: Duration,
    /// The BVH's own figures.
    pub bvh: BvhStats,
}

/// Values the command line may impose on a scene file's own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SceneOverrides {
    /// Image width in pixels (1 to 16384).
    pub width: Option<u32>,
    /// Image height in pixels (1 to 16384).
    pub height: Option<u32>,
    /// BVH leaf size (1 to 31).
    pub leaf_size: Option<u32>,
    /// BVH maximum depth (1 to 64).
    pub bvh_max_depth: Option<u32>,
    /// Children per node of the wide BVH.
    pub bvh_width: Option<Width>,
    /// How the wide BVH splits a node.
    pub bvh_split: Option<BvhSplit>,
    /// Camera rays per pixel (1 to [`MAX_SAMPLES`]).
    pub samples: Option<u32>,
    /// The acceleration structure (default [`AccelKind::Wide`]).
    pub accel: Option<AccelKind>,
    /// Bytes the scene may take once built: its triangles are bounded by it, at
    /// [`AccelKind::bytes_per_triangle`] each, as well as by [`MAX_SCENE_TRIANGLES`].
    pub memory: Option<u64>,
    /// Whether `memory` is the address space left under `ulimit -v`, where the build's
    /// threads take their stacks and malloc arenas out of it too
    /// ([`thread_address_space`](crate::memory::thread_address_space)).
    pub memory_is_address_space: bool,
}

impl SceneOverrides {
    /// The structure the scene will be built in.
    pub fn accel_kind(&self) -> AccelKind {
        self.accel.unwrap_or_default()
    }

    /// The most triangles the scene may have.
    pub fn triangle_budget(&self) -> usize {
        let by_memory = self.memory.map_or(usize::MAX, |m| {
            usize::try_from(m / self.accel_kind().bytes_per_triangle()).unwrap_or(usize::MAX)
        });
        by_memory.min(MAX_SCENE_TRIANGLES)
    }

    /// Why a scene may not have more than [`triangle_budget`](Self::triangle_budget)
    /// triangles, for messages.
    fn budget_reason(&self) -> String {
        let budget = self.triangle_budget();
        match self.memory {
            Some(m) if budget < MAX_SCENE_TRIANGLES => format!(
                "{budget} triangles fit in the {} of memory at hand (about {} bytes each in the {} structure)",
                crate::memory::format_bytes(m),
                self.accel_kind().bytes_per_triangle(),
                self.accel_kind().name()
            ),
            _ => format!("a scene may have at most {MAX_SCENE_TRIANGLES} triangles"),
        }
    }
}

/// The most camera rays a pixel may have. With the weight cutoff's bound of 10,000 rays per
/// camera ray, a pixel then takes at most about 2^23.3 contributions, within the 2^24 its
/// fixed-point sums have room for (see [`crate::film::MAX_CONTRIBUTION`]).
pub const MAX_SAMPLES: u32 = 1024;

/// A scene ready to render: camera, image size, settings, lights, materials, and the
/// triangles in a BVH with their shading data in the same (leaf) order.
#[derive(Debug)]
pub struct Scene {
    /// The scene file's stem (or the mesh's), for reports.
    pub name: String,
    /// The camera.
    pub camera: Camera,
    /// What `camera` was built from.
    pub viewpoint: Viewpoint,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// The camera rays of each pixel.
    pub samples: PixelSamples,
    /// Integrator settings.
    pub settings: RenderSettings,
    /// Lights.
    pub lights: Vec<Light>,
    /// Materials; [`TriangleShading::material`] indexes this.
    pub materials: Vec<Material>,
    /// The triangles, in an acceleration structure.
    pub accel: Accel,
    /// What the acceleration structure was built with.
    pub bvh_settings: BvhSettings,
    /// Shading data per triangle, in leaf order.
    pub shading: Vec<TriangleShading>,
    /// Load figures.
    pub stats: SceneStats,
    /// Every file read to make the scene: the scene file, meshes, material libraries. No
    /// output may replace one of them.
    pub inputs: Vec<PathBuf>,
    /// What was wrong but did not stop the scene from loading, one line each, for the user.
    pub warnings: Vec<String>,
}

/// Hears how the loading of a scene goes, stage by stage: what a display of its progress
/// needs. Loading takes long only for large scenes (reading and generating the geometry,
/// then building the BVH), and each stage can be reported as it ends.
pub trait LoadObserver {
    /// The geometry has been read and generated: the scene's figures but the BVH's.
    fn geometry_read(&mut self, _scene: &SceneReport) {}
    /// The BVH is built.
    fn bvh_built(&mut self, _bvh: &BvhReport) {}
}

/// Nobody listens.
impl LoadObserver for () {}

/// What loading a scene read besides its geometry: the files, and the warnings.
#[derive(Debug, Default)]
pub(crate) struct Reads {
    files: Vec<PathBuf>,
    warnings: Vec<String>,
    /// Files already warned about.
    warned: Vec<PathBuf>,
}

impl Reads {
    /// `path` was read.
    pub(crate) fn file(&mut self, path: &Path) {
        if !self.files.iter().any(|f| f == path) {
            self.files.push(path.to_path_buf());
        }
    }

    /// Warns about `path`, unless it was warned about before: a material library missing
    /// for ten objects is one warning.
    pub(crate) fn warn_once(&mut self, path: &Path, message: String) {
        if !self.warned.iter().any(|f| f == path) {
            self.warned.push(path.to_path_buf());
            self.warnings.push(message);
        }
    }

    /// Warns, unless the same warning was given before: a mesh file that two objects use is
    /// read twice, and says the same twice.
    pub(crate) fn warn(&mut self, message: String) {
        if !self.warnings.contains(&message) {
            self.warnings.push(message);
        }
    }
}

impl Scene {
    /// The memory the built scene holds: the BVH's arrays (triangles included) and the
    /// shading data.
    pub fn resident_bytes(&self) -> u64 {
        (self.stats.bvh.bytes + self.shading.len() * std::mem::size_of::<TriangleShading>()) as u64
    }

    /// The same scene with its triangles in another acceleration structure (built with the
    /// same settings), or `None` if it is in that structure already. The image does not
    /// change: the closest hit is the same in every structure.
    ///
    /// # Errors
    /// When the operating system refuses to start one of the build's threads.
    pub fn with_accel(&self, kind: AccelKind) -> Result<Option<Self>, BuildThreadError> {
        if self.accel.kind() == kind {
            return Ok(None);
        }
        // Back to the input's order, the order of the closest-hit rule's ties.
        let ids = self.accel.original_indices();
        let triangles = self.accel.input_triangles();
        let mut shading = vec![bytemuck::Zeroable::zeroed(); ids.len()];
        for (k, &i) in ids.iter().enumerate() {
            shading[i as usize] = self.shading[k];
        }
        let accel = Accel::build(kind, &triangles, self.bvh_settings)?;
        let shading = accel
            .original_indices()
            .iter()
            .map(|&i| shading[i as usize])
            .collect();
        Ok(Some(Self {
            name: self.name.clone(),
            camera: self.camera,
            viewpoint: self.viewpoint,
            width: self.width,
            height: self.height,
            samples: self.samples.clone(),
            settings: self.settings,
            lights: self.lights.clone(),
            materials: self.materials.clone(),
            bvh_settings: self.bvh_settings,
            stats: SceneStats {
                bvh: accel.stats().clone(),
                ..self.stats.clone()
            },
            accel,
            shading,
            inputs: self.inputs.clone(),
            warnings: Vec::new(),
        }))
    }

    /// Loads a scene file.
    pub fn load(path: &Path, overrides: SceneOverrides) -> Result<Self, SceneError> {
        Self::load_observed(path, overrides, &mut ())
    }

    /// Loads a scene file, telling `observer` as each stage ends.
    pub fn load_observed(
        path: &Path,
        overrides: SceneOverrides,
        observer: &mut dyn LoadObserver,
    ) -> Result<Self, SceneError> {
        let start = Instant::now();
        let source = obj::read_text(path, MAX_SCENE_BYTES)?;
        Self::from_source(path, &source, overrides, observer, MeshFiles::Read, start)
    }

    /// Builds the scene a scene file's text describes, as [`load`](Self::load) does but with
    /// no file read: an object that names a mesh file is an error. `path` is what errors call
    /// the text. For fuzzers and tests; `overrides.memory` bounds what the scene may build.
    pub fn from_toml(
        path: &Path,
        source: &str,
        overrides: SceneOverrides,
    ) -> Result<Self, SceneError> {
        Self::from_source(
            path,
            source,
            overrides,
            &mut (),
            MeshFiles::Refuse,
            Instant::now(),
        )
    }

    fn from_source(
        path: &Path,
        source: &str,
        overrides: SceneOverrides,
        observer: &mut dyn LoadObserver,
        mesh_files: MeshFiles,
        start: Instant,
    ) -> Result<Self, SceneError> {
        let mut reads = Reads::default();
        if mesh_files == MeshFiles::Read {
            reads.file(path);
        }
        check_parse_room(path, source.len(), &overrides)?;
        let config: SceneConfig = toml::from_str(source).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            SceneError::at_span(path, source, span, e.message())
        })?;
        let at =
            |span: Range<usize>, message: &str| SceneError::at_span(path, source, span, message);
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();

        // Materials: index 0 is the default, then the named ones in name order.
        let mut materials = vec![Material::default()];
        let mut by_name = HashMap::new();
        for (name, m) in &config.materials {
            let material = material::from_config(m.get_ref());
            let returned = material::returned(&material);
            if returned > 1.0 {
                return Err(at(
                    m.span(),
                    &format!(
                        "[materials.{name}]: the largest channels of `reflectivity` and `refractivity` add up to {returned}; a surface returns at most the light it receives (at most 1)"
                    ),
                ));
            }
            by_name.insert(name.as_str(), materials.len() as u32);
            materials.push(material);
        }

        check_generated_triangles(&config.objects, &overrides, &at)?;
        let mut geometry = GeometryBuilder::default();
        for object in &config.objects {
            let span = object.span();
            let o = object.get_ref();
            let mtl = if o.material.is_some() {
                MtlFiles::Overridden
            } else {
                MtlFiles::Needed
            };
            let material = match &o.material {
                Some(name) => Some(*by_name.get(name.get_ref().as_str()).ok_or_else(|| {
                    at(
                        name.span(),
                        &format!("no material named `{}` in [materials]", name.get_ref()),
                    )
                })?),
                None => None,
            };
            let transform = transform(o);
            let smooth = o.smooth.unwrap_or(true);
            let budget = overrides.triangle_budget() - geometry.triangles.len();
            if let Some(n) = generated_triangles(o).filter(|&n| n > budget as u64) {
                return Err(at(
                    span.clone(),
                    &format!(
                        "this object would add {n} triangles to the {} already in the scene; {}",
                        geometry.triangles.len(),
                        overrides.budget_reason()
                    ),
                ));
            }
            if let (Some(mesh), MeshFiles::Refuse) = (&o.mesh, mesh_files) {
                return Err(at(
                    mesh.span(),
                    "mesh files are not read when a scene is built from text alone",
                ));
            }
            let meshes = object_meshes(o, &dir, budget, mtl, &mut reads).map_err(|e| match e {
                ShapeError::Config(message) => at(span.clone(), &message),
                // A fault of the mesh file as a whole (missing, not a regular file, no
                // faces) is also placed at the scene's line that names the file; a fault at
                // a line of the mesh keeps that line.
                ShapeError::File(e) if e.position.is_none() => {
                    let key = o.mesh.as_ref().map_or(span.clone(), Spanned::span);
                    at(key, &e.to_string())
                }
                ShapeError::File(e) => e,
            })?;
            for (mesh, own_material) in meshes {
                let material = material.unwrap_or_else(|| match own_material {
                    Some(m) => {
                        materials.push(m);
                        materials.len() as u32 - 1
                    }
                    None => 0,
                });
                let mesh = mesh.transformed(&transform).ok_or_else(|| {
                    at(
                        span.clone(),
                        "coordinates leave the finite numbers after the transform",
                    )
                })?;
                geometry
                    .add(&mesh, material, smooth)
                    .map_err(|e| at(span.clone(), &e))?;
            }
        }

        let c = config.camera.get_ref();
        let position = Vec3::from(c.position.0);
        let direction = match (c.look_at, c.direction) {
            (Some(target), None) => Vec3::from(target.0) - position,
            (None, Some(d)) => Vec3::from(d.0),
            _ => {
                return Err(at(
                    config.camera.span(),
                    "give exactly one of `look_at` and `direction`",
                ));
            }
        };
        let up = c.up.map_or(Vec3::Y, |u| Vec3::from(u.0));
        let fov = c.fov.map_or(45.0, |f| f.0);
        let viewpoint = Viewpoint {
            position,
            direction,
            up,
            fov,
        };
        let camera = viewpoint.checked_camera().map_err(|e| {
            let direction = if c.look_at.is_some() {
                "`look_at` − `position`"
            } else {
                "`direction`"
            };
            at(config.camera.span(), &e.message(&viewpoint, direction))
        })?;

        let mut lights = Vec::with_capacity(config.lights.len());
        for light in &config.lights {
            let l = light.get_ref();
            let position = Vec3::from(l.position.0);
            let color =
                Vec3::from(l.color.map_or([1.0; 3], |c| c.0)) * l.intensity.map_or(1.0, |i| i.0);
            let Some(spot) = &l.spot else {
                lights.push(Light::point(position, color));
                continue;
            };
            let aim = match (spot.look_at, spot.direction) {
                (Some(target), None) => Vec3::from(target.0) - position,
                (None, Some(d)) => Vec3::from(d.0),
                _ => {
                    return Err(at(
                        light.span(),
                        "a spot needs exactly one of `look_at` and `direction`",
                    ));
                }
            };
            let Some(aim) = camera::unit(aim) else {
                return Err(at(
                    light.span(),
                    "the spot points nowhere: its direction is zero or too short to normalise",
                ));
            };
            let outer = spot.angle.get_ref().0;
            let inner = spot.inner_angle.as_ref().map_or(outer, |a| a.get_ref().0);
            if inner > outer {
                let span = spot.inner_angle.as_ref().map_or(light.span(), |a| a.span());
                return Err(at(span, "must not exceed the spot's `angle`"));
            }
            lights.push(Light {
                position,
                color,
                direction: aim,
                cos_outer: libm::cosf(outer.to_radians()),
                cos_inner: libm::cosf(inner.to_radians()),
            });
        }

        let settings = RenderSettings {
            max_depth: config.render.max_depth.0,
            weight_cutoff: config.render.weight_cutoff.0,
            ambient: Vec3::from(config.render.ambient.0),
            background: Vec3::from(config.render.background.0),
            offset_scale: crate::math::SURFACE_OFFSET_SCALE,
        };
        if config.bvh.max_depth.is_some()
            && overrides.bvh_max_depth.is_none()
            && overrides.accel_kind() != AccelKind::Octree
        {
            reads.warn_once(
                path,
                format!(
                    "{}: [bvh] max_depth shapes the octree alone (--accel octree); the wide BVH splits by the surface area heuristic",
                    path.display()
                ),
            );
        }
        let bvh = BvhSettings {
            leaf_size: overrides
                .leaf_size
                .or(config.bvh.leaf_size.map(|v| v.0))
                .unwrap_or(4),
            max_depth: overrides
                .bvh_max_depth
                .or(config.bvh.max_depth.map(|v| v.0))
                .unwrap_or(24),
            width: overrides.bvh_width,
            split: overrides.bvh_split.unwrap_or_default(),
        };
        let name = path
            .file_stem()
            .map_or("scene".into(), |s| s.to_string_lossy().into_owned());
        geometry.finish(ScenePieces {
            path,
            observer,
            name,
            reads,
            camera,
            viewpoint,
            width: overrides.width.unwrap_or(config.image.width.0),
            samples: overrides
                .samples
                .or(config.image.samples.map(|s| s.0))
                .unwrap_or(1),
            height: overrides.height.unwrap_or(config.image.height.0),
            settings,
            lights,
            materials,
            bvh,
            accel: overrides.accel.unwrap_or_default(),
            address_space: overrides.memory_is_address_space,
            objects: config.objects.len(),
            start,
        })
    }

    /// A bare mesh (OBJ or PLY) with an automatic camera, framed as `framing` says (by
    /// default looking along −z with +y up): the camera looks along `view` at the centre of
    /// the mesh's bounding box with a 45° vertical field of view, from
    /// `d = 1.1 · max(extent across, extent up) / (2 · tan(22.5°)) + extent along / 2` in
    /// front of the centre; one white point light above and to the left of the camera, half
    /// of `d` off the line of sight, so that silhouettes are shaded; no reflection or
    /// refraction.
    pub fn from_mesh(
        path: &Path,
        overrides: SceneOverrides,
        framing: MeshFraming,
    ) -> Result<Self, SceneError> {
        Self::from_mesh_observed(path, overrides, framing, &mut ())
    }

    /// [`from_mesh`](Self::from_mesh), telling `observer` as each stage ends.
    pub fn from_mesh_observed(
        path: &Path,
        overrides: SceneOverrides,
        framing: MeshFraming,
        observer: &mut dyn LoadObserver,
    ) -> Result<Self, SceneError> {
        let start = Instant::now();
        if framing.view.same_axis(framing.up) {
            return Err(SceneError::file(
                path,
                format!(
                    "the view ({}) and up ({}) directions lie on one axis; choose two different axes",
                    framing.view, framing.up
                ),
            ));
        }
        let mut materials = vec![Material::default()];
        let mut geometry = GeometryBuilder::default();
        let mut reads = Reads::default();
        let budget = overrides.triangle_budget();
        for part in mesh_file::load(path, budget, MtlFiles::Needed, &mut reads)? {
            let material = match part.material {
                Some(m) => {
                    materials.push(m);
                    materials.len() as u32 - 1
                }
                None => 0,
            };
            geometry
                .add(&part.mesh, material, true)
                .map_err(|e| SceneError::file(path, e))?;
        }
        let bounds = geometry.bounds();
        let (center, extent) = (bounds.center(), bounds.extent());
        let (view, up) = (framing.view.unit(), framing.up.unit());
        let right = view.cross(up);
        let across = |axis: Vec3| dot(extent, axis.abs());
        let tan = libm::tanf(22.5f32.to_radians());
        let distance = 1.1 * across(right).max(across(up)) / (2.0 * tan) + across(view) / 2.0;
        let eye = center - view * distance;
        let light = eye + (up - right) * (distance / 2.0);
        let viewpoint = Viewpoint {
            position: eye,
            direction: view,
            up,
            fov: 45.0,
        };
        let camera = viewpoint
            .camera()
            .ok_or_else(|| SceneError::file(path, "cannot place a camera for this mesh"))?;
        let settings = RenderSettings {
            max_depth: 0,
            weight_cutoff: 0.01,
            ambient: Vec3::splat(0.1),
            background: Vec3::ZERO,
            offset_scale: crate::math::SURFACE_OFFSET_SCALE,
        };
        let name = path
            .file_stem()
            .map_or("mesh".into(), |s| s.to_string_lossy().into_owned());
        geometry.finish(ScenePieces {
            path,
            observer,
            name,
            reads,
            camera,
            viewpoint,
            width: overrides.width.unwrap_or(1024),
            samples: overrides.samples.unwrap_or(1),
            height: overrides.height.unwrap_or(1024),
            settings,
            lights: vec![Light::point(light, Vec3::ONE)],
            materials,
            bvh: BvhSettings {
                leaf_size: overrides.leaf_size.unwrap_or(4),
                max_depth: overrides.bvh_max_depth.unwrap_or(24),
                width: overrides.bvh_width,
                split: overrides.bvh_split.unwrap_or_default(),
            },
            accel: overrides.accel.unwrap_or_default(),
            address_space: overrides.memory_is_address_space,
            objects: 1,
            start,
        })
    }
}

/// One of the six directions along a coordinate axis: `+x`, `-y`, …
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisDirection {
    /// 0, 1 or 2 for x, y or z.
    axis: usize,
    negative: bool,
}

impl AxisDirection {
    /// +x.
    pub const PLUS_X: Self = Self::new(0, false);
    /// +y.
    pub const PLUS_Y: Self = Self::new(1, false);
    /// +z.
    pub const PLUS_Z: Self = Self::new(2, false);
    /// −z.
    pub const MINUS_Z: Self = Self::new(2, true);

    const fn new(axis: usize, negative: bool) -> Self {
        Self { axis, negative }
    }

    /// Whether `self` and `other` lie on one axis (`+z` and `-z` do).
    pub fn same_axis(self, other: Self) -> bool {
        self.axis == other.axis
    }

    /// The unit vector.
    pub fn unit(self) -> Vec3 {
        let mut v = Vec3::ZERO;
        v[self.axis] = if self.negative { -1.0 } else { 1.0 };
        v
    }

    /// Reads `x`, `+x`, `-x` (and the same for y and z, in either case).
    pub fn parse(text: &str) -> Result<Self, String> {
        let lower = text.to_ascii_lowercase();
        let (negative, name) = match lower.as_bytes() {
            [b'-', _] => (true, &lower[1..]),
            [b'+', _] => (false, &lower[1..]),
            _ => (false, lower.as_str()),
        };
        let axis = match name {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            _ => {
                return Err(format!(
                    "`{text}` is not an axis: give x, y or z, signed + or -"
                ));
            }
        };
        Ok(Self::new(axis, negative))
    }
}

impl std::fmt::Display for AxisDirection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.negative { '-' } else { '+' };
        write!(f, "{sign}{}", ["x", "y", "z"][self.axis])
    }
}

/// How [`Scene::from_mesh`] frames a bare mesh made by a tool of other conventions: which of
/// its directions is up, and along which the camera looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshFraming {
    /// The mesh's up direction.
    pub up: AxisDirection,
    /// The direction the camera looks in.
    pub view: AxisDirection,
}

impl Default for MeshFraming {
    /// +y up, looking along −z (the OBJ convention of most tools).
    fn default() -> Self {
        Self {
            up: AxisDirection::PLUS_Y,
            view: AxisDirection::MINUS_Z,
        }
    }
}

/// The most triangles a scene may have: about 4.3 GiB in the wide BVH and 7.3 GiB in the
/// octree (see [`AccelKind::bytes_per_triangle`]), a bound that turns an absurd config into an
/// error instead of exhausting memory.
pub const MAX_SCENE_TRIANGLES: usize = 20_000_000;

/// Whether building a scene may read the mesh files it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MeshFiles {
    Read,
    Refuse,
}

/// How many triangles a generated shape will have, before generating it (`None` for meshes
/// read from files, which are counted as they are checked).
fn generated_triangles(o: &ObjectConfig) -> Option<u64> {
    let segments_around = |s: u32| 4 * u64::from(s);
    if o.quad.is_some() {
        Some(2)
    } else if o.cuboid.is_some() {
        Some(12)
    } else if let Some(s) = &o.sphere {
        Some(20 * 4u64.pow(s.subdivisions.map_or(3, |d| d.0)))
    } else if let Some(l) = &o.lathe {
        let l = l.get_ref();
        Some(2 * (l.profile.len().saturating_sub(1) as u64) * u64::from(l.segments.0))
    } else if let Some(h) = &o.heightfield {
        Some(2 * u64::from(h.resolution.0[0].0) * u64::from(h.resolution.0[1].0))
    } else {
        o.scatter
            .as_ref()
            .map(|s| u64::from(s.count.0) * segments_around(s.segments.map_or(16, |n| n.0)))
    }
}

/// Scale, then rotate (degrees about x, then y, then z), then translate.
fn transform(o: &ObjectConfig) -> Mat4 {
    let scale = Vec3::from(o.scale.map_or([1.0; 3], |s| s.0));
    let [rx, ry, rz] = o.rotate.map_or([0.0; 3], |r| r.0).map(f32::to_radians);
    let rotation = Quat::from_euler(EulerRot::ZYX, rz, ry, rx);
    let translation = Vec3::from(o.translate.map_or([0.0; 3], |t| t.0));
    Mat4::from_scale_rotation_translation(scale, rotation, translation)
}

enum ShapeError {
    /// Wrong in the object's own table.
    Config(String),
    /// Wrong in a file the object names.
    File(SceneError),
}

/// The meshes of one object, each with the material its file gives it (OBJ parts only).
fn object_meshes(
    o: &ObjectConfig,
    dir: &Path,
    budget: usize,
    mtl: MtlFiles,
    reads: &mut Reads,
) -> Result<Vec<(Mesh, Option<Material>)>, ShapeError> {
    let given = [
        o.mesh.is_some(),
        o.quad.is_some(),
        o.cuboid.is_some(),
        o.sphere.is_some(),
        o.lathe.is_some(),
        o.heightfield.is_some(),
        o.scatter.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        return Err(ShapeError::Config(
            "an object needs exactly one of `mesh`, `quad`, `box`, `sphere`, `lathe`, `heightfield`, `scatter`".into(),
        ));
    }
    let v = |v: values::Vector| Vec3::from(v.0);
    let mesh = if let Some(path) = &o.mesh {
        let file: PathBuf = dir.join(path.get_ref());
        return Ok(mesh_file::load(&file, budget, mtl, reads)
            .map_err(ShapeError::File)?
            .into_iter()
            .map(|part| (part.mesh, part.material))
            .collect());
    } else if let Some(q) = &o.quad {
        shapes::quad(q.corners.0.map(v))
    } else if let Some(b) = &o.cuboid {
        let (min, max) = (v(b.min), v(b.max));
        if min.cmpgt(max).any() {
            return Err(ShapeError::Config(
                "`box`: `min` must not exceed `max` on any axis".into(),
            ));
        }
        shapes::cuboid(min, max)
    } else if let Some(s) = &o.sphere {
        shapes::icosphere(v(s.center), s.radius.0, s.subdivisions.map_or(3, |d| d.0))
    } else if let Some(l) = &o.lathe {
        let l = l.get_ref();
        if l.profile.len() < 2 {
            return Err(ShapeError::Config(
                "`lathe`: the profile needs at least 2 points".into(),
            ));
        }
        let profile: Vec<[f32; 2]> = l.profile.iter().map(|p| p.0.map(|c| c.0)).collect();
        shapes::lathe(&profile, l.segments.0)
    } else if let Some(h) = &o.heightfield {
        let size = h.size.0.map(|s| s.0);
        let feature = h.feature_size.map_or(size[0].min(size[1]) / 10.0, |f| f.0);
        shapes::heightfield(
            size,
            [h.resolution.0[0].0, h.resolution.0[1].0],
            h.height.0,
            feature,
            h.seed,
        )
    } else if let Some(s) = &o.scatter {
        let piece = match s.shape {
            ScatterShape::Coin => shapes::Piece::Coin,
            ScatterShape::Gem => shapes::Piece::Gem,
        };
        shapes::scatter(&shapes::Heap {
            piece,
            count: s.count.0,
            center: v(s.center),
            radius: s.radius.0,
            height: s.height.0,
            size: s.size.0,
            segments: s.segments.map_or(16, |n| n.0),
            seed: s.seed,
        })
    } else {
        unreachable!("exactly one shape was checked above")
    };
    Ok(vec![(mesh, None)])
}

/// Everything of a scene but its geometry, handed to [`GeometryBuilder::finish`].
struct ScenePieces<'a> {
    path: &'a Path,
    observer: &'a mut dyn LoadObserver,
    name: String,
    reads: Reads,
    camera: Camera,
    viewpoint: Viewpoint,
    width: u32,
    height: u32,
    samples: u32,
    settings: RenderSettings,
    lights: Vec<Light>,
    materials: Vec<Material>,
    bvh: BvhSettings,
    accel: AccelKind,
    /// [`SceneOverrides::memory_is_address_space`].
    address_space: bool,
    objects: usize,
    start: Instant,
}

/// Refuses, in one line, a build of `kind` over `triangles` whose memory cannot be had: the
/// builds allocate as they go and cannot report running out (an allocation that fails there
/// aborts the process), so the room they peak at beside the scene's own arrays is reserved
/// first, fallibly, and given back. This finds what the address space (`ulimit -v`) or the
/// allocator has at this moment; memory a cgroup limits is only found when it is touched, and
/// is what [`SceneOverrides::memory`] bounds beforehand.
fn check_build_room(
    kind: AccelKind,
    triangles: usize,
    address_space: bool,
) -> Result<(), AllocError> {
    let held = (size_of::<Triangle>() + size_of::<TriangleShading>()) as u64;
    let per_triangle = kind.bytes_per_triangle().saturating_sub(held);
    let bytes =
        usize::try_from(per_triangle.saturating_mul(triangles as u64)).unwrap_or(usize::MAX);
    let what = match kind {
        AccelKind::Wide => "building the wide BVH",
        AccelKind::Octree => "building the octree",
    };
    // Under `ulimit -v` the build's threads reserve their stacks and malloc arenas first.
    let threads = crate::memory::thread_address_space(crate::bvh::build_thread_count());
    if address_space
        && let Some(left) = crate::memory::address_space_left()
        && left < threads.saturating_add(bytes as u64)
    {
        return Err(AllocError {
            bytes: Some(threads.saturating_add(bytes as u64)),
            what: "the build's threads (their stacks and malloc arenas) and its arrays",
        });
    }
    try_with_capacity::<u8>(bytes, what).map(drop)
}

/// Collects triangles in input order, dropping zero-area ones.
#[derive(Default)]
struct GeometryBuilder {
    triangles: Vec<Triangle>,
    shading: Vec<TriangleShading>,
    dropped: usize,
}

impl GeometryBuilder {
    /// Adds the mesh's triangles; zero-area ones (including those too small for their area
    /// to be represented) are dropped and counted. Fails when a triangle is so large that its
    /// normal overflows, or when the memory for the triangles cannot be had.
    fn add(&mut self, mesh: &Mesh, material: u32, smooth: bool) -> Result<(), String> {
        let faces = mesh.faces.len();
        try_reserve(&mut self.triangles, faces, "the scene's triangles")
            .and_then(|()| try_reserve(&mut self.shading, faces, "the triangles' normals"))
            .map_err(|e| e.to_string())?;
        let smooth = smooth && mesh.normals.len() == mesh.positions.len();
        for face in &mesh.faces {
            let tri = Triangle {
                v: face.map(|i| mesh.positions[i as usize]),
            };
            let n = tri.normal();
            let length_squared = dot(n, n);
            if !length_squared.is_finite() {
                return Err(format!(
                    "a triangle is too large for single precision (corners {:?}): its normal overflows",
                    tri.v.map(|v| v.to_array())
                ));
            }
            if length_squared == 0.0 {
                self.dropped += 1;
                continue;
            }
            let flat = normalize(n);
            let normals = if smooth {
                face.map(|i| {
                    let s = mesh.normals[i as usize];
                    if s == Vec3::ZERO { flat } else { s }
                })
            } else {
                [flat; 3]
            };
            self.triangles.push(tri);
            self.shading.push(TriangleShading { normals, material });
        }
        Ok(())
    }

    fn bounds(&self) -> Aabb {
        self.triangles
            .iter()
            .fold(Aabb::EMPTY, |b, t| b.union(t.bounds()))
    }

    fn finish(self, p: ScenePieces<'_>) -> Result<Scene, SceneError> {
        if self.triangles.is_empty() {
            let dropped = if self.dropped > 0 {
                format!(" ({} zero-area triangles were dropped)", self.dropped)
            } else {
                String::new()
            };
            return Err(SceneError::file(
                p.path,
                format!("the scene has no triangles{dropped}"),
            ));
        }
        if self.triangles.len() > crate::bvh::MAX_TRIANGLES {
            return Err(SceneError::file(
                p.path,
                format!(
                    "{} triangles exceed the limit of {}",
                    self.triangles.len(),
                    crate::bvh::MAX_TRIANGLES
                ),
            ));
        }
        let load_time = p.start.elapsed();
        p.observer.geometry_read(&SceneReport {
            name: p.name.clone(),
            width: p.width,
            height: p.height,
            samples: p.samples,
            triangles: self.triangles.len(),
            dropped_triangles: self.dropped,
            objects: p.objects,
            lights: p.lights.len(),
            materials: p.materials.len(),
            max_depth: p.settings.max_depth,
            load_seconds: load_time.as_secs_f64(),
        });
        check_build_room(p.accel, self.triangles.len(), p.address_space)
            .map_err(|e| SceneError::file(p.path, e.to_string()))?;
        // A refused thread is no fault of the file, but the error names the file whose loading
        // it stopped, as a memory budget's does.
        let bvh = Accel::build(p.accel, &self.triangles, p.bvh)
            .map_err(|e| SceneError::file(p.path, e.to_string()))?;
        p.observer.bvh_built(&bvh.stats().into());
        let mut shading =
            try_with_capacity(self.shading.len(), "the triangles' normals in leaf order")
                .map_err(|e| SceneError::file(p.path, e.to_string()))?;
        shading.extend(
            bvh.original_indices()
                .iter()
                .map(|&i| self.shading[i as usize]),
        );
        let settings = p.settings;
        Ok(Scene {
            name: p.name,
            inputs: p.reads.files,
            warnings: p.reads.warnings,
            camera: p.camera,
            viewpoint: p.viewpoint,
            width: p.width,
            height: p.height,
            samples: PixelSamples::new(p.samples),
            settings,
            lights: p.lights,
            materials: p.materials,
            stats: SceneStats {
                triangles: self.triangles.len(),
                dropped_triangles: self.dropped,
                objects: p.objects,
                load_time,
                bvh: bvh.stats().clone(),
            },
            accel: bvh,
            bvh_settings: p.bvh,
            shading,
        })
    }
}

/// Memory that parsing a scene's TOML peaks at, per byte of its text: `toml` keeps every table
/// and value with its span, and the configuration is built beside them. Measured with
/// `/usr/bin/time -v` (peak resident size over the file's size) on scenes of many small objects,
/// the worst case for it: 210,000 boxes (8.8 MB) peaked at 836 MiB and 370,000 (15.5 MB) at
/// 1.43 GiB, 99 bytes a byte; rounded up.
const TOML_PEAK_PER_BYTE: u64 = 100;

/// Refuses a scene text of `len` bytes whose parse would take more than the memory at hand
/// (`overrides.memory`), before it is parsed.
fn check_parse_room(path: &Path, len: usize, overrides: &SceneOverrides) -> Result<(), SceneError> {
    let Some(memory) = overrides.memory else {
        return Ok(());
    };
    let needed = (len as u64).saturating_mul(TOML_PEAK_PER_BYTE);
    if needed <= memory {
        return Ok(());
    }
    let size = crate::memory::format_bytes;
    Err(SceneError::file(
        path,
        format!(
            "{} of scene text takes about {} to parse ({TOML_PEAK_PER_BYTE} bytes a byte), more than the {} of memory at hand",
            size(len as u64),
            size(needed),
            size(memory)
        ),
    ))
}

/// Refuses, at the object that passes the budget, a scene whose built-in shapes together make
/// more triangles than `overrides` allow: counted for the whole scene before any object is
/// generated. Mesh files' triangles are counted as each file is read.
fn check_generated_triangles(
    objects: &[Spanned<ObjectConfig>],
    overrides: &SceneOverrides,
    at: &dyn Fn(Range<usize>, &str) -> SceneError,
) -> Result<(), SceneError> {
    let budget = overrides.triangle_budget() as u64;
    let mut before = 0u64;
    for object in objects {
        let Some(n) = generated_triangles(object.get_ref()) else {
            continue;
        };
        if before.saturating_add(n) > budget {
            return Err(at(
                object.span(),
                &format!(
                    "this object would add {n} triangles to the {before} the shapes before it make; {}",
                    overrides.budget_reason()
                ),
            ));
        }
        before += n;
    }
    Ok(())
}
