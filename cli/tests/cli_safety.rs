//! Nothing lost, nothing silent: a closed or full standard output, outputs that name inputs,
//! validations that would compare nothing, and flags that do not apply.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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
    let quick = quick();
    // The help and the version too: what was asked for is not there.
    for args in [
        &["render", &quick, "-o", "q.png"][..],
        // The stats, held for standard output until the image is in place.
        &[
            "render",
            &quick,
            "-o",
            "s.png",
            "--stats",
            "/dev/stdout",
            "-q",
        ],
        &["--help"],
        &["render", "--help"],
        &["--version"],
    ] {
        let out = raylb()
            .args(args)
            .current_dir(dir.path())
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("cannot write to standard output: no space left"),
            "{args:?}: {err}"
        );
    }
    // Only standard output failed: the image is in place.
    assert!(dir.path().join("s.png").is_file());
}

/// Runs a command that must fail before doing anything: exit 2, one line on stderr holding
/// every part of `expected`, nothing on stdout, nothing written in its folder.
fn refused(args: &[&str], expected: &[&str]) {
    let out = refused_after(args, expected);
    assert!(
        out.stdout.is_empty(),
        "{args:?}: printed {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Runs a command that must fail with exit 2 and one line on stderr holding every part of
/// `expected`, with nothing written in its folder; it may have printed its progress on stdout
/// first (the `scene` and `bvh` lines of a frame refused after loading). Returns its output.
fn refused_after(args: &[&str], expected: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let out = raylb().args(args).current_dir(dir.path()).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    for part in expected {
        assert!(err.contains(part), "{args:?}: `{part}` not in {err}");
    }
    let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{args:?}: wrote {left:?}");
    out
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
            "--accels",
            "wide",
            "--packets",
            "on",
        ],
        &["nothing to compare", "1 render"],
    );
    refused(
        &["validate", &quick, "--gpu", "--balancers", "rayon"],
        &["--gpu", "none of the balancers given runs on the GPU"],
    );
    refused(
        &["validate", &quick, "--gpu", "--gpu-balancers", "rayon"],
        &["--gpu", "none of the balancers given runs on the GPU"],
    );
    refused(
        &["validate", &quick, "--gpu-balancers", "static"],
        &["--gpu"],
    );
    refused(
        &[
            "validate",
            &quick,
            "--gpu",
            "--balancers",
            "cuda-managed",
            "--threads",
            "1,2",
        ],
        &["--threads applies to the CPU's balancers"],
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
        (
            &["--first-batch", "all"],
            "--first-batch applies to --device hybrid, not to --balancer static",
        ),
        (
            &[
                "--device",
                "gpu",
                "--balancer",
                "stealing",
                "--first-batch",
                "all",
            ],
            "--first-batch applies to --device hybrid",
        ),
        (
            &["--gpu-emulator"],
            "--gpu-emulator runs the GPU's kernels, which --device cpu does not",
        ),
    ];
    for (flags, message) in cases {
        let mut args = vec!["render", quick.as_str(), "-o", "q.png"];
        args.extend_from_slice(flags);
        refused(&args, &[message]);
    }
    refused(
        &["validate", &quick, "--threads", "1", "--gpu-emulator"],
        &["--gpu-emulator runs the GPU's kernels: give --gpu or --hybrid as well"],
    );
    refused(
        &["render", &quick, "-o", "q.png", "--up", "z"],
        &["--up and --view frame a bare --mesh"],
    );
    // The framing flags belong to the commands that take a bare --mesh: the benchmarks over
    // scene files alone, and `export`, which writes no camera, do not take them.
    for args in [
        &["bench", "sweep", &quick, "--up", "z"][..],
        &["bench", "scaling", &quick, "--view", "+x"],
        &["export", &quick, "-o", "q.obj", "--up", "z"],
    ] {
        refused(args, &["unexpected argument"]);
    }
    let crystal = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/crystal.obj");
    refused(
        &[
            "render",
            "--mesh",
            crystal.to_str().unwrap(),
            "--up",
            "z",
            "--view",
            "-z",
        ],
        &["--up +z and --view -z: one axis cannot be both"],
    );
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

/// A folder with a copy of `cornell` whose crystal mesh and material library sit beside it.
fn cornell_with_crystal(dir: &Path) -> PathBuf {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
    for name in ["crystal.obj", "crystal.mtl"] {
        fs::copy(assets.join(name), dir.join(name)).unwrap();
    }
    let scene = fs::read_to_string(scene_path("cornell"))
        .unwrap()
        .replace("../assets/crystal.obj", "crystal.obj");
    let path = dir.join("cornell.toml");
    fs::write(&path, scene).unwrap();
    path
}

/// Runs `raylb args` in `dir`; it must fail with exit 2 and one line holding `expected`,
/// and leave every file in `dir` as it was.
fn refused_in(dir: &Path, args: &[&str], expected: &str) {
    let before = snapshot(dir);
    let out = raylb().args(args).current_dir(dir).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.contains(expected),
        "{args:?}: `{expected}` not in {err}"
    );
    assert_eq!(snapshot(dir), before, "{args:?}: files changed");
}

