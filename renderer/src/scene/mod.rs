//! Scenes: the TOML format, built-in, OBJ and PLY geometry, materials, lights and the camera,
//! assembled into the flat layout that rendering (on any device) reads.

mod builder;
mod camera;
mod config;
mod error;
mod light;
mod material;
mod mesh;
mod mesh_file;
mod obj;
mod ply;
mod report;
mod shapes;
mod values;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::accel::{Accel, AccelKind, Packets};
use crate::bvh::{BuildThreadError, BvhSettings, BvhSplit, BvhStats, Width};
use crate::geometry::{Aabb, Triangle, TriangleExt};
use crate::input::MAX_SCENE_BYTES;
use crate::math::{Vec3, dot, normalize};
use crate::memory::{AllocError, try_reserve, try_with_capacity};

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
pub use report::{BvhReport, SceneReport};

use builder::{SceneBuilder, SceneText, Sections};
use mesh::Mesh;
use mesh_file::MeshBudget;
use obj::MtlFiles;

/// Figures about a loaded scene.
///
/// ```
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let small = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), small)?;
/// let stats = &scene.stats;
/// assert_eq!(stats.triangles, stats.bvh.triangles);
/// assert_eq!(stats.objects, 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
///
/// ```
/// use renderer::scene::{Scene, SceneOverrides};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let small = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// let scene = Scene::load(path.as_ref(), small)?;
/// // The file asks for 96×64 pixels; the overrides win.
/// assert_eq!((scene.width, scene.height), (32, 32));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    ///
    /// ```
    /// use renderer::accel::AccelKind;
    /// use renderer::scene::SceneOverrides;
    ///
    /// assert_eq!(SceneOverrides::default().accel_kind(), AccelKind::Wide);
    /// let octree = SceneOverrides { accel: Some(AccelKind::Octree), ..Default::default() };
    /// assert_eq!(octree.accel_kind(), AccelKind::Octree);
    /// ```
    pub fn accel_kind(&self) -> AccelKind {
        self.accel.unwrap_or_default()
    }

    /// The most triangles the scene may have.
    ///
    /// ```
    /// use renderer::scene::{MAX_SCENE_TRIANGLES, SceneOverrides};
    ///
    /// assert_eq!(SceneOverrides::default().triangle_budget(), MAX_SCENE_TRIANGLES);
    /// // 26 MB of memory holds 100,000 triangles in the wide BVH (260 bytes each).
    /// let small = SceneOverrides { memory: Some(26_000_000), ..Default::default() };
    /// assert_eq!(small.triangle_budget(), 100_000);
    /// ```
    pub fn triangle_budget(&self) -> usize {
        self.triangle_budget_for(Gather::Structure(self.accel_kind()))
    }

    /// The most triangles a scene gathered as `gather` says may have.
    fn triangle_budget_for(&self, gather: Gather) -> usize {
        let by_memory = self.memory.map_or(usize::MAX, |m| {
            usize::try_from(m / gather.bytes_per_triangle()).unwrap_or(usize::MAX)
        });
        by_memory.min(MAX_SCENE_TRIANGLES)
    }

    /// What is left for a mesh file of a scene gathered as `gather` says, with `triangles`
    /// (of [`triangle_budget_for`](Self::triangle_budget_for)) left: those triangles, and the
    /// memory they stand for where a bound was given.
    fn mesh_budget(&self, gather: Gather, triangles: usize) -> MeshBudget {
        MeshBudget {
            triangles,
            bytes: self
                .memory
                .map(|_| (triangles as u64).saturating_mul(gather.bytes_per_triangle())),
        }
    }

    /// Why a scene gathered as `gather` says may not have more than
    /// [`triangle_budget_for`](Self::triangle_budget_for) triangles, for messages.
    fn budget_reason(&self, gather: Gather) -> String {
        let budget = self.triangle_budget_for(gather);
        match self.memory {
            Some(m) if budget < MAX_SCENE_TRIANGLES => format!(
                "{budget} triangles fit in the {} of memory at hand (about {} bytes each {})",
                crate::memory::format_bytes(m),
                gather.bytes_per_triangle(),
                gather.held_as()
            ),
            _ => format!("a scene may have at most {MAX_SCENE_TRIANGLES} triangles"),
        }
    }
}

