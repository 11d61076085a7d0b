//! The warp emulator from the command line: `raylb validate --gpu-emulator` runs every GPU
//! balancer and the hybrid on the emulated device, and they write the CPU's bytes.

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
