//! The wide BVH in its GPU form: eight children per node, their boxes quantized to bytes in
//! the manner of Ylitie, Karras and Laine, "Efficient Incoherent Ray Traversal on GPUs
//! Through Compressed Wide BVHs" (HPG 2017).
//!
//! # Why this layout
//!
//! Incoherent secondary rays are bound by memory traffic on a GPU: each lane fetches its own
//! nodes. A [`WideNode`] holds eight child boxes in 80 bytes, five 16-byte loads, where the
//! CPU's eight-wide node (six planes of eight floats plus references) takes 256; Ylitie et
//! al. measured such nodes about twice as fast as binary BVHs on incoherent rays. The plain
//! alternative, uncompressed eight-wide nodes, would save the decoding arithmetic at three
//! times the bytes per node. Which wins on a given GPU is a measurement; the traversal
//! (`rl_wide_traverse` in `kernels/cuda/raylb_math.cuh`) reads a node only through
//! `rl_wide_load`, `rl_wide_hits`, `rl_wide_child` and `rl_wide_leaf`, so another node format
//! changes those four functions, this file and the host's builder
//! (`renderer/src/bvh/wide/gpu.rs`), not the traversal or its checks.
//!
//! # Decoding, and why it is conservative
//!
//! Along each axis a node has an origin `p` (the minimum of its children's boxes) and a scale
//! `s = 2^e`; a child's plane with byte `q` lies at `p + q · s`, computed in single precision
//! as written ([`WideNode::plane`]: one exact product, one rounded sum; no fused
//! multiply-add on either side). The builder picks each lower byte as the largest whose plane
//! is at or below the child's true (padded) minimum, and each upper byte as the smallest at
//! or above its maximum, by evaluating this very formula: a decoded box is never smaller than
//! the true one. The slab test is monotonic in a box's planes, so a decoded box admits every
//! ray the true box does, and the closest hit (smallest `t`, ties to the smaller input index,
//! from the same watertight triangle test) is the CPU's exactly; larger boxes only cost
//! extra tests.
//!
//! # Children, leaves and order
//!
//! A child is an inner node (its bit set in `inner_mask`), a leaf (`counts[slot]` triangles,
//! at most [`MAX_LEAF_SIZE`](crate::MAX_LEAF_SIZE)) or empty (neither). Inner children are
//! consecutive nodes from `child_base`, in slot order; the leaves' triangles are consecutive
//! from `triangle_base`, in slot order: a child's index is its base plus what the slots
//! before it hold (a population count of `inner_mask`, a prefix sum of `counts`, which fits a
//! byte: eight leaves of at most 31 triangles). Slots are assigned so that a ray whose
//! direction lies in octant `o` meets slot `o` first, then `o ^ 1`, `o ^ 2`, …: the traversal
//! visits the children it hits in the order of `slot ^ o`, near ones first, with no sort.

use bytemuck::{Pod, Zeroable};

shared_constants! {
    WIDE_CONSTANTS;
    /// Children per node.
    #[c(Int)]
    pub const WIDE_CHILDREN: usize = 8;
    /// Entries of the traversal's stack: one per inner node on the path from the root. The
    /// renderer's wide build is at most 67 inner nodes deep (40 levels of heuristic splits,
    /// then at most 27 of median splits), and its GPU form checks the depth it gets.
    #[c(Int)]
    pub const WIDE_STACK: usize = 67;
}

shared_struct! {
    /// One node of the wide BVH's GPU form: eight quantized child boxes, 80 bytes, 16-byte
    /// aligned for `float4`-sized loads.
    #[c(rl_wide_node, size = 80)]
    ///
    /// ```
    /// use bytemuck::Zeroable;
    /// use layout::wide::WideNode;
    ///
    /// // Inner children in slots 2 and 5, a leaf of three triangles in slot 0.
    /// let node = WideNode {
    ///     inner_mask: 0b0010_0100,
    ///     child_base: 10,
    ///     triangle_base: 100,
    ///     counts: [3, 0, 0, 0, 0, 0, 0, 0],
    ///     ..WideNode::zeroed()
    /// };
    /// assert_eq!((node.child(2), node.child(5)), (10, 11));
    /// assert_eq!(node.leaf(0), 100..103);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C, align(16))]
    pub struct WideNode {
        /// Per axis, `p`: where byte 0 of a plane lies.
        #[offset(0)]
        pub origin: [f32; 3],
        /// Per axis, the biased exponent `e + 127` of the scale `2^e`: the scale's own bits are
        /// this byte shifted left by 23.
        #[offset(12)]
        pub exponents: [u8; 3],
        /// Bit `slot` set: the child in `slot` is an inner node.
        #[offset(15)]
        pub inner_mask: u8,
        /// The node index of the first inner child.
        #[offset(16)]
        pub child_base: u32,
        /// The leaf-order index of the first triangle of the first leaf child.
        #[offset(20)]
        pub triangle_base: u32,
        /// Per slot, the leaf's triangles; 0 for an inner node or an empty slot.
        #[offset(24)]
        pub counts: [u8; 8],
        /// Per axis and slot, the byte of the child's lower plane.
        #[offset(32)]
        pub lo: [[u8; 8]; 3],
        /// Per axis and slot, the byte of the child's upper plane.
        #[offset(56)]
        pub hi: [[u8; 8]; 3],
    }
}

