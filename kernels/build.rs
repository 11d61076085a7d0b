//! With the `emulator` feature: compiles the kernels' own source for the host on the warp
//! emulator (`emu/raylb_emu_kernels.cpp` includes `cuda/raylb_kernels.cu` after
//! `emu/raylb_emu.h`; `emu/raylb_emu.cpp` is its scheduler), with the kernels' arithmetic
//! options: no contraction into fused multiply-add, no fast math; and beside them copies of
//! the kernels with one known bug planted in each (`emulator::PlantedBug`), which the
//! emulator's tests run to show that it catches them. Without it, nothing: a build for a GPU
//! needs only Rust.

fn main() {
    #[cfg(feature = "emulator")]
    emulator();
}

#[cfg(feature = "emulator")]
fn emulator() {
    let sources = ["emu/raylb_emu_kernels.cpp", "emu/raylb_emu.cpp"];
    let headers = [
        "emu/raylb_emu.h",
        "cuda/raylb_kernels.cu",
        "cuda/raylb_math.cuh",
        "cuda/raylb_layout.cuh",
    ];
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let kernels = std::fs::read_to_string("cuda/raylb_kernels.cu")
        .unwrap_or_else(|e| panic!("reading cuda/raylb_kernels.cu: {e}"));
    let planted: Vec<_> = planted::BUGS
        .iter()
        .map(|bug| {
            let path = out.join(format!("planted_{}.cpp", bug.name));
            std::fs::write(&path, bug.copy(&kernels))
                .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
            path
        })
        .collect();
    cc::Build::new()
        .cpp(true)
        .files(sources)
        .files(&planted)
        // For the planted copies, generated in OUT_DIR: the emulator's header and launcher,
        // and the kernels' headers.
        .include("emu")
        .include("cuda")
        .flag("-ffp-contract=off")
        .flag("-fno-fast-math")
        .flag("-std=c++17")
        .warnings(true)
        .opt_level(2)
        .try_compile("raylb_warp_emulator")
        .unwrap_or_else(|e| {
            panic!(
                "the warp emulator (the `emulator` feature) needs a C++ compiler; install g++ or clang++ (e.g. `apt install g++`): {e}"
            )
        });
    for file in sources.iter().chain(&headers) {
        println!("cargo::rerun-if-changed={file}");
    }
}

/// Copies of the kernels with one bug planted in each.
#[cfg(feature = "emulator")]
mod planted {
    /// A copy of `cuda/raylb_kernels.cu` with `find` replaced by `replace`.
    pub(crate) struct Bug {
        /// `emulator::PlantedBug`'s name for it: the copy's kernels are in namespace
        /// `rl_planted_NAME`, launched by `rlh_emu_launch_planted_NAME`.
        pub(crate) name: &'static str,
        /// Text that occurs exactly once in the kernels (the build fails otherwise, so that no
        /// copy silently loses its bug when the kernels change), or nothing for the copy
        /// with no bug.
        find: &'static str,
        /// What replaces it, in as many lines: the lines the emulator reports are the
        /// kernels' own.
        replace: &'static str,
    }

    /// The bugs, as `emulator::PlantedBug` lists them.
    pub(crate) const BUGS: [Bug; 5] = [
        Bug {
            name: "nothing",
            find: "",
            replace: "",
        },
        // Lane 31 is left out of the shuffle that gives every lane what lane 0 popped from
        // the warp's deque, though it calls it.
        Bug {
            name: "shuffle_mask_misses_a_lane",
            find: "take = __shfl_sync(RL_FULL_MASK, take, 0);",
            replace: "take = __shfl_sync(RL_FULL_MASK >> 1, take, 0);",
        },
        // An idle warp pops ray tasks from its deque into its buffer and keeps all but the
        // last: that task is never traced, though counted as taken.
        Bug {
            name: "popped_task_dropped",
            find: "st.buf_count = take;",
            replace: "st.buf_count = take - 1;",
        },
        // A thief releases the tasks it steals from `pending` as it takes them, before they
        // are traced (and again once they are, as every task taken from a deque is).
        Bug {
            name: "stolen_tasks_released_early",
            find: "// Moved from one deque to another: `pending` is unchanged.",
            replace: "if (threadIdx.x % RL_WARP == 0) atomicSub(w.pending, stolen);",
        },
        // Unlocking leaves the lock taken.
        Bug {
            name: "lock_never_released",
            find: "atomicExch(lock, 0u);",
            replace: "(void)lock;",
        },
    ];

    impl Bug {
        /// The translation unit of this copy: the emulator's and the kernels' headers first
        /// (their include guards keep them out of the namespace), the planted kernels in a
        /// namespace of their own, so that no function of theirs is merged with the kernels'
        /// or another copy's at link time, then the launcher.
        pub(crate) fn copy(&self, kernels: &str) -> String {
            let planted = self.plant(kernels);
            // The entry points lose their C linkage: as functions of the namespace, they clash
            // with no other copy's.
            let planted = planted.replace("extern \"C\" ", "");
            let source = std::fs::canonicalize("cuda/raylb_kernels.cu")
                .unwrap_or_else(|e| panic!("cuda/raylb_kernels.cu: {e}"));
            let name = self.name;
            format!(
                "// Generated by kernels/build.rs: cuda/raylb_kernels.cu with the bug `{name}` \
                 planted, and its launcher.\n\
                 #include \"raylb_emu.h\"\n\
                 #include \"raylb_math.cuh\"\n\
                 namespace rl_planted_{name} {{\n\
                 #line 1 \"{source}\"\n\
                 {planted}\n\
                 }}  // namespace rl_planted_{name}\n\
                 #define RL_EMU_PLANTED rl_planted_{name}\n\
                 #define RL_EMU_LAUNCH rlh_emu_launch_planted_{name}\n\
                 #include \"raylb_emu_kernels.cpp\"\n",
                source = source.display(),
            )
        }

        /// `kernels` with the bug in it.
        fn plant(&self, kernels: &str) -> String {
            if self.find.is_empty() {
                return kernels.to_owned();
            }
            let found = kernels.matches(self.find).count();
            assert!(
                found == 1,
                "planting `{}`: `{}` occurs {found} times in cuda/raylb_kernels.cu, not once; \
                 update the bug in kernels/build.rs to the kernels as they are",
                self.name,
                self.find
            );
            assert_eq!(
                self.find.lines().count(),
                self.replace.lines().count(),
                "planting `{}`: the replacement must keep the kernels' line numbers",
                self.name
            );
            kernels.replacen(self.find, self.replace, 1)
        }
    }
}
