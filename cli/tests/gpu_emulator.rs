//! The warp emulator from the command line: `raylb validate --gpu-emulator` runs every GPU
//! balancer and the hybrid on the emulated device, and they write the CPU's bytes; and the GPU
//! machine's script, `scripts/gpu-check.sh`, keeps to its time budget.

mod common;

use common::{ok, scene_path};

#[test]
fn validate_reaches_the_emulator_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args([
            "validate",
            quick.to_str().unwrap(),
            "--gpu",
            "--hybrid",
            "--gpu-emulator",
            "--emulator-seed",
            "3",
            "--balancers",
            "static",
            "--gpu-balancers",
            "static,counter,stealing,cuda-managed",
            "--threads",
            "2",
            "--tiles",
            "8",
        ])
        .current_dir(dir.path())
        .output()
        .expect("raylb runs");
    let stdout = ok(&out);
    // Per structure: three CPU renders, the hybrid, and seven GPU balancers; the wide one's
    // CPU renders and hybrid again without packets.
    assert!(stdout.contains("all 26 renders identical"), "{stdout}");
    for balancer in ["gpu-stealing/abp/half", "gpu-stealing/one", "cuda-managed"] {
        assert!(stdout.contains(balancer), "{balancer}: {stdout}");
    }
}

/// `scripts/gpu-check.sh` keeps to its budget: a command still running when the budget ends is
/// cut off, the parts after it are skipped and said to be, the run fails, and the table of
/// seconds by part names every part. Every command is a stand-in that sleeps, so this needs
/// neither a GPU nor the emulator.
#[cfg(unix)]
#[test]
fn the_gpu_check_keeps_to_its_budget() {
    use std::os::unix::fs::PermissionsExt;
    use std::time::Instant;

    let dir = tempfile::tempdir().unwrap();
    let stand_in = dir.path().join("raylb");
    std::fs::write(&stand_in, "#!/bin/sh\nsleep 2\n").unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/gpu-check.sh");
    let started = Instant::now();
    let out = std::process::Command::new("bash")
        .arg(&script)
        .env("RAYLB", &stand_in)
        .env("GPU_TESTS", &stand_in)
        .env("GPU_CHECK_OUT", dir.path().join("out"))
        .env("SECTIONS", "gpu,hybrid")
        .env("BUDGET", "5")
        .env("NCU", "0")
        .output()
        .expect("bash runs");
    let took = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    // Two stand-ins of 2 s fit in 5 s; the third is cut off at the budget's end.
    assert!(stderr.contains("TIMED OUT after 1 s"), "{stderr}");
    assert!(
        stderr.contains("NOT RUN, the 5 s budget is spent"),
        "{stderr}"
    );
    assert!(
        stdout.contains("== hybrid speed at 2048²: SKIPPED, the 5 s budget is spent"),
        "{stdout}"
    );
    let table = stdout
        .split("== seconds by part")
        .nth(1)
        .expect("the table of seconds by part");
    for part in [
        "the #[ignore]d GPU tests",
        "every scene, every GPU balancer, both structures",
        "treasure at 2048×2048",
        "hybrid: every scene against the CPU's render",
    ] {
        assert!(table.contains(part), "{part}: {table}");
    }
    assert!(took < 12.0, "the 5 s budget took {took:.1} s");
}
