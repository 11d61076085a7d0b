// raylb's warp emulator: what the CUDA kernels (`kernels/cuda/raylb_kernels.cu`) need of CUDA,
// for the host's C++ compiler, so that the kernels' own source runs on a machine without a GPU.
//
// Every thread of a launch is a fiber (`ucontext`) on the launching OS thread, so lanes of a
// warp diverge as they may on the device since Volta. A seeded scheduler (raylb_emu.cpp)
// switches fibers at every atomic, fence, volatile access and warp collective, in an order
// drawn from the seed: a schedule is reproduced from its seed. Collectives rendezvous exactly
// the lanes their mask names; a lane named by a collective that has exited, or that waits at a
// different collective, ends the launch with an error naming both source lines. A launch in
// which every fiber waits, or in which no ray is traced for a bounded number of switches, ends
// with an error saying where each lane waits.
//
// Included before the kernels' source, with RL_EMULATE defined; the kernels compile to the same
// code under NVRTC, where none of this is seen.
#ifndef RAYLB_EMU_H
#define RAYLB_EMU_H

#include <stddef.h>
#include <stdint.h>

#define RL_EMULATE 1

// Declaration specifiers without a host meaning.
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

struct rl_emu_dim3 {
    unsigned x, y, z;
};
struct uint4 {
    unsigned x, y, z, w;
};

// The calling fiber's coordinates.
const rl_emu_dim3& rl_emu_thread_idx();
const rl_emu_dim3& rl_emu_block_idx();
const rl_emu_dim3& rl_emu_block_dim();
const rl_emu_dim3& rl_emu_grid_dim();
#define threadIdx (rl_emu_thread_idx())
#define blockIdx (rl_emu_block_idx())
#define blockDim (rl_emu_block_dim())
#define gridDim (rl_emu_grid_dim())

// A switch point: the scheduler may run another fiber here. `line` is the kernel source's.
void rl_emu_switch(int line);
// A ray traced: the launch makes progress (the livelock watch counts switches since the last).
void rl_emu_progress();
// The calling block's shared variable declared at `line` as `name`: `bytes` bytes aligned to
// `align`, the same storage for every thread of the block, filled with 0xcd at the block's start
// (the device leaves shared memory undefined).
void* rl_emu_shared(const char* name, int line, size_t bytes, size_t align);

#define RL_EMU_SHARED(align, type, name, dims)                                                  \
    typedef type rl_emu_shared_##name##_t dims;                                                 \
    rl_emu_shared_##name##_t& name = *static_cast<rl_emu_shared_##name##_t*>(                   \
        rl_emu_shared(#name, __LINE__, sizeof(rl_emu_shared_##name##_t), (align)))

// Warp collectives: every lane of `mask` meets at the same call; the calling lane must be in
// `mask`. Results as on the device; shuffles read 32-bit words.
unsigned rl_emu_ballot(unsigned mask, bool predicate, int line);
unsigned rl_emu_shfl_u32(unsigned mask, unsigned value, int source, int line);
unsigned rl_emu_shfl_up_u32(unsigned mask, unsigned value, unsigned delta, int line);
unsigned rl_emu_shfl_down_u32(unsigned mask, unsigned value, unsigned delta, int line);
void rl_emu_syncwarp(unsigned mask, int line);
// Every thread of the block that has not exited meets here.
void rl_emu_syncthreads(int line);

// Shuffles of any 4- or 8-byte type: an 8-byte value moves as two 32-bit shuffles, as the
// device's own 64-bit overloads do.
template <typename T, typename Shuffle>
inline T rl_emu_shuffle_words(T v, Shuffle shuffle) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "the device shuffles 4- and 8-byte values");
    unsigned words[sizeof(T) / 4];
    __builtin_memcpy(words, &v, sizeof(T));
    for (unsigned& w : words) {
        w = shuffle(w);
    }
    __builtin_memcpy(&v, words, sizeof(T));
    return v;
}
template <typename T>
inline T rl_emu_shfl(unsigned mask, T v, int source, int line) {
    return rl_emu_shuffle_words(
        v, [&](unsigned w) { return rl_emu_shfl_u32(mask, w, source, line); });
}
template <typename T>
inline T rl_emu_shfl_up(unsigned mask, T v, unsigned delta, int line) {
    return rl_emu_shuffle_words(
        v, [&](unsigned w) { return rl_emu_shfl_up_u32(mask, w, delta, line); });
}
template <typename T>
inline T rl_emu_shfl_down(unsigned mask, T v, unsigned delta, int line) {
    return rl_emu_shuffle_words(
        v, [&](unsigned w) { return rl_emu_shfl_down_u32(mask, w, delta, line); });
}

