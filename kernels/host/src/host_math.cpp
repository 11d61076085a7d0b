// The host build of raylb's CUDA math header, for the bit-for-bit tests against the Rust
// renderer. Every function here is a thin `extern "C"` wrapper that takes plain arrays and
// the shared layout's structs (raylb_layout.cuh, generated from the same Rust definitions the
// caller uses) and calls the header. A ray is given as its origin, its direction and the open
// interval (t_min, t_max) of its distances. Compiled by build.rs with -ffp-contract=off
// -fno-fast-math, as the kernels are with --fmad=false.
#include "../../cuda/raylb_math.cuh"
#include "../../cuda/raylb_checks.cu"

static rl_vec3 rlh_vec(const float v[3]) { return rl_v(v[0], v[1], v[2]); }

static void rlh_store(rl_vec3 v, float out[3]) {
    out[0] = v.x;
    out[1] = v.y;
    out[2] = v.z;
}

static rl_prepared rlh_prepare(const float origin[3], const float dir[3], float t_min,
                               float t_max) {
    return rl_prepare(rlh_vec(origin), rlh_vec(dir), t_min, t_max);
}

extern "C" {

// Result k of pattern x in the device's float check, and its term in the check's digest.
rl_u64 rlh_check_result(rl_u32 x, rl_u32 k) { return rl_check_result(x, k); }
rl_u64 rlh_check_term(rl_u32 x, rl_u32 k, rl_u64 result) { return rl_check_term(x, k, result); }

// The prepared ray's octant.
int rlh_octant(const float origin[3], const float dir[3]) {
    return rlh_prepare(origin, dir, 0.0f, RL_INFINITY).octant;
}

// `PreparedRay::new(ray).slab_box(mn, mx, t_min, t_max)`: out = (enter, leave).
void rlh_slab_box(const float origin[3], const float dir[3], const float mn[3],
                  const float mx[3], float t_min, float t_max, float out[2]) {
    rl_prepared r = rlh_prepare(origin, dir, 0.0f, RL_INFINITY);
    rl_slab_box(r, mn, mx, t_min, t_max, &out[0], &out[1]);
}

// `Triangle::intersect_with_barycentrics`: 1 on a hit, with out = (t, b0, b1, b2) where
// b_i = uvw_i / det.
int rlh_triangle_hit(const rl_triangle* tri, const float origin[3], const float dir[3],
                     float t_min, float t_max, float padding, float out[4]) {
    rl_prepared r = rlh_prepare(origin, dir, t_min, t_max);
    float t, uvw[3], det;
    if (!rl_triangle_hit(*tri, r, padding, &t, uvw, &det)) {
        return 0;
    }
    out[0] = t;
    out[1] = uvw[0] / det;
    out[2] = uvw[1] / det;
    out[3] = uvw[2] / det;
    return 1;
}

// The closest hit in the scene's structure (the octree or the wide BVH): the leaf-order index
// of the triangle, or 0xffffffff for a miss; *t its distance.
rl_u32 rlh_closest_hit(const rl_scene* scene, const float origin[3], const float dir[3],
                       float t_min, float t_max, float* t) {
    rl_prepared r = rlh_prepare(origin, dir, t_min, t_max);
    return rl_scene_structure(*scene) == RL_WIDE ? rl_closest_hit<RL_WIDE>(*scene, r, t)
                                                 : rl_closest_hit<RL_OCTREE>(*scene, r, t);
}

// Whether a triangle of the scene's structure blocks the ray.
int rlh_occluded(const rl_scene* scene, const float origin[3], const float dir[3], float t_min,
                 float t_max) {
    rl_prepared r = rlh_prepare(origin, dir, t_min, t_max);
    bool blocked = rl_scene_structure(*scene) == RL_WIDE ? rl_occluded<RL_WIDE>(*scene, r)
                                                         : rl_occluded<RL_OCTREE>(*scene, r);
    return blocked ? 1 : 0;
}

// The wide BVH's closest hit, in its GPU form: as rlh_closest_hit.
rl_u32 rlh_wide_closest_hit(const rl_wide_bvh* bvh, const float origin[3], const float dir[3],
                            float t_min, float t_max, float* t) {
    return rl_wide_closest_hit(*bvh, rlh_prepare(origin, dir, t_min, t_max), t);
}

// Whether a triangle of the wide BVH's GPU form blocks the ray.
int rlh_wide_occluded(const rl_wide_bvh* bvh, const float origin[3], const float dir[3],
                      float t_min, float t_max) {
    return rl_wide_occluded(*bvh, rlh_prepare(origin, dir, t_min, t_max)) ? 1 : 0;
}

void rlh_normalize(const float v[3], float out[3]) { rlh_store(rl_normalize(rlh_vec(v)), out); }

void rlh_reflect(const float d[3], const float n[3], float out[3]) {
    rlh_store(rl_reflect(rlh_vec(d), rlh_vec(n)), out);
}

// 0 on total internal reflection.
int rlh_refract(const float d[3], const float n[3], float eta, float out[3]) {
    rl_vec3 dir;
    if (!rl_refract(rlh_vec(d), rlh_vec(n), eta, &dir)) {
        return 0;
    }
    rlh_store(dir, out);
    return 1;
}

float rlh_powi(float x, rl_u32 n) { return rl_powi(x, n); }

rl_u64 rlh_to_fixed(float x) { return rl_to_fixed(x); }

void rlh_primary_dir(const rl_camera* camera, rl_u32 x, rl_u32 y, rl_u32 width, rl_u32 height,
                     float out[3]) {
    rlh_store(rl_primary_dir(*camera, x, y, width, height), out);
}

float rlh_cone_factor(const rl_light* light, const float to_point[3]) {
    return rl_cone_factor(*light, rlh_vec(to_point));
}

void rlh_camera_task(const rl_scene* scene, rl_u32 x, rl_u32 y, rl_u32 sample, rl_task* out) {
    *out = rl_camera_task(*scene, x, y, sample);
}

// Traces one task into the film (`film->rays` may be null); writes its children and returns
// how many.
int rlh_trace(const rl_scene* scene, const rl_task* task, const rl_film* film,
              rl_counts* counts, rl_task children[2]) {
    return rl_scene_structure(*scene) == RL_WIDE
               ? rl_trace<RL_WIDE>(*scene, *task, *film, counts, children)
               : rl_trace<RL_OCTREE>(*scene, *task, *film, counts, children);
}

}  // extern "C"