impl WideNode {
    /// The scale of `axis`: `2^e`.
    ///
    /// ```
    /// # use bytemuck::Zeroable;
    /// # use layout::wide::WideNode;
    /// let node = WideNode { exponents: [127 - 3, 127, 127 + 2], ..WideNode::zeroed() };
    /// assert_eq!([node.scale(0), node.scale(1), node.scale(2)], [0.125, 1.0, 4.0]);
    /// ```
    #[inline]
    pub fn scale(&self, axis: usize) -> f32 {
        f32::from_bits(u32::from(self.exponents[axis]) << 23)
    }

    /// The plane of byte `q` along `axis`: `p + q · s`, the product exact and the sum rounded
    /// once, as the traversal computes it.
    ///
    /// ```
    /// # use bytemuck::Zeroable;
    /// # use layout::wide::WideNode;
    /// let node = WideNode {
    ///     origin: [1.0, 0.0, 0.0],
    ///     exponents: [127 - 3; 3],
    ///     ..WideNode::zeroed()
    /// };
    /// assert_eq!(node.plane(0, 8), 2.0);
    /// ```
    #[inline]
    pub fn plane(&self, axis: usize, q: u8) -> f32 {
        self.origin[axis] + f32::from(q) * self.scale(axis)
    }

    /// The decoded box of the child in `slot`: `(min, max)`.
    ///
    /// ```
    /// # use bytemuck::Zeroable;
    /// # use layout::wide::WideNode;
    /// let mut node = WideNode { exponents: [127; 3], ..WideNode::zeroed() };
    /// node.hi = [[2; 8]; 3];
    /// assert_eq!(node.child_box(4), ([0.0; 3], [2.0; 3]));
    /// ```
    pub fn child_box(&self, slot: usize) -> ([f32; 3], [f32; 3]) {
        (
            std::array::from_fn(|axis| self.plane(axis, self.lo[axis][slot])),
            std::array::from_fn(|axis| self.plane(axis, self.hi[axis][slot])),
        )
    }

    /// Whether `slot` holds an inner node.
    ///
    /// ```
    /// # use bytemuck::Zeroable;
    /// # use layout::wide::WideNode;
    /// let node = WideNode { inner_mask: 0b100, ..WideNode::zeroed() };
    /// assert!(node.is_inner(2) && !node.is_inner(0));
    /// ```
    pub fn is_inner(&self, slot: usize) -> bool {
        self.inner_mask >> slot & 1 == 1
    }

    /// The node index of the inner child in `slot`.
    ///
    /// ```
    /// # use bytemuck::Zeroable;
    /// # use layout::wide::WideNode;
    /// let node = WideNode {
    ///     inner_mask: 0b1010_0100,
    ///     child_base: 10,
    ///     ..WideNode::zeroed()
    /// };
    /// assert_eq!(node.child(7), 12);
    /// ```
    pub fn child(&self, slot: usize) -> u32 {
        let below = u32::from(self.inner_mask) & ((1 << slot) - 1);
        self.child_base + below.count_ones()
    }

    /// The leaf-order triangles of the leaf in `slot` (empty for an inner node or an empty
    /// slot).
    ///
    /// ```
    /// # use bytemuck::Zeroable;
    /// # use layout::wide::WideNode;
    /// let node = WideNode {
    ///     triangle_base: 100,
    ///     counts: [3, 0, 0, 31, 0, 0, 0, 0],
    ///     ..WideNode::zeroed()
    /// };
    /// assert_eq!(node.leaf(3), 103..134);
    /// ```
    pub fn leaf(&self, slot: usize) -> std::ops::Range<u32> {
        let before: u32 = self.counts[..slot].iter().map(|&c| u32::from(c)).sum();
        let first = self.triangle_base + before;
        first..first + u32::from(self.counts[slot])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_are_found_by_what_the_slots_before_them_hold() {
        let node = WideNode {
            inner_mask: 0b1010_0100,
            child_base: 10,
            triangle_base: 100,
            counts: [3, 0, 0, 31, 0, 0, 2, 0],
            ..Zeroable::zeroed()
        };
        assert_eq!(node.child(2), 10);
        assert_eq!(node.child(5), 11);
        assert_eq!(node.child(7), 12);
        assert_eq!(node.leaf(0), 100..103);
        assert_eq!(node.leaf(3), 103..134);
        assert_eq!(node.leaf(6), 134..136);
        assert!(node.leaf(2).is_empty());
    }

    #[test]
    fn planes_decode_as_origin_plus_an_exact_multiple_of_a_power_of_two() {
        let node = WideNode {
            origin: [1.0, -2.0, 0.5],
            exponents: [127 - 3, 127, 127 + 2],
            ..Zeroable::zeroed()
        };
        assert_eq!(node.scale(0), 0.125);
        assert_eq!(node.plane(0, 8), 2.0);
        assert_eq!(node.plane(1, 255), 253.0);
        assert_eq!(node.plane(2, 3), 12.5);
    }
}
