//! `raylb record`: a frame's task tree is the frame's, whatever balancer ran it, it accounts
//! for every ray of the frame, and its file reads back as written.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};

use balancers::sim::TaskTree;
use balancers::{
    Assignment, BalancerKind, DequeKind, Order, StealAmount, VictimPolicy, WorkStealing,
};
use renderer::record::{FEATURES, KINDS, record};
use renderer::render::{RenderOptions, render};
use renderer::scene::{Scene, SceneOverrides};

mod common;
use common::{ok, raylb, scene_path};

fn cornell(width: u32, height: u32) -> Scene {
    let overrides = SceneOverrides {
        width: Some(width),
        height: Some(height),
        ..Default::default()
    };
    Scene::load(&scene_path("cornell"), overrides).unwrap_or_else(|e| panic!("{e}"))
}

fn n(k: usize) -> NonZeroUsize {
    NonZeroUsize::new(k).unwrap()
}

/// The tree of a recording, its model set aside (the model comes from timing).
fn tree_of(scene: &Scene, tile: u32, balancer: BalancerKind, threads: usize) -> TaskTree {
    let mut tree = record(
        scene,
        NonZeroU32::new(tile).unwrap(),
        &balancer,
        n(threads),
        n(1),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .tree;
    tree.model.per_task = 0.0;
    tree.model.per_unit.fill(0.0);
    tree.model.fit = None;
    tree
}

#[test]
fn every_balancer_records_the_same_tree() {
    let scene = cornell(48, 40);
    // Tiles of 40 are cut into pieces as they run: pieces are tasks of the tree too.
    let reference = tree_of(
        &scene,
        40,
        BalancerKind::static_tiles(Assignment::Interleaved),
        1,
    );
    let stealing = BalancerKind::Stealing(WorkStealing {
        deque: DequeKind::Locked,
        victim: VictimPolicy::Sample,
        amount: StealAmount::Half,
        assignment: Assignment::Blocked,
        order: Order::DepthFirst,
    });
    let breadth_first = BalancerKind::counter(n(3))
        .with_order(Order::BreadthFirst)
        .unwrap();
    for (balancer, threads) in [
        (stealing, 3),
        (breadth_first, 2),
        (BalancerKind::Stealing(WorkStealing::default()), 5),
        (BalancerKind::counter(n(2)), 4),
        (BalancerKind::Rayon(balancers::RayonScope), 3),
    ] {
        let tree = tree_of(&scene, 40, balancer, threads);
        assert_eq!(tree, reference, "{balancer:?} on {threads} threads");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        tree.write_to(&mut a).unwrap();
        reference.write_to(&mut b).unwrap();
        assert!(a == b, "the same file, byte for byte");
    }
}

#[test]
fn the_tree_accounts_for_every_ray_of_the_frame() {
    let scene = cornell(40, 32);
    let recording = record(
        &scene,
        NonZeroU32::new(16).unwrap(),
        &BalancerKind::static_tiles(Assignment::Interleaved),
        n(2),
        // Timed on two threads: the tree is the same.
        n(2),
    )
    .unwrap();
    let tree = &recording.tree;
    assert!(tree.description.ends_with("timed on 2 threads"));
    let frame = render(
        &scene,
        &RenderOptions {
            balancer: BalancerKind::static_tiles(Assignment::Interleaved).into(),
            threads: n(1),
            tile: NonZeroU32::new(16).unwrap(),
            work_map: false,
        },
    )
    .unwrap();
    let mut rays = renderer::integrator::RayCounts::default();
    for worker in &frame.rays {
        rays.merge(worker);
    }
    assert_eq!(tree.features.len(), FEATURES.len());
    assert_eq!(tree.kinds.len(), KINDS.len());
    assert_eq!(tree.initial(), 3 * 2, "40×32 in tiles of 16");
    let count = |k: u8| (0..tree.len()).filter(|&i| tree.kind(i) == k).count() as u64;
    assert_eq!(count(0), 6);
    assert_eq!(count(1), rays.reflection);
    assert_eq!(count(2), rays.refraction);
    let total = |f: usize| {
        (0..tree.len())
            .map(|i| u64::from(tree.work(i)[f]))
            .sum::<u64>()
    };
    assert_eq!(total(4), rays.shadow);
    assert_eq!(total(6), rays.camera, "every camera ray is some tile's");
    let traced = rays.camera + rays.reflection + rays.refraction;
    assert!(total(5) > 0 && total(5) <= traced, "hits");
    // Tests are a tile's or a ray task's, never both.
    for i in 0..tree.len() {
        let w = tree.work(i);
        if tree.kind(i) == 0 {
            assert_eq!((w[2], w[3]), (0, 0));
        } else {
            assert_eq!((w[0], w[1], w[6]), (0, 0, 0));
            assert!(w[2] > 0 && w[5] <= 1, "one ray: tests, at most one hit");
        }
    }
    assert!(total(0) > 0 && total(1) > 0 && total(2) > 0 && total(3) > 0);
    // Every spawned ray one deeper than its parent, spawned during it.
    for i in tree.initial()..tree.len() {
        let p = tree.parent(i).unwrap();
        assert!(p < i);
        assert!(tree.children(p).contains(&i));
        assert!((0.0..=1.0).contains(&tree.spawned_at(i)));
        assert!(tree.place(i) < 40 * 32, "a pixel of the image");
        if tree.kind(p) != 0 {
            assert_eq!(tree.depth(i), tree.depth(p) + 1);
        }
    }
    let model = &tree.model;
    assert!(model.check().is_ok(), "{model:?}");
    let fit = model.fit.as_ref().expect("a fitted model");
    assert_eq!(fit.rows, tree.len() as u64);
    assert!(fit.r_squared <= 1.0);
}

#[test]
fn record_writes_a_file_that_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    let out = raylb(
        dir.path(),
        &[
            "record",
            quick.to_str().unwrap(),
            "--threads",
            "2",
            "--tile",
            "16",
        ],
    );
    let stdout = ok(&out);
    for part in ["tasks ", "model ", "fit ", "wrote   quick.tasks"] {
        assert!(stdout.contains(part), "`{part}` missing from:\n{stdout}");
    }
    let bytes = std::fs::read(dir.path().join("quick.tasks")).unwrap();
    let tree = TaskTree::read(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        tree.description.starts_with("quick 96×64"),
        "{}",
        tree.description
    );
    assert_eq!(tree.initial(), 6 * 4);
    let mut again = Vec::new();
    tree.write_to(&mut again).unwrap();
    assert!(again == bytes);
}

