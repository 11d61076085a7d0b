//! `hybrid`: CPU workers and tile devices on one frame write the bytes of a CPU render,
//! whatever share each took. The devices here are CPU threads behind the interface a GPU's
//! device has ([`CpuTiles`]), so the scheduler, the batches and the film's integer sum are
//! checked on every machine.

mod common;

use std::num::{NonZeroU32, NonZeroUsize};

use balancers::{
    Assignment, BalancerKind, DequeKind, HybridStealing, ProcessorKind, StealAmount, VictimPolicy,
};
use common::load_scene;
use std::sync::Arc;

use renderer::film::Film;
use renderer::hybrid::{CpuTiles, HybridOptions, render_hybrid, render_hybrid_watched};
use renderer::render::{RenderOptions, render};
use renderer::watch::FrameWatch;

fn n(k: usize) -> NonZeroUsize {
    NonZeroUsize::new(k).unwrap()
}

/// Renders shipped scene `name` at 80×64 on `cpus` CPU workers and `devices` devices of
/// `device_threads` threads taking at most `max_batch` tiles, and checks its sums, bytes,
/// work map and ray counts against a CPU render.
fn same_as_cpu(
    name: &str,
    cpus: usize,
    devices: usize,
    device_threads: usize,
    max_batch: usize,
    tile: u32,
) {
    let scene = load_scene(name, Some(80), Some(64));
    let tile = NonZeroU32::new(tile).unwrap();
    let reference = render(
        &scene,
        &RenderOptions {
            balancer: BalancerKind::static_tiles(Assignment::Interleaved).into(),
            threads: n(1),
            tile,
            work_map: true,
        },
    )
    .unwrap();
    let options = HybridOptions {
        balancer: HybridStealing {
            deque: DequeKind::Locked,
            victim: VictimPolicy::Sample,
            amount: StealAmount::Half,
            ..HybridStealing::default()
        },
        threads: n(cpus),
        tile,
        work_map: true,
    };
    let runners: Vec<CpuTiles> = (0..devices)
        .map(|_| CpuTiles::new(&scene, n(device_threads), max_batch, true))
        .collect();
    let frame = render_hybrid(&scene, &options, runners).unwrap_or_else(|e| panic!("{e}"));
    let label = format!("{name}: {cpus} CPU workers, {devices} devices of {device_threads}");
    assert!(
        frame.film.sums() == reference.film.sums(),
        "{label}: sums differ"
    );
    assert!(
        frame.film.resolve() == reference.film.resolve(),
        "{label}: bytes differ"
    );
    assert!(
        frame.film.ray_counts() == reference.film.ray_counts(),
        "{label}: work maps differ"
    );
    assert_eq!(frame.total_rays(), reference.total_rays(), "{label}");
    let hybrid = frame.hybrid.as_ref().expect("hybrid figures");
    assert_eq!(hybrid.processors.len(), cpus + devices);
    assert_eq!(hybrid.devices.len(), devices);
    assert_eq!(frame.telemetry.workers.len(), cpus + devices);
    assert_eq!(frame.rays.len(), cpus + devices);
    let tiles: u64 = frame
        .telemetry
        .workers
        .iter()
        .map(|w| w.initial_tasks)
        .sum();
    assert_eq!(tiles as usize, frame.tiles, "{label}: every tile once");
    assert!(
        hybrid.processors[cpus..]
            .iter()
            .all(|p| p.kind == ProcessorKind::Batch)
    );
}

/// Two CPU workers and a device of one thread, 4 tiles a batch, on `cornell` 80×64 in tiles of
/// 8 (which divide it).
fn watched(watch: &FrameWatch) -> renderer::frame::Frame {
    let scene = load_scene("cornell", Some(80), Some(64));
    let options = HybridOptions {
        balancer: HybridStealing::default(),
        threads: n(2),
        tile: NonZeroU32::new(8).unwrap(),
        work_map: false,
    };
    let film = Arc::new(Film::new(80, 64, false));
    let device = CpuTiles::new(&scene, n(1), 4, false);
    render_hybrid_watched(&scene, &options, vec![device], film, watch)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_watched_frame_stamps_the_devices_tiles_as_the_devices() {
    // The CPU workers could, in principle, take every tile of the device's share before its
    // thread takes a batch: a frame where the device traced nothing checks nothing, so frames
    // are rendered until one gives the device some (the first, almost always).
    for _ in 0..20 {
        if watched_frame_stamps() > 0 {
            return;
        }
    }
    panic!("in 20 frames the device traced no tile");
}

/// Renders [`watched`] and checks its stamps; returns the pixels the device traced.
fn watched_frame_stamps() -> usize {
    let watch = FrameWatch::with_devices(80, 64, 2);
    let frame = watched(&watch);
    assert!(!frame.cancelled);
    assert_eq!(watch.pixels_done(), 80 * 64);
    let workers: Vec<u16> = (0..80 * 64)
        .map(|p| watch.worker_of(p).expect("every pixel stamped"))
        .collect();
    let on_device = workers.iter().filter(|&&w| watch.is_device(w)).count();
    assert!(
        workers.iter().all(|&w| w <= 2),
        "two CPU workers and the device"
    );
    assert_eq!(
        on_device as u64,
        64 * frame.telemetry.workers[2].initial_tasks,
        "the device's tiles, and no others"
    );
    let scene = load_scene("cornell", Some(80), Some(64));
    let reference = render(
        &scene,
        &RenderOptions {
            balancer: BalancerKind::static_tiles(Assignment::Interleaved).into(),
            threads: n(1),
            tile: NonZeroU32::new(8).unwrap(),
            work_map: false,
        },
    )
    .unwrap();
    assert!(
        frame.film.resolve() == reference.film.resolve(),
        "bytes differ"
    );
    on_device
}

#[test]
fn a_frame_cancelled_before_it_starts_traces_nothing() {
    let watch = FrameWatch::with_devices(80, 64, 2);
    watch.cancel();
    let frame = watched(&watch);
    assert!(frame.cancelled);
    assert!(
        (0..80 * 64).all(|p| watch.worker_of(p).is_none()),
        "nothing traced, on the CPU or the device"
    );
    assert_eq!(watch.pixels_done(), 0);
}

macro_rules! cases {
    ($($name:ident => ($scene:expr, $cpus:expr, $devices:expr, $threads:expr, $batch:expr, $tile:expr)),* $(,)?) => {$(
        #[test]
        fn $name() {
            same_as_cpu($scene, $cpus, $devices, $threads, $batch, $tile);
        }
    )*};
}

cases! {
    quick_one_cpu_one_device => ("quick", 1, 1, 1, 4, 8),
    quick_two_cpus_two_devices => ("quick", 2, 2, 1, 3, 8),
    cornell_two_cpus_one_device => ("cornell", 2, 1, 2, 8, 8),
    cornell_three_cpus_one_device_large_tiles => ("cornell", 3, 1, 1, 2, 48),
    treasure_calm_one_cpu_one_device => ("treasure-calm", 1, 1, 2, 16, 16),
    treasure_eight_cpus_one_device => ("treasure", 8, 1, 1, 6, 8),
    cpus_alone => ("cornell", 2, 0, 1, 1, 16),
}
