//! `raylb render --cluster` under `mpirun`: every mode, at 1 to 4 ranks, writes the bytes one
//! process writes; a scene that some rank cannot load ends the job with one line naming the
//! rank; a rank killed mid-frame ends the job at once with nothing written; and ranks on
//! separate test hosts (network namespaces joined through a bridge, Open MPI's TCP transport
//! between them, the link slowed down) still match.
//!
//! The MPI tests need a raylb built with the `mpi` feature and Open MPI's `mpirun` (the
//! namespace test also root and `ip`); where one is missing they say they were skipped, unless
//! `RAYLB_REQUIRE_MPI` is set (as `.ci/run` does, after installing them): then they fail. The
//! refusals of flags that do not apply run in every build.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

mod common;
use common::{ok, raylb, scene_path};

/// Whether the MPI tests can run here; if not, says why (and fails under
/// `RAYLB_REQUIRE_MPI`).
fn mpi_available(test: &str) -> bool {
    let missing = if !cfg!(feature = "mpi") {
        Some("raylb was built without the `mpi` feature (cargo test --features mpi)")
    } else if !on_path("mpirun") {
        Some("mpirun is not installed (Debian: apt install openmpi-bin libopenmpi-dev)")
    } else {
        None
    };
    match missing {
        None => true,
        Some(reason) => {
            assert!(
                std::env::var_os("RAYLB_REQUIRE_MPI").is_none(),
                "RAYLB_REQUIRE_MPI is set but {reason}"
            );
            eprintln!("{test}: skipped: {reason}");
            false
        }
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// A folder of its own for one `mpirun`'s session files. Open MPI makes its session folder
/// under `TMPDIR`, the same one for every job of a user on a host; jobs started at the same
/// instant, as the tests start them, race to create it and one fails ("File exists").
fn session_folder() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let folder = std::env::temp_dir()
        .join(format!("raylb-cluster-tests-{}", std::process::id()))
        .join(n.to_string());
    std::fs::create_dir_all(&folder).expect("a session folder for mpirun");
    folder
}

/// `mpirun --oversubscribe` (more ranks than cores), allowed to run as root where the tests
/// run as root, with session files of its own.
fn launcher() -> Command {
    let mut command = Command::new("mpirun");
    command
        .env("TMPDIR", session_folder())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // Shared memory without reading another process's memory directly (which containers
        // often forbid).
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .arg("--oversubscribe");
    command
}

/// [`launcher`] with `-np N`, before the ranks' command.
fn mpirun(ranks: usize) -> Command {
    let mut command = launcher();
    command.args(["-np", &ranks.to_string()]);
    command
}

const WIDTH: &str = "64";
const HEIGHT: &str = "48";
const TILE: &str = "8";

/// The bytes of an image (PFM: linear floats from the sums, finer than 8 bits) and of its
/// work map (PNG).
type Files = (Vec<u8>, Vec<u8>);

/// The image and the work map of `scene` rendered by one process at the tests' size.
fn reference(scene: &str) -> Files {
    static CACHE: OnceLock<Mutex<HashMap<String, Files>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(hit) = cache.lock().unwrap().get(scene) {
        return hit.clone();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = scene_path(scene);
    ok(&raylb(
        dir.path(),
        &[
            "render",
            path.to_str().unwrap(),
            "--width",
            WIDTH,
            "--height",
            HEIGHT,
            "--tile",
            TILE,
            "--threads",
            "2",
            "-o",
            "ref.pfm",
            "--workmap",
            "ref-work.png",
            "-q",
        ],
    ));
    let files = (
        std::fs::read(dir.path().join("ref.pfm")).unwrap(),
        std::fs::read(dir.path().join("ref-work.png")).unwrap(),
    );
    cache
        .lock()
        .unwrap()
        .insert(scene.to_string(), files.clone());
    files
}

/// Adds to `command` (a launcher) raylb's render of `scene` at the tests' size, 2 threads a
/// rank, with `--balancer balancer --cluster mode`, writing `out.pfm`, `work.png` and
/// `stats.json` and printing nothing.
fn cluster_render<'a>(
    command: &'a mut Command,
    scene: &str,
    balancer: &str,
    mode: &str,
) -> &'a mut Command {
    let path = scene_path(scene);
    command
        .arg(env!("CARGO_BIN_EXE_raylb"))
        .arg("render")
        .arg(path)
        .args(["--width", WIDTH, "--height", HEIGHT, "--tile", TILE])
        .args(["--threads", "2", "--balancer", balancer, "--cluster", mode])
        .args([
            "-o",
            "out.pfm",
            "--workmap",
            "work.png",
            "--stats",
            "stats.json",
            "-q",
        ])
}

