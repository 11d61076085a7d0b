//! The wide BVH: four children per node, their boxes stored plane by plane so that one SIMD
//! instruction tests all four, built with binned SAH, traversed front to back with a small
//! fixed stack.
//!
//! *Build* ([`build`]): a binary tree by the surface area heuristic over binned centroids
//! (16 bins on each axis), its nodes built in parallel (rayon's join) below a size where
//! spreading them costs more than it saves; the result depends only on the input, never on
//! the thread count. Then collapsed to four children per node: a node's children are the
//! binary children of its binary children, opening the largest (by surface area) first.
//!
//! *Layout* ([`WideNode`]): 128 bytes, two cache lines: the four children's boxes as six
//! planes of four lanes (`min x`, `max x`, `min y`, …), then each child's reference (a node
//! index, or the first triangle of a leaf) and its triangle count (0 for an inner node).
//!
//! *Traverse* ([`traverse`]): the ray's per-axis near and far planes are chosen once, from the
//! signs of its direction; a node's four boxes are tested at once, and the children hit are
//! visited nearest first: the nearest next, the others (leaves and nodes alike) pushed far to
//! near on a stack of fixed size, and a child popped behind the closest hit so far is skipped.
//!
//! The closest hit is the octree's: the smallest `t`, equal `t` broken by the smaller original
//! index, each triangle tested by the same watertight test with the same padding, so the two
//! structures give every pixel the same bytes.

mod build;
mod traverse;

use std::time::Instant;

use crate::geometry::{Aabb, Triangle};

use super::{BvhSettings, BvhStats};

/// Children per node: the four lanes of an SSE register.
pub const WIDTH: usize = 4;

/// One node: the boxes of its (up to) four children, plane by plane, and what each child is.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub struct WideNode {
    /// `min x, max x, min y, max y, min z, max z` of the four children's padded boxes; an
    /// unused slot has an empty box (`min = +∞`, `max = −∞`), which no ray enters.
    pub planes: [[f32; WIDTH]; 6],
    /// Per child: the index of an inner node, or the first triangle of a leaf (in leaf
    /// order); [`EMPTY`] for an unused slot.
    pub child: [u32; WIDTH],
    /// Per child: 0 for an inner node, else the leaf's triangle count.
    pub count: [u32; WIDTH],
}

const _: () = assert!(size_of::<WideNode>() == 128);

/// The reference of an unused child slot.
pub const EMPTY: u32 = u32::MAX;

/// A wide BVH over a triangle list.
#[derive(Debug)]
pub struct WideBvh {
    /// The nodes; the root is node 0.
    nodes: Vec<WideNode>,
    /// The triangles in leaf order: each leaf's triangles are contiguous.
    triangles: Vec<Triangle>,
    /// `ids[k]`: the index in the input of the triangle stored at `k`.
    ids: Vec<u32>,
    /// How far every box is grown beyond its triangles (the octree's padding, for the same
    /// triangles: see [`super::padding_for`]).
    padding: f32,
    /// The box of all triangles.
    bounds: Aabb,
    stats: BvhStats,
}

impl WideBvh {
    /// Builds the hierarchy over `triangles` (indexed by their position, the tie-breaking index
    /// of the closest-hit rule); `settings.leaf_size` bounds a leaf's triangles.
    ///
    /// # Panics
    /// On no triangles, a leaf size out of `1..=MAX_LEAF_SIZE`, or more than `MAX_TRIANGLES`
    /// triangles; callers validate all three first (a scene has at least one triangle).
    pub fn build(triangles: &[Triangle], settings: BvhSettings) -> Self {
        assert!(!triangles.is_empty(), "a hierarchy over no triangles");
        assert!(
            (1..=super::MAX_LEAF_SIZE).contains(&settings.leaf_size),
            "leaf size out of range"
        );
        assert!(
            triangles.len() <= super::MAX_TRIANGLES,
            "too many triangles for the node format"
        );
        let start = Instant::now();
        let built = build::build(triangles, settings.leaf_size as usize);
        let build_time = start.elapsed();
        let stats = BvhStats {
            structure: "wide",
            triangles: triangles.len(),
            nodes: built.nodes.len(),
            leaves: built.leaves,
            depth: built.depth,
            max_leaf_triangles: built.max_leaf_triangles,
            bytes: built.nodes.len() * size_of::<WideNode>()
                + built.triangles.len() * (size_of::<Triangle>() + size_of::<u32>()),
            build_time,
        };
        Self {
            nodes: built.nodes,
            triangles: built.triangles,
            ids: built.ids,
            padding: built.padding,
            bounds: built.bounds,
            stats,
        }
    }

