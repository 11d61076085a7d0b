//! The command line doing its job: render with stats and a work map, compare, validate,
//! benchmark.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::{ok, png16, raylb, scene_path};
use renderer::image_io::ExrPrecision;
use renderer::output::StagedFiles;

#[test]
fn render_writes_the_image_stats_and_work_map() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let out = raylb(
        dir.path(),
        &[
            "render",
            quick.to_str().unwrap(),
            "-o",
            "q.png",
            "--stats",
            "q.json",
            "--workmap",
            "w.png",
            "--threads",
            "2",
        ],
    );
    let stdout = ok(&out);
    for part in [
        "scene   quick: 96×64",
        "bvh ",
        "render  static/interleaved, 2 threads",
        "rays ",
        "workmap ",
        "wrote   q.png, w.png (work map), q.json (stats)\n",
    ] {
        assert!(stdout.contains(part), "`{part}` missing from:\n{stdout}");
    }
    let image = image::open(dir.path().join("q.png")).unwrap();
    assert_eq!((image.width(), image.height()), (96, 64));
    let map = image::open(dir.path().join("w.png")).unwrap();
    assert_eq!(
        (map.width(), map.height()),
        (96, 64 + renderer::workmap::LEGEND_HEIGHT)
    );

    let stats: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("q.json")).unwrap()).unwrap();
    let rays = &stats["render"]["rays"];
    assert_eq!(rays["camera"], 96 * 64);
    let total = ["camera", "shadow", "reflection", "refraction"]
        .iter()
        .map(|k| rays[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(rays["total"].as_u64(), Some(total));
    assert!(rays["reflection"].as_u64().unwrap() > 0 && rays["refraction"].as_u64().unwrap() > 0);
    let workers = stats["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    let worker_rays: u64 = workers
        .iter()
        .map(|w| w["rays"]["total"].as_u64().unwrap())
        .sum();
    assert_eq!(worker_rays, total, "per-worker rays add up");
    let tiles: u64 = workers.iter().map(|w| w["tiles"].as_u64().unwrap()).sum();
    assert_eq!(Some(tiles), stats["render"]["tiles"].as_u64());
    for key in ["nodes", "depth", "bytes", "build_seconds"] {
        assert!(stats["bvh"][key].as_f64().unwrap() > 0.0, "bvh.{key}");
    }
    assert!(stats["render"]["mrays_per_second"].as_f64().unwrap() > 0.0);
    assert!(
        workers
            .iter()
            .all(|w| w["busy_seconds"].as_f64().unwrap() > 0.0)
    );
    assert!(
        stats["work_map"]["max_rays_per_pixel"].as_u64().unwrap()
            > stats["work_map"]["min_rays_per_pixel"].as_u64().unwrap()
    );

    // --quiet prints nothing; the default name is the scene's.
    let quiet = raylb(dir.path(), &["render", quick.to_str().unwrap(), "--quiet"]);
    assert_eq!(ok(&quiet), "");
    assert!(dir.path().join("quick.png").exists());
}

#[test]
fn balancers_agree_through_the_cli_and_compare_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let cornell = scene_path("cornell");
    let c = cornell.to_str().unwrap();
    let size = ["--width", "64", "--height", "48"];
    ok(&raylb(
        dir.path(),
        &[
            &[
                "render",
                c,
                "-o",
                "a.png",
                "--balancer",
                "static",
                "--assign",
                "blocked",
                "--threads",
                "3",
                "--tile",
                "8",
                "-q",
            ][..],
            &size,
        ]
        .concat(),
    ));
    ok(&raylb(
        dir.path(),
        &[
            &[
                "render",
                c,
                "-o",
                "b.png",
                "--balancer",
                "counter",
                "--chunk",
                "2",
                "--threads",
                "8",
                "--tile",
                "128",
                "-q",
            ][..],
            &size,
        ]
        .concat(),
    ));
    let same = raylb(dir.path(), &["compare", "a.png", "b.png"]);
    assert_eq!(same.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&same.stdout).contains("identical: 64×48"));

    // A different scene differs, and compare says where.
    ok(&raylb(
        dir.path(),
        &[
            &[
                "render",
                scene_path("quick").to_str().unwrap(),
                "-o",
                "c.png",
                "-q",
            ][..],
            &size,
        ]
        .concat(),
    ));
    let differ = raylb(dir.path(), &["compare", "a.png", "c.png"]);
    assert_eq!(differ.status.code(), Some(1));
    let text = String::from_utf8_lossy(&differ.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() == 2
            && lines[0].starts_with("differ: ")
            && lines[0].contains("of 3072 pixels")
            && lines[0].contains("first at (")
            && lines[1].starts_with("mse ")
            && lines[1].contains(" dB, largest difference "),
        "{text}"
    );

    // Different sizes are a difference too; unreadable files are errors.
    ok(&raylb(
        dir.path(),
        &[
            "render", c, "-o", "d.png", "-q", "--width", "10", "--height", "10",
        ],
    ));
    let sizes = raylb(dir.path(), &["compare", "a.png", "d.png"]);
    assert_eq!(sizes.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&sizes.stdout),
        "differ: sizes 64×48 vs 10×10\n"
    );
    // Names do not matter: the format is read from the contents.
    fs::copy(dir.path().join("a.png"), dir.path().join("a-copy.image")).unwrap();
    assert_eq!(
        raylb(dir.path(), &["compare", "a.png", "a-copy.image"])
            .status
            .code(),
        Some(0)
    );
    fs::write(dir.path().join("junk.png"), b"not a png").unwrap();
    for (file, what) in [
        ("junk.png", "not a PNG, OpenEXR or PFM image"),
        ("missing.png", "no such file"),
    ] {
        let bad = raylb(dir.path(), &["compare", "a.png", file]);
        assert_eq!(bad.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&bad.stderr);
        assert!(stderr.contains(file) && stderr.contains(what), "{stderr}");
    }
}