/// Checks the outputs of [`cluster_render`] in `dir` against one process's image and work map
/// of `scene`, byte for byte (`what` names the job in a failure); returns the stats.
fn same_as_one_process(dir: &Path, scene: &str, what: &str) -> serde_json::Value {
    let (image, work) = reference(scene);
    assert!(
        std::fs::read(dir.join("out.pfm")).unwrap() == image,
        "{what}: the image differs from one process's"
    );
    assert!(
        std::fs::read(dir.join("work.png")).unwrap() == work,
        "{what}: the work map differs from one process's"
    );
    serde_json::from_slice(&std::fs::read(dir.join("stats.json")).unwrap()).unwrap()
}

/// Renders `scene` over `ranks` ranks with `--cluster mode` and local `balancer`, and checks
/// the image and work map against one process's, byte for byte, and the stats' account of the
/// ranks.
fn same_bytes(scene: &str, mode: &str, balancer: &str, ranks: usize) {
    let what = format!("{scene} --cluster {mode} --balancer {balancer} on {ranks} ranks");
    if !mpi_available(&what) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = cluster_render(&mut mpirun(ranks), scene, balancer, mode)
        .current_dir(dir.path())
        .output()
        .unwrap();
    ok(&out);
    assert!(
        out.stdout.is_empty(),
        "--quiet: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stats = same_as_one_process(dir.path(), scene, &what);
    let cluster = &stats["cluster"];
    let per_rank = cluster["ranks"].as_array().unwrap();
    assert_eq!(per_rank.len(), ranks);
    let tiles: u64 = per_rank.iter().map(|r| r["tiles"].as_u64().unwrap()).sum();
    assert_eq!(tiles, 48, "every tile rendered once, on some rank");
    let sent: u64 = per_rank
        .iter()
        .map(|r| r["tiles_sent"].as_u64().unwrap())
        .sum();
    let received: u64 = per_rank
        .iter()
        .map(|r| r["tiles_received"].as_u64().unwrap())
        .sum();
    assert_eq!(sent, received);
    if mode == "static" {
        assert_eq!(sent, 0, "static moves nothing");
    }
    assert_eq!(stats["workers"].as_array().unwrap().len(), 2 * ranks);
    // No temporary file is left behind, and the other ranks wrote nothing.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["out.pfm", "stats.json", "work.png"]);
}

/// One test per scene, mode, local balancer and rank count.
macro_rules! same_bytes {
    ($($test:ident: $scene:literal, $mode:literal, $balancer:literal, $ranks:literal;)*) => {
        $(
            #[test]
            fn $test() {
                same_bytes($scene, $mode, $balancer, $ranks);
            }
        )*
    };
}

same_bytes! {
    cornell_static_static_1: "cornell", "static", "static", 1;
    cornell_static_static_2: "cornell", "static", "static", 2;
    cornell_static_static_3: "cornell", "static", "static", 3;
    cornell_static_static_4: "cornell", "static", "static", 4;
    cornell_static_stealing_1: "cornell", "static", "stealing", 1;
    cornell_static_stealing_2: "cornell", "static", "stealing", 2;
    cornell_static_stealing_3: "cornell", "static", "stealing", 3;
    cornell_static_stealing_4: "cornell", "static", "stealing", 4;
    cornell_counter_static_1: "cornell", "counter", "static", 1;
    cornell_counter_static_2: "cornell", "counter", "static", 2;
    cornell_counter_static_3: "cornell", "counter", "static", 3;
    cornell_counter_static_4: "cornell", "counter", "static", 4;
    cornell_counter_stealing_1: "cornell", "counter", "stealing", 1;
    cornell_counter_stealing_2: "cornell", "counter", "stealing", 2;
    cornell_counter_stealing_3: "cornell", "counter", "stealing", 3;
    cornell_counter_stealing_4: "cornell", "counter", "stealing", 4;
    cornell_stealing_static_1: "cornell", "stealing", "static", 1;
    cornell_stealing_static_2: "cornell", "stealing", "static", 2;
    cornell_stealing_static_3: "cornell", "stealing", "static", 3;
    cornell_stealing_static_4: "cornell", "stealing", "static", 4;
    cornell_stealing_stealing_1: "cornell", "stealing", "stealing", 1;
    cornell_stealing_stealing_2: "cornell", "stealing", "stealing", 2;
    cornell_stealing_stealing_3: "cornell", "stealing", "stealing", 3;
    cornell_stealing_stealing_4: "cornell", "stealing", "stealing", 4;
    treasure_static_static_1: "treasure", "static", "static", 1;
    treasure_static_static_2: "treasure", "static", "static", 2;
    treasure_static_static_3: "treasure", "static", "static", 3;
    treasure_static_static_4: "treasure", "static", "static", 4;
    treasure_static_stealing_1: "treasure", "static", "stealing", 1;
    treasure_static_stealing_2: "treasure", "static", "stealing", 2;
    treasure_static_stealing_3: "treasure", "static", "stealing", 3;
    treasure_static_stealing_4: "treasure", "static", "stealing", 4;
    treasure_counter_static_1: "treasure", "counter", "static", 1;
    treasure_counter_static_2: "treasure", "counter", "static", 2;
    treasure_counter_static_3: "treasure", "counter", "static", 3;
    treasure_counter_static_4: "treasure", "counter", "static", 4;
    treasure_counter_stealing_1: "treasure", "counter", "stealing", 1;
    treasure_counter_stealing_2: "treasure", "counter", "stealing", 2;
    treasure_counter_stealing_3: "treasure", "counter", "stealing", 3;
    treasure_counter_stealing_4: "treasure", "counter", "stealing", 4;
    treasure_stealing_static_1: "treasure", "stealing", "static", 1;
    treasure_stealing_static_2: "treasure", "stealing", "static", 2;
    treasure_stealing_static_3: "treasure", "stealing", "static", 3;
    treasure_stealing_static_4: "treasure", "stealing", "static", 4;
    treasure_stealing_stealing_1: "treasure", "stealing", "stealing", 1;
    treasure_stealing_stealing_2: "treasure", "stealing", "stealing", 2;
    treasure_stealing_stealing_3: "treasure", "stealing", "stealing", 3;
    treasure_stealing_stealing_4: "treasure", "stealing", "stealing", 4;
}

/// Checks that a job failed, that raylb said so in one line (mpirun adds its own) starting
/// with `said`, and that `output` was not written.
fn failed_once(out: &Output, said: &str, output: &Path) {
    assert!(!out.status.success(), "the job must fail");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("raylb")).collect();
    assert_eq!(lines.len(), 1, "one line for the job: {stderr}");
    assert!(lines[0].starts_with(said), "{}", lines[0]);
    assert!(!output.exists(), "nothing written");
}

