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
    int held;            // stealing: tasks taken from deques since the warp was last idle
    rl_u32 static_next;  // static: the next tile of this warp's share
    rl_u32 counter_next; // counter: the next tile of the last chunk grabbed
    rl_u32 counter_end;
};

// Lane 0 only: makes the `count` tasks already written from `st.bot` on part of the warp's
// deque `head`. Under stealing they are counted in `pending` first, before any thief can see
// them, so that `pending` never reads 0 while they exist.
__device__ __forceinline__ void rl_publish(const rl_work& w, rl_deque_head* head,
                                           rl_warp_state& st, int count) {
    if (w.mode == RL_MODE_STEALING) {
        atomicAdd(w.pending, count);
    }
    rl_lock(&head->lock);
    st.bot += (rl_u32)count;
    rl_store_volatile(&head->bot, st.bot);
    rl_unlock(&head->lock);
}

// Pushes the task `t` of lane 0 to the warp's own deque (lane 0 only). Used for the second half
// of a split tile.
__device__ void rl_push_one(const rl_work& w, rl_u32 warp, rl_warp_state& st, const rl_task& t) {
    rl_deque_head* head = w.heads + warp;
    rl_task* items = w.items + (rl_u64)warp * w.capacity;
    if (st.bot + 1 > w.capacity) {
        atomicOr(w.error, RL_ERROR_DEQUE_FULL);
        return;
    }
    items[st.bot] = t;
    rl_publish(w, head, st, 1);
}

