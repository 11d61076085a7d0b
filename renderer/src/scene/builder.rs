//! A scene file turned into a scene one section at a time, as pbrt-v4's `BasicSceneBuilder`
//! does: the materials, the objects (whose meshes may bring materials of their own), the
//! camera, the lights, then the image, render and BVH settings. [`SceneBuilder`] keeps what
//! the sections share: the materials and their names, the triangles so far, the files read and
//! the warnings.
//!
//! Every fault is placed at the key or table of the scene file that causes it
//! ([`SceneText::at`]), and the sections are read in the order above, so that of two faults
//! the earlier section's is the one reported.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};

use glam::{EulerRot, Mat4, Quat};
use toml::Spanned;

use super::config::{
    BvhConfig, CameraConfig, ImageConfig, LightConfig, MaterialConfig, ObjectConfig, RenderConfig,
    ScatterShape, SceneConfig,
};
use super::mesh::Mesh;
use super::mesh_file::MeshBudget;
use super::obj::MtlFiles;
use super::{
    Camera, Gather, GeometryBuilder, Light, LoadObserver, Material, MeshFiles, Reads,
    RenderSettings, Scene, SceneError, SceneOverrides, ScenePieces, SceneTriangles, Viewpoint,
    camera, material, mesh_file, shapes, values,
};
use crate::accel::AccelKind;
use crate::bvh::BvhSettings;
use crate::geometry::Aabb;
use crate::math::Vec3;

/// A scene file's text and the path errors call it by.
#[derive(Clone, Copy)]
pub(super) struct SceneText<'a> {
    pub(super) path: &'a Path,
    pub(super) source: &'a str,
}

impl SceneText<'_> {
    /// A fault at the bytes `span` of the text.
    fn at(&self, span: Range<usize>, message: &str) -> SceneError {
        SceneError::at_span(self.path, self.source, span, message)
    }

    /// The text parsed as a scene file, if it fits in the memory `overrides` allows.
    fn parse(&self, overrides: &SceneOverrides) -> Result<SceneConfig, SceneError> {
        check_parse_room(self.path, self.source.len(), overrides)?;
        toml::from_str(self.source).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            match self.source.get(span.clone()) {
                // The parser's message names no key; its span is the key, given again.
                Some(key) if e.message() == "duplicate key" && !key.is_empty() => {
                    let key = key.trim_matches(|c| c == '"' || c == '\'');
                    self.at(span, &format!("duplicate key `{key}`"))
                }
                spanned => self.at(span, &in_scene_terms(e.message(), spanned.unwrap_or(""))),
            }
        })
    }
}

/// The TOML reader's `message`, about the text `spanned`, in a scene file's terms: serde
/// calls an array a sequence and a table a map, and names the type a table is read into
/// (`expected struct ImageConfig`), which the file does not know. A single table where a list
/// of them is expected (`[lights]` for `[[lights]]`) is told how to write the list.
fn in_scene_terms(message: &str, spanned: &str) -> String {
    if message == "invalid type: map, expected a sequence" {
        let header = spanned
            .strip_prefix('[')
            .and_then(|rest| rest.split_once(']'))
            .map(|(name, _)| name.trim())
            .filter(|name| !name.is_empty() && !name.starts_with('['));
        return match header {
            Some(name) => format!(
                "`[{name}]` is one table where a list of them is expected: write `[[{name}]]` for each"
            ),
            None => "a table where a list is expected: put it in an array, `[{ … }]`".into(),
        };
    }
    if let Some(key) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return format!("`{key}` is required here (docs/scenes.md)");
    }
    // An array read into a table: serde counts its elements against the table's fields.
    if message.starts_with("invalid length ") && message.contains("expected struct ") {
        return "invalid type: array, expected a table".into();
    }
    let Some(rest) = message.strip_prefix("invalid type: ") else {
        return message.to_string();
    };
    let words = |text: &str| text.replace("sequence", "array").replace("map", "table");
    match rest.split_once(", expected ") {
        Some((found, expected)) => {
            let expected = match expected {
                _ if expected.starts_with("struct ") => "a table".to_string(),
                "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, not negative".into(),
                "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
                "f32" | "f64" => "a number".into(),
                _ => words(expected),
            };
            format!("invalid type: {}, expected {expected}", words(found))
        }
        None => format!("invalid type: {}", words(rest)),
    }
}

/// What the sections after the objects give: the camera, the lights and the settings.
pub(super) struct Sections {
    pub(super) camera: Camera,
    pub(super) viewpoint: Viewpoint,
    pub(super) lights: Vec<Light>,
    pub(super) image: ImageSize,
    pub(super) settings: RenderSettings,
    pub(super) bvh: BvhSettings,
}

