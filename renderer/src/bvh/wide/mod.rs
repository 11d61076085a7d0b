//! The wide BVH: four or eight children per node, their boxes stored plane by plane so that
//! one SIMD instruction tests them all, built with binned SAH, traversed front to back with a
//! small fixed stack.
//!
//! *Build* (`build`): a binary tree by the surface area heuristic over binned centroids
//! (16 bins on each axis), its large nodes split in parallel as tasks of raylb's own
//! work-stealing balancer; the result depends only on the input, never on the worker count.
//! Then collapsed to [`Width`] children per node: the wide tree of least summed node area that
//! the binary tree allows, found bottom-up as the binary tree is built.
//! ([`BvhSplit::Octant`](super::BvhSplit::Octant) splits by the octree's rule instead, to
//! measure that rule in this layout.)
//! Eight where the processor has AVX2 and FMA (one register holds a plane of all eight boxes),
//! four (SSE) elsewhere.
//!
//! *Layout* ([`WideNode`]): the children's boxes as six planes of `W` lanes (`min x`, `max x`,
//! `min y`, …), then each child's reference (a node index, or the first [`TrianglePack`] of
//! a leaf) and its triangle count (0 for an inner node): 128 bytes for four, 256 for eight.
//! A leaf's triangles are tested eight at a time (`pack`).
//!
//! *Traverse* (`traverse`): the ray's per-axis near and far planes follow from the signs of
//! its direction; a node's boxes are tested at once, and the children hit are visited nearest
//! first: the nearest next, the others (leaves and nodes alike) pushed far to near on a stack
//! of fixed size, and a child popped behind the closest hit so far is skipped.
//!
//! *Packets* (`packet`): up to sixteen rays traced together, each child box and each triangle
//! tested against all of them at once (a ray to a lane); every ray gets the bits the
//! single-ray traversal gives it.
//!
//! *GPU form* ([`WideBvh::to_gpu`], [`GpuWideBvh`]): the same tree as nodes of eight child
//! boxes quantized to bytes (the `layout` crate's `wide::WideNode`), which the CUDA header
//! traverses; its answers are checked against this module's traversal in
//! `tests/cuda_math.rs`.
//!
//! The closest hit is the octree's: the smallest `t`, equal `t` broken by the smaller original
//! index, each triangle tested by the same watertight test with the same padding, so every
//! structure, at either width, gives every pixel the same bytes.

mod build;
mod gpu;
pub(super) mod lanes;
mod pack;
mod packet;
mod traverse;

use std::num::NonZeroUsize;
use std::time::Instant;

use balancers::SpawnError;

use crate::geometry::{Aabb, Triangle};

use super::{BuildThreadError, BvhSettings, BvhStats};

pub use gpu::GpuWideBvh;
pub use pack::{LANES, TrianglePack};
pub use packet::{LaneMask, PACKET_BLOCK_COLUMNS, PACKET_LANES, PixelBlock, RayPacket};

/// Children per node.
///
/// ```
/// use renderer::bvh::wide::Width;
///
/// assert_eq!(Width::Four.children(), 4);
/// assert!(matches!(Width::best(), Width::Four | Width::Eight));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// Four: one SSE register holds a plane of every child's box.
    Four,
    /// Eight: one AVX register (or two SSE ones, where the processor lacks AVX2 or FMA).
    Eight,
}

impl Width {
    /// The width that traces fastest on this processor: eight where it has AVX2 and FMA
    /// (detected now, never assumed at compile time), else four.
    ///
    /// ```
    /// use renderer::bvh::wide::Width;
    ///
    /// let children = Width::best().children();
    /// assert!(children == 4 || children == 8);
    /// ```
    pub fn best() -> Self {
        if Simd::detected() >= Simd::Avx2 {
            Width::Eight
        } else {
            Width::Four
        }
    }

    /// Children per node.
    ///
    /// ```
    /// use renderer::bvh::wide::Width;
    ///
    /// assert_eq!(Width::Eight.children(), 8);
    /// ```
    pub fn children(self) -> usize {
        match self {
            Width::Four => 4,
            Width::Eight => 8,
        }
    }
}