// Makes `t` (a tile task) the warp's current tile; under stealing, a tile above RL_SPLIT_ABOVE
// pixels first pushes halves of itself to the deque (as the CPU balancers' tiles do), so that
// thieves can take parts of it.
__device__ void rl_start_tile(const rl_work& w, rl_u32 samples, rl_u32 warp, rl_u32 lane,
                              rl_warp_state& st, rl_task t) {
    const rl_u32 corner = (1u << RL_TILE_CORNER_BITS) - 1u;
    rl_u32 x0 = t.pixel & corner, y0 = t.pixel >> RL_TILE_CORNER_BITS;
    rl_u32 x1 = t.tile_end & corner, y1 = t.tile_end >> RL_TILE_CORNER_BITS;
    if (w.mode == RL_MODE_STEALING) {
        while ((x1 - x0) * (y1 - y0) > RL_SPLIT_ABOVE) {
            rl_task second;
            if (x1 - x0 >= y1 - y0) {
                rl_u32 mid = x0 + (x1 - x0) / 2;
                second = rl_tile_task(mid, y0, x1, y1);
                x1 = mid;
            } else {
                rl_u32 mid = y0 + (y1 - y0) / 2;
                second = rl_tile_task(x0, mid, x1, y1);
                y1 = mid;
            }
            if (lane == 0) {
                rl_push_one(w, warp, st, second);
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

// The persistent kernel's body, for a scene traced through STRUCTURE (entry points below).
template <int STRUCTURE>
__device__ __forceinline__ void rl_persistent_body(const rl_scene& s, const rl_film& film,
                                                   const rl_work& w) {
    // 16-byte aligned: tasks are copied in with 16-byte stores.
    RL_SHARED(16, rl_task, buffers, [RL_WARPS_PER_BLOCK][RL_BUFFER]);
    const rl_u32 lane = threadIdx.x & (RL_WARP - 1);
    const rl_u32 warp = blockIdx.x * RL_WARPS_PER_BLOCK + (threadIdx.x / RL_WARP);
    if (warp >= w.warps) {
        return;
    }
    rl_task* buf = buffers[threadIdx.x / RL_WARP];
    rl_deque_head* head = w.heads + warp;
    rl_task* items = w.items + (rl_u64)warp * w.capacity;
    const rl_u32 below = (1u << lane) - 1u;

    rl_warp_state st;
    st.buf_count = 0;
    st.x0 = st.y0 = st.x1 = 0;
    st.next = st.pixels = 0;
    st.bot = w.mode == RL_MODE_STEALING ? rl_load_volatile(&head->bot) : 0;
    st.held = 0;
    st.tile_mark = 0xffffffffu;
    st.static_next = warp;
    st.counter_next = st.counter_end = 0;

    rl_counts counts = {0, 0, 0, 0};
    rl_u64 tiles = 0, steps = 0, active_lanes = 0, spawned = 0;
    rl_u64 steal_attempts = 0, steal_successes = 0, tasks_stolen = 0, peak = st.bot;
    rl_u32 rng = (w.seed ^ (warp * 0x9E3779B9u)) | 1u;
    long long busy = 0, idle = 0;
    long long mark = clock64();
    bool has = false;
    rl_task mine;

    for (;;) {
        // 1. Idle lanes take ray tasks from the top of the buffer, then from the bottom of the
        // deque (the newest first: depth-first, which bounds the deque), and only then camera
        // rays of the tile.
        rl_u32 idle_lanes = __ballot_sync(RL_FULL_MASK, !has);
        if (idle_lanes != 0) {
            int n_idle = __popc(idle_lanes);
            int rank = __popc(idle_lanes & below);
            int from_buf = min(n_idle, st.buf_count);
            if (!has && rank < from_buf) {
                mine = buf[st.buf_count - 1 - rank];
                has = true;
            }
            st.buf_count -= from_buf;
            int from_deque = 0;
            if (n_idle > from_buf && st.bot > 0 && st.bot != st.tile_mark) {
                rl_u32 first = 0;
                if (lane == 0) {
                    rl_lock(&head->lock);
                    rl_u32 top = rl_load_volatile(&head->top);
                    rl_u32 n = st.bot - top;
                    while (from_deque < (int)n && from_deque < n_idle - from_buf &&
                           rl_queued_kind(&items[st.bot - 1 - from_deque]) != RL_KIND_TILE) {
                        from_deque += 1;
                    }
                    st.bot -= from_deque;
                    first = st.bot;
                    if (st.bot == top) {
                        rl_store_volatile(&head->top, 0);
                        st.bot = 0;
                        st.tile_mark = 0xffffffffu;
                    } else if (from_deque < n_idle - from_buf) {
                        // A tile is next: no use looking again until something is pushed.
                        st.tile_mark = st.bot;
                    }
                    rl_store_volatile(&head->bot, st.bot);
                    rl_unlock(&head->lock);
                }
                st.tile_mark = __shfl_sync(RL_FULL_MASK, st.tile_mark, 0);
                from_deque = __shfl_sync(RL_FULL_MASK, from_deque, 0);
                first = __shfl_sync(RL_FULL_MASK, first, 0);
                st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
                // [first, first + from_deque) lies below `bot`: no thief reads it, and only
                // this warp writes there.
                int k = rank - from_buf;
                if (!has && k < from_deque) {
                    rl_copy_task(&mine, items + first + (rl_u32)k);
                    has = true;
                }
                if (w.mode == RL_MODE_STEALING) {
                    st.held += from_deque;
                }
            }
            int taken = from_buf + from_deque;
            int from_tile = min(n_idle - taken, (int)(st.pixels - st.next));
            if (!has && rank - taken < from_tile) {
                rl_u32 p = st.next + (rl_u32)(rank - taken);
                rl_u32 pixel = p / s.samples, width = st.x1 - st.x0;
                mine = rl_camera_task(s, st.x0 + pixel % width, st.y0 + pixel / width,
                                      p % s.samples);
                has = true;
            }
            st.next += from_tile;
            __syncwarp();
        }
        rl_u32 active = __ballot_sync(RL_FULL_MASK, has);
        if (active != RL_FULL_MASK && st.buf_count == 0 && st.next == st.pixels) {
            // 2. Lanes are idle and nothing is left in the buffer or the tile: the deque.
            bool was_idle = active == 0;
            long long now = 0;
            if (was_idle) {
                now = clock64();
                busy += now - mark;
                mark = now;
            }
            int got = 0;
            for (;;) {
                rl_deque_head* h = head;
                int take = 0, tile = 0;
                rl_u32 first = 0;
                if (lane == 0 && st.bot > 0) {
                    rl_lock(&h->lock);
                    rl_u32 top = rl_load_volatile(&h->top);
                    rl_u32 n = st.bot - top;
                    if (n > 0) {
                        if (rl_queued_kind(&items[st.bot - 1]) == RL_KIND_TILE) {
                            take = 1;
                            tile = 1;
                        } else {
                            while (take < (int)n && take < RL_WARP &&
                                   rl_queued_kind(&items[st.bot - 1 - take]) != RL_KIND_TILE) {
                                take += 1;
                            }
                        }
                    }
                    st.bot -= take;
                    first = st.bot;
                    if (st.bot == top) {
                        // Empty: the next push starts at the beginning of the array again.
                        rl_store_volatile(&h->top, 0);
                        st.bot = 0;
                        st.tile_mark = 0xffffffffu;
                    }
                    rl_store_volatile(&h->bot, st.bot);
                    rl_unlock(&h->lock);
                }
                take = __shfl_sync(RL_FULL_MASK, take, 0);
                tile = __shfl_sync(RL_FULL_MASK, tile, 0);
                first = __shfl_sync(RL_FULL_MASK, first, 0);
                st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
                st.tile_mark = __shfl_sync(RL_FULL_MASK, st.tile_mark, 0);
                if (take > 0) {
                    st.tile_mark = 0xffffffffu;
                    // The tasks taken are [first, first + take): no thief reads below `bot`,
                    // and only this warp writes there, so they are copied after the unlock.
                    if (w.mode == RL_MODE_STEALING) {
                        st.held += take;
                    }
                    if (tile) {
                        rl_task t;
                        rl_copy_task(&t, items + first);
                        // Every lane has read the tile before lane 0 pushes halves of it
                        // over the same slot.
                        __syncwarp();
                        tiles += 1;
                        rl_start_tile(w, s.samples, warp, lane, st, t);
                        peak = max(peak, (rl_u64)st.bot);
                    } else {
                        if ((int)lane < take) {
                            rl_copy_task(buf + lane, items + first + lane);
                        }
                        st.buf_count = take;
                        __syncwarp();
                    }
                    got = 1;
                    break;
                }
                if (!was_idle) {
                    break;  // some lanes still work: come back after their step
                }
                // 3. The warp is idle with an empty deque: a new tile, or stealing.
                if (w.mode == RL_MODE_STATIC) {
                    if (st.static_next < w.tile_count) {
                        rl_u32 x0, y0, x1, y1;
                        rl_tile_of(s, w.tile_edge, w.tiles_x, w.tiles, st.static_next, &x0, &y0, &x1,
                                   &y1);
                        st.static_next += w.warps;
                        tiles += 1;
                        rl_start_tile(w, s.samples, warp, lane, st, rl_tile_task(x0, y0, x1, y1));
                        got = 1;
                    }
                    break;
                }
                if (w.mode == RL_MODE_COUNTER) {
                    if (st.counter_next == st.counter_end) {
                        rl_u32 base = 0;
                        if (lane == 0) {
                            base = atomicAdd(w.tile_counter, w.chunk);
                        }
                        base = __shfl_sync(RL_FULL_MASK, base, 0);
                        st.counter_next = min(base, w.tile_count);
                        st.counter_end = min(base + w.chunk, w.tile_count);
                    }
                    if (st.counter_next < st.counter_end) {
                        rl_u32 x0, y0, x1, y1;
                        rl_tile_of(s, w.tile_edge, w.tiles_x, w.tiles, st.counter_next, &x0, &y0, &x1,
                                   &y1);
                        st.counter_next += 1;
                        tiles += 1;
                        rl_start_tile(w, s.samples, warp, lane, st, rl_tile_task(x0, y0, x1, y1));
                        got = 1;
                    }
                    break;
                }
                // Stealing. What this warp took from deques is finished: release it from
                // `pending` before looking elsewhere.
                if (st.held > 0) {
                    if (lane == 0) {
                        atomicSub(w.pending, st.held);
                    }
                    st.held = 0;
                }
                int stolen = 0;
                rl_u32 victim = 0, from = 0;
                bool locked = false;
                if (lane == 0 && w.warps > 1) {
                    steal_attempts += 1;
                    victim = rl_xorshift(&rng) % (w.warps - 1);
                    victim += victim >= warp ? 1 : 0;
                    rl_deque_head* vh = w.heads + victim;
                    // A look without the lock first: most deques are empty near the end,
                    // and a failed look costs the victim nothing.
                    bool looks_empty =
                        rl_load_volatile(&vh->bot) == rl_load_volatile(&vh->top);
                    if (!looks_empty && rl_try_lock(&vh->lock)) {
                        locked = true;
                        rl_u32 top = rl_load_volatile(&vh->top);
                        rl_u32 n = rl_load_volatile(&vh->bot) - top;
                        if (n > 0) {
                            stolen = w.steal_half ? (int)min((n + 1) / 2, (rl_u32)RL_STEAL_MAX) : 1;
                            from = top;
                        }
                    }
                }
                stolen = __shfl_sync(RL_FULL_MASK, stolen, 0);
                victim = __shfl_sync(RL_FULL_MASK, victim, 0);
                from = __shfl_sync(RL_FULL_MASK, from, 0);
                // Orders the lanes' reads of the victim's tasks after lane 0's lock (a shuffle
                // alone orders no memory).
                __syncwarp();
                if (stolen > 0) {
                    // Copied into this warp's own (empty) deque while the victim's lock is
                    // held: the victim may reset and overwrite its array once it is released.
                    const rl_task* vitems = w.items + (rl_u64)victim * w.capacity;
                    if ((int)lane < stolen) {
                        rl_copy_task(items + lane, vitems + from + lane);
                    }
                    __threadfence();
                    __syncwarp();
                }
                if (lane == 0 && locked) {
                    rl_deque_head* vh = w.heads + victim;
                    if (stolen > 0) {
                        rl_store_volatile(&vh->top, from + (rl_u32)stolen);
                    }
                    rl_unlock(&vh->lock);
                }
                if (stolen > 0) {
                    // Moved from one deque to another: `pending` is unchanged.
                    if (lane == 0) {
                        rl_lock(&head->lock);
                        rl_store_volatile(&head->top, 0);
                        rl_store_volatile(&head->bot, (rl_u32)stolen);
                        rl_unlock(&head->lock);
                        steal_successes += 1;
                        tasks_stolen += stolen;
                    }
                    st.bot = (rl_u32)stolen;
                    st.tile_mark = 0xffffffffu;
                    peak = max(peak, (rl_u64)st.bot);
                    continue;  // pop it
                }
                // Nothing stolen: finished once no task is left anywhere.
                int left = 1;
                if (lane == 0) {
                    left = (int)rl_load_volatile((const rl_u32*)w.pending);
                }
                left = __shfl_sync(RL_FULL_MASK, left, 0);
                if (left == 0) {
                    break;
                }
                if (lane == 0) {
                    __nanosleep(64);
                }
                __syncwarp();
            }
            if (was_idle) {
                now = clock64();
                idle += now - mark;
                mark = now;
                if (!got) {
                    break;  // nothing left for this warp: done
                }
            }
            if (got) {
                continue;  // hand the new work to the idle lanes first
            }
        }

        // 4. One step: every lane with a task traces it.
        active = __ballot_sync(RL_FULL_MASK, has);
        steps += 1;
        active_lanes += __popc(active);
        rl_task kids[2];
        int n_kids = 0;
        if (has) {
            n_kids = rl_trace<STRUCTURE>(s, mine, film, &counts, kids);
            RL_PROGRESS();
            has = false;
        }
        // 5. Children to the buffer, what does not fit to the deque.
        int total = 0;
        int offset = rl_warp_scan(n_kids, lane, &total);
        if (total == 0) {
            continue;
        }
        spawned += n_kids;
        int space = RL_BUFFER - st.buf_count;
        int to_buf = min(total, space);
        int spill = total - to_buf;
        if (spill > 0 && lane == 0 && st.bot + (rl_u32)spill > w.capacity) {
            // Compact: move the live tasks to the start of the array.
            rl_lock(&head->lock);
            rl_u32 top = rl_load_volatile(&head->top);
            for (rl_u32 k = top; k < st.bot; ++k) {
                rl_copy_task(items + (k - top), items + k);
            }
            st.bot -= top;
            st.tile_mark = 0xffffffffu;
            rl_store_volatile(&head->top, 0);
            rl_store_volatile(&head->bot, st.bot);
            rl_unlock(&head->lock);
            if (st.bot + (rl_u32)spill > w.capacity) {
                atomicOr(w.error, RL_ERROR_DEQUE_FULL);
            }
        }
        st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
        st.tile_mark = __shfl_sync(RL_FULL_MASK, st.tile_mark, 0);
        bool fits = st.bot + (rl_u32)spill <= w.capacity;
        for (int j = 0; j < n_kids; ++j) {
            int slot = offset + j;
            if (slot < space) {
                buf[st.buf_count + slot] = kids[j];
            } else if (fits) {
                items[st.bot + (slot - space)] = kids[j];
            }
        }
        st.buf_count += to_buf;
        if (spill > 0 && fits) {
            __threadfence();
            __syncwarp();
            if (lane == 0) {
                rl_publish(w, head, st, spill);
            }
            st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
            peak = max(peak, (rl_u64)st.bot);
        }
        __syncwarp();
        // 6. Under stealing, the buffer keeps one step's worth of tasks; the older ones go to
        // the deque, where idle warps can take them. (Tasks in the shared buffer are out of
        // other warps' reach: kept there, a tile's whole ray tree would stay on one warp.)
        if (w.mode == RL_MODE_STEALING && spill == 0 && st.buf_count > RL_WARP &&
            st.bot + (rl_u32)(st.buf_count - RL_WARP) <= w.capacity) {
            int m = st.buf_count - RL_WARP;
            if ((int)lane < m) {
                items[st.bot + lane] = buf[lane];
            }
            rl_task keep = buf[m + (int)lane];
            __threadfence();
            __syncwarp();
            buf[lane] = keep;
            st.buf_count = RL_WARP;
            if (lane == 0) {
                rl_publish(w, head, st, m);
            }
            st.bot = __shfl_sync(RL_FULL_MASK, st.bot, 0);
            peak = max(peak, (rl_u64)st.bot);
            __syncwarp();
        }
    }

    // Flush the figures: ray counts summed over the lanes, the rest kept by every lane alike.
    rl_u64 c[4] = {counts.camera, counts.shadow, counts.reflection, counts.refraction};
    for (int k = 0; k < 4; ++k) {
        for (int d = 16; d > 0; d >>= 1) {
            c[k] += __shfl_down_sync(RL_FULL_MASK, c[k], d);
        }
    }
    for (int d = 16; d > 0; d >>= 1) {
        spawned += __shfl_down_sync(RL_FULL_MASK, spawned, d);
    }
    if (lane == 0) {
        rl_u64* out = w.stats + (rl_u64)warp * RL_STAT_SLOTS;
        out[RL_ST_TILES] = tiles;
        out[RL_ST_CAMERA] = c[0];
        out[RL_ST_SHADOW] = c[1];
        out[RL_ST_REFLECTION] = c[2];
        out[RL_ST_REFRACTION] = c[3];
        out[RL_ST_STEPS] = steps;
        out[RL_ST_ACTIVE_LANES] = active_lanes;
        out[RL_ST_STEAL_ATTEMPTS] = steal_attempts;
        out[RL_ST_STEAL_SUCCESSES] = steal_successes;
        out[RL_ST_TASKS_STOLEN] = tasks_stolen;
        out[RL_ST_BUSY_CYCLES] = (rl_u64)busy;
        out[RL_ST_IDLE_CYCLES] = (rl_u64)idle;
        out[RL_ST_PEAK_QUEUED] = peak;
        out[RL_ST_SPAWNED] = spawned;
    }
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
    // Figures of this block, added to its slot's.
    rl_u64* out = m.stats + (rl_u64)slot * RL_STAT_SLOTS;
    atomicAdd(out + RL_ST_CAMERA, counts.camera);
    atomicAdd(out + RL_ST_SHADOW, counts.shadow);
    atomicAdd(out + RL_ST_REFLECTION, counts.reflection);
    atomicAdd(out + RL_ST_REFRACTION, counts.refraction);
    atomicAdd(out + RL_ST_SPAWNED, spawned);
    if (lane == 0) {
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

// cuda-managed's kernel for scenes in the octree, and for scenes in the wide BVH.
extern "C" __global__ void __launch_bounds__(RL_MANAGED_THREADS, RL_MIN_BLOCKS)
    rl_block_per_tile(rl_scene s, rl_film film, rl_managed m) {
    rl_block_per_tile_body<RL_OCTREE>(s, film, m);
}
extern "C" __global__ void __launch_bounds__(RL_MANAGED_THREADS, RL_MIN_BLOCKS)
    rl_block_per_tile_wide(rl_scene s, rl_film film, rl_managed m) {
    rl_block_per_tile_body<RL_WIDE>(s, film, m);
}
