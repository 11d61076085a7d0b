// raylb's traced arithmetic for CUDA: ray preparation, the slab and watertight triangle tests,
// stackless traversal of the flattened octree BVH, traversal of the wide BVH's compressed GPU
// form, the camera, the lights, Whitted shading of one ray task and the fixed-point film.
//
// Written once in the subset of C++ that both NVRTC and a host C++ compiler accept: no standard
// headers on the device side, no templates beyond what both take, no fused multiply-add (the
// kernels are compiled with --fmad=false, the host check with -ffp-contract=off), IEEE division
// and square root. Each function spells out the same operations, in the same order, as its
// Rust twin in renderer/src (math.rs, geometry/ray.rs, geometry/triangle.rs, bvh/traverse.rs,
// bvh/wide/traverse.rs, scene/camera.rs, scene/light.rs, integrator.rs, film.rs), so that a
// task traced here adds the
// same fixed-point numbers to its pixel as on the CPU: the determinism contract. The host build
// of this header is checked bit for bit against the Rust functions in `cargo test`.
//
// The data layouts are the Rust `#[repr(C)]` structs of the `layout` crate, copied to the device
// as they are; their C declarations, raylb_layout.cuh, are generated from those definitions.
#ifndef RAYLB_MATH_CUH
#define RAYLB_MATH_CUH

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RL_FN __device__ __forceinline__
#define RL_NOINLINE __device__ __noinline__
#define RL_ON_DEVICE 1
#else
#include <math.h>
#include <string.h>
#define RL_FN static inline
#define RL_NOINLINE static
#define RL_ON_DEVICE 0
#endif

#include "raylb_layout.cuh"

#define RL_INFINITY (rl_float_from_bits(0x7f800000))

// ---------------------------------------------------------------------------------------------
// Bits of floats.

