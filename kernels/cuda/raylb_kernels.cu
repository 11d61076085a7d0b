// raylb's GPU balancers.
//
// `rl_persistent`: a persistent kernel, launched with exactly as many warps as can be resident
// at once (the host asks the occupancy query), in which the warp is the worker and its 32 lanes
// trace rays. Each warp keeps
//   - a shared-memory buffer of 2 × 32 pending ray tasks (a lane spawns at most two children),
//     from which idle lanes are refilled before every step,
//   - a current tile whose camera rays fill the lanes the buffer cannot,
//   - a deque in global memory, under a spin lock, for what overflows the buffer and, under
//     `stealing`, the warp's share of tiles; the owner pops up to 32 tasks at once from the
//     bottom, thieves take from the top.
// Where a warp's next tile comes from is the balancer: `static` (interleaved share), `counter`
// (a global atomic) or `stealing` (its own deque, then other warps' deques, random victims).
// The kernel is written in stages, one device function each (rl_refill_lanes, rl_find_work
// with rl_pop_own, rl_next_tile and rl_steal, rl_trace_step, rl_place_children,
// rl_share_buffer, rl_flush_figures), over one deque type whose locking lives in its own
// functions (rl_deque_*).
//
// `rl_block_per_tile` ("cuda-managed"): one block per tile, the hardware block scheduler as the
// balancer; the rays a tile spawns stay inside its block, on a stack in global memory.
//
// Every ray is traced by `rl_trace` from raylb_math.cuh, the same arithmetic as the CPU, and its
// contribution is added to the film in exact fixed point: the image is the same bytes whatever
// the balancer, the order of tasks or the device.
//
// Launch sizes, the balancers' codes, the figures' slots, the error bits and the parameter
// structs are shared with the host: raylb_layout.cuh, generated from the `layout` crate.
#include "raylb_math.cuh"

#define RL_FULL_MASK 0xffffffffu
// The most tasks one steal takes: a warp's worth.
#define RL_STEAL_MAX 32
// Blocks per SM the compiler is asked to make room for: 8 caps registers at 64 per thread
// (32 warps per SM on Hopper); with some spills it traced treasure faster than 4 or 6 blocks
// (BENCHMARKS.md). The host can override it for measurements (RAYLB_MIN_BLOCKS).
#ifndef RL_MIN_BLOCKS
#define RL_MIN_BLOCKS 8
#endif

// What the warp emulator (kernels/emu/raylb_emu.h) needs marked in the source, and NVRTC never
// sees: shared variables, each block's own there; switch points at volatile accesses; a traced
// ray, the progress its livelock watch counts.
#if RL_ON_DEVICE
#define RL_SHARED(align, type, name, dims) __shared__ __align__(align) type name dims
#define RL_SWITCH_POINT()
#define RL_PROGRESS()
#else
#define RL_SHARED(align, type, name, dims) RL_EMU_SHARED(align, type, name, dims)
#define RL_SWITCH_POINT() rl_emu_switch(__LINE__)
#define RL_PROGRESS() rl_emu_progress()
#endif

// ---------------------------------------------------------------------------------------------
// Coherent access to what other SMs write: L1 is not coherent across SMs, so deque heads are
// read and written through volatile accesses and tasks are read through the L2 (`.cg`) path.
// (Stores go through to L2 anyway.)

__device__ __forceinline__ rl_u32 rl_load_volatile(const rl_u32* p) {
    RL_SWITCH_POINT();
    return *(const volatile rl_u32*)p;
}
__device__ __forceinline__ void rl_store_volatile(rl_u32* p, rl_u32 v) {
    RL_SWITCH_POINT();
    *(volatile rl_u32*)p = v;
}

// Copies a task that another warp may have written (`src` in global memory) to `dst`
// (global, shared or local).
__device__ __forceinline__ void rl_copy_task(rl_task* dst, const rl_task* src) {
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(dst);
    uint4 a = __ldcg(s), b = __ldcg(s + 1), c = __ldcg(s + 2);
    d[0] = a;
    d[1] = b;
    d[2] = c;
}

// The kind of a queued task that another warp may have written, read through the L2.
__device__ __forceinline__ rl_u32 rl_queued_kind(const rl_task* t) {
    return __ldcg(&t->depth_kind) >> RL_KIND_SHIFT;
}

// Acquire: the fence after the compare-and-swap keeps every read of the deque after the lock
// is taken. Spins with a growing pause; the holder is a resident warp (never more warps than
// fit are launched), so it always finishes.
// The owner waits only for a thief's short critical section: it spins a few times before it
// starts to pause, since its whole warp waits with it.
__device__ __forceinline__ void rl_lock(rl_u32* lock) {
    unsigned pause = 0;
    while (atomicCAS(lock, 0u, 1u) != 0u) {
        if (pause > 0) {
            __nanosleep(pause);
        }
        pause = pause == 0 ? 16 : (pause < 256 ? pause * 2 : pause);
    }
    __threadfence();
}
// One attempt: a thief fails fast when the lock is held.
__device__ __forceinline__ bool rl_try_lock(rl_u32* lock) {
    if (atomicCAS(lock, 0u, 1u) != 0u) {
        return false;
    }
    __threadfence();
    return true;
}
// Release: the fence makes every write made under the lock (head and tasks, by any lane of
// the warp, ordered before it by __syncwarp) visible before the lock reads free.
__device__ __forceinline__ void rl_unlock(rl_u32* lock) {
    __threadfence();
    atomicExch(lock, 0u);
}

__device__ __forceinline__ rl_task rl_tile_task(rl_u32 x0, rl_u32 y0, rl_u32 x1, rl_u32 y1) {
    rl_task t;
    t.origin = rl_v(0.0f, 0.0f, 0.0f);
    t.dir = t.origin;
    t.weight = t.origin;
    t.pixel = x0 | y0 << RL_TILE_CORNER_BITS;
    t.tile_end = x1 | y1 << RL_TILE_CORNER_BITS;
    t.depth_kind = RL_KIND_TILE << RL_KIND_SHIFT;
    return t;
}

