//! `--device hybrid` from the command line: what does not apply to it, and a machine without
//! a GPU, refused in one line before any output is written.

mod common;

use common::{raylb, scene_path};

#[test]
fn validate_hybrid_without_a_gpu_says_so_in_one_line() {
    if renderer::gpu::Gpu::open().is_ok() {
        eprintln!("a GPU is present: the refusal cannot be seen here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = raylb(
        dir.path(),
        &[
            "validate",
            scene_path("quick").to_str().unwrap(),
            "--hybrid",
            "-o",
            "ref.png",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--hybrid needs an NVIDIA GPU"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(!dir.path().join("ref.png").exists());
}

#[test]
fn hybrid_refuses_what_does_not_apply_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    for (args, says) in [
        (
            vec!["--balancer", "counter"],
            "leave --balancer out or say stealing",
        ),
        (
            vec!["--assign", "blocked"],
            "--assign does not apply to --device hybrid",
        ),
        (vec!["--chunk", "4"], "--chunk applies to counter"),
        (vec!["--order", "breadth-first"], "--order applies to"),
    ] {
        let mut all = vec!["render", quick.to_str().unwrap(), "--device", "hybrid"];
        all.extend(&args);
        let out = raylb(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
}

#[test]
fn hybrid_without_a_gpu_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = raylb(
        dir.path(),
        &[
            "render",
            scene_path("quick").to_str().unwrap(),
            "--device",
            "hybrid",
            "-o",
            "q.png",
        ],
    );
    if renderer::gpu::Gpu::open().is_ok() {
        eprintln!("a GPU is present: the refusal cannot be seen here");
        return;
    }
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--device hybrid needs an NVIDIA GPU"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(!dir.path().join("q.png").exists());
}

/// `raylb view --device hybrid` (on a display that need not exist: the GPU and the settings
/// are checked before a window opens) must fail in one line containing `says`, exit code 2.
fn view_refuses(args: &[&str], says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let mut all = vec![
        "view",
        quick.to_str().unwrap(),
        "--device",
        "hybrid",
        "--frames",
        "1",
        "--screenshot",
        "s.png",
    ];
    all.extend(args);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(&all)
        .current_dir(dir.path())
        .env("DISPLAY", ":9999")
        .output()
        .expect("raylb runs");
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(says), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(!dir.path().join("s.png").exists());
}

#[test]
fn the_viewer_takes_hybrid_and_refuses_it_in_one_line_without_a_gpu() {
    view_refuses(
        &["--balancer", "rayon"],
        "leave --balancer out or say stealing",
    );
    view_refuses(&["--chunk", "2"], "--chunk applies to counter");
    if renderer::gpu::Gpu::open().is_ok() {
        eprintln!("a GPU is present: the refusal cannot be seen here");
        return;
    }
    view_refuses(&[], "--device hybrid needs an NVIDIA GPU");
}
