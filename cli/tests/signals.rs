//! SIGTERM while outputs are written: no hidden temporary file is left behind, and the outputs
//! are all as they were or all new, never some of each. The signal is delivered at a chosen
//! system call by `strace`'s fault injection, so the moment is exact; where strace is missing
//! the tests say they were skipped, unless `RAYLB_REQUIRE_STRACE` is set (as `.ci/run` does,
//! after installing it), which makes that a failure.

#![cfg(target_os = "linux")]

use std::fs;
use std::path::Path;
use std::process::Command;

mod common;
use common::scene_path;

fn strace_or_skip() -> bool {
    let found = Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("RAYLB_REQUIRE_STRACE").is_none(),
            "RAYLB_REQUIRE_STRACE is set but strace cannot be run"
        );
        eprintln!("skipped: strace is not installed (see .ci/run)");
    }
    found
}

const OUTPUTS: [&str; 3] = ["out.png", "out.json", "wm.png"];

/// Renders `quick` with three outputs over old ones in `dir`, SIGTERM injected at the `when`th
/// call of `syscall`; returns the exit code.
fn render_signalled(dir: &Path, syscall: &str, when: u32) -> Option<i32> {
    for name in OUTPUTS {
        fs::write(dir.join(name), "old").unwrap();
    }
    let status = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "-e"])
        .arg(format!("trace={syscall}"))
        .arg("-e")
        .arg(format!("inject={syscall}:signal=SIGTERM:when={when}"))
        .arg(env!("CARGO_BIN_EXE_raylb"))
        .args(["render", scene_path("quick").to_str().unwrap()])
        .args([
            "-o",
            "out.png",
            "--stats",
            "out.json",
            "--workmap",
            "wm.png",
            "--quiet",
        ])
        .current_dir(dir)
        .status()
        .expect("strace runs");
    status.code()
}

/// The outputs that still hold "old", and every file besides the outputs.
fn state(dir: &Path) -> (Vec<&'static str>, Vec<String>) {
    let old = OUTPUTS
        .into_iter()
        .filter(|n| fs::read(dir.join(n)).unwrap() == b"old")
        .collect();
    let others = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !OUTPUTS.contains(&n.as_str()))
        .collect();
    (old, others)
}

/// Checks what a run signalled at the `when`th call of `syscall` left in `dir`: its outputs all
/// old or all new, nothing else, and exit code 143 (or 0 where the run finished before the
/// signal's thread could end it, which leaves every output new).
fn all_old_or_all_new(dir: &Path, syscall: &str, when: u32, code: Option<i32>) -> bool {
    let (old, others) = state(dir);
    let label = format!("{syscall} {when}");
    assert!(others.is_empty(), "{label}: left behind {others:?}");
    assert!(
        old.is_empty() || old == OUTPUTS,
        "{label}: some outputs new, some old: {old:?} old"
    );
    match code {
        Some(143) => {}
        Some(0) => assert!(old.is_empty(), "{label}: a finished run left old outputs"),
        other => panic!("{label}: exit {other:?}"),
    }
    old.is_empty()
}

#[test]
fn sigterm_while_outputs_are_staged_leaves_all_or_none_and_nothing_else() {
    if !strace_or_skip() {
        return;
    }
    // The first fsync is the first staged file's: the other two are not written yet.
    let mut all_old = 0;
    for when in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let code = render_signalled(dir.path(), "fsync", when);
        all_old += usize::from(!all_old_or_all_new(dir.path(), "fsync", when, code));
    }
    // The signal's thread ends the run long before its staging ends, but on a loaded machine
    // it may lose the race now and then: one run at least must end with the old outputs.
    assert!(all_old >= 1, "{all_old} of 3 runs left the old outputs");
}

#[test]
fn sigterm_between_renames_waits_for_the_whole_set() {
    if !strace_or_skip() {
        return;
    }
    for when in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let code = render_signalled(dir.path(), "rename", when);
        // Once renaming has begun, the set is completed whatever the signal.
        assert!(
            all_old_or_all_new(dir.path(), "rename", when, code),
            "rename {when}: the old outputs are back"
        );
        let png = fs::read(dir.path().join("out.png")).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "rename {when}: the new image");
    }
}
