//! The octree build: split by the octant of each triangle's centroid.

use rayon::prelude::*;

use crate::geometry::{Aabb, Triangle};
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
    /// Input indices of the triangles of a leaf, at most `MAX_LEAF_SIZE` of them.
    Leaf(Vec<u32>),
    /// Children in octant order (octant `o` has bit `i` set when above the split on axis `i`).
    Inner(Vec<BuildNode>),
}

/// Below this many triangles a node's subtrees are built on the calling thread: spreading
/// smaller nodes over the pool costs more in task overhead than it saves.
const PARALLEL_THRESHOLD: usize = 4096;

struct Input<'a> {
    triangles: &'a [Triangle],
    centroids: Vec<Vec3>,
    settings: BvhSettings,
}

/// Builds the octree over `triangles`. The result depends only on the input and the settings,
/// never on the number of threads: partitions are stable and children keep octant order.
pub(super) fn build(triangles: &[Triangle], settings: BvhSettings) -> BuildNode {
    let centroids = triangles
        .par_iter()
        .map(|t| (t.v[0] + t.v[1] + t.v[2]) * (1.0 / 3.0))
        .collect();
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
            let t = &self.triangles[i as usize];
            b.grow(t.v[0]).grow(t.v[1]).grow(t.v[2])
        })
    }

    fn node(&self, items: Vec<u32>, depth: u32) -> BuildNode {
        let bounds = self.bounds(&items);
        if items.len() <= self.settings.leaf_size as usize || depth >= self.settings.max_depth {
            return self.leaves(items, bounds);
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
            return self.leaves(groups.into_iter().next().unwrap_or_default(), bounds);
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

    /// A leaf, or, when `items` exceeds the leaf size (a forced stop), a node whose children
    /// are leaves of at most the leaf size each, in input order.
    fn leaves(&self, items: Vec<u32>, bounds: Aabb) -> BuildNode {
        let size = self.settings.leaf_size as usize;
        if items.len() <= size {
            return BuildNode {
                bounds,
                kind: BuildKind::Leaf(items),
            };
        }
        let children = items
            .chunks(size)
            .map(|chunk| BuildNode {
                bounds: self.bounds(chunk),
                kind: BuildKind::Leaf(chunk.to_vec()),
            })
            .collect();
        BuildNode {
            bounds,
            kind: BuildKind::Inner(children),
        }
    }
}