#[test]
fn compare_sees_16_bits_reads_hdr_files_and_draws_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    // Two 16-bit images one code apart in one sample, the same in their top 8 bits.
    let mut samples: Vec<u16> = (0..3 * 2 * 3).map(|i| 0x1200 + i * 0x111).collect();
    png16(&path("a.png"), 3, 2, &samples);
    samples[(3 + 1) * 3 + 1] += 1;
    png16(&path("b.png"), 3, 2, &samples);
    let out = raylb(
        dir.path(),
        &["compare", "a.png", "b.png", "--diff", "d.png"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("differ: 1 of 6 pixels, largest channel difference 1, first at (1, 1): [7884, 8157, 8430] vs [7884, 8158, 8430]\n"),
        "{text}"
    );
    // The one-code difference is white in its channel, everything else black.
    let drawn = image::open(path("d.png")).unwrap();
    let drawn = drawn.as_rgb8().expect("an 8-bit RGB PNG");
    for (x, y, pixel) in drawn.enumerate_pixels() {
        let expected = if (x, y) == (1, 1) {
            [0, 255, 0]
        } else {
            [0, 0, 0]
        };
        assert_eq!(pixel.0, expected, "({x}, {y})");
    }

    // The same floats as float EXR and PFM are identical; half EXR is not.
    let rgb: Vec<f32> = (0..4 * 3 * 3).map(|i| i as f32 / 7.0 + 0.001).collect();
    let mut staged = StagedFiles::new();
    staged
        .exr(&path("f.exr"), 4, 3, &rgb, ExrPrecision::Float)
        .unwrap();
    staged
        .exr(&path("h.exr"), 4, 3, &rgb, ExrPrecision::Half)
        .unwrap();
    staged.pfm(&path("f.pfm"), 4, 3, &rgb).unwrap();
    staged.commit().unwrap();
    let same = raylb(dir.path(), &["compare", "f.exr", "f.pfm"]);
    assert_eq!(
        ok(&same),
        "identical: 4×3\nmse 0, psnr inf dB, largest difference 0 of full scale\n"
    );
    let half = raylb(
        dir.path(),
        &["compare", "h.exr", "f.pfm", "--diff", "hd.png"],
    );
    assert_eq!(half.status.code(), Some(1));
    let text = String::from_utf8_lossy(&half.stdout);
    let first_as_half = exr::prelude::f16::from_f32(rgb[0]).to_f32();
    assert!(
        text.contains(&format!("first at (0, 0): [{first_as_half}, "))
            && text.contains(" vs [0.001, "),
        "{text}"
    );
    assert!(path("hd.png").exists());

    // Codes against values differ, and the note says why, naming which file is which.
    let codes: Vec<u8> = rgb
        .iter()
        .map(|&v| (v.min(1.0) * 255.0).round() as u8)
        .collect();
    let mut staged = StagedFiles::new();
    staged.png(&path("c.png"), 4, 3, &codes).unwrap();
    staged.commit().unwrap();
    for pair in [["c.png", "f.pfm"], ["f.pfm", "c.png"]] {
        let mixed = raylb(dir.path(), &["compare", pair[0], pair[1]]);
        assert_eq!(mixed.status.code(), Some(1));
        let err = String::from_utf8_lossy(&mixed.stderr);
        assert!(
            err.starts_with("raylb: warning: c.png holds integer codes and f.pfm float values")
                && err.contains("sRGB-encoded"),
            "{err}"
        );
    }
}

