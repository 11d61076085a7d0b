//! The kernels' parameter structs: passed by value at every launch, they hold the frame's
//! sizes and settings and the addresses of its arrays.

use bytemuck::{Pod, Zeroable};

use crate::kernel::DequeHead;
use crate::scene::{Camera, FlatNode, Light, Material, RenderSettings, Triangle, TriangleShading};
use crate::task::Task;
use crate::wide::WideNode;
use crate::{Ptr, PtrMut};

shared_struct! {
    /// Everything tracing reads: the first parameter of every kernel. The scene is traced
    /// through one of two structures: the octree (`nodes`, with `wide_nodes` null) or the
    /// wide BVH's GPU form (`wide_nodes`, with `nodes` null); the per-triangle arrays are in
    /// that structure's leaf order.
    #[c(rl_scene, size = 168)]
    ///
    /// ```
    /// use bytemuck::Zeroable;
    /// use layout::params::Scene;
    /// use layout::{FlatNode, Ptr};
    ///
    /// // A scene traced through the octree: `nodes` set, `wide_nodes` null.
    /// let nodes = [FlatNode::new([0.0; 3], [1.0; 3], 1, FlatNode::leaf_word(0, 1)); 8];
    /// let scene = Scene {
    ///     nodes: Ptr::host(&nodes),
    ///     node_count: 1,
    ///     width: 32,
    ///     height: 32,
    ///     ..Scene::zeroed()
    /// };
    /// assert_eq!(scene.nodes.address(), nodes.as_ptr() as u64);
    /// assert_eq!(scene.wide_nodes, Ptr::NULL);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Scene {
        /// The octree's eight pre-order node arrays, one per ray octant (bit `i` set: negative
        /// along axis `i`), each of `node_count` nodes, one after the other; null when the
        /// scene is traced through the wide BVH.
        #[offset(0)]
        pub nodes: Ptr<FlatNode>,
        /// The triangles in the structure's leaf order.
        #[offset(8)]
        pub triangles: Ptr<Triangle>,
        /// The index in the scene's input of each triangle: the closest hit's tie-breaker.
        #[offset(16)]
        pub ids: Ptr<u32>,
        /// What shading needs of each triangle.
        #[offset(24)]
        pub shading: Ptr<TriangleShading>,
        /// The materials `shading` indexes.
        #[offset(32)]
        pub materials: Ptr<Material>,
        /// The lights.
        #[offset(40)]
        pub lights: Ptr<Light>,
        /// Nodes in one order of the octree; 0 for the wide BVH.
        #[offset(48)]
        pub node_count: u32,
        /// Lights.
        #[offset(52)]
        pub light_count: u32,
        /// Image width in pixels.
        #[offset(56)]
        pub width: u32,
        /// Image height in pixels.
        #[offset(60)]
        pub height: u32,
        /// How far the BVH's boxes are grown beyond their triangles; the triangle test keeps
        /// its distances inside the triangle's box grown as much.
        #[offset(64)]
        pub padding: f32,
        /// The camera.
        #[offset(68)]
        pub camera: Camera,
        /// The integrator's settings.
        #[offset(120)]
        pub settings: RenderSettings,
        /// Camera rays per pixel, through the points `PixelSamples` places in the pixel
        /// (renderer/src/scene/camera.rs); each ray's contribution is weighted `1 / samples`.
        #[offset(156)]
        pub samples: u32,
        /// The wide BVH's nodes in its GPU form (the root is node 0); null when the scene is
        /// traced through the octree.
        #[offset(160)]
        pub wide_nodes: Ptr<WideNode>,
    }
}

shared_struct! {
    /// Where traced rays' results go.
    #[c(rl_film, size = 16)]
    ///
    /// ```
    /// use layout::PtrMut;
    /// use layout::params::Film;
    ///
    /// // A 32×32 film without the work map.
    /// let mut sums = vec![0u64; 3 * 32 * 32];
    /// let film = Film { sums: PtrMut::host(&mut sums), rays: PtrMut::NULL };
    /// assert_eq!(film.sums.address(), sums.as_mut_ptr() as u64);
    /// assert_eq!(film.rays.address(), 0);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Film {
        /// The fixed-point sums, three per pixel, row-major.
        #[offset(0)]
        pub sums: PtrMut<u64>,
        /// Rays per pixel, for the work map; null when not asked for.
        #[offset(8)]
        pub rays: PtrMut<u32>,
    }
}

