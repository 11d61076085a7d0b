//! The scene as every device reads it: the octree's flattened nodes, the triangles, what
//! shading needs of each, the materials, the lights, the camera and the integrator's settings.
//! The renderer builds these very values and the kernels read them as they are.

use std::ops::Range;

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

shared_constants! {
    SCENE_CONSTANTS;
    /// Bits of a [`FlatNode`]'s leaf word that count its triangles; the first triangle's index
    /// takes the other bits.
    #[c(Unsigned)]
    pub const LEAF_COUNT_BITS: u32 = 5;
    /// Most triangles in one leaf of the octree: the count's bits all set. The wide BVH keeps
    /// to the same bound.
    #[c(Unsigned)]
    pub const MAX_LEAF_SIZE: u32 = (1 << LEAF_COUNT_BITS) - 1;
}

/// Most triangles in a hierarchy: the first index of a leaf takes the leaf word's other 27
/// bits.
pub const MAX_TRIANGLES: usize = 1 << (32 - LEAF_COUNT_BITS);

shared_struct! {
    /// One node of a flattened order of the octree-built BVH, 32 bytes, aligned so that it
    /// never straddles a cache line.
    ///
    /// Two lanes of four floats, each loaded whole into one SIMD register by the CPU's box test
    /// and as one `float4` on a GPU: the box's three *near* faces (per axis, the face a ray of
    /// this order's octant enters by) with the skip index in the fourth lane, and the three
    /// *far* faces with the leaf word in the fourth lane. The integers are stored by their bits.
    #[c(rl_node, size = 32)]
    ///
    /// ```
    /// use layout::FlatNode;
    ///
    /// // A leaf of triangles 12, 13 and 14, the last node of a one-node order.
    /// let node = FlatNode::new([0.0; 3], [1.0; 3], 1, FlatNode::leaf_word(12, 3));
    /// assert_eq!(node.skip(), 1);
    /// assert_eq!(node.triangles(), Some(12..15));
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C, align(32))]
    pub struct FlatNode {
        /// `near.x, near.y, near.z`, then the bits of [`skip`](Self::skip).
        #[offset(0)]
        pub near_skip: [f32; 4],
        /// `far.x, far.y, far.z`, then the bits of [`leaf`](Self::leaf).
        #[offset(16)]
        pub far_leaf: [f32; 4],
    }
}

impl FlatNode {
    /// The node with faces `near` and `far`, the skip index `skip` and the leaf word `leaf`.
    ///
    /// ```
    /// # use layout::FlatNode;
    /// let inner = FlatNode::new([-1.0; 3], [1.0; 3], 9, 0);
    /// assert_eq!((inner.near_skip[0], inner.far_leaf[0], inner.skip()), (-1.0, 1.0, 9));
    /// ```
    pub fn new(near: [f32; 3], far: [f32; 3], skip: u32, leaf: u32) -> Self {
        Self {
            near_skip: [near[0], near[1], near[2], f32::from_bits(skip)],
            far_leaf: [far[0], far[1], far[2], f32::from_bits(leaf)],
        }
    }

    /// The leaf word of a leaf whose triangles are `first .. first + count` in leaf order.
    ///
    /// ```
    /// # use layout::{FlatNode, LEAF_COUNT_BITS};
    /// assert_eq!(FlatNode::leaf_word(12, 3), 12 << LEAF_COUNT_BITS | 3);
    /// ```
    pub fn leaf_word(first: u32, count: u32) -> u32 {
        debug_assert!(count <= MAX_LEAF_SIZE && (first as usize) < MAX_TRIANGLES);
        first << LEAF_COUNT_BITS | count
    }

    /// The next node in pre-order after this node's subtree; the array length at the end.
    ///
    /// ```
    /// # use layout::FlatNode;
    /// let node = FlatNode::new([0.0; 3], [1.0; 3], 7, 0);
    /// assert_eq!(node.skip(), 7);
    /// ```
    #[inline(always)]
    pub fn skip(&self) -> u32 {
        self.near_skip[3].to_bits()
    }

    /// 0 for an inner node (its first child is the next node); for a leaf,
    /// `first << LEAF_COUNT_BITS | count`: its triangles are `first .. first + count` in leaf
    /// order.
    ///
    /// ```
    /// # use layout::FlatNode;
    /// let leaf = FlatNode::new([0.0; 3], [1.0; 3], 1, FlatNode::leaf_word(4, 2));
    /// assert_eq!(leaf.leaf(), FlatNode::leaf_word(4, 2));
    /// assert_eq!(FlatNode::new([0.0; 3], [1.0; 3], 1, 0).leaf(), 0);
    /// ```
    #[inline(always)]
    pub fn leaf(&self) -> u32 {
        self.far_leaf[3].to_bits()
    }