/// What loading a scene makes of its triangles once they are read, and so what each costs
/// while the scene loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gather {
    /// An acceleration structure of this kind over them: a [`Scene`].
    Structure(AccelKind),
    /// Nothing: the triangles alone, in input order ([`SceneTriangles`]).
    TrianglesOnly,
}

/// What a triangle costs at the peak of loading a scene's triangles alone: the triangle and
/// its share of the meshes being made and transformed (no shading data is kept). Measured as
/// the peak resident memory of `raylb export` on heightfields of 2,097,152 and 8,388,608
/// triangles (182 and 710 MiB), the difference over the difference in triangles, 88 bytes a
/// triangle; rounded up. An OBJ file's own reading is bounded apart, by its text and faces.
const TRIANGLES_ONLY_BYTES_PER_TRIANGLE: u64 = 100;

impl Gather {
    fn bytes_per_triangle(self) -> u64 {
        match self {
            Gather::Structure(kind) => kind.bytes_per_triangle(),
            Gather::TrianglesOnly => TRIANGLES_ONLY_BYTES_PER_TRIANGLE,
        }
    }

    /// How the triangles are held, for messages: "in the wide structure".
    fn held_as(self) -> String {
        match self {
            Gather::Structure(kind) => format!("in the {} structure", kind.name()),
            Gather::TrianglesOnly => "as triangles alone".into(),
        }
    }
}

/// The most camera rays a pixel may have. With the weight cutoff's bound of 10,000 rays per
/// camera ray, a pixel then takes at most about 2^23.3 contributions, within the 2^24 its
/// fixed-point sums have room for (see [`crate::film::MAX_CONTRIBUTION`]).
pub const MAX_SAMPLES: u32 = 1024;