/// Every file in `dir` (not following links) with its length and, below a megabyte, its
/// contents.
fn snapshot(dir: &Path) -> Vec<(String, u64, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| fs::symlink_metadata(p).unwrap().is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let len = fs::metadata(&p).unwrap().len();
            let bytes = if len < 1 << 20 {
                fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            (name, len, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn no_output_replaces_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    cornell_with_crystal(d);
    std::os::unix::fs::symlink("cornell.toml", d.join("link.png")).unwrap();
    fs::hard_link(d.join("crystal.mtl"), d.join("hard.png")).unwrap();
    std::os::unix::fs::symlink("crystal.obj", d.join("obj.png")).unwrap();
    let small = ["--width", "8", "--height", "8"];
    let cases: &[&[&str]] = &[
        &["render", "cornell.toml", "-o", "cornell.toml"],
        &["render", "cornell.toml", "-o", "./cornell.toml"],
        &["render", "cornell.toml", "-o", "link.png"],
        &["render", "cornell.toml", "--stats", "cornell.toml"],
        &["render", "cornell.toml", "--workmap", "obj.png"],
        &["render", "cornell.toml", "--stats", "crystal.mtl"],
        &["render", "cornell.toml", "-o", "hard.png"],
        &["render", "--mesh", "crystal.obj", "-o", "crystal.obj"],
        &[
            "validate",
            "cornell.toml",
            "-o",
            "cornell.toml",
            "--threads",
            "1,2",
            "--tiles",
            "8",
        ],
        &[
            "validate",
            "cornell.toml",
            "-o",
            "obj.png",
            "--threads",
            "1,2",
            "--tiles",
            "8",
        ],
        &[
            "view",
            "cornell.toml",
            "--frames",
            "1",
            "--screenshot",
            "link.png",
        ],
    ];
    for case in cases {
        let mut args = case.to_vec();
        args.extend(small);
        refused_in(d, &args, "raylb never writes over what it reads");
    }
}

#[test]
fn one_file_named_twice_is_refused_however_it_is_spelled() {
    let quick = quick();
    refused(
        &["render", &quick, "-o", "q.png", "--workmap", "./q.png"],
        &["q.png and ./q.png are one file, named as two outputs"],
    );
    refused(
        &["render", &quick, "-o", "q.png", "--stats", "q.png"],
        &["q.png is named as two outputs"],
    );
    // Standard output is one place however it is named, and --json writes there.
    refused(
        &["render", &quick, "--json", "--stats", "/dev/stdout"],
        &["--json and --stats /dev/stdout both write to standard output"],
    );
    refused(
        &[
            "render",
            &quick,
            "--workmap",
            "/dev/fd/1",
            "--stats",
            "/dev/stdout",
            "-q",
        ],
        &["--workmap /dev/fd/1 and --stats /dev/stdout both write to standard output"],
    );
    refused(
        &["render", &quick, "--stats", "/dev/stdout"],
        &[
            "the summary (leave it out with -q) and --stats /dev/stdout both write to standard output",
        ],
    );
    // Every command that prints beside a file it writes: through a link named as the format
    // asks.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in ["out.tasks", "out.ply", "out.rays", "out.png"] {
        std::os::unix::fs::symlink("/dev/stdout", d.join(name)).unwrap();
    }
    let image = d.join("a.png");
    let made = raylb()
        .args([
            "render", &quick, "--width", "8", "--height", "8", "-o", "a.png", "-q",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let image = image.to_str().unwrap();
    let summary = "the summary (leave it out with -q) and";
    for (args, said) in [
        (vec!["record", &quick, "-o", "out.tasks"], summary),
        (vec!["export", &quick, "-o", "out.ply"], summary),
        (
            vec![
                "bench", "trace", &quick, "--dump", "out.rays", "--repeat", "1",
            ],
            "the figures (leave them out with -q) and",
        ),
        (
            vec!["compare", image, image, "--diff", "out.png"],
            "the comparison's report and",
        ),
    ] {
        refused_in(d, &args, &format!("{said} "));
    }
}

#[test]
fn a_missing_mesh_names_the_scene_line_and_a_missing_library_of_an_overridden_material_warns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = fs::read_to_string(cornell_with_crystal(d)).unwrap();
    let line = scene
        .lines()
        .position(|l| l.starts_with("mesh = \"crystal.obj\""))
        .unwrap()
        + 1;
    fs::write(
        d.join("missing.toml"),
        scene.replace("crystal.obj", "gone.obj"),
    )
    .unwrap();
    refused_in(
        d,
        &["render", "missing.toml", "-o", "out.png"],
        &format!("missing.toml:{line}:8: `mesh`: gone.obj: cannot read: no such file"),
    );

    fs::remove_file(d.join("crystal.mtl")).unwrap();
    // The crystal's own material is needed: an error at the OBJ's line that names the
    // library, as every fault at a line of a mesh keeps its line.
    refused_in(
        d,
        &["render", "cornell.toml", "-o", "out.png"],
        "raylb: error: crystal.obj:3:8: `mtllib crystal.mtl`: crystal.mtl: cannot read",
    );
    // Overridden by the scene: one warning, and the render goes on.
    let overridden = scene.replace(
        "mesh = \"crystal.obj\"",
        "mesh = \"crystal.obj\"\nmaterial = \"glass\"",
    );
    fs::write(d.join("overridden.toml"), overridden).unwrap();
    let out = raylb()
        .args([
            "render",
            "overridden.toml",
            "-o",
            "out.png",
            "--width",
            "8",
            "--height",
            "8",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("raylb: warning: crystal.mtl: cannot read: no such file")
            && err.contains("the object's own `material` stands in"),
        "{err}"
    );
    assert!(d.join("out.png").exists());
    // --json keeps standard output for the JSON; the warning still goes to standard error.
    let out = raylb()
        .args(["render", "overridden.toml", "-o", "out.png", "--json"])
        .args(["--width", "8", "--height", "8"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        stderr(&out).starts_with("raylb: warning: crystal.mtl"),
        "{}",
        stderr(&out)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["scene"]["name"], "overridden");
}

#[test]
fn special_files_are_refused_without_reading_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = fs::read_to_string(cornell_with_crystal(d)).unwrap();
    // A FIFO would block the open; /dev/zero would be read until memory ran out.
    let fifo = Command::new("mkfifo").arg(d.join("fifo.toml")).status();
    if fifo.is_ok_and(|s| s.success()) {
        refused_in(
            d,
            &["render", "fifo.toml", "-o", "out.png"],
            "fifo.toml: not a regular file (a FIFO)",
        );
        // The same where the outputs are already there: the check that no output is one of
        // the inputs opens neither, or it would wait on the FIFO for a writer.
        fs::write(d.join("out.png"), "old").unwrap();
        fs::write(d.join("out.rays"), "old").unwrap();
        for args in [
            &["render", "fifo.toml", "-o", "out.png"][..],
            &["render", "--mesh", "fifo.toml", "-o", "out.png"],
            &[
                "bench",
                "trace",
                "fifo.toml",
                "--rays",
                "shadow",
                "--dump",
                "out.rays",
            ],
            &["compare", "fifo.toml", "out.png", "--diff", "out.png"],
        ] {
            let out = output_within(d, args, Duration::from_secs(60));
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        }
        assert_eq!(fs::read(d.join("out.png")).unwrap(), b"old");
        assert_eq!(fs::read(d.join("out.rays")).unwrap(), b"old");
        fs::remove_file(d.join("out.png")).unwrap();
        fs::remove_file(d.join("out.rays")).unwrap();
        // Nor is an output that is not a regular file replaced by one (think of /dev/null).
        refused_in(
            d,
            &[
                "render",
                "cornell.toml",
                "--stats",
                "fifo.toml",
                "-o",
                "out.png",
            ],
            "cannot write fifo.toml: a FIFO is there, not a regular file",
        );
        fs::remove_file(d.join("fifo.toml")).unwrap();
    }
    if Path::new("/dev/zero").exists() {
        std::os::unix::fs::symlink("/dev/zero", d.join("zero.obj")).unwrap();
        fs::write(
            d.join("zero.toml"),
            scene.replace("crystal.obj", "zero.obj"),
        )
        .unwrap();
        refused_in(
            d,
            &["render", "zero.toml", "-o", "out.png"],
            "`mesh`: zero.obj: not a regular file (a character device)",
        );
        refused_in(
            d,
            &["render", "--mesh", "zero.obj", "-o", "out.png"],
            "zero.obj: not a regular file (a character device)",
        );
        fs::write(
            d.join("lib.obj"),
            "mtllib /dev/zero\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
        )
        .unwrap();
        refused_in(
            d,
            &["render", "--mesh", "lib.obj", "-o", "out.png"],
            "/dev/zero: not a regular file (a character device)",
        );
    }
    fs::create_dir(d.join("folder.obj")).unwrap();
    refused_in(
        d,
        &["render", "--mesh", "folder.obj", "-o", "out.png"],
        "folder.obj: not a regular file (a directory)",
    );
    // A scene file far larger than any scene (sparse: it takes no disk).
    let huge = fs::File::create(d.join("huge.toml")).unwrap();
    huge.set_len(1 << 30).unwrap();
    refused_in(
        d,
        &["render", "huge.toml", "-o", "out.png"],
        "huge.toml: too large: 1073741824 bytes",
    );
}

/// Runs `raylb args` in `dir`, killed if it has not ended within `limit`: a run that blocks
/// or reads without end fails the test rather than hanging it (or filling memory).
fn output_within(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = raylb()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("raylb runs");
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("raylb's status").is_none() {
        if Instant::now() > deadline {
            child.kill().expect("raylb can be ended");
            let _ = child.wait();
            panic!("raylb {args:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("raylb's output")
}

/// `bench deque` with many more threads than cores: its thieves yield as `stealing`'s do, so
/// the owners of the last elements get the processor and each iteration ends (256 threads on
/// the two-core development machine: 0.4 s, where thieves that only spun took over a minute).
#[test]
fn the_deque_benchmark_ends_with_many_more_threads_than_cores() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "bench",
        "deque",
        "--threads",
        "256",
        "--elements",
        "1000",
        "--iterations",
        "2",
        "--out",
        "out",
        "-q",
    ];
    let out = output_within(dir.path(), &args, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = fs::read_to_string(dir.path().join("out/deque.csv")).unwrap();
    // A header, and three setups for each of the two deques.
    assert_eq!(csv.lines().count(), 7, "{csv}");
}

#[test]
fn scenes_lists_a_special_or_oversized_file_in_a_row_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::copy(scene_path("quick"), d.join("quick.toml")).unwrap();
    // Named to sort first: a listing that opened the FIFO would block there.
    let fifo = Command::new("mkfifo").arg(d.join("fifo.toml")).status();
    let fifo = fifo.is_ok_and(|s| s.success());
    let zero = Path::new("/dev/zero").exists();
    if zero {
        std::os::unix::fs::symlink("/dev/zero", d.join("zero.toml")).unwrap();
    }
    // Sparse: 3 GiB that take no disk.
    let huge = fs::File::create(d.join("huge.toml")).unwrap();
    huge.set_len(3 << 30).unwrap();
    drop(huge);
    // Malformed: not TOML, and TOML without an image size.
    fs::write(
        d.join("garbled.toml"),
        "# garbled\n[image]\nwidth = 4\nheight =\n",
    )
    .unwrap();
    fs::write(
        d.join("sizeless.toml"),
        "[image]\nwidth = \"wide\"\nheight = 4\n",
    )
    .unwrap();

    let out = output_within(d, &["scenes", "."], Duration::from_secs(10));
    let listing = String::from_utf8_lossy(&out.stdout);
    let err = stderr(&out);
    let row = |name: &str| {
        listing
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} not listed: {listing}"))
            .to_string()
    };
    assert!(row("quick.toml").contains("a tiny scene"), "{listing}");
    assert!(
        row("huge.toml").contains("too large: 3221225472 bytes"),
        "{listing}"
    );
    assert!(row("garbled.toml").contains("?  line 4: "), "{listing}");
    assert!(
        row("sizeless.toml").contains("?  line 2: `width`: invalid type: string \"wide\""),
        "{listing}"
    );
    let mut bad = 3;
    if fifo {
        assert!(
            row("fifo.toml").contains("not a regular file (a FIFO)"),
            "{listing}"
        );
        bad += 1;
    }
    if zero {
        assert!(
            row("zero.toml").contains("not a regular file (a character device)"),
            "{listing}"
        );
        bad += 1;
    }
    assert_eq!(listing.lines().count(), bad + 1, "{listing}");
    // The listing is whole, and the exit code says that some of it could not be read.
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("{bad} of {} scene files", bad + 1)),
        "{err}"
    );
}

#[test]
fn obj_and_mtl_statements_left_out_are_warned_of_unless_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("m.mtl"), "newmtl red\nKd 1 0 0\nmap_Kd red.png\n").unwrap();
    fs::write(
        d.join("m.obj"),
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl rde\nf 1 2 3\n",
    )
    .unwrap();
    let render = |quiet: &[&str]| {
        let out = raylb()
            .args(["render", "--mesh", "m.obj", "-o", "out.png"])
            .args(["--width", "8", "--height", "8"])
            .args(quiet)
            .current_dir(d)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    let err = render(&[]);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("raylb: warning: m.mtl:3:1: `map_Kd` is left out"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("raylb: warning: m.obj:5:1: `usemtl rde`: no material `rde` in m.mtl"),
        "{err}"
    );
    assert_eq!(render(&["--quiet"]), "");
}