#define __ballot_sync(mask, p) rl_emu_ballot((mask), (p), __LINE__)
#define __shfl_sync(mask, v, src) rl_emu_shfl((mask), (v), (src), __LINE__)
#define __shfl_up_sync(mask, v, d) rl_emu_shfl_up((mask), (v), (d), __LINE__)
#define __shfl_down_sync(mask, v, d) rl_emu_shfl_down((mask), (v), (d), __LINE__)
#define __syncwarp(...) rl_emu_syncwarp(rl_emu_mask_or_full(__VA_ARGS__ + 0), __LINE__)
#define __syncthreads() rl_emu_syncthreads(__LINE__)
// `__syncwarp()` names every lane.
inline unsigned rl_emu_mask_or_full(unsigned mask) { return mask == 0 ? 0xffffffffu : mask; }

// Atomics: a switch point, then the operation (the fibers share one OS thread, so it is
// indivisible).
template <typename T>
inline T rl_emu_atomic_add(T* p, T v, int line) {
    rl_emu_switch(line);
    T old = *p;
    *p = old + v;
    return old;
}
template <typename T>
inline T rl_emu_atomic_sub(T* p, T v, int line) {
    rl_emu_switch(line);
    T old = *p;
    *p = old - v;
    return old;
}
template <typename T>
inline T rl_emu_atomic_or(T* p, T v, int line) {
    rl_emu_switch(line);
    T old = *p;
    *p = old | v;
    return old;
}
template <typename T>
inline T rl_emu_atomic_exch(T* p, T v, int line) {
    rl_emu_switch(line);
    T old = *p;
    *p = v;
    return old;
}
template <typename T>
inline T rl_emu_atomic_cas(T* p, T expected, T desired, int line) {
    rl_emu_switch(line);
    T old = *p;
    if (old == expected) {
        *p = desired;
    }
    return old;
}
#define atomicAdd(p, v) rl_emu_atomic_add((p), (v), __LINE__)
#define atomicSub(p, v) rl_emu_atomic_sub((p), (v), __LINE__)
#define atomicOr(p, v) rl_emu_atomic_or((p), (v), __LINE__)
#define atomicExch(p, v) rl_emu_atomic_exch((p), (v), __LINE__)
#define atomicCAS(p, e, d) rl_emu_atomic_cas((p), (e), (d), __LINE__)

#define __threadfence() rl_emu_switch(__LINE__)
#define __nanosleep(ns) rl_emu_switch(__LINE__)
// A load through the L2, of memory another warp may write: a switch point, then the load.
template <typename T>
inline T rl_emu_ldcg(const T* p, int line) {
    rl_emu_switch(line);
    return *p;
}
#define __ldcg(p) rl_emu_ldcg((p), __LINE__)

// The scheduler's step count stands in for the clock: busy and idle figures mean nothing here.
long long rl_emu_clock();
#define clock64() rl_emu_clock()

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }

template <typename T>
inline T min(T a, T b) {
    return b < a ? b : a;
}
template <typename T>
inline T max(T a, T b) {
    return a < b ? b : a;
}

// Launching: `body` runs once per thread of `blocks` × `threads`, at most `resident` blocks at
// once (the next starts when one ends, as the hardware's block scheduler does), switching as
// the seed says. Returns 0, or 1 with a one-line message in `error` (a deadlock, a livelock,
// a broken collective), which names the source line.
struct rl_emu_launch {
    unsigned blocks;
    unsigned threads;
    unsigned resident;
    uint64_t seed;
    // Switches without a traced ray after which the launch is called a livelock.
    uint64_t patience;
};
int rl_emu_run(const rl_emu_launch& launch, void (*body)(void*), void* args, char* error,
               size_t error_len);

#endif  // RAYLB_EMU_H
