//! The pre-order writer of the flattened node format ([`FlatNode`], a type of the shared
//! layout: the GPU kernels read these arrays as they are).

use layout::FlatNode;

use crate::geometry::{Aabb, Triangle};

use super::build::{BuildKind, BuildNode};

/// Boxes (of nodes, and of triangles in the triangle test) are grown by this fraction of the
/// scene's largest coordinate: 2^-16 of it, 128 times the rounding of the slab test for rays
/// starting anywhere within the scene's extent. What makes the box test conservative is the
/// triangle test keeping each hit's distance inside its triangle's padded box, which every
/// ancestor's padded box contains; the padding itself only keeps rounding in the slab test
/// from turning away rays that graze a box face or run along a shared edge, which would open
/// cracks. tests/bvh_vs_brute_force.rs checks the agreement on degenerate geometry.
pub(super) const BOX_PADDING: f32 = 1.0 / 65536.0;

/// The output of [`flatten`].
pub(super) struct Flattened {
    pub(super) orders: [Vec<FlatNode>; 8],
    pub(super) triangles: Vec<Triangle>,
    pub(super) ids: Vec<u32>,
    pub(super) leaves: usize,
    pub(super) depth: u32,
    pub(super) max_leaf_triangles: u32,
    pub(super) padding: f32,
    /// The box of all triangles, unpadded.
    pub(super) bounds: Aabb,
}

/// The tree as an arena: children by index, leaves by their triangle range.
struct Arena {
    bounds: Vec<Aabb>,
    children: Vec<Vec<usize>>,
    leaf: Vec<u32>,
}

/// Writes the eight pre-order arrays. Triangles are laid out leaf by leaf in the tree's own
/// (octant) order, shared by all eight arrays.
pub(super) fn flatten(root: &BuildNode, input: &[Triangle]) -> Flattened {
    let mut arena = Arena {
        bounds: Vec::new(),
        children: Vec::new(),
        leaf: Vec::new(),
    };
    let mut out = Flattened {
        orders: Default::default(),
        triangles: Vec::with_capacity(input.len()),
        ids: Vec::with_capacity(input.len()),
        leaves: 0,
        depth: 0,
        max_leaf_triangles: 0,
        padding: super::padding_for(&root.bounds),
        bounds: root.bounds,
    };
    let padding = out.padding;
    add(root, 0, input, &mut arena, &mut out, padding);
    for (octant, order) in out.orders.iter_mut().enumerate() {
        order.reserve_exact(arena.bounds.len());
        write(0, octant, &arena, order);
    }
    out
}

/// Adds `node` and its subtree to the arena in canonical order; returns its index.
fn add(
    node: &BuildNode,
    depth: u32,
    input: &[Triangle],
    arena: &mut Arena,
    out: &mut Flattened,
    padding: f32,
) -> usize {
    let index = arena.bounds.len();
    arena.bounds.push(node.bounds.padded(padding));
    arena.children.push(Vec::new());
    arena.leaf.push(0);
    out.depth = out.depth.max(depth);
    match &node.kind {
        BuildKind::Leaf(items) => {
            let first = out.triangles.len() as u32;
            for &i in items {
                out.triangles.push(input[i as usize]);
                out.ids.push(i);
            }
            let count = items.len() as u32;
            arena.leaf[index] = FlatNode::leaf_word(first, count);
            out.leaves += 1;
            out.max_leaf_triangles = out.max_leaf_triangles.max(count);
        }
        BuildKind::Inner(children) => {
            let indices = children
                .iter()
                .map(|c| add(c, depth + 1, input, arena, out, padding))
                .collect();
            arena.children[index] = indices;
        }
    }
    index
}

/// Writes the subtree of arena node `index` in pre-order for `octant`, nearest child first.
fn write(index: usize, octant: usize, arena: &Arena, order: &mut Vec<FlatNode>) {
    let b = arena.bounds[index];
    let (mut near, mut far) = (b.min.to_array(), b.max.to_array());
    for axis in 0..3 {
        if octant >> axis & 1 == 1 {
            std::mem::swap(&mut near[axis], &mut far[axis]);
        }
    }
    let at = order.len();
    order.push(FlatNode::new(near, far, 0, arena.leaf[index]));
    let mut children = arena.children[index].clone();
    // Rays of this octant travel along `sign`; the child whose centre lies furthest against
    // that direction is met first. The sort is stable, so ties keep octant order.
    let sign = |axis: usize| if octant >> axis & 1 == 1 { -1.0 } else { 1.0 };
    let key = |c: &usize| {
        let centre = arena.bounds[*c].center();
        sign(0) * centre.x + sign(1) * centre.y + sign(2) * centre.z
    };
    children.sort_by(|a, b| key(a).total_cmp(&key(b)));
    for child in children {
        write(child, octant, arena, order);
    }
    order[at].near_skip[3] = f32::from_bits(order.len() as u32);
}