#[test]
fn validate_runs_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let out = raylb(
        dir.path(),
        &[
            "validate",
            scene_path("quick").to_str().unwrap(),
            "--balancers",
            "static,stealing,rayon",
            "--threads",
            "1,3",
            "--tiles",
            "8,64",
            "-o",
            "ref.png",
        ],
    );
    let stdout = ok(&out);
    // 2 static + 12 stealing + 1 rayon variants, and 1 static and 2 stealing breadth-first,
    // × 2 thread counts × 2 tile sizes, in both structures, the wide one with and without
    // packets.
    assert!(stdout.contains("all 216 renders identical"), "{stdout}");
    assert!(
        stdout.contains("wide+packets static/interleaved")
            && stdout.contains("wide static/interleaved")
            && stdout.contains("octree rayon"),
        "{stdout}"
    );
    assert!(
        stdout.contains("stealing/locked/set/one") && stdout.contains("rayon"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("counter"),
        "--balancers leaves counter out: {stdout}"
    );
    // The columns line up, the longest labels' too.
    let columns: std::collections::BTreeSet<_> = stdout
        .lines()
        .filter_map(|line| line.find("Mrays/s"))
        .collect();
    assert_eq!(columns.len(), 1, "{stdout}");
    assert!(dir.path().join("ref.png").exists());
}

#[test]
fn bench_trace_reports_hits_and_throughput() {
    let dir = tempfile::tempdir().unwrap();
    // A square of two triangles seen face-on: the automatic camera frames it with a margin.
    fs::write(
        dir.path().join("sq.obj"),
        "v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 1 2 3 4\n",
    )
    .unwrap();
    let out = raylb(
        dir.path(),
        &[
            "bench", "trace", "--mesh", "sq.obj", "--width", "64", "--height", "64", "--repeat",
            "2",
        ],
    );
    let stdout = ok(&out);
    assert!(
        stdout.contains("64×64 camera rays, 2 triangles in the wide structure, 1 thread"),
        "{stdout}"
    );
    let hits: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("hits    "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a hits line");
    // The square spans 1/1.1 of the image's width and height.
    assert!((3000..3500).contains(&hits), "{hits} hits");
    assert!(stdout.contains("Mrays/s"));
    // Two triangles are one leaf under the root: every ray visits the root, and those that
    // enter the square's box (the hits and a few grazing its padding) the leaf.
    let steps = stdout
        .lines()
        .find_map(|l| l.strip_prefix("steps   1.00 nodes and "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<f64>().ok())
        .expect("a steps line of one node a ray");
    let hit_share = hits as f64 / 4096.0;
    assert!(
        steps >= hit_share - 0.005 && steps <= hit_share + 0.05,
        "{steps} leaves a ray for {hit_share} hits a ray"
    );

    // Every sample of a pixel is a camera ray.
    let out = raylb(
        dir.path(),
        &[
            "bench", "trace", "--mesh", "sq.obj", "--width", "8", "--height", "8", "--spp", "3",
            "--repeat", "1",
        ],
    );
    let stdout = ok(&out);
    assert!(stdout.contains("8×8 × 3 camera rays"), "{stdout}");
    assert!(stdout.contains(" of 192 rays"), "{stdout}");

    // The incoherent case: the reflection and refraction rays of a frame, in both
    // structures, which find the same hits.
    let quick = scene_path("quick");
    let secondary = |accel: &str| {
        let out = raylb(
            dir.path(),
            &[
                "bench",
                "trace",
                quick.to_str().unwrap(),
                "--rays",
                "secondary",
                "--accel",
                accel,
                "--width",
                "24",
                "--height",
                "16",
                "--repeat",
                "1",
            ],
        );
        let stdout = ok(&out);
        assert!(
            stdout.contains("reflection and refraction rays of a 24×16 frame"),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("in the {accel} structure")),
            "{stdout}"
        );
        stdout
            .lines()
            .find(|l| l.starts_with("hits"))
            .unwrap()
            .to_string()
    };
    assert_eq!(secondary("wide"), secondary("octree"));
    // A bare mesh reflects nothing.
    let out = raylb(
        dir.path(),
        &["bench", "trace", "--mesh", "sq.obj", "--rays", "secondary"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("spawns no reflection or refraction rays")
    );
}

#[test]
fn help_shows_examples() {
    let dir = tempfile::tempdir().unwrap();
    let help = ok(&raylb(dir.path(), &["--help"]));
    assert!(help.contains("Examples:") && help.contains("raylb render scenes/cornell.toml"));
    let render_help = ok(&raylb(dir.path(), &["render", "--help"]));
    for flag in [
        "--balancer",
        "--threads",
        "--tile",
        "--stats",
        "--workmap",
        "--mesh",
        "--output",
    ] {
        assert!(
            render_help.contains(flag),
            "{flag} missing from render --help"
        );
    }
    for command in [
        &["render", "--help"][..],
        &["view", "--help"],
        &["compare", "--help"],
        &["validate", "--help"],
        &["scenes", "--help"],
        &["bench", "--help"],
    ] {
        let help = ok(&raylb(dir.path(), command));
        let name = command[0];
        assert!(
            help.contains("Example") && help.contains(&format!("raylb {name} ")),
            "no examples in `raylb {name} --help`:\n{help}"
        );
    }
    let view_help = ok(&raylb(dir.path(), &["view", "--help"]));
    for key in [
        "Keys:",
        "drag",
        "Shift+B",
        "work map",
        "--frames",
        "--screenshot",
    ] {
        assert!(view_help.contains(key), "{key} missing from view --help");
    }
}

/// A flag of a shared group that a command always refuses is left out of its help, and
/// still refused in one line where it is given.
#[test]
fn help_lists_no_flag_its_command_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_asset("quick");
    for (command, refused, value) in [
        (&["bench", "build"][..], "--width", "64"),
        (&["bench", "build"], "--height", "64"),
        (&["bench", "build"], "--spp", "2"),
        (&["bench", "build"], "--packets", "on"),
        (&["bench", "build"], "--up", "z"),
        (&["bench", "build"], "--view", "+x"),
        (&["record"], "--device", "gpu"),
        (&["record"], "--first-batch", "all"),
        (&["validate"], "--accel", "octree"),
    ] {
        let mut help_args = command.to_vec();
        help_args.push("--help");
        let help = ok(&raylb(dir.path(), &help_args));
        assert!(
            !help
                .lines()
                .any(|line| line.trim_start().starts_with(&format!("{refused} "))),
            "{refused} in `raylb {} --help`",
            command.join(" ")
        );
        let mut args = command.to_vec();
        args.extend([quick.as_str(), refused, value]);
        let out = raylb(dir.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("raylb: error: {refused}")),
            "{args:?}: {err}"
        );
    }
}

