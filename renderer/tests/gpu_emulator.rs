//! The GPU's kernels on the warp emulator (`kernels::emulator`): every GPU balancer, in both
//! structures, at one and four samples per pixel, writes the CPU's bytes, over several seeds and
//! grids; and what the emulator is for, planted in the kernels' launches, is caught.

use std::num::{NonZeroU32, NonZeroUsize};

use kernels::emulator::EmulatorOptions;
use renderer::accel::AccelKind;
use renderer::gpu::{Gpu, GpuBalancer, GpuOptions, render_gpu};
use renderer::scene::Scene;

mod common;

use common::{assert_cpus_bytes, cpu_reference, load_scene_as};

/// Every GPU balancer on `scene` at `tile`, on the emulator with `options`, against the CPU.
fn every_balancer_matches(
    scene: &Scene,
    tile: u32,
    options: EmulatorOptions,
    max_warps: Option<u32>,
) {
    let cpu = cpu_reference(scene);
    let gpu = Gpu::emulated(options).unwrap();
    for balancer in GpuBalancer::EVERY {
        let frame = render_gpu(
            &gpu,
            scene,
            &GpuOptions {
                balancer,
                tile: NonZeroU32::new(tile).unwrap(),
                work_map: true,
                max_warps,
            },
        )
        .unwrap_or_else(|e| panic!("{} {}: {e}", scene.name, balancer.name()));
        let label = format!(
            "{} {} spp {} {} tile {tile} {options:?} warps {max_warps:?}",
            scene.name,
            scene.accel.kind().name(),
            scene.samples.count(),
            balancer.name()
        );
        assert_cpus_bytes(&label, &frame, &cpu);
    }
}

#[test]
fn quick_on_the_emulator_is_the_cpus_bytes() {
    let s = load_scene_as("quick", 48, 32, AccelKind::Octree, 1);
    every_balancer_matches(&s, 8, EmulatorOptions::default(), None);
}

#[test]
fn every_gpu_balancer_in_both_structures_at_one_and_four_samples_is_the_cpus_bytes() {
    let mut seed = 10;
    for (name, w, h) in [("quick", 96, 64), ("cornell", 128, 128)] {
        for accel in [AccelKind::Octree, AccelKind::Wide] {
            for samples in [1, 4] {
                let s = load_scene_as(name, w, h, accel, samples);
                // A schedule of its own for each, on grids of two and three blocks in turn
                // (the seeds test below runs one scene over many).
                seed += 1;
                let options = EmulatorOptions {
                    seed,
                    blocks: 2 + (seed % 2) as u32,
                    ..EmulatorOptions::default()
                };
                every_balancer_matches(&s, 16, options, None);
            }
        }
    }
}

#[test]
fn seeds_and_grids_change_the_schedule_not_the_bytes() {
    let s = load_scene_as("cornell", 64, 64, AccelKind::Wide, 1);
    for seed in 1..=4 {
        for blocks in [1, 3] {
            let options = EmulatorOptions {
                blocks,
                seed,
                ..EmulatorOptions::default()
            };
            every_balancer_matches(&s, 8, options, None);
        }
    }
    // One warp; more warps than tiles.
    every_balancer_matches(&s, 8, EmulatorOptions::default(), Some(1));
    every_balancer_matches(&s, 64, EmulatorOptions::default(), None);
}

#[test]
fn the_hybrid_with_an_emulated_gpu_writes_the_cpus_bytes_on_every_scene() {
    use renderer::gpu::GpuTiles;
    use renderer::hybrid::{HybridOptions, render_hybrid};
    for name in ["quick", "cornell", "treasure", "treasure-calm"] {
        // The GPU's first batch its own pool, or every waiting tile.
        for (accel, samples, seed, first_batch) in [
            (AccelKind::Wide, 1, 1, balancers::FirstBatch::Own),
            (AccelKind::Octree, 2, 2, balancers::FirstBatch::All),
        ] {
            let s = load_scene_as(name, 64, 48, accel, samples);
            let cpu = cpu_reference(&s);
            let gpu = Gpu::emulated(EmulatorOptions {
                seed,
                ..EmulatorOptions::default()
            })
            .unwrap();
            let options = HybridOptions {
                balancer: balancers::HybridStealing {
                    first_batch,
                    ..Default::default()
                },
                threads: NonZeroUsize::new(2).unwrap(),
                tile: NonZeroU32::new(8).unwrap(),
                work_map: true,
            };
            let device = GpuTiles::new(&gpu, &s, options.tile, true).unwrap();
            let frame = render_hybrid(&s, &options, vec![device]).unwrap();
            let label = format!("{name} {} spp {samples} {first_batch:?}", accel.name());
            assert_eq!(frame.film.sums(), cpu.film.sums(), "{label}: sums");
            assert_eq!(
                frame.film.ray_counts(),
                cpu.film.ray_counts(),
                "{label}: rays per pixel"
            );
            let hybrid = frame.hybrid.as_ref().expect("a hybrid frame");
            assert!(
                hybrid.devices.iter().any(|d| d.contains("emulator")),
                "{label}: {:?}",
                hybrid.devices
            );
            // The device's own clock timed each of its batches, one launch a batch.
            assert_eq!(hybrid.batch_times.len(), 1, "{label}");
            assert_eq!(
                hybrid.batch_times[0].len(),
                hybrid.processors[2].batches.len(),
                "{label}"
            );
            let report = renderer::stats::HybridReport::new(&frame, hybrid);
            let timeline = &report.processors[2].batch_timeline;
            assert!(
                timeline.iter().all(|b| b.device_seconds.is_some()),
                "{label}: {timeline:?}"
            );
        }
    }
}

#[test]
fn batches_of_shuffled_uneven_tile_lists_add_up_to_one_launch() {
    let s = load_scene_as("cornell", 64, 64, AccelKind::Octree, 1);
    let gpu = Gpu::emulated(EmulatorOptions::default()).unwrap();
    common::batches::batches_add_up_to_one_launch(&gpu, &s);
}

#[test]
fn both_warp_deques_survive_many_schedules_of_a_stealing_heavy_frame() {
    use kernels::WarpDeque;
    let s = load_scene_as("treasure", 48, 48, AccelKind::Octree, 1);
    let cpu = cpu_reference(&s);
    for seed in 1..=6 {
        let gpu = Gpu::emulated(EmulatorOptions {
            blocks: 3,
            seed,
            ..EmulatorOptions::default()
        })
        .unwrap();
        for deque in [WarpDeque::Locked, WarpDeque::NonBlocking] {
            for half in [true, false] {
                let balancer = GpuBalancer::Stealing { half, deque };
                let frame = render_gpu(
                    &gpu,
                    &s,
                    &GpuOptions {
                        balancer,
                        tile: NonZeroU32::new(4).unwrap(),
                        work_map: false,
                        max_warps: None,
                    },
                )
                .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", balancer.name()));
                let label = format!("{} seed {seed}", balancer.name());
                assert_eq!(frame.film.sums(), cpu.film.sums(), "{label}");
                assert_eq!(frame.total_rays(), cpu.total_rays(), "{label}");
                let steals: u64 = frame
                    .telemetry
                    .workers
                    .iter()
                    .map(|w| w.steal_successes)
                    .sum();
                assert!(steals > 0, "{label}: no steal succeeded");
            }
        }
    }
}
