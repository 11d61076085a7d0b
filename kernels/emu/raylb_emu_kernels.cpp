// The CUDA kernels' own source (`kernels/cuda/raylb_kernels.cu`), compiled for the host through
// the warp emulator (raylb_emu.h), and one entry point that launches a kernel by name, as the
// driver API does on a GPU (kernels/src/emulator.rs calls it).
//
// kernels/build.rs also compiles copies of the kernels with one bug planted in each: such a copy
// puts its kernels in a namespace of its own, defines RL_EMU_PLANTED as that namespace and
// RL_EMU_LAUNCH as the name of its launcher, and then includes this file.
#include "raylb_emu.h"
#ifdef RL_EMU_PLANTED
using namespace RL_EMU_PLANTED;
#else
#include "../cuda/raylb_kernels.cu"
#define RL_EMU_LAUNCH rlh_emu_launch
#endif

#include <stdio.h>
#include <string.h>

namespace {

// A kernel's parameters, in order, as the host hands them: the shared layout's structs.
struct Parameters {
    const void* p[3];
};

template <typename A, typename B, typename C>
void unpack(const Parameters& p, const A** a, const B** b, const C** c) {
    *a = static_cast<const A*>(p.p[0]);
    *b = static_cast<const B*>(p.p[1]);
    *c = static_cast<const C*>(p.p[2]);
}

void persistent(void* args) {
    const rl_scene* s;
    const rl_film* f;
    const rl_work* w;
    unpack(*static_cast<Parameters*>(args), &s, &f, &w);
    rl_persistent(*s, *f, *w);
}
void persistent_wide(void* args) {
    const rl_scene* s;
    const rl_film* f;
    const rl_work* w;
    unpack(*static_cast<Parameters*>(args), &s, &f, &w);
    rl_persistent_wide(*s, *f, *w);
}
void block_per_tile(void* args) {
    const rl_scene* s;
    const rl_film* f;
    const rl_managed* m;
    unpack(*static_cast<Parameters*>(args), &s, &f, &m);
    rl_block_per_tile(*s, *f, *m);
}
void block_per_tile_wide(void* args) {
    const rl_scene* s;
    const rl_film* f;
    const rl_managed* m;
    unpack(*static_cast<Parameters*>(args), &s, &f, &m);
    rl_block_per_tile_wide(*s, *f, *m);
}
void fill_deques(void* args) {
    const Parameters& p = *static_cast<Parameters*>(args);
    rl_fill_deques(*static_cast<const rl_scene*>(p.p[0]), *static_cast<const rl_work*>(p.p[1]));
}

}  // namespace

extern "C" {

// Launches kernel `name` (an entry point of raylb_kernels.cu, or of a planted copy for its
// launcher) with `params` (pointers to its parameters, in order) on the emulator, as `launch`
// says. 0, or 1 with a one-line message in `error`; 2 for a name that is no kernel.
int RL_EMU_LAUNCH(const char* name, const void* const* params, const rl_emu_launch* launch,
                  char* error, size_t error_len) {
    static const struct {
        const char* name;
        void (*body)(void*);
        int count;
    } kernels[] = {
        {"rl_persistent", persistent, 3},
        {"rl_persistent_wide", persistent_wide, 3},
        {"rl_block_per_tile", block_per_tile, 3},
        {"rl_block_per_tile_wide", block_per_tile_wide, 3},
        {"rl_fill_deques", fill_deques, 2},
    };
    for (const auto& k : kernels) {
        if (strcmp(k.name, name) == 0) {
            Parameters p = {{nullptr, nullptr, nullptr}};
            for (int i = 0; i < k.count; ++i) {
                p.p[i] = params[i];
            }
            return rl_emu_run(*launch, k.body, &p, error, error_len);
        }
    }
    snprintf(error, error_len, "no kernel named %s", name);
    return 2;
}

}  // extern "C"