/// The commands that run only the CPU's balancers neither list `cuda-managed` nor take it.
#[test]
fn cpu_only_commands_do_not_offer_the_gpu_balancer() {
    let dir = tempfile::tempdir().unwrap();
    for (command, flag) in [
        (&["sim"][..], "--balancers"),
        (&["bench", "sweep"], "--balancers"),
        (&["bench", "scaling"], "--balancers"),
        (&["bench", "sim-sweep"], "--balancers"),
        (&["bench", "cluster"], "--balancer"),
    ] {
        let mut help_args = command.to_vec();
        help_args.push("--help");
        let help = ok(&raylb(dir.path(), &help_args));
        assert!(
            help.contains("- stealing:"),
            "`{command:?} --help` lists balancers"
        );
        assert!(
            !help.contains("cuda-managed"),
            "`{command:?} --help`: {help}"
        );
        let mut args = command.to_vec();
        args.extend([flag, "cuda-managed"]);
        let out = raylb(dir.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with(&format!(
                "raylb: error: invalid value 'cuda-managed' for '{flag}"
            )),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn json_and_quiet_for_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let quick = quick.to_str().unwrap();
    let out = ok(&raylb(
        dir.path(),
        &["render", quick, "-o", "a.png", "--json"],
    ));
    let report: serde_json::Value = serde_json::from_str(&out).expect("stdout is one JSON value");
    assert_eq!(report["scene"]["name"], "quick");
    assert!(report["render"]["mrays_per_second"].as_f64().unwrap() > 0.0);
    assert!(dir.path().join("a.png").is_file());
    // The packet mode is a figure of the run, in the summary too.
    for (args, packets) in [
        (&["--packets", "on"][..], true),
        (&["--packets", "off"], false),
        (&["--accel", "octree"], false),
    ] {
        let report: serde_json::Value = serde_json::from_str(&ok(&raylb(
            dir.path(),
            &[&["render", quick, "-o", "p.png", "--json"], args].concat(),
        )))
        .unwrap();
        assert_eq!(report["render"]["packets"], packets, "{args:?}");
        let summary = ok(&raylb(
            dir.path(),
            &[&["render", quick, "-o", "p.png"], args].concat(),
        ));
        assert_eq!(summary.contains(", packets on,"), packets, "{summary}");
    }

    let out = raylb(dir.path(), &["render", quick, "-o", "b.png", "--quiet"]);
    assert_eq!(ok(&out), "", "--quiet prints nothing");
    assert!(out.stderr.is_empty(), "and no progress on a pipe");

    let fails = raylb(dir.path(), &["render", quick, "--json", "--quiet"]);
    assert_eq!(
        fails.status.code(),
        Some(2),
        "--json and --quiet exclude each other"
    );

    let args = [
        "validate",
        quick,
        "--threads",
        "1,3",
        "--tiles",
        "16",
        "--balancers",
        "counter",
    ];
    let out = ok(&raylb(dir.path(), &[&args[..], &["--json"]].concat()));
    let matrix: serde_json::Value = serde_json::from_str(&out).expect("one JSON value");
    assert_eq!(matrix["identical"], true);
    // Three counter variants (chunks 1 and 4, and chunk 1 breadth-first) × two thread counts
    // × one tile edge × three structures (the wide BVH with and without packets, the octree).
    assert_eq!(matrix["renders"], 18);
    assert_eq!(matrix["runs"].as_array().unwrap().len(), 18);
    assert_eq!(ok(&raylb(dir.path(), &[&args[..], &["-q"]].concat())), "");

    let out = raylb(
        dir.path(),
        &[
            "bench",
            "trace",
            "--mesh",
            &scene_asset("crystal.obj"),
            "--repeat",
            "2",
            "-q",
        ],
    );
    assert_eq!(ok(&out), "", "bench --quiet prints nothing");
    assert!(out.stderr.is_empty());
}

/// A mesh the project ships.
fn scene_asset(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn scenes_lists_the_shipped_scenes_one_line_each() {
    let dir = tempfile::tempdir().unwrap();
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenes");
    let out = ok(&raylb(dir.path(), &["scenes", folder.to_str().unwrap()]));
    let lines: Vec<&str> = out.lines().collect();
    let shipped = fs::read_dir(&folder)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "toml")
        })
        .count();
    assert_eq!(lines.len(), shipped, "{out}");
    let quick = lines
        .iter()
        .find(|l| l.contains("quick.toml"))
        .expect("quick listed");
    assert!(
        quick.contains("96×64") && quick.contains("a tiny scene"),
        "{quick}"
    );
    // The sizes end in one column, however long the folder's path.
    let size_ends: Vec<usize> = lines
        .iter()
        .map(|l| {
            let times = l.find('×').expect("a size");
            let end = times + l[times..].find("  ").expect("the size's end");
            l[..end].chars().count()
        })
        .collect();
    assert!(size_ends.windows(2).all(|w| w[0] == w[1]), "{out}");
    // Run from elsewhere, it finds the folder raylb was built with.
    assert_eq!(ok(&raylb(dir.path(), &["scenes"])).lines().count(), shipped);
    let missing = raylb(dir.path(), &["scenes", "no-such-dir"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot list no-such-dir"));
}

/// A scene file whose values `render` refuses gets the row of a file that cannot be read,
/// with the fault, and counts among them.
#[test]
fn scenes_shows_a_scene_of_bad_values_as_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let quick = fs::read_to_string(scene_path("quick")).unwrap();
    fs::write(dir.path().join("good.toml"), &quick).unwrap();
    fs::write(
        dir.path().join("zero.toml"),
        quick.replace("width = 96", "width = 0"),
    )
    .unwrap();
    fs::write(
        dir.path().join("unknown.toml"),
        quick.replace("[camera]", "[camera]\nzoom = 2"),
    )
    .unwrap();
    let out = raylb(dir.path(), &["scenes", "."]);
    assert_eq!(out.status.code(), Some(2));
    let listed = String::from_utf8_lossy(&out.stdout);
    let row = |name: &str| {
        listed
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} in {listed}"))
            .to_string()
    };
    assert!(row("good.toml").contains("96×64"), "{listed}");
    assert!(
        row("zero.toml").contains("?  line 5: `width`: must be between 1 and 16384, got 0"),
        "{listed}"
    );
    assert!(row("unknown.toml").contains("?  line "), "{listed}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("2 of 3 scene files"), "{said}");
}

/// Two scene files of one name are told apart by their paths in the sweep's tables and CSV.
#[test]
fn bench_sweep_labels_same_named_scenes_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let quick = fs::read_to_string(scene_path("quick")).unwrap();
    for folder in ["a", "b"] {
        fs::create_dir(dir.path().join(folder)).unwrap();
        fs::write(dir.path().join(folder).join("quick.toml"), &quick).unwrap();
    }
    let sweep = ok(&raylb(
        dir.path(),
        &[
            "bench",
            "sweep",
            "a/quick.toml",
            "b/quick.toml",
            "--balancers",
            "static",
            "--tiles",
            "32",
            "--repeat",
            "1",
            "--threads",
            "1",
            "--out",
            "out",
        ],
    ));
    let (_, renders) = read_csv(&dir.path().join("out/sweep.csv"));
    let scenes: Vec<&str> = renders.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(scenes, ["a/quick.toml", "b/quick.toml"], "{sweep}");
}