    /// The leaf's triangle range; empty for an inner node.
    ///
    /// ```
    /// # use layout::FlatNode;
    /// let leaf = FlatNode::new([0.0; 3], [1.0; 3], 1, FlatNode::leaf_word(4, 2));
    /// assert_eq!(leaf.leaf_range(), 4..6);
    /// assert!(FlatNode::new([0.0; 3], [1.0; 3], 1, 0).leaf_range().is_empty());
    /// ```
    #[inline(always)]
    pub fn leaf_range(&self) -> Range<usize> {
        let leaf = self.leaf();
        let first = (leaf >> LEAF_COUNT_BITS) as usize;
        first..first + (leaf & MAX_LEAF_SIZE) as usize
    }

    /// The leaf's triangle range, or `None` for an inner node.
    ///
    /// ```
    /// # use layout::FlatNode;
    /// let inner = FlatNode::new([0.0; 3], [1.0; 3], 5, 0);
    /// assert_eq!(inner.triangles(), None);
    /// ```
    pub fn triangles(&self) -> Option<Range<usize>> {
        (self.leaf() != 0).then(|| self.leaf_range())
    }
}

shared_struct! {
    /// A triangle by its three vertices, in the order that defines its front face
    /// (counter-clockwise seen from the front).
    #[c(rl_triangle, size = 36)]
    ///
    /// ```
    /// use glam::Vec3;
    /// use layout::Triangle;
    ///
    /// // Counter-clockwise seen from +z: the front face looks along +z.
    /// let t = Triangle { v: [Vec3::ZERO, Vec3::X, Vec3::Y] };
    /// assert_eq!((t.v[1] - t.v[0]).cross(t.v[2] - t.v[0]), Vec3::Z);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Triangle {
        /// The vertices.
        #[offset(0)]
        pub v: [Vec3; 3],
    }
}

shared_struct! {
    /// What shading needs of one triangle beyond its vertices, in a structure's leaf order
    /// (indexed like its triangles).
    #[c(rl_shading, size = 40)]
    ///
    /// ```
    /// use glam::Vec3;
    /// use layout::{Material, TriangleShading};
    ///
    /// // A flat-shaded triangle facing +z, in the scene's first material.
    /// let materials = [Material::default()];
    /// let shading = TriangleShading { normals: [Vec3::Z; 3], material: 0 };
    /// assert_eq!(materials[shading.material as usize].diffuse, Vec3::splat(0.8));
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct TriangleShading {
        /// Unit shading normals at the three vertices (the face normal when flat-shaded).
        #[offset(0)]
        pub normals: [Vec3; 3],
        /// Index into the scene's materials.
        #[offset(36)]
        pub material: u32,
    }
}

shared_struct! {
    /// A surface's response to light.
    ///
    /// Shading adds `ambient ⊙ scene ambient`, and for each light that sees the point
    /// `diffuse · max(0, n·l) + specular · max(0, r·v)^shininess` times the light's colour; a
    /// reflection ray carries weight `reflectivity` and a refraction ray `refractivity`.
    #[c(rl_material, size = 68)]
    ///
    /// ```
    /// use glam::Vec3;
    /// use layout::Material;
    ///
    /// // A grey mirror: the default's ambient and diffuse, and a reflection ray of weight 0.9.
    /// let mirror = Material { reflectivity: Vec3::splat(0.9), ..Material::default() };
    /// assert_eq!(mirror.ambient, Vec3::splat(0.8));
    /// assert_eq!(mirror.refractivity, Vec3::ZERO);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Material {
        /// Multiplies the scene's ambient light.
        #[offset(0)]
        pub ambient: Vec3,
        /// Lambertian coefficient.
        #[offset(12)]
        pub diffuse: Vec3,
        /// Phong highlight coefficient.
        #[offset(24)]
        pub specular: Vec3,
        /// Phong exponent, a whole number so that the power is a product.
        #[offset(36)]
        pub shininess: u32,
        /// Weight of the mirror reflection ray.
        #[offset(40)]
        pub reflectivity: Vec3,
        /// Weight of the refraction ray.
        #[offset(52)]
        pub refractivity: Vec3,
        /// Index of refraction of the material's inside.
        #[offset(64)]
        pub ior: f32,
    }
}

impl Default for Material {
    /// Matte grey, what a surface without a material of its own is given.
    fn default() -> Self {
        let grey = Vec3::splat(0.8);
        Self {
            ambient: grey,
            diffuse: grey,
            specular: Vec3::ZERO,
            shininess: 0,
            reflectivity: Vec3::ZERO,
            refractivity: Vec3::ZERO,
            ior: 1.5,
        }
    }
}

