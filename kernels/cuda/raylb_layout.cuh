// raylb's data layout: every struct, code and constant the kernels share with the host.
//
// GENERATED from the Rust definitions of the `layout` crate (layout/src); do not edit.
// Write it again with: RAYLB_UPDATE_LAYOUT=1 cargo test -p raylb-kernels --test layout_header
//
// Each struct is followed by static_asserts of its size, its alignment and every field's
// offset: the numbers the Rust definitions assert at compile time. Included by
// raylb_math.cuh, so by the kernels (NVRTC) and by the host build of the math (C++).
#ifndef RAYLB_LAYOUT_CUH
#define RAYLB_LAYOUT_CUH

#if defined(__CUDACC_RTC__)
// NVRTC has no <stddef.h>; its front end evaluates the classic offsetof expression as a
// constant through __INTADDR__.
#define RL_OFFSET_OF(type, field) ((unsigned long long)__INTADDR__(&((type*)0)->field))
#else
#include <stddef.h>
#define RL_OFFSET_OF(type, field) offsetof(type, field)
#endif

typedef unsigned char rl_u8;
typedef unsigned int rl_u32;
typedef unsigned long long rl_u64;
static_assert(sizeof(rl_u8) == 1 && sizeof(rl_u32) == 4 && sizeof(rl_u64) == 8, "integer sizes");
static_assert(sizeof(float) == 4 && sizeof(void*) == 8, "float and address sizes");

// glam::Vec3.
struct rl_vec3 {
    float x;
    float y;
    float z;
};
static_assert(sizeof(rl_vec3) == 12, "rl_vec3: 12 bytes, as glam::Vec3");
static_assert(RL_OFFSET_OF(rl_vec3, x) == 0 && RL_OFFSET_OF(rl_vec3, y) == 4 && RL_OFFSET_OF(rl_vec3, z) == 8, "rl_vec3: x, y, z as glam::Vec3");

// -----------------------------------------------------------------------------------------------
// Constants.

// Bits of a [`FlatNode`]'s leaf word that count its triangles; the first triangle's index
// takes the other bits.
#define RL_LEAF_COUNT_BITS 5u

// Most triangles in one leaf of the octree: the count's bits all set. The wide BVH keeps
// to the same bound.
#define RL_MAX_LEAF_SIZE 31u

// Where a task's kind starts in its `depth_kind` word; the depth takes the bits below.
#define RL_KIND_SHIFT 8u

// The depth's bits of a `depth_kind` word.
#define RL_DEPTH_MASK 255u

// Bits of each coordinate of a tile task's packed corners: images are at most
// `2^TILE_CORNER_BITS − 1` pixels a side on the GPU.
#define RL_TILE_CORNER_BITS 16u

// The edge of the pieces a large tile is cut into.
#define RL_PIECE 32u

// Tiles above this many pixels (a 32×32 tile) cut themselves into pieces while they
// run: small enough that stolen pieces of a large tile balance well, large enough that
// cutting costs nothing next to tracing (one task per thousand camera rays).
#define RL_SPLIT_ABOVE 1024u

// Lanes of a warp.
#define RL_WARP 32

// Warps in a block of the persistent kernel.
#define RL_WARPS_PER_BLOCK 4

// Ray tasks a persistent warp's shared-memory buffer holds: two per lane, the most
// children one step can spawn.
#define RL_BUFFER 64

// Threads of a `cuda-managed` block.
#define RL_MANAGED_THREADS 128

// Figures kept per worker ([`Stat`] indexes them), with room to spare.
#define RL_STAT_SLOTS 16

// Children per node.
#define RL_WIDE_CHILDREN 8

// Entries of the traversal's stack: one per inner node on the path from the root. The
// renderer's wide build is at most 67 inner nodes deep (40 levels of heuristic splits,
// then at most 27 of median splits), and its GPU form checks the depth it gets.
#define RL_WIDE_STACK 67

// -----------------------------------------------------------------------------------------------
// Codes.