#[test]
fn bench_sweep_scaling_and_deque_write_their_tables() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let q = quick.to_str().unwrap();
    let sweep = ok(&raylb(
        dir.path(),
        &[
            "bench",
            "sweep",
            q,
            "--tiles",
            "8,64",
            "--repeat",
            "2",
            "--threads",
            "2",
            "--out",
            "out",
        ],
    ));
    assert!(
        sweep.contains("quick") && sweep.contains("stealing/abp/random/half µs/px"),
        "{sweep}"
    );
    // One row per render: 2 rounds × 2 tiles × 4 balancers.
    let (header, renders) = read_csv(&dir.path().join("out/sweep.csv"));
    assert_eq!(
        header,
        [
            "scene",
            "structure",
            "balancer",
            "tile",
            "threads",
            "round",
            "seconds",
            "us_per_pixel"
        ]
    );
    assert_eq!(renders.len(), 2 * 2 * 4);
    for r in &renders {
        assert_eq!(r[1], "wide", "the default structure");
        r[3].parse::<u32>().unwrap();
        r[5].parse::<u32>().unwrap();
        assert!(r[6].parse::<f64>().unwrap() > 0.0 && r[7].parse::<f64>().unwrap() > 0.0);
    }
    let svg = fs::read_to_string(dir.path().join("out/sweep.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("rayon") && svg.contains("tile edge"));
    // Each balancer's best round per tile edge, numbers in their own columns; one fastest
    // per edge, 0% from itself.
    let (header, best) = read_csv(&dir.path().join("out/sweep-best.csv"));
    assert_eq!(
        header,
        [
            "scene",
            "tile",
            "balancer",
            "us_per_pixel",
            "vs_fastest_percent",
            "fastest"
        ]
    );
    assert_eq!(best.len(), 2 * 4);
    for edge in best.chunks(4) {
        let fastest: Vec<&Vec<String>> = edge.iter().filter(|r| r[5] == "true").collect();
        assert_eq!(fastest.len(), 1, "one fastest: {edge:?}");
        assert_eq!(fastest[0][4].parse::<f64>().unwrap(), 0.0);
        for r in edge {
            assert!(r[3].parse::<f64>().unwrap() > 0.0);
            assert!(r[4].parse::<f64>().unwrap() >= 0.0);
        }
    }
    // The paired table: per scene and tile, and for the best edges, every balancer's median
    // against the leader's time in the same round, and the rounds it won; every round has a
    // winner, and one balancer per row leads.
    assert!(sweep.contains("Paired by round"), "{sweep}");
    let (header, paired) = read_csv(&dir.path().join("out/sweep-paired.csv"));
    assert_eq!(
        header,
        [
            "scene",
            "tile",
            "balancer",
            "leader",
            "median_vs_leader_percent",
            "q1_percent",
            "q3_percent",
            "rounds_fastest",
            "rounds"
        ]
    );
    assert_eq!(
        paired.len(),
        3 * 4,
        "edges 8, 64 and best, 4 balancers each"
    );
    let tiles: Vec<&str> = paired.chunks(4).map(|edge| edge[0][1].as_str()).collect();
    assert_eq!(tiles, ["8", "64", "best"]);
    for edge in paired.chunks(4) {
        let leaders: Vec<&Vec<String>> = edge.iter().filter(|r| r[2] == r[3]).collect();
        assert_eq!(leaders.len(), 1, "one leader: {edge:?}");
        assert_eq!(leaders[0][4].parse::<f64>().unwrap(), 0.0);
        let mut wins = 0;
        for r in edge {
            for percent in &r[4..7] {
                percent.parse::<f64>().unwrap();
            }
            assert_eq!(r[8], "2");
            wins += r[7].parse::<usize>().unwrap();
        }
        assert!(
            wins >= 2,
            "each of 2 rounds has a fastest balancer: {edge:?}"
        );
    }

    let scaling = ok(&raylb(
        dir.path(),
        &[
            "bench",
            "scaling",
            q,
            "--threads",
            "1,2",
            "--balancers",
            "stealing",
            "--repeat",
            "1",
            "--out",
            "out",
        ],
    ));
    assert!(
        scaling.contains("efficiency") && scaling.contains("stealing/abp/random/half"),
        "{scaling}"
    );
    assert!(dir.path().join("out/scaling.svg").exists());
    let (header, best) = read_csv(&dir.path().join("out/scaling-best.csv"));
    assert_eq!(
        header,
        [
            "scene",
            "tile",
            "balancer",
            "threads",
            "seconds",
            "speedup",
            "efficiency"
        ]
    );
    assert_eq!(best.len(), 2);
    assert_eq!(
        best[0][5].parse::<f64>().unwrap(),
        1.0,
        "1 thread over itself"
    );
    assert!(best[1][6].parse::<f64>().unwrap() > 0.0);

    let deque = ok(&raylb(
        dir.path(),
        &[
            "bench",
            "deque",
            "--threads",
            "2",
            "--elements",
            "2000",
            "--iterations",
            "2",
            "--out",
            "out",
        ],
    ));
    for row in [
        "abp (non-blocking)",
        "locked (blocking)",
        "i) pop only",
        "ii) pop, then steal",
        "iii) push/pop",
    ] {
        assert!(deque.contains(row), "{row} missing:\n{deque}");
    }
    // The setup names hold commas: quoted, the columns stay in place.
    let (header, rows) = read_csv(&dir.path().join("out/deque.csv"));
    assert_eq!(header.len(), 10);
    assert_eq!(rows.len(), 2 * 3);
    assert_eq!(rows[2][1], "iii) push/pop at random, steal");
    for r in &rows {
        assert!(r[5].parse::<f64>().unwrap() > 0.0, "throughput: {r:?}");
        r[7].parse::<u64>().unwrap();
    }
}

#[test]
fn sweeps_say_when_several_tile_edges_make_the_frame_one_tile() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let q = quick.to_str().unwrap();
    // `quick` is 96×64: 96 and 128 each make it one tile; 64 does not.
    let warning = "quick (96×64 pixels) is one tile at each of the tile edges 96, 128: they";
    let common = ["--tiles", "64,96,128", "--threads", "1", "--out"];
    for (command, out) in [
        (&["bench", "sweep", q, "--repeat", "1"][..], "sweep"),
        (&["bench", "sim-sweep", q, "--workers", "2"][..], "sim"),
    ] {
        let run = raylb(dir.path(), &[command, &common, &[out]].concat());
        ok(&run);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    }
    // Quiet, and where one edge alone covers the frame, nothing is said.
    let quiet = raylb(
        dir.path(),
        &[
            &["bench", "sweep", q, "-q", "--repeat", "1"][..],
            &common,
            &["quiet"],
        ]
        .concat(),
    );
    ok(&quiet);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("is one tile"));
    let one = raylb(
        dir.path(),
        &[
            "bench",
            "sweep",
            q,
            "--tiles",
            "8,128",
            "--repeat",
            "1",
            "--threads",
            "1",
            "--out",
            "one",
        ],
    );
    ok(&one);
    assert!(!String::from_utf8_lossy(&one.stderr).contains("is one tile"));
}