#[test]
fn counts_of_one_are_singular() {
    let dir = tempfile::tempdir().unwrap();
    let out = raylb()
        .args([
            "render",
            &quick(),
            "-o",
            "q.png",
            "--threads",
            "1",
            "--tile",
            "128",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains("static/interleaved, 1 thread, packets on, 128-pixel tiles (1 tile)"),
        "{text}"
    );
}

#[test]
fn the_scene_and_bvh_lines_come_before_the_render_ends() {
    use std::io::{BufRead, BufReader};
    // treasure at 1024² on one thread renders for many seconds: long after it has loaded.
    // The image is written when the render ends, before the summary was printed in full: if
    // the first lines came only then, the image would be there when they are read.
    let dir = tempfile::tempdir().unwrap();
    let mut child = raylb()
        .args(["render", scene_path("treasure").to_str().unwrap()])
        .args(["--threads", "1", "-o", "early.png"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let scene = lines.next().unwrap().unwrap();
    let bvh = lines.next().unwrap().unwrap();
    let image_written = dir.path().join("early.png").exists();
    let _ = child.kill();
    let _ = child.wait();
    assert!(scene.starts_with("scene   treasure: 1024×1024"), "{scene}");
    assert!(bvh.starts_with("bvh     "), "{bvh}");
    assert!(
        !image_written,
        "the lines came only when the render had ended"
    );
}

#[test]
fn frames_and_scenes_larger_than_the_memory_at_hand_are_refused() {
    let quick = quick();
    refused_quietly(
        &[
            "render",
            &quick,
            "--width",
            "16384",
            "--height",
            "16384",
            "--max-memory",
            "2G",
        ],
        "the frame needs about 8.0 GiB (film 6.0 GiB,",
    );
    refused_quietly(
        &[
            "render",
            &quick,
            "--width",
            "8192",
            "--height",
            "8192",
            "--tile",
            "1",
            "--max-memory",
            "4G",
        ],
        "(tiles ",
    );
    refused_quietly(
        &[
            "validate",
            &quick,
            "--width",
            "16384",
            "--height",
            "16384",
            "--max-memory",
            "2G",
        ],
        "the frame needs about",
    );
    refused_quietly(
        &["render", &quick, "--max-memory", "150K"],
        "triangles fit in the 150.0 KiB of memory at hand",
    );
    // Below what parsing the scene's text takes, the text is refused before it is parsed.
    refused_quietly(
        &["render", &quick, "--max-memory", "100K"],
        "of scene text takes about",
    );
    // Under a real limit, without --max-memory: the limit itself is found and kept to.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 3000000 && exec '{}' render '{quick}' --width 16384 --height 16384 -o big.png",
            env!("CARGO_BIN_EXE_raylb")
        ))
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        // 8.0 GiB of data, and the workers' stacks and malloc arenas the limit counts too.
        err.contains("the frame needs about 8.") && err.contains("address-space limit"),
        "{err}"
    );
    assert!(!dir.path().join("big.png").exists());
}