/// The vector instructions an eight-wide tree's traversals are compiled for, each detected on
/// the processor when the tree is built (never assumed at compile time). Every level gives
/// every ray the same bits: they differ in speed alone.
///
/// ```
/// use renderer::bvh::wide::Simd;
///
/// assert!(Simd::detected() >= Simd::Baseline);
/// assert_eq!(Simd::Avx2.name(), "avx2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Simd {
    /// Four lanes: SSE on x86-64, elsewhere whatever the compiler makes of four-lane code; an
    /// eight-wide node is tested as two halves.
    Baseline,
    /// AVX2 (with FMA, which every processor with AVX2 has but a virtual machine may hide):
    /// eight lanes in one register, sixteen registers.
    Avx2,
    /// AVX-512 (its foundation and vector-length extensions) on the same eight lanes: thirty-two
    /// registers, which hold the ray, the node and the triangle test at once where sixteen
    /// spilled, and comparisons into mask registers; a packet's sixteen rays in one register.
    Avx512,
}

impl Simd {
    /// The best level this processor has.
    ///
    /// ```
    /// use renderer::bvh::wide::Simd;
    ///
    /// let simd = Simd::detected();
    /// assert!(["sse", "128-bit", "avx2", "avx512"].contains(&simd.name()));
    /// ```
    pub fn detected() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            // Every feature the AVX-512 traversals are compiled with, those `avx512f` brings
            // along included (`fma`, `f16c`): a virtual machine may hide any of them.
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("f16c")
            {
                return Simd::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Simd::Avx2;
            }
        }
        Simd::Baseline
    }

    /// The level a node's box test of `width` runs on: four children take SSE's four lanes
    /// whatever the processor has.
    fn for_boxes_of(self, width: Width) -> Self {
        match width {
            Width::Four => Simd::Baseline,
            Width::Eight => self,
        }
    }

    /// The name reports give it: `sse` (`128-bit` off x86-64), `avx2` or `avx512`.
    ///
    /// ```
    /// use renderer::bvh::wide::Simd;
    ///
    /// assert_eq!(Simd::Avx512.name(), "avx512");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Simd::Baseline if cfg!(target_arch = "x86_64") => "sse",
            Simd::Baseline => "128-bit",
            Simd::Avx2 => "avx2",
            Simd::Avx512 => "avx512",
        }
    }
}

/// One node: the boxes of its (up to) `W` children, plane by plane, and what each child is.
///
/// ```
/// # use renderer::bvh::{BvhSettings, WideBvh};
/// # use renderer::geometry::Triangle;
/// # use renderer::math::Vec3;
/// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
/// # let triangles: Vec<Triangle> = (0..16)
/// #     .map(|i| {
/// #         let x = i as f32;
/// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
/// #     })
/// #     .collect();
/// use renderer::bvh::wide::{EMPTY, Nodes, Width};
///
/// let bvh = WideBvh::build_with_width(&triangles, BvhSettings::default(), Width::Four);
/// let Nodes::Four(nodes) = bvh.nodes() else { panic!("four children a node") };
/// let root = &nodes[0];
/// for lane in 0..4 {
///     let (min_x, max_x) = (root.planes[0][lane], root.planes[1][lane]);
///     // An unused slot has an empty box; a used one, a box around its triangles.
///     assert_eq!(root.child[lane] == EMPTY, min_x > max_x);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct WideNode<const W: usize> {
    /// `min x, max x, min y, max y, min z, max z` of the children's padded boxes; an unused
    /// slot has an empty box (`min = +∞`, `max = −∞`), which no ray enters.
    pub planes: [[f32; W]; 6],
    /// Per child: the index of an inner node, or the first [`TrianglePack`] of a leaf (which
    /// holds its triangles in `count.div_ceil(LANES)` consecutive packs); [`EMPTY`] for an
    /// unused slot.
    pub child: [u32; W],
    /// Per child: 0 for an inner node, else the leaf's triangle count.
    pub count: [u32; W],
}

const _: () = assert!(size_of::<WideNode<4>>() == 128 && size_of::<WideNode<8>>() == 256);