shared_struct! {
    /// A point or spot light. A point light has `cos_outer = −2`, so every direction is inside
    /// its "cone".
    #[c(rl_light, size = 44)]
    ///
    /// ```
    /// use glam::Vec3;
    /// use layout::Light;
    ///
    /// // A spot whose light reaches 30° off its axis, at full strength to 20°.
    /// let spot = Light {
    ///     direction: Vec3::NEG_Y,
    ///     cos_outer: 30f32.to_radians().cos(),
    ///     cos_inner: 20f32.to_radians().cos(),
    ///     ..Light::point(Vec3::new(0.0, 4.0, 0.0), Vec3::ONE)
    /// };
    /// assert!(spot.cos_inner > spot.cos_outer);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Light {
        /// Where the light is.
        #[offset(0)]
        pub position: Vec3,
        /// Colour times intensity.
        #[offset(12)]
        pub color: Vec3,
        /// Unit direction the spot points in (unused by point lights).
        #[offset(24)]
        pub direction: Vec3,
        /// Cosine of the cone's half-angle: no light beyond it. Computed on the host.
        #[offset(36)]
        pub cos_outer: f32,
        /// Cosine of the full-strength half-angle; between the two the strength is linear in
        /// the cosine. Computed on the host.
        #[offset(40)]
        pub cos_inner: f32,
    }
}

impl Light {
    /// A light that shines equally in all directions.
    ///
    /// ```
    /// # use glam::Vec3;
    /// # use layout::Light;
    /// let light = Light::point(Vec3::new(3.0, 5.0, 4.0), Vec3::splat(0.8));
    /// // Every direction's cosine, down to -1, is inside its "cone".
    /// assert!(light.cos_outer < -1.0);
    /// ```
    pub fn point(position: Vec3, color: Vec3) -> Self {
        Self {
            position,
            color,
            direction: Vec3::Y,
            cos_outer: -2.0,
            cos_inner: -2.0,
        }
    }
}

shared_struct! {
    /// A pinhole camera: an orthonormal frame at `origin` and the half-extent of the image
    /// plane at distance 1. The tangent of the half field of view is computed once on the host
    /// and handed to every device as a value.
    #[c(rl_camera, size = 52)]
    ///
    /// ```
    /// use glam::Vec3;
    /// use layout::Camera;
    ///
    /// // At the origin, looking down -z with a 90° field of view.
    /// let camera = Camera {
    ///     origin: Vec3::ZERO,
    ///     forward: Vec3::NEG_Z,
    ///     right: Vec3::X,
    ///     up: Vec3::Y,
    ///     tan_half_fov: 45f32.to_radians().tan(),
    /// };
    /// assert!((camera.tan_half_fov - 1.0).abs() < 1e-6);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Camera {
        /// The eye.
        #[offset(0)]
        pub origin: Vec3,
        /// Unit viewing direction.
        #[offset(12)]
        pub forward: Vec3,
        /// Unit vector to the right of the image.
        #[offset(24)]
        pub right: Vec3,
        /// Unit vector to the top of the image.
        #[offset(36)]
        pub up: Vec3,
        /// `tan(fov / 2)`: half the height of the image plane at distance 1.
        #[offset(48)]
        pub tan_half_fov: f32,
    }
}

shared_struct! {
    /// Settings of the integrator, from the scene's `[render]` table.
    #[c(rl_settings, size = 36)]
    ///
    /// ```
    /// use glam::Vec3;
    /// use layout::RenderSettings;
    ///
    /// let settings = RenderSettings {
    ///     max_depth: 6,
    ///     weight_cutoff: 0.01,
    ///     ambient: Vec3::splat(0.15),
    ///     background: Vec3::new(0.25, 0.35, 0.5),
    ///     offset_scale: 2f32.powi(-16),
    /// };
    /// // A reflection of weight 0.005 in every channel is not spawned.
    /// assert!(Vec3::splat(0.005).max_element() < settings.weight_cutoff);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct RenderSettings {
        /// The deepest generation of secondary rays (camera rays are generation 0).
        #[offset(0)]
        pub max_depth: u32,
        /// Secondary rays whose largest weight component is below this are not spawned.
        #[offset(4)]
        pub weight_cutoff: f32,
        /// Ambient light.
        #[offset(8)]
        pub ambient: Vec3,
        /// What rays that hit nothing see.
        #[offset(20)]
        pub background: Vec3,
        /// How far secondary and shadow rays start off the surface they leave, along its
        /// normal, relative to the hit triangle's coordinates: `(m + s) · s`, with `m` the
        /// largest magnitude of any coordinate of the triangle's vertices and the hit point,
        /// and `s` this scale (2^-16, about 128 units in the last place). The offset depends
        /// on the hit triangle alone, never on how far the scene's other geometry reaches
        /// (renderer/src/math.rs, `surface_offset`).
        #[offset(32)]
        pub offset_scale: f32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_word_gives_back_its_range() {
        let node = FlatNode::new([0.0; 3], [1.0; 3], 7, FlatNode::leaf_word(12, 3));
        assert_eq!((node.skip(), node.leaf_range()), (7, 12..15));
        assert_eq!(node.triangles(), Some(12..15));
        let inner = FlatNode::new([0.0; 3], [1.0; 3], 9, 0);
        assert_eq!(inner.triangles(), None);
    }
}