// What a task is: why its ray was traced, or a tile.
// (layout::task::TaskKind.)
// From the eye through a pixel.
#define RL_KIND_CAMERA 0u
// A mirror reflection, or a refraction turned back by total internal reflection.
#define RL_KIND_REFLECTION 1u
// Through a refracting surface.
#define RL_KIND_REFRACTION 2u
// Not a ray: a tile of camera rays, its corners packed in `pixel` (`x0 | y0 <<
// TILE_CORNER_BITS`) and `tile_end` (`x1 | y1 << TILE_CORNER_BITS`).
#define RL_KIND_TILE 3u

// The figures a persistent warp (or a `cuda-managed` block slot) writes back, by slot.
// (layout::kernel::Stat.)
// Tiles started.
#define RL_ST_TILES 0
// Camera rays traced.
#define RL_ST_CAMERA 1
// Shadow rays traced.
#define RL_ST_SHADOW 2
// Reflection rays traced.
#define RL_ST_REFLECTION 3
// Refraction rays traced.
#define RL_ST_REFRACTION 4
// Warp steps.
#define RL_ST_STEPS 5
// Active lanes summed over steps.
#define RL_ST_ACTIVE_LANES 6
// Steal attempts.
#define RL_ST_STEAL_ATTEMPTS 7
// Successful steals.
#define RL_ST_STEAL_SUCCESSES 8
// Tasks brought back by steals.
#define RL_ST_TASKS_STOLEN 9
// Clock cycles spent tracing and taking work.
#define RL_ST_BUSY_CYCLES 10
// Clock cycles with nothing to trace.
#define RL_ST_IDLE_CYCLES 11
// Most tasks in the warp's deque at once.
#define RL_ST_PEAK_QUEUED 12
// Child tasks spawned.
#define RL_ST_SPAWNED 13

// Where a persistent warp's next tile comes from: the balancer.
// (layout::kernel::Mode.)
// An interleaved share of the tiles, fixed up front.
#define RL_MODE_STATIC 0u
// A global counter.
#define RL_MODE_COUNTER 1u
// The warp's own deque, then other warps' deques.
#define RL_MODE_STEALING 2u

// The warps' deques under `stealing`.
// (layout::kernel::WarpDeque.)
// A spin lock in the head: the owner takes it for every operation on its deque, a
// thief tries it once.
#define RL_DEQUE_LOCKED 0u
// Non-blocking, as Arora, Blumofe and Plaxton's and Chase and Lev's: `top` and `bot`
// only grow, task `i` lies at `items[i % capacity]`; a thief claims the oldest task
// with a compare-and-swap on `top`, the owner only when it takes the last one.
#define RL_DEQUE_NON_BLOCKING 1u

// The bits of the error word the kernels set and the host reads back.
// (layout::kernel::ErrorBit.)
// A warp's deque overflowed.
#define RL_ERROR_DEQUE_FULL 1u
// A `cuda-managed` block's task stack overflowed.
#define RL_ERROR_STACK_FULL 2u

// -----------------------------------------------------------------------------------------------
// The scene.

// One node of a flattened order of the octree-built BVH, 32 bytes, aligned so that it
// never straddles a cache line.
//
// Two lanes of four floats, each loaded whole into one SIMD register by the CPU's box test
// and as one `float4` on a GPU: the box's three *near* faces (per axis, the face a ray of
// this order's octant enters by) with the skip index in the fourth lane, and the three
// *far* faces with the leaf word in the fourth lane. The integers are stored by their bits.
// (layout::scene::FlatNode.)
struct alignas(32) rl_node {
    // `near.x, near.y, near.z`, then the bits of [`skip`](Self::skip).
    float near_skip[4];
    // `far.x, far.y, far.z`, then the bits of [`leaf`](Self::leaf).
    float far_leaf[4];
};
static_assert(sizeof(rl_node) == 32 && alignof(rl_node) == 32, "rl_node: 32 bytes aligned to 32, as layout::scene::FlatNode");
static_assert(RL_OFFSET_OF(rl_node, near_skip) == 0, "rl_node.near_skip at byte 0, as layout::scene::FlatNode");
static_assert(RL_OFFSET_OF(rl_node, far_leaf) == 16, "rl_node.far_leaf at byte 16, as layout::scene::FlatNode");

