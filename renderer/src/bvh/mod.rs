//! The octree-built bounding volume hierarchy, flattened with skip pointers.
//!
//! *Build* (`build`): a node's triangles are split by the octant of their centroid relative
//! to the centre of the node's centroid bounds, giving up to eight children; each triangle
//! lands in exactly one leaf and every node's box is tight around its own triangles. Splitting
//! stops at the leaf size; triangles whose centroids coincide, or that reach the maximum depth,
//! are split by their input order into at most eight runs instead, so that no node has more
//! than eight children and no leaf more than the leaf size, whatever the geometry.
//!
//! *Flatten* (`flat`): the tree is written in pre-order into one array of 32-byte nodes.
//! A node's first child is always the next node; each node also holds its *skip* index, the
//! next node in pre-order after its whole subtree (the array's length at the end). Eight such
//! arrays are written, one per octant of ray direction, each with children sorted nearest
//! first for rays of that octant, so a ray finds close hits early and skips boxes behind them.
//!
//! *Traverse* (`traverse`): stackless. Box hit → go down (or test the leaf's triangles and
//! go to skip); box missed, or entirely behind the closest hit so far → go to skip.
//!
//! The closest hit is order-free (the smallest `t`, equal `t` broken by the smaller original
//! triangle index), so the eight orders, brute force and any other structure all agree.

mod build;
mod flat;
mod threads;
mod traverse;
pub mod wide;

use std::time::{Duration, Instant};

use crate::geometry::{Aabb, Triangle};

pub use layout::{FlatNode, MAX_LEAF_SIZE, MAX_TRIANGLES};
pub use threads::BuildThreadError;
pub(crate) use threads::{on_threads, thread_count as build_thread_count};
pub use traverse::{Blockers, BvhHit, NoCounters, TestCounts, TraversalCounters};
pub use wide::{WideBvh, Width};

use traverse::Closest;

/// How far the boxes of a hierarchy over triangles bounded by `bounds` are grown beyond their
/// triangles: the same for every structure built over the same triangles, so that the
/// triangle test, which is given it, reports the same distances in all of them.
pub(crate) fn padding_for(bounds: &Aabb) -> f32 {
    bounds.max_abs() * flat::BOX_PADDING
}

/// Settings of the octree build.
///
/// ```
/// use renderer::bvh::{BvhSettings, BvhSplit};
///
/// let settings = BvhSettings { leaf_size: 8, ..BvhSettings::default() };
/// assert_eq!((settings.max_depth, settings.split), (24, BvhSplit::Sah));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BvhSettings {
    /// A node with at most this many triangles becomes a leaf (1 to [`MAX_LEAF_SIZE`]).
    pub leaf_size: u32,
    /// Nodes at this depth are no longer split by octant (the root has depth 0): they become
    /// leaves, or, with more than `leaf_size` triangles, are split by input order below it.
    pub max_depth: u32,
    /// Children per node of the wide BVH (the octree has up to eight whatever this says);
    /// `None`: [`Width::best`] for this processor.
    pub width: Option<wide::Width>,
    /// How the wide BVH splits a node (the octree always splits by octant).
    pub split: BvhSplit,
}

/// How the wide BVH's build splits a node.
///
/// ```
/// use balancers::Choice;
/// use renderer::bvh::BvhSplit;
///
/// assert_eq!(BvhSplit::from_keyword("octant"), Some(BvhSplit::Octant));
/// assert_eq!(BvhSplit::default().keyword(), "sah");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BvhSplit {
    /// By the surface area heuristic over binned centroids: the fast one.
    #[default]
    Sah,
    /// By the octant of each centroid around the centre of the centroid bounds, as the
    /// octree does, leaves at the leaf size: the thesis's split in the wide layout, to
    /// measure the split apart from the layout and traversal.
    Octant,
}