/// A scene ready to render: camera, image size, settings, lights, materials, and the
/// triangles in a BVH with their shading data in the same (leaf) order.
///
/// ```
/// use renderer::geometry::Ray;
/// use renderer::math::Vec3;
/// use renderer::scene::{Scene, SceneOverrides};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let scene = Scene::load(path.as_ref(), SceneOverrides::default())?;
/// assert_eq!((scene.width, scene.height, scene.lights.len()), (96, 64, 2));
/// // Straight down from above the floor, a ray hits something.
/// let down = Ray::new(Vec3::new(0.0, 10.0, 0.0), Vec3::new(0.0, -1.0, 0.0));
/// assert!(scene.accel.closest_hit(&down).is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// Whether a tile's camera rays and their shadow rays are traced in packets: by default
    /// where the structure traces them ([`Packets::default_for`]).
    pub packets: Packets,
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
///
/// ```
/// use renderer::scene::{BvhReport, LoadObserver, Scene, SceneOverrides, SceneReport};
///
/// /// Notes the stages as they end.
/// struct Stages(Vec<String>);
///
/// impl LoadObserver for Stages {
///     fn geometry_read(&mut self, scene: &SceneReport) {
///         self.0.push(format!("read {}", scene.name));
///     }
///     fn bvh_built(&mut self, bvh: &BvhReport) {
///         self.0.push(format!("built {}", bvh.structure));
///     }
/// }
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let mut stages = Stages(Vec::new());
/// Scene::load_observed(path.as_ref(), SceneOverrides::default(), &mut stages)?;
/// assert_eq!(stages.0, ["read quick", "built wide"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait LoadObserver {
    /// The geometry has been read and generated: the scene's figures but the BVH's.
    ///
    /// ```
    /// use renderer::scene::{LoadObserver, Scene, SceneOverrides, SceneReport};
    ///
    /// struct Size(u32, u32);
    ///
    /// impl LoadObserver for Size {
    ///     fn geometry_read(&mut self, scene: &SceneReport) {
    ///         (self.0, self.1) = (scene.width, scene.height);
    ///     }
    /// }
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// let mut size = Size(0, 0);
    /// Scene::load_observed(path.as_ref(), SceneOverrides::default(), &mut size)?;
    /// assert_eq!((size.0, size.1), (96, 64));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn geometry_read(&mut self, _scene: &SceneReport) {}
    /// The BVH is built.
    ///
    /// ```
    /// use renderer::scene::{BvhReport, LoadObserver, Scene, SceneOverrides};
    ///
    /// struct Nodes(usize);
    ///
    /// impl LoadObserver for Nodes {
    ///     fn bvh_built(&mut self, bvh: &BvhReport) {
    ///         self.0 = bvh.nodes;
    ///     }
    /// }
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// let mut nodes = Nodes(0);
    /// let scene = Scene::load_observed(path.as_ref(), SceneOverrides::default(), &mut nodes)?;
    /// assert_eq!(nodes.0, scene.stats.bvh.nodes);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    ///
    /// ```
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let small = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), small)?;
    /// // At least the triangles themselves, 36 bytes each.
    /// assert!(scene.resident_bytes() >= 36 * scene.stats.triangles as u64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resident_bytes(&self) -> u64 {
        (self.stats.bvh.bytes + self.shading.len() * std::mem::size_of::<TriangleShading>()) as u64
    }

    /// The same scene with its triangles in another acceleration structure (built with the
    /// same settings), or `None` if it is in that structure already. The image does not
    /// change: the closest hit is the same in every structure.
    ///
    /// # Errors
    /// When the operating system refuses to start one of the build's threads.
    ///
    /// ```
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let small = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let scene = Scene::load(path.as_ref(), small)?;
    /// use renderer::accel::AccelKind;
    ///
    /// let octree = scene.with_accel(AccelKind::Octree)?.expect("the scene is in the wide BVH");
    /// assert_eq!(octree.accel.kind(), AccelKind::Octree);
    /// assert_eq!(octree.accel.input_triangles(), scene.accel.input_triangles());
    /// assert!(scene.with_accel(AccelKind::Wide)?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
            // The structure rebuilt in may not trace packets.
            packets: if kind.traces_packets() {
                self.packets
            } else {
                Packets::Off
            },
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
    ///
    /// ```
    /// use renderer::scene::{Scene, SceneOverrides};
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// let scene = Scene::load(path.as_ref(), SceneOverrides::default())?;
    /// assert_eq!(scene.name, "quick");
    /// assert!(scene.inputs[0].ends_with("quick.toml"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(path: &Path, overrides: SceneOverrides) -> Result<Self, SceneError> {
        Self::load_observed(path, overrides, &mut ())
    }

    /// Loads a scene file, telling `observer` as each stage ends.
    ///
    /// ```
    /// use renderer::scene::{Scene, SceneOverrides};
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// // The unit type listens to nothing.
    /// let scene = Scene::load_observed(path.as_ref(), SceneOverrides::default(), &mut ())?;
    /// assert_eq!(scene.name, "quick");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_observed(
        path: &Path,
        overrides: SceneOverrides,
        observer: &mut dyn LoadObserver,
    ) -> Result<Self, SceneError> {
        let start = Instant::now();
        let source = read_scene_text(path)?;
        Self::from_source(path, &source, overrides, observer, MeshFiles::Read, start)
    }

    /// Builds the scene a scene file's text describes, as [`load`](Self::load) does but with
    /// no file read: an object that names a mesh file is an error. `path` is what errors call
    /// the text. For fuzzers and tests; `overrides.memory` bounds what the scene may build.
    ///
    /// ```
    /// use renderer::scene::{Scene, SceneOverrides};
    ///
    /// let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml"));
    /// let scene = Scene::from_toml("quick.toml".as_ref(), text, SceneOverrides::default())?;
    /// assert_eq!((scene.width, scene.height), (96, 64));
    /// assert!(Scene::from_toml("bad.toml".as_ref(), "[image]\nwidth = 0", Default::default()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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

    /// Builds the scene `source` (the text of the scene file `path`) describes, section by
    /// section; mesh files are read or refused as `mesh_files` says.
    fn from_source(
        path: &Path,
        source: &str,
        overrides: SceneOverrides,
        observer: &mut dyn LoadObserver,
        mesh_files: MeshFiles,
        start: Instant,
    ) -> Result<Self, SceneError> {
        let gather = Gather::Structure(overrides.accel_kind());
        read_sections(
            SceneText { path, source },
            overrides,
            mesh_files,
            gather,
            |builder, sections| builder.finish(sections, observer, start),
        )
    }

    /// A bare mesh (OBJ or PLY) with an automatic camera, framed as `framing` says (by
    /// default looking along −z with +y up): the camera looks along `view` at the centre of
    /// the mesh's bounding box with a 45° vertical field of view, from
    /// `d = 1.1 · max(extent across, extent up) / (2 · tan(22.5°)) + extent along / 2` in
    /// front of the centre; one white point light above and to the left of the camera, half
    /// of `d` off the line of sight, so that silhouettes are shaded; no reflection or
    /// refraction.
    ///
    /// ```
    /// use renderer::scene::{MeshFraming, Scene, SceneOverrides};
    ///
    /// let path = std::env::temp_dir().join(format!("raylb-doc-mesh-{}.obj", std::process::id()));
    /// std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")?;
    /// let small = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// let scene = Scene::from_mesh(&path, small, MeshFraming::default());
    /// std::fs::remove_file(&path)?;
    /// let scene = scene?;
    /// assert_eq!((scene.stats.triangles, scene.lights.len()), (1, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_mesh(
        path: &Path,
        overrides: SceneOverrides,
        framing: MeshFraming,
    ) -> Result<Self, SceneError> {
        Self::from_mesh_observed(path, overrides, framing, &mut ())
    }

    /// [`from_mesh`](Self::from_mesh), telling `observer` as each stage ends.
    ///
    /// ```
    /// use renderer::scene::{AxisDirection, MeshFraming, Scene, SceneOverrides};
    ///
    /// let path = std::env::temp_dir().join(format!("raylb-doc-mesh-observed-{}.obj", std::process::id()));
    /// std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")?;
    /// // Up and view along one axis cannot frame a mesh.
    /// let framing = MeshFraming { up: AxisDirection::PLUS_Z, view: AxisDirection::MINUS_Z };
    /// let scene = Scene::from_mesh_observed(&path, Default::default(), framing, &mut ());
    /// std::fs::remove_file(&path)?;
    /// assert!(scene.unwrap_err().to_string().contains("lie on one axis"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
        let gather = Gather::Structure(overrides.accel_kind());
        let MeshGeometry {
            geometry,
            materials,
            reads,
        } = MeshGeometry::read(path, &overrides, gather)?;
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
        geometry.finish(ScenePieces {
            path,
            observer,
            name: stem_or(path, "mesh"),
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
                leaf_size: overrides
                    .leaf_size
                    .unwrap_or(overrides.accel_kind().default_leaf_size()),
                max_depth: overrides.bvh_max_depth.unwrap_or(24),
                width: overrides.bvh_width,
                split: overrides.bvh_split.unwrap_or_default(),
            },
            accel: overrides.accel_kind(),
            address_space: overrides.memory_is_address_space,
            objects: 1,
            start,
        })
    }
}