// A triangle by its three vertices, in the order that defines its front face
// (counter-clockwise seen from the front).
// (layout::scene::Triangle.)
struct rl_triangle {
    // The vertices.
    rl_vec3 v[3];
};
static_assert(sizeof(rl_triangle) == 36 && alignof(rl_triangle) == 4, "rl_triangle: 36 bytes aligned to 4, as layout::scene::Triangle");
static_assert(RL_OFFSET_OF(rl_triangle, v) == 0, "rl_triangle.v at byte 0, as layout::scene::Triangle");

// What shading needs of one triangle beyond its vertices, in a structure's leaf order
// (indexed like its triangles).
// (layout::scene::TriangleShading.)
struct rl_shading {
    // Unit shading normals at the three vertices (the face normal when flat-shaded).
    rl_vec3 normals[3];
    // Index into the scene's materials.
    rl_u32 material;
};
static_assert(sizeof(rl_shading) == 40 && alignof(rl_shading) == 4, "rl_shading: 40 bytes aligned to 4, as layout::scene::TriangleShading");
static_assert(RL_OFFSET_OF(rl_shading, normals) == 0, "rl_shading.normals at byte 0, as layout::scene::TriangleShading");
static_assert(RL_OFFSET_OF(rl_shading, material) == 36, "rl_shading.material at byte 36, as layout::scene::TriangleShading");

// A surface's response to light.
//
// Shading adds `ambient ⊙ scene ambient`, and for each light that sees the point
// `diffuse · max(0, n·l) + specular · max(0, r·v)^shininess` times the light's colour; a
// reflection ray carries weight `reflectivity` and a refraction ray `refractivity`.
// (layout::scene::Material.)
struct rl_material {
    // Multiplies the scene's ambient light.
    rl_vec3 ambient;
    // Lambertian coefficient.
    rl_vec3 diffuse;
    // Phong highlight coefficient.
    rl_vec3 specular;
    // Phong exponent, a whole number so that the power is a product.
    rl_u32 shininess;
    // Weight of the mirror reflection ray.
    rl_vec3 reflectivity;
    // Weight of the refraction ray.
    rl_vec3 refractivity;
    // Index of refraction of the material's inside.
    float ior;
};
static_assert(sizeof(rl_material) == 68 && alignof(rl_material) == 4, "rl_material: 68 bytes aligned to 4, as layout::scene::Material");
static_assert(RL_OFFSET_OF(rl_material, ambient) == 0, "rl_material.ambient at byte 0, as layout::scene::Material");
static_assert(RL_OFFSET_OF(rl_material, diffuse) == 12, "rl_material.diffuse at byte 12, as layout::scene::Material");
static_assert(RL_OFFSET_OF(rl_material, specular) == 24, "rl_material.specular at byte 24, as layout::scene::Material");
static_assert(RL_OFFSET_OF(rl_material, shininess) == 36, "rl_material.shininess at byte 36, as layout::scene::Material");
static_assert(RL_OFFSET_OF(rl_material, reflectivity) == 40, "rl_material.reflectivity at byte 40, as layout::scene::Material");
static_assert(RL_OFFSET_OF(rl_material, refractivity) == 52, "rl_material.refractivity at byte 52, as layout::scene::Material");
static_assert(RL_OFFSET_OF(rl_material, ior) == 64, "rl_material.ior at byte 64, as layout::scene::Material");

// A point or spot light. A point light has `cos_outer = −2`, so every direction is inside
// its "cone".
// (layout::scene::Light.)
struct rl_light {
    // Where the light is.
    rl_vec3 position;
    // Colour times intensity.
    rl_vec3 color;
    // Unit direction the spot points in (unused by point lights).
    rl_vec3 direction;
    // Cosine of the cone's half-angle: no light beyond it. Computed on the host.
    float cos_outer;
    // Cosine of the full-strength half-angle; between the two the strength is linear in
    // the cosine. Computed on the host.
    float cos_inner;
};
static_assert(sizeof(rl_light) == 44 && alignof(rl_light) == 4, "rl_light: 44 bytes aligned to 4, as layout::scene::Light");
static_assert(RL_OFFSET_OF(rl_light, position) == 0, "rl_light.position at byte 0, as layout::scene::Light");
static_assert(RL_OFFSET_OF(rl_light, color) == 12, "rl_light.color at byte 12, as layout::scene::Light");
static_assert(RL_OFFSET_OF(rl_light, direction) == 24, "rl_light.direction at byte 24, as layout::scene::Light");
static_assert(RL_OFFSET_OF(rl_light, cos_outer) == 36, "rl_light.cos_outer at byte 36, as layout::scene::Light");
static_assert(RL_OFFSET_OF(rl_light, cos_inner) == 40, "rl_light.cos_inner at byte 40, as layout::scene::Light");

