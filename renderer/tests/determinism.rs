//! The determinism contract end to end: for every scene shipped in `scenes/`, every balancer,
//! thread count and tile size gives the same fixed-point sums and the same bytes.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;

use balancers::{BalancerKind, Choice};
use renderer::accel::{AccelKind, Packets};
use renderer::bvh::Width;
use renderer::render::{RenderOptions, render};
use renderer::scene::{Scene, SceneOverrides};
use renderer::validate::{Plan, SameSums, Verdict};

fn scenes() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenes");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenes/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    out.sort();
    out
}

/// Renders shipped scene `name` at 72×56 with `samples` camera rays per pixel with every
/// balancer variant, thread count and tile edge in both structures (the wide one with and
/// without packets), and checks that all give
/// the same sums and bytes; returns those bytes.
fn same_bytes_everywhere(name: &str, samples: u32) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenes")
        .join(format!("{name}.toml"));
    let overrides = SceneOverrides {
        width: Some(72),
        height: Some(56),
        samples: Some(samples),
        ..Default::default()
    };
    let wide = Scene::load(&path, overrides).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wide.accel.kind(), AccelKind::Wide, "the default structure");
    assert_eq!(wide.packets, Packets::On, "the wide BVH traces packets");
    // The same structure, every ray on its own.
    let mut wide_single = Scene::load(&path, overrides).unwrap_or_else(|e| panic!("{e}"));
    wide_single.packets = Packets::Off;
    let octree = Scene::load(
        &path,
        SceneOverrides {
            accel: Some(AccelKind::Octree),
            ..overrides
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // The wide BVH at the width this processor does not default to.
    let other_width = match Width::best() {
        Width::Eight => Width::Four,
        Width::Four => Width::Eight,
    };
    let wide_other = Scene::load(
        &path,
        SceneOverrides {
            bvh_width: Some(other_width),
            ..overrides
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        wide_other.accel.stats().children as usize,
        other_width.children()
    );
    let mut sums = SameSums::default();
    let mut reference: Option<(Vec<u8>, String)> = None;
    let mut secondary = 0;
    // Every balancer variant in both structures (DESIGN §3), with 32 threads too in the
    // default one, and at both widths of the wide one: the library's matrix, as `raylb
    // validate` renders it.
    let plan = |threads: &[usize]| Plan {
        cpu: BalancerKind::every_variant()
            .into_iter()
            .map(Into::into)
            .collect(),
        threads: threads
            .iter()
            .map(|&t| NonZeroUsize::new(t).unwrap())
            .collect(),
        tiles: [8, 32, 64, 128, 512]
            .map(|t| NonZeroU32::new(t).unwrap())
            .to_vec(),
        ..Plan::default()
    };
    let structures = [
        (&wide, plan(&[1, 2, 3, 8, 32])),
        (&octree, plan(&[1, 2, 3, 8])),
        (&wide_other, plan(&[1, 3])),
        (&wide_single, plan(&[2])),
    ];
    for (scene, plan) in structures {
        for run in plan.runs() {
            let frame = run.render(scene, None).expect("workers start");
            let rays = frame.total_rays();
            assert_eq!(rays.camera, 72 * 56 * u64::from(samples));
            secondary = rays.reflection + rays.refraction;
            let bytes = frame.film.resolve();
            let label = format!(
                "{name} {} packets {} {}",
                scene.accel.kind().name(),
                scene.packets.keyword(),
                run.label()
            );
            let verdict = sums.check(&label, &frame.film);
            assert!(
                matches!(verdict, Verdict::Reference | Verdict::Identical),
                "{label}: fixed-point sums differ: {verdict:?}"
            );
            match &reference {
                None => reference = Some((bytes, label)),
                Some((want_bytes, first)) => {
                    assert!(*want_bytes == bytes, "{label}: bytes differ from {first}");
                }
            }
        }
    }
    assert_eq!(sums.differing(), 0);
    // A scene whose pixels are all alike would prove nothing.
    let (bytes, _) = reference.expect("at least one render");
    let distinct: std::collections::HashSet<&[u8]> = bytes.chunks(3).collect();
    assert!(
        distinct.len() > 20,
        "{name}: only {} distinct colours",
        distinct.len()
    );
    if name != "treasure-calm" {
        assert!(secondary > 0, "{name}: no secondary rays at this size");
    }
    bytes
}

/// One test per shipped scene, so that a failure names its scene.
macro_rules! same_bytes {
    ($($test:ident: $scene:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                same_bytes_everywhere($scene, 1);
            }
        )*

        #[test]
        fn every_shipped_scene_is_covered() {
            let mut names: Vec<String> = scenes()
                .iter()
                .map(|p| p.file_stem().unwrap().to_string_lossy().into())
                .collect();
            names.sort();
            let mut covered = [$($scene),*];
            covered.sort();
            assert_eq!(names, covered, "scenes/ and the tests above must list the same scenes");
        }
    };
}

same_bytes! {
    cornell: "cornell",
    quick: "quick",
    treasure: "treasure",
    treasure_calm: "treasure-calm",
}

#[test]
fn several_samples_per_pixel_write_the_same_bytes_everywhere_too() {
    let three = same_bytes_everywhere("quick", 3);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenes/quick.toml");
    let overrides = SceneOverrides {
        width: Some(72),
        height: Some(56),
        ..Default::default()
    };
    let scene = Scene::load(&path, overrides).unwrap_or_else(|e| panic!("{e}"));
    let options = RenderOptions {
        balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
        threads: NonZeroUsize::MIN,
        tile: NonZeroU32::new(8).unwrap(),
        work_map: false,
    };
    let one = render(&scene, &options)
        .expect("workers start")
        .film
        .resolve();
    // Anti-aliasing changes the pixels along edges, and only a minority of them.
    let changed = one
        .chunks(3)
        .zip(three.chunks(3))
        .filter(|(a, b)| a != b)
        .count();
    let pixels = one.len() / 3;
    assert!(
        changed > pixels / 50 && changed < pixels / 2,
        "{changed} of {pixels} pixels changed"
    );
}