/// `[image]` under the overrides: the size and the camera rays per pixel.
#[derive(Clone, Copy)]
pub(super) struct ImageSize {
    width: u32,
    height: u32,
    samples: u32,
}

/// Builds a [`Scene`] from a scene file's sections, read in order.
pub(super) struct SceneBuilder<'a> {
    text: SceneText<'a>,
    overrides: SceneOverrides,
    mesh_files: MeshFiles,
    /// What the triangles are gathered into, which bounds how many the memory holds.
    gather: Gather,
    /// The scene file's directory, where the mesh files it names are looked for.
    dir: PathBuf,
    reads: Reads,
    /// Index 0 is the default material, then the named ones in name order, then those that
    /// mesh files give their parts.
    materials: Vec<Material>,
    /// The named materials' indices in `materials`.
    by_name: HashMap<&'a str, u32>,
    geometry: GeometryBuilder,
    /// Entries of `[[objects]]`.
    objects: usize,
}

impl<'a> SceneBuilder<'a> {
    /// A builder for `text`, which reads the mesh files it names as `mesh_files` says and
    /// gathers the triangles as `gather` says.
    pub(super) fn new(
        text: SceneText<'a>,
        overrides: SceneOverrides,
        mesh_files: MeshFiles,
        gather: Gather,
    ) -> Self {
        let mut reads = Reads::default();
        if mesh_files == MeshFiles::Read {
            reads.file(text.path);
        }
        Self {
            text,
            overrides,
            mesh_files,
            gather,
            dir: text
                .path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            reads,
            materials: vec![Material::default()],
            by_name: HashMap::new(),
            geometry: GeometryBuilder::new(gather),
            objects: 0,
        }
    }

    /// The scene file's tables, refused before parsing if the parse would take more memory
    /// than the overrides allow.
    pub(super) fn parse(&self) -> Result<SceneConfig, SceneError> {
        self.text.parse(&self.overrides)
    }

    /// `[materials.NAME]`: each named material, refused if it returns more light than it
    /// receives.
    pub(super) fn materials(
        &mut self,
        materials: &'a BTreeMap<String, Spanned<MaterialConfig>>,
    ) -> Result<(), SceneError> {
        for (name, m) in materials {
            let material = material::from_config(m.get_ref());
            let returned = material::returned(&material);
            if returned > 1.0 {
                return Err(self.text.at(
                    m.span(),
                    &format!(
                        "[materials.{name}]: the largest channels of `reflectivity` and `refractivity` add up to {returned}; a surface returns at most the light it receives (at most 1)"
                    ),
                ));
            }
            self.by_name
                .insert(name.as_str(), self.materials.len() as u32);
            self.materials.push(material);
        }
        Ok(())
    }

    /// `[[objects]]`: every object's triangles, in order, once the built-in shapes of all of
    /// them are known to fit in the triangle budget.
    pub(super) fn objects(&mut self, objects: &[Spanned<ObjectConfig>]) -> Result<(), SceneError> {
        check_generated_triangles(objects, &self.overrides, self.gather, &self.text)?;
        for object in objects {
            self.object(object)?;
        }
        self.objects = objects.len();
        Ok(())
    }

    /// One object: its shape or mesh file, transformed, in its material.
    fn object(&mut self, object: &Spanned<ObjectConfig>) -> Result<(), SceneError> {
        let span = object.span();
        let o = object.get_ref();
        let mtl = if o.material.is_some() {
            MtlFiles::Overridden
        } else {
            MtlFiles::Needed
        };
        let material = self.named_material(o)?;
        let transform = transform(o);
        let smooth = o.smooth.unwrap_or(true);
        let budget =
            self.overrides.triangle_budget_for(self.gather) - self.geometry.triangles.len();
        if let Some(n) = generated_triangles(o).filter(|&n| n > budget as u64) {
            return Err(self.text.at(
                span,
                &format!(
                    "this object would add {n} triangles to the {} already in the scene; {}",
                    self.geometry.triangles.len(),
                    self.overrides.budget_reason(self.gather)
                ),
            ));
        }
        let budget = self.overrides.mesh_budget(self.gather, budget);
        for (mesh, own_material) in self.meshes(o, &span, budget, mtl)? {
            let material = material.unwrap_or_else(|| self.own_material(own_material));
            let mesh = mesh.transformed(&transform).ok_or_else(|| {
                self.text.at(
                    span.clone(),
                    "coordinates leave the finite numbers after the transform",
                )
            })?;
            self.geometry
                .add(&mesh, material, smooth)
                .map_err(|e| self.text.at(span.clone(), &e))?;
        }
        Ok(())
    }