/// A frame of fewer tasks than the cost model has coefficients cannot be fitted: one line
/// that says what to change, and no task file.
#[test]
fn a_frame_too_small_to_fit_the_model_says_what_to_change() {
    let dir = tempfile::tempdir().unwrap();
    // One tile of camera rays on a plain quad: one task, nothing spawned.
    std::fs::write(
        dir.path().join("one.toml"),
        "[image]\nwidth = 8\nheight = 8\n[camera]\nposition = [0, 0, 5]\nlook_at = [0, 0, 0]\n\
         [[objects]]\nquad = { corners = [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]] }\n",
    )
    .unwrap();
    let out = raylb(dir.path(), &["record", "one.toml", "-q"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "raylb: error: fitting the cost model: 1 timed task cannot fit {} coefficients; record a frame of more tasks (a larger image, or smaller tiles)",
            FEATURES.len() + 1
        )
    );
    assert!(!dir.path().join("one.tasks").exists());
}

#[test]
fn record_refuses_the_gpu_and_its_balancer_and_writing_over_its_scene() {
    let dir = tempfile::tempdir().unwrap();
    let scene: PathBuf = dir.path().join("quick.toml");
    std::fs::copy(scene_path("quick"), &scene).unwrap();
    for (args, says) in [
        (
            vec!["record", "quick.toml", "--device", "gpu"],
            "--device gpu",
        ),
        (
            vec!["record", "quick.toml", "-o", "quick.toml"],
            "never writes over",
        ),
        (
            vec!["record", "quick.toml", "--balancer", "cuda-managed"],
            "invalid value 'cuda-managed' for '--balancer <BALANCER>' [possible values: static, counter, stealing, rayon]",
        ),
    ] {
        refused_in_one_line(dir.path(), &args, says);
    }
    assert_eq!(
        std::fs::read(&scene).unwrap(),
        std::fs::read(scene_path("quick")).unwrap()
    );
}

