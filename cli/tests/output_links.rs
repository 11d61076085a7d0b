//! Outputs through symbolic links and onto the standard streams: a link stays a link and its
//! target gets the new contents, as `cp` and a shell's redirection do; a path that names
//! standard output or standard error (`/proc/self/fd/1`, or a link to it) writes there, and
//! nothing at that path is replaced; a link to nothing, to an input or to another descriptor
//! is refused in one line. Only links of the tests' own are used: a failing run must never
//! replace the machine's `/dev/stdout`.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::scene_path;

fn raylb(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("raylb runs")
}

fn quick() -> String {
    scene_path("quick").to_str().unwrap().to_string()
}

fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[test]
fn an_output_through_a_link_writes_the_links_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("other")).unwrap();
    fs::write(d.join("other/target.png"), "old").unwrap();
    fs::write(d.join("other/run.json"), "old").unwrap();
    symlink("other/target.png", d.join("link.png")).unwrap();
    // A link to a link, ending at an absolute path.
    symlink(d.join("other/run.json"), d.join("inner.json")).unwrap();
    symlink("inner.json", d.join("outer.json")).unwrap();
    let out = raylb(
        d,
        &[
            "render",
            &quick(),
            "-o",
            "link.png",
            "--stats",
            "outer.json",
            "--quiet",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for link in ["link.png", "inner.json", "outer.json"] {
        assert!(is_link(&d.join(link)), "{link} is still a link");
    }
    let png = fs::read(d.join("other/target.png")).unwrap();
    assert!(
        png.starts_with(b"\x89PNG"),
        "the link's target holds the image"
    );
    let json = fs::read_to_string(d.join("other/run.json")).unwrap();
    assert!(
        json.contains("\"scene\""),
        "the last link's target holds the report"
    );
    // Nothing else was left in either folder: no temporary files.
    let mut names: Vec<_> = fs::read_dir(d.join("other"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["run.json", "target.png"]);
    assert_eq!(
        fs::read_dir(d).unwrap().count(),
        4,
        "other, link.png, inner.json, outer.json"
    );
}

#[test]
fn an_output_naming_standard_output_is_written_there_and_replaces_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The test's own link to standard output (as /dev/stdout is the system's).
    symlink("/proc/self/fd/1", d.join("stdout.json")).unwrap();
    for stats in ["stdout.json", "/proc/self/fd/1"] {
        let log = fs::File::create(d.join("log")).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_raylb"))
            .args([
                "render",
                &quick(),
                "-o",
                "o.png",
                "--stats",
                stats,
                "--quiet",
            ])
            .current_dir(d)
            .stdout(log)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "--stats {stats}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json = fs::read_to_string(d.join("log")).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("--stats {stats}: standard output holds the JSON: {e}"));
        assert!(parsed.get("render").is_some(), "--stats {stats}");
        assert!(
            is_link(&d.join("stdout.json")),
            "--stats {stats}: the link is a link"
        );
    }
}

/// A refused run: exit 2, one line holding `expected`, and the folder as it was.
fn refused(dir: &Path, args: &[&str], expected: &str) {
    let before = fs::read_dir(dir).unwrap().count();
    let out = raylb(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.contains(expected),
        "{args:?}: `{expected}` not in {err}"
    );
    assert_eq!(
        fs::read_dir(dir).unwrap().count(),
        before,
        "{args:?}: nothing written"
    );
}

#[test]
fn links_to_nothing_to_an_input_or_to_another_descriptor_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = d.join("q.toml");
    fs::copy(scene_path("quick"), &scene).unwrap();
    let scene = scene.to_str().unwrap().to_string();
    symlink("nowhere/x.png", d.join("dangling.png")).unwrap();
    symlink("q.toml", d.join("scene.json")).unwrap();
    symlink("/proc/self/fd/7", d.join("seven.json")).unwrap();
    refused(
        d,
        &["render", &scene, "-o", "dangling.png"],
        "is a symbolic link to nowhere/x.png, which does not exist",
    );
    refused(
        d,
        &["render", &scene, "-o", "o.png", "--stats", "scene.json"],
        "an input of this run",
    );
    refused(
        d,
        &["render", &scene, "-o", "o.png", "--stats", "seven.json"],
        "names file descriptor 7",
    );
    assert!(is_link(&d.join("scene.json")));
    assert!(
        fs::read_to_string(d.join("q.toml"))
            .unwrap()
            .contains("[camera]")
    );
}