/// A command started as several ranks without `--cluster` would run whole on every rank and
/// write the same files: refused, said once, nothing written.
#[test]
fn several_ranks_without_a_cluster_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene_path("quick");
    let render = ["render", scene.to_str().unwrap(), "-o", "out.png"];
    let said = "raylb: error: started by an MPI launcher as one of 2 processes, but only `raylb render --cluster MODE` shares its work";
    // The launcher's variables alone, in every build.
    for size in ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"] {
        let out = Command::new(env!("CARGO_BIN_EXE_raylb"))
            .args(render)
            .env(size, "2")
            .current_dir(dir.path())
            .output()
            .unwrap();
        failed_once(&out, said, &dir.path().join("out.png"));
    }
    // One process of one is a plain run.
    let one = Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(render)
        .arg("-q")
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    ok(&one);
    std::fs::remove_file(dir.path().join("out.png")).unwrap();
    if !mpi_available("several_ranks_without_a_cluster_are_refused") {
        return;
    }
    let out = mpirun(2)
        .arg(env!("CARGO_BIN_EXE_raylb"))
        .args(render)
        .current_dir(dir.path())
        .output()
        .unwrap();
    failed_once(&out, said, &dir.path().join("out.png"));
}

#[test]
fn a_scene_every_rank_fails_to_load_is_said_once() {
    if !mpi_available("a_scene_every_rank_fails_to_load_is_said_once") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        "[image]\nwidth = 64\nheight = 48\ncolour = 3\n",
    )
    .unwrap();
    let out = mpirun(3)
        .arg(env!("CARGO_BIN_EXE_raylb"))
        .args([
            "render",
            "bad.toml",
            "--cluster",
            "stealing",
            "-o",
            "out.png",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    failed_once(
        &out,
        "raylb: error: rank 0: bad.toml:4:1: ",
        &dir.path().join("out.png"),
    );
}

/// Two ranks, each started in its own folder (`mpirun` MPMD): rank 0's holds the `quick`
/// scene as `scene.toml`, rank 1's holds `rank1` as `scene.toml` (or nothing); the job renders
/// `scene.toml` to `out.png`.
fn two_folders(rank1: Option<&str>) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    std::fs::copy(scene_path("quick"), a.join("scene.toml")).unwrap();
    if let Some(text) = rank1 {
        std::fs::write(b.join("scene.toml"), text).unwrap();
    }
    let raylb = env!("CARGO_BIN_EXE_raylb");
    let rank = |dir: &Path| {
        vec![
            "-np".to_string(),
            "1".into(),
            "--wdir".into(),
            dir.display().to_string(),
            raylb.into(),
            "render".into(),
            "scene.toml".into(),
            "--cluster".into(),
            "counter".into(),
            "-o".into(),
            "out.png".into(),
        ]
    };
    let out = launcher()
        .args(rank(&a))
        .arg(":")
        .args(rank(&b))
        .output()
        .unwrap();
    (dir, out)
}

