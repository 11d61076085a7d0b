// The warp emulator's scheduler (raylb_emu.h says what it promises).
//
// A launch runs on the calling OS thread. Each thread of the grid is a fiber with its own stack;
// the scheduler (the launching thread's own context) resumes one runnable fiber at a time, chosen
// by a generator seeded from the launch, and the fiber runs until its next switch point, where
// it either goes on or returns to the scheduler, as the generator says. A fiber that waits at a
// collective is not runnable until the collective completes. Several launches may run at once
// on different OS threads: all state is the launching thread's.
#include "raylb_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

const size_t STACK_BYTES = 256 * 1024;
const unsigned WARP = 32;

enum class State { Runnable, Waiting, Done };
enum class Kind { None, Ballot, Shfl, ShflUp, ShflDown, Syncwarp };

const char* kind_name(Kind k) {
    switch (k) {
        case Kind::Ballot:
            return "__ballot_sync";
        case Kind::Shfl:
            return "__shfl_sync";
        case Kind::ShflUp:
            return "__shfl_up_sync";
        case Kind::ShflDown:
            return "__shfl_down_sync";
        case Kind::Syncwarp:
            return "__syncwarp";
        default:
            return "nothing";
    }
}

struct Fiber {
    ucontext_t context;
    char* stack = nullptr;
    rl_emu_dim3 thread_idx{0, 0, 0};
    unsigned block = 0;  // index into Scheduler::blocks
    unsigned warp = 0;   // warp within the block
    unsigned lane = 0;
    State state = State::Runnable;
    int line = 0;               // the last switch point, or where it waits
    const char* waits = "";     // what it waits at
    unsigned result = 0;        // a collective's answer
};

// The collective a warp's lanes are meeting at.
struct Collective {
    Kind kind = Kind::None;
    unsigned mask = 0;
    int line = 0;
    unsigned arrived = 0;
    unsigned args[WARP] = {};
    unsigned values[WARP] = {};
};

struct Warp {
    std::vector<int> lanes;  // fiber index of each lane; -1 past the block's threads
    unsigned exited = 0;     // lanes that have returned (and lanes that do not exist)
    Collective pending;
};

struct Block {
    rl_emu_dim3 index{0, 0, 0};
    unsigned alive = 0;
    std::vector<Warp> warps;
    std::map<std::pair<std::string, int>, void*> shared;
    // __syncthreads
    unsigned barrier_arrived = 0;
    int barrier_line = 0;
    std::vector<int> barrier_waiting;
};

struct Scheduler {
    rl_emu_launch launch;
    void (*body)(void*) = nullptr;
    void* args = nullptr;
    ucontext_t home;
    std::vector<Fiber> fibers;
    std::vector<Block> blocks;  // by block index; only the resident ones hold fibers
    std::vector<int> runnable;  // fiber indices
    int current = -1;
    unsigned next_block = 0;
    unsigned resident = 0;
    uint64_t rng = 0;
    uint64_t steps = 0;
    uint64_t since_progress = 0;
    bool failed = false;
    std::string error;
    rl_emu_dim3 block_dim{0, 1, 1};
    rl_emu_dim3 grid_dim{0, 1, 1};

    uint64_t draw() {
        // splitmix64
        uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }

    Fiber& me() { return fibers[current]; }
};

thread_local Scheduler* active = nullptr;

void make_runnable(Scheduler& s, int f) {
    s.fibers[f].state = State::Runnable;
    s.runnable.push_back(f);
}

void remove_runnable(Scheduler& s, int f) {
    for (size_t i = 0; i < s.runnable.size(); ++i) {
        if (s.runnable[i] == f) {
            s.runnable[i] = s.runnable.back();
            s.runnable.pop_back();
            return;
        }
    }
}

// Ends the launch with `message` (the first error wins) and returns to the scheduler for good.
[[noreturn]] void fail(const std::string& message) {
    Scheduler& s = *active;
    if (!s.failed) {
        s.failed = true;
        s.error = message;
    }
    swapcontext(&s.me().context, &s.home);
    abort();  // a failed launch never resumes a fiber
}

std::string where(const Scheduler& s, int f) {
    const Fiber& fb = s.fibers[f];
    char text[96];
    snprintf(text, sizeof text, "block %u warp %u lane %u", s.blocks[fb.block].index.x, fb.warp,
             fb.lane);
    return text;
}

// The calling fiber gives the processor back; it runs again when the scheduler picks it
// (at once if it stays runnable and is drawn).
void yield_to_scheduler() {
    Scheduler& s = *active;
    swapcontext(&s.me().context, &s.home);
    if (s.failed) {
        abort();
    }
}