// SAFETY: a `WideNode` is floats and integers only (`repr(C)`), for which all-zero bits are a
// value: the build allocates its nodes zeroed, then writes each one.
unsafe impl<const W: usize> bytemuck::Zeroable for WideNode<W> {}

/// The nodes of a wide BVH, at its width; the root is node 0.
///
/// ```
/// # use renderer::bvh::{BvhSettings, WideBvh};
/// # use renderer::geometry::Triangle;
/// # use renderer::math::Vec3;
/// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
/// # let triangles: Vec<Triangle> = (0..16)
/// #     .map(|i| {
/// #         let x = i as f32;
/// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
/// #     })
/// #     .collect();
/// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
/// use renderer::bvh::wide::{Nodes, Width};
///
/// let bvh = WideBvh::build_with_width(&triangles, BvhSettings::default(), Width::Eight);
/// assert!(matches!(bvh.nodes(), Nodes::Eight(_)));
/// assert_eq!(bvh.nodes().len(), bvh.stats().nodes);
/// ```
#[derive(Debug)]
pub enum Nodes {
    /// Four children a node.
    Four(Vec<WideNode<4>>),
    /// Eight children a node.
    Eight(Vec<WideNode<8>>),
}

impl Nodes {
    /// How many.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.nodes().len(), bvh.stats().nodes);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            Nodes::Four(n) => n.len(),
            Nodes::Eight(n) => n.len(),
        }
    }

    /// Whether there are none (never, for a built tree).
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// assert!(!bvh.nodes().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The box of child `lane` of node `node` (`min`, `max`), or `None` for an unused slot.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// // The root's first child is used, and lies inside the triangles' box grown by the padding.
    /// let (min, _max) = bvh.nodes().child_box(0, 0).unwrap();
    /// assert!(min[0] >= -bvh.padding() && min[2] >= -bvh.padding());
    /// assert_eq!(bvh.nodes().child_box(0, 8), None);
    /// ```
    pub fn child_box(&self, node: usize, lane: usize) -> Option<([f32; 3], [f32; 3])> {
        fn get<const W: usize>(n: &WideNode<W>, lane: usize) -> Option<([f32; 3], [f32; 3])> {
            let p = &n.planes;
            (lane < W && n.child[lane] != EMPTY).then(|| {
                (
                    [p[0][lane], p[2][lane], p[4][lane]],
                    [p[1][lane], p[3][lane], p[5][lane]],
                )
            })
        }
        match self {
            Nodes::Four(n) => get(&n[node], lane),
            Nodes::Eight(n) => get(&n[node], lane),
        }
    }
}

/// The box around the children of `nodes`' root, as [`WideNode::planes`] orders a box's
/// planes: the lowest of their lower planes and the highest of their upper ones.
fn root_box(nodes: &Nodes) -> [f32; 6] {
    let mut planes = [[f32::INFINITY, f32::NEG_INFINITY]; 3];
    for (min, max) in (0..8).filter_map(|lane| nodes.child_box(0, lane)) {
        for axis in 0..3 {
            planes[axis][0] = planes[axis][0].min(min[axis]);
            planes[axis][1] = planes[axis][1].max(max[axis]);
        }
    }
    let [x, y, z] = planes;
    [x[0], x[1], y[0], y[1], z[0], z[1]]
}

/// The reference of an unused child slot.
pub const EMPTY: u32 = u32::MAX;