#[test]
fn a_rank_that_cannot_load_the_scene_is_named() {
    if !mpi_available("a_rank_that_cannot_load_the_scene_is_named") {
        return;
    }
    let (dir, out) = two_folders(None);
    failed_once(
        &out,
        "raylb: error: rank 1: scene.toml: cannot read: ",
        &dir.path().join("a/out.png"),
    );
}

#[test]
fn ranks_that_load_different_scenes_are_refused() {
    if !mpi_available("ranks_that_load_different_scenes_are_refused") {
        return;
    }
    let other = std::fs::read_to_string(scene_path("quick"))
        .unwrap()
        .replacen("[image]", "[image]\nsamples = 2", 1);
    let (dir, out) = two_folders(Some(&other));
    failed_once(
        &out,
        "raylb: error: rank 1: its scene or settings differ from rank 0's",
        &dir.path().join("a/out.png"),
    );
}

#[test]
fn a_rank_that_cannot_start_its_workers_ends_the_job() {
    if !mpi_available("a_rank_that_cannot_start_its_workers_ends_the_job") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = scene_path("quick");
    let raylb = env!("CARGO_BIN_EXE_raylb");
    let render = [
        "render",
        path.to_str().unwrap(),
        "--threads",
        "8",
        "--balancer",
        "stealing",
        "--cluster",
        "stealing",
        "-o",
        "out.png",
        // A budget of the test's own: under `ulimit -v` alone a rank counts its workers'
        // stacks against the limit and refuses the frame before starting any.
        "--max-memory",
        "1T",
    ];
    // Rank 1 under an address-space limit that its first worker threads fill (each thread's
    // stack 1 GiB: see refused_threads.rs for the figures), after the scene is loaded and the
    // ranks have agreed: a failure in the middle of the frame, on one rank alone.
    let started = Instant::now();
    let out = launcher()
        .args(["-np", "1", raylb])
        .args(render)
        .args([":", "-np", "1", "sh", "-c"])
        .arg(
            "ulimit -v 5000000 && RAYON_NUM_THREADS=1 RUST_MIN_STACK=1073741824 exec \"$0\" \"$@\"",
        )
        .arg(raylb)
        .args(render)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the job ends at once"
    );
    failed_once(
        &out,
        "raylb: error: rank 1: cannot start worker thread ",
        &dir.path().join("out.png"),
    );
}

