//! The warp emulator catches what it is for (`kernels::emulator`): a bug of each kind, planted
//! in a copy of the kernels (`kernels::emulator::PlantedBug`), makes the same frame fail in its
//! own way. A lane left out of a shuffle's mask is named with the shuffle's line; a task dropped
//! from a deque leaves the image short of rays; a count of tasks left that runs below zero, and a
//! lock never released, are reported as livelocks in well under a second instead of hanging.
//! The copy with nothing planted, built and run the same way, writes the CPU's bytes, so each
//! failure is its bug's.
//!
//! Every frame is cornell at 64 × 64 under `stealing` on the locked deque, on the emulator's
//! default grid and seed.

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use kernels::emulator::{EmulatorOptions, PlantedBug};
use renderer::accel::AccelKind;
use renderer::frame::Frame;
use renderer::gpu::{Gpu, GpuBalancer, GpuError, GpuOptions, WarpDeque, render_gpu};
use renderer::scene::Scene;

mod common;

/// Switches without a traced ray after which a launch is reported as a livelock: 25 times the
/// longest stretch the kernels go without one in these frames (under 20,000 switches, while the
/// warps flush their figures after the last ray), and a fortieth of the default, so that a
/// planted livelock is reported in a fraction of a second.
const PATIENCE: u64 = 500_000;

/// How long a planted livelock may take to be reported: far above the fraction of a second it
/// takes, so that only a launch that is no longer stopped by [`PATIENCE`] fails here.
const REPORTED_WITHIN: Duration = Duration::from_secs(20);

/// Stealing half of a victim's tasks, from the deque with a lock (the one a lock never released
/// can stop).
const BALANCER: GpuBalancer = GpuBalancer::Stealing {
    half: true,
    deque: WarpDeque::Locked,
};

/// The scene every planted bug is run on.
fn scene() -> Scene {
    common::load_scene_as("cornell", 64, 64, AccelKind::Octree, 1)
}

/// `scene` on the emulator, through the kernels or the copy `planted` names.
fn emulated(scene: &Scene, planted: Option<PlantedBug>) -> Result<Frame, GpuError> {
    let gpu = Gpu::emulated(EmulatorOptions {
        patience: PATIENCE,
        planted,
        ..EmulatorOptions::default()
    })?;
    render_gpu(
        &gpu,
        scene,
        &GpuOptions {
            balancer: BALANCER,
            tile: NonZeroU32::new(8).unwrap(),
            work_map: true,
            max_warps: None,
        },
    )
}

/// The emulator's message stopping the frame through the copy with `bug`, and how long the
/// frame took.
fn stopped(bug: PlantedBug) -> (String, Duration) {
    let start = Instant::now();
    match emulated(&scene(), Some(bug)) {
        Err(GpuError::Emulated(message)) => (message, start.elapsed()),
        Err(e) => panic!("{bug:?}: not the emulator's error: {e}"),
        Ok(_) => panic!("{bug:?}: the frame ended"),
    }
}

/// The line of the kernels' source (`cuda/raylb_kernels.cu`, as the emulator numbers it) on
/// which `text` occurs, once.
fn kernel_line(text: &str) -> usize {
    let lines: Vec<usize> = kernels::source::KERNELS
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains(text))
        .map(|(index, _)| index + 1)
        .collect();
    assert_eq!(lines.len(), 1, "`{text}` in the kernels: lines {lines:?}");
    lines[0]
}

/// Where the lanes of a livelock report that were not waiting at a collective last switched.
fn running_lines(message: &str) -> Vec<usize> {
    message
        .split("running, last switch (line ")
        .skip(1)
        .map(|rest| {
            rest[..rest.find(',').expect("line, first lane")]
                .parse()
                .unwrap()
        })
        .collect()
}

fn livelock(message: &str) -> bool {
    message.starts_with(&format!(
        "no ray traced in {PATIENCE} switches (a livelock?): "
    ))
}

#[test]
fn nothing_planted_writes_the_cpus_bytes() {
    let scene = scene();
    let cpu = common::cpu_reference(&scene);
    for planted in [None, Some(PlantedBug::Nothing)] {
        let frame = emulated(&scene, planted).unwrap_or_else(|e| panic!("{planted:?}: {e}"));
        assert_eq!(frame.film.sums(), cpu.film.sums(), "{planted:?}: sums");
        assert_eq!(
            frame.film.ray_counts(),
            cpu.film.ray_counts(),
            "{planted:?}: rays per pixel"
        );
        assert_eq!(
            frame.total_rays(),
            cpu.total_rays(),
            "{planted:?}: rays by kind"
        );
    }
}

#[test]
fn a_lane_left_out_of_a_shuffles_mask_is_named_with_the_shuffles_line() {
    let (message, _) = stopped(PlantedBug::ShuffleMaskMissesALane);
    let line = kernel_line("take = __shfl_sync(RL_FULL_MASK, take, 0);");
    assert!(
        message.contains(&format!(
            "lane 31 called __shfl_sync (line {line}) with mask 7fffffff, which leaves it out"
        )),
        "{message}"
    );
}

#[test]
fn a_task_dropped_from_a_deque_leaves_the_image_short_of_rays() {
    let scene = scene();
    let cpu = common::cpu_reference(&scene);
    // The dropped task was counted as taken: the frame ends, without it and its children.
    let frame = emulated(&scene, Some(PlantedBug::PoppedTaskDropped)).unwrap();
    let (rays, cpu_rays) = (frame.total_rays(), cpu.total_rays());
    assert_eq!(
        rays.camera, cpu_rays.camera,
        "camera rays never enter a deque"
    );
    assert!(
        rays.total() < cpu_rays.total(),
        "{rays:?} against the CPU's {cpu_rays:?}"
    );
    assert_ne!(frame.film.sums(), cpu.film.sums());
}

/// The kernels end a warp only once its own deque, buffer and tile are empty, so a count of
/// tasks left that reads zero too early cannot leave work behind (idle warps only stop looking
/// sooner); one that runs below zero never reads zero, and the idle warps look forever.
#[test]
fn a_count_of_tasks_left_released_early_is_reported_as_a_livelock() {
    let (message, elapsed) = stopped(PlantedBug::StolenTasksReleasedEarly);
    assert!(livelock(&message), "{message}");
    assert!(elapsed < REPORTED_WITHIN, "{elapsed:?}: {message}");
}

#[test]
fn a_lock_never_released_is_reported_as_a_livelock_where_it_spins() {
    let (message, elapsed) = stopped(PlantedBug::LockNeverReleased);
    assert!(livelock(&message), "{message}");
    assert!(elapsed < REPORTED_WITHIN, "{elapsed:?}: {message}");
    // Every lane still running spins in rl_lock; the rest of each warp waits for it.
    let spin = [
        kernel_line("while (atomicCAS(lock, 0u, 1u) != 0u) {"),
        kernel_line("__nanosleep(pause);"),
    ];
    let running = running_lines(&message);
    assert!(
        !running.is_empty() && running.iter().all(|line| spin.contains(line)),
        "lines {running:?}, rl_lock's {spin:?}: {message}"
    );
}