// The calling fiber waits (at `what`, `line`) until another makes it runnable.
void wait_here(const char* what, int line) {
    Scheduler& s = *active;
    Fiber& f = s.me();
    f.state = State::Waiting;
    f.waits = what;
    f.line = line;
    remove_runnable(s, s.current);
    yield_to_scheduler();
}

void trampoline() {
    Scheduler& s = *active;
    s.body(s.args);
    // The thread returned.
    Fiber& f = s.me();
    Block& b = s.blocks[f.block];
    Warp& w = b.warps[f.warp];
    if (w.pending.kind != Kind::None && (w.pending.mask >> f.lane & 1u)) {
        char text[256];
        snprintf(text, sizeof text,
                 "%s returned while lanes of its warp wait for it at %s (line %d)",
                 where(s, s.current).c_str(), kind_name(w.pending.kind), w.pending.line);
        fail(text);
    }
    if (b.barrier_arrived > 0) {
        char text[256];
        snprintf(text, sizeof text,
                 "%s returned while threads of its block wait at __syncthreads (line %d)",
                 where(s, s.current).c_str(), b.barrier_line);
        fail(text);
    }
    w.exited |= 1u << f.lane;
    f.state = State::Done;
    remove_runnable(s, s.current);
    b.alive -= 1;
    swapcontext(&f.context, &s.home);
    abort();
}

// Starts block `index`: a fiber for each of its threads.
void start_block(Scheduler& s, unsigned index) {
    Block& b = s.blocks[index];
    b.index = rl_emu_dim3{index, 0, 0};
    unsigned threads = s.launch.threads;
    unsigned warps = (threads + WARP - 1) / WARP;
    b.warps.assign(warps, Warp{});
    b.alive = threads;
    for (unsigned w = 0; w < warps; ++w) {
        b.warps[w].lanes.assign(WARP, -1);
        for (unsigned l = 0; l < WARP; ++l) {
            if (w * WARP + l >= threads) {
                b.warps[w].exited |= 1u << l;
            }
        }
    }
    for (unsigned t = 0; t < threads; ++t) {
        Fiber f;
        f.thread_idx = rl_emu_dim3{t, 0, 0};
        f.block = index;
        f.warp = t / WARP;
        f.lane = t % WARP;
        f.stack = static_cast<char*>(malloc(STACK_BYTES));
        if (!f.stack) {
            abort();
        }
        // The context is made in place: glibc's points into itself, so it must not be copied.
        s.fibers.push_back(f);
        int id = (int)s.fibers.size() - 1;
        ucontext_t& context = s.fibers[id].context;
        getcontext(&context);
        context.uc_stack.ss_sp = s.fibers[id].stack;
        context.uc_stack.ss_size = STACK_BYTES;
        context.uc_link = nullptr;
        makecontext(&context, trampoline, 0);
        b.warps[f.warp].lanes[f.lane] = id;
        s.runnable.push_back(id);
    }
    s.resident += 1;
}

void free_block(Scheduler& s, unsigned index) {
    Block& b = s.blocks[index];
    for (auto& entry : b.shared) {
        free(entry.second);
    }
    b.shared.clear();
    for (Warp& w : b.warps) {
        for (int f : w.lanes) {
            if (f >= 0) {
                free(s.fibers[f].stack);
                s.fibers[f].stack = nullptr;
            }
        }
    }
    s.resident -= 1;
}

std::string waiting_report(const Scheduler& s) {
    // Lanes grouped by what they wait at and where.
    std::map<std::pair<std::string, int>, std::vector<int>> groups;
    for (size_t i = 0; i < s.fibers.size(); ++i) {
        const Fiber& f = s.fibers[i];
        if (f.state == State::Done || !f.stack) {
            continue;
        }
        std::string what = f.state == State::Waiting ? f.waits : "running, last switch";
        groups[{what, f.line}].push_back((int)i);
    }
    std::string out;
    for (auto& g : groups) {
        char text[160];
        snprintf(text, sizeof text, "%s%zu at %s (line %d, first %s)", out.empty() ? "" : "; ",
                 g.second.size(), g.first.first.c_str(), g.first.second,
                 where(s, g.second.front()).c_str());
        out += text;
    }
    return out;
}

