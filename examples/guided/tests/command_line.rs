//! `raylb-guided`, the `raylb` command line with `guided` registered: the balancer is listed
//! and runs in the commands that render on the CPU, writes `static`'s bytes, and is refused in
//! one line where it cannot run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn raylb_guided(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raylb-guided"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("raylb-guided runs")
}

fn scene(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "..", "scenes", name]
        .iter()
        .collect();
    path.to_str().unwrap().to_string()
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

const SMALL: [&str; 4] = ["--width", "96", "--height", "64"];

#[test]
fn guided_is_listed_beside_the_built_in_balancers() {
    let dir = tempfile::tempdir().unwrap();
    let help = raylb_guided(&["render", "--help"], dir.path());
    assert!(help.status.success());
    let help = text(&help);
    for name in ["static", "counter", "stealing", "rayon", "guided"] {
        assert!(
            help.contains(&format!("- {name}:")),
            "{name} missing:\n{help}"
        );
    }
    assert!(help.contains("Guided self-scheduling"), "{help}");
}

#[test]
fn guided_renders_the_bytes_of_static() {
    let dir = tempfile::tempdir().unwrap();
    let cornell = scene("cornell.toml");
    for (balancer, threads, out) in [("static", "1", "static.png"), ("guided", "3", "guided.png")] {
        let args = [
            &[
                "render",
                &cornell,
                "--balancer",
                balancer,
                "--threads",
                threads,
            ][..],
            &SMALL,
            &["-q", "-o", out],
        ]
        .concat();
        let run = raylb_guided(&args, dir.path());
        assert!(run.status.success(), "{}", text(&run));
    }
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    assert_eq!(read("guided.png"), read("static.png"));
}

#[test]
fn validate_and_the_sweep_run_guided() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene("quick.toml");
    let args = [
        &[
            "validate",
            &quick,
            "--balancers",
            "guided,counter",
            "--threads",
            "1,4",
        ][..],
        &SMALL,
    ]
    .concat();
    let validate = raylb_guided(&args, dir.path());
    let out = text(&validate);
    assert!(validate.status.success(), "{out}");
    assert!(out.contains("guided/k=2 threads=4"), "{out}");
    assert!(out.contains("renders identical"), "{out}");

    let args = [
        &[
            "bench",
            "sweep",
            &quick,
            "--balancers",
            "guided,static",
            "--tiles",
            "8,32",
        ][..],
        &["--threads", "2", "--repeat", "1", "--out", "sweep"],
        &SMALL,
    ]
    .concat();
    let sweep = raylb_guided(&args, dir.path());
    assert!(sweep.status.success(), "{}", text(&sweep));
    let csv = std::fs::read_to_string(dir.path().join("sweep/sweep-best.csv")).unwrap();
    assert!(csv.contains("guided/k=2"), "{csv}");
}

#[test]
fn the_simulator_replays_guided_beside_the_built_in_policies() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene("quick.toml");
    let args = [&["record", &quick, "-q", "-o", "quick.tasks"][..], &SMALL].concat();
    let record = raylb_guided(&args, dir.path());
    assert!(record.status.success(), "{}", text(&record));
    let args = [
        "sim",
        "quick.tasks",
        "--balancers",
        "guided,counter",
        "--workers",
        "1,64",
    ];
    let sim = raylb_guided(&args, dir.path());
    let out = text(&sim);
    assert!(sim.status.success(), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("guided/k=2"))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    // On one worker every policy's makespan is the frame's work and its scheduling costs.
    assert!(rows[0].contains("1.000"), "{out}");
}

#[test]
fn where_guided_cannot_run_it_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let cornell = scene("cornell.toml");
    for (args, says) in [
        (
            vec![
                "render",
                &cornell,
                "--balancer",
                "guided",
                "--device",
                "gpu",
            ],
            "--balancer guided runs only with --device cpu",
        ),
        (
            vec!["render", &cornell, "--balancer", "guided", "--chunk", "4"],
            "--chunk applies to counter, not to --balancer guided",
        ),
        (
            vec!["record", &cornell, "--balancer", "guided"],
            "raylb record runs a built-in balancer",
        ),
    ] {
        let run = raylb_guided(&args, dir.path());
        let out = text(&run);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {out}");
        assert_eq!(out.lines().count(), 1, "{args:?}: {out}");
        assert!(out.contains(says), "{args:?}: {out}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no output written"
    );
}