// The corners of the launch's tile `index`: the image's tile `index`, or with a `list` (a batch
// of a hybrid frame) the image's tile `list[index]`.
__device__ __forceinline__ void rl_tile_of(const rl_scene& s, rl_u32 edge, rl_u32 tiles_x,
                                           const rl_u32* list, rl_u32 index, rl_u32* x0,
                                           rl_u32* y0, rl_u32* x1, rl_u32* y1) {
    if (list) {
        index = list[index];
    }
    *x0 = (index % tiles_x) * edge;
    *y0 = (index / tiles_x) * edge;
    *x1 = min(*x0 + edge, s.width);
    *y1 = min(*y0 + edge, s.height);
}

__device__ __forceinline__ rl_u32 rl_xorshift(rl_u32* state) {
    rl_u32 x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

// Fills each warp's deque with its interleaved share of tiles (tile w, w + warps, ...), for
// `stealing`.
extern "C" __global__ void rl_fill_deques(rl_scene s, rl_work work) {
    rl_u32 warp = blockIdx.x * blockDim.x + threadIdx.x;
    if (warp >= work.warps) {
        return;
    }
    rl_u32 n = 0;
    rl_task* items = work.items + (rl_u64)warp * work.capacity;
    // Pushed last-first, so that the owner pops its tiles in image order.
    rl_u32 mine = work.tile_count > warp ? (work.tile_count - warp + work.warps - 1) / work.warps : 0;
    if (mine > work.capacity) {
        atomicOr(work.error, RL_ERROR_DEQUE_FULL);
        return;
    }
    for (rl_u32 k = mine; k-- > 0;) {
        rl_u32 x0, y0, x1, y1;
        rl_tile_of(s, work.tile_edge, work.tiles_x, work.tiles, warp + k * work.warps, &x0, &y0,
                   &x1, &y1);
        items[n++] = rl_tile_task(x0, y0, x1, y1);
    }
    work.heads[warp].lock = 0;
    work.heads[warp].top = 0;
    work.heads[warp].bot = n;
    atomicAdd(work.pending, (int)n);
}

// The lanes' per-warp sum and exclusive prefix of `v`.
__device__ __forceinline__ int rl_warp_scan(int v, rl_u32 lane, int* total) {
    int incl = v;
    for (int d = 1; d < RL_WARP; d <<= 1) {
        int n = __shfl_up_sync(RL_FULL_MASK, incl, d);
        if ((int)lane >= d) {
            incl += n;
        }
    }
    *total = __shfl_sync(RL_FULL_MASK, incl, RL_WARP - 1);
    return incl - v;
}

// The state one warp keeps in registers; every field holds the same value in all 32 lanes.
struct rl_warp_state {
    int buf_count;       // tasks in the shared buffer
    rl_u32 x0, y0, x1;   // the current tile's columns [x0, x1) and first row
    rl_u32 next;         // camera rays of the current tile handed out so far
    rl_u32 pixels;       // camera rays in the current tile: its pixels times the samples
    rl_u32 bot;          // the owner's copy of its deque's `bot`
    rl_u32 tile_mark;    // `bot` when a tile was last found at the bottom of the deque
    rl_u32 empty_at;     // `bot` when the owner last found its deque empty
    int held;            // stealing: tasks taken from deques since the warp was last idle
    rl_u32 static_next;  // static: the next tile of this warp's share
    rl_u32 counter_next; // counter: the next tile of the last chunk grabbed
    rl_u32 counter_end;
};

// ---------------------------------------------------------------------------------------------
// A warp's deque: tasks in global memory, `items[top, bot)`. The owner pushes and pops at the
// bottom, thieves take from the top; only lane 0 calls these functions, and the warp
// broadcasts what they return. Every access to a deque's head is here. Two kinds
// (`rl_work.deque`), the same operations:
//   - RL_DEQUE_LOCKED: a spin lock in the head guards `top` and `bot`; the owner takes it for
//     every operation, a thief tries it once; an emptied deque starts at index 0 again, and a
//     full one is compacted under the lock.
//   - RL_DEQUE_NON_BLOCKING: `top` and `bot` only grow and task i lies at `items[i % capacity]`
//     (Chase and Lev's indices, on ABP's protocol): a thief claims the oldest task with a
//     compare-and-swap on `top`, one task a claim; the owner writes `bot` first and claims by
//     compare-and-swap only the one task a thief may be taking at the same time.
// The owner keeps its own copies of `bot` (`st.bot`) and of `bot` when it last found the deque
// empty (`st.empty_at`): thieves only take, so the deque stays empty until the owner pushes.

struct rl_deque {
    rl_deque_head* head;
    rl_task* items;
    rl_u32 capacity;
    bool non_blocking;
};

__device__ __forceinline__ rl_deque rl_deque_of(const rl_work& w, rl_u32 warp) {
    rl_deque d;
    d.head = w.heads + warp;
    d.items = w.items + (rl_u64)warp * w.capacity;
    d.capacity = w.capacity;
    d.non_blocking = w.deque == RL_DEQUE_NON_BLOCKING;
    return d;
}

// Where task `i` of the deque lies.
__device__ __forceinline__ rl_task* rl_deque_slot(const rl_deque& d, rl_u32 i) {
    return d.items + (d.non_blocking ? i % d.capacity : i);
}

// Owner: whether the deque may hold tasks (it does not when the owner has found it empty and
// pushed nothing since).
__device__ __forceinline__ bool rl_deque_may_hold(const rl_warp_state& st) {
    return st.bot != st.empty_at;
}

// Owner: tasks the deque holds at most (for the figures).
__device__ __forceinline__ rl_u32 rl_deque_length_bound(const rl_warp_state& st) {
    return st.bot - st.empty_at;
}

// Owner: how many more tasks fit from `st.bot` on. The locked deque compacts first when
// `wanted` do not fit (moving its live tasks to the start of its array).
__device__ __forceinline__ rl_u32 rl_deque_room(const rl_deque& d, rl_warp_state& st,
                                                rl_u32 wanted) {
    if (d.non_blocking) {
        rl_u32 live = st.bot - rl_load_volatile(&d.head->top);
        return d.capacity - live;
    }
    if (st.bot + wanted > d.capacity) {
        rl_lock(&d.head->lock);
        rl_u32 top = rl_load_volatile(&d.head->top);
        for (rl_u32 k = top; k < st.bot; ++k) {
            rl_copy_task(d.items + (k - top), d.items + k);
        }
        st.bot -= top;
        st.tile_mark = 0xffffffffu;
        rl_store_volatile(&d.head->top, 0);
        rl_store_volatile(&d.head->bot, st.bot);
        rl_unlock(&d.head->lock);
    }
    return d.capacity - st.bot;
}

// Owner: makes the `count` tasks already written from `st.bot` on part of the deque. Under
// stealing they are counted in `pending` first, before any thief can see them, so that
// `pending` never reads 0 while they exist.
__device__ __forceinline__ void rl_deque_publish(const rl_work& w, const rl_deque& d,
                                                 rl_warp_state& st, int count) {
    if (w.mode == RL_MODE_STEALING) {
        atomicAdd(w.pending, count);
    }
    if (d.non_blocking) {
        // The tasks are written before `bot` says they are there.
        __threadfence();
        st.bot += (rl_u32)count;
        rl_store_volatile(&d.head->bot, st.bot);
        return;
    }
    rl_lock(&d.head->lock);
    st.bot += (rl_u32)count;
    rl_store_volatile(&d.head->bot, st.bot);
    rl_unlock(&d.head->lock);
}

// Owner: pushes `t` (a part of a cut tile).
__device__ __forceinline__ void rl_deque_push(const rl_work& w, const rl_deque& d,
                                              rl_warp_state& st, const rl_task& t) {
    if (rl_deque_room(d, st, 1) < 1) {
        atomicOr(w.error, RL_ERROR_DEQUE_FULL);
        return;
    }
    *rl_deque_slot(d, st.bot) = t;
    rl_deque_publish(w, d, st, 1);
}

// Owner, non-blocking: claims the `k` newest tasks (`k` at most what it saw above `top`):
// `bot` is lowered first, then `top` read again; a thief that read `bot` before can only be
// taking the task at that `top`, which the owner claims by compare-and-swap when it is among
// its `k`. Returns the lowest index claimed; the claimed tasks are [that, old bot).
__device__ __forceinline__ rl_u32 rl_deque_claim(const rl_deque& d, rl_warp_state& st, rl_u32 k) {
    rl_u32 old_bot = st.bot;
    rl_u32 b = old_bot - k;
    rl_store_volatile(&d.head->bot, b);
    __threadfence();
    rl_u32 t = rl_load_volatile(&d.head->top);
    if (t < b) {
        st.bot = b;
        return b;
    }
    // The deque is empty after this claim, whoever wins the task at `t`.
    rl_u32 lowest = t + 1;
    if (t < old_bot && atomicCAS(&d.head->top, t, t + 1) == t) {
        lowest = t;
    }
    rl_u32 end = min(t + 1, old_bot);
    rl_store_volatile(&d.head->bot, end);
    st.bot = end;
    st.empty_at = end;
    st.tile_mark = 0xffffffffu;
    return min(lowest, old_bot);
}

// Owner, locked, after taking from the bottom down to `st.bot`: an emptied deque starts at the
// beginning of its array again. Called under the lock.
__device__ __forceinline__ void rl_deque_settle(const rl_deque& d, rl_warp_state& st,
                                                rl_u32 top) {
    if (st.bot == top) {
        rl_store_volatile(&d.head->top, 0);
        st.bot = 0;
        st.empty_at = 0;
        st.tile_mark = 0xffffffffu;
    }
}

// Owner: the bottom `count` tasks that are of one sort: ray tasks (down to the first tile, at
// most `most`), or one tile when `tile_first` and the bottom task is a tile (*tile set).
// Reads tasks at and above `top`, which a thief may be taking: they are only read.
__device__ __forceinline__ int rl_deque_scan(const rl_deque& d, const rl_warp_state& st,
                                             rl_u32 top, int most, bool tile_first,
                                             int* tile) {
    rl_u32 n = st.bot - top;
    *tile = 0;
    if (n == 0) {
        return 0;
    }
    if (tile_first && rl_queued_kind(rl_deque_slot(d, st.bot - 1)) == RL_KIND_TILE) {
        *tile = 1;
        return 1;
    }
    int count = 0;
    while (count < (int)n && count < most &&
           rl_queued_kind(rl_deque_slot(d, st.bot - 1 - count)) != RL_KIND_TILE) {
        count += 1;
    }
    return count;
}

// Owner: takes from the bottom ray tasks (down to the first tile, at most `most`), or, with
// `tile_first`, a tile when one is at the bottom (*tile set). Returns how many; they are
// tasks [*first, *first + n). With `tile_first` false and fewer than `most` rays before a
// tile, marks the tile (`st.tile_mark`): no use looking again until something is pushed.
__device__ __forceinline__ int rl_deque_take(const rl_deque& d, rl_warp_state& st, int most,
                                             bool tile_first, rl_u32* first, int* tile) {
    if (d.non_blocking) {
        rl_u32 top = rl_load_volatile(&d.head->top);
        int count = rl_deque_scan(d, st, top, most, tile_first, tile);
        if (count == 0) {
            if (st.bot == top) {
                st.empty_at = st.bot;
            } else if (!tile_first) {
                st.tile_mark = st.bot;
            }
            *first = st.bot;
            return 0;
        }
        rl_u32 old_bot = st.bot;
        *first = rl_deque_claim(d, st, (rl_u32)count);
        if (!tile_first && count < most && st.bot != st.empty_at) {
            st.tile_mark = st.bot;
        }
        if (*first == old_bot) {
            *tile = 0;  // a thief took the one task
        }
        return (int)(old_bot - *first);
    }
    rl_lock(&d.head->lock);
    rl_u32 top = rl_load_volatile(&d.head->top);
    int count = rl_deque_scan(d, st, top, most, tile_first, tile);
    st.bot -= count;
    *first = st.bot;
    if (!tile_first && st.bot != top && count < most) {
        st.tile_mark = st.bot;
    }
    rl_deque_settle(d, st, top);
    rl_store_volatile(&d.head->bot, st.bot);
    rl_unlock(&d.head->lock);
    return count;
}

// Owner, its deque empty: where tasks copied in for rl_deque_refill go first.
__device__ __forceinline__ rl_u32 rl_deque_refill_base(const rl_deque& d,
                                                       const rl_warp_state& st) {
    return d.non_blocking ? st.bot : 0;
}

// Owner, its deque empty: makes the `count` tasks copied from rl_deque_refill_base on the
// deque. (They were in another deque: `pending` already counts them.)
__device__ __forceinline__ void rl_deque_refill(const rl_deque& d, rl_warp_state& st, int count) {
    if (d.non_blocking) {
        __threadfence();
        st.bot += (rl_u32)count;
        rl_store_volatile(&d.head->bot, st.bot);
    } else {
        rl_lock(&d.head->lock);
        rl_store_volatile(&d.head->top, 0);
        rl_store_volatile(&d.head->bot, (rl_u32)count);
        rl_unlock(&d.head->lock);
        st.bot = (rl_u32)count;
        st.empty_at = 0;
    }
    st.tile_mark = 0xffffffffu;
}

// Thief, locked deque: one attempt on `victim`. A look without the lock first (most deques are
// empty near the end, and a failed look costs the victim nothing), then one try for its lock.
// Returns how many tasks to take from `items[*from]` (half of them, at most a warp's worth, or
// one), with the lock held while *locked; the warp copies them, then calls
// rl_deque_steal_done.
__device__ __forceinline__ int rl_deque_steal(const rl_work& w, const rl_deque& victim,
                                              rl_u32* from, bool* locked) {
    *locked = false;
    bool looks_empty =
        rl_load_volatile(&victim.head->bot) == rl_load_volatile(&victim.head->top);
    if (looks_empty || !rl_try_lock(&victim.head->lock)) {
        return 0;
    }
    *locked = true;
    rl_u32 top = rl_load_volatile(&victim.head->top);
    rl_u32 n = rl_load_volatile(&victim.head->bot) - top;
    if (n == 0) {
        return 0;
    }
    *from = top;
    return w.steal_half ? (int)min((n + 1) / 2, (rl_u32)RL_STEAL_MAX) : 1;
}

// Thief, locked deque: the `stolen` tasks from `from` are copied: they leave the victim, whose
// lock is released.
__device__ __forceinline__ void rl_deque_steal_done(const rl_deque& victim, rl_u32 from,
                                                    int stolen) {
    if (stolen > 0) {
        rl_store_volatile(&victim.head->top, from + (rl_u32)stolen);
    }
    rl_unlock(&victim.head->lock);
}

// Thief, non-blocking deque: claims tasks from the top of `victim` one compare-and-swap at a
// time (half of those it first sees, at most a warp's worth, or one), each copied to `to`
// before its claim and kept only when the claim succeeds; stops at the first failed claim.
// Returns how many it took.
__device__ __forceinline__ int rl_deque_steal_claims(const rl_work& w, const rl_deque& victim,
                                                     const rl_deque& to, rl_u32 to_base) {
    int wanted = 0, taken = 0;
    for (;;) {
        rl_u32 t = rl_load_volatile(&victim.head->top);
        __threadfence();
        rl_u32 b = rl_load_volatile(&victim.head->bot);
        // Tasks are read only after `bot` says they are there.
        __threadfence();
        if ((int)(b - t) <= 0) {
            break;
        }
        if (wanted == 0) {
            rl_u32 n = b - t;
            wanted = w.steal_half ? (int)min((n + 1) / 2, (rl_u32)RL_STEAL_MAX) : 1;
        }
        rl_copy_task(rl_deque_slot(to, to_base + (rl_u32)taken), rl_deque_slot(victim, t));
        if (atomicCAS(&victim.head->top, t, t + 1) != t) {
            break;
        }
        taken += 1;
        if (taken == wanted) {
            break;
        }
    }
    return taken;
}

// ---------------------------------------------------------------------------------------------
// Tiles. A tile task carries its corners; a tile above RL_SPLIT_ABOVE pixels is cut, under
// stealing, into the CPU's equal pieces of RL_PIECE × RL_PIECE pixels from its corner: the warp
// halves it along its longer side at a piece boundary and pushes the far half, until what it
// keeps is one piece, so that thieves can take any part of it. A pushed part is marked (depth 1)
// to be cut down to pieces whatever its size.

// Pieces of a part `[x0, x1) × [y0, y1)` of a tile across and down.
__device__ __forceinline__ rl_u32 rl_pieces(rl_u32 lo, rl_u32 hi) {
    return (hi - lo + RL_PIECE - 1) / RL_PIECE;
}

// Makes `t` (a tile task) the warp's current tile, after cutting it as above.
__device__ void rl_start_tile(const rl_work& w, const rl_deque& d, rl_u32 samples, rl_u32 lane,
                              rl_warp_state& st, rl_task t) {
    const rl_u32 corner = (1u << RL_TILE_CORNER_BITS) - 1u;
    rl_u32 x0 = t.pixel & corner, y0 = t.pixel >> RL_TILE_CORNER_BITS;
    rl_u32 x1 = t.tile_end & corner, y1 = t.tile_end >> RL_TILE_CORNER_BITS;
    bool cut = (t.depth_kind & RL_DEPTH_MASK) != 0 || (x1 - x0) * (y1 - y0) > RL_SPLIT_ABOVE;
    if (w.mode == RL_MODE_STEALING && cut) {
        for (;;) {
            rl_u32 across = rl_pieces(x0, x1), down = rl_pieces(y0, y1);
            if (across * down <= 1) {
                break;
            }
            rl_task far_part;
            if (across >= down) {
                rl_u32 mid = x0 + across / 2 * RL_PIECE;
                far_part = rl_tile_task(mid, y0, x1, y1);
                x1 = mid;
            } else {
                rl_u32 mid = y0 + down / 2 * RL_PIECE;
                far_part = rl_tile_task(x0, mid, x1, y1);
                y1 = mid;
            }
            far_part.depth_kind |= 1u;
            if (lane == 0) {
                rl_deque_push(w, d, st, far_part);
            }
            st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
        }
    }
    st.x0 = x0;
    st.y0 = y0;
    st.x1 = x1;
    st.next = 0;
    st.pixels = (x1 - x0) * (y1 - y0) * samples;
}

// ---------------------------------------------------------------------------------------------
// The persistent kernel, in stages: each warp loops refilling its idle lanes (rl_refill_lanes),
// finding new work when the lanes run dry (rl_find_work: its own deque, then a tile, then
// stealing), tracing one step (rl_trace_step) and placing the rays it spawned
// (rl_place_children, rl_share_buffer), until no task is left anywhere; then it writes its
// figures (rl_flush_figures).

// One warp: who it is, its shared buffer and deque, its state and its figures. The state is
// the same in every lane; the ray counts and `spawned` are each lane's own.
struct rl_warp {
    rl_u32 lane, index, below;  // lane, warp number, the mask of the lanes below this one
    rl_task* buf;               // the shared buffer, RL_BUFFER tasks
    rl_deque deque;
    rl_warp_state st;
    rl_task mine;  // the lane's task, when `has`
    bool has;
    rl_u32 rng;
    rl_counts counts;
    rl_u64 tiles, steps, active_lanes, spawned;
    rl_u64 steal_attempts, steal_successes, tasks_stolen, peak;
    long long busy, idle, mark;
};

// 1. Idle lanes take ray tasks from the top of the buffer, then from the bottom of the deque
// (the newest first: depth-first, which bounds the deque), and only then camera rays of the
// tile.
__device__ __forceinline__ void rl_refill_lanes(const rl_scene& s, const rl_work& w,
                                                rl_warp& me) {
    rl_warp_state& st = me.st;
    rl_u32 idle_lanes = __ballot_sync(RL_FULL_MASK, !me.has);
    if (idle_lanes == 0) {
        return;
    }
    int n_idle = __popc(idle_lanes);
    int rank = __popc(idle_lanes & me.below);
    int from_buf = min(n_idle, st.buf_count);
    if (!me.has && rank < from_buf) {
        me.mine = me.buf[st.buf_count - 1 - rank];
        me.has = true;
    }
    st.buf_count -= from_buf;
    int from_deque = 0;
    if (n_idle > from_buf && rl_deque_may_hold(st) && st.bot != st.tile_mark) {
        rl_u32 first = 0;
        if (me.lane == 0) {
            int tile;
            from_deque = rl_deque_take(me.deque, st, n_idle - from_buf, false, &first, &tile);
        }
        st.tile_mark = __shfl_sync(RL_FULL_MASK, st.tile_mark, 0);
        from_deque = __shfl_sync(RL_FULL_MASK, from_deque, 0);
        first = __shfl_sync(RL_FULL_MASK, first, 0);
        st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
        st.empty_at = __shfl_sync(RL_FULL_MASK, st.empty_at, 0);
        // [first, first + from_deque) lies below `bot`: no thief reads it, and only this warp
        // writes there.
        int k = rank - from_buf;
        if (!me.has && k < from_deque) {
            rl_copy_task(&me.mine, rl_deque_slot(me.deque, first + (rl_u32)k));
            me.has = true;
        }
        if (w.mode == RL_MODE_STEALING) {
            st.held += from_deque;
        }
    }
    int taken = from_buf + from_deque;
    int from_tile = min(n_idle - taken, (int)(st.pixels - st.next));
    if (!me.has && rank - taken < from_tile) {
        rl_u32 p = st.next + (rl_u32)(rank - taken);
        rl_u32 pixel = p / s.samples, width = st.x1 - st.x0;
        me.mine =
            rl_camera_task(s, st.x0 + pixel % width, st.y0 + pixel / width, p % s.samples);
        me.has = true;
    }
    st.next += from_tile;
    __syncwarp();
}

// 2a. Pops the warp's own deque: a tile becomes the current tile, ray tasks go to the buffer.
// Whether it found anything.
__device__ __forceinline__ bool rl_pop_own(const rl_scene& s, const rl_work& w, rl_warp& me) {
    rl_warp_state& st = me.st;
    int take = 0, tile = 0;
    rl_u32 first = 0;
    if (me.lane == 0 && rl_deque_may_hold(st)) {
        take = rl_deque_take(me.deque, st, RL_WARP, true, &first, &tile);
    }
    take = __shfl_sync(RL_FULL_MASK, take, 0);
    tile = __shfl_sync(RL_FULL_MASK, tile, 0);
    first = __shfl_sync(RL_FULL_MASK, first, 0);
    st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
    st.tile_mark = __shfl_sync(RL_FULL_MASK, st.tile_mark, 0);
    st.empty_at = __shfl_sync(RL_FULL_MASK, st.empty_at, 0);
    if (take == 0) {
        return false;
    }
    st.tile_mark = 0xffffffffu;
    // The tasks taken are [first, first + take): no thief reads below `bot`, and only this
    // warp writes there, so they are copied after the unlock.
    if (w.mode == RL_MODE_STEALING) {
        st.held += take;
    }
    if (tile) {
        rl_task t;
        rl_copy_task(&t, rl_deque_slot(me.deque, first));
        // Every lane has read the tile before lane 0 pushes parts of it over the same slot.
        __syncwarp();
        me.tiles += 1;
        rl_start_tile(w, me.deque, s.samples, me.lane, st, t);
        me.peak = max(me.peak, (rl_u64)rl_deque_length_bound(st));
    } else {
        if ((int)me.lane < take) {
            rl_copy_task(me.buf + me.lane, rl_deque_slot(me.deque, first + me.lane));
        }
        st.buf_count = take;
        __syncwarp();
    }
    return true;
}

// 2b. static and counter: the warp's next tile, if any is left. Whether it found one.
__device__ __forceinline__ bool rl_next_tile(const rl_scene& s, const rl_work& w, rl_warp& me) {
    rl_warp_state& st = me.st;
    rl_u32 number;
    if (w.mode == RL_MODE_STATIC) {
        if (st.static_next >= w.tile_count) {
            return false;
        }
        number = st.static_next;
        st.static_next += w.warps;
    } else {
        if (st.counter_next == st.counter_end) {
            rl_u32 base = 0;
            if (me.lane == 0) {
                base = atomicAdd(w.tile_counter, w.chunk);
            }
            base = __shfl_sync(RL_FULL_MASK, base, 0);
            st.counter_next = min(base, w.tile_count);
            st.counter_end = min(base + w.chunk, w.tile_count);
        }
        if (st.counter_next >= st.counter_end) {
            return false;
        }
        number = st.counter_next;
        st.counter_next += 1;
    }
    rl_u32 x0, y0, x1, y1;
    rl_tile_of(s, w.tile_edge, w.tiles_x, w.tiles, number, &x0, &y0, &x1, &y1);
    me.tiles += 1;
    rl_start_tile(w, me.deque, s.samples, me.lane, st, rl_tile_task(x0, y0, x1, y1));
    return true;
}

// 2c. stealing: one attempt on a random victim; what it takes is copied into the warp's own
// (empty) deque. Whether it took anything.
__device__ __forceinline__ bool rl_steal(const rl_work& w, rl_warp& me) {
    rl_warp_state& st = me.st;
    // What this warp took from deques is finished: release it from `pending` before looking
    // elsewhere.
    if (st.held > 0) {
        if (me.lane == 0) {
            atomicSub(w.pending, st.held);
        }
        st.held = 0;
    }
    int stolen = 0;
    rl_u32 victim = 0, from = 0;
    bool locked = false;
    if (me.lane == 0 && w.warps > 1) {
        me.steal_attempts += 1;
        victim = rl_xorshift(&me.rng) % (w.warps - 1);
        victim += victim >= me.index ? 1 : 0;
        if (me.deque.non_blocking) {
            stolen = rl_deque_steal_claims(w, rl_deque_of(w, victim), me.deque,
                                           rl_deque_refill_base(me.deque, st));
        } else {
            stolen = rl_deque_steal(w, rl_deque_of(w, victim), &from, &locked);
        }
    }
    stolen = __shfl_sync(RL_FULL_MASK, stolen, 0);
    victim = __shfl_sync(RL_FULL_MASK, victim, 0);
    from = __shfl_sync(RL_FULL_MASK, from, 0);
    // Orders the lanes' reads of the victim's tasks after lane 0's lock (a shuffle alone
    // orders no memory).
    __syncwarp();
    rl_deque theirs = rl_deque_of(w, victim);
    if (stolen > 0 && !me.deque.non_blocking) {
        // Copied while the victim's lock is held: the victim may reset and overwrite its array
        // once it is released.
        if ((int)me.lane < stolen) {
            rl_copy_task(me.deque.items + me.lane, theirs.items + from + me.lane);
        }
        __threadfence();
        __syncwarp();
    }
    if (me.lane == 0 && locked) {
        rl_deque_steal_done(theirs, from, stolen);
    }
    if (stolen == 0) {
        return false;
    }
    // Moved from one deque to another: `pending` is unchanged.
    if (me.lane == 0) {
        rl_deque_refill(me.deque, st, stolen);
        me.steal_successes += 1;
        me.tasks_stolen += stolen;
    }
    st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
    st.empty_at = __shfl_sync(RL_FULL_MASK, st.empty_at, 0);
    st.tile_mark = 0xffffffffu;
    me.peak = max(me.peak, (rl_u64)rl_deque_length_bound(st));
    return true;
}

// Under stealing: whether no task is left anywhere (the warp is then done).
__device__ __forceinline__ bool rl_all_done(const rl_work& w, const rl_warp& me) {
    int left = 1;
    if (me.lane == 0) {
        left = (int)rl_load_volatile((const rl_u32*)w.pending);
    }
    left = __shfl_sync(RL_FULL_MASK, left, 0);
    return left == 0;
}

// What rl_find_work found.
#define RL_FOUND 0    // new work: hand it to the idle lanes first
#define RL_NOTHING 1  // nothing now, while some lanes still work: trace their step
#define RL_DONE 2     // nothing left for this warp

// 2. Lanes are idle and nothing is left in the buffer or the tile: the warp's own deque; then,
// when the whole warp is idle, a new tile (static, counter) or stealing, until work turns up or
// none is left. Counts the idle time of a wholly idle warp.
__device__ __forceinline__ int rl_find_work(const rl_scene& s, const rl_work& w, rl_warp& me,
                                            bool was_idle) {
    if (was_idle) {
        long long now = clock64();
        me.busy += now - me.mark;
        me.mark = now;
    }
    bool got = false;
    for (;;) {
        if (rl_pop_own(s, w, me)) {
            got = true;
            break;
        }
        if (!was_idle) {
            break;  // some lanes still work: come back after their step
        }
        if (w.mode != RL_MODE_STEALING) {
            got = rl_next_tile(s, w, me);
            break;
        }
        if (rl_steal(w, me)) {
            continue;  // pop it
        }
        if (rl_all_done(w, me)) {
            break;
        }
        if (me.lane == 0) {
            __nanosleep(64);
        }
        __syncwarp();
    }
    if (was_idle) {
        long long now = clock64();
        me.idle += now - me.mark;
        me.mark = now;
        if (!got) {
            return RL_DONE;
        }
    }
    return got ? RL_FOUND : RL_NOTHING;
}

// 3. One step: every lane with a task traces it. Returns the lane's children's count.
template <int STRUCTURE>
__device__ __forceinline__ int rl_trace_step(const rl_scene& s, const rl_film& film, rl_warp& me,
                                             rl_task kids[2]) {
    rl_u32 active = __ballot_sync(RL_FULL_MASK, me.has);
    me.steps += 1;
    me.active_lanes += __popc(active);
    int n_kids = 0;
    if (me.has) {
        n_kids = rl_trace<STRUCTURE>(s, me.mine, film, &me.counts, kids);
        RL_PROGRESS();
        me.has = false;
    }
    return n_kids;
}

// 4. The step's children to the buffer, what does not fit to the deque. Whether the step
// spawned children and all of them went to the buffer.
__device__ __forceinline__ bool rl_place_children(const rl_work& w, rl_warp& me,
                                                  const rl_task kids[2], int n_kids) {
    rl_warp_state& st = me.st;
    int total = 0;
    int offset = rl_warp_scan(n_kids, me.lane, &total);
    if (total == 0) {
        return false;
    }
    me.spawned += n_kids;
    int space = RL_BUFFER - st.buf_count;
    int to_buf = min(total, space);
    int spill = total - to_buf;
    bool fits = true;
    if (spill > 0) {
        rl_u32 room = 0;
        if (me.lane == 0) {
            room = rl_deque_room(me.deque, st, (rl_u32)spill);
            if (room < (rl_u32)spill) {
                atomicOr(w.error, RL_ERROR_DEQUE_FULL);
            }
        }
        room = __shfl_sync(RL_FULL_MASK, room, 0);
        st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
        st.tile_mark = __shfl_sync(RL_FULL_MASK, st.tile_mark, 0);
        // The lanes below write where lane 0's compaction may just have read: a shuffle orders
        // no memory, a __syncwarp does.
        __syncwarp();
        fits = (rl_u32)spill <= room;
    }
    for (int j = 0; j < n_kids; ++j) {
        int slot = offset + j;
        if (slot < space) {
            me.buf[st.buf_count + slot] = kids[j];
        } else if (fits) {
            *rl_deque_slot(me.deque, st.bot + (rl_u32)(slot - space)) = kids[j];
        }
    }
    st.buf_count += to_buf;
    if (spill > 0 && fits) {
        __threadfence();
        __syncwarp();
        if (me.lane == 0) {
            rl_deque_publish(w, me.deque, st, spill);
        }
        st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
        me.peak = max(me.peak, (rl_u64)rl_deque_length_bound(st));
    }
    __syncwarp();
    return spill == 0;
}

// 5. Under stealing, the buffer keeps one step's worth of tasks; the older ones go to the
// deque, where idle warps can take them. (Tasks in the shared buffer are out of other warps'
// reach: kept there, a tile's whole ray tree would stay on one warp.)
__device__ __forceinline__ void rl_share_buffer(const rl_work& w, rl_warp& me) {
    rl_warp_state& st = me.st;
    if (w.mode != RL_MODE_STEALING || st.buf_count <= RL_WARP) {
        return;
    }
    int m = st.buf_count - RL_WARP;
    bool fits;
    if (me.deque.non_blocking) {
        rl_u32 room = 0;
        if (me.lane == 0) {
            room = rl_deque_room(me.deque, st, (rl_u32)m);
        }
        fits = (rl_u32)m <= __shfl_sync(RL_FULL_MASK, room, 0);
    } else {
        fits = st.bot + (rl_u32)m <= w.capacity;
    }
    if (!fits) {
        return;
    }
    if ((int)me.lane < m) {
        *rl_deque_slot(me.deque, st.bot + me.lane) = me.buf[me.lane];
    }
    rl_task keep = me.buf[m + (int)me.lane];
    __threadfence();
    __syncwarp();
    me.buf[me.lane] = keep;
    st.buf_count = RL_WARP;
    if (me.lane == 0) {
        rl_deque_publish(w, me.deque, st, m);
    }
    st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
    me.peak = max(me.peak, (rl_u64)rl_deque_length_bound(st));
    __syncwarp();
}

// 6. The warp's figures to its slots: ray counts summed over the lanes, the rest kept by every
// lane alike.
__device__ __forceinline__ void rl_flush_figures(const rl_work& w, rl_warp& me) {
    rl_u64 c[4] = {me.counts.camera, me.counts.shadow, me.counts.reflection,
                   me.counts.refraction};
    for (int k = 0; k < 4; ++k) {
        for (int d = 16; d > 0; d >>= 1) {
            c[k] += __shfl_down_sync(RL_FULL_MASK, c[k], d);
        }
    }
    rl_u64 spawned = me.spawned;
    for (int d = 16; d > 0; d >>= 1) {
        spawned += __shfl_down_sync(RL_FULL_MASK, spawned, d);
    }
    if (me.lane == 0) {
        rl_u64* out = w.stats + (rl_u64)me.index * RL_STAT_SLOTS;
        out[RL_ST_TILES] = me.tiles;
        out[RL_ST_CAMERA] = c[0];
        out[RL_ST_SHADOW] = c[1];
        out[RL_ST_REFLECTION] = c[2];
        out[RL_ST_REFRACTION] = c[3];
        out[RL_ST_STEPS] = me.steps;
        out[RL_ST_ACTIVE_LANES] = me.active_lanes;
        out[RL_ST_STEAL_ATTEMPTS] = me.steal_attempts;
        out[RL_ST_STEAL_SUCCESSES] = me.steal_successes;
        out[RL_ST_TASKS_STOLEN] = me.tasks_stolen;
        out[RL_ST_BUSY_CYCLES] = (rl_u64)me.busy;
        out[RL_ST_IDLE_CYCLES] = (rl_u64)me.idle;
        out[RL_ST_PEAK_QUEUED] = me.peak;
        out[RL_ST_SPAWNED] = spawned;
    }
}

// The persistent kernel's body, for a scene traced through STRUCTURE (entry points below).
template <int STRUCTURE>
__device__ __forceinline__ void rl_persistent_body(const rl_scene& s, const rl_film& film,
                                                   const rl_work& w) {
    // 16-byte aligned: tasks are copied in with 16-byte stores.
    RL_SHARED(16, rl_task, buffers, [RL_WARPS_PER_BLOCK][RL_BUFFER]);
    rl_warp me;
    me.lane = threadIdx.x & (RL_WARP - 1);
    me.index = blockIdx.x * RL_WARPS_PER_BLOCK + (threadIdx.x / RL_WARP);
    if (me.index >= w.warps) {
        return;
    }
    me.below = (1u << me.lane) - 1u;
    me.buf = buffers[threadIdx.x / RL_WARP];
    me.deque = rl_deque_of(w, me.index);
    rl_warp_state& st = me.st;
    st.buf_count = 0;
    st.x0 = st.y0 = st.x1 = 0;
    st.next = st.pixels = 0;
    st.bot = w.mode == RL_MODE_STEALING ? rl_load_volatile(&me.deque.head->bot) : 0;
    st.held = 0;
    st.tile_mark = 0xffffffffu;
    st.empty_at = 0;
    st.static_next = me.index;
    st.counter_next = st.counter_end = 0;
    me.has = false;
    me.rng = (w.seed ^ (me.index * 0x9E3779B9u)) | 1u;
    me.counts = rl_counts{0, 0, 0, 0};
    me.tiles = me.steps = me.active_lanes = me.spawned = 0;
    me.steal_attempts = me.steal_successes = me.tasks_stolen = 0;
    me.peak = st.bot;
    me.busy = me.idle = 0;
    me.mark = clock64();

    for (;;) {
        rl_refill_lanes(s, w, me);
        rl_u32 active = __ballot_sync(RL_FULL_MASK, me.has);
        if (active != RL_FULL_MASK && st.buf_count == 0 && st.next == st.pixels) {
            int found = rl_find_work(s, w, me, active == 0);
            if (found == RL_DONE) {
                break;
            }
            if (found == RL_FOUND) {
                continue;
            }
        }
        rl_task kids[2];
        int n_kids = rl_trace_step<STRUCTURE>(s, film, me, kids);
        if (rl_place_children(w, me, kids, n_kids)) {
            rl_share_buffer(w, me);
        }
    }
    rl_flush_figures(w, me);
}

// The persistent kernel for scenes in the octree, and for scenes in the wide BVH.
extern "C" __global__ void __launch_bounds__(RL_WARPS_PER_BLOCK* RL_WARP, RL_MIN_BLOCKS)
    rl_persistent(rl_scene s, rl_film film, rl_work w) {
    rl_persistent_body<RL_OCTREE>(s, film, w);
}
extern "C" __global__ void __launch_bounds__(RL_WARPS_PER_BLOCK* RL_WARP, RL_MIN_BLOCKS)
    rl_persistent_wide(rl_scene s, rl_film film, rl_work w) {
    rl_persistent_body<RL_WIDE>(s, film, w);
}

// ---------------------------------------------------------------------------------------------
// cuda-managed: one block per tile.

// A cuda-managed block's figures, added to those of its stack slot `slot`, which is given
// back last; every thread of the block calls it. `steps` and `active_lanes` are counted by each
// warp's lane 0; `start` is the block's first clock.
__device__ __forceinline__ void rl_block_figures(const rl_managed& m, rl_u32 slot,
                                                 const rl_counts& counts, rl_u64 spawned,
                                                 rl_u64 steps, rl_u64 active_lanes,
                                                 long long start) {
    const rl_u32 tid = threadIdx.x;
    rl_u64* out = m.stats + (rl_u64)slot * RL_STAT_SLOTS;
    atomicAdd(out + RL_ST_CAMERA, counts.camera);
    atomicAdd(out + RL_ST_SHADOW, counts.shadow);
    atomicAdd(out + RL_ST_REFLECTION, counts.reflection);
    atomicAdd(out + RL_ST_REFRACTION, counts.refraction);
    atomicAdd(out + RL_ST_SPAWNED, spawned);
    if ((tid & (RL_WARP - 1)) == 0) {
        atomicAdd(out + RL_ST_STEPS, steps);
        atomicAdd(out + RL_ST_ACTIVE_LANES, active_lanes);
    }
    __syncthreads();
    if (tid == 0) {
        atomicAdd(out + RL_ST_TILES, 1ull);
        atomicAdd(out + RL_ST_BUSY_CYCLES, (rl_u64)(clock64() - start));
        __threadfence();
        atomicExch(m.slot_taken + slot, 0u);
    }
}

// One tile's block, for a scene traced through STRUCTURE (entry points below).
template <int STRUCTURE>
__device__ __forceinline__ void rl_block_per_tile_body(const rl_scene& s, const rl_film& film,
                                                       const rl_managed& m) {
    RL_SHARED(4, rl_u32, slot, );
    RL_SHARED(4, int, stack_count, );
    RL_SHARED(4, rl_u32, next, );
    RL_SHARED(4, int, overflow, );
    long long start = clock64();
    const rl_u32 tid = threadIdx.x;
    const rl_u32 lane = tid & (RL_WARP - 1);
    if (tid == 0) {
        // A slot of stack memory: at most `slots` blocks are resident, so one is always free.
        rl_u32 k = blockIdx.x % m.slots;
        while (atomicCAS(m.slot_taken + k, 0u, 1u) != 0u) {
            k = k + 1 == m.slots ? 0 : k + 1;
        }
        __threadfence();
        slot = k;
        stack_count = 0;
        next = 0;
        overflow = 0;
    }
    __syncthreads();
    rl_task* stack = m.stacks + (rl_u64)slot * m.capacity;
    rl_u32 x0, y0, x1, y1;
    rl_tile_of(s, m.tile_edge, m.tiles_x, m.tiles, blockIdx.x, &x0, &y0, &x1, &y1);
    const rl_u32 width = x1 - x0;
    const rl_u32 pixels = width * (y1 - y0) * s.samples;  // camera rays: pixels times samples
    rl_counts counts = {0, 0, 0, 0};
    rl_u64 steps = 0, active_lanes = 0, spawned = 0;
    for (;;) {
        int sc = stack_count;
        rl_u32 nx = next;
        int from_stack = min(sc, (int)blockDim.x);
        int from_tile = min((int)blockDim.x - from_stack, (int)(pixels - nx));
        __syncthreads();  // everyone has read the counters
        if (from_stack == 0 && from_tile == 0) {
            break;
        }
        bool has = false;
        rl_task mine;
        if ((int)tid < from_stack) {
            mine = stack[sc - 1 - (int)tid];
            has = true;
        } else if ((int)tid - from_stack < from_tile) {
            rl_u32 p = nx + (tid - (rl_u32)from_stack);
            rl_u32 pixel = p / s.samples;
            mine = rl_camera_task(s, x0 + pixel % width, y0 + pixel / width, p % s.samples);
            has = true;
        }
        if (tid == 0) {
            stack_count = sc - from_stack;
            next = nx + (rl_u32)from_tile;
        }
        __syncthreads();  // the stack's top is taken before children are pushed over it
        rl_u32 active = __ballot_sync(RL_FULL_MASK, has);
        if (lane == 0 && active != 0) {
            steps += 1;
            active_lanes += __popc(active);
        }
        if (has) {
            rl_task kids[2];
            int n = rl_trace<STRUCTURE>(s, mine, film, &counts, kids);
            RL_PROGRESS();
            if (n > 0) {
                spawned += n;
                int at = atomicAdd(&stack_count, n);
                if (at + n <= (int)m.capacity) {
                    for (int j = 0; j < n; ++j) {
                        stack[at + j] = kids[j];
                    }
                } else {
                    overflow = 1;
                }
            }
        }
        __syncthreads();
        if (overflow) {
            if (tid == 0) {
                atomicOr(m.error, RL_ERROR_STACK_FULL);
            }
            break;
        }
    }
    rl_block_figures(m, slot, counts, spawned, steps, active_lanes, start);
}

// cuda-managed's kernel for scenes in the octree, and for scenes in the wide BVH.
extern "C" __global__ void __launch_bounds__(RL_MANAGED_THREADS, RL_MIN_BLOCKS)
    rl_block_per_tile(rl_scene s, rl_film film, rl_managed m) {
    rl_block_per_tile_body<RL_OCTREE>(s, film, m);
}
extern "C" __global__ void __launch_bounds__(RL_MANAGED_THREADS, RL_MIN_BLOCKS)
    rl_block_per_tile_wide(rl_scene s, rl_film film, rl_managed m) {
    rl_block_per_tile_body<RL_WIDE>(s, film, m);
}
