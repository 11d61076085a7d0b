//! What loading a scene reports as it goes (`LoadObserver`) and `--stats` writes: the scene's
//! figures once its geometry is read, and its structure's once built.

use serde::Serialize;

/// Figures of the scene.
#[derive(Clone, Debug, Serialize)]
pub struct SceneReport {
    /// Scene name (file stem).
    pub name: String,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Camera rays per pixel.
    pub samples: u32,
    /// Triangles rendered.
    pub triangles: usize,
    /// Zero-area triangles dropped on loading.
    pub dropped_triangles: usize,
    /// Objects in the scene file.
    pub objects: usize,
    /// Lights.
    pub lights: usize,
    /// Materials (including the default).
    pub materials: usize,
    /// Deepest generation of secondary rays.
    pub max_depth: u32,
    /// Seconds to read and generate the geometry.
    pub load_seconds: f64,
}

/// Figures of the acceleration structure.
#[derive(Clone, Debug, Serialize)]
pub struct BvhReport {
    /// Which structure: `wide` or `octree`.
    pub structure: &'static str,
    /// The most children a node has.
    pub children: u32,
    /// The vector instructions that test a node's boxes for a single ray: `avx512`, `avx2` or
    /// `sse`.
    pub simd: &'static str,
    /// Nodes (per flattened order, in the octree).
    pub nodes: usize,
    /// Leaves.
    pub leaves: usize,
    /// Depth of the deepest leaf.
    pub depth: u32,
    /// Most triangles in a leaf.
    pub max_leaf_triangles: u32,
    /// Bytes of the node and triangle arrays (all eight orders, in the octree).
    pub bytes: usize,
    /// Seconds to build and flatten.
    pub build_seconds: f64,
}