    /// The nodes; the root is node 0.
    pub fn nodes(&self) -> &[WideNode] {
        &self.nodes
    }

    /// The triangles in leaf order; [`BvhHit::index`](super::BvhHit::index) indexes this.
    pub fn triangles(&self) -> &[Triangle] {
        &self.triangles
    }

    /// For each triangle in leaf order, its index in the input of [`build`](Self::build).
    pub fn original_indices(&self) -> &[u32] {
        &self.ids
    }

    /// How far every box is grown beyond its triangles; the triangle test must be given this
    /// value to agree with the traversal.
    pub fn padding(&self) -> f32 {
        self.padding
    }

    /// The box of all triangles (without the padding).
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Build figures.
    pub fn stats(&self) -> &BvhStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Vec3;

    /// A deterministic scatter of small triangles, with a pile of copies of one of them.
    fn triangles(n: usize) -> Vec<Triangle> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
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

    /// Walks the tree from the root, checking every node's shape, and returns how many
    /// triangles its leaves hold.
    fn walk(bvh: &WideBvh, node: u32, leaf_size: u32, seen: &mut [bool]) -> usize {
        let n = &bvh.nodes()[node as usize];
        let mut total = 0;
        for lane in 0..WIDTH {
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
                total += walk(bvh, n.child[lane], leaf_size, seen);
            } else {
                assert!(n.count[lane] <= leaf_size, "a leaf holds at most leaf_size");
                let first = n.child[lane] as usize;
                let range = first..first + n.count[lane] as usize;
                for (k, triangle) in range.clone().zip(&bvh.triangles()[range]) {
                    assert!(!seen[k], "triangle {k} in two leaves");
                    seen[k] = true;
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
        for leaf_size in [1, 4, 31] {
            let settings = BvhSettings {
                leaf_size,
                max_depth: 24,
            };
            let bvh = WideBvh::build(&input, settings);
            let mut seen = vec![false; input.len()];
            assert_eq!(walk(&bvh, 0, leaf_size, &mut seen), input.len());
            assert!(seen.iter().all(|&s| s));
            let mut ids = bvh.original_indices().to_vec();
            ids.sort_unstable();
            assert_eq!(ids, (0..input.len() as u32).collect::<Vec<_>>());
            let s = bvh.stats();
            assert_eq!((s.structure, s.triangles), ("wide", input.len()));
            assert!(
                s.depth as usize <= build::STACK_SIZE / 3,
                "depth {}",
                s.depth
            );
        }
    }

    #[test]
    fn the_tree_does_not_depend_on_the_thread_count() {
        let input = triangles(20_000);
        let build = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| WideBvh::build(&input, BvhSettings::default()))
        };
        let (one, three) = (build(1), build(3));
        assert_eq!(one.nodes(), three.nodes());
        assert_eq!(one.original_indices(), three.original_indices());
    }

    #[test]
    fn a_single_triangle_hangs_under_a_root() {
        let input = triangles(1)[..1].to_vec();
        let bvh = WideBvh::build(&input, BvhSettings::default());
        assert_eq!(bvh.nodes().len(), 1);
        assert_eq!(bvh.nodes()[0].count[0], 1);
        assert!(bvh.nodes()[0].child[1..].iter().all(|&c| c == EMPTY));
    }
}