RL_FN rl_u32 rl_float_bits(float x) {
#if RL_ON_DEVICE
    return __float_as_uint(x);
#else
    rl_u32 u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

RL_FN float rl_float_from_bits(rl_u32 u) {
#if RL_ON_DEVICE
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

// `f32::max` and `f32::min`: the other operand when one is NaN.
RL_FN float rl_max(float a, float b) { return fmaxf(a, b); }
RL_FN float rl_min(float a, float b) { return fminf(a, b); }

// ---------------------------------------------------------------------------------------------
// Vectors (renderer/src/math.rs).

RL_FN rl_vec3 rl_v(float x, float y, float z) {
    rl_vec3 r;
    r.x = x;
    r.y = y;
    r.z = z;
    return r;
}
RL_FN rl_vec3 rl_add(rl_vec3 a, rl_vec3 b) { return rl_v(a.x + b.x, a.y + b.y, a.z + b.z); }
RL_FN rl_vec3 rl_sub(rl_vec3 a, rl_vec3 b) { return rl_v(a.x - b.x, a.y - b.y, a.z - b.z); }
RL_FN rl_vec3 rl_mul(rl_vec3 a, rl_vec3 b) { return rl_v(a.x * b.x, a.y * b.y, a.z * b.z); }
RL_FN rl_vec3 rl_neg(rl_vec3 a) { return rl_v(-a.x, -a.y, -a.z); }
RL_FN rl_vec3 rl_scale(rl_vec3 v, float s) { return rl_v(v.x * s, v.y * s, v.z * s); }
RL_FN float rl_dot(rl_vec3 a, rl_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
RL_FN rl_vec3 rl_cross(rl_vec3 a, rl_vec3 b) {
    return rl_v(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
RL_FN rl_vec3 rl_normalize(rl_vec3 v) {
    float length = sqrtf(rl_dot(v, v));
    return rl_v(v.x / length, v.y / length, v.z / length);
}
RL_FN rl_vec3 rl_reflect(rl_vec3 d, rl_vec3 n) {
    float twice = 2.0f * rl_dot(d, n);
    return rl_sub(d, rl_scale(n, twice));
}
// False on total internal reflection.
RL_FN bool rl_refract(rl_vec3 d, rl_vec3 n, float eta, rl_vec3* out) {
    float cos_i = -rl_dot(d, n);
    float k = 1.0f - eta * eta * (1.0f - cos_i * cos_i);
    if (k < 0.0f) {
        return false;
    }
    float along_normal = eta * cos_i - sqrtf(k);
    *out = rl_normalize(rl_add(rl_scale(d, eta), rl_scale(n, along_normal)));
    return true;
}
RL_FN float rl_powi(float x, rl_u32 n) {
    float result = 1.0f;
    while (n > 0) {
        if (n & 1u) {
            result *= x;
        }
        x *= x;
        n >>= 1;
    }
    return result;
}
RL_FN float rl_max_component(rl_vec3 v) { return rl_max(rl_max(v.x, v.y), v.z); }

// The hit point on triangle `t` at barycentric weights `b` (math.rs, interpolate).
RL_FN rl_vec3 rl_interpolate(const rl_triangle& t, const float b[3]) {
    return rl_add(rl_add(rl_scale(t.v[0], b[0]), rl_scale(t.v[1], b[1])), rl_scale(t.v[2], b[2]));
}

// How far a ray leaving `point` on triangle `t` starts off the surface (math.rs,
// surface_offset): scaled to the hit triangle's coordinates, never to the scene's.
RL_FN float rl_surface_offset(const rl_triangle& t, rl_vec3 point, float s) {
    float mx = rl_max(rl_max(rl_max(fabsf(t.v[0].x), fabsf(t.v[1].x)), fabsf(t.v[2].x)),
                      fabsf(point.x));
    float my = rl_max(rl_max(rl_max(fabsf(t.v[0].y), fabsf(t.v[1].y)), fabsf(t.v[2].y)),
                      fabsf(point.y));
    float mz = rl_max(rl_max(rl_max(fabsf(t.v[0].z), fabsf(t.v[1].z)), fabsf(t.v[2].z)),
                      fabsf(point.z));
    return (rl_max(rl_max(mx, my), mz) + s) * s;
}

// ---------------------------------------------------------------------------------------------
// The prepared ray (geometry/ray.rs).

struct rl_prepared {
    float o[3];
    float inv[3];
    float shear[3];
    float t_min;
    float t_max;
    int octant;
    int kx, ky, kz;
};

// `v[axis]` of three values, by selection rather than by indexing: an array indexed by a value
// known only at run time would be kept in (slow) local memory on the GPU.
RL_FN float rl_pick(float x, float y, float z, int axis) {
    return axis == 0 ? x : (axis == 1 ? y : z);
}
RL_FN float rl_axis(rl_vec3 v, int axis) { return rl_pick(v.x, v.y, v.z, axis); }

RL_FN rl_prepared rl_prepare(rl_vec3 origin, rl_vec3 dir, float t_min, float t_max) {
    rl_prepared r;
    float ax = fabsf(dir.x), ay = fabsf(dir.y), az = fabsf(dir.z);
    int kz = (ax >= ay && ax >= az) ? 0 : (ay >= az ? 1 : 2);
    int kx = (kz + 1) % 3;
    int ky = (kx + 1) % 3;
    float dz = rl_pick(dir.x, dir.y, dir.z, kz);
    // Swapping keeps the winding of the projected triangle.
    if (dz < 0.0f) {
        int s = kx;
        kx = ky;
        ky = s;
    }
    r.octant = (int)(rl_float_bits(dir.x) >> 31) | (int)(rl_float_bits(dir.y) >> 31) << 1 |
               (int)(rl_float_bits(dir.z) >> 31) << 2;
    r.o[0] = origin.x;
    r.o[1] = origin.y;
    r.o[2] = origin.z;
    r.inv[0] = 1.0f / dir.x;
    r.inv[1] = 1.0f / dir.y;
    r.inv[2] = 1.0f / dir.z;
    r.kx = kx;
    r.ky = ky;
    r.kz = kz;
    r.shear[0] = rl_pick(dir.x, dir.y, dir.z, kx) / dz;
    r.shear[1] = rl_pick(dir.x, dir.y, dir.z, ky) / dz;
    r.shear[2] = 1.0f / dz;
    r.t_min = t_min;
    r.t_max = t_max;
    return r;
}

// The slab test against faces already ordered for the ray's octant: `slab_scalar` in Rust,
// which gives the same bits as its four-lane version (a maximum or minimum is exact in any
// order, NaN lanes skipped in both). Returns enter in *enter, leave in *leave.
RL_FN void rl_slab(const rl_prepared& r, const float near_[3], const float far_[3], float t_min,
                   float t_max, float* enter, float* leave) {
    float n0 = (near_[0] - r.o[0]) * r.inv[0];
    float n1 = (near_[1] - r.o[1]) * r.inv[1];
    float n2 = (near_[2] - r.o[2]) * r.inv[2];
    float f0 = (far_[0] - r.o[0]) * r.inv[0];
    float f1 = (far_[1] - r.o[1]) * r.inv[1];
    float f2 = (far_[2] - r.o[2]) * r.inv[2];
    *enter = rl_max(rl_max(n0, n1), rl_max(n2, t_min));
    *leave = rl_min(rl_min(f0, f1), rl_min(f2, t_max));
}

// The slab test for a box given by its corners.
RL_FN void rl_slab_box(const rl_prepared& r, const float mn[3], const float mx[3], float t_min,
                       float t_max, float* enter, float* leave) {
    float near_[3], far_[3];
    for (int axis = 0; axis < 3; ++axis) {
        bool negative = (r.octant >> axis & 1) == 1;
        near_[axis] = negative ? mx[axis] : mn[axis];
        far_[axis] = negative ? mn[axis] : mx[axis];
    }
    rl_slab(r, near_, far_, t_min, t_max, enter, leave);
}

// ---------------------------------------------------------------------------------------------
// The watertight triangle test (geometry/triangle.rs).

RL_FN float rl_edge_f64(float cx, float cy, float bx, float by) {
    return (float)((double)cx * (double)by - (double)cy * (double)bx);
}

RL_FN void rl_padded_bounds(const rl_triangle& tri, float padding, float mn[3], float mx[3]) {
    rl_vec3 a = tri.v[0], b = tri.v[1], c = tri.v[2];
    mn[0] = rl_min(rl_min(a.x, b.x), c.x) - padding;
    mn[1] = rl_min(rl_min(a.y, b.y), c.y) - padding;
    mn[2] = rl_min(rl_min(a.z, b.z), c.z) - padding;
    mx[0] = rl_max(rl_max(a.x, b.x), c.x) + padding;
    mx[1] = rl_max(rl_max(a.y, b.y), c.y) + padding;
    mx[2] = rl_max(rl_max(a.z, b.z), c.z) + padding;
}

// Whether `r` crosses `tri` within (t_min, t_max); on a hit, *t and the unnormalised
// barycentric numerators uvw with their sum *det.
RL_FN bool rl_triangle_hit(const rl_triangle& tri, const rl_prepared& r, float padding, float* t,
                           float uvw[3], float* det_out) {
    float sx = r.shear[0], sy = r.shear[1], sz = r.shear[2];
    float a[3], b[3], c[3];
    const int k[3] = {r.kx, r.ky, r.kz};
#if RL_ON_DEVICE
#pragma unroll
#endif
    for (int i = 0; i < 3; ++i) {
        float o = rl_pick(r.o[0], r.o[1], r.o[2], k[i]);
        a[i] = rl_axis(tri.v[0], k[i]) - o;
        b[i] = rl_axis(tri.v[1], k[i]) - o;
        c[i] = rl_axis(tri.v[2], k[i]) - o;
    }
    float ax = a[0] - sx * a[2], ay = a[1] - sy * a[2];
    float bx = b[0] - sx * b[2], by = b[1] - sy * b[2];
    float cx = c[0] - sx * c[2], cy = c[1] - sy * c[2];
    float u = cx * by - cy * bx;
    float v = ax * cy - ay * cx;
    float w = bx * ay - by * ax;
    if (u == 0.0f || v == 0.0f || w == 0.0f) {
        u = rl_edge_f64(cx, cy, bx, by);
        v = rl_edge_f64(ax, ay, cx, cy);
        w = rl_edge_f64(bx, by, ax, ay);
    }
    if ((u < 0.0f || v < 0.0f || w < 0.0f) && (u > 0.0f || v > 0.0f || w > 0.0f)) {
        return false;
    }
    float det = u + v + w;
    if (det == 0.0f) {
        return false;
    }
    float t_raw = (u * (sz * a[2]) + v * (sz * b[2]) + w * (sz * c[2])) / det;
    float mn[3], mx[3];
    rl_padded_bounds(tri, padding, mn, mx);
    float enter, leave;
    rl_slab_box(r, mn, mx, -RL_INFINITY, RL_INFINITY, &enter, &leave);
    if (enter > leave) {
        return false;
    }
    float th = rl_min(rl_max(t_raw, enter), leave);
    if (!(th > r.t_min && th < r.t_max)) {
        return false;
    }
    *t = th;
    uvw[0] = u;
    uvw[1] = v;
    uvw[2] = w;
    *det_out = det;
    return true;
}

RL_FN bool rl_triangle_intersect(const rl_triangle& tri, const rl_prepared& r, float padding,
                                 float* t) {
    float uvw[3], det;
    return rl_triangle_hit(tri, r, padding, t, uvw, &det);
}

// ---------------------------------------------------------------------------------------------
// Stackless traversal (bvh/traverse.rs).

RL_FN void rl_load_node(const rl_node* node, float near_[3], float far_[3], rl_u32* skip,
                        rl_u32* leaf) {
#if RL_ON_DEVICE
    float4 a = __ldg(reinterpret_cast<const float4*>(node->near_skip));
    float4 b = __ldg(reinterpret_cast<const float4*>(node->far_leaf));
    near_[0] = a.x;
    near_[1] = a.y;
    near_[2] = a.z;
    *skip = __float_as_uint(a.w);
    far_[0] = b.x;
    far_[1] = b.y;
    far_[2] = b.z;
    *leaf = __float_as_uint(b.w);
#else
    for (int i = 0; i < 3; ++i) {
        near_[i] = node->near_skip[i];
        far_[i] = node->far_leaf[i];
    }
    *skip = rl_float_bits(node->near_skip[3]);
    *leaf = rl_float_bits(node->far_leaf[3]);
#endif
}

// Keeps the hit of triangle `k` (original index `original`) at `t` if it is closer than the
// closest so far (`best_t`, the ray's t_max before any; `best`, 0xffffffff before any; and
// `best_original`), or as close with a smaller original index: every structure finds the same
// hit (bvh/traverse.rs, `Closest::offer`). A statement on the traversal's own variables rather
// than a function on their addresses: the octree's traversal, which every kernel runs,
// compiles to the same code as when it was written out in place.
#define RL_CLOSEST_OFFER(t, k, original, best_t, best, best_original)                              \
    do {                                                                                           \
        bool closer = (best) == 0xffffffffu                                                        \
                          ? (t) < (best_t)                                                         \
                          : ((t) < (best_t) || ((t) == (best_t) && (original) < (best_original))); \
        if (closer) {                                                                              \
            (best_t) = (t);                                                                        \
            (best) = (k);                                                                          \
            (best_original) = (original);                                                          \
        }                                                                                          \
    } while (0)

// The octree's closest hit: the smallest t, equal t broken by the smaller original index.
// Returns the leaf-order triangle index, or 0xffffffff for a miss; *t_out its distance.
RL_FN rl_u32 rl_octree_closest_hit(const rl_scene& s, const rl_prepared& r, float* t_out) {
    const rl_node* nodes = s.nodes + (rl_u64)r.octant * s.node_count;
    float best_t = r.t_max;
    rl_u32 best = 0xffffffffu;
    rl_u32 best_original = 0;
    rl_u32 i = 0;
    while (i < s.node_count) {
        float near_[3], far_[3];
        rl_u32 skip, leaf;
        rl_load_node(nodes + i, near_, far_, &skip, &leaf);
        float enter, leave;
        rl_slab(r, near_, far_, r.t_min, best_t, &enter, &leave);
        bool hit = enter <= leave;
        if (hit && leaf != 0) {
            rl_u32 first = leaf >> RL_LEAF_COUNT_BITS;
            rl_u32 end = first + (leaf & RL_MAX_LEAF_SIZE);
            for (rl_u32 k = first; k < end; ++k) {
                float t;
                if (rl_triangle_intersect(s.triangles[k], r, s.padding, &t)) {
                    rl_u32 original = s.ids[k];
                    RL_CLOSEST_OFFER(t, k, original, best_t, best, best_original);
                }
            }
        }
        i = (hit && leaf == 0) ? i + 1 : skip;
    }
    *t_out = best_t;
    return best;
}

// Whether any triangle of the octree blocks the ray within (t_min, t_max): the shadow query.
RL_FN bool rl_octree_occluded(const rl_scene& s, const rl_prepared& r) {
    const rl_node* nodes = s.nodes + (rl_u64)r.octant * s.node_count;
    rl_u32 i = 0;
    while (i < s.node_count) {
        float near_[3], far_[3];
        rl_u32 skip, leaf;
        rl_load_node(nodes + i, near_, far_, &skip, &leaf);
        float enter, leave;
        rl_slab(r, near_, far_, r.t_min, r.t_max, &enter, &leave);
        if (enter <= leave) {
            if (leaf == 0) {
                i += 1;
                continue;
            }
            rl_u32 first = leaf >> RL_LEAF_COUNT_BITS;
            rl_u32 end = first + (leaf & RL_MAX_LEAF_SIZE);
            for (rl_u32 k = first; k < end; ++k) {
                float t;
                if (rl_triangle_intersect(s.triangles[k], r, s.padding, &t)) {
                    return true;
                }
            }
        }
        i = skip;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// The wide BVH in its GPU form (layout/src/wide.rs; built by bvh/wide/gpu.rs): eight quantized
// child boxes a node. Its closest hit and occlusion answer as the CPU's wide traversal
// (bvh/wide/traverse.rs) does: the same watertight triangle test with the same padding, the
// same closest-hit rule, and decoded boxes never smaller than the CPU's, so the same rays
// reach the same triangles. A node is read only by rl_wide_load, rl_wide_hits, rl_wide_child
// and rl_wide_leaf: another node format changes those four.

// Set bits of `x`, and the index of its lowest set bit (`x` nonzero).
RL_FN rl_u32 rl_popc(rl_u32 x) {
#if RL_ON_DEVICE
    return (rl_u32)__popc(x);
#else
    return (rl_u32)__builtin_popcount(x);
#endif
}
RL_FN rl_u32 rl_lowest_bit(rl_u32 x) {
#if RL_ON_DEVICE
    return (rl_u32)(__ffs((int)x) - 1);
#else
    return (rl_u32)__builtin_ctz(x);
#endif
}

// A copy of node `i`: five 16-byte loads through the read-only cache on the device.
RL_FN void rl_wide_load(const rl_wide_node* nodes, rl_u32 i, rl_wide_node* n) {
#if RL_ON_DEVICE
    const uint4* src = reinterpret_cast<const uint4*>(nodes + i);
    uint4* dst = reinterpret_cast<uint4*>(n);
#pragma unroll
    for (int k = 0; k < (int)(sizeof(rl_wide_node) / sizeof(uint4)); ++k) {
        dst[k] = __ldg(src + k);
    }
#else
    *n = nodes[i];
#endif
}

// The eight bytes of `b` as one word, byte `slot` at bit 8 slot (constant indices only, so
// that the device keeps it in registers).
RL_FN rl_u64 rl_bytes8(const rl_u8 b[8]) {
    rl_u64 w = 0;
#if RL_ON_DEVICE
#pragma unroll
#endif
    for (int k = 0; k < 8; ++k) {
        w |= (rl_u64)b[k] << (8 * k);
    }
    return w;
}

// The children of `n` that the ray enters within [r.t_min, t_max], as bits `slot ^ octant`:
// the lowest bit is the child the builder placed to be met first by rays of this octant. A
// plane decodes as `origin + q * scale` (layout::wide::WideNode::plane: the product exact,
// the sum rounded once), then the box goes through the slab test of the octree and the CPU.
RL_FN rl_u32 rl_wide_hits(const rl_wide_node& n, const rl_prepared& r, float t_max) {
    float scale[3];
#if RL_ON_DEVICE
#pragma unroll
#endif
    for (int axis = 0; axis < 3; ++axis) {
        scale[axis] = rl_float_from_bits((rl_u32)n.exponents[axis] << 23);
    }
    const rl_u64 counts = rl_bytes8(n.counts);
    rl_u32 hits = 0;
#if RL_ON_DEVICE
#pragma unroll
#endif
    for (int slot = 0; slot < RL_WIDE_CHILDREN; ++slot) {
        const bool used =
            ((n.inner_mask >> slot) & 1u) != 0 || ((counts >> (8 * slot)) & 0xffu) != 0;
        float mn[3], mx[3];
#if RL_ON_DEVICE
#pragma unroll
#endif
        for (int axis = 0; axis < 3; ++axis) {
            mn[axis] = n.origin[axis] + (float)n.lo[axis][slot] * scale[axis];
            mx[axis] = n.origin[axis] + (float)n.hi[axis][slot] * scale[axis];
        }
        float enter, leave;
        rl_slab_box(r, mn, mx, r.t_min, t_max, &enter, &leave);
        if (used && enter <= leave) {
            hits |= 1u << ((rl_u32)slot ^ (rl_u32)r.octant);
        }
    }
    return hits;
}

// The node index of the inner child in `slot`: inner children follow one another in slot
// order from `child_base`.
RL_FN rl_u32 rl_wide_child(const rl_wide_node& n, rl_u32 slot) {
    return n.child_base + rl_popc((rl_u32)n.inner_mask & ((1u << slot) - 1u));
}

// The triangles of the leaf in `slot`: returns how many, and their first in *first. The
// leaves' triangles follow one another in slot order from `triangle_base`, so a leaf starts
// after the counts of the slots before it: a byte-wise prefix sum, one multiplication (no
// byte carries: a node's leaves hold at most 8 × 31 triangles).
RL_FN rl_u32 rl_wide_leaf(const rl_wide_node& n, rl_u32 slot, rl_u32* first) {
    const rl_u64 counts = rl_bytes8(n.counts);
    const rl_u64 before = (counts * 0x0101010101010101ull) << 8;
    *first = n.triangle_base + (rl_u32)((before >> (8 * slot)) & 0xffu);
    return (rl_u32)((counts >> (8 * slot)) & 0xffu);
}

// A stack entry: a node, and the hit bits of its children still to visit.
RL_FN rl_u64 rl_wide_entry(rl_u32 node, rl_u32 hits) { return (rl_u64)node << 8 | hits; }

// The wide BVH's traversal. With `any` false, the closest hit: the smallest t, equal t broken
// by the smaller original index; with `any` true, the first triangle found to block the ray
// (the shadow query). Returns the triangle's index in the tree's leaf order, or 0xffffffff
// for a miss; *t_out its distance.
//
// Children are visited near first. A node whose children are not all visited yet waits on a
// stack of RL_WIDE_STACK entries, one per inner node on the path from the root (the builder
// checks that the tree is no deeper). A node's children are tested against the closest hit
// found when it is reached, so what lies behind that hit is skipped.
RL_FN rl_u32 rl_wide_traverse(const rl_wide_bvh& b, const rl_prepared& r, bool any,
                              float* t_out) {
    float best_t = r.t_max;
    rl_u32 best = 0xffffffffu;
    rl_u32 best_original = 0;
    rl_u64 stack[RL_WIDE_STACK];
    int depth = 0;
    rl_u32 node = 0;
    rl_wide_node n;
    rl_wide_load(b.nodes, node, &n);
    rl_u32 hits = rl_wide_hits(n, r, best_t);
    for (;;) {
        if (hits == 0) {
            if (depth == 0) {
                break;
            }
            const rl_u64 entry = stack[--depth];
            node = (rl_u32)(entry >> 8);
            hits = (rl_u32)entry & 0xffu;
            rl_wide_load(b.nodes, node, &n);
        }
        const rl_u32 slot = rl_lowest_bit(hits) ^ (rl_u32)r.octant;
        hits &= hits - 1u;
        if (((n.inner_mask >> slot) & 1u) != 0) {
            if (hits != 0) {
                stack[depth++] = rl_wide_entry(node, hits);
            }
            node = rl_wide_child(n, slot);
            rl_wide_load(b.nodes, node, &n);
            hits = rl_wide_hits(n, r, best_t);
            continue;
        }
        rl_u32 first;
        const rl_u32 count = rl_wide_leaf(n, slot, &first);
        for (rl_u32 k = first; k < first + count; ++k) {
            float t;
            if (rl_triangle_intersect(b.triangles[k], r, b.padding, &t)) {
                if (any) {
                    *t_out = t;
                    return k;
                }
                rl_u32 original = b.ids[k];
                RL_CLOSEST_OFFER(t, k, original, best_t, best, best_original);
            }
        }
    }
    *t_out = best_t;
    return best;
}

// The closest hit in the wide BVH, as rl_closest_hit in the octree.
RL_FN rl_u32 rl_wide_closest_hit(const rl_wide_bvh& b, const rl_prepared& r, float* t_out) {
    return rl_wide_traverse(b, r, false, t_out);
}

// Whether any triangle of the wide BVH blocks the ray within (t_min, t_max).
RL_FN bool rl_wide_occluded(const rl_wide_bvh& b, const rl_prepared& r) {
    float t;
    return rl_wide_traverse(b, r, true, &t) != 0xffffffffu;
}

// ---------------------------------------------------------------------------------------------
// The scene's structure: the wide BVH where `wide_nodes` is set, else the octree. Tracing is
// compiled once for each (the STRUCTURE parameter below), so that a kernel holds one traversal
// and the registers it needs: each kernel has an entry point per structure, and the host
// launches the one for the scene's.

#define RL_OCTREE 0
#define RL_WIDE 1

// The structure `s` is traced through: RL_WIDE or RL_OCTREE.
RL_FN int rl_scene_structure(const rl_scene& s) { return s.wide_nodes != 0 ? RL_WIDE : RL_OCTREE; }

RL_FN rl_wide_bvh rl_scene_wide(const rl_scene& s) {
    rl_wide_bvh b;
    b.nodes = s.wide_nodes;
    b.triangles = s.triangles;
    b.ids = s.ids;
    b.padding = s.padding;
    b.pad = 0;
    return b;
}

// The closest hit in the scene's structure, STRUCTURE (rl_scene_structure(s)): its leaf-order
// triangle index, or 0xffffffff for a miss; *t_out its distance.
template <int STRUCTURE>
RL_FN rl_u32 rl_closest_hit(const rl_scene& s, const rl_prepared& r, float* t_out) {
    if constexpr (STRUCTURE == RL_WIDE) {
        return rl_wide_closest_hit(rl_scene_wide(s), r, t_out);
    } else {
        return rl_octree_closest_hit(s, r, t_out);
    }
}

// Whether any triangle of the scene, in its structure STRUCTURE, blocks the ray within
// (t_min, t_max).
template <int STRUCTURE>
RL_FN bool rl_occluded(const rl_scene& s, const rl_prepared& r) {
    if constexpr (STRUCTURE == RL_WIDE) {
        return rl_wide_occluded(rl_scene_wide(s), r);
    } else {
        return rl_octree_occluded(s, r);
    }
}

// ---------------------------------------------------------------------------------------------
// Camera, lights, film (scene/camera.rs, scene/light.rs, film.rs).

// The unit direction of the camera ray through the point (ox, oy) of pixel (x, y), measured
// from the pixel's top left corner (scene/camera.rs, `sample_ray`).
RL_FN rl_vec3 rl_sample_dir(const rl_camera& c, rl_u32 x, rl_u32 y, float ox, float oy,
                            rl_u32 width, rl_u32 height) {
    float w = (float)width, h = (float)height;
    float aspect = w / h;
    float sx = (2.0f * ((float)x + ox) / w - 1.0f) * c.tan_half_fov * aspect;
    float sy = (1.0f - 2.0f * ((float)y + oy) / h) * c.tan_half_fov;
    return rl_normalize(rl_add(rl_add(c.forward, rl_scale(c.right, sx)), rl_scale(c.up, sy)));
}

// The camera ray through the centre of pixel (x, y) (`primary_ray`).
RL_FN rl_vec3 rl_primary_dir(const rl_camera& c, rl_u32 x, rl_u32 y, rl_u32 width,
                             rl_u32 height) {
    return rl_sample_dir(c, x, y, 0.5f, 0.5f, width, height);
}

// The bits of `x` in reverse order.
RL_FN rl_u32 rl_reverse_bits(rl_u32 x) {
#if RL_ON_DEVICE
    return __brev(x);
#else
    x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
    x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
    x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
    x = (x >> 8 & 0x00ff00ffu) | (x & 0x00ff00ffu) << 8;
    return x >> 16 | x << 16;
#endif
}

// Where sample `i` of `n` passes through its pixel, from the pixel's top left corner, as
// `PixelSamples::new` places it: x at the middle of the i-th of n equal columns, y at the
// middle of the row given by the radical inverse of i in k bits, 2^k the smallest power of
// two not below n. Every value is exact in f32 or rounded once, as on the CPU.
RL_FN void rl_sample_offset(rl_u32 i, rl_u32 n, float* ox, float* oy) {
    rl_u32 k = 0;
    while (((rl_u64)1 << k) < (rl_u64)n) {
        ++k;
    }
    rl_u32 reversed = k == 0 ? 0u : rl_reverse_bits(i) >> (32u - k);
    *ox = ((float)i + 0.5f) / (float)n;
    *oy = ((float)reversed + 0.5f) / (float)((rl_u64)1 << k);
}

RL_FN float rl_cone_factor(const rl_light& l, rl_vec3 to_point) {
    float c = rl_dot(to_point, l.direction);
    if (c >= l.cos_inner) {
        return 1.0f;
    } else if (c <= l.cos_outer) {
        return 0.0f;
    }
    return (c - l.cos_outer) / (l.cos_inner - l.cos_outer);
}

// One colour component as fixed point: x · 2^32 rounded half away from zero, saturated to
// [0, 2^40]; NaN gives 0.
#define RL_MAX_CONTRIBUTION (1ull << 40)
RL_FN rl_u64 rl_to_fixed(float x) {
    float scaled = roundf(x * 4294967296.0f);
    if (!(scaled > 0.0f)) {
        return 0;
    }
    if (scaled >= 1099511627776.0f) {
        return RL_MAX_CONTRIBUTION;
    }
    return (rl_u64)scaled;
}

// ---------------------------------------------------------------------------------------------
// The ray task and Whitted shading (integrator.rs).

// A task's kind (an RL_KIND_* code) and depth.
RL_FN rl_u32 rl_task_kind(const rl_task& t) { return t.depth_kind >> RL_KIND_SHIFT; }
RL_FN rl_u32 rl_task_depth(const rl_task& t) { return t.depth_kind & RL_DEPTH_MASK; }

RL_FN void rl_film_add(const rl_film& f, rl_u32 pixel, rl_vec3 rgb) {
    rl_u64 fixed[3] = {rl_to_fixed(rgb.x), rl_to_fixed(rgb.y), rl_to_fixed(rgb.z)};
    for (int c = 0; c < 3; ++c) {
        if (fixed[c] != 0) {
#if RL_ON_DEVICE
            atomicAdd(f.sums + 3ull * pixel + c, fixed[c]);
#else
            f.sums[3ull * pixel + c] += fixed[c];
#endif
        }
    }
}

RL_FN void rl_film_count(const rl_film& f, rl_u32 pixel, rl_u32 rays) {
    if (f.rays) {
#if RL_ON_DEVICE
        atomicAdd(f.rays + pixel, rays);
#else
        f.rays[pixel] += rays;
#endif
    }
}

// The camera ray task of sample `sample` (of the scene's `samples`) of pixel (x, y).
RL_FN rl_task rl_camera_task(const rl_scene& s, rl_u32 x, rl_u32 y, rl_u32 sample) {
    float ox, oy;
    rl_sample_offset(sample, s.samples, &ox, &oy);
    rl_task t;
    t.origin = s.camera.origin;
    t.dir = rl_sample_dir(s.camera, x, y, ox, oy, s.width, s.height);
    t.weight = rl_v(1.0f, 1.0f, 1.0f);
    t.pixel = y * s.width + x;
    t.depth_kind = RL_KIND_CAMERA << RL_KIND_SHIFT;
    t.tile_end = 0;
    return t;
}

RL_FN rl_task rl_child(const rl_task& parent, rl_vec3 origin, rl_vec3 dir, rl_vec3 weight,
                       rl_u32 kind) {
    rl_task t;
    t.origin = origin;
    t.dir = dir;
    t.weight = weight;
    t.pixel = parent.pixel;
    t.depth_kind = (rl_task_depth(parent) + 1) | kind << RL_KIND_SHIFT;
    t.tile_end = 0;
    return t;
}

RL_FN bool rl_worth(rl_vec3 w, float cutoff) {
    float m = rl_max_component(w);
    return m > 0.0f && m >= cutoff;
}

// Traces one ray task: adds its contribution (times the sample weight, 1 / samples) to the
// film, counts its rays, and writes its children (reflection first, then refraction) to
// children[0..return value). A task's weight is its path's alone, as on the CPU. STRUCTURE is
// the scene's structure, rl_scene_structure(s).
template <int STRUCTURE>
RL_FN int rl_trace(const rl_scene& s, const rl_task& task, const rl_film& film,
                         rl_counts* counts, rl_task children[2]) {
    rl_u32 kind = rl_task_kind(task);
    if (kind == RL_KIND_CAMERA) {
        counts->camera += 1;
    } else if (kind == RL_KIND_REFLECTION) {
        counts->reflection += 1;
    } else {
        counts->refraction += 1;
    }
    const float sample_weight = 1.0f / (float)s.samples;
    rl_prepared r = rl_prepare(task.origin, task.dir, 0.0f, RL_INFINITY);
    float t;
    rl_u32 k = rl_closest_hit<STRUCTURE>(s, r, &t);
    if (k == 0xffffffffu) {
        rl_film_count(film, task.pixel, 1);
        rl_film_add(film, task.pixel,
                    rl_scale(rl_mul(task.weight, s.settings.background), sample_weight));
        return 0;
    }
    const rl_triangle tri = s.triangles[k];
    const rl_shading shading = s.shading[k];
    const rl_material& material = s.materials[shading.material];
    float bary[3] = {1.0f / 3.0f, 1.0f / 3.0f, 1.0f / 3.0f};
    {
        float th, uvw[3], det;
        if (rl_triangle_hit(tri, r, s.padding, &th, uvw, &det)) {
            bary[0] = uvw[0] / det;
            bary[1] = uvw[1] / det;
            bary[2] = uvw[2] / det;
        }
    }
    rl_vec3 point = rl_interpolate(tri, bary);
    rl_vec3 geometric =
        rl_normalize(rl_cross(rl_sub(tri.v[1], tri.v[0]), rl_sub(tri.v[2], tri.v[0])));
    bool entering = rl_dot(task.dir, geometric) < 0.0f;
    rl_vec3 facing = entering ? geometric : rl_neg(geometric);
    rl_vec3 smooth = rl_normalize(rl_add(rl_add(rl_scale(shading.normals[0], bary[0]),
                                                rl_scale(shading.normals[1], bary[1])),
                                         rl_scale(shading.normals[2], bary[2])));
    if (rl_dot(smooth, facing) < 0.0f) {
        smooth = rl_neg(smooth);
    }
    rl_vec3 normal = rl_dot(task.dir, smooth) < 0.0f ? smooth : facing;
    float offset = rl_surface_offset(tri, point, s.settings.offset_scale);
    rl_vec3 outside = rl_add(point, rl_scale(facing, offset));

    rl_vec3 color = rl_mul(s.settings.ambient, material.ambient);
    rl_u32 shadow_rays = 0;
    for (rl_u32 li = 0; li < s.light_count; ++li) {
        const rl_light& light = s.lights[li];
        rl_vec3 to_light = rl_sub(light.position, outside);
        float distance = sqrtf(rl_dot(to_light, to_light));
        rl_vec3 l = rl_v(to_light.x / distance, to_light.y / distance, to_light.z / distance);
        float cos_n = rl_dot(normal, l);
        if (cos_n <= 0.0f || rl_dot(facing, l) <= 0.0f) {
            continue;
        }
        float cone = rl_cone_factor(light, rl_neg(l));
        if (cone == 0.0f) {
            continue;
        }
        shadow_rays += 1;
        rl_prepared shadow = rl_prepare(outside, l, 0.0f, distance);
        if (rl_occluded<STRUCTURE>(s, shadow)) {
            continue;
        }
        float highlight = rl_max(rl_dot(rl_reflect(rl_neg(l), normal), rl_neg(task.dir)), 0.0f);
        float p = rl_powi(highlight, material.shininess);
        rl_vec3 lit = rl_add(rl_scale(material.diffuse, cos_n), rl_scale(material.specular, p));
        color = rl_add(color, rl_scale(rl_mul(light.color, lit), cone));
    }
    counts->shadow += shadow_rays;
    rl_film_count(film, task.pixel, 1 + shadow_rays);
    rl_film_add(film, task.pixel, rl_scale(rl_mul(task.weight, color), sample_weight));

    if (rl_task_depth(task) >= s.settings.max_depth) {
        return 0;
    }
    int n = 0;
    float cutoff = s.settings.weight_cutoff;
    rl_vec3 reflected = rl_mul(task.weight, material.reflectivity);
    if (rl_worth(reflected, cutoff)) {
        children[n++] = rl_child(task, outside, rl_reflect(task.dir, normal), reflected,
                                 RL_KIND_REFLECTION);
    }
    rl_vec3 refracted = rl_mul(task.weight, material.refractivity);
    if (rl_worth(refracted, cutoff)) {
        float eta = entering ? 1.0f / material.ior : material.ior;
        rl_vec3 dir;
        if (rl_refract(task.dir, normal, eta, &dir)) {
            rl_vec3 inside = rl_sub(point, rl_scale(facing, offset));
            children[n++] = rl_child(task, inside, dir, refracted, RL_KIND_REFRACTION);
        } else {
            // Total internal reflection: the refracted share is reflected instead.
            children[n++] = rl_child(task, outside, rl_reflect(task.dir, normal), refracted,
                                     RL_KIND_REFLECTION);
        }
    }
    return n;
}

#endif  // RAYLB_MATH_CUH