// A pinhole camera: an orthonormal frame at `origin` and the half-extent of the image
// plane at distance 1. The tangent of the half field of view is computed once on the host
// and handed to every device as a value.
// (layout::scene::Camera.)
struct rl_camera {
    // The eye.
    rl_vec3 origin;
    // Unit viewing direction.
    rl_vec3 forward;
    // Unit vector to the right of the image.
    rl_vec3 right;
    // Unit vector to the top of the image.
    rl_vec3 up;
    // `tan(fov / 2)`: half the height of the image plane at distance 1.
    float tan_half_fov;
};
static_assert(sizeof(rl_camera) == 52 && alignof(rl_camera) == 4, "rl_camera: 52 bytes aligned to 4, as layout::scene::Camera");
static_assert(RL_OFFSET_OF(rl_camera, origin) == 0, "rl_camera.origin at byte 0, as layout::scene::Camera");
static_assert(RL_OFFSET_OF(rl_camera, forward) == 12, "rl_camera.forward at byte 12, as layout::scene::Camera");
static_assert(RL_OFFSET_OF(rl_camera, right) == 24, "rl_camera.right at byte 24, as layout::scene::Camera");
static_assert(RL_OFFSET_OF(rl_camera, up) == 36, "rl_camera.up at byte 36, as layout::scene::Camera");
static_assert(RL_OFFSET_OF(rl_camera, tan_half_fov) == 48, "rl_camera.tan_half_fov at byte 48, as layout::scene::Camera");

// Settings of the integrator, from the scene's `[render]` table.
// (layout::scene::RenderSettings.)
struct rl_settings {
    // The deepest generation of secondary rays (camera rays are generation 0).
    rl_u32 max_depth;
    // Secondary rays whose largest weight component is below this are not spawned.
    float weight_cutoff;
    // Ambient light.
    rl_vec3 ambient;
    // What rays that hit nothing see.
    rl_vec3 background;
    // How far secondary and shadow rays start off the surface they leave, along its
    // normal, relative to the hit triangle's coordinates: `(m + s) · s`, with `m` the
    // largest magnitude of any coordinate of the triangle's vertices and the hit point,
    // and `s` this scale (2^-16, about 128 units in the last place). The offset depends
    // on the hit triangle alone, never on how far the scene's other geometry reaches
    // (renderer/src/math.rs, `surface_offset`).
    float offset_scale;
};
static_assert(sizeof(rl_settings) == 36 && alignof(rl_settings) == 4, "rl_settings: 36 bytes aligned to 4, as layout::scene::RenderSettings");
static_assert(RL_OFFSET_OF(rl_settings, max_depth) == 0, "rl_settings.max_depth at byte 0, as layout::scene::RenderSettings");
static_assert(RL_OFFSET_OF(rl_settings, weight_cutoff) == 4, "rl_settings.weight_cutoff at byte 4, as layout::scene::RenderSettings");
static_assert(RL_OFFSET_OF(rl_settings, ambient) == 8, "rl_settings.ambient at byte 8, as layout::scene::RenderSettings");
static_assert(RL_OFFSET_OF(rl_settings, background) == 20, "rl_settings.background at byte 20, as layout::scene::RenderSettings");
static_assert(RL_OFFSET_OF(rl_settings, offset_scale) == 32, "rl_settings.offset_scale at byte 32, as layout::scene::RenderSettings");

