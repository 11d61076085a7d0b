//! Bad input, end to end: each case exits with code 2 and one line on stderr naming the
//! file, line and key (or the flag) at fault, and leaves the output file as it was.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use tempfile::TempDir;

mod common;
use common::{png_header_only, png_with_idat, png16, scene_path};

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

    /// Runs `raylb` in the scratch directory under an address-space limit (`ulimit -v`) of
    /// `kib` KiB.
    fn raylb_limited(&self, kib: u64, args: &[&str]) -> Output {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_raylb"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("sh runs")
    }

    /// Runs a command that must fail as described, and checks the output was left alone.
    fn fails(&self, args: &[&str], expected: &[&str]) {
        self.failed(&self.raylb(args), args, expected);
    }

    /// Checks that `out`, the run of `raylb args`, failed as described (exit code 2 and one
    /// line on stderr, nothing else printed: no progress, no table) and left the output alone.
    fn failed(&self, out: &Output, args: &[&str], expected: &[&str]) {
        assert!(out.stdout.is_empty(), "{args:?}: printed {:?}", out.stdout);
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
        &["folder.toml", "not a regular file (a directory)"],
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
fn a_worker_stack_too_small_or_not_a_number_is_refused() {
    let s = Scratch::new();
    let quick = scene_path("quick");
    for (value, says) in [
        ("1", "RUST_MIN_STACK=1: a worker's stack needs at least"),
        ("0", "RUST_MIN_STACK=0: a worker's stack needs at least"),
        ("abc", "RUST_MIN_STACK=abc: not a whole number of bytes"),
        ("-5", "RUST_MIN_STACK=-5: not a whole number of bytes"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_raylb"))
            .args(["render", quick.to_str().unwrap(), "-o", "out.png"])
            .env("RUST_MIN_STACK", value)
            .current_dir(s.dir.path())
            .output()
            .expect("raylb runs");
        s.failed(&out, &[value], &[says]);
    }
}

#[test]
fn a_key_given_twice_is_named() {
    let s = Scratch::new();
    s.write(
        "twice.toml",
        &scene_with("").replace("height = 8", "height = 8\nwidth = 4"),
    );
    s.fails(
        &["render", "twice.toml", "-o", "out.png"],
        &["twice.toml:4:1: duplicate key `width`"],
    );
    s.write(
        "tables.toml",
        &format!("{}\n[camera]\nfov = 30\n", scene_with("")),
    );
    s.fails(
        &["render", "tables.toml", "-o", "out.png"],
        &["tables.toml:", "duplicate key `camera`"],
    );
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
        &[
            "bad.toml:2:9:",
            "`width`: invalid type: string \"wide\", expected a whole number, not negative",
        ],
    );
    // In the file's terms (tables, arrays, numbers), not the reader's Rust types.
    let cases = [
        (
            "\n[lights]\nposition = [0, 5, 0]\n",
            "`[lights]` is one table where a list of them is expected: write `[[lights]]` for each",
        ),
        (
            "\n[materials]\nm = 3\n",
            "`m`: invalid type: integer `3`, expected a table",
        ),
        ("\n[render]\nmax_depth = 1.5\n", "expected a whole number"),
        (
            "\n[[lights]]\ncolor = [1, 1, 1]\n",
            "bad.toml:12:1: `position` is required here",
        ),
    ];
    for (extra, expected) in cases {
        s.write("bad.toml", &scene_with(extra));
        s.fails(&["render", "bad.toml", "-o", "out.png"], &[expected]);
    }
    s.write(
        "bad.toml",
        &scene_with("").replace("[image]\nwidth = 8\nheight = 8\n", "image = [8, 8]\n"),
    );
    s.fails(
        &["render", "bad.toml", "-o", "out.png"],
        &["`image`: invalid type: array, expected a table"],
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
    // Finite as written, but beyond a 32-bit float: reported as written, not as ∞.
    s.write(
        "huge.toml",
        &scene_with("").replace("position = [0, 0, 5]", "position = [0, -1e308, 5]"),
    );
    s.fails(
        &["render", "huge.toml", "-o", "out.png"],
        &[
            "huge.toml:6:",
            "finite numbers within a 32-bit float's range, got [0, -1e308, 5]",
        ],
    );
    s.write(
        "dim.toml",
        &scene_with("\n[[lights]]\nposition = [0, 2, 2]\nintensity = -1e308\n"),
    );
    s.fails(
        &["render", "dim.toml", "-o", "out.png"],
        &["dim.toml:", "got -1e308, beyond a 32-bit float's range"],
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
        ("vt.obj", "v 0 0 0\nvt nan 0\n", "vt.obj:2:", "NaN"),
        (
            "usemtl.obj",
            "v 0 0 0\nusemtl\n",
            "usemtl.obj:2:",
            "`usemtl` needs a name",
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

/// A PLY triangle: the header is lines 1 to 9, the vertices lines 10 to 12, the face line 13.
const PLY_TRIANGLE: &str = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n\
    property float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\n\
    end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";

#[test]
fn bad_ply_files() {
    let s = Scratch::new();
    let binary = |coordinates: [f32; 9], corners: [i32; 3]| {
        let mut bytes = PLY_TRIANGLE[..PLY_TRIANGLE.find("0 0 0").unwrap()]
            .replace("ascii", "binary_little_endian")
            .into_bytes();
        let body = bytes.len();
        coordinates
            .iter()
            .for_each(|x| bytes.extend(x.to_le_bytes()));
        bytes.push(3);
        corners.iter().for_each(|i| bytes.extend(i.to_le_bytes()));
        (bytes, body)
    };
    let (nan, nan_body) = binary(
        [0.0, 0.0, 0.0, 1.0, f32::NAN, 0.0, 0.0, 1.0, 0.0],
        [0, 1, 2],
    );
    let nan_at = format!("nan.ply: byte {}:", nan_body + 16);
    let (range, range_body) = binary([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], [0, 3, 2]);
    let range_at = format!("range.ply: byte {}:", range_body + 36 + 1 + 4);
    let short = range[..range.len() - 2].to_vec();
    let cases: [(&str, Vec<u8>, &str, &str); 7] = [
        (
            "header.ply",
            PLY_TRIANGLE.replace("float y", "flaot y").into_bytes(),
            "header.ply:5:10:",
            "unknown property type `flaot`",
        ),
        (
            "word.ply",
            PLY_TRIANGLE.replace("1 0 0", "1 zero 0").into_bytes(),
            "word.ply:11:3:",
            "vertex 1: `y` is `zero`, not a number",
        ),
        (
            "corners.ply",
            PLY_TRIANGLE.replace("3 0 1 2", "2 0 1").into_bytes(),
            "corners.ply:13:1:",
            "face 0: a face needs at least 3 corners, found 2",
        ),
        (
            "nan.ply",
            nan,
            &nan_at,
            "vertex 1: `y` is NaN; coordinates must be finite",
        ),
        (
            "range.ply",
            range,
            &range_at,
            "face 0: corner 1 refers to vertex 3, but the vertices are numbered 0 to 2",
        ),
        ("short.ply", short, "short.ply: byte ", "it is truncated"),
        (
            "empty.ply",
            PLY_TRIANGLE[..PLY_TRIANGLE.find("element face").unwrap()]
                .replace("element vertex 3", "element vertex 0")
                .into_bytes()
                .into_iter()
                .chain(*b"end_header\n")
                .collect(),
            "empty.ply",
            "no faces",
        ),
    ];
    for (name, bytes, place, what) in cases {
        fs::write(s.path(name), bytes).unwrap();
        s.fails(&["render", "--mesh", name, "-o", "out.png"], &[place, what]);
        let scene = format!("scene-{name}.toml");
        s.write(
            &scene,
            &scene_with(&format!("\n[[objects]]\nmesh = \"{name}\"\n")),
        );
        s.fails(&["render", &scene, "-o", "out.png"], &[place, what]);
    }
    // The whole line, as a user sees it.
    let out = s.raylb(&["render", "--mesh", "header.ply", "-o", "out.png"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "raylb: error: header.ply:5:10: unknown property type `flaot`\n"
    );
}

#[test]
fn mesh_files_of_other_formats() {
    let s = Scratch::new();
    s.write("bunny.stl", "solid bunny\nendsolid bunny\n");
    let what = "bunny.stl: `.stl` is not a mesh format raylb reads; it reads `.obj` and `.ply`";
    s.fails(&["render", "--mesh", "bunny.stl", "-o", "out.png"], &[what]);
    s.write(
        "scene.toml",
        &scene_with("\n[[objects]]\nmesh = \"bunny.stl\"\n"),
    );
    s.fails(&["render", "scene.toml", "-o", "out.png"], &[what]);
    s.write("empty.toml", &scene_with("\n[[objects]]\nmesh = \"\"\n"));
    s.fails(
        &["render", "empty.toml", "-o", "out.png"],
        &["empty.toml:13:8: `mesh`: an empty path; name an OBJ or PLY file"],
    );
}

#[test]
fn bad_mtl_files() {
    let s = Scratch::new();
    s.write(
        "m.obj",
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n",
    );
    // Each fault names the OBJ's `mtllib` statement, then the library's own line if it has one.
    s.fails(
        &["render", "--mesh", "m.obj", "-o", "out.png"],
        &["m.obj:1:8: `mtllib m.mtl`: m.mtl: cannot read"],
    );
    fs::create_dir(s.path("m.mtl")).unwrap();
    s.fails(
        &["render", "--mesh", "m.obj", "-o", "out.png"],
        &["m.obj:1:8: `mtllib m.mtl`: m.mtl: not a regular file (a directory)"],
    );
    fs::remove_dir(s.path("m.mtl")).unwrap();
    s.write("m.mtl", "newmtl a\nKd 0.5 nan 0.5\n");
    s.fails(
        &["render", "--mesh", "m.obj", "-o", "out.png"],
        &["m.obj:1:8: `mtllib m.mtl`: m.mtl:2:", "`Kd`", "finite"],
    );
    s.write("m.mtl", "newmtl a\nKd 0.5\nillum 2.5\n");
    s.fails(
        &["render", "--mesh", "m.obj", "-o", "out.png"],
        &["m.mtl:3:", "`illum`", "whole number"],
    );
    // One or two numbers for a colour are allowed: the missing channels repeat the first.
    s.write("m.mtl", "newmtl a\nKd 0.5\nKs 0.25 0.5\nillum 2\n");
    let out = s.raylb(&[
        "render",
        "--mesh",
        "m.obj",
        "-o",
        "short.png",
        "--width",
        "8",
        "--height",
        "8",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
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
fn unwritable_outputs_fail_before_any_work_and_touch_nothing() {
    let s = Scratch::new();
    s.write("ok.toml", &scene_with(""));
    s.fails(
        &["render", "ok.toml", "-o", "no/such/dir/out.png"],
        &["cannot write no/such/dir/out.png", "no such directory"],
    );
    // A bad work map or stats path must not let the image through either.
    s.fails(
        &[
            "render",
            "ok.toml",
            "-o",
            "out.png",
            "--workmap",
            "no/dir/w.png",
        ],
        &["cannot write no/dir/w.png"],
    );
    s.fails(
        &[
            "render",
            "ok.toml",
            "-o",
            "out.png",
            "--stats",
            "no/dir/s.json",
        ],
        &["cannot write no/dir/s.json"],
    );
    fs::create_dir(s.path("folder")).unwrap();
    s.fails(
        &["render", "ok.toml", "-o", "out.png", "--stats", "folder"],
        &["cannot write folder", "is a directory"],
    );
    s.fails(
        &["render", "ok.toml", "-o", "out.png", "--workmap", "out.png"],
        &["out.png is named as two outputs"],
    );
    s.fails(
        &["validate", "ok.toml", "-o", "folder"],
        &["cannot write folder", "is a directory"],
    );
    // A name the system takes, but whose temporary twin (`.NAME.XXXXXX.tmp`) is too long for it:
    // only trying to create a file finds that out.
    let long = format!("{}.png", "x".repeat(246));
    s.fails(
        &["render", "ok.toml", "-o", &long],
        &[&format!("cannot write {long}: file name too long")],
    );
}

/// The three benchmarks that write files, each as small as it goes, into `out`.
fn benches(out: &str) -> [Vec<&str>; 3] {
    let tiny = ["--threads", "1", "--repeat", "1", "--out", out];
    [
        [&["bench", "sweep", "ok.toml", "--tiles", "8"][..], &tiny].concat(),
        [
            &["bench", "scaling", "ok.toml", "--threads", "1"][..],
            &tiny[2..],
        ]
        .concat(),
        vec![
            "bench",
            "deque",
            "--elements",
            "10",
            "--iterations",
            "1",
            "--out",
            out,
        ],
    ]
}

#[test]
fn bench_outputs_that_cannot_be_written_fail_before_any_render() {
    let s = Scratch::new();
    s.write("ok.toml", &scene_with(""));
    // A folder under a regular file cannot be created.
    for args in benches("out.png/results") {
        s.fails(&args, &["cannot create out.png/results: not a directory"]);
    }
    // A file the benchmark would write is a folder.
    for (args, name) in
        benches("taken")
            .iter()
            .zip(["sweep-paired.csv", "scaling.svg", "deque.csv"])
    {
        fs::create_dir_all(s.path("taken").join(name)).unwrap();
        s.fails(
            args,
            &[&format!("cannot write taken/{name}: is a directory")],
        );
    }
}

#[test]
fn bench_outputs_in_a_read_only_folder_fail_before_any_render() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new();
    s.write("ok.toml", &scene_with(""));
    let folder = s.path("read-only");
    fs::create_dir(&folder).unwrap();
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o555)).unwrap();
    // A privileged user writes into read-only folders: then raylb runs without the
    // capability that lets it (CAP_DAC_OVERRIDE), where `setpriv` can take it away.
    let privileged = fs::write(folder.join("probe"), "").is_ok();
    let _ = fs::remove_file(folder.join("probe"));
    let unprivileged = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--bounding-set=-dac_override,-dac_read_search"])
            .arg(env!("CARGO_BIN_EXE_raylb"))
            .args(args)
            .current_dir(s.dir.path())
            .output()
    };
    if privileged && unprivileged(&["--version"]).is_err() {
        eprintln!("skipped: running privileged, and no `setpriv` to drop the privilege");
        return;
    }
    for (args, name) in benches("read-only")
        .iter()
        .zip(["sweep.csv", "scaling.csv", "deque.csv"])
    {
        let out = if privileged {
            unprivileged(args).unwrap()
        } else {
            s.raylb(args)
        };
        s.failed(
            &out,
            args,
            &[&format!("cannot write read-only/{name}: permission denied")],
        );
    }
    // `render` and `validate` check the same way.
    for args in [
        &["render", "ok.toml", "-o", "read-only/x.png"][..],
        &[
            "validate",
            "ok.toml",
            "--threads",
            "1",
            "-o",
            "read-only/x.png",
        ],
    ] {
        let out = if privileged {
            unprivileged(args).unwrap()
        } else {
            s.raylb(args)
        };
        s.failed(
            &out,
            args,
            &["cannot write read-only/x.png: permission denied"],
        );
    }
    assert_eq!(
        fs::read_dir(&folder).unwrap().count(),
        0,
        "nothing left behind"
    );
}

#[test]
fn arrays_of_the_wrong_length() {
    let s = Scratch::new();
    s.write(
        "long.toml",
        &scene_with("").replace("position = [0, 0, 5]", "position = [0, 0, 5, 7]"),
    );
    s.fails(
        &["render", "long.toml", "-o", "out.png"],
        &[
            "long.toml:6:12:",
            "`position`",
            "invalid length 4, expected an array of 3",
        ],
    );
    s.write(
        "short.toml",
        &scene_with("").replace("[1, 1, 0], [-1, 1, 0]]", "[1, 1, 0]]"),
    );
    s.fails(
        &["render", "short.toml", "-o", "out.png"],
        &[
            "short.toml:10:",
            "`corners`",
            "invalid length 3, expected an array of 4",
        ],
    );
    s.write(
        "rgb.toml",
        &scene_with("\n[render]\nambient = [0.1, 0.2]\n"),
    );
    s.fails(
        &["render", "rgb.toml", "-o", "out.png"],
        &["rgb.toml:13:11:", "`ambient`", "invalid length 2"],
    );
    s.write(
        "lathe.toml",
        &scene_with("\n[[objects]]\nlathe = { profile = [[1, 0, 3], [1, 1]], segments = 8 }\n"),
    );
    s.fails(
        &["render", "lathe.toml", "-o", "out.png"],
        &[
            "lathe.toml:13:",
            "`profile`",
            "invalid length 3, expected an array of 2",
        ],
    );
}

#[test]
fn runaway_work_is_refused() {
    let s = Scratch::new();
    s.write("cut.toml", &scene_with("\n[render]\nweight_cutoff = 0\n"));
    s.fails(
        &["render", "cut.toml", "-o", "out.png"],
        &["cut.toml:13:17:", "`weight_cutoff`", "between 0.0001 and 1"],
    );
    s.write(
        "bright.toml",
        &scene_with("\n[materials.m]\nreflectivity = 1\nrefractivity = [0.5, 0, 0]\n"),
    );
    s.fails(
        &["render", "bright.toml", "-o", "out.png"],
        &["bright.toml:12:1:", "[materials.m]", "add up to 1.5"],
    );
    let heap = "scatter = { shape = \"coin\", count = 100000, center = [0, 0, 0], radius = 1, height = 1, size = 0.1, segments = 256 }";
    s.write(
        "heap.toml",
        &scene_with(&format!("\n[[objects]]\n{heap}\n")),
    );
    s.fails(
        &["render", "heap.toml", "-o", "out.png"],
        &[
            "heap.toml:12:1:",
            "would add 102400000 triangles",
            "at most 20000000",
        ],
    );
}

#[test]
fn vectors_too_short_or_coordinates_too_large() {
    let s = Scratch::new();
    s.write("spot.toml", &scene_with("\n[[lights]]\nposition = [0, 5, 0]\nspot = { direction = [1e-30, -1e-30, 0], angle = 30 }\n"));
    s.fails(
        &["render", "spot.toml", "-o", "out.png"],
        &["spot.toml:12:1:", "too short to normalise"],
    );
    s.write(
        "cam.toml",
        &scene_with("").replace("look_at = [0, 0, 0]", "direction = [1e-25, -1, 0]"),
    );
    s.fails(
        &["render", "cam.toml", "-o", "out.png"],
        &["cam.toml:5:1:", "zero or parallel"],
    );
    s.write("huge.toml", &scene_with("scale = 1e38\n"));
    s.fails(
        &["render", "huge.toml", "-o", "out.png"],
        &["huge.toml:9:1:", "too large", "overflows"],
    );
    // A spot aimed along a vector too long to normalise is told so, not called too short.
    s.write("long.toml", &scene_with("\n[[lights]]\nposition = [0, 5, 0]\nspot = { direction = [0, -1e30, 0], angle = 30 }\n"));
    s.fails(
        &["render", "long.toml", "-o", "out.png"],
        &[
            "long.toml:12:1:",
            "`direction` = [0.0, -1e30, 0.0], is too long for single precision",
        ],
    );
    // A light so far away that the way to it cannot be normalised would light nothing.
    s.write(
        "far.toml",
        &scene_with("\n[[lights]]\nposition = [0, 5e19, 4e19]\n"),
    );
    s.fails(
        &["render", "far.toml", "-o", "out.png"],
        &[
            "far.toml:12:1:",
            "the light at [0.0, 5e19, 4e19] is too far from the objects",
        ],
    );
    s.write(
        "near.toml",
        &scene_with("\n[[lights]]\nposition = [0, 5e18, 4e18]\n"),
    );
    let near = s.raylb(&["render", "near.toml", "-o", "near.png", "-q"]);
    assert!(near.status.success(), "{near:?}");
}

#[test]
fn device_and_balancer_must_agree_and_a_missing_gpu_is_one_line() {
    let s = Scratch::new();
    s.write("ok.toml", &scene_with(""));
    s.fails(
        &[
            "render",
            "ok.toml",
            "-o",
            "out.png",
            "--balancer",
            "cuda-managed",
        ],
        &["--balancer cuda-managed runs only with --device gpu"],
    );
    s.fails(
        &[
            "render",
            "ok.toml",
            "-o",
            "out.png",
            "--device",
            "gpu",
            "--balancer",
            "rayon",
        ],
        &["--balancer rayon runs only with --device cpu"],
    );
    s.fails(
        &[
            "render",
            "ok.toml",
            "-o",
            "out.png",
            "--device",
            "gpu",
            "--threads",
            "2",
        ],
        &["--threads applies to --device cpu"],
    );
    // Without a GPU (as on CI): one line saying which part is missing, exit 2, nothing
    // written. With one, the render must simply succeed.
    let out = s.raylb(&["render", "ok.toml", "-o", "gpu.png", "--device", "gpu"]);
    if out.status.success() {
        assert!(s.path("gpu.png").exists());
        return;
    }
    s.fails(
        &[
            "render",
            "ok.toml",
            "-o",
            "out.png",
            "--device",
            "gpu",
            "--balancer",
            "stealing",
        ],
        &["--device gpu: no "],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        ["no NVIDIA driver", "no CUDA device", "no NVRTC"]
            .iter()
            .any(|m| stderr.contains(m)),
        "{stderr}"
    );
    assert!(!s.path("gpu.png").exists());
    // Each command names the flag it was given.
    let args = ["validate", "ok.toml", "--gpu"];
    let out = s.raylb(&args);
    s.failed(&out, &args, &["--gpu: no "]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("--device"),
        "{out:?}"
    );
}

#[test]
fn record_names_the_device_it_was_given() {
    let s = Scratch::new();
    s.write("ok.toml", &scene_with(""));
    for device in ["gpu", "hybrid"] {
        s.fails(
            &["record", "ok.toml", "--device", device, "-o", "out.tasks"],
            &[&format!(
                "--device {device}: raylb record counts and times the CPU's tasks"
            )],
        );
    }
    assert!(!s.path("out.tasks").exists());
}

#[test]
fn compare_refuses_inputs_it_cannot_read() {
    let s = Scratch::new();
    png16(&s.path("a.png"), 4, 4, &[1000; 48]);
    fs::create_dir(s.path("folder")).unwrap();
    s.fails(
        &["compare", "folder", "a.png"],
        &["folder: not a regular file (a directory)"],
    );
    s.fails(
        &["compare", "a.png", "/dev/zero"],
        &["/dev/zero: not a regular file (a character device)"],
    );
    let made = Command::new("mkfifo").arg(s.path("fifo")).status();
    assert!(made.is_ok_and(|st| st.success()), "mkfifo");
    s.fails(
        &["compare", "fifo", "a.png"],
        &["fifo: not a regular file (a FIFO)"],
    );
    s.fails(
        &["compare", "a.png", "nope.png"],
        &["nope.png: cannot read: no such file"],
    );
}

#[test]
fn compare_refuses_a_difference_image_it_cannot_write() {
    let s = Scratch::new();
    png16(&s.path("a.png"), 4, 4, &[1000; 48]);
    png16(&s.path("b.png"), 4, 4, &[2000; 48]);
    png16(&s.path("small.png"), 2, 2, &[0; 12]);
    let a_before = fs::read(s.path("a.png")).unwrap();
    let b_before = fs::read(s.path("b.png")).unwrap();
    fs::hard_link(s.path("a.png"), s.path("hard.png")).unwrap();
    std::os::unix::fs::symlink("b.png", s.path("link.png")).unwrap();
    s.fails(
        &["compare", "a.png", "b.png", "--diff", "a.png"],
        &["--diff a.png: is a.png, an input of this run"],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--diff", "./hard.png"],
        &["--diff ./hard.png: is a.png, an input of this run"],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--diff", "link.png"],
        &["--diff link.png: is b.png, an input of this run"],
    );
    assert_eq!(fs::read(s.path("a.png")).unwrap(), a_before);
    assert_eq!(fs::read(s.path("b.png")).unwrap(), b_before);

    // Images of different sizes differ (exit 1); no difference image is drawn, and the
    // note says so.
    let out = s.raylb(&["compare", "a.png", "small.png", "--diff", "out.png"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "differ: sizes 4×4 vs 2×2\n"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("no difference image written to out.png: the images have different sizes")
    );
    assert_eq!(fs::read(s.path("out.png")).unwrap(), OLD_OUTPUT);
    s.fails(
        &["compare", "a.png", "b.png", "--diff", "out.exr"],
        &["--diff out.exr: this image is 8-bit colour, written as PNG, not OpenEXR"],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--diff", "out"],
        &["--diff out: this image is 8-bit colour, written as PNG; name it .png"],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--diff", "no/dir/out.png"],
        &["cannot write no/dir/out.png: no such directory: no/dir"],
    );
    for name in ["out.exr", "out", "hard.png.tmp"] {
        assert!(!s.path(name).exists(), "{name} written");
    }
}

#[test]
fn compare_bounds_its_memory() {
    let s = Scratch::new();
    // As long as 23000 × 23000 × 8 bytes could compress to: refused by the limit, not as
    // truncated.
    let huge = png_with_idat(23000, 23000, &vec![0; 4_100_776]);
    fs::write(s.path("huge.png"), &huge).unwrap();
    fs::write(s.path("huge2.png"), &huge).unwrap();
    // 64×64 16-bit RGB: 24 KiB decoded from a file of a few hundred bytes.
    png16(&s.path("a.png"), 64, 64, &[1000; 64 * 64 * 3]);
    png16(&s.path("b.png"), 64, 64, &[2000; 64 * 64 * 3]);
    s.fails(
        &["compare", "huge.png", "huge2.png", "--max-memory", "1G"],
        &["huge.png: decoding needs 3.9 GiB (23000×23000, 16-bit RGBA), more than the 1.0 GiB allowed"],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--max-memory", "40000"],
        &["b.png: decoding needs 24.0 KiB (64×64, 16-bit RGB), more than the 15.1 KiB left of the 39.1 KiB allowed once a.png is in memory"],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--max-memory", "50000", "--diff", "out.png"],
        &["--diff out.png: drawing needs 12.0 KiB (64×64, 8-bit RGB), more than the 848 B left of the 48.8 KiB allowed once a.png and b.png are in memory"],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--max-memory", "100"],
        &[
            "a.png: decoding needs 24.0 KiB",
            "more than the 100 B allowed",
        ],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--max-memory", "0"],
        &["--max-memory", "a size must be at least 1 byte"],
    );
    s.fails(
        &["compare", "a.png", "b.png", "--max-memory", "5MB"],
        &["--max-memory", "unknown unit `MB`"],
    );
    // Within the limit, the same comparison runs.
    let out = s.raylb(&[
        "compare",
        "a.png",
        "b.png",
        "--max-memory",
        "64K",
        "--diff",
        "d.png",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(s.path("d.png").exists());
}

#[test]
fn compare_refuses_corrupt_headers_as_errors_not_differences() {
    let s = Scratch::new();
    png16(&s.path("small.png"), 4, 4, &[1000; 48]);
    // 57 bytes declaring 100000 × 100000 pixels: at least 77.5 MB however compressed.
    fs::write(s.path("header.png"), png_header_only(100_000, 100_000)).unwrap();
    let corrupt = "header.png: not a readable PNG image: its 57 bytes cannot hold the 100000×100000 pixels its header declares (they compress to at least 77519380 bytes); it is truncated or corrupt";
    s.fails(&["compare", "header.png", "small.png"], &[corrupt]);
    s.fails(
        &[
            "compare",
            "header.png",
            "header.png",
            "--max-memory",
            "100T",
        ],
        &[corrupt],
    );
    let pfm = |header: &str| [header.as_bytes(), &[0; 12]].concat();
    fs::write(s.path("huge.pfm"), pfm("PF\n4000000000 4000000000\n-1.0\n")).unwrap();
    s.fails(
        &["compare", "small.png", "huge.pfm"],
        &[
            "huge.pfm: it declares 4000000000×4000000000 pixels of 32-bit float RGB: 192000000000000000000 bytes of samples, more than can be addressed",
        ],
    );
    fs::write(s.path("short.pfm"), pfm("PF\n100000 100000\n-1.0\n")).unwrap();
    s.fails(
        &["compare", "short.pfm", "small.png"],
        &["short.pfm: not a readable PFM image: it ends early (truncated)"],
    );
    // An OpenEXR data window from x = 1000000 down to x = −1000000: the exr crate would
    // swap the two and read 2000001 × 4 pixels.
    exr::prelude::write_rgb_file(s.path("a.exr"), 4, 4, |_, _| (0.5f32, 0.25f32, 1.0f32)).unwrap();
    let mut exr = fs::read(s.path("a.exr")).unwrap();
    let key = b"dataWindow\0box2i\0\x10\0\0\0";
    let at = exr.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    exr[at..at + 4].copy_from_slice(&1_000_000i32.to_le_bytes());
    exr[at + 8..at + 12].copy_from_slice(&(-1_000_000i32).to_le_bytes());
    fs::write(s.path("inverted.exr"), exr).unwrap();
    s.fails(
        &["compare", "inverted.exr", "small.png"],
        &[
            "inverted.exr: not a readable OpenEXR image: its data window runs from (1000000, 0) to (-1000000, 3), a maximum below its minimum",
        ],
    );
}

#[test]
fn compare_gives_the_true_size_of_an_image_beyond_the_address_space() {
    let s = Scratch::new();
    png16(&s.path("small.png"), 4, 4, &[1000; 48]);
    let side = i32::MAX as u32;
    fs::write(s.path("vast.png"), png_header_only(side, side)).unwrap();
    let args = ["compare", "vast.png", "small.png"];
    let out = s.raylb(&args);
    s.failed(
        &out,
        &args,
        &[
            "vast.png: not a readable PNG image: it declares 2147483647×2147483647 pixels of 16-bit RGBA: 36893488113059364872 bytes of samples, more than can be addressed",
        ],
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("EiB"),
        "{out:?}"
    );
}

#[test]
fn compare_reports_memory_it_cannot_have_in_one_line() {
    let s = Scratch::new();
    // 10000 × 10000 16-bit RGBA: 762.9 MiB of samples, in a file as long as they could
    // compress to. --max-memory lets it through to the allocation, which an address space
    // of about 490 MiB refuses.
    fs::write(
        s.path("big.png"),
        png_with_idat(10_000, 10_000, &vec![0; 775_194]),
    )
    .unwrap();
    let args = ["compare", "big.png", "big.png", "--max-memory", "100T"];
    let out = s.raylb_limited(500_000, &args);
    s.failed(
        &out,
        &args,
        &["big.png: cannot allocate 762.9 MiB for the decoded samples: out of memory (10000×10000, 16-bit RGBA)"],
    );
}

#[test]
fn compare_reports_a_difference_image_it_cannot_allocate_in_one_line() {
    let s = Scratch::new();
    // 20000 × 20000 1-bit grey: 400 MB decoded (a byte a pixel), twice, and a difference
    // image of 1.2 GB (three bytes a pixel), which an address space of about 1.4 GiB refuses.
    let side = 20_000u32;
    let file = std::io::BufWriter::new(fs::File::create(s.path("grey.png")).unwrap());
    let mut encoder = png::Encoder::new(file, side, side);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::One);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&vec![0; 2500 * 20_000]).unwrap();
    writer.finish().unwrap();
    let args = [
        "compare",
        "grey.png",
        "grey.png",
        "--diff",
        "d.png",
        "--max-memory",
        "100T",
    ];
    let out = s.raylb_limited(1_500_000, &args);
    s.failed(
        &out,
        &args,
        &["--diff d.png: cannot allocate 1.1 GiB for the difference image: out of memory"],
    );
    assert!(!s.path("d.png").exists());
}

#[test]
fn bench_deque_checks_its_memory_before_making_its_deques() {
    let s = Scratch::new();
    // Two threads, each a deque of 60 million 12-byte slots.
    let bench = [
        "bench",
        "deque",
        "--elements",
        "30000000",
        "--threads",
        "2",
        "--out",
        "bench-out",
    ];
    let with = |extra: &[&'static str]| [&bench[..], extra].concat();
    s.fails(
        &with(&["--max-memory", "1G"]),
        &[
            "--elements 30000000 on 2 threads: the deques need about 1.3 GiB (686.6 MiB a thread), more than the 1.0 GiB available (--max-memory)",
        ],
    );
    // Without --max-memory, the address-space limit is found and kept to.
    let out = s.raylb_limited(1_000_000, &bench);
    s.failed(
        &out,
        &bench,
        &["the deques need about 1.3 GiB", "(address-space limit)"],
    );
    // With a --max-memory beyond it, the allocation itself fails: an error, not an abort.
    let args = with(&["--max-memory", "100T"]);
    let out = s.raylb_limited(1_000_000, &args);
    s.failed(
        &out,
        &args,
        &["--elements 30000000: cannot allocate 2 deques of 60000000 slots: out of memory"],
    );
    assert!(!s.path("bench-out").exists());
}

/// `bench build` on more threads than `ulimit -v` leaves room for is refused before any
/// starts, where the threads' stacks and malloc arenas used to leave a build's allocation to
/// fail and abort the process.
#[test]
fn bench_build_on_threads_the_address_space_cannot_hold_is_refused() {
    let s = Scratch::new();
    let quick = scene_path("quick");
    // One thread for the scene's own build, and the default worker stacks, whatever the
    // machine and the environment: the refusal is then the benchmark's.
    let limited = |args: &[&str]| {
        Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1500000 && exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_raylb"))
            .args(args)
            .env("RAYON_NUM_THREADS", "1")
            .env_remove("RUST_MIN_STACK")
            .current_dir(s.dir.path())
            .output()
            .expect("sh runs")
    };
    let build = ["bench", "build", quick.to_str().unwrap(), "--repeat", "1"];
    for (extra, says) in [
        (
            &["--threads", "4096"][..],
            "--threads 4096: the build's threads reserve",
        ),
        (
            &["--threads", "2", "--against", "4096"],
            "--against 4096: the build's threads reserve",
        ),
    ] {
        let args = [&build[..], extra].concat();
        let out = limited(&args);
        s.failed(
            &out,
            &args,
            &[says, "GiB of address space", "left under ulimit -v"],
        );
    }
}

/// A scene of one heightfield of `x × z` cells (two triangles each).
fn heightfield(x: u32, z: u32) -> String {
    format!(
        "[image]\nwidth = 8\nheight = 8\n\n[camera]\nposition = [0, 5, 5]\nlook_at = [0, 0, 0]\n\n\
         [[objects]]\nheightfield = {{ size = [10, 10], resolution = [{x}, {z}], height = 1 }}\n"
    )
}

#[test]
fn export_takes_the_memory_of_the_triangles_alone() {
    let s = Scratch::new();
    // 131,072 triangles: about 13 MB read alone, 34 MB in the wide BVH.
    s.write("ground.toml", &heightfield(256, 256));
    let args = [
        "render",
        "ground.toml",
        "--max-memory",
        "25M",
        "-o",
        "out.png",
    ];
    let out = s.raylb(&args);
    s.failed(&out, &args, &["bytes each in the wide structure"]);
    let succeeds = |args: &[&str]| {
        let out = s.raylb(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
    };
    succeeds(&[
        "export",
        "ground.toml",
        "--max-memory",
        "25M",
        "-o",
        "ground.ply",
    ]);
    let written = fs::read(s.path("ground.ply")).unwrap();
    let header = String::from_utf8_lossy(&written[..written.len().min(300)]);
    assert!(header.contains("element face 131072\n"), "{header}");
    let args = [
        "export",
        "ground.toml",
        "--max-memory",
        "10M",
        "-o",
        "small.ply",
    ];
    let out = s.raylb(&args);
    s.failed(&out, &args, &["100 bytes each as triangles alone"]);
    assert!(!s.path("small.ply").exists());
    // An OBJ file's reading takes more than its triangles: its text, and what is kept of its
    // faces while they are read (about 35 MB for these).
    succeeds(&["export", "ground.toml", "-o", "ground.obj", "-q"]);
    let args = [
        "export",
        "--mesh",
        "ground.obj",
        "--max-memory",
        "25M",
        "-o",
        "again.ply",
    ];
    let out = s.raylb(&args);
    s.failed(
        &out,
        &args,
        &["ground.obj: reading it takes about", "for its faces"],
    );
    assert!(!s.path("again.ply").exists());
    succeeds(&[
        "export",
        "--mesh",
        "ground.obj",
        "--max-memory",
        "50M",
        "-o",
        "again.ply",
    ]);
    assert_eq!(fs::read(s.path("again.ply")).unwrap(), written);
}

#[test]
fn a_scene_beyond_the_address_space_is_one_line() {
    let s = Scratch::new();
    // --max-memory lifts the triangle budget; the address space is what runs out.
    // 8.4 million triangles: their arrays (76 bytes each) do not fit beside the generated
    // mesh.
    s.write("mesh.toml", &heightfield(2048, 2048));
    let args = [
        "render",
        "mesh.toml",
        "--max-memory",
        "100T",
        "-o",
        "out.png",
    ];
    let out = s.raylb_limited(900_000, &args);
    s.failed(
        &out,
        &args,
        &["mesh.toml:9:1: cannot allocate", ": out of memory"],
    );
    // 4.2 million: their arrays fit, the wide BVH's build beside them does not.
    s.write("bvh.toml", &heightfield(2048, 1024));
    let args = [
        "render",
        "bvh.toml",
        "--max-memory",
        "100T",
        "-o",
        "out.png",
        "--quiet",
    ];
    let out = s.raylb_limited(900_000, &args);
    s.failed(
        &out,
        &args,
        &[
            "bvh.toml: cannot allocate",
            "for building the wide BVH: out of memory",
        ],
    );
}

#[test]
fn a_mesh_path_with_control_characters_is_shown_escaped() {
    let s = Scratch::new();
    s.write(
        "nul.toml",
        &scene_with("\n[[objects]]\nmesh = \"a\\u0000b\\nc.obj\"\n"),
    );
    let args = ["render", "nul.toml", "-o", "out.png"];
    let out = s.raylb(&args);
    s.failed(
        &out,
        &args,
        &["nul.toml:13:8:", "a\\0b\\nc.obj: cannot read"],
    );
    assert!(!out.stderr.contains(&0), "a NUL byte in {out:?}");
}

#[test]
fn a_camera_too_far_away_names_its_keys() {
    let s = Scratch::new();
    s.write(
        "far.toml",
        &scene_with("").replace("position = [0, 0, 5]", "position = [0, 0, 3e38]"),
    );
    s.fails(
        &["render", "far.toml", "-o", "out.png"],
        &[
            "far.toml:5:1: the viewing direction, `look_at` − `position` = [0.0, 0.0, -3e38], is too long for single precision",
        ],
    );
    s.write(
        "up.toml",
        &scene_with("").replace(
            "look_at = [0, 0, 0]",
            "look_at = [0, 0, 0]\nup = [0, 3e19, 0]",
        ),
    );
    s.fails(
        &["render", "up.toml", "-o", "out.png"],
        &["up.toml:5:1: `up` = [0.0, 3e19, 0.0] is too long for single precision"],
    );
}
