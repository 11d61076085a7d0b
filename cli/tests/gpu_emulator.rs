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

/// A hybrid frame counts its CPU threads apart from its device, and the GPU refuses packets
/// before it names any structure.
#[test]
fn hybrid_frames_count_cpu_threads_and_the_gpu_refuses_packets_first() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let render = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_raylb"))
            .args([
                "render",
                quick.to_str().unwrap(),
                "-o",
                "h.png",
                "--gpu-emulator",
            ])
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("raylb runs")
    };
    let report: serde_json::Value = serde_json::from_str(&ok(&render(&[
        "--device",
        "hybrid",
        "--threads",
        "1",
        "--json",
    ])))
    .unwrap();
    assert_eq!(report["render"]["threads"], 1);
    assert_eq!(report["workers"].as_array().unwrap().len(), 2);
    let summary = ok(&render(&["--device", "hybrid", "--threads", "1"]));
    assert!(summary.contains("1 CPU thread and 1 device"), "{summary}");
    let refused = render(&["--device", "gpu", "--packets", "on"]);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.starts_with("raylb: error: --packets applies to the CPU's threads"),
        "{err}"
    );
}

/// What `scripts/gpu-check.sh` did, run in a temporary folder with every command a stand-in:
/// `raylb` and the GPU test binary are the shell script `stand_in` (given the arguments).
#[cfg(unix)]
struct GpuCheckRun {
    /// Whether the script made its output folder.
    wrote_output: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
    seconds: f64,
}

#[cfg(unix)]
impl GpuCheckRun {
    /// Fails unless the script ended within `seconds`.
    fn assert_took_under(&self, seconds: f64) {
        assert!(
            self.seconds < seconds,
            "the run took {:.1} s, over {seconds} s",
            self.seconds
        );
    }
}

#[cfg(unix)]
fn run_gpu_check(stand_in: &str, sections: &str, budget: &str) -> GpuCheckRun {
    use std::os::unix::fs::PermissionsExt;
    use std::time::Instant;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raylb");
    std::fs::write(&path, format!("#!/bin/sh\n{stand_in}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/gpu-check.sh");
    let started = Instant::now();
    let out = std::process::Command::new("bash")
        .arg(&script)
        .env("RAYLB", &path)
        .env("GPU_TESTS", &path)
        .env("GPU_CHECK_OUT", dir.path().join("out"))
        .env("SECTIONS", sections)
        .env("BUDGET", budget)
        .env("NCU", "0")
        .output()
        .expect("bash runs");
    GpuCheckRun {
        wrote_output: dir.path().join("out").exists(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// `scripts/gpu-check.sh` keeps to its budget: a command still running when the budget ends is
/// cut off, the ones after it are not run, the parts after it are skipped and said to be, the
/// run fails, and the table of seconds by part names every part. Every command is a stand-in
/// that sleeps, so this needs neither a GPU nor the emulator.
#[cfg(unix)]
#[test]
fn the_gpu_check_keeps_to_its_budget() {
    // 10 s, of which the last 5 are the grace a command cut off has to end: two stand-ins of
    // 2 s fit, the third is cut off after about 1 s, the rest are not run.
    let run = run_gpu_check("sleep 2", "gpu,hybrid", "10");
    let (stdout, stderr) = (&run.stdout, &run.stderr);
    assert_eq!(run.code, Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("TIMED OUT after"), "{stderr}");
    assert!(
        stderr.contains("NOT RUN, the 10 s budget is spent"),
        "{stderr}"
    );
    let table = stdout
        .split("== seconds by part")
        .nth(1)
        .expect("the table of seconds by part");
    for part in [
        "the #[ignore]d GPU tests",
        "every scene, every GPU balancer, both structures",
    ] {
        assert!(table.contains(part), "{part}: {table}");
    }
    for skipped in [
        "every scene at four samples per pixel",
        "treasure at 2048×2048",
        "the kernels: registers, memory and occupancy",
        "hybrid: every scene against the CPU's render",
        "hybrid speed at 2048²",
    ] {
        assert!(
            stdout.contains(&format!("== {skipped}: SKIPPED, the 10 s budget is spent")),
            "{skipped}: {stdout}"
        );
        assert!(
            table
                .lines()
                .any(|line| line.contains("skipped") && line.ends_with(skipped)),
            "{skipped}: {table}"
        );
    }
    run.assert_took_under(15.0);
}

/// The hybrid's speed rounds stop where the next would not fit in the budget, as long as the
/// last took: the rounds left are said to be skipped rather than cut halfway.
#[cfg(unix)]
#[test]
fn the_gpu_checks_hybrid_rounds_stop_before_the_budget_ends() {
    // Renders take 0.2 s: a round of 16 renders about 3.2 s, in the 5 s the budget leaves.
    let run = run_gpu_check(r#"case "$1" in render) sleep 0.2 ;; esac"#, "hybrid", "10");
    let (stdout, stderr) = (&run.stdout, &run.stderr);
    assert_eq!(run.code, Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("hybrid rounds 2 to 3 SKIPPED"), "{stdout}");
    assert!(!stdout.contains("cut short"), "{stdout}");
    assert!(!stderr.contains("TIMED OUT"), "{stderr}");
    run.assert_took_under(15.0);
}

/// A budget that is no whole number of seconds, or too small to cut a command off in, is
/// refused in one line naming it, before anything is run or written.
#[cfg(unix)]
#[test]
fn the_gpu_check_refuses_a_malformed_budget() {
    for budget in ["abc", "0", "08", "-3", "3", "99999999"] {
        let run = run_gpu_check("exit 1", "gpu", budget);
        assert_eq!(run.code, Some(2), "BUDGET={budget}: {}", run.stderr);
        assert!(
            run.stderr
                .starts_with(&format!("gpu-check.sh: BUDGET={budget}: ")),
            "{}",
            run.stderr
        );
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        assert!(!run.wrote_output, "BUDGET={budget} made the output folder");
    }
}