// One node of the wide BVH's GPU form: eight quantized child boxes, 80 bytes, 16-byte
// aligned for `float4`-sized loads.
// (layout::wide::WideNode.)
struct alignas(16) rl_wide_node {
    // Per axis, `p`: where byte 0 of a plane lies.
    float origin[3];
    // Per axis, the biased exponent `e + 127` of the scale `2^e`: the scale's own bits are
    // this byte shifted left by 23.
    rl_u8 exponents[3];
    // Bit `slot` set: the child in `slot` is an inner node.
    rl_u8 inner_mask;
    // The node index of the first inner child.
    rl_u32 child_base;
    // The leaf-order index of the first triangle of the first leaf child.
    rl_u32 triangle_base;
    // Per slot, the leaf's triangles; 0 for an inner node or an empty slot.
    rl_u8 counts[8];
    // Per axis and slot, the byte of the child's lower plane.
    rl_u8 lo[3][8];
    // Per axis and slot, the byte of the child's upper plane.
    rl_u8 hi[3][8];
};
static_assert(sizeof(rl_wide_node) == 80 && alignof(rl_wide_node) == 16, "rl_wide_node: 80 bytes aligned to 16, as layout::wide::WideNode");
static_assert(RL_OFFSET_OF(rl_wide_node, origin) == 0, "rl_wide_node.origin at byte 0, as layout::wide::WideNode");
static_assert(RL_OFFSET_OF(rl_wide_node, exponents) == 12, "rl_wide_node.exponents at byte 12, as layout::wide::WideNode");
static_assert(RL_OFFSET_OF(rl_wide_node, inner_mask) == 15, "rl_wide_node.inner_mask at byte 15, as layout::wide::WideNode");
static_assert(RL_OFFSET_OF(rl_wide_node, child_base) == 16, "rl_wide_node.child_base at byte 16, as layout::wide::WideNode");
static_assert(RL_OFFSET_OF(rl_wide_node, triangle_base) == 20, "rl_wide_node.triangle_base at byte 20, as layout::wide::WideNode");
static_assert(RL_OFFSET_OF(rl_wide_node, counts) == 24, "rl_wide_node.counts at byte 24, as layout::wide::WideNode");
static_assert(RL_OFFSET_OF(rl_wide_node, lo) == 32, "rl_wide_node.lo at byte 32, as layout::wide::WideNode");
static_assert(RL_OFFSET_OF(rl_wide_node, hi) == 56, "rl_wide_node.hi at byte 56, as layout::wide::WideNode");

// -----------------------------------------------------------------------------------------------
// Tasks and what the kernels count.

// A ray task or a tile, 48 bytes; 16-byte aligned, so that the kernels move tasks with
// 16-byte loads and stores.
// (layout::task::Task.)
struct alignas(16) rl_task {
    // Where the ray starts.
    rl_vec3 origin;
    // Unit direction.
    rl_vec3 dir;
    // What this ray's radiance is worth in its pixel.
    rl_vec3 weight;
    // Row-major pixel index; a tile's first corner.
    rl_u32 pixel;
    // `depth | kind << KIND_SHIFT`.
    rl_u32 depth_kind;
    // A tile's second corner; 0 for a ray.
    rl_u32 tile_end;
};
static_assert(sizeof(rl_task) == 48 && alignof(rl_task) == 16, "rl_task: 48 bytes aligned to 16, as layout::task::Task");
static_assert(RL_OFFSET_OF(rl_task, origin) == 0, "rl_task.origin at byte 0, as layout::task::Task");
static_assert(RL_OFFSET_OF(rl_task, dir) == 12, "rl_task.dir at byte 12, as layout::task::Task");
static_assert(RL_OFFSET_OF(rl_task, weight) == 24, "rl_task.weight at byte 24, as layout::task::Task");
static_assert(RL_OFFSET_OF(rl_task, pixel) == 36, "rl_task.pixel at byte 36, as layout::task::Task");
static_assert(RL_OFFSET_OF(rl_task, depth_kind) == 40, "rl_task.depth_kind at byte 40, as layout::task::Task");
static_assert(RL_OFFSET_OF(rl_task, tile_end) == 44, "rl_task.tile_end at byte 44, as layout::task::Task");