// A warp collective: the calling lane arrives with `arg`; returns its answer.
unsigned collective(Kind kind, unsigned mask, unsigned arg, unsigned value, int line) {
    rl_emu_switch(line);
    Scheduler& s = *active;
    Fiber& f = s.me();
    Block& b = s.blocks[f.block];
    Warp& w = b.warps[f.warp];
    Collective& c = w.pending;
    char text[320];
    if (!(mask >> f.lane & 1u)) {
        snprintf(text, sizeof text, "%s called %s (line %d) with mask %08x, which leaves it out",
                 where(s, s.current).c_str(), kind_name(kind), line, mask);
        fail(text);
    }
    if (mask & w.exited) {
        snprintf(text, sizeof text,
                 "%s called %s (line %d) with mask %08x naming lanes that have returned (%08x)",
                 where(s, s.current).c_str(), kind_name(kind), line, mask, mask & w.exited);
        fail(text);
    }
    if (c.kind == Kind::None) {
        c.kind = kind;
        c.mask = mask;
        c.line = line;
        c.arrived = 0;
    } else if (c.kind != kind || c.mask != mask || c.line != line) {
        snprintf(text, sizeof text,
                 "%s reached %s (line %d, mask %08x) while lanes of its warp wait at %s (line "
                 "%d, mask %08x)",
                 where(s, s.current).c_str(), kind_name(kind), line, mask, kind_name(c.kind),
                 c.line, c.mask);
        fail(text);
    }
    c.args[f.lane] = arg;
    c.values[f.lane] = value;
    c.arrived |= 1u << f.lane;
    if (c.arrived != mask) {
        wait_here(kind_name(kind), line);
        return s.me().result;
    }
    // The last lane: every lane's answer, then all go on.
    unsigned ballot = 0;
    for (unsigned l = 0; l < WARP; ++l) {
        if ((mask >> l & 1u) && kind == Kind::Ballot && c.args[l]) {
            ballot |= 1u << l;
        }
    }
    for (unsigned l = 0; l < WARP; ++l) {
        if (!(mask >> l & 1u)) {
            continue;
        }
        unsigned answer = 0;
        switch (kind) {
            case Kind::Ballot:
                answer = ballot;
                break;
            case Kind::Shfl: {
                unsigned src = c.args[l] & (WARP - 1);
                if (!(mask >> src & 1u)) {
                    snprintf(text, sizeof text,
                             "lane %u reads lane %u in __shfl_sync (line %d), outside the mask %08x",
                             l, src, line, mask);
                    fail(text);
                }
                answer = c.values[src];
                break;
            }
            case Kind::ShflUp: {
                unsigned d = c.args[l];
                answer = l >= d ? c.values[l - d] : c.values[l];
                if (l >= d && !(mask >> (l - d) & 1u)) {
                    snprintf(text, sizeof text,
                             "lane %u reads lane %u in __shfl_up_sync (line %d), outside the mask "
                             "%08x",
                             l, l - d, line, mask);
                    fail(text);
                }
                break;
            }
            case Kind::ShflDown: {
                unsigned d = c.args[l];
                answer = l + d < WARP ? c.values[l + d] : c.values[l];
                if (l + d < WARP && !(mask >> (l + d) & 1u)) {
                    snprintf(text, sizeof text,
                             "lane %u reads lane %u in __shfl_down_sync (line %d), outside the "
                             "mask %08x",
                             l, l + d, line, mask);
                    fail(text);
                }
                break;
            }
            default:
                break;
        }
        int fiber = w.lanes[l];
        s.fibers[fiber].result = answer;
        if (fiber != s.current) {
            make_runnable(s, fiber);
        }
    }
    c.kind = Kind::None;
    c.arrived = 0;
    return s.me().result;
}

}  // namespace

const rl_emu_dim3& rl_emu_thread_idx() { return active->me().thread_idx; }
const rl_emu_dim3& rl_emu_block_idx() { return active->blocks[active->me().block].index; }
const rl_emu_dim3& rl_emu_block_dim() { return active->block_dim; }
const rl_emu_dim3& rl_emu_grid_dim() { return active->grid_dim; }

void rl_emu_switch(int line) {
    Scheduler& s = *active;
    s.me().line = line;
    s.steps += 1;
    s.since_progress += 1;
    if (s.since_progress > s.launch.patience) {
        fail("no ray traced in " + std::to_string(s.launch.patience) +
             " switches (a livelock?): " + waiting_report(s));
    }
    // Go on at three switch points of four; at the fourth, let the scheduler draw.
    if ((s.draw() & 3) != 0) {
        return;
    }
    yield_to_scheduler();
}

void rl_emu_progress() { active->since_progress = 0; }

