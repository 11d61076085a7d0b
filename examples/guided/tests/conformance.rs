//! `Guided` passes raylb's conformance kit, and renders every scene to `static`'s bytes.

use std::num::NonZeroUsize;
use std::path::Path;

use guided::Guided;
use renderer::scene::{Scene, SceneOverrides};

fn variants() -> [Guided; 3] {
    let n = |k| NonZeroUsize::new(k).unwrap();
    [
        Guided::default(),
        Guided {
            k: n(1),
            min_chunk: n(1),
        },
        Guided {
            k: n(4),
            min_chunk: n(3),
        },
    ]
}

#[test]
fn passes_the_balancer_kit() {
    for guided in variants() {
        if let Err(violation) = balancers::conformance::check(&guided) {
            panic!("{violation}");
        }
    }
}

/// Every scene of the repository, at a size that keeps the test short.
#[test]
fn renders_every_scene_to_the_bytes_of_static() {
    let scenes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes");
    for name in ["quick", "cornell", "treasure", "treasure-calm"] {
        let overrides = SceneOverrides {
            width: Some(96),
            height: Some(64),
            ..Default::default()
        };
        let scene = Scene::load(&scenes.join(format!("{name}.toml")), overrides).unwrap();
        for guided in variants() {
            if let Err(e) = renderer::conformance::check_same_bytes(&guided, &scene) {
                panic!("{name}: {e}");
            }
        }
    }
}