// Rays one worker traced, by kind (the renderer's `RayCounts`).
// (layout::kernel::Counts.)
struct rl_counts {
    // Camera rays.
    rl_u64 camera;
    // Shadow rays.
    rl_u64 shadow;
    // Reflection rays.
    rl_u64 reflection;
    // Refraction rays.
    rl_u64 refraction;
};
static_assert(sizeof(rl_counts) == 32 && alignof(rl_counts) == 8, "rl_counts: 32 bytes aligned to 8, as layout::kernel::Counts");
static_assert(RL_OFFSET_OF(rl_counts, camera) == 0, "rl_counts.camera at byte 0, as layout::kernel::Counts");
static_assert(RL_OFFSET_OF(rl_counts, shadow) == 8, "rl_counts.shadow at byte 8, as layout::kernel::Counts");
static_assert(RL_OFFSET_OF(rl_counts, reflection) == 16, "rl_counts.reflection at byte 16, as layout::kernel::Counts");
static_assert(RL_OFFSET_OF(rl_counts, refraction) == 24, "rl_counts.refraction at byte 24, as layout::kernel::Counts");

// The head of one warp's deque. In the locked deque ([`WarpDeque::Locked`]) `lock` guards
// `top` and `bot`: every access to them happens between taking and releasing the lock.
// The owner alone pushes and pops at `bot` and alone resets the deque to empty; thieves
// only advance `top`. In the non-blocking deque `lock` is unused and `top` and `bot` only
// grow. The host allocates the heads zeroed.
// (layout::kernel::DequeHead.)
struct rl_deque_head {
    // 0 free, 1 held (the locked deque).
    rl_u32 lock;
    // The oldest task's index.
    rl_u32 top;
    // One past the newest task's index.
    rl_u32 bot;
    // Zero: rounds the head to 16 bytes.
    rl_u32 pad;
};
static_assert(sizeof(rl_deque_head) == 16 && alignof(rl_deque_head) == 4, "rl_deque_head: 16 bytes aligned to 4, as layout::kernel::DequeHead");
static_assert(RL_OFFSET_OF(rl_deque_head, lock) == 0, "rl_deque_head.lock at byte 0, as layout::kernel::DequeHead");
static_assert(RL_OFFSET_OF(rl_deque_head, top) == 4, "rl_deque_head.top at byte 4, as layout::kernel::DequeHead");
static_assert(RL_OFFSET_OF(rl_deque_head, bot) == 8, "rl_deque_head.bot at byte 8, as layout::kernel::DequeHead");
static_assert(RL_OFFSET_OF(rl_deque_head, pad) == 12, "rl_deque_head.pad at byte 12, as layout::kernel::DequeHead");

// -----------------------------------------------------------------------------------------------
// The kernels' parameters.

// Everything tracing reads: the first parameter of every kernel. The scene is traced
// through one of two structures: the octree (`nodes`, with `wide_nodes` null) or the
// wide BVH's GPU form (`wide_nodes`, with `nodes` null); the per-triangle arrays are in
// that structure's leaf order.
// (layout::params::Scene.)
struct rl_scene {
    // The octree's eight pre-order node arrays, one per ray octant (bit `i` set: negative
    // along axis `i`), each of `node_count` nodes, one after the other; null when the
    // scene is traced through the wide BVH.
    const rl_node* nodes;
    // The triangles in the structure's leaf order.
    const rl_triangle* triangles;
    // The index in the scene's input of each triangle: the closest hit's tie-breaker.
    const rl_u32* ids;
    // What shading needs of each triangle.
    const rl_shading* shading;
    // The materials `shading` indexes.
    const rl_material* materials;
    // The lights.
    const rl_light* lights;
    // Nodes in one order of the octree; 0 for the wide BVH.
    rl_u32 node_count;
    // Lights.
    rl_u32 light_count;
    // Image width in pixels.
    rl_u32 width;
    // Image height in pixels.
    rl_u32 height;
    // How far the BVH's boxes are grown beyond their triangles; the triangle test keeps
    // its distances inside the triangle's box grown as much.
    float padding;
    // The camera.
    rl_camera camera;
    // The integrator's settings.
    rl_settings settings;
    // Camera rays per pixel, through the points `PixelSamples` places in the pixel
    // (renderer/src/scene/camera.rs); each ray's contribution is weighted `1 / samples`.
    rl_u32 samples;
    // The wide BVH's nodes in its GPU form (the root is node 0); null when the scene is
    // traced through the octree.
    const rl_wide_node* wide_nodes;
};
static_assert(sizeof(rl_scene) == 168 && alignof(rl_scene) == 8, "rl_scene: 168 bytes aligned to 8, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, nodes) == 0, "rl_scene.nodes at byte 0, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, triangles) == 8, "rl_scene.triangles at byte 8, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, ids) == 16, "rl_scene.ids at byte 16, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, shading) == 24, "rl_scene.shading at byte 24, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, materials) == 32, "rl_scene.materials at byte 32, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, lights) == 40, "rl_scene.lights at byte 40, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, node_count) == 48, "rl_scene.node_count at byte 48, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, light_count) == 52, "rl_scene.light_count at byte 52, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, width) == 56, "rl_scene.width at byte 56, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, height) == 60, "rl_scene.height at byte 60, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, padding) == 64, "rl_scene.padding at byte 64, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, camera) == 68, "rl_scene.camera at byte 68, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, settings) == 120, "rl_scene.settings at byte 120, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, samples) == 156, "rl_scene.samples at byte 156, as layout::params::Scene");
static_assert(RL_OFFSET_OF(rl_scene, wide_nodes) == 160, "rl_scene.wide_nodes at byte 160, as layout::params::Scene");

