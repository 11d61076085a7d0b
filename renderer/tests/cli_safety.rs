//! Nothing lost, nothing silent: a closed or full standard output, outputs that name inputs,
//! validations that would compare nothing, and flags that do not apply.

use std::fs;
use std::process::{Command, Output, Stdio};

mod common;
use common::scene_path;

fn raylb() -> Command {
    Command::new(env!("CARGO_BIN_EXE_raylb"))
}

fn quick() -> String {
    scene_path("quick").to_str().unwrap().to_string()
}

/// Runs `raylb args` with a standard output whose reader has already gone away.
fn with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    raylb()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("raylb runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let quick = quick();
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("q.png");
    for args in [
        vec!["scenes"],
        vec!["validate", &quick, "--threads", "1,2", "--tiles", "8"],
        vec!["render", &quick, "-o", png.to_str().unwrap(), "--json"],
    ] {
        let out = with_closed_stdout(&args);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}: quiet");
    }
}

#[test]
fn a_full_stdout_is_a_one_line_error() {
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: this system has no /dev/full");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = raylb()
        .args(["render", &quick(), "-o", "q.png"])
        .current_dir(dir.path())
        .stdout(full)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot write to standard output: no space left"), "{err}");
}