/// A wide BVH over a triangle list.
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
/// use renderer::bvh::{BvhSettings, WideBvh};
/// use renderer::geometry::Ray;
///
/// let bvh = WideBvh::build(&triangles, BvhSettings::default());
/// let hit = bvh.closest_hit(&Ray::new(Vec3::new(2.25, 0.25, 1.0), -Vec3::Z)).unwrap();
/// assert_eq!(hit.original, 2);
/// ```
#[derive(Debug)]
pub struct WideBvh {
    /// The nodes; the root is node 0.
    nodes: Nodes,
    /// The instructions the traversals run on (the processor has them): the eight-wide box
    /// tests, and packets at both widths.
    simd: Simd,
    /// The triangles in leaf order: each leaf's triangles are contiguous.
    triangles: Vec<Triangle>,
    /// The same triangles eight at a time, each leaf's in packs of its own: what the traversal
    /// tests.
    packs: Vec<TrianglePack>,
    /// `ids[k]`: the index in the input of the triangle stored at `k`.
    ids: Vec<u32>,
    /// How far every box is grown beyond its triangles (the octree's padding, for the same
    /// triangles: see [`super::padding_for`]).
    padding: f32,
    /// The box of all triangles.
    bounds: Aabb,
    /// The box around the root's children, as [`WideNode::planes`] orders a box's planes: a
    /// ray that misses it misses them all, which a packet tests first.
    root_box: [f32; 6],
    /// The largest magnitude of a plane along each axis, over every node's boxes (the root
    /// box's): what bounds the rounding of the fused box test (`traverse::WideRay`).
    plane_reach: [f32; 3],
    stats: BvhStats,
}

impl WideBvh {
    /// Builds the hierarchy over `triangles` (indexed by their position, the tie-breaking index
    /// of the closest-hit rule) on the calling thread; `settings.leaf_size` bounds a leaf's
    /// triangles. Nodes have `settings.width` children, or as many as trace fastest here.
    ///
    /// # Panics
    /// On no triangles, a leaf size out of `1..=MAX_LEAF_SIZE`, or more than `MAX_TRIANGLES`
    /// triangles; callers validate all three first (a scene has at least one triangle).
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
    /// use renderer::bvh::{BvhSettings, WideBvh};
    ///
    /// let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.stats().structure, "wide");
    /// assert_eq!(bvh.triangles().len(), 16);
    /// ```
    pub fn build(triangles: &[Triangle], settings: BvhSettings) -> Self {
        Self::build_with_width(
            triangles,
            settings,
            settings.width.unwrap_or_else(Width::best),
        )
    }

    /// [`build`](Self::build) with `width` children per node, whatever the processor.
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
    /// use renderer::bvh::wide::{Width, WideBvh};
    /// use renderer::bvh::BvhSettings;
    ///
    /// let bvh = WideBvh::build_with_width(&triangles, BvhSettings::default(), Width::Four);
    /// assert_eq!((bvh.width(), bvh.stats().children), (Width::Four, 4));
    /// ```
    pub fn build_with_width(triangles: &[Triangle], settings: BvhSettings, width: Width) -> Self {
        Self::build_parts(triangles, settings, width, NonZeroUsize::MIN)
            .expect("one worker builds on the calling thread, starting none")
    }