/// [`refused_after`] with `-o out.png` added.
fn refused_quietly(args: &[&str], expected: &str) {
    let mut args = args.to_vec();
    args.extend(["-o", "out.png"]);
    refused_after(&args, &[expected]);
}

#[test]
fn an_image_name_must_say_a_format_raylb_writes() {
    let quick = quick();
    refused(
        &["render", &quick, "-o", "out.jpg"],
        &["-o out.jpg: unknown image extension `.jpg`; use .png, .exr or .pfm"],
    );
    refused(
        &["render", &quick, "-o", "out"],
        &["-o out: no file extension"],
    );
    refused(
        &["render", &quick, "-o", "out.png", "--half"],
        &["--half applies to -o FILE.exr"],
    );
    refused(
        &["render", &quick, "-o", "out.png", "--workmap", "work.exr"],
        &["--workmap work.exr: this image is 8-bit colour, written as PNG"],
    );
    refused(
        &["validate", &quick, "-o", "ref.tiff", "--threads", "1,2"],
        &["-o ref.tiff: unknown image extension"],
    );
    refused(
        &["view", &quick, "--frames", "1", "--screenshot", "shot.pfm"],
        &["--screenshot shot.pfm: this image is 8-bit colour"],
    );
}

#[test]
fn a_task_or_ray_file_must_be_named_for_its_format() {
    let quick = quick();
    refused(
        &["record", &quick, "-o", "frame.png"],
        &["-o frame.png: a task file is named .tasks"],
    );
    refused(
        &[
            "bench",
            "trace",
            &quick,
            "--rays",
            "shadow",
            "--dump",
            "shadow.png",
        ],
        &["--dump shadow.png: a ray file is named .rays"],
    );
    refused(
        &[
            "bench", "trace", &quick, "--rays", "shadow", "--dump", "shadow",
        ],
        &["--dump shadow: a ray file is named .rays"],
    );
}

