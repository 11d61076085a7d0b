// Checks of what only the device can answer: its own roundf, fminf, fmaxf, square root,
// division and the film's fixed-point conversion against the host's on every 32-bit pattern,
// and the traversals of both structures on rays the host chooses. Compiled after the kernels,
// in their translation unit and with their options (kernels/src/check.rs), so that the
// functions checked are the ones the kernels call, compiled as the kernels compile them.
#ifndef RAYLB_CHECKS_CU
#define RAYLB_CHECKS_CU
//
// The float check folds each chunk of patterns into one digest per function: the wrapping sum
// over the chunk's patterns x and each result's number k of rl_check_term(x, k, result). A sum
// does not depend on the order its terms are added in, so every thread adds its own and the
// host, which folds Rust's results the same way (kernels/src/check.rs), gets the same digest
// where every result is the same. A NaN result is folded as the one quiet NaN 0x7fc00000: the
// kernels never look at a NaN's payload or sign (they compare, and turn NaN into 0). A zero
// from fminf or fmaxf is folded as +0: neither C nor Rust fixes which of two equal zeros min
// and max return, and the kernels only compare their results (raylb_math.cuh, rl_max).

#define RL_CHECK_CHUNK_BITS 20
#define RL_CHECK_FUNCTIONS 6
#define RL_CHECK_PARTNERS 8
// Results per pattern: round, sqrt, 1/x and fixed point, then min and max against each
// partner in both orders.
#define RL_CHECK_RESULTS (4 + 4 * RL_CHECK_PARTNERS)