long long rl_emu_clock() { return (long long)active->steps; }

void* rl_emu_shared(const char* name, int line, size_t bytes, size_t align) {
    Scheduler& s = *active;
    Block& b = s.blocks[s.me().block];
    auto key = std::make_pair(std::string(name), line);
    auto found = b.shared.find(key);
    if (found != b.shared.end()) {
        return found->second;
    }
    size_t rounded = (bytes + align - 1) / align * align;
    void* p = aligned_alloc(align < sizeof(void*) ? sizeof(void*) : align, rounded);
    if (!p) {
        abort();
    }
    memset(p, 0xcd, rounded);
    b.shared[key] = p;
    return p;
}

unsigned rl_emu_ballot(unsigned mask, bool predicate, int line) {
    return collective(Kind::Ballot, mask, predicate ? 1u : 0u, 0, line);
}
unsigned rl_emu_shfl_u32(unsigned mask, unsigned value, int source, int line) {
    return collective(Kind::Shfl, mask, (unsigned)source, value, line);
}
unsigned rl_emu_shfl_up_u32(unsigned mask, unsigned value, unsigned delta, int line) {
    return collective(Kind::ShflUp, mask, delta, value, line);
}
unsigned rl_emu_shfl_down_u32(unsigned mask, unsigned value, unsigned delta, int line) {
    return collective(Kind::ShflDown, mask, delta, value, line);
}
void rl_emu_syncwarp(unsigned mask, int line) { collective(Kind::Syncwarp, mask, 0, 0, line); }

void rl_emu_syncthreads(int line) {
    rl_emu_switch(line);
    Scheduler& s = *active;
    Block& b = s.blocks[s.me().block];
    if (b.barrier_arrived > 0 && b.barrier_line != line) {
        char text[256];
        snprintf(text, sizeof text,
                 "%s reached __syncthreads at line %d while its block waits at line %d",
                 where(s, s.current).c_str(), line, b.barrier_line);
        fail(text);
    }
    b.barrier_line = line;
    b.barrier_arrived += 1;
    if (b.barrier_arrived < b.alive) {
        b.barrier_waiting.push_back(s.current);
        wait_here("__syncthreads", line);
        return;
    }
    for (int f : b.barrier_waiting) {
        make_runnable(s, f);
    }
    b.barrier_waiting.clear();
    b.barrier_arrived = 0;
}

int rl_emu_run(const rl_emu_launch& launch, void (*body)(void*), void* args, char* error,
               size_t error_len) {
    Scheduler s;
    s.launch = launch;
    if (s.launch.resident == 0 || s.launch.resident > s.launch.blocks) {
        s.launch.resident = s.launch.blocks;
    }
    s.body = body;
    s.args = args;
    s.rng = launch.seed;
    s.block_dim = rl_emu_dim3{launch.threads, 1, 1};
    s.grid_dim = rl_emu_dim3{launch.blocks, 1, 1};
    s.blocks.resize(launch.blocks);
    // Every fiber is created before any runs: `fibers` must not move under a running one.
    s.fibers.reserve((size_t)launch.blocks * launch.threads);
    Scheduler* outer = active;
    active = &s;
    while (s.next_block < s.launch.blocks && s.resident < s.launch.resident) {
        start_block(s, s.next_block++);
    }
    while (!s.failed) {
        if (s.runnable.empty()) {
            bool waiting = false;
            for (const Fiber& f : s.fibers) {
                waiting = waiting || (f.stack && f.state == State::Waiting);
            }
            if (!waiting) {
                break;  // every thread of every block has returned
            }
            s.failed = true;
            s.error = "deadlock: every thread waits: " + waiting_report(s);
            break;
        }
        s.current = s.runnable[s.draw() % s.runnable.size()];
        swapcontext(&s.home, &s.fibers[s.current].context);
        if (s.failed) {
            break;
        }
        Fiber& f = s.fibers[s.current];
        if (f.state == State::Done && s.blocks[f.block].alive == 0) {
            free_block(s, f.block);
            if (s.next_block < s.launch.blocks) {
                start_block(s, s.next_block++);
            }
        }
    }
    for (unsigned b = 0; b < s.launch.blocks; ++b) {
        for (auto& entry : s.blocks[b].shared) {
            free(entry.second);
        }
    }
    for (Fiber& f : s.fibers) {
        free(f.stack);
    }
    active = outer;
    if (s.failed) {
        snprintf(error, error_len, "%s", s.error.c_str());
        return 1;
    }
    return 0;
}
