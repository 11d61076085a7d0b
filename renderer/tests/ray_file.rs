//! A frame's rays as files: every ray a frame traces is dumped by its role, in the order one
//! worker traces it, and the dumped rays, traced again, hit what the frame's did.

mod common;

use std::num::{NonZeroU32, NonZeroUsize};

use balancers::{Assignment, BalancerKind};
use common::load_scene;
use renderer::ray_file::{FrameRays, FrameRaysError, MAX_RAYS, Query, RayFile, frame_rays};
use renderer::render::{RenderOptions, render};
use renderer::scene::CameraExt;

const TILE: NonZeroU32 = NonZeroU32::new(16).unwrap();

#[test]
fn a_frame_dumps_each_of_its_rays_once_by_role() {
    let scene = load_scene("treasure", Some(96), Some(64));
    let frame = render(
        &scene,
        &RenderOptions {
            balancer: BalancerKind::static_tiles(Assignment::Interleaved).into(),
            threads: NonZeroUsize::MIN,
            tile: TILE,
            work_map: false,
        },
    )
    .unwrap();
    let counted = frame.total_rays();
    let dumped = |role| frame_rays(&scene, role, TILE, MAX_RAYS).unwrap();
    let camera = dumped(FrameRays::Camera);
    let shadow = dumped(FrameRays::Shadow);
    let reflection = dumped(FrameRays::Reflection);
    let refraction = dumped(FrameRays::Refraction);
    assert_eq!(camera.rays.len() as u64, counted.camera);
    assert_eq!(camera.rays.len(), 96 * 64);
    assert_eq!(shadow.rays.len() as u64, counted.shadow);
    assert_eq!(reflection.rays.len() as u64, counted.reflection);
    assert_eq!(refraction.rays.len() as u64, counted.refraction);
    assert!(counted.reflection > 0 && counted.refraction > 0 && counted.shadow > 0);
    assert_eq!(shadow.query, Query::Occlusion);
    assert_eq!(reflection.query, Query::ClosestHit);
    // The first tile's first camera ray is the top left pixel's.
    let first = scene
        .camera
        .sample_ray(0, 0, scene.samples.offsets()[0], 96, 64);
    assert_eq!(camera.rays[0].origin, first.origin);
    assert_eq!(camera.rays[0].dir, first.dir);
    // Shadow rays end at their light: they are occlusion queries over a finite interval.
    assert!(
        shadow
            .rays
            .iter()
            .all(|r| r.t_max.is_finite() && r.t_min == 0.0)
    );
    // The same rays again, in the same order: a dump is a property of the frame.
    assert_eq!(dumped(FrameRays::Refraction), refraction);
    // Secondary rays are the reflections and the refractions, interleaved as traced.
    let secondary = dumped(FrameRays::Secondary);
    assert_eq!(
        secondary.rays.len(),
        reflection.rays.len() + refraction.rays.len()
    );
    let only = |role: &[renderer::geometry::Ray]| {
        secondary.rays.iter().filter(|r| role.contains(r)).count()
    };
    assert_eq!(only(&reflection.rays), reflection.rays.len());
    // Kept up to a limit: exactly as many as the frame traces pass, one fewer is refused.
    let n = shadow.rays.len();
    assert_eq!(
        frame_rays(&scene, FrameRays::Shadow, TILE, n).unwrap(),
        shadow
    );
    assert_eq!(
        frame_rays(&scene, FrameRays::Shadow, TILE, n - 1).unwrap_err(),
        FrameRaysError::MoreThan {
            limit: n - 1,
            which: FrameRays::Shadow
        }
    );
}

#[test]
fn dumped_rays_survive_the_file_bit_for_bit() {
    let scene = load_scene("cornell", Some(48), Some(48));
    let shadow = frame_rays(&scene, FrameRays::Shadow, TILE, MAX_RAYS).unwrap();
    let mut bytes = Vec::new();
    shadow.encode(&mut bytes).unwrap();
    let back = RayFile::decode(&mut &bytes[..], bytes.len() as u64).unwrap();
    assert_eq!(back.rays.len(), shadow.rays.len());
    for (a, b) in back.rays.iter().zip(&shadow.rays) {
        assert_eq!(
            a.origin.to_array().map(f32::to_bits),
            b.origin.to_array().map(f32::to_bits)
        );
        assert_eq!(
            a.dir.to_array().map(f32::to_bits),
            b.dir.to_array().map(f32::to_bits)
        );
        assert_eq!(a.t_max.to_bits(), b.t_max.to_bits());
    }
    let hits = |file: &RayFile| file.rays.iter().filter(|r| scene.accel.occluded(r)).count();
    assert_eq!(hits(&back), hits(&shadow));
}
