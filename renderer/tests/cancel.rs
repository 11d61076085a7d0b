//! Cancelling a frame mid-render: every balancer stops at once, every worker returns, and the
//! frame says it was cancelled. A frame that is not cancelled is the frame `render` gives.
//!
//! One test function on purpose: it counts the process's threads, so no other test of this
//! binary may start workers beside it.

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use balancers::{
    Assignment, Balancer, BalancerKind, DequeKind, RayonScope, StealAmount, VictimPolicy,
    WorkStealing,
};
use renderer::device::FrameJob;
use renderer::live::LiveFrame;
use renderer::render::{RenderOptions, render};
use renderer::scene::Scene;

mod common;
use common::load_scene;

/// How long a cancelled frame may take to come back before the test calls it a hang.
const HANG: Duration = Duration::from_secs(5);

fn scene(name: &str) -> Arc<Scene> {
    Arc::new(load_scene(name, None, None))
}

/// Names of this process's threads that belong to a frame (`raylb-…`).
#[cfg(target_os = "linux")]
fn frame_threads() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task lists the process's threads")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .filter(|name| name.starts_with("raylb-"))
        .collect()
}

/// Elsewhere the test relies on the workers' return alone.
#[cfg(not(target_os = "linux"))]
fn frame_threads() -> Vec<String> {
    Vec::new()
}

#[test]
fn cancelled_frames_stop_join_every_worker_and_say_so() {
    let treasure = scene("treasure");
    let pixels = u64::from(treasure.width) * u64::from(treasure.height);
    let stealing = |deque| {
        BalancerKind::Stealing(WorkStealing {
            deque,
            victim: VictimPolicy::Random,
            amount: StealAmount::Half,
            assignment: Assignment::Interleaved,
            order: balancers::Order::DepthFirst,
        })
    };
    let balancers = [
        BalancerKind::static_tiles(Assignment::Interleaved),
        BalancerKind::counter(NonZeroUsize::MIN),
        stealing(DequeKind::Abp),
        stealing(DequeKind::Locked),
        BalancerKind::Rayon(RayonScope),
    ];
    for balancer in balancers {
        let options = RenderOptions {
            balancer: balancer.into(),
            threads: NonZeroUsize::new(8).unwrap(),
            tile: NonZeroU32::new(64).unwrap(),
            work_map: true,
        };
        let live = LiveFrame::start(Arc::clone(&treasure), FrameJob::Cpu(options), None)
            .expect("frame thread starts");
        // Let the workers get going: some pixels traced, far from all (a frame takes seconds).
        let start = Instant::now();
        while live.watch().pixels_done() == 0 && start.elapsed() < HANG {
            thread::sleep(Duration::from_millis(1));
        }
        assert!(
            live.watch().pixels_done() > 0,
            "{}: never started",
            balancer.name()
        );
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || tx.send(live.cancel()).ok());
        let frame = rx
            .recv_timeout(HANG)
            .unwrap_or_else(|_| panic!("{}: cancel hung", balancer.name()))
            .expect("frame ran");
        assert!(
            frame.cancelled,
            "{}: frame not marked cancelled",
            balancer.name()
        );
        let traced = frame.total_rays().camera;
        assert!(
            traced < pixels,
            "{}: all {pixels} camera rays traced despite the cancel",
            balancer.name()
        );
        assert_eq!(
            threads_left(),
            Vec::<String>::new(),
            "{}: threads left behind",
            balancer.name()
        );
    }

    // Not cancelled: the same bytes as a plain render, and no cancel mark.
    let quick = scene("quick");
    let options = RenderOptions {
        balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
        threads: NonZeroUsize::new(3).unwrap(),
        tile: NonZeroU32::new(8).unwrap(),
        work_map: false,
    };
    let live = LiveFrame::start(Arc::clone(&quick), FrameJob::Cpu(options), None).unwrap();
    let frame = live.finish().unwrap();
    assert!(!frame.cancelled);
    assert_eq!(
        frame.film.resolve(),
        render(&quick, &options).unwrap().film.resolve()
    );
    assert_eq!(threads_left(), Vec::<String>::new());
}

/// The frame threads still listed after a moment's grace: a thread whose worker has returned
/// can stay in the system's list for a moment while it ends; one still running stays.
fn threads_left() -> Vec<String> {
    let start = Instant::now();
    while !frame_threads().is_empty() && start.elapsed() < Duration::from_secs(2) {
        thread::sleep(Duration::from_millis(10));
    }
    frame_threads()
}