#[test]
fn bench_files_are_written_before_the_tables_are_printed() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let mut child = Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(["bench", "sweep", quick.to_str().unwrap(), "--tiles", "8"])
        .args(["--threads", "1", "--repeat", "1", "--out", "out"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("raylb runs");
    // A reader that stops at once (`| head -0`): the tables cannot be printed, and the
    // results must be on disk all the same.
    drop(child.stdout.take());
    child.wait().unwrap();
    for name in [
        "sweep.csv",
        "sweep-best.csv",
        "sweep-paired.csv",
        "sweep.svg",
    ] {
        assert!(
            dir.path().join("out").join(name).is_file(),
            "{name} missing"
        );
    }
    let (_, renders) = read_csv(&dir.path().join("out/sweep.csv"));
    assert_eq!(renders.len(), 4, "one render per balancer");
}

/// A CSV file parsed with the csv crate, as a spreadsheet would: its header and its records,
/// every record as wide as the header.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let records = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, records)
}

#[test]
fn render_with_stealing_and_rayon_reports_their_telemetry() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let q = quick.to_str().unwrap();
    for (balancer, extra) in [
        (
            "stealing",
            &["--deque", "locked", "--victim", "set", "--steal", "one"][..],
        ),
        ("rayon", &[][..]),
    ] {
        let args = [
            &[
                "render",
                q,
                "-o",
                "q.png",
                "--stats",
                "s.json",
                "--threads",
                "3",
                "--balancer",
                balancer,
            ][..],
            extra,
        ]
        .concat();
        let stdout = ok(&raylb(dir.path(), &args));
        let stats: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.path().join("s.json")).unwrap()).unwrap();
        let workers = stats["workers"].as_array().unwrap();
        assert_eq!(workers.len(), 3);
        if balancer == "rayon" {
            assert!(
                stdout.contains("render  rayon") && stdout.contains("? steals"),
                "{stdout}"
            );
            assert!(
                stats["render"]["steals"].is_null()
                    && stats["render"]["peak_outstanding_tasks"].is_null()
            );
            assert!(workers.iter().all(|w| w["steal_attempts"].is_null()));
        } else {
            assert!(
                stdout.contains("render  stealing/locked/set/one"),
                "{stdout}"
            );
            assert!(
                stats["render"]["steals"].is_u64()
                    && stats["render"]["peak_outstanding_tasks"].is_u64()
            );
            assert!(
                workers
                    .iter()
                    .all(|w| w["steal_attempts"].is_u64() && w["peak_queued"].is_u64())
            );
        }
    }
}