    /// The index of the material the object names, if it names one.
    fn named_material(&self, o: &ObjectConfig) -> Result<Option<u32>, SceneError> {
        let Some(name) = &o.material else {
            return Ok(None);
        };
        let index = self.by_name.get(name.get_ref().as_str()).ok_or_else(|| {
            self.text.at(
                name.span(),
                &format!("no material named `{}` in [materials]", name.get_ref()),
            )
        })?;
        Ok(Some(*index))
    }

    /// The index of the material a mesh file gives one of its parts (added to the scene's),
    /// or the default material's where it gives none.
    fn own_material(&mut self, material: Option<Material>) -> u32 {
        match material {
            Some(m) => {
                self.materials.push(m);
                self.materials.len() as u32 - 1
            }
            None => 0,
        }
    }

    /// The meshes of an object (at `span`), within `budget`; a fault of a mesh file as a whole
    /// is placed at the key that names it.
    fn meshes(
        &mut self,
        o: &ObjectConfig,
        span: &Range<usize>,
        budget: MeshBudget,
        mtl: MtlFiles,
    ) -> Result<Vec<(Mesh, Option<Material>)>, SceneError> {
        if let (Some(mesh), MeshFiles::Refuse) = (&o.mesh, self.mesh_files) {
            return Err(self.text.at(
                mesh.span(),
                "mesh files are not read when a scene is built from text alone",
            ));
        }
        object_meshes(o, &self.dir, budget, mtl, &mut self.reads).map_err(|e| match e {
            ShapeError::Config(message) => self.text.at(span.clone(), &message),
            // A fault of the mesh file as a whole (missing, not a regular file, no faces) is
            // also placed at the scene's line that names the file; a fault at a line of the
            // mesh keeps that line.
            ShapeError::File(e) if e.position.is_none() => {
                let key = o.mesh.as_ref().map_or(span.clone(), Spanned::span);
                self.text.at(key, &e.to_string())
            }
            ShapeError::File(e) => e,
        })
    }