shared_struct! {
    /// The persistent kernel's work: its balancer, its tiles and its deques.
    #[c(rl_work, size = 96)]
    ///
    /// ```
    /// use bytemuck::Zeroable;
    /// use layout::kernel::Mode;
    /// use layout::params::Work;
    ///
    /// // Eight warps taking 32-pixel tiles of a 64×64 image from the global counter.
    /// let work = Work {
    ///     mode: Mode::Counter as u32,
    ///     warps: 8,
    ///     tile_edge: 32,
    ///     tiles_x: 2,
    ///     tile_count: 4,
    ///     chunk: 1,
    ///     ..Work::zeroed()
    /// };
    /// assert_eq!(Mode::ALL[work.mode as usize], Mode::Counter);
    /// assert_eq!(bytemuck::bytes_of(&work).len(), 96);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Work {
        /// The balancer: a [`Mode`](crate::kernel::Mode) code.
        #[offset(0)]
        pub mode: u32,
        /// Persistent warps launched.
        #[offset(4)]
        pub warps: u32,
        /// Tile edge in pixels.
        #[offset(8)]
        pub tile_edge: u32,
        /// Tiles across the image.
        #[offset(12)]
        pub tiles_x: u32,
        /// Tiles of this launch: the image's, or `tiles`'s.
        #[offset(16)]
        pub tile_count: u32,
        /// Counter: tiles per grab.
        #[offset(20)]
        pub chunk: u32,
        /// Tasks per deque.
        #[offset(24)]
        pub capacity: u32,
        /// 1: a thief takes up to half the victim's tasks (at most 32); 0: one.
        #[offset(28)]
        pub steal_half: u32,
        /// Seed of the victim choice.
        #[offset(32)]
        pub seed: u32,
        /// Stealing: the warps' deque, a [`WarpDeque`](crate::kernel::WarpDeque) code.
        #[offset(36)]
        pub deque: u32,
        /// Counter: the next tile.
        #[offset(40)]
        pub tile_counter: PtrMut<u32>,
        /// Stealing: tasks in deques plus tasks held by warps.
        #[offset(48)]
        pub pending: PtrMut<i32>,
        /// One deque head per warp.
        #[offset(56)]
        pub heads: PtrMut<DequeHead>,
        /// The deques' tasks: `warps × capacity`.
        #[offset(64)]
        pub items: PtrMut<Task>,
        /// The figures: `warps × STAT_SLOTS`.
        #[offset(72)]
        pub stats: PtrMut<u64>,
        /// The error word ([`ErrorBit`](crate::kernel::ErrorBit)s).
        #[offset(80)]
        pub error: PtrMut<u32>,
        /// The image's tile numbers (row-major) this launch traces, `tile_count` of them: a
        /// batch of a hybrid frame; null: every tile of the image.
        #[offset(88)]
        pub tiles: Ptr<u32>,
    }
}

shared_struct! {
    /// The `cuda-managed` kernel's work: one block per tile, each with a task stack in a slot
    /// of its own.
    #[c(rl_managed, size = 56)]
    ///
    /// ```
    /// use bytemuck::Zeroable;
    /// use layout::params::Managed;
    /// use layout::task::Task;
    /// use layout::{Ptr, PtrMut};
    ///
    /// let (slots, capacity) = (4, 64);
    /// let mut stacks = vec![Task::zeroed(); slots * capacity];
    /// let managed = Managed {
    ///     tile_edge: 16,
    ///     tiles_x: 2,
    ///     slots: slots as u32,
    ///     capacity: capacity as u32,
    ///     stacks: PtrMut::host(&mut stacks),
    ///     ..Managed::zeroed()
    /// };
    /// // No tile list: block `b` traces tile `b`.
    /// assert_eq!(managed.tiles, Ptr::NULL);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Managed {
        /// Tile edge in pixels.
        #[offset(0)]
        pub tile_edge: u32,
        /// Tiles across the image.
        #[offset(4)]
        pub tiles_x: u32,
        /// Stack slots: at least the number of blocks that can be resident at once.
        #[offset(8)]
        pub slots: u32,
        /// Tasks per stack.
        #[offset(12)]
        pub capacity: u32,
        /// Per slot, 1 while a block holds it.
        #[offset(16)]
        pub slot_taken: PtrMut<u32>,
        /// The stacks: `slots × capacity` tasks.
        #[offset(24)]
        pub stacks: PtrMut<Task>,
        /// The figures: `slots × STAT_SLOTS`.
        #[offset(32)]
        pub stats: PtrMut<u64>,
        /// The error word.
        #[offset(40)]
        pub error: PtrMut<u32>,
        /// The image's tile numbers this launch traces, one a block: a batch of a hybrid
        /// frame; null: block `b` traces tile `b`.
        #[offset(48)]
        pub tiles: Ptr<u32>,
    }
}

shared_struct! {
    /// The wide BVH in its GPU form ([`WideNode`]), as its traversal reads it. Its arrays are
    /// in the wide tree's own leaf order, which is not the octree's.
    #[c(rl_wide_bvh, size = 32)]
    ///
    /// ```
    /// use bytemuck::Zeroable;
    /// use layout::params::WideBvh;
    /// use layout::wide::WideNode;
    /// use layout::{Ptr, Triangle};
    ///
    /// let nodes = [WideNode::zeroed()];
    /// let triangles = [Triangle::zeroed(); 2];
    /// let bvh = WideBvh {
    ///     nodes: Ptr::host(&nodes),
    ///     triangles: Ptr::host(&triangles),
    ///     ..WideBvh::zeroed()
    /// };
    /// assert_eq!(bvh.nodes.address(), nodes.as_ptr() as u64);
    /// assert_eq!(bvh.ids, Ptr::NULL);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    pub struct WideBvh {
        /// The nodes; the root is node 0.
        #[offset(0)]
        pub nodes: Ptr<WideNode>,
        /// The triangles in the tree's leaf order.
        #[offset(8)]
        pub triangles: Ptr<Triangle>,
        /// The index in the scene's input of each triangle.
        #[offset(16)]
        pub ids: Ptr<u32>,
        /// The boxes' padding, as [`Scene::padding`].
        #[offset(24)]
        pub padding: f32,
        /// Zero: rounds the struct to its 8-byte alignment.
        #[offset(28)]
        pub pad: u32,
    }
}