#[test]
fn rayon_asked_for_more_threads_than_it_starts_says_so_and_reports_those_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let most = balancers::RayonScope::max_workers().get();
    // One more than rayon is given, within what --threads accepts.
    let asked = (most + 1).min(4096);
    let asked_text = asked.to_string();
    let render = |quiet: &[&str]| {
        let args = [
            &[
                "render",
                quick.to_str().unwrap(),
                "-o",
                "q.png",
                "--stats",
                "s.json",
                "--width",
                "16",
                "--height",
                "16",
                "--threads",
                asked_text.as_str(),
                "--balancer",
                "rayon",
            ][..],
            quiet,
        ]
        .concat();
        let out = raylb(dir.path(), &args);
        ok(&out);
        let stats: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.path().join("s.json")).unwrap()).unwrap();
        let workers = stats["workers"].as_array().unwrap().len();
        (String::from_utf8_lossy(&out.stderr).into_owned(), workers)
    };
    let (stderr, workers) = render(&[]);
    assert_eq!(workers, asked.min(most), "the workers it started");
    if asked > most {
        assert_eq!(stderr.lines().count(), 1, "one warning line: {stderr}");
        assert!(
            stderr.starts_with(&format!(
                "raylb: warning: --balancer rayon starts {most} threads, not {asked}: "
            )),
            "{stderr}"
        );
    }
    let (stderr, _) = render(&["--quiet"]);
    assert_eq!(stderr, "", "--quiet leaves the warning out");
}