/// The processes whose parent is `parent`, with the rank Open MPI gave each.
fn ranks_of(parent: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The parent is the second field after the command's closing parenthesis.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if ppid != Some(parent) {
            continue;
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        for var in environ.split(|&b| b == 0) {
            if let Some(rank) = var.strip_prefix(b"OMPI_COMM_WORLD_RANK=") {
                found.push((pid, String::from_utf8_lossy(rank).into_owned()));
            }
        }
    }
    found
}

#[test]
fn a_rank_killed_mid_frame_ends_the_job_with_nothing_written() {
    if !mpi_available("a_rank_killed_mid_frame_ends_the_job_with_nothing_written") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = scene_path("cornell");
    // A frame of several seconds: 2048² on one thread a rank.
    let mut job = mpirun(2)
        .arg(env!("CARGO_BIN_EXE_raylb"))
        .args([
            "render",
            path.to_str().unwrap(),
            "--width",
            "2048",
            "--height",
            "2048",
        ])
        .args(["--threads", "1", "--cluster", "stealing", "-o", "out.png"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Rank 0 prints the `bvh` line once the scene is built; the frame starts right after.
    let mut lines = BufReader::new(job.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.unwrap().starts_with("bvh")),
        "the job printed no bvh line"
    );
    std::thread::sleep(Duration::from_millis(500));
    let rank1 = ranks_of(job.id())
        .into_iter()
        .find(|(_, rank)| rank == "1")
        .expect("rank 1 runs under mpirun")
        .0;
    let killed = Instant::now();
    let status = Command::new("kill")
        .args(["-KILL", &rank1.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = job.wait_with_output().unwrap();
    let took = killed.elapsed();
    assert!(!out.status.success(), "the job must fail");
    assert!(
        took < Duration::from_secs(10),
        "the job took {took:?} to end"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rank 1") && stderr.contains("signal 9"),
        "the message names the rank and the cause: {stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing written: {left:?}");
}

#[test]
fn flags_that_do_not_apply_to_a_cluster_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = scene_path("quick");
    let scene = path.to_str().unwrap();
    let refused = |args: &[&str], expected: &str| {
        let out = raylb(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    };
    refused(
        &["render", scene, "--cluster", "static", "--device", "gpu"],
        "--device gpu does not apply",
    );
    refused(
        &[
            "render",
            scene,
            "--cluster",
            "stealing",
            "--cluster-chunk",
            "4",
        ],
        "--cluster-chunk applies to --cluster counter",
    );
    refused(
        &["render", scene, "--cluster-chunk", "4"],
        "--cluster-chunk applies to --cluster counter",
    );
    if cfg!(feature = "mpi") {
        refused(
            &["render", scene, "--cluster", "counter"],
            "--cluster runs under mpirun, one process per rank: mpirun -np N raylb render SCENE --cluster counter",
        );
        // A launcher that is not there is named before anything renders.
        let bench = ["bench", "cluster", scene, "--repeat", "1", "--out", "out"];
        refused(
            &[&bench[..], &["--mpirun", "/no/such/mpirun"]].concat(),
            "--mpirun /no/such/mpirun: no such file or directory",
        );
        refused(
            &[&bench[..], &["--mpirun", "no-such-mpirun"]].concat(),
            "--mpirun no-such-mpirun: no such program on PATH",
        );
    } else {
        refused(
            &["render", scene, "--cluster", "counter"],
            "--cluster: this raylb was built without MPI support; build it with `cargo build --release --features mpi`",
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

/// Test hosts: network namespaces joined by veth pairs to a bridge in a namespace of its own,
/// made for one test and removed after it.
struct TestHosts {
    prefix: String,
    subnet: String,
}

impl TestHosts {
    /// `hosts` hosts at `SUBNET.1`, `SUBNET.2`, …; `None` (after saying why) where namespaces
    /// cannot be made here and `RAYLB_REQUIRE_MPI` is not set.
    fn make(hosts: usize) -> Option<Self> {
        // Names and a subnet of this process's own, so that runs side by side do not meet.
        let id = std::process::id();
        let hosts_made = Self {
            prefix: format!("rl{}", id % 100_000),
            subnet: format!("10.{}.{}", 200 + id % 50, (id / 50) % 250),
        };
        let sw = hosts_made.switch();
        let setup = [
            format!("netns add {sw}"),
            format!("-n {sw} link add br0 type bridge"),
            format!("-n {sw} link set br0 up"),
        ];
        for command in setup {
            if let Err(e) = ip(&command) {
                assert!(
                    std::env::var_os("RAYLB_REQUIRE_MPI").is_none(),
                    "RAYLB_REQUIRE_MPI is set but network namespaces cannot be made: {e}"
                );
                eprintln!(
                    "skipped: network namespaces cannot be made here (root and iproute2 needed): {e}"
                );
                return None;
            }
        }
        for i in 0..hosts {
            let (ns, host_end, switch_end) = (
                hosts_made.host(i),
                hosts_made.end(i, 'h'),
                hosts_made.end(i, 's'),
            );
            for command in [
                format!("netns add {ns}"),
                format!("link add {host_end} type veth peer name {switch_end}"),
                format!("link set {host_end} netns {ns}"),
                format!("link set {switch_end} netns {sw}"),
                format!("-n {sw} link set {switch_end} master br0"),
                format!("-n {sw} link set {switch_end} up"),
                format!(
                    "-n {ns} addr add {}/24 dev {host_end}",
                    hosts_made.address(i)
                ),
                format!("-n {ns} link set {host_end} up"),
                format!("-n {ns} link set lo up"),
            ] {
                ip(&command).unwrap_or_else(|e| panic!("ip {command}: {e}"));
            }
        }
        Some(hosts_made)
    }

    fn switch(&self) -> String {
        format!("{}sw", self.prefix)
    }

    fn host(&self, i: usize) -> String {
        format!("{}h{i}", self.prefix)
    }

    /// The veth end of host `i` on the host (`'h'`) or the switch (`'s'`).
    fn end(&self, i: usize, side: char) -> String {
        format!("{}{side}{i}", self.prefix)
    }

    fn address(&self, i: usize) -> String {
        format!("{}.{}", self.subnet, i + 1)
    }

    /// Bytes host `i` has received.
    fn received(&self, i: usize) -> u64 {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.host(i), "cat"])
            .arg(format!(
                "/sys/class/net/{}/statistics/rx_bytes",
                self.end(i, 'h')
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }

    /// Slows down what host `i` sends: a delay where the kernel has netem, else a slow link
    /// (a token bucket), which delays every message by its size.
    fn slow_down(&self, i: usize) -> &'static str {
        let (ns, dev) = (self.host(i), self.end(i, 'h'));
        let tc = |args: &str| {
            let out = Command::new("ip")
                .args([
                    "netns", "exec", &ns, "tc", "qdisc", "add", "dev", &dev, "root",
                ])
                .args(args.split_whitespace())
                .output()
                .unwrap();
            out.status.success()
        };
        if tc("netem delay 20ms") {
            "netem: 20 ms each way"
        } else {
            assert!(tc("tbf rate 1mbit burst 4kb latency 2s"), "tc tbf works");
            "tbf: 1 Mbit/s (this kernel has no netem)"
        }
    }
}

impl Drop for TestHosts {
    fn drop(&mut self) {
        // Removing a namespace removes the veth ends in it, and so the pairs.
        let mut names = vec![self.switch()];
        names.extend((0..3).map(|i| self.host(i)));
        for name in names {
            let _ = ip(&format!("netns del {name}"));
        }
    }
}

/// Runs `ip ARGS`.
fn ip(args: &str) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args.split_whitespace())
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {args}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[test]
fn ranks_on_separate_hosts_over_a_slow_network_still_match() {
    if !mpi_available("ranks_on_separate_hosts_over_a_slow_network_still_match") {
        return;
    }
    let Some(hosts) = TestHosts::make(3) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // mpirun reaches the hosts through this: `agent HOST COMMAND…` runs the command in the
    // host's namespace, as ssh would on a host of its own. Each host also gets a temporary
    // folder of its own, as a host of its own has: Open MPI's daemons make their session
    // folders there, and two daemons making the same one at once can fail.
    let agent = dir.path().join("agent.sh");
    let mut cases = String::new();
    for i in 1..3 {
        cases += &format!("  {}) ns={} ;;\n", hosts.address(i), hosts.host(i));
    }
    let tmp = dir.path().join("tmp");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\nhost=$1\nshift\ncase $host in\n{cases}  *) echo \"agent: unknown host $host\" >&2; exit 1 ;;\nesac\nmkdir -p \"{tmp}/$ns\"\nexec ip netns exec \"$ns\" env TMPDIR=\"{tmp}/$ns\" /bin/sh -c \"$*\"\n",
            tmp = tmp.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let slowed = [hosts.slow_down(1), hosts.slow_down(2)];
    eprintln!("links slowed down: {}", slowed[0]);
    let received_before = hosts.received(1);
    let subnet = format!("{}.0/24", hosts.subnet);
    let mut launcher = Command::new("ip");
    launcher
        .args(["netns", "exec", &hosts.host(0), "mpirun"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args([
            "--host",
            &format!("{},{}", hosts.address(1), hosts.address(2)),
        ])
        .args(["-np", "2", "--mca", "plm_rsh_agent"])
        .arg(&agent)
        .args([
            "--mca",
            "btl",
            "tcp,self",
            "--mca",
            "btl_tcp_if_include",
            &subnet,
        ])
        .args(["--mca", "oob_tcp_if_include", &subnet]);
    let out = cluster_render(&mut launcher, "cornell", "stealing", "stealing")
        .current_dir(dir.path())
        .output()
        .unwrap();
    ok(&out);
    let stats = same_as_one_process(dir.path(), "cornell", "ranks on separate hosts");
    let ranks = stats["cluster"]["ranks"].as_array().unwrap();
    let requests: u64 = ranks.iter().map(|r| r["requests"].as_u64().unwrap()).sum();
    assert!(requests > 0, "no steal was tried over the slow link");
    // Rank 0 (on host 1) received rank 1's film, 24 bytes a pixel, through the network.
    let film = 64 * 48 * 24;
    let received = hosts.received(1) - received_before;
    assert!(
        received > film,
        "host 1 received {received} bytes, less than a film"
    );
}
