//! Bad input, end to end: each case exits with code 2 and one line on stderr naming the
//! file, line and key (or the flag) at fault, and leaves the output file as it was.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use tempfile::TempDir;

const OLD_OUTPUT: &[u8] = b"an earlier render, which a failed run must not touch";

/// A scratch directory with an earlier `out.png` in it.
struct Scratch {
    dir: TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        fs::write(dir.path().join("out.png"), OLD_OUTPUT).expect("write old output");
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        fs::write(&p, text).expect("write input");
        p
    }

    /// Runs `raylb` in the scratch directory.
    fn raylb(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_raylb"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("raylb runs")
    }

    /// Runs a command that must fail as described, and checks the output was left alone.
    fn fails(&self, args: &[&str], expected: &[&str]) {
        let out = self.raylb(args);
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
        assert_eq!(
            fs::read(self.path("out.png")).unwrap(),
            OLD_OUTPUT,
            "{args:?}: output clobbered"
        );
        let leftovers: Vec<_> = fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{args:?}: left {leftovers:?}");
    }
}

/// A valid scene around `objects` (TOML), with a triangle that is fine.
fn scene_with(extra: &str) -> String {
    format!(
        "[image]\nwidth = 8\nheight = 8\n\n[camera]\nposition = [0, 0, 5]\nlook_at = [0, 0, 0]\n\n\
         [[objects]]\nquad = {{ corners = [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]] }}\n{extra}"
    )
}

#[test]
fn missing_and_unreadable_files() {
    let s = Scratch::new();
    s.fails(
        &["render", "nope.toml", "-o", "out.png"],
        &["nope.toml", "cannot read", "no such file"],
    );
    fs::create_dir(s.path("folder.toml")).unwrap();
    s.fails(
        &["render", "folder.toml", "-o", "out.png"],
        &["folder.toml", "cannot read"],
    );
    s.fails(
        &["render", "--mesh", "nope.obj", "-o", "out.png"],
        &["nope.obj", "cannot read"],
    );
}

#[test]
fn toml_syntax_error() {
    let s = Scratch::new();
    s.write("bad.toml", "[image]\nwidth = 8\nheight = = 8\n");
    s.fails(&["render", "bad.toml", "-o", "out.png"], &["bad.toml:3:"]);
}

#[test]
fn unknown_key() {
    let s = Scratch::new();
    s.write("bad.toml", &scene_with("colour = [1, 0, 0]\n"));
    s.fails(
        &["render", "bad.toml", "-o", "out.png"],
        &["bad.toml:11:1:", "unknown field `colour`"],
    );
    s.write(
        "bad2.toml",
        &scene_with("").replace("look_at", "look_at_me"),
    );
    s.fails(
        &["render", "bad2.toml", "-o", "out.png"],
        &["bad2.toml:7:1:", "`look_at_me`"],
    );
}

#[test]
fn wrong_type() {
    let s = Scratch::new();
    s.write(
        "bad.toml",
        &scene_with("").replace("width = 8", "width = \"wide\""),
    );
    s.fails(
        &["render", "bad.toml", "-o", "out.png"],
        &["bad.toml:2:9:", "`width`", "invalid type"],
    );
}

#[test]
fn nan_and_infinite_coordinates_in_a_scene() {
    let s = Scratch::new();
    s.write(
        "nan.toml",
        &scene_with("").replace("position = [0, 0, 5]", "position = [0, nan, 5]"),
    );
    s.fails(
        &["render", "nan.toml", "-o", "out.png"],
        &["nan.toml:6:12:", "`position`", "finite"],
    );
    s.write(
        "inf.toml",
        &scene_with("").replace("[1, 1, 0], [-1", "[1, inf, 0], [-1"),
    );
    s.fails(
        &["render", "inf.toml", "-o", "out.png"],
        &["inf.toml:10:", "`corners`", "finite"],
    );
}

#[test]
fn bad_obj_files() {
    let s = Scratch::new();
    let cases = [
        (
            "short.obj",
            "v 0 0 0\nv 1 0\nf 1 2 1\n",
            "short.obj:2:",
            "3 coordinates",
        ),
        (
            "nan.obj",
            "v 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n",
            "nan.obj:3:",
            "NaN",
        ),
        (
            "inf.obj",
            "v 0 0 0\nv 1 0 0\nv 0 1 -inf\nf 1 2 3\n",
            "inf.obj:3:",
            "infinite",
        ),
        (
            "word.obj",
            "v 0 0 0\nv 1 zero 0\nv 0 1 0\nf 1 2 3\n",
            "word.obj:2:",
            "not a number",
        ),
        (
            "range.obj",
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n",
            "range.obj:4:",
            "refers to vertex 9",
        ),
        (
            "corners.obj",
            "v 0 0 0\nv 1 0 0\nf 1 2\n",
            "corners.obj:3:",
            "at least 3 corners",
        ),
        (
            "junk.obj",
            "v 0 0 0\nhello world\n",
            "junk.obj:2:",
            "unknown statement `hello`",
        ),
        ("empty.obj", "# nothing\n", "empty.obj", "no faces"),
    ];
    for (name, text, place, what) in cases {
        s.write(name, text);
        s.fails(&["render", "--mesh", name, "-o", "out.png"], &[place, what]);
        // The same file named by a scene is reported the same way.
        let scene = format!("scene-{name}.toml");
        s.write(
            &scene,
            &scene_with(&format!("\n[[objects]]\nmesh = \"{name}\"\n")),
        );
        s.fails(&["render", &scene, "-o", "out.png"], &[place, what]);
    }
}