#[test]
fn sim_replays_a_recording_and_writes_its_table() {
    let dir = tempfile::tempdir().unwrap();
    record_quick(dir.path());
    let sim = [
        "sim",
        "q.tasks",
        "--workers",
        "1,4",
        "--balancers",
        "static,stealing",
        "--victim",
        "random,sample",
    ];
    let out = raylb(dir.path(), &[&sim[..], &["--out", "figures"]].concat());
    let stdout = ok(&out);
    for part in [
        "static/interleaved",
        "stealing/abp/random/half",
        "stealing/abp/sample/half",
        "wrote   figures/sim.csv, sim.svg",
    ] {
        assert!(stdout.contains(part), "`{part}` missing from:\n{stdout}");
    }
    let csv = std::fs::read_to_string(dir.path().join("figures/sim.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 2, "{csv}");
    assert!(csv.starts_with("frame,balancer,workers,makespan_seconds,speedup"));
    // The same figures on a second run: the simulation is deterministic.
    let again = raylb(dir.path(), &sim);
    assert_eq!(
        ok(&again),
        stdout.replace("wrote   figures/sim.csv, sim.svg\n", "")
    );
}

#[test]
fn sim_refuses_bad_files_and_options_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    record_quick(dir.path());
    let bytes = std::fs::read(dir.path().join("q.tasks")).unwrap();
    std::fs::write(dir.path().join("cut.tasks"), &bytes[..bytes.len() / 2]).unwrap();
    let mut other = bytes.clone();
    other[8] = 9;
    std::fs::write(dir.path().join("v9.tasks"), &other).unwrap();
    // --task-cost 0 and every work count's cost 0.
    let mut every_task_free: Vec<String> = ["sim", "q.tasks", "--task-cost", "0"]
        .map(String::from)
        .into();
    for count in renderer::record::FEATURES {
        every_task_free.extend(["--unit-cost".into(), format!("{count}=0")]);
    }
    for (args, says) in [
        (vec!["sim", "cut.tasks"], "cut.tasks: the file is cut short"),
        (vec!["sim", "v9.tasks"], "version 9"),
        (vec!["sim", "missing.tasks"], "cannot read missing.tasks"),
        (vec!["sim", "."], "cannot read ."),
        (
            vec!["sim", "q.tasks", "--balancers", "static", "--chunk", "4"],
            "--chunk applies to counter",
        ),
        (
            vec!["sim", "q.tasks", "--balancers", "cuda-managed"],
            "invalid value 'cuda-managed' for '--balancers <BALANCERS>' [possible values: static, counter, stealing, rayon]",
        ),
        (
            every_task_free.iter().map(String::as_str).collect(),
            "q.tasks: the cost model gives every task 0 ns",
        ),
        (
            vec!["sim", "q.tasks", "--unit-cost", "boxes=3"],
            "this file's work counts are",
        ),
        (
            vec!["sim", "q.tasks", "--failed-steal-cost", "0.5"],
            "from 1 to",
        ),
        (
            vec!["sim", "q.tasks", "--workers", "5000"],
            "from 1 to 4096",
        ),
    ] {
        refused_in_one_line(dir.path(), &args, says);
    }
}

#[test]
fn sim_refuses_a_unit_cost_given_twice() {
    let dir = tempfile::tempdir().unwrap();
    record_quick(dir.path());
    refused_in_one_line(
        dir.path(),
        &[
            "sim",
            "q.tasks",
            "--unit-cost",
            "box tests=1",
            "--unit-cost",
            " box tests = 2",
        ],
        "--unit-cost  box tests = 2: the cost of \"box tests\" is given twice (--unit-cost box tests=1)",
    );
}

#[test]
fn sim_compares_depth_first_with_breadth_first() {
    let dir = tempfile::tempdir().unwrap();
    record_quick(dir.path());
    let out = raylb(
        dir.path(),
        &[
            "sim",
            "q.tasks",
            "--workers",
            "1",
            "--balancers",
            "static,rayon",
            "--order",
            "depth-first,breadth-first",
        ],
    );
    let stdout = ok(&out);
    let peak = |name: &str| -> u64 {
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in:\n{stdout}"));
        row.split_whitespace().nth(8).unwrap().parse().unwrap()
    };
    // One worker breadth-first holds a whole generation of the frame's rays at once,
    // depth-first a tile's children.
    assert!(
        peak("static/interleaved/breadth-first") > 2 * peak("static/interleaved"),
        "{stdout}"
    );
    // rayon runs once, in its own order.
    assert_eq!(stdout.matches("rayon").count(), 1, "{stdout}");
}

#[test]
fn sim_runs_the_wool_tree_model() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["sim", "--wool-tree", "--workers", "4,64", "--runs", "20"];
    let out = raylb(dir.path(), &[&args[..], &["--out", "wool"]].concat());
    let stdout = ok(&out);
    for part in [
        "stealing/abp/random/one",
        "stealing/abp/sample/one",
        "wrote   wool/wool.csv, wool-time.svg, wool-steals.svg",
    ] {
        assert!(stdout.contains(part), "`{part}` missing from:\n{stdout}");
    }
    // A line a point as it ends (stderr is no terminal here, so no bar).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 2 * 2, "{stderr}");
    assert!(
        stderr.starts_with("stealing/abp/random/one on 4 workers: "),
        "{stderr}"
    );
    let csv = std::fs::read_to_string(dir.path().join("wool/wool.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 2, "{csv}");
    // 64 workers: a tree of depth 8, 256 leaves.
    assert!(csv.contains(",64,256,20,"), "{csv}");
    let again = raylb(dir.path(), &args);
    assert_eq!(
        ok(&again),
        stdout.replace(
            "wrote   wool/wool.csv, wool-time.svg, wool-steals.svg\n",
            ""
        ),
        "the same seeds, the same figures"
    );
    let other_seed = raylb(dir.path(), &[&args[..], &["--seed", "7"]].concat());
    assert_ne!(ok(&other_seed), ok(&again));
    let quiet = raylb(dir.path(), &[&args[..], &["-q"]].concat());
    ok(&quiet);
    assert!(quiet.stderr.is_empty() && quiet.stdout.is_empty());
}

#[test]
fn sim_refuses_what_its_modes_do_not_take() {
    let dir = tempfile::tempdir().unwrap();
    record_quick(dir.path());
    for (args, says) in [
        (
            vec!["sim", "--wool-tree", "--balancers", "static"],
            "--wool-tree runs stealing alone",
        ),
        (
            vec![
                "sim",
                "--wool-tree",
                "--deque",
                "abp,locked",
                "--abp-cost",
                "2",
            ],
            "--deque locked: --wool-tree charges a deque's push and pop nothing",
        ),
        (vec!["sim", "q.tasks", "--runs", "3"], "--wool-tree"),
        (
            vec!["sim", "q.tasks", "--model-from", "./q.tasks"],
            "--model-from ./q.tasks: the task file itself",
        ),
        (vec!["sim", "--wool-tree", "q.tasks"], "cannot be used with"),
        (
            vec![
                "sim",
                "q.tasks",
                "--balancers",
                "rayon",
                "--order",
                "breadth-first",
            ],
            "--order applies to static, counter and stealing",
        ),
        (
            vec![
                "sim",
                "q.tasks",
                "--balancers",
                "stealing",
                "--samples",
                "3",
            ],
            "--samples applies to stealing with --victim sample",
        ),
        (
            vec![
                "sim",
                "q.tasks",
                "--balancers",
                "static,stealing",
                "--rayon-cost",
                "40",
            ],
            "--rayon-cost applies to rayon, which is not among the policies simulated",
        ),
        (vec!["sim"], "required"),
    ] {
        refused_in_one_line(dir.path(), &args, says);
    }
}

#[test]
fn sim_sweep_keeps_its_recordings_within_max_memory() {
    // Each recording is held within what the scene and the frame leave of --max-memory, as
    // `record`'s is: past it, refused in one line, and nothing is written.
    let dir = tempfile::tempdir().unwrap();
    let quick = scene_path("quick");
    refused_in_one_line(
        dir.path(),
        &[
            "bench",
            "sim-sweep",
            quick.to_str().unwrap(),
            "--tiles",
            "16",
            "--model-tile",
            "16",
            "--workers",
            "4",
            "--width",
            "256",
            "--height",
            "256",
            "--max-memory",
            "3M",
            "--out",
            "out",
        ],
        "the frame has more than",
    );
    assert!(!dir.path().join("out").exists());
}

/// Records `scenes/quick.toml` to `q.tasks` in `dir`.
fn record_quick(dir: &Path) {
    let quick = scene_path("quick");
    ok(&raylb(
        dir,
        &["record", quick.to_str().unwrap(), "-o", "q.tasks", "-q"],
    ));
}

/// Checks that `raylb ARGS` fails with exit code 2 and one line that says `says`.
fn refused_in_one_line(dir: &Path, args: &[&str], says: &str) {
    let out = raylb(dir, args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(says), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
}
