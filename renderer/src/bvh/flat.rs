//! The flattened node format and the pre-order writer.

use crate::geometry::{Aabb, Triangle};

use super::build::{BuildKind, BuildNode};

/// Most triangles in one leaf: the count takes the low 5 bits of [`FlatNode::leaf`].
pub const MAX_LEAF_SIZE: u32 = (1 << LEAF_COUNT_BITS) - 1;
const LEAF_COUNT_BITS: u32 = 5;
/// Most triangles in a hierarchy: the first index takes the other 27 bits of the leaf word.
pub const MAX_TRIANGLES: usize = 1 << (32 - LEAF_COUNT_BITS);

/// Boxes (of nodes, and of triangles in the triangle test) are grown by this fraction of the
/// scene's largest coordinate: 2^-16 of it, 128 times the rounding of the slab test for rays
/// starting anywhere within the scene's extent. What makes the box test conservative is the
/// triangle test keeping each hit's distance inside its triangle's padded box, which every
/// ancestor's padded box contains; the padding itself only keeps rounding in the slab test
/// from turning away rays that graze a box face or run along a shared edge, which would open
/// cracks. tests/bvh_vs_brute_force.rs checks the agreement on degenerate geometry.
pub(super) const BOX_PADDING: f32 = 1.0 / 65536.0;

/// One node of a flattened order, 32 bytes, aligned so that it never straddles a cache line.
///
/// Two lanes of four floats, each loaded whole into one SIMD register by the box test (and as
/// one `float4` on a GPU): the box's three *near* faces (per axis, the face a ray of this
/// order's octant enters by) with the skip index in the fourth lane, and the three *far* faces
/// with the leaf word in the fourth lane. The integers are stored by their bits.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(32))]
pub struct FlatNode {
    /// `near.x, near.y, near.z`, then the bits of [`skip`](Self::skip).
    pub near_skip: [f32; 4],
    /// `far.x, far.y, far.z`, then the bits of [`leaf`](Self::leaf).
    pub far_leaf: [f32; 4],
}

const _: () = assert!(size_of::<FlatNode>() == 32);

impl FlatNode {
    fn new(near: [f32; 3], far: [f32; 3], skip: u32, leaf: u32) -> Self {
        Self {
            near_skip: [near[0], near[1], near[2], f32::from_bits(skip)],
            far_leaf: [far[0], far[1], far[2], f32::from_bits(leaf)],
        }
    }

    /// The next node in pre-order after this node's subtree; the array length at the end.
    #[inline(always)]
    pub fn skip(&self) -> u32 {
        self.near_skip[3].to_bits()
    }

    /// 0 for an inner node (its first child is the next node); for a leaf,
    /// `first << 5 | count`: its triangles are `first .. first + count` in leaf order.
    #[inline(always)]
    pub fn leaf(&self) -> u32 {
        self.far_leaf[3].to_bits()
    }

    /// The leaf's triangle range; empty for an inner node.
    #[inline(always)]
    pub fn leaf_range(&self) -> std::ops::Range<usize> {
        let leaf = self.leaf();
        let first = (leaf >> LEAF_COUNT_BITS) as usize;
        first..first + (leaf & MAX_LEAF_SIZE) as usize
    }

    /// The leaf's triangle range, or `None` for an inner node.
    pub fn triangles(&self) -> Option<std::ops::Range<usize>> {
        (self.leaf() != 0).then(|| self.leaf_range())
    }
}

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
            arena.leaf[index] = first << LEAF_COUNT_BITS | count;
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
