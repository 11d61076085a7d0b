//! `raylb view` in a real window, on a virtual X server (Xvfb): scripted frames write a
//! screenshot that is byte for byte the PNG `raylb render` writes; without a display the
//! viewer says so in one line.
//!
//! Without Xvfb the window tests say they were skipped, unless `RAYLB_REQUIRE_XVFB` is set
//! (as `.ci/run` does, after installing it): then a missing Xvfb fails them.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

mod common;
use common::{ok, scene_path};

fn raylb(dir: &Path, display: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_raylb"));
    command.args(args).current_dir(dir);
    match display {
        Some(d) => command.env("DISPLAY", d),
        None => command.env_remove("DISPLAY"),
    };
    command.output().expect("raylb runs")
}

/// A virtual X server for the length of a test.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts one on a free display number, or `None` (after saying so) where Xvfb is not
    /// installed and not required.
    fn start(test: &str) -> Option<Self> {
        let installed = std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("Xvfb").is_file()));
        if !installed {
            assert!(
                std::env::var_os("RAYLB_REQUIRE_XVFB").is_none(),
                "RAYLB_REQUIRE_XVFB is set but Xvfb is not on PATH"
            );
            eprintln!("{test}: skipped: Xvfb is not installed (Debian: apt install xvfb)");
            return None;
        }
        // -displayfd: the server picks a free display and writes its number to stdout.
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x1024x24",
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("Xvfb reports its display");
        let number = line.trim();
        assert!(
            !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()),
            "Xvfb gave no display number: {line:?}"
        );
        Some(Self {
            display: format!(":{number}"),
            child,
        })
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn scripted_frames_write_the_same_bytes_as_render() {
    let Some(x) = Xvfb::start("scripted_frames_write_the_same_bytes_as_render") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let quick = quick.to_str().unwrap();
    let stdout = ok(&raylb(
        dir.path(),
        Some(&x.display),
        &[
            "view",
            quick,
            "--frames",
            "3",
            "--screenshot",
            "shot.png",
            "--balancer",
            "stealing",
            "--threads",
            "3",
            "--tile",
            "8",
        ],
    ));
    assert_eq!(
        stdout.matches("frame ").count(),
        3,
        "one line per frame:\n{stdout}"
    );
    assert!(stdout.contains("wrote   shot.png"), "{stdout}");
    ok(&raylb(
        dir.path(),
        None,
        &["render", quick, "-o", "render.png", "--quiet"],
    ));
    let shot = std::fs::read(dir.path().join("shot.png")).unwrap();
    let render = std::fs::read(dir.path().join("render.png")).unwrap();
    assert!(
        shot == render,
        "the screenshot's bytes differ from raylb render's"
    );

    // A larger scene at another size, and the overlays: the work map and the worker map are
    // pictures of their own, of the image's size.
    let cornell = scene_path("cornell");
    let cornell = cornell.to_str().unwrap();
    let size = ["--width", "160", "--height", "120"];
    for (layer, file) in [
        ("image", "c.png"),
        ("work-map", "c-work.png"),
        ("workers", "c-workers.png"),
    ] {
        let mut args = vec![
            "view",
            cornell,
            "--frames",
            "1",
            "--screenshot",
            file,
            "--layer",
            layer,
            "-q",
        ];
        args.extend(size);
        let stdout = ok(&raylb(dir.path(), Some(&x.display), &args));
        assert!(stdout.is_empty(), "--quiet prints nothing: {stdout}");
    }
    let mut args = vec!["render", cornell, "-o", "c-render.png", "-q"];
    args.extend(size);
    ok(&raylb(dir.path(), None, &args));
    let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
    assert!(
        read("c.png") == read("c-render.png"),
        "cornell at 160×120 differs"
    );
    let decode = |f: &str| image::open(dir.path().join(f)).unwrap().to_rgb8();
    for overlay in ["c-work.png", "c-workers.png"] {
        let img = decode(overlay);
        assert_eq!(img.dimensions(), (160, 120), "{overlay}");
        assert_ne!(img, decode("c.png"), "{overlay} shows more than the image");
    }
}

/// Runs a scripted view of `quick` on `display` (unset if `None`), which must fail with one
/// line containing `expected`, exit code 2, and no screenshot.
fn cannot_open(display: Option<&str>, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let args = [
        "view",
        quick.to_str().unwrap(),
        "--frames",
        "1",
        "--screenshot",
        "s.png",
    ];
    let out = raylb(dir.path(), display, &args);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(expected), "{stderr}");
    assert!(!dir.path().join("s.png").exists(), "nothing written");
}

#[test]
fn without_a_display_the_viewer_says_so_in_one_line() {
    cannot_open(None, "DISPLAY is not set");
}

/// A scene that cannot be read is said first, display or none.
#[test]
fn a_missing_scene_is_named_before_a_missing_display() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["view", "missing.toml"][..],
        &["view", "--mesh", "missing.obj"],
    ] {
        let out = raylb(dir.path(), None, args);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!(
                "raylb: error: {}: cannot read: no such file",
                args.last().unwrap()
            )),
            "{stderr}"
        );
    }
}

#[test]
fn a_display_that_cannot_be_opened_is_one_line_too() {
    cannot_open(Some(":9999"), "cannot open a window on display :9999");
}

#[test]
fn a_display_that_goes_away_is_a_one_line_error() {
    let Some(mut x) = Xvfb::start("a_display_that_goes_away_is_a_one_line_error") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    // A window that stays open until the display under it is gone.
    let mut viewer = Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(["view", quick.to_str().unwrap(), "--quiet"])
        .env("DISPLAY", &x.display)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("raylb runs");
    std::thread::sleep(std::time::Duration::from_secs(2));
    let _ = x.child.kill();
    let _ = x.child.wait();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = viewer.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = viewer.kill();
            panic!("the viewer did not end when its display went away");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    viewer
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("lost the connection to display"), "{err}");
}
