//! Rays and geometry as files, from the command line: `bench trace --dump` writes a frame's
//! rays of one kind, `bench trace --ray-file` traces them again, `export` writes the scene's
//! triangles, and the dumped rays traced through the exported mesh find the very hits they
//! found in the scene.

mod common;

use std::fs;

use common::{ok, raylb, scene_path};

/// The `hits    H of N rays` line's H and N.
fn hits(stdout: &str) -> (u64, u64) {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("hits    "))
        .unwrap_or_else(|| panic!("a hits line in {stdout}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    (words[0].parse().unwrap(), words[2].parse().unwrap())
}

#[test]
fn dumped_rays_trace_the_same_through_the_scene_and_its_exported_mesh() {
    let dir = tempfile::tempdir().unwrap();
    let cornell = scene_path("cornell");
    let cornell = cornell.to_str().unwrap();
    let size = ["--width", "40", "--height", "30", "--repeat", "1"];
    for (kind, query) in [
        ("shadow", "occlusion"),
        ("secondary", "closest hit"),
        ("camera", "closest hit"),
    ] {
        let file = format!("{kind}.rays");
        let mut args = vec!["bench", "trace", cornell, "--rays", kind, "--dump", &file];
        args.extend(size);
        let dumped = ok(&raylb(dir.path(), &args));
        let (hit, rays) = hits(&dumped);
        assert!(rays > 0 && hit > 0, "{dumped}");
        assert!(dumped.contains(&format!(" to {file}\n")), "{dumped}");
        let bytes = fs::read(dir.path().join(&file)).unwrap();
        assert_eq!(&bytes[..8], b"RAYLBRAY");
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 1);
        let code = u32::from(kind == "shadow");
        assert_eq!(u32::from_le_bytes(bytes[12..16].try_into().unwrap()), code);
        assert_eq!(u64::from_le_bytes(bytes[16..24].try_into().unwrap()), rays);
        assert_eq!(bytes.len() as u64, 24 + 32 * rays);

        let args = vec![
            "bench",
            "trace",
            cornell,
            "--ray-file",
            &file,
            "--repeat",
            "1",
        ];
        let again = ok(&raylb(dir.path(), &args));
        assert_eq!(hits(&again), (hit, rays), "{again}");
        assert!(again.contains(query), "{again}");

        ok(&raylb(
            dir.path(),
            &["export", cornell, "-o", "cornell.ply", "-q"],
        ));
        let args = vec![
            "bench",
            "trace",
            "--mesh",
            "cornell.ply",
            "--ray-file",
            &file,
            "--repeat",
            "1",
        ];
        let through_mesh = ok(&raylb(dir.path(), &args));
        assert_eq!(hits(&through_mesh), (hit, rays), "{through_mesh}");
    }
}