// Where traced rays' results go.
// (layout::params::Film.)
struct rl_film {
    // The fixed-point sums, three per pixel, row-major.
    rl_u64* sums;
    // Rays per pixel, for the work map; null when not asked for.
    rl_u32* rays;
};
static_assert(sizeof(rl_film) == 16 && alignof(rl_film) == 8, "rl_film: 16 bytes aligned to 8, as layout::params::Film");
static_assert(RL_OFFSET_OF(rl_film, sums) == 0, "rl_film.sums at byte 0, as layout::params::Film");
static_assert(RL_OFFSET_OF(rl_film, rays) == 8, "rl_film.rays at byte 8, as layout::params::Film");

// The persistent kernel's work: its balancer, its tiles and its deques.
// (layout::params::Work.)
struct rl_work {
    // The balancer: a [`Mode`](crate::kernel::Mode) code.
    rl_u32 mode;
    // Persistent warps launched.
    rl_u32 warps;
    // Tile edge in pixels.
    rl_u32 tile_edge;
    // Tiles across the image.
    rl_u32 tiles_x;
    // Tiles of this launch: the image's, or `tiles`'s.
    rl_u32 tile_count;
    // Counter: tiles per grab.
    rl_u32 chunk;
    // Tasks per deque.
    rl_u32 capacity;
    // 1: a thief takes up to half the victim's tasks (at most 32); 0: one.
    rl_u32 steal_half;
    // Seed of the victim choice.
    rl_u32 seed;
    // Stealing: the warps' deque, a [`WarpDeque`](crate::kernel::WarpDeque) code.
    rl_u32 deque;
    // Counter: the next tile.
    rl_u32* tile_counter;
    // Stealing: tasks in deques plus tasks held by warps.
    int* pending;
    // One deque head per warp.
    rl_deque_head* heads;
    // The deques' tasks: `warps × capacity`.
    rl_task* items;
    // The figures: `warps × STAT_SLOTS`.
    rl_u64* stats;
    // The error word ([`ErrorBit`](crate::kernel::ErrorBit)s).
    rl_u32* error;
    // The image's tile numbers (row-major) this launch traces, `tile_count` of them: a
    // batch of a hybrid frame; null: every tile of the image.
    const rl_u32* tiles;
};
static_assert(sizeof(rl_work) == 96 && alignof(rl_work) == 8, "rl_work: 96 bytes aligned to 8, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, mode) == 0, "rl_work.mode at byte 0, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, warps) == 4, "rl_work.warps at byte 4, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, tile_edge) == 8, "rl_work.tile_edge at byte 8, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, tiles_x) == 12, "rl_work.tiles_x at byte 12, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, tile_count) == 16, "rl_work.tile_count at byte 16, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, chunk) == 20, "rl_work.chunk at byte 20, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, capacity) == 24, "rl_work.capacity at byte 24, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, steal_half) == 28, "rl_work.steal_half at byte 28, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, seed) == 32, "rl_work.seed at byte 32, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, deque) == 36, "rl_work.deque at byte 36, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, tile_counter) == 40, "rl_work.tile_counter at byte 40, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, pending) == 48, "rl_work.pending at byte 48, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, heads) == 56, "rl_work.heads at byte 56, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, items) == 64, "rl_work.items at byte 64, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, stats) == 72, "rl_work.stats at byte 72, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, error) == 80, "rl_work.error at byte 80, as layout::params::Work");
static_assert(RL_OFFSET_OF(rl_work, tiles) == 88, "rl_work.tiles at byte 88, as layout::params::Work");