/// Checks the text of the scene file `path` as [`Scene::load`] first reads it: TOML, every key
/// known and of its type, every value in its range; its meshes are not read and its objects
/// not made, so a scene that passes may still be refused for what they hold. For listings of
/// many scene files (`raylb scenes`).
///
/// # Errors
/// The first fault, placed at its line and column.
///
/// ```
/// use renderer::scene::check_scene_text;
///
/// let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml"));
/// assert!(check_scene_text("quick.toml".as_ref(), text).is_ok());
/// let zero = text.replace("width = 96", "width = 0");
/// let refused = check_scene_text("zero.toml".as_ref(), &zero).unwrap_err().to_string();
/// assert!(refused.starts_with("zero.toml:5:9:"), "{refused}");
/// ```
pub fn check_scene_text(path: &Path, source: &str) -> Result<(), SceneError> {
    SceneBuilder::new(
        SceneText { path, source },
        SceneOverrides::default(),
        MeshFiles::Refuse,
        Gather::TrianglesOnly,
    )
    .parse()
    .map(drop)
}

/// The name of the scene or mesh file `path` in reports: its stem, or `default`.
fn stem_or(path: &Path, default: &str) -> String {
    path.file_stem()
        .map_or(default.into(), |s| s.to_string_lossy().into_owned())
}

