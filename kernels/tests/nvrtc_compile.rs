//! Every kernel compiles with NVRTC, without a warning, for the architectures raylb targets.
//! NVRTC needs no GPU. Where it cannot be loaded the test says it was skipped, unless
//! `RAYLB_REQUIRE_NVRTC` is set (as `.ci/run` does, after installing NVRTC), which makes a
//! missing NVRTC a failure.

use kernels::GpuError;
use kernels::source::{self, ENTRY_POINTS};

/// Whether NVRTC can be loaded; where it cannot, says the test was skipped, unless
/// `RAYLB_REQUIRE_NVRTC` is set, which makes that a failure.
fn nvrtc_or_skip() -> bool {
    if source::nvrtc_available() {
        return true;
    }
    assert!(
        std::env::var_os("RAYLB_REQUIRE_NVRTC").is_none(),
        "RAYLB_REQUIRE_NVRTC is set but libnvrtc cannot be loaded (LD_LIBRARY_PATH?)"
    );
    eprintln!("skipped: NVRTC is not installed (see .ci/run for how CI installs it)");
    false
}

#[test]
fn kernels_compile_to_ptx_without_warnings() {
    if !nvrtc_or_skip() {
        return;
    }
    // Turing (the oldest NVRTC 12 takes without a deprecation warning), Ampere, Ada, Hopper.
    for (major, minor) in [(7, 5), (8, 0), (8, 9), (9, 0)] {
        let compiled = match source::compile(major, minor) {
            Ok(c) => c,
            Err(GpuError::Compile(log)) => panic!("compute_{major}{minor}: {log}"),
            Err(e) => panic!("compute_{major}{minor}: {e}"),
        };
        assert!(compiled.log.is_empty());
        for entry in ENTRY_POINTS {
            assert!(
                compiled.ptx.contains(&format!(".entry {entry}(")),
                "compute_{major}{minor}: no entry point {entry}"
            );
        }
        // No fused multiply-add may appear in the traced arithmetic.
        assert!(
            !compiled.ptx.contains("fma.rn.f32"),
            "compute_{major}{minor}: fused multiply-add in the PTX"
        );
    }
}

/// A kernel that runs the wide BVH's traversals (closest hit and occlusion) for one ray per
/// thread, appended to the kernels: the traversal is compiled in the kernels' translation
/// unit, with their options, before any balancer calls it.
const WIDE_TRAVERSAL_PROBE: &str = r#"
extern "C" __global__ void rl_probe_wide(rl_wide_bvh b, const rl_task* rays, rl_u32 n,
                                         rl_u32* index, float* t, rl_u32* blocked) {
    rl_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    rl_prepared r = rl_prepare(rays[i].origin, rays[i].dir, 0.0f, RL_INFINITY);
    index[i] = rl_wide_closest_hit(b, r, t + i);
    blocked[i] = rl_wide_occluded(b, r) ? 1u : 0u;
}
"#;

#[test]
fn the_wide_bvh_traversal_compiles_with_the_kernels() {
    if !nvrtc_or_skip() {
        return;
    }
    let program = source::program_source() + WIDE_TRAVERSAL_PROBE;
    for (major, minor) in [(7, 5), (8, 0), (8, 9), (9, 0)] {
        let compiled = match source::compile_source(&program, major, minor) {
            Ok(c) => c,
            Err(GpuError::Compile(log)) => panic!("compute_{major}{minor}: {log}"),
            Err(e) => panic!("compute_{major}{minor}: {e}"),
        };
        assert!(
            compiled.ptx.contains(".entry rl_probe_wide("),
            "compute_{major}{minor}: the probe was not compiled"
        );
        for entry in ENTRY_POINTS {
            assert!(compiled.ptx.contains(&format!(".entry {entry}(")));
        }
        assert!(
            !compiled.ptx.contains("fma.rn.f32"),
            "compute_{major}{minor}: fused multiply-add in the PTX"
        );
    }
}

#[test]
fn a_broken_kernel_is_reported_with_the_compiler_log() {
    if !source::nvrtc_available() {
        eprintln!("skipped: NVRTC is not installed");
        return;
    }
    // The real source compiles; the checker must still see errors in what it is given.
    let e = source::compile_source("extern \"C\" __global__ void broken() { int x = ; }", 9, 0)
        .unwrap_err();
    match e {
        GpuError::Compile(log) => assert!(log.contains("expected an expression"), "{log}"),
        other => panic!("{other}"),
    }
    let e = source::compile_source(
        "extern \"C\" __global__ void unused_variable() { int x = 1; }",
        9,
        0,
    )
    .unwrap_err();
    assert!(
        matches!(e, GpuError::Compile(ref log) if log.contains("warning") || log.contains("error")),
        "{e}"
    );
}

#[test]
fn compiled_kernels_are_cached_between_runs() {
    if !source::nvrtc_available() {
        eprintln!("skipped: NVRTC is not installed");
        return;
    }
    let dir = tempfile_dir();
    let (first, hit) = source::compile_cached(9, 0, Some(&dir)).unwrap();
    assert!(!hit, "an empty cache cannot hit");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(files.len(), 1, "one PTX file, no temporaries left");
    let (second, hit) = source::compile_cached(9, 0, Some(&dir)).unwrap();
    assert!(hit, "the second compilation comes from the cache");
    assert_eq!(first.ptx, second.ptx);
    // Another architecture is another entry.
    let (_, hit) = source::compile_cached(8, 0, Some(&dir)).unwrap();
    assert!(!hit);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("raylb-kernel-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_device_checks_compile_with_the_kernels() {
    if !nvrtc_or_skip() {
        return;
    }
    let program = source::program_source() + "\n" + source::CHECKS;
    for (major, minor) in [(7, 5), (8, 0), (8, 9), (9, 0)] {
        let compiled = match source::compile_source(&program, major, minor) {
            Ok(c) => c,
            Err(GpuError::Compile(log)) => panic!("compute_{major}{minor}: {log}"),
            Err(e) => panic!("compute_{major}{minor}: {e}"),
        };
        for entry in [
            "rl_check_floats",
            "rl_check_float_results",
            "rl_check_traversals",
        ] {
            assert!(
                compiled.ptx.contains(&format!(".entry {entry}(")),
                "compute_{major}{minor}: no entry point {entry}"
            );
        }
    }
}
