//! The determinism contract end to end: for every scene shipped in `scenes/`, every balancer,
//! thread count and tile size gives the same fixed-point sums and the same bytes.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;

use balancers::BalancerKind;
use renderer::render::{RenderOptions, render};
use renderer::scene::{Scene, SceneOverrides};

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

#[test]
fn every_balancer_thread_count_and_tile_size_writes_the_same_bytes() {
    let scenes = scenes();
    let names: Vec<String> = scenes
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into())
        .collect();
    for required in ["cornell", "quick", "treasure", "treasure-calm"] {
        assert!(
            names.iter().any(|n| n == required),
            "scenes/{required}.toml is missing"
        );
    }
    for path in &scenes {
        let overrides = SceneOverrides {
            width: Some(72),
            height: Some(56),
            ..Default::default()
        };
        let scene = Scene::load(path, overrides).unwrap_or_else(|e| panic!("{e}"));
        let mut reference: Option<(Vec<[u64; 3]>, Vec<u8>, String)> = None;
        let mut secondary = 0;
        for balancer in BalancerKind::every_variant() {
            for threads in [1, 2, 3, 8, 32] {
                for tile in [8, 32, 64, 128, 512].map(|t| NonZeroU32::new(t).unwrap()) {
                    let options = RenderOptions {
                        balancer,
                        threads: NonZeroUsize::new(threads).unwrap(),
                        tile,
                        work_map: false,
                    };
                    let frame = render(&scene, &options).expect("workers start");
                    let rays = frame.total_rays();
                    secondary = rays.reflection + rays.refraction;
                    let sums = frame.film.sums();
                    let bytes = frame.film.resolve();
                    let label =
                        format!("{} {balancer:?} threads={threads} tile={tile}", scene.name);
                    match &reference {
                        None => reference = Some((sums, bytes, label)),
                        Some((want_sums, want_bytes, first)) => {
                            assert!(
                                *want_sums == sums,
                                "{label}: fixed-point sums differ from {first}"
                            );
                            assert!(*want_bytes == bytes, "{label}: bytes differ from {first}");
                        }
                    }
                }
            }
        }
        // A scene whose pixels are all alike would prove nothing.
        let (_, bytes, _) = reference.expect("at least one render");
        let distinct: std::collections::HashSet<&[u8]> = bytes.chunks(3).collect();
        assert!(
            distinct.len() > 20,
            "{}: only {} distinct colours",
            scene.name,
            distinct.len()
        );
        if scene.name != "treasure-calm" {
            assert!(
                secondary > 0,
                "{}: no secondary rays at this size",
                scene.name
            );
        }
    }
}
