//! The octree build: split by the octant of each triangle's centroid.

use rayon::prelude::*;

use crate::geometry::{Aabb, Triangle, TriangleExt};
use crate::math::Vec3;

use super::BvhSettings;

/// A node of the tree before flattening.
#[derive(Debug)]
pub(super) struct BuildNode {
    /// Tight box around every triangle below this node.
    pub(super) bounds: Aabb,
    pub(super) kind: BuildKind,
}

#[derive(Debug)]
pub(super) enum BuildKind {
    /// Input indices of the triangles of a leaf, at most the leaf size of them.
    Leaf(Vec<u32>),
    /// Two to eight children: in octant order (octant `o` has bit `i` set when above the split
    /// on axis `i`), or, for triangles an octant split cannot or may not separate, groups of
    /// whole leaves in input order ([`Input::split_by_index`]).
    Inner(Vec<BuildNode>),
}

/// The most children of a node: the eight octants of a split, which an index split keeps to.
const MAX_CHILDREN: usize = 8;

/// Below this many triangles a node's subtrees are built on the calling thread: spreading
/// smaller nodes over the pool costs more in task overhead than it saves.
const PARALLEL_THRESHOLD: usize = 4096;

struct Input<'a> {
    triangles: &'a [Triangle],
    centroids: Vec<Vec3>,
    settings: BvhSettings,
}

/// Builds the octree over `triangles`. The result depends only on the input and the settings,
/// never on the number of threads: partitions are stable, children keep octant order, and an
/// index split cuts at positions fixed by the count alone.
///
/// Whatever the geometry, no node has more than eight children and no leaf more than the leaf
/// size: 200,000 copies of one triangle make a tree of depth 6, not one node with 50,000
/// leaves under it.
pub(super) fn build(triangles: &[Triangle], settings: BvhSettings) -> BuildNode {
    let centroids = triangles.par_iter().map(Triangle::centroid).collect();
    let input = Input {
        triangles,
        centroids,
        settings,
    };
    let all: Vec<u32> = (0..triangles.len() as u32).collect();
    input.node(all, 0)
}