/// `man --out` writes a page per command, and a page it cannot write is named before any is
/// written.
#[test]
fn man_writes_every_page_or_names_the_one_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| raylb().args(args).current_dir(dir.path()).output().unwrap();
    let out = run(&["man", "--out", "pages"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pages = fs::read_dir(dir.path().join("pages")).unwrap().count();
    assert!(pages > 10, "{pages} pages");
    assert!(dir.path().join("pages/raylb-bench-build.1").is_file());

    fs::create_dir_all(dir.path().join("blocked/raylb-render.1")).unwrap();
    let out = run(&["man", "--out", "blocked"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot write blocked/raylb-render.1: is a directory"),
        "{err}"
    );
    let left = fs::read_dir(dir.path().join("blocked")).unwrap().count();
    assert_eq!(left, 1, "only the folder that was there");
}

/// A mesh given where a scene file goes is named as a mesh, where it was read as TOML and
/// failed on its first line with a message about keys; `bench deque` on one thread refuses a
/// steal amount no thief would use; an image only PNG can hold, named otherwise, is told the
/// one extension it takes.
#[test]
fn a_flag_given_the_wrong_kind_of_file_or_count_says_so() {
    let mesh = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/crystal.obj");
    for args in [
        &["render", mesh, "-o", "c.png"][..],
        &["bench", "sweep", mesh],
        &["bench", "trace", mesh],
    ] {
        refused(
            args,
            &["crystal.obj: a .obj mesh, not a scene file", "--mesh"],
        );
    }
    refused(
        &["bench", "deque", "--threads", "1", "--steal", "half"],
        &["--steal half: one thread has no deque to steal from"],
    );
    let quick = quick();
    refused(
        &["view", &quick, "--frames", "1", "--screenshot", "shot.txt"],
        &["--screenshot shot.txt: this image is 8-bit colour, written as PNG; name it .png"],
    );
    refused(
        &["render", &quick, "-o", "q.png", "--workmap", "work"],
        &["--workmap work: this image is 8-bit colour, written as PNG; name it .png"],
    );
}

/// `bench build` builds the structure alone: the flags of a frame (its size, samples,
/// packets and a mesh's camera) would change nothing, and a comparison with itself says
/// nothing.
#[test]
fn bench_build_refuses_what_only_a_frame_takes() {
    let quick = quick();
    let build = ["bench", "build", quick.as_str(), "--repeat", "1"];
    for (extra, says) in [
        (
            &["--width", "64"][..],
            "--width: bench build builds the acceleration structure alone",
        ),
        (&["--height", "64"], "--height: bench build"),
        (&["--spp", "4"], "--spp: bench build"),
        (&["--packets", "on"], "--packets: bench build"),
        (
            &["--threads", "2", "--against", "2"],
            "--against 2: the same as --threads",
        ),
    ] {
        refused(&[&build[..], extra].concat(), &[says]);
    }
    let mesh = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/crystal.obj");
    refused(
        &[
            "bench", "build", "--mesh", mesh, "--up", "z", "--repeat", "1",
        ],
        &["--up: bench build"],
    );
}

/// A value given twice to a list would be run, tabled and plotted twice as if it were two:
/// every list flag of every command refuses it, numbers compared by their value and files by
/// where they are, whether the repeat is in one list or across two occurrences of the flag.
#[test]
fn a_list_that_names_a_value_twice_is_refused() {
    let quick = quick();
    // The same file by another path.
    let respelled = scene_path("quick")
        .parent()
        .unwrap()
        .join("../scenes/quick.toml")
        .to_str()
        .unwrap()
        .to_string();
    for (args, says) in [
        (
            vec!["sim", "--wool-tree", "--workers", "4,8,04", "--out", "o"],
            "--workers: 04 is given twice",
        ),
        (
            vec![
                "bench",
                "scaling",
                &quick,
                "--threads",
                "1,2",
                "--threads",
                "1",
            ],
            "--threads: 1 is given twice",
        ),
        (vec!["bench", "sweep", &quick, &quick], "SCENES: "),
        (vec!["bench", "sweep", &quick, &respelled], "(first as "),
        (
            vec![
                "bench",
                "sweep",
                &quick,
                "--balancers",
                "static,counter,static",
            ],
            "--balancers: static is given twice",
        ),
        (
            vec!["bench", "sim-sweep", &quick, "--tiles", "8,16,8"],
            "--tiles: 8 is given twice",
        ),
        (
            vec![
                "validate",
                &quick,
                "--balancers",
                "static",
                "--tiles",
                "8,8",
            ],
            "--tiles: 8 is given twice",
        ),
        (
            vec!["bench", "cluster", &quick, "--modes", "static,static"],
            "--modes: static is given twice",
        ),
    ] {
        refused(&args, &[says, "is given twice"]);
    }
}

#[test]
fn an_octree_depth_in_a_scene_the_wide_bvh_renders_is_warned_of_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = fs::read_to_string(quick()).unwrap();
    // After the scene's lines: a blank line, `[bvh]`, then the key.
    let line = scene.lines().count() + 3;
    fs::write(
        d.join("deep.toml"),
        format!("{scene}\n[bvh]\nmax_depth = 5\n"),
    )
    .unwrap();
    let render = |accel: &str| {
        raylb()
            .args(["render", "deep.toml", "-o", "out.png", "--accel", accel])
            .current_dir(d)
            .output()
            .unwrap()
    };
    let out = render("wide");
    assert!(out.status.success());
    assert_eq!(
        stderr(&out),
        format!(
            "raylb: warning: deep.toml:{line}:13: `max_depth` shapes the octree alone (--accel octree); the wide BVH is not cut at a depth\n"
        )
    );
    let out = render("octree");
    assert!(out.status.success());
    assert_eq!(stderr(&out), "");
}

#[test]
fn structures_are_named_where_they_apply() {
    let quick = quick();
    refused(
        &["validate", &quick, "--accel", "wide"],
        &["--accel: validate compares structures; name them with --accels"],
    );
    refused(
        &["validate", &quick, "--accels", "wide,wide"],
        &["--accels: wide is given twice"],
    );
    refused(
        &["render", &quick, "-o", "q.png", "--bvh-depth", "4"],
        &["--bvh-depth applies to --accel octree"],
    );
    refused(
        &["validate", &quick, "--accels", "wide", "--bvh-depth", "4"],
        &["--bvh-depth applies to --accel octree"],
    );
    refused(
        &["bench", "trace", &quick, "--bvh-depth", "4"],
        &["--bvh-depth applies to --accel octree"],
    );
    refused(
        &[
            "render",
            &quick,
            "-o",
            "q.png",
            "--accel",
            "octree",
            "--bvh-width",
            "8",
        ],
        &["--bvh-width applies to --accel wide"],
    );
    refused(
        &["validate", &quick, "--accels", "octree", "--bvh-width", "4"],
        &["--bvh-width applies to --accel wide"],
    );
    refused(
        &[
            "render",
            &quick,
            "-o",
            "q.png",
            "--accel",
            "octree",
            "--bvh-split",
            "sah",
        ],
        &["--bvh-split applies to --accel wide"],
    );
    refused(
        &["render", &quick, "-o", "q.png", "--bvh-width", "16"],
        &["children per node: 4 or 8, not 16"],
    );
    refused(
        &[
            "render",
            &quick,
            "-o",
            "q.png",
            "--accel",
            "octree",
            "--packets",
            "on",
        ],
        &["--packets on applies to --accel wide"],
    );
    refused(
        &["validate", &quick, "--accels", "octree", "--packets", "on"],
        &["--packets on applies to --accel wide"],
    );
    refused(
        &[
            "render",
            &quick,
            "-o",
            "q.png",
            "--device",
            "gpu",
            "--packets",
            "off",
        ],
        &["--packets applies to the CPU's threads"],
    );
}