    /// `[camera]`: exactly one of `look_at` and `direction`, and a view a camera can be
    /// placed at.
    pub(super) fn camera(
        &self,
        camera: &Spanned<CameraConfig>,
    ) -> Result<(Camera, Viewpoint), SceneError> {
        let c = camera.get_ref();
        let position = Vec3::from(c.position.0);
        let direction = match (c.look_at, c.direction) {
            (Some(target), None) => Vec3::from(target.0) - position,
            (None, Some(d)) => Vec3::from(d.0),
            _ => {
                return Err(self.text.at(
                    camera.span(),
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
        let built = viewpoint.checked_camera().map_err(|e| {
            let direction = if c.look_at.is_some() {
                "`look_at` − `position`"
            } else {
                "`direction`"
            };
            self.text
                .at(camera.span(), &e.message(&viewpoint, direction))
        })?;
        Ok((built, viewpoint))
    }

    /// `[[lights]]`, in order.
    pub(super) fn lights(&self, lights: &[Spanned<LightConfig>]) -> Result<Vec<Light>, SceneError> {
        let bounds = self.geometry.bounds();
        let mut built = Vec::with_capacity(lights.len());
        for light in lights {
            let position = Vec3::from(light.get_ref().position.0);
            if !within_reach(position, bounds) {
                return Err(self.text.at(
                    light.span(),
                    &format!(
                        "the light at {:?} is too far from the objects for single precision (the square of its distance to them overflows, and it would light nothing); keep it within about 1e19 of them",
                        position.to_array()
                    ),
                ));
            }
            built.push(self.light(light)?);
        }
        Ok(built)
    }

    /// One light: a point light, or a spot aimed somewhere with its inner cone inside its
    /// outer one.
    fn light(&self, light: &Spanned<LightConfig>) -> Result<Light, SceneError> {
        let l = light.get_ref();
        let position = Vec3::from(l.position.0);
        let color =
            Vec3::from(l.color.map_or([1.0; 3], |c| c.0)) * l.intensity.map_or(1.0, |i| i.0);
        let Some(spot) = &l.spot else {
            return Ok(Light::point(position, color));
        };
        let (aim, given_as) = match (spot.look_at, spot.direction) {
            (Some(target), None) => (Vec3::from(target.0) - position, "`look_at` − `position`"),
            (None, Some(d)) => (Vec3::from(d.0), "`direction`"),
            _ => {
                return Err(self.text.at(
                    light.span(),
                    "a spot needs exactly one of `look_at` and `direction`",
                ));
            }
        };
        let aim = camera::NotUnit::unit(aim).map_err(|why| {
            self.text.at(
                light.span(),
                &why.message("the spot's direction", given_as, aim, position),
            )
        })?;
        let outer = spot.angle.get_ref().0;
        let inner = spot.inner_angle.as_ref().map_or(outer, |a| a.get_ref().0);
        if inner > outer {
            let span = spot.inner_angle.as_ref().map_or(light.span(), |a| a.span());
            return Err(self.text.at(span, "must not exceed the spot's `angle`"));
        }
        Ok(Light {
            position,
            color,
            direction: aim,
            cos_outer: libm::cosf(outer.to_radians()),
            cos_inner: libm::cosf(inner.to_radians()),
        })
    }

    /// `[image]` under the overrides.
    pub(super) fn image(&self, image: &ImageConfig) -> ImageSize {
        ImageSize {
            width: self.overrides.width.unwrap_or(image.width.0),
            height: self.overrides.height.unwrap_or(image.height.0),
            samples: self
                .overrides
                .samples
                .or(image.samples.map(|s| s.0))
                .unwrap_or(1),
        }
    }

    /// `[render]`: the integrator's settings.
    pub(super) fn render_settings(&self, render: &RenderConfig) -> RenderSettings {
        RenderSettings {
            max_depth: render.max_depth.0,
            weight_cutoff: render.weight_cutoff.0,
            ambient: Vec3::from(render.ambient.0),
            background: Vec3::from(render.background.0),
            offset_scale: crate::math::SURFACE_OFFSET_SCALE,
        }
    }

    /// `[bvh]` under the overrides, with a warning where its `max_depth` is given for a
    /// structure it does not shape.
    pub(super) fn bvh_settings(&mut self, bvh: &BvhConfig) -> BvhSettings {
        let overrides = &self.overrides;
        if let Some(depth) = &bvh.max_depth
            && overrides.bvh_max_depth.is_none()
            && overrides.accel_kind() != AccelKind::Octree
        {
            let at = self.text.at(
                depth.span(),
                "`max_depth` shapes the octree alone (--accel octree); the wide BVH is not cut at a depth",
            );
            self.reads.warn_once(self.text.path, at.to_string());
        }
        BvhSettings {
            leaf_size: overrides
                .leaf_size
                .or(bvh.leaf_size.map(|v| v.0))
                .unwrap_or(overrides.accel_kind().default_leaf_size()),
            max_depth: overrides
                .bvh_max_depth
                .or(bvh.max_depth.as_ref().map(|v| v.get_ref().0))
                .unwrap_or(24),
            width: overrides.bvh_width,
            split: overrides.bvh_split.unwrap_or_default(),
        }
    }

    /// The scene: the objects' triangles in an acceleration structure, with the other
    /// sections; `observer` hears as each stage ends, and the load time runs from `start`.
    pub(super) fn finish(
        self,
        sections: Sections,
        observer: &mut dyn LoadObserver,
        start: std::time::Instant,
    ) -> Result<Scene, SceneError> {
        let path = self.text.path;
        let name = self.name();
        self.geometry.finish(ScenePieces {
            path,
            observer,
            name,
            reads: self.reads,
            camera: sections.camera,
            viewpoint: sections.viewpoint,
            width: sections.image.width,
            samples: sections.image.samples,
            height: sections.image.height,
            settings: sections.settings,
            lights: sections.lights,
            materials: self.materials,
            bvh: sections.bvh,
            accel: self.overrides.accel_kind(),
            address_space: self.overrides.memory_is_address_space,
            objects: self.objects,
            start,
        })
    }

    /// The triangles alone, once the sections are read: no structure is built.
    pub(super) fn into_triangles(self) -> Result<SceneTriangles, SceneError> {
        let name = self.name();
        self.geometry
            .into_triangles(self.text.path, name, self.reads)
    }

    /// The scene's name: the file's stem.
    fn name(&self) -> String {
        super::stem_or(self.text.path, "scene")
    }
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
    budget: MeshBudget,
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
        if path.get_ref().is_empty() {
            let fault = "an empty path; name an OBJ or PLY file";
            return Err(ShapeError::File(SceneError::file(Path::new(""), fault)));
        }
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
    gather: Gather,
    text: &SceneText<'_>,
) -> Result<(), SceneError> {
    let budget = overrides.triangle_budget_for(gather) as u64;
    let mut before = 0u64;
    for object in objects {
        let Some(n) = generated_triangles(object.get_ref()) else {
            continue;
        };
        if before.saturating_add(n) > budget {
            return Err(text.at(
                object.span(),
                &format!(
                    "this object would add {n} triangles to the {before} the shapes before it make; {}",
                    overrides.budget_reason(gather)
                ),
            ));
        }
        before += n;
    }
    Ok(())
}

/// Whether every point of `bounds` is near enough to `position` that the square of the
/// distance between them, which shading takes to normalise the way to a light, is finite.
fn within_reach(position: Vec3, bounds: Aabb) -> bool {
    if bounds.min.x > bounds.max.x {
        // No objects: nothing to reach.
        return true;
    }
    let far = (position - bounds.min)
        .abs()
        .max((position - bounds.max).abs());
    crate::math::dot(far, far).is_finite()
}