impl Input<'_> {
    fn bounds(&self, items: &[u32]) -> Aabb {
        items.iter().fold(Aabb::EMPTY, |b, &i| {
            b.union(self.triangles[i as usize].bounds())
        })
    }

    fn node(&self, items: Vec<u32>, depth: u32) -> BuildNode {
        let bounds = self.bounds(&items);
        if items.len() <= self.settings.leaf_size as usize || depth >= self.settings.max_depth {
            return self.split_by_index(&items, bounds);
        }
        let split = items
            .iter()
            .fold(Aabb::EMPTY, |b, &i| b.grow(self.centroids[i as usize]))
            .center();
        let mut octants: [Vec<u32>; 8] = Default::default();
        for &i in &items {
            let c = self.centroids[i as usize];
            let octant = usize::from(c.x > split.x)
                | usize::from(c.y > split.y) << 1
                | usize::from(c.z > split.z) << 2;
            octants[octant].push(i);
        }
        let groups: Vec<Vec<u32>> = octants.into_iter().filter(|g| !g.is_empty()).collect();
        if groups.len() == 1 {
            // Every centroid fell on one side on all three axes: they coincide (up to the
            // rounding of the split point), and no octant split can separate them.
            return self.split_by_index(&items, bounds);
        }
        let children = if items.len() > PARALLEL_THRESHOLD {
            groups
                .into_par_iter()
                .map(|g| self.node(g, depth + 1))
                .collect()
        } else {
            groups
                .into_iter()
                .map(|g| self.node(g, depth + 1))
                .collect()
        };
        BuildNode {
            bounds,
            kind: BuildKind::Inner(children),
        }
    }

    /// A leaf, or, when `items` exceeds the leaf size (its triangles' centroids coincide, or
    /// the depth limit is reached), a node whose children split `items` by position into at
    /// most eight runs of whole leaves, each split again the same way: the fan-out and the leaf
    /// size stay bounded, and the depth grows by the base-8 logarithm of the leaves needed.
    ///
    /// Every run but the last holds a power of eight of full leaves, the largest that leaves at
    /// least two runs: each is then a complete tree of eight children per node, and only the
    /// nodes along the last run's path have fewer. That is the fewest inner nodes (about one
    /// per seven leaves) a ray that enters them all must test; equal runs (`leaves / 8` each)
    /// would leave nodes of two children near the leaves and half as many inner nodes again.
    /// Runs keep input order, which is what makes the result independent of the thread count.
    fn split_by_index(&self, items: &[u32], bounds: Aabb) -> BuildNode {
        let size = self.settings.leaf_size as usize;
        if items.len() <= size {
            return BuildNode {
                bounds,
                kind: BuildKind::Leaf(items.to_vec()),
            };
        }
        let leaves = items.len().div_ceil(size);
        let mut leaves_per_run = 1;
        while leaves_per_run * MAX_CHILDREN < leaves {
            leaves_per_run *= MAX_CHILDREN;
        }
        let run = leaves_per_run * size;
        let child = |run: &[u32]| self.split_by_index(run, self.bounds(run));
        let children = if items.len() > PARALLEL_THRESHOLD {
            items.par_chunks(run).map(child).collect()
        } else {
            items.chunks(run).map(child).collect()
        };
        BuildNode {
            bounds,
            kind: BuildKind::Inner(children),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::BvhSplit;

    /// What the shape checks found: triangles seen in leaves, and the tree's depth.
    #[derive(Debug, Default)]
    struct Shape {
        seen: Vec<u32>,
        depth: u32,
    }

    /// Checks every node below `node`: two to eight children or one leaf of at most
    /// `leaf_size` triangles, each box tight around its triangles.
    fn walk(input: &Input<'_>, node: &BuildNode, depth: u32, shape: &mut Shape) {
        shape.depth = shape.depth.max(depth);
        match &node.kind {
            BuildKind::Leaf(items) => {
                assert!(
                    (1..=input.settings.leaf_size as usize).contains(&items.len()),
                    "a leaf of {} triangles at depth {depth}",
                    items.len()
                );
                assert_eq!(node.bounds, input.bounds(items));
                shape.seen.extend(items);
            }
            BuildKind::Inner(children) => {
                assert!(
                    (2..=MAX_CHILDREN).contains(&children.len()),
                    "a node of {} children at depth {depth}",
                    children.len()
                );
                let first = shape.seen.len();
                for child in children {
                    walk(input, child, depth + 1, shape);
                }
                assert_eq!(node.bounds, input.bounds(&shape.seen[first..]));
            }
        }
    }

    /// Builds the tree and checks its shape; every triangle must be in exactly one leaf.
    fn shape_of(triangles: &[Triangle], settings: BvhSettings) -> Shape {
        let root = build(triangles, settings);
        let input = Input {
            triangles,
            centroids: Vec::new(),
            settings,
        };
        let mut shape = Shape::default();
        walk(&input, &root, 0, &mut shape);
        let mut seen = shape.seen.clone();
        seen.sort_unstable();
        assert!(
            seen.iter().copied().eq(0..triangles.len() as u32),
            "each triangle in exactly one leaf"
        );
        shape
    }

    fn triangle(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> Triangle {
        Triangle {
            v: [Vec3::from(a), Vec3::from(b), Vec3::from(c)],
        }
    }

    /// A point in `[-1, 1)^3` that depends only on `i` (a multiplicative hash per axis).
    fn scattered(i: u32, salt: u32) -> [f32; 3] {
        let axis = |k: u32| {
            let h = (i.wrapping_mul(3) + k + salt).wrapping_mul(2_654_435_761);
            (h >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        };
        [axis(0), axis(1), axis(2)]
    }

    /// Triangles of about a tenth of the cube's edge, spread over it.
    fn spread(n: u32) -> Vec<Triangle> {
        (0..n)
            .map(|i| {
                let c = Vec3::from(scattered(i, 0));
                let p = |salt| (c + Vec3::from(scattered(i, salt)) * 0.05).to_array();
                triangle(p(1), p(2), p(3))
            })
            .collect()
    }

    const DEFAULT: BvhSettings = BvhSettings {
        leaf_size: 4,
        max_depth: 24,
        width: None,
        split: BvhSplit::Sah,
    };

    #[test]
    fn copies_of_one_triangle_make_a_bounded_tree() {
        let one = triangle([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let shape = shape_of(&vec![one; 200_000], DEFAULT);
        // 50,000 leaves under nodes of at most eight children: six levels, not one node.
        assert_eq!(shape.depth, 6);
    }

    #[test]
    fn distinct_triangles_with_one_centroid_make_a_bounded_tree() {
        // `a`, `b` and `-a - b` have their centroid at the origin, whatever `a` and `b` are.
        let triangles: Vec<Triangle> = (0..20_000)
            .map(|i| {
                let (a, b) = (Vec3::from(scattered(i, 0)), Vec3::from(scattered(i, 7)));
                triangle(a.to_array(), b.to_array(), (-a - b).to_array())
            })
            .collect();
        for leaf_size in [1, 4, 31] {
            let settings = BvhSettings {
                leaf_size,
                ..DEFAULT
            };
            shape_of(&triangles, settings);
        }
    }

    #[test]
    fn half_coincident_half_spread_out_make_a_bounded_tree() {
        let one = triangle([0.2, 0.2, 0.2], [0.3, 0.2, 0.2], [0.2, 0.3, 0.2]);
        let mut triangles = vec![one; 100_000];
        triangles.extend(spread(100_000));
        let shape = shape_of(&triangles, DEFAULT);
        assert!(
            shape.depth > 6,
            "the spread-out half is split by octant too"
        );
    }

    #[test]
    fn the_depth_limit_splits_by_index_below_it() {
        let triangles = spread(50_000);
        for max_depth in [1, 2] {
            let settings = BvhSettings {
                max_depth,
                ..DEFAULT
            };
            // 12,500 leaves: at most 64 octant groups, then index splits to the leaf size.
            let shape = shape_of(&triangles, settings);
            assert!(shape.depth > max_depth);
        }
    }

    #[test]
    fn the_build_does_not_depend_on_the_thread_count() {
        let one = triangle([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let mut triangles = vec![one; 30_000];
        triangles.extend(spread(30_000));
        let leaves = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let root = pool.install(|| build(&triangles, DEFAULT));
            let mut order = Vec::new();
            let mut stack = vec![&root];
            while let Some(node) = stack.pop() {
                match &node.kind {
                    BuildKind::Leaf(items) => order.push(items.clone()),
                    BuildKind::Inner(children) => stack.extend(children.iter().rev()),
                }
            }
            order
        };
        assert_eq!(leaves(1), leaves(3));
    }
}