/// The text of the scene file `path`, refused in one line if it names a mesh.
fn read_scene_text(path: &Path) -> Result<String, SceneError> {
    // A mesh where a scene file was asked for would be read as TOML, and fail on its first
    // line with a message about keys.
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if let Some(ext @ ("obj" | "ply")) = extension.as_deref() {
        return Err(SceneError::file(
            path,
            format!(
                "a .{ext} mesh, not a scene file: a scene file names its meshes in \
                 [[objects]] (docs/scenes.md), and the commands with a --mesh flag take a \
                 bare mesh with it"
            ),
        ));
    }
    obj::read_text(path, MAX_SCENE_BYTES)
}

/// Reads a scene file's sections in order, its objects' triangles gathered as `gather` says,
/// then hands them to `finish`.
fn read_sections<T>(
    text: SceneText<'_>,
    overrides: SceneOverrides,
    mesh_files: MeshFiles,
    gather: Gather,
    finish: impl FnOnce(SceneBuilder<'_>, Sections) -> Result<T, SceneError>,
) -> Result<T, SceneError> {
    let mut builder = SceneBuilder::new(text, overrides, mesh_files, gather);
    let config = builder.parse()?;
    builder.materials(&config.materials)?;
    builder.objects(&config.objects)?;
    let (camera, viewpoint) = builder.camera(&config.camera)?;
    let lights = builder.lights(&config.lights)?;
    let sections = Sections {
        camera,
        viewpoint,
        lights,
        image: builder.image(&config.image),
        settings: builder.render_settings(&config.render),
        bvh: builder.bvh_settings(&config.bvh),
    };
    finish(builder, sections)
}

/// A bare mesh's triangles, with the materials its parts give them and the files read.
struct MeshGeometry {
    geometry: GeometryBuilder,
    /// Index 0 is the default material, then one for each part that gives its own.
    materials: Vec<Material>,
    reads: Reads,
}

impl MeshGeometry {
    /// Reads the mesh file `path`, its triangles gathered as `gather` says, refused past the
    /// budget of `overrides`.
    fn read(path: &Path, overrides: &SceneOverrides, gather: Gather) -> Result<Self, SceneError> {
        let budget = overrides.mesh_budget(gather, overrides.triangle_budget_for(gather));
        let mut materials = vec![Material::default()];
        let mut geometry = GeometryBuilder::new(gather);
        let mut reads = Reads::default();
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
        Ok(Self {
            geometry,
            materials,
            reads,
        })
    }
}

/// A scene's triangles in world space, as its objects give them, with no structure built
/// over them: what `raylb export` writes. Each triangle has the float bits a [`Scene`] of the
/// same file traces ([`Accel::input_triangles`]), in the same order, for a fraction of the
/// memory and time.
///
/// ```
/// use renderer::scene::{Scene, SceneOverrides, SceneTriangles};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let alone = SceneTriangles::load(path.as_ref(), SceneOverrides::default())?;
/// let scene = Scene::load(path.as_ref(), SceneOverrides::default())?;
/// assert_eq!(alone.name, "quick");
/// assert_eq!(alone.triangles, scene.accel.input_triangles());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SceneTriangles {
    /// The scene file's stem (or the mesh's), for reports.
    pub name: String,
    /// The triangles, in input order; zero-area ones are dropped, as a [`Scene`] drops them.
    pub triangles: Vec<Triangle>,
    /// Zero-area triangles found in the input and dropped.
    pub dropped_triangles: usize,
    /// Every file read: the scene file (or mesh) first, then its meshes and material
    /// libraries.
    pub inputs: Vec<PathBuf>,
    /// Faults in the input that did not stop it loading, one line each.
    pub warnings: Vec<String>,
}