balancers::choices!(BvhSplit {
    Sah => "sah", "By the surface area heuristic over binned centroids: the fast one.";
    Octant => "octant", "By the octant of each centroid around the centre of the centroid bounds, as the octree does: the thesis's split in the wide layout.";
});

impl Default for BvhSettings {
    /// Leaf size 4 traced fastest of 4, 8 and 16 on the meshes we measured (BENCHMARKS.md).
    /// Depth 24 halves the centroid bounds 24 times, far finer than float-accurate scenes need,
    /// and only stops pathological clusters.
    fn default() -> Self {
        Self {
            leaf_size: 4,
            max_depth: 24,
            width: None,
            split: BvhSplit::Sah,
        }
    }
}

/// Figures about a built hierarchy.
///
/// ```
/// # use renderer::bvh::{BvhSettings, OctreeBvh};
/// # use renderer::geometry::Triangle;
/// # use renderer::math::Vec3;
/// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
/// # let triangles: Vec<Triangle> = (0..16)
/// #     .map(|i| {
/// #         let x = i as f32;
/// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
/// #     })
/// #     .collect();
/// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
/// let stats = bvh.stats();
/// assert_eq!((stats.structure, stats.triangles, stats.children), ("octree", 16, 8));
/// assert!(stats.max_leaf_triangles <= BvhSettings::default().leaf_size);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BvhStats {
    /// Which structure: `octree` or `wide`.
    pub structure: &'static str,
    /// Triangles stored.
    pub triangles: usize,
    /// The most children a node has: the wide BVH's width (4 or 8), the octree's 8.
    pub children: u32,
    /// The vector instructions that test a node's boxes for a single ray: `avx512`, `avx2`, or
    /// `sse` (the 128-bit baseline: on x86-64 SSE, elsewhere what the compiler makes of
    /// four-lane code, named `128-bit`); see [`wide::Simd`]. A four-wide tree's are SSE's,
    /// its packets' the best the processor has.
    pub simd: &'static str,
    /// Nodes: of the wide BVH, or of one of the octree's eight flattened orders (each has the
    /// same nodes).
    pub nodes: usize,
    /// Leaves (in the wide BVH, children that hold triangles).
    pub leaves: usize,
    /// Depth of the deepest leaf (the root has depth 0).
    pub depth: u32,
    /// Most triangles in one leaf.
    pub max_leaf_triangles: u32,
    /// Bytes of the node arrays (the octree's eight) plus the triangle and index arrays.
    pub bytes: usize,
    /// Time taken to build and flatten.
    pub build_time: Duration,
}

/// An octree-built BVH over a triangle list, flattened for stackless traversal.
///
/// ```
/// # use renderer::geometry::Triangle;
/// # use renderer::math::Vec3;
/// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
/// # let triangles: Vec<Triangle> = (0..16)
/// #     .map(|i| {
/// #         let x = i as f32;
/// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
/// #     })
/// #     .collect();
/// use renderer::bvh::{BvhSettings, OctreeBvh};
/// use renderer::geometry::Ray;
///
/// let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
/// let hit = bvh.closest_hit(&Ray::new(Vec3::new(2.25, 0.25, 1.0), -Vec3::Z)).unwrap();
/// assert_eq!(hit.original, 2);
/// ```
#[derive(Debug)]
pub struct OctreeBvh {
    /// One pre-order node array per ray-direction octant (bit `i` set: negative along axis `i`).
    orders: [Vec<FlatNode>; 8],
    /// The triangles in leaf order: each leaf's triangles are contiguous.
    triangles: Vec<Triangle>,
    /// `ids[k]`: the index in the input of the triangle stored at `k`.
    ids: Vec<u32>,
    /// How far every box is grown beyond its triangles (see `flat::BOX_PADDING`).
    padding: f32,
    /// The box of all triangles.
    bounds: Aabb,
    stats: BvhStats,
}