// A 64-bit finaliser (splitmix64's): every input bit reaches every output bit.
RL_FN rl_u64 rl_check_mix(rl_u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// The term of result k of pattern x: one-to-one in the result for each (x, k), so that a
// different result changes the digest (but for a chance of 2^-64).
RL_FN rl_u64 rl_check_term(rl_u32 x, rl_u32 k, rl_u64 result) {
    return rl_check_mix((((rl_u64)x << 8) | k) ^ (result * 0x9e3779b97f4a7c15ull));
}

RL_FN rl_u32 rl_check_canonical(float v) {
    rl_u32 b = rl_float_bits(v);
    return (b & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : b;
}

// As rl_check_canonical, with -0 read as +0.
RL_FN rl_u32 rl_check_zero_blind(float v) {
    rl_u32 b = rl_check_canonical(v);
    return b == 0x80000000u ? 0u : b;
}

// The partners of pattern x for fminf and fmaxf: both zeros, one, both infinities, a quiet NaN,
// x of the other sign and x's neighbour in bits.
RL_FN float rl_check_partner(rl_u32 x, rl_u32 k) {
    switch (k) {
        case 0: return rl_float_from_bits(0x00000000u);
        case 1: return rl_float_from_bits(0x80000000u);
        case 2: return rl_float_from_bits(0x3f800000u);
        case 3: return rl_float_from_bits(0x7f800000u);
        case 4: return rl_float_from_bits(0xff800000u);
        case 5: return rl_float_from_bits(0x7fc00000u);
        case 6: return rl_float_from_bits(x ^ 0x80000000u);
        default: return rl_float_from_bits(x ^ 1u);
    }
}

// Result k of pattern x, as the host computes it too: 0 roundf, 1 sqrtf, 2 1/x, 3 the film's
// fixed point, then for each partner p: fminf(x, p), fminf(p, x), fmaxf(x, p), fmaxf(p, x).
RL_FN rl_u64 rl_check_result(rl_u32 x, rl_u32 k) {
    float v = rl_float_from_bits(x);
    switch (k) {
        case 0: return rl_check_canonical(roundf(v));
        case 1: return rl_check_canonical(sqrtf(v));
        case 2: return rl_check_canonical(1.0f / v);
        case 3: return rl_to_fixed(v);
        default: break;
    }
    rl_u32 j = k - 4;
    float p = rl_check_partner(x, j / 4);
    switch (j % 4) {
        case 0: return rl_check_zero_blind(rl_min(v, p));
        case 1: return rl_check_zero_blind(rl_min(p, v));
        case 2: return rl_check_zero_blind(rl_max(v, p));
        default: return rl_check_zero_blind(rl_max(p, v));
    }
}

// Which digest result k folds into: 0 round, 1 sqrt, 2 reciprocal, 3 fixed point, 4 min, 5 max.
RL_FN rl_u32 rl_check_function(rl_u32 k) {
    return k < 4 ? k : 4 + ((k - 4) % 4) / 2;
}

// The kernels; the functions above are also built for the host (kernels/host), where a test
// checks that they fold as check.rs does.
#if RL_ON_DEVICE

// Digests of chunks first_chunk, first_chunk + 1, ... (one per blockIdx.y): digests holds
// RL_CHECK_FUNCTIONS zeroed words per chunk, in that order.
extern "C" __global__ void rl_check_floats(rl_u32 first_chunk, rl_u64* digests) {
    rl_u32 chunk = first_chunk + blockIdx.y;
    rl_u64 sums[RL_CHECK_FUNCTIONS] = {0, 0, 0, 0, 0, 0};
    rl_u32 stride = gridDim.x * blockDim.x;
    for (rl_u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < (1u << RL_CHECK_CHUNK_BITS);
         i += stride) {
        rl_u32 x = (chunk << RL_CHECK_CHUNK_BITS) | i;
        for (rl_u32 k = 0; k < RL_CHECK_RESULTS; ++k) {
            rl_u64 term = rl_check_term(x, k, rl_check_result(x, k));
            // Unrolled selects rather than sums[f]: a run-time index would put the array in
            // local memory.
            rl_u32 f = rl_check_function(k);
#pragma unroll
            for (rl_u32 g = 0; g < RL_CHECK_FUNCTIONS; ++g) {
                sums[g] += g == f ? term : 0;
            }
        }
    }
    rl_u64* out = digests + (rl_u64)blockIdx.y * RL_CHECK_FUNCTIONS;
#pragma unroll
    for (rl_u32 g = 0; g < RL_CHECK_FUNCTIONS; ++g) {
        atomicAdd((unsigned long long*)(out + g), (unsigned long long)sums[g]);
    }
}

// Every result of `count` patterns from `first`: RL_CHECK_RESULTS words a pattern, to find
// which result differs in a chunk whose digest did.
extern "C" __global__ void rl_check_float_results(rl_u32 first, rl_u32 count, rl_u64* out) {
    rl_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    for (rl_u32 k = 0; k < RL_CHECK_RESULTS; ++k) {
        out[(rl_u64)i * RL_CHECK_RESULTS + k] = rl_check_result(first + i, k);
    }
}

// For each ray (eight floats: origin, direction, t_min, t_max), the closest hit (the leaf-order index, 0xffffffff for a miss, and its
// distance's bits) and whether the ray is occluded, in the octree of `s` and in the wide BVH
// `b`: out holds six words a ray (octree index, t, occluded; wide index, t, occluded).
extern "C" __global__ void rl_check_traversals(rl_scene s, rl_wide_bvh b,
                                               const float* rays, rl_u32 n, rl_u32* out) {
    rl_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const float* ray = rays + (rl_u64)i * 8;
    rl_prepared r = rl_prepare(rl_v(ray[0], ray[1], ray[2]), rl_v(ray[3], ray[4], ray[5]),
                               ray[6], ray[7]);
    rl_u32* o = out + (rl_u64)i * 6;
    float t;
    o[0] = rl_octree_closest_hit(s, r, &t);
    o[1] = rl_float_bits(t);
    o[2] = rl_octree_occluded(s, r) ? 1u : 0u;
    o[3] = rl_wide_closest_hit(b, r, &t);
    o[4] = rl_float_bits(t);
    o[5] = rl_wide_occluded(b, r) ? 1u : 0u;
}

#endif  // RL_ON_DEVICE
#endif  // RAYLB_CHECKS_CU