impl SceneTriangles {
    /// The triangles of the scene file `path`, read as [`Scene::load`] reads them; the file's
    /// other sections are checked as it checks them. `overrides.memory` bounds the triangles
    /// at what they cost alone, not in a structure.
    ///
    /// # Errors
    /// Where [`Scene::load`] refuses the file, except for a structure that cannot be built.
    ///
    /// ```
    /// use renderer::scene::{SceneOverrides, SceneTriangles};
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// let quick = SceneTriangles::load(path.as_ref(), SceneOverrides::default())?;
    /// assert!(quick.inputs[0].ends_with("quick.toml"));
    /// // Too little memory for them is refused before they are read.
    /// let tiny = SceneOverrides { memory: Some(1000), ..Default::default() };
    /// assert!(SceneTriangles::load(path.as_ref(), tiny).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(path: &Path, overrides: SceneOverrides) -> Result<Self, SceneError> {
        let source = read_scene_text(path)?;
        let text = SceneText {
            path,
            source: &source,
        };
        read_sections(
            text,
            overrides,
            MeshFiles::Read,
            Gather::TrianglesOnly,
            |builder, _| builder.into_triangles(),
        )
    }

    /// The triangles of the bare mesh `path` (OBJ or PLY), read as [`Scene::from_mesh`] reads
    /// them.
    ///
    /// # Errors
    /// Where [`Scene::from_mesh`] refuses the mesh, except for a structure that cannot be
    /// built.
    ///
    /// ```
    /// use renderer::scene::{SceneOverrides, SceneTriangles};
    ///
    /// let path = std::env::temp_dir().join(format!("raylb-doc-triangles-{}.obj", std::process::id()));
    /// // The second face has no area, and is dropped.
    /// std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 1 2\n")?;
    /// let mesh = SceneTriangles::from_mesh(&path, SceneOverrides::default());
    /// std::fs::remove_file(&path)?;
    /// let mesh = mesh?;
    /// assert_eq!((mesh.triangles.len(), mesh.dropped_triangles), (1, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_mesh(path: &Path, overrides: SceneOverrides) -> Result<Self, SceneError> {
        let mesh = MeshGeometry::read(path, &overrides, Gather::TrianglesOnly)?;
        mesh.geometry
            .into_triangles(path, stem_or(path, "mesh"), mesh.reads)
    }
}

/// One of the six directions along a coordinate axis: `+x`, `-y`, …
///
/// ```
/// use renderer::scene::AxisDirection;
///
/// let up = AxisDirection::parse("+Y")?;
/// assert_eq!(up, AxisDirection::PLUS_Y);
/// assert_eq!(AxisDirection::parse("-z")?.to_string(), "-z");
/// assert!(AxisDirection::parse("w").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    ///
    /// ```
    /// use renderer::scene::AxisDirection;
    ///
    /// assert!(AxisDirection::PLUS_Z.same_axis(AxisDirection::MINUS_Z));
    /// assert!(!AxisDirection::PLUS_X.same_axis(AxisDirection::PLUS_Y));
    /// ```
    pub fn same_axis(self, other: Self) -> bool {
        self.axis == other.axis
    }

    /// The unit vector.
    ///
    /// ```
    /// use renderer::math::Vec3;
    /// use renderer::scene::AxisDirection;
    ///
    /// assert_eq!(AxisDirection::MINUS_Z.unit(), Vec3::new(0.0, 0.0, -1.0));
    /// ```
    pub fn unit(self) -> Vec3 {
        let mut v = Vec3::ZERO;
        v[self.axis] = if self.negative { -1.0 } else { 1.0 };
        v
    }

    /// Reads `x`, `+x`, `-x` (and the same for y and z, in either case).
    ///
    /// ```
    /// use renderer::scene::AxisDirection;
    ///
    /// assert_eq!(AxisDirection::parse("x"), Ok(AxisDirection::PLUS_X));
    /// assert_eq!(AxisDirection::parse("-Z"), Ok(AxisDirection::MINUS_Z));
    /// assert_eq!(
    ///     AxisDirection::parse("up").unwrap_err(),
    ///     "`up` is not an axis: give x, y or z, signed + or -"
    /// );
    /// ```
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
///
/// ```
/// use renderer::scene::{AxisDirection, MeshFraming};
///
/// let framing = MeshFraming::default();
/// assert_eq!((framing.up, framing.view), (AxisDirection::PLUS_Y, AxisDirection::MINUS_Z));
/// ```
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
    let threads = crate::memory::thread_address_space(crate::bvh::build_thread_count().get());
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

