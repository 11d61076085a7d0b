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
    assert!(
        err.contains("cannot write to standard output: no space left"),
        "{err}"
    );
}

/// Runs a command that must fail before doing anything: exit 2, one line on stderr holding
/// every part of `expected`, nothing on stdout, nothing written in its folder.
fn refused(args: &[&str], expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = raylb().args(args).current_dir(dir.path()).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    for part in expected {
        assert!(err.contains(part), "{args:?}: `{part}` not in {err}");
    }
    assert!(
        out.stdout.is_empty(),
        "{args:?}: printed {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{args:?}: wrote {left:?}");
}

#[test]
fn a_validation_with_nothing_to_compare_is_refused() {
    let quick = quick();
    refused(
        &["validate", &quick, "--balancers", "cuda-managed"],
        &["cuda-managed runs only on the GPU"],
    );
    refused(
        &["validate", &quick, "--balancers", "static,cuda-managed"],
        &["cuda-managed runs only on the GPU"],
    );
    refused(
        &[
            "validate",
            &quick,
            "--balancers",
            "rayon",
            "--threads",
            "1",
            "--tiles",
            "8",
        ],
        &["nothing to compare", "1 render"],
    );
    refused(
        &["validate", &quick, "--gpu", "--balancers", "rayon"],
        &["--gpu", "none of the balancers given runs on the GPU"],
    );
}

#[test]
fn settings_a_balancer_does_not_use_are_refused() {
    let quick = quick();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--deque", "locked"],
            "--deque applies to stealing, not to --balancer static",
        ),
        (
            &["--balancer", "counter", "--victim", "set"],
            "--victim applies to stealing",
        ),
        (
            &["--balancer", "counter", "--assign", "blocked"],
            "--assign applies to static and stealing",
        ),
        (
            &["--balancer", "stealing", "--chunk", "4"],
            "--chunk applies to counter",
        ),
        (
            &["--balancer", "rayon", "--steal", "one"],
            "--steal applies to stealing, not to --balancer rayon",
        ),
        (
            &["--device", "gpu", "--assign", "blocked"],
            "--assign apply to --device cpu",
        ),
        (
            &["--device", "gpu", "--balancer", "static", "--chunk", "2"],
            "--chunk applies to counter",
        ),
        (
            &["--device", "gpu", "--balancer", "counter", "--steal", "one"],
            "--steal applies to stealing",
        ),
    ];
    for (flags, message) in cases {
        let mut args = vec!["render", quick.as_str(), "-o", "q.png"];
        args.extend_from_slice(flags);
        refused(&args, &[message]);
    }
    refused(
        &[
            "bench",
            "sweep",
            &quick,
            "--balancers",
            "static,counter",
            "--steal",
            "one",
            "--repeat",
            "1",
        ],
        &["--steal applies to stealing, which is not among --balancers"],
    );
}
