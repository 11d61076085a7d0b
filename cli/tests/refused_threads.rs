//! A worker thread the operating system refuses to start, end to end: the real binary under an
//! address-space limit that lets it start some of its workers and not the rest. It must say so
//! in one line and exit 2, at once, also with work stealing, whose started workers would
//! otherwise wait forever for the initial tasks of the workers that never started. So must a
//! thread of the BVH build that cannot start.

#![cfg(target_os = "linux")]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::scene_path;

/// The stack of every thread: 1 GiB, so that a handful of threads fill the limit below and the
/// rest of the process (a few hundred MiB at most) cannot tip which worker is refused by more
/// than one.
const STACK_BYTES: u64 = 1 << 30;

/// The address-space limit in KiB, about 4.8 GiB. Measured on the development machine with one
/// thread for the BVH build (joined before the frame starts), when each of the 8 workers had a
/// thread of its own: from about 1.1 GiB on, at least one worker starts, and below 8.5 GiB at
/// least one of 8 is refused. Worker 0 now runs on the main thread, so 7 threads are started
/// and the upper end is about 7.5 GiB; this limit leaves over two workers' worth of room either
/// way.
const LIMIT_KIB: u64 = 5_000_000;

/// An address-space limit in KiB below one thread's stack: no thread can start, and the rest of
/// the process (a few dozen MiB until the BVH is built) fits.
const NO_THREAD_KIB: u64 = 1_000_000;

/// How long the failing run may take: it loads a 654-triangle scene and starts a few threads.
const DEADLINE: Duration = Duration::from_secs(30);

#[test]
fn stealing_fails_in_one_line_when_a_worker_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene_path("quick");
    // The pool that builds the BVH has one thread, so that the layout does not depend on
    // the core count.
    let (status, stderr) = run_limited(
        dir.path(),
        &[
            "render",
            scene.to_str().unwrap(),
            "-o",
            "out.png",
            "--threads",
            "8",
            "--balancer",
            "stealing",
            // A budget of the test's own: under `ulimit -v` alone raylb counts the threads'
            // stacks against the limit and refuses the frame before starting any
            // (`limits_on_address_space_are_kept_to_threads_included`).
            "--max-memory",
            "1T",
        ],
    );
    assert_eq!(status.code(), Some(2), "exit code; stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    let refused: usize = stderr
        .strip_prefix("raylb: error: cannot start worker thread ")
        .and_then(|rest| rest.strip_suffix('\n'))
        .and_then(|rest| rest.split_once(" of 8: "))
        .and_then(|(worker, _reason)| worker.parse().ok())
        .unwrap_or_else(|| panic!("not the refused-thread message: {stderr}"));
    assert!(
        (2..=8).contains(&refused),
        "worker {refused} of 8 refused: the limit must let at least the first start, or \
         nothing is left to stop ({stderr})"
    );
    assert!(!dir.path().join("out.png").exists(), "no image written");
}

/// The benchmarks that time threads started together (`bench costs`' contended counter,
/// `bench deque`'s races): a thread that cannot start calls the start off, and the threads
/// already waiting for it are let go, where they used to wait forever after a panic.
#[test]
fn timed_threads_fail_in_one_line_when_one_cannot_start() {
    for (args, output) in [
        (
            &["bench", "costs", "--threads", "8", "--rounds", "1"],
            "costs.csv",
        ),
        (
            &["bench", "deque", "--threads", "8", "--iterations", "1"],
            "deque.csv",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (status, stderr) = run_limited(dir.path(), &[&args[..], &["--out", "out"]].concat());
        assert_eq!(
            status.code(),
            Some(2),
            "{args:?}: exit code; stderr: {stderr}"
        );
        assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "{args:?}: one line: {stderr}"
        );
        let refused: usize = stderr
            .strip_prefix("raylb: error: --threads 8: cannot start thread ")
            .and_then(|rest| rest.split_once(" of 8: "))
            .and_then(|(thread, _reason)| thread.parse().ok())
            .unwrap_or_else(|| panic!("{args:?}: not the refused-thread message: {stderr}"));
        assert!(
            (2..=8).contains(&refused),
            "{args:?}: thread {refused} of 8 refused"
        );
        assert!(
            !dir.path().join("out").join(output).exists(),
            "{args:?}: wrote {output}"
        );
    }
}

/// Runs raylb with `args` in `dir` under [`LIMIT_KIB`] of address space and stacks of
/// [`STACK_BYTES`], and returns its exit status and standard error; fails the test if it is
/// still running after [`DEADLINE`], as a thread waiting for one that never started would be.
fn run_limited(dir: &std::path::Path, args: &[&str]) -> (std::process::ExitStatus, String) {
    // `ulimit -v` limits the shell and what it execs, not this test.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {LIMIT_KIB} && RAYON_NUM_THREADS=1 RUST_MIN_STACK={STACK_BYTES} exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_raylb"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for raylb") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            child.kill().ok();
            child.wait().ok();
            panic!("{args:?}: still running after {DEADLINE:?}: a started thread waits forever");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stderr)
}

#[test]
fn the_bvh_build_fails_in_one_line_when_its_thread_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene_path("quick");
    // Even one worker and the octree, whose build is the first thing to start a thread.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {NO_THREAD_KIB} && RAYON_NUM_THREADS=1 RUST_MIN_STACK={STACK_BYTES} exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_raylb"))
        .args(["render", scene.to_str().unwrap(), "-o", "out.png"])
        .args(["--threads", "1", "--accel", "octree"])
        .args(["--max-memory", "1T"])
        .current_dir(dir.path())
        .output()
        .expect("sh runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit code; stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    let expected = format!(
        "raylb: error: {}: cannot start the BVH build's thread 1 of 1: ",
        scene.display()
    );
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(!dir.path().join("out.png").exists(), "no image written");
}

/// Under `ulimit -v` alone, the threads' stacks and malloc arenas count against the limit:
/// from a limit too small for anything to one that fits, a run is refused in one line (exit
/// 2) or renders, and never aborts on an allocation that failed in between. Below the least
/// raylb starts in (32 MiB) it says so at once; the lowest limit tried leaves room for the
/// kernel to load the binary at all (about 20 MiB of it for this build), which no program can
/// report on when it fails.
#[test]
fn limits_on_address_space_are_kept_to_threads_included() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene_path("cornell");
    for kib in [30_000, 40_000, 60_000, 100_000, 200_000, 400_000, 800_000] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_raylb"))
            .args([
                "render",
                scene.to_str().unwrap(),
                "-o",
                "out.png",
                "--quiet",
            ])
            .args(["--width", "256", "--height", "256", "--threads", "2"])
            .current_dir(dir.path())
            .output()
            .expect("sh runs");
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => assert!(err.is_empty(), "{kib} KiB: {err}"),
            Some(2) => assert_eq!(err.lines().count(), 1, "{kib} KiB: {err}"),
            other => panic!("{kib} KiB: exit {other:?}: {err}"),
        }
        if kib < 32 << 10 {
            assert!(
                err.contains("raylb needs at least 32768 KiB"),
                "{kib} KiB: {err}"
            );
        }
    }
}