/// Collects triangles in input order, dropping zero-area ones, and their shading data where
/// a structure is to be built over them.
struct GeometryBuilder {
    triangles: Vec<Triangle>,
    /// Empty where the triangles are gathered alone ([`Gather::TrianglesOnly`]).
    shading: Vec<TriangleShading>,
    keeps_shading: bool,
    dropped: usize,
}

impl GeometryBuilder {
    /// A builder for triangles gathered as `gather` says.
    fn new(gather: Gather) -> Self {
        Self {
            triangles: Vec::new(),
            shading: Vec::new(),
            keeps_shading: gather != Gather::TrianglesOnly,
            dropped: 0,
        }
    }

    /// Adds the mesh's triangles; zero-area ones (including those too small for their area
    /// to be represented) are dropped and counted. Fails when a triangle is so large that its
    /// normal overflows, or when the memory for the triangles cannot be had.
    fn add(&mut self, mesh: &Mesh, material: u32, smooth: bool) -> Result<(), String> {
        let faces = mesh.faces.len();
        try_reserve(&mut self.triangles, faces, "the scene's triangles")
            .map_err(|e| e.to_string())?;
        if self.keeps_shading {
            try_reserve(&mut self.shading, faces, "the triangles' normals")
                .map_err(|e| e.to_string())?;
        }
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
            self.triangles.push(tri);
            if !self.keeps_shading {
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
            self.shading.push(TriangleShading { normals, material });
        }
        Ok(())
    }

    fn bounds(&self) -> Aabb {
        self.triangles
            .iter()
            .fold(Aabb::EMPTY, |b, t| b.union(t.bounds()))
    }

    /// Refuses a scene of `path` with no triangles, or more than a structure may hold.
    fn check(&self, path: &Path) -> Result<(), SceneError> {
        if self.triangles.is_empty() {
            let dropped = if self.dropped > 0 {
                format!(" ({} zero-area triangles were dropped)", self.dropped)
            } else {
                String::new()
            };
            return Err(SceneError::file(
                path,
                format!("the scene has no triangles{dropped}"),
            ));
        }
        if self.triangles.len() > crate::bvh::MAX_TRIANGLES {
            return Err(SceneError::file(
                path,
                format!(
                    "{} triangles exceed the limit of {}",
                    self.triangles.len(),
                    crate::bvh::MAX_TRIANGLES
                ),
            ));
        }
        Ok(())
    }

    /// The triangles alone, of the scene or mesh `path` called `name`, once checked.
    fn into_triangles(
        self,
        path: &Path,
        name: String,
        reads: Reads,
    ) -> Result<SceneTriangles, SceneError> {
        self.check(path)?;
        Ok(SceneTriangles {
            name,
            triangles: self.triangles,
            dropped_triangles: self.dropped,
            inputs: reads.files,
            warnings: reads.warnings,
        })
    }

    fn finish(self, p: ScenePieces<'_>) -> Result<Scene, SceneError> {
        self.check(p.path)?;
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
            packets: Packets::default_for(bvh.kind()),
            accel: bvh,
            bvh_settings: p.bvh,
            shading,
        })
    }
}