#[test]
fn bad_ray_files_and_outputs_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let quick = quick.to_str().unwrap();
    let refused = |args: &[&str], says: &str| {
        let out = raylb(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    };
    let mut truncated = b"RAYLBRAY".to_vec();
    truncated.extend(1u32.to_le_bytes());
    truncated.extend(0u32.to_le_bytes());
    truncated.extend(2u64.to_le_bytes());
    truncated.extend([0u8; 40]);
    fs::write(dir.path().join("short.rays"), &truncated).unwrap();
    refused(
        &["bench", "trace", quick, "--ray-file", "short.rays"],
        "short.rays: 64 bytes, where a ray file of 2 rays has 88",
    );
    refused(
        &["bench", "trace", quick, "--ray-file", quick],
        "not a ray file",
    );
    fs::write(
        dir.path().join("none.rays"),
        [&truncated[..16], &0u64.to_le_bytes()[..]].concat(),
    )
    .unwrap();
    refused(
        &["bench", "trace", quick, "--ray-file", "none.rays"],
        "none.rays: no rays",
    );
    // The frame's flags are refused beside a ray file, whose rays are already made.
    for flag in [["--spp", "4"], ["--height", "8"], ["--width", "40"]] {
        let mut args = vec!["bench", "trace", quick, "--ray-file", "short.rays"];
        args.extend(flag);
        refused(&args, "cannot be used with");
    }
    // A frame's rays are kept in memory while they are recorded: more than fit is refused,
    // and nothing is written.
    refused(
        &[
            "bench",
            "trace",
            quick,
            "--width",
            "64",
            "--height",
            "64",
            "--rays",
            "shadow",
            "--dump",
            "big.rays",
            "--max-memory",
            "300K",
        ],
        "shadow rays, more than fit, at 96 bytes each",
    );
    assert!(!dir.path().join("big.rays").exists());
    refused(
        &[
            "bench",
            "trace",
            quick,
            "--ray-file",
            "short.rays",
            "--dump",
            "x.rays",
        ],
        "cannot be used with",
    );
    refused(
        &["bench", "trace", quick, "--rays", "shadow", "--dump", quick],
        "",
    );
    assert!(
        fs::read_to_string(quick).unwrap().contains('['),
        "the scene is intact"
    );
    refused(
        &["export", quick, "-o", "quick.stl"],
        "a mesh is written as .obj or .ply",
    );
    fs::write(
        dir.path().join("tri.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    )
    .unwrap();
    refused(&["export", "--mesh", "tri.obj", "-o", "tri.obj"], "tri.obj");
    assert_eq!(
        fs::read_to_string(dir.path().join("tri.obj")).unwrap(),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
    );
}

#[test]
fn bench_build_reports_the_speed_of_each_structure() {
    let dir = tempfile::tempdir().unwrap();
    let cornell = scene_path("cornell");
    for accel in ["wide", "octree"] {
        let out = ok(&raylb(
            dir.path(),
            &[
                "bench",
                "build",
                cornell.to_str().unwrap(),
                "--accel",
                accel,
                "--threads",
                "2",
                "--repeat",
                "2",
            ],
        ));
        assert!(
            out.contains(&format!(
                "cornell: 10,288 triangles in the {accel} structure, 2 threads"
            )),
            "{out}"
        );
        assert!(
            out.contains("best of 2 builds") && out.contains("Mtriangles/s"),
            "{out}"
        );
    }
}

#[test]
fn bench_build_against_a_second_thread_count_reports_the_scaling() {
    let dir = tempfile::tempdir().unwrap();
    let cornell = scene_path("cornell");
    let args = |against: &str| {
        [
            "bench",
            "build",
            cornell.to_str().unwrap(),
            "--threads",
            "2",
            "--against",
            against,
            "--repeat",
            "3",
        ]
        .map(String::from)
    };
    let out = ok(&raylb(
        dir.path(),
        &args("1").each_ref().map(String::as_str),
    ));
    assert!(out.contains("time    best of 3 builds"), "{out}");
    assert!(out.contains("against 1 thread, best of 3 builds"), "{out}");
    let scaling = out
        .lines()
        .find_map(|l| l.strip_prefix("scaling 2 threads over 1: "))
        .unwrap_or_else(|| panic!("no scaling line: {out}"));
    let best: f64 = scaling.split('x').next().unwrap().parse().unwrap();
    assert!(best > 0.0 && best.is_finite(), "{out}");
    let refused = raylb(dir.path(), &args("0").each_ref().map(String::as_str));
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--against"),
        "{refused:?}"
    );
}

#[test]
fn camera_rays_in_packets_find_the_same_hits() {
    let dir = tempfile::tempdir().unwrap();
    let cornell = scene_path("cornell");
    let cornell = cornell.to_str().unwrap();
    // Sizes that cut the last blocks of 4×2 and 4×4 pixels, and several samples a pixel.
    let size = [
        "--width", "61", "--height", "37", "--spp", "3", "--repeat", "1",
    ];
    let trace = |packets: &str, width: &str| {
        let mut args = vec!["bench", "trace", cornell, "--packets", packets];
        args.extend(size);
        args.extend(["--bvh-width", width]);
        ok(&raylb(dir.path(), &args))
    };
    // Blocks of 4×4 pixels where the traversal runs on AVX-512 (either width: the four-wide
    // tree's packets take the same ray lanes), else 4×2.
    let block = match renderer::bvh::wide::Simd::detected() {
        renderer::bvh::wide::Simd::Avx512 => "4×4",
        _ => "4×2",
    };
    for width in ["4", "8"] {
        let alone = trace("off", width);
        let together = trace("on", width);
        let (hit, rays) = hits(&alone);
        assert_eq!(rays, 61 * 37 * 3, "{alone}");
        assert!(hit > 0, "{alone}");
        assert_eq!(hits(&together), (hit, rays), "{together}");
        let expected = format!("in packets of {block} pixels");
        assert!(together.contains(&expected), "{together}");
    }
}

#[test]
fn packets_are_refused_where_there_are_none() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let quick = quick.to_str().unwrap();
    let refused = |args: &[&str], says: &str| {
        let out = raylb(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    };
    let on = ["bench", "trace", quick, "--packets", "on"];
    refused(
        &[&on[..], &["--rays", "shadow"]].concat(),
        "not --rays shadow",
    );
    refused(
        &[&on[..], &["--dump", "camera.rays"]].concat(),
        "not from --dump's list",
    );
    refused(
        &[&on[..], &["--accel", "octree"]].concat(),
        "--packets on applies to --accel wide",
    );
    refused(&["bench", "trace", quick, "--packets", "maybe"], "maybe");
}