#[test]
fn bad_mtl_files() {
    let s = Scratch::new();
    s.write(
        "m.obj",
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n",
    );
    s.fails(
        &["render", "--mesh", "m.obj", "-o", "out.png"],
        &["m.mtl", "cannot read"],
    );
    s.write("m.mtl", "newmtl a\nKd 0.5 nan 0.5\n");
    s.fails(
        &["render", "--mesh", "m.obj", "-o", "out.png"],
        &["m.mtl:2:", "`Kd`", "finite"],
    );
}

#[test]
fn empty_scenes() {
    let s = Scratch::new();
    s.write(
        "empty.toml",
        "[image]\nwidth = 8\nheight = 8\n[camera]\nposition = [0, 0, 5]\nlook_at = [0, 0, 0]\n",
    );
    s.fails(
        &["render", "empty.toml", "-o", "out.png"],
        &["empty.toml", "no triangles"],
    );
    s.write("flat.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n");
    s.fails(
        &["render", "--mesh", "flat.obj", "-o", "out.png"],
        &["flat.obj", "no triangles", "1 zero-area"],
    );
}

#[test]
fn image_sizes_out_of_range() {
    let s = Scratch::new();
    s.write(
        "zero.toml",
        &scene_with("").replace("width = 8", "width = 0"),
    );
    s.fails(
        &["render", "zero.toml", "-o", "out.png"],
        &["zero.toml:2:9:", "`width`", "between 1 and 16384"],
    );
    s.write(
        "huge.toml",
        &scene_with("").replace("height = 8", "height = 16385"),
    );
    s.fails(
        &["render", "huge.toml", "-o", "out.png"],
        &["huge.toml:3:10:", "`height`", "16384"],
    );
    s.write("ok.toml", &scene_with(""));
    s.fails(
        &["render", "ok.toml", "-o", "out.png", "--width", "0"],
        &["--width", "0"],
    );
    s.fails(
        &["render", "ok.toml", "-o", "out.png", "--height", "16385"],
        &["--height", "16385"],
    );
}

#[test]
fn depth_tile_and_threads_out_of_range() {
    let s = Scratch::new();
    s.write("deep.toml", &scene_with("\n[render]\nmax_depth = 65\n"));
    s.fails(
        &["render", "deep.toml", "-o", "out.png"],
        &["deep.toml:13:13:", "`max_depth`", "between 0 and 64"],
    );
    s.write("ok.toml", &scene_with(""));
    s.fails(
        &["render", "ok.toml", "-o", "out.png", "--tile", "0"],
        &["--tile", "0"],
    );
    s.fails(
        &["render", "ok.toml", "-o", "out.png", "--threads", "0"],
        &["--threads", "0"],
    );
}

#[test]
fn references_and_shapes_that_do_not_fit() {
    let s = Scratch::new();
    s.write("mat.toml", &scene_with("material = \"gold\"\n"));
    s.fails(
        &["render", "mat.toml", "-o", "out.png"],
        &["mat.toml:11:12:", "`material`", "no material named `gold`"],
    );
    s.write(
        "two.toml",
        &scene_with("sphere = { center = [0, 0, 0], radius = 1 }\n"),
    );
    s.fails(
        &["render", "two.toml", "-o", "out.png"],
        &["two.toml:9:1:", "exactly one of"],
    );
    s.write(
        "cam.toml",
        &scene_with("").replace("look_at = [0, 0, 0]", "look_at = [0, 0, 5]"),
    );
    s.fails(
        &["render", "cam.toml", "-o", "out.png"],
        &["cam.toml:5:1:", "zero or parallel"],
    );
}

#[test]
fn zero_area_triangles_are_dropped_and_counted() {
    let s = Scratch::new();
    s.write(
        "some.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 2 0 0\nf 1 2 3\nf 1 2 4\nf 1 1 3\n",
    );
    let out = s.raylb(&[
        "render", "--mesh", "some.obj", "-o", "new.png", "--width", "16", "--height", "16",
        "--stats", "s.json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("1 triangle (2 zero-area dropped), 1 object, 1 light")
    );
    let stats: serde_json::Value =
        serde_json::from_slice(&fs::read(s.path("s.json")).unwrap()).unwrap();
    assert_eq!(stats["scene"]["dropped_triangles"], 2);
    assert_eq!(stats["scene"]["triangles"], 1);
}

#[test]
fn unwritable_output() {
    let s = Scratch::new();
    s.write("ok.toml", &scene_with(""));
    s.fails(
        &["render", "ok.toml", "-o", "no/such/dir/out.png"],
        &["cannot write", "no/such/dir/out.png"],
    );
}
