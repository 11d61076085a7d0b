//! Compiles the host build of the CUDA math header: `src/host_math.cpp` includes
//! `kernels/cuda/raylb_math.cuh` (and through it the shared layout, `raylb_layout.cuh`) with
//! `RL_ON_DEVICE` 0 and wraps it in `extern "C"` functions.
//! No contraction into fused multiply-add and no fast math, as the kernels are compiled.

fn main() {
    let sources = ["src/host_math.cpp"];
    let headers = [
        "../cuda/raylb_math.cuh",
        "../cuda/raylb_layout.cuh",
        "../cuda/raylb_checks.cu",
    ];
    cc::Build::new()
        .cpp(true)
        .files(sources)
        .flag("-ffp-contract=off")
        .flag("-fno-fast-math")
        .flag("-std=c++17")
        .warnings(true)
        .opt_level(2)
        .try_compile("raylb_host_math")
        .unwrap_or_else(|e| {
            panic!(
                "the host check of the CUDA math (a test-only crate) needs a C++ compiler; install g++ or clang++ (e.g. `apt install g++`): {e}"
            )
        });
    for header in sources.iter().chain(&headers) {
        println!("cargo::rerun-if-changed={header}");
    }
}
