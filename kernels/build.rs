//! With the `emulator` feature: compiles the kernels' own source for the host on the warp
//! emulator (`emu/raylb_emu_kernels.cpp` includes `cuda/raylb_kernels.cu` after
//! `emu/raylb_emu.h`; `emu/raylb_emu.cpp` is its scheduler), with the kernels' arithmetic
//! options: no contraction into fused multiply-add, no fast math. Without it, nothing: a
//! build for a GPU needs only Rust.

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
    cc::Build::new()
        .cpp(true)
        .files(sources)
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
