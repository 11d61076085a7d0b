//! `--max-memory` is kept before the memory is taken: what would pass it (a scene's text to
//! parse, its shapes' triangles, an OBJ's vertices, a recording's task tree) is refused in one
//! line, exit code 2, with small bounds so that each case is quick.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use tempfile::TempDir;

/// A camera, a light and a 16×16 image: a scene for `objects` (TOML) to go into.
const HEADER: &str = r#"
[image]
width = 16
height = 16

[camera]
position = [0.0, 1.0, 6.0]
look_at = [0.0, 0.0, 0.0]

[[lights]]
position = [3.0, 5.0, 4.0]
"#;

/// Runs `raylb args` in `dir`.
fn raylb(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("raylb runs")
}

/// Checks that `raylb args` in `dir` is refused with exit code 2 and one line on stderr holding
/// every part of `expected`.
fn refused(dir: &Path, args: &[&str], expected: &[&str]) {
    let out = raylb(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: exit code; stderr: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line, got: {stderr}"
    );
    for part in expected {
        assert!(stderr.contains(part), "{args:?}: `{part}` not in: {stderr}");
    }
}

/// A scene's text is parsed into far more memory than it takes on disk: a scene whose parse
/// would pass the bound is refused from its size, before it is parsed.
#[test]
fn scene_text_too_large_to_parse() {
    let dir = TempDir::new().unwrap();
    let mut scene = HEADER.to_string();
    // 200 boxes, about 16 KB of text: 2,400 triangles, which fit in 1 MiB once built.
    for i in 0..200 {
        let x = f64::from(i) * 0.01;
        scene += &format!(
            "\n[[objects]]\nbox = {{ min = [{x:.3}, 0.000, 0.000], max = [{:.3}, 0.005, 0.005] }}\n",
            x + 0.005
        );
    }
    fs::write(dir.path().join("boxes.toml"), &scene).unwrap();
    let args = [
        "render",
        "boxes.toml",
        "-o",
        "out.png",
        "--max-memory",
        "1M",
    ];
    refused(
        dir.path(),
        &args,
        &["boxes.toml", "of scene text takes about", "to parse"],
    );
    assert!(!dir.path().join("out.png").exists());
    // With room for the parse, it renders.
    let out = raylb(
        dir.path(),
        &[
            "render",
            "boxes.toml",
            "-o",
            "out.png",
            "--max-memory",
            "8M",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The triangles of a scene's shapes are counted together before any is generated: two
/// spheres that each fit but together do not are refused at the second, with the count of the
/// first, before the first is made.
#[test]
fn shapes_counted_together_before_any_is_generated() {
    let dir = TempDir::new().unwrap();
    // 20,480 triangles each; 8 MiB holds about 32,000 at 260 bytes each.
    let sphere = |x: f64| {
        format!(
            "\n[[objects]]\nsphere = {{ center = [{x}, 0, 0], radius = 1, subdivisions = 5 }}\n"
        )
    };
    let scene = format!("{HEADER}{}{}", sphere(-1.5), sphere(1.5));
    fs::write(dir.path().join("spheres.toml"), scene).unwrap();
    refused(
        dir.path(),
        &[
            "render",
            "spheres.toml",
            "-o",
            "out.png",
            "--max-memory",
            "8M",
        ],
        &[
            "spheres.toml",
            "this object would add 20480 triangles to the 20480 the shapes before it make",
        ],
    );
}

/// An OBJ file of many vertices and one face: its text and the vertices `tobj` reads take
/// far more than its one triangle; both are counted before the file is parsed.
#[test]
fn obj_vertices_counted_before_parsing() {
    let dir = TempDir::new().unwrap();
    let scene = format!("{HEADER}\n[[objects]]\nmesh = \"points.obj\"\n");
    fs::write(dir.path().join("points.toml"), scene).unwrap();
    let args = [
        "render",
        "points.toml",
        "-o",
        "out.png",
        "--max-memory",
        "1M",
    ];
    // Text larger than the room: refused before it is read.
    let mut obj = "v 0.125 0.25 0.5\n".repeat(80_000);
    obj += "f 1 2 3\n";
    fs::write(dir.path().join("points.obj"), &obj).unwrap();
    refused(
        dir.path(),
        &args,
        &["points.obj", "reading it takes about", "of text"],
    );
    // Short lines, whose vertices take more than their text: refused once they are counted.
    let mut obj = "v 0 0 0\n".repeat(30_000);
    obj += "f 1 2 3\n";
    fs::write(dir.path().join("points.obj"), &obj).unwrap();
    refused(dir.path(), &args, &["points.obj", "of vertices"]);
    assert!(!dir.path().join("out.png").exists());
}

/// `raylb record` keeps a record of every task of the frame: the tasks are counted against
/// the bound, and a frame with more than fit is refused once the recording passes it.
#[test]
fn record_counts_its_task_tree() {
    let dir = TempDir::new().unwrap();
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes/quick.toml");
    let scene = scene.to_str().unwrap();
    refused(
        dir.path(),
        &[
            "record",
            scene,
            "-o",
            "t.tasks",
            "--threads",
            "2",
            "--max-memory",
            "2M",
        ],
        &["the frame has more than", "tasks", "less", "for the frame"],
    );
    assert!(!dir.path().join("t.tasks").exists());
    let out = raylb(
        dir.path(),
        &[
            "record",
            scene,
            "-o",
            "t.tasks",
            "--threads",
            "2",
            "--max-memory",
            "64M",
            "--quiet",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