// The `cuda-managed` kernel's work: one block per tile, each with a task stack in a slot
// of its own.
// (layout::params::Managed.)
struct rl_managed {
    // Tile edge in pixels.
    rl_u32 tile_edge;
    // Tiles across the image.
    rl_u32 tiles_x;
    // Stack slots: at least the number of blocks that can be resident at once.
    rl_u32 slots;
    // Tasks per stack.
    rl_u32 capacity;
    // Per slot, 1 while a block holds it.
    rl_u32* slot_taken;
    // The stacks: `slots × capacity` tasks.
    rl_task* stacks;
    // The figures: `slots × STAT_SLOTS`.
    rl_u64* stats;
    // The error word.
    rl_u32* error;
    // The image's tile numbers this launch traces, one a block: a batch of a hybrid
    // frame; null: block `b` traces tile `b`.
    const rl_u32* tiles;
};
static_assert(sizeof(rl_managed) == 56 && alignof(rl_managed) == 8, "rl_managed: 56 bytes aligned to 8, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, tile_edge) == 0, "rl_managed.tile_edge at byte 0, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, tiles_x) == 4, "rl_managed.tiles_x at byte 4, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, slots) == 8, "rl_managed.slots at byte 8, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, capacity) == 12, "rl_managed.capacity at byte 12, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, slot_taken) == 16, "rl_managed.slot_taken at byte 16, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, stacks) == 24, "rl_managed.stacks at byte 24, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, stats) == 32, "rl_managed.stats at byte 32, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, error) == 40, "rl_managed.error at byte 40, as layout::params::Managed");
static_assert(RL_OFFSET_OF(rl_managed, tiles) == 48, "rl_managed.tiles at byte 48, as layout::params::Managed");

// The wide BVH in its GPU form ([`WideNode`]), as its traversal reads it. Its arrays are
// in the wide tree's own leaf order, which is not the octree's.
// (layout::params::WideBvh.)
struct rl_wide_bvh {
    // The nodes; the root is node 0.
    const rl_wide_node* nodes;
    // The triangles in the tree's leaf order.
    const rl_triangle* triangles;
    // The index in the scene's input of each triangle.
    const rl_u32* ids;
    // The boxes' padding, as [`Scene::padding`].
    float padding;
    // Zero: rounds the struct to its 8-byte alignment.
    rl_u32 pad;
};
static_assert(sizeof(rl_wide_bvh) == 32 && alignof(rl_wide_bvh) == 8, "rl_wide_bvh: 32 bytes aligned to 8, as layout::params::WideBvh");
static_assert(RL_OFFSET_OF(rl_wide_bvh, nodes) == 0, "rl_wide_bvh.nodes at byte 0, as layout::params::WideBvh");
static_assert(RL_OFFSET_OF(rl_wide_bvh, triangles) == 8, "rl_wide_bvh.triangles at byte 8, as layout::params::WideBvh");
static_assert(RL_OFFSET_OF(rl_wide_bvh, ids) == 16, "rl_wide_bvh.ids at byte 16, as layout::params::WideBvh");
static_assert(RL_OFFSET_OF(rl_wide_bvh, padding) == 24, "rl_wide_bvh.padding at byte 24, as layout::params::WideBvh");
static_assert(RL_OFFSET_OF(rl_wide_bvh, pad) == 28, "rl_wide_bvh.pad at byte 28, as layout::params::WideBvh");
#endif  // RAYLB_LAYOUT_CUH