impl OctreeBvh {
    /// Builds the hierarchy over `triangles` (indexed by their position, which is the
    /// tie-breaking index of the closest-hit rule). Triangles must have finite coordinates;
    /// `settings.leaf_size` must be in `1..=MAX_LEAF_SIZE` and `max_depth` at least 1.
    ///
    /// Runs on the rayon pool it is called from (outside one, rayon's global pool);
    /// [`Accel::build`](crate::accel::Accel::build) gives it a pool of its own.
    ///
    /// # Panics
    /// On settings out of range, or more than `2^27` triangles; callers validate both first.
    ///
    /// ```
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// use renderer::bvh::{BvhSettings, OctreeBvh};
    ///
    /// let bvh = OctreeBvh::build(&triangles, BvhSettings { leaf_size: 2, ..Default::default() });
    /// assert_eq!(bvh.stats().triangles, 16);
    /// assert!(bvh.stats().max_leaf_triangles <= 2);
    /// ```
    pub fn build(triangles: &[Triangle], settings: BvhSettings) -> Self {
        assert!(
            (1..=MAX_LEAF_SIZE).contains(&settings.leaf_size),
            "leaf size out of range"
        );
        assert!(settings.max_depth >= 1, "maximum depth must be at least 1");
        assert!(
            triangles.len() <= MAX_TRIANGLES,
            "too many triangles for the node format"
        );
        let start = Instant::now();
        let tree = build::build(triangles, settings);
        let flat = flat::flatten(&tree, triangles);
        let build_time = start.elapsed();
        let node_bytes = 8 * flat.orders[0].len() * size_of::<FlatNode>();
        let stats = BvhStats {
            structure: "octree",
            children: 8,
            simd: "sse",
            triangles: triangles.len(),
            nodes: flat.orders[0].len(),
            leaves: flat.leaves,
            depth: flat.depth,
            max_leaf_triangles: flat.max_leaf_triangles,
            bytes: node_bytes + flat.triangles.len() * (size_of::<Triangle>() + size_of::<u32>()),
            build_time,
        };
        Self {
            orders: flat.orders,
            triangles: flat.triangles,
            ids: flat.ids,
            padding: flat.padding,
            bounds: flat.bounds,
            stats,
        }
    }

    /// The triangles in leaf order; [`BvhHit::index`] indexes this.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.triangles().len(), triangles.len());
    /// ```
    pub fn triangles(&self) -> &[Triangle] {
        &self.triangles
    }

    /// For each triangle in leaf order, its index in the input of [`build`](Self::build).
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// let ids = bvh.original_indices();
    /// assert_eq!(bvh.triangles()[0], triangles[ids[0] as usize]);
    /// ```
    pub fn original_indices(&self) -> &[u32] {
        &self.ids
    }

    /// The flattened nodes for rays whose direction lies in `octant` (bit `i` set: negative
    /// along axis `i`).
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// // Each octant's order holds the same nodes, sorted differently.
    /// assert_eq!(bvh.nodes(0).len(), bvh.nodes(7).len());
    /// assert_eq!(bvh.nodes(0).len(), bvh.stats().nodes);
    /// ```
    pub fn nodes(&self, octant: usize) -> &[FlatNode] {
        &self.orders[octant]
    }

    /// How far every box is grown beyond its triangles; the triangle test must be given this
    /// value ([`TriangleExt::intersect`](crate::geometry::TriangleExt::intersect)) to agree
    /// with the traversal.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// // A tiny fraction of the largest coordinate.
    /// assert!(bvh.padding() > 0.0 && bvh.padding() < 16.0 * 1e-3);
    /// ```
    pub fn padding(&self) -> f32 {
        self.padding
    }

    /// The box of all triangles (without the padding).
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.bounds().max, Vec3::new(16.0, 1.0, 0.0));
    /// ```
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Build figures.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, OctreeBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.stats().structure, "octree");
    /// ```
    pub fn stats(&self) -> &BvhStats {
        &self.stats
    }
}