#[test]
fn hdr_images_are_the_same_bytes_on_every_balancer() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let quick = quick.to_str().unwrap();
    for name in ["a", "b"] {
        let balancer: &[&str] = if name == "a" {
            &["--balancer", "static", "--threads", "1"]
        } else {
            &["--balancer", "stealing", "--threads", "3", "--tile", "8"]
        };
        for ext in ["exr", "pfm", "png"] {
            let file = format!("{name}.{ext}");
            let mut args = vec!["render", quick, "-o", file.as_str(), "-q"];
            args.extend_from_slice(balancer);
            ok(&raylb(dir.path(), &args));
        }
        let half = format!("{name}-half.exr");
        let mut args = vec!["render", quick, "-o", half.as_str(), "--half", "-q"];
        args.extend_from_slice(balancer);
        ok(&raylb(dir.path(), &args));
    }
    for ext in ["exr", "pfm", "png", "exr"] {
        let read = |n: &str| fs::read(dir.path().join(format!("{n}.{ext}"))).unwrap();
        assert_eq!(read("a"), read("b"), ".{ext} differs between balancers");
    }
    assert_eq!(
        fs::read(dir.path().join("a-half.exr")).unwrap(),
        fs::read(dir.path().join("b-half.exr")).unwrap()
    );
    // The float images hold the same linear values, and differ from the 8-bit one.
    let same = raylb(dir.path(), &["compare", "a.exr", "a.pfm"]);
    assert_eq!(same.status.code(), Some(0), "{}", ok(&same));
    let pfm = fs::read(dir.path().join("a.pfm")).unwrap();
    assert!(
        pfm.starts_with(b"PF\n96 64\n-1"),
        "a little-endian colour PFM"
    );
    let header = pfm
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(2)
        .unwrap()
        .0
        + 1;
    assert_eq!(pfm.len() - header, 96 * 64 * 3 * 4, "three floats a pixel");
    let exr = fs::read(dir.path().join("a.exr")).unwrap();
    assert_eq!(
        &exr[..4],
        &[0x76, 0x2f, 0x31, 0x01],
        "the OpenEXR magic number"
    );

    // validate writes its reference in the format asked for, and compares the sums.
    let out = raylb(
        dir.path(),
        &[
            "validate",
            quick,
            "--balancers",
            "static,rayon",
            "--threads",
            "1,2",
            "--tiles",
            "8",
            "-o",
            "ref.exr",
        ],
    );
    assert!(ok(&out).contains("renders identical"));
    assert_eq!(
        fs::read(dir.path().join("ref.exr")).unwrap(),
        fs::read(dir.path().join("a.exr")).unwrap()
    );
}