    /// [`build`](Self::build) on `workers` workers of raylb's work-stealing balancer, started
    /// for the build and joined before it returns; the same tree whatever their number.
    ///
    /// # Errors
    /// When the operating system refuses to start one of them.
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
    /// use renderer::bvh::{BvhSettings, WideBvh};
    /// use std::num::NonZeroUsize;
    ///
    /// let bvh = WideBvh::build_on(&triangles, BvhSettings::default(), NonZeroUsize::new(2).unwrap())?;
    /// // The same tree whatever the number of workers.
    /// let alone = WideBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.original_indices(), alone.original_indices());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build_on(
        triangles: &[Triangle],
        settings: BvhSettings,
        workers: NonZeroUsize,
    ) -> Result<Self, BuildThreadError> {
        let width = settings.width.unwrap_or_else(Width::best);
        Self::build_parts(triangles, settings, width, workers).map_err(BuildThreadError::from)
    }

    fn build_parts(
        triangles: &[Triangle],
        settings: BvhSettings,
        width: Width,
        workers: NonZeroUsize,
    ) -> Result<Self, SpawnError> {
        assert!(!triangles.is_empty(), "a hierarchy over no triangles");
        assert!(
            (1..=super::MAX_LEAF_SIZE).contains(&settings.leaf_size),
            "leaf size out of range"
        );
        assert!(
            triangles.len() <= super::MAX_TRIANGLES,
            "too many triangles for the node format"
        );
        let simd = Simd::detected();
        let start = Instant::now();
        let built = build::build(
            triangles,
            settings.leaf_size as usize,
            settings.split,
            width,
            workers,
        )?;
        let build_time = start.elapsed();
        let stats = BvhStats {
            structure: "wide",
            children: width.children() as u32,
            simd: simd.for_boxes_of(width).name(),
            triangles: triangles.len(),
            nodes: built.nodes.len(),
            leaves: built.leaves,
            depth: built.depth,
            max_leaf_triangles: built.max_leaf_triangles,
            bytes: built.node_bytes
                + built.packs.len() * size_of::<TrianglePack>()
                + built.triangles.len() * (size_of::<Triangle>() + size_of::<u32>()),
            build_time,
        };
        let root_box = root_box(&built.nodes);
        Ok(Self {
            nodes: built.nodes,
            root_box,
            plane_reach: std::array::from_fn(|axis| {
                root_box[2 * axis].abs().max(root_box[2 * axis + 1].abs())
            }),
            simd,
            triangles: built.triangles,
            packs: built.packs,
            ids: built.ids,
            padding: built.padding,
            bounds: built.bounds,
            stats,
        })
    }

    /// The nodes; the root is node 0.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.nodes().len(), bvh.stats().nodes);
    /// ```
    pub fn nodes(&self) -> &Nodes {
        &self.nodes
    }

    /// The same tree, traversed with no more than the instructions of `simd` even where the
    /// processor has more: for comparing the paths, the portable one (two SSE halves) among
    /// them. A four-wide tree tests its boxes on SSE whatever is asked, its packets as asked;
    /// a level the processor lacks is never taken.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::wide::{Simd, Width};
    ///
    /// let eight = WideBvh::build_with_width(&triangles, BvhSettings::default(), Width::Eight);
    /// let portable = WideBvh::build_with_width(&triangles, BvhSettings::default(), Width::Eight)
    ///     .limited_to(Simd::Baseline);
    /// assert_eq!(portable.stats().simd, Simd::Baseline.name());
    /// assert_eq!(portable.closest_hit(&down), eight.closest_hit(&down));
    /// ```
    pub fn limited_to(mut self, simd: Simd) -> Self {
        self.simd = self.simd.min(simd);
        self.stats.simd = self.simd.for_boxes_of(self.width()).name();
        self
    }

    /// Children per node.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.width().children() as u32, bvh.stats().children);
    /// ```
    pub fn width(&self) -> Width {
        match self.nodes {
            Nodes::Four(_) => Width::Four,
            Nodes::Eight(_) => Width::Eight,
        }
    }

    /// The triangles in leaf order; [`BvhHit::index`](super::BvhHit::index) indexes this.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.triangles().len(), 16);
    /// ```
    pub fn triangles(&self) -> &[Triangle] {
        &self.triangles
    }

    /// The leaves' triangles in packs of four; [`WideNode::child`] indexes this for a leaf.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// use renderer::bvh::wide::LANES;
    ///
    /// // Sixteen triangles take at least four packs of four.
    /// assert!(bvh.packs().len() >= triangles.len() / LANES);
    /// ```
    pub fn packs(&self) -> &[TrianglePack] {
        &self.packs
    }

    /// For each triangle in leaf order, its index in the input of [`build`](Self::build).
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// let ids = bvh.original_indices();
    /// assert_eq!(bvh.triangles()[0], triangles[ids[0] as usize]);
    /// ```
    pub fn original_indices(&self) -> &[u32] {
        &self.ids
    }

    /// How far every box is grown beyond its triangles; the triangle test must be given this
    /// value to agree with the traversal.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// let octree = renderer::bvh::OctreeBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.padding(), octree.padding());
    /// ```
    pub fn padding(&self) -> f32 {
        self.padding
    }

    /// The box of all triangles (without the padding).
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.bounds().min, Vec3::ZERO);
    /// ```
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Build figures.
    ///
    /// ```
    /// # use renderer::bvh::{BvhSettings, WideBvh};
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let bvh = WideBvh::build(&triangles, BvhSettings::default());
    /// assert_eq!(bvh.stats().triangles, 16);
    /// ```
    pub fn stats(&self) -> &BvhStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::BvhSplit;
    use crate::geometry::TriangleExt;
    use crate::math::Vec3;

    /// A deterministic source of floats in `[-1, 1)`: the wide BVH's tests' random input.
    pub(super) fn floats(seed: u64) -> impl FnMut() -> f32 {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        }
    }

    /// A deterministic scatter of small triangles, with a pile of copies of one of them.
    fn triangles(n: usize) -> Vec<Triangle> {
        let mut next = floats(0x2545_f491_4f6c_dd1d);
        let mut out: Vec<Triangle> = (0..n)
            .map(|_| {
                let c = Vec3::new(next(), next(), next());
                let mut d = |s: f32| c + Vec3::new(s * next(), s * next(), s * next()) * 0.05;
                Triangle {
                    v: [d(1.0), d(1.0), d(1.0)],
                }
            })
            .collect();
        let copy = out[0];
        out.extend(std::iter::repeat_n(copy, n / 4));
        out
    }

    /// An eight-wide tree runs on the best instructions the processor has, and reports them;
    /// `limited_to` lowers the level, never raises it, and a four-wide tree's box test is SSE's
    /// whatever is asked.
    #[test]
    fn the_instructions_traversed_on_are_the_processors_best_or_those_asked() {
        let t = triangles(200);
        let eight = |simd| {
            WideBvh::build_with_width(&t, BvhSettings::default(), Width::Eight).limited_to(simd)
        };
        let best = Simd::detected();
        assert_eq!(eight(Simd::Avx512).simd, best);
        assert_eq!(eight(Simd::Avx512).stats().simd, best.name());
        for simd in [Simd::Baseline, Simd::Avx2, Simd::Avx512] {
            let held = eight(simd);
            assert_eq!(held.simd, simd.min(best), "{simd:?}");
            assert_eq!(held.stats().simd, simd.min(best).name(), "{simd:?}");
            let four =
                WideBvh::build_with_width(&t, BvhSettings::default(), Width::Four).limited_to(simd);
            assert_eq!(four.stats().simd, Simd::Baseline.name(), "{simd:?}");
            assert_eq!(four.simd, simd.min(best), "{simd:?}: the packets' level");
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512f")
        {
            assert_eq!(best, Simd::Avx512);
        }
    }

    /// Walks the tree from the root, checking every node's shape, and returns how many
    /// triangles its leaves hold.
    fn walk(bvh: &WideBvh, node: u32, leaf_size: u32, seen: &mut [bool]) -> usize {
        match bvh.nodes() {
            Nodes::Four(nodes) => walk_in(bvh, nodes, node, leaf_size, seen),
            Nodes::Eight(nodes) => walk_in(bvh, nodes, node, leaf_size, seen),
        }
    }

    fn walk_in<const W: usize>(
        bvh: &WideBvh,
        nodes: &[WideNode<W>],
        node: u32,
        leaf_size: u32,
        seen: &mut [bool],
    ) -> usize {
        let n = &nodes[node as usize];
        let mut total = 0;
        for lane in 0..W {
            if n.child[lane] == EMPTY {
                assert!(
                    n.planes[0][lane] > n.planes[1][lane],
                    "an unused slot is empty"
                );
                continue;
            }
            let (min, max) = (
                Vec3::new(n.planes[0][lane], n.planes[2][lane], n.planes[4][lane]),
                Vec3::new(n.planes[1][lane], n.planes[3][lane], n.planes[5][lane]),
            );
            if n.count[lane] == 0 {
                assert!(n.child[lane] > node, "children come after their parent");
                total += walk_in(bvh, nodes, n.child[lane], leaf_size, seen);
            } else {
                assert!(n.count[lane] <= leaf_size, "a leaf holds at most leaf_size");
                let count = n.count[lane] as usize;
                let first_pack = n.child[lane] as usize;
                let packs = &bvh.packs()[first_pack..first_pack + count.div_ceil(LANES)];
                let first = packs[0].first as usize;
                let range = first..first + count;
                for (k, triangle) in range.clone().zip(&bvh.triangles()[range]) {
                    assert!(!seen[k], "triangle {k} in two leaves");
                    seen[k] = true;
                    let pack = &packs[(k - first) / LANES];
                    assert_eq!(pack.first as usize + (k - first) % LANES, k);
                    assert_eq!(pack.triangle((k - first) % LANES), *triangle);
                    let (tmin, tmax) = triangle.padded_bounds(bvh.padding());
                    assert!(
                        Vec3::from(tmin).cmpge(min).all() && Vec3::from(tmax).cmple(max).all(),
                        "a leaf's box holds its triangles' padded boxes"
                    );
                }
                total += n.count[lane] as usize;
            }
        }
        total
    }

    #[test]
    fn every_triangle_is_in_one_leaf_of_a_bounded_tree() {
        let input = triangles(5000);
        let widths = [Width::Four, Width::Eight];
        let splits = [BvhSplit::Sah, BvhSplit::Octant];
        for (width, split) in widths.into_iter().flat_map(|w| splits.map(|s| (w, s))) {
            for leaf_size in [1, 4, 31] {
                let settings = BvhSettings {
                    leaf_size,
                    split,
                    ..BvhSettings::default()
                };
                let bvh = WideBvh::build_with_width(&input, settings, width);
                assert_eq!(bvh.width(), width);
                let mut seen = vec![false; input.len()];
                assert_eq!(walk(&bvh, 0, leaf_size, &mut seen), input.len());
                assert!(seen.iter().all(|&s| s));
                let mut ids = bvh.original_indices().to_vec();
                ids.sort_unstable();
                assert_eq!(ids, (0..input.len() as u32).collect::<Vec<_>>());
                let s = bvh.stats();
                assert_eq!((s.structure, s.triangles), ("wide", input.len()));
                assert!(
                    (s.depth as usize) * (width.children() - 1) < build::STACK_SIZE,
                    "depth {}",
                    s.depth
                );
            }
        }
    }

    #[test]
    fn the_tree_does_not_depend_on_the_worker_count() {
        // Large enough for both stages to be shared out, and built on more workers than this
        // machine has cores.
        let input = triangles(30_000);
        for (width, split, leaf_size) in [
            (Width::Four, BvhSplit::Sah, 4),
            (Width::Eight, BvhSplit::Sah, 4),
            (Width::Eight, BvhSplit::Sah, 31),
            (Width::Eight, BvhSplit::Octant, 4),
        ] {
            let settings = BvhSettings {
                width: Some(width),
                split,
                leaf_size,
                ..BvhSettings::default()
            };
            let build = |workers: usize| {
                WideBvh::build_on(&input, settings, NonZeroUsize::new(workers).unwrap())
                    .expect("the workers start")
            };
            let one = build(1);
            for workers in [2, 3, 16] {
                let many = build(workers);
                match (one.nodes(), many.nodes()) {
                    (Nodes::Four(a), Nodes::Four(b)) => assert!(a == b, "{workers} workers"),
                    (Nodes::Eight(a), Nodes::Eight(b)) => assert!(a == b, "{workers} workers"),
                    _ => panic!("one width asked for, two built"),
                }
                assert!(one.packs() == many.packs(), "{workers} workers");
                assert!(one.triangles() == many.triangles(), "{workers} workers");
                assert_eq!(one.original_indices(), many.original_indices());
                let (a, b) = (one.stats(), many.stats());
                assert_eq!(
                    (a.nodes, a.leaves, a.depth, a.max_leaf_triangles),
                    (b.nodes, b.leaves, b.depth, b.max_leaf_triangles)
                );
            }
        }
    }

    #[test]
    fn a_single_triangle_hangs_under_a_root() {
        let input = triangles(1)[..1].to_vec();
        for width in [Width::Four, Width::Eight] {
            let bvh = WideBvh::build_with_width(&input, BvhSettings::default(), width);
            assert_eq!(bvh.nodes().len(), 1);
            assert!(bvh.nodes().child_box(0, 0).is_some());
            assert!((1..width.children()).all(|lane| bvh.nodes().child_box(0, lane).is_none()));
        }
    }
}
