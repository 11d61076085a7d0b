//! How far rays leaving a surface start off it depends on the hit triangle alone
//! (`math::surface_offset`), never on the scene's extent: geometry far away changes no pixel
//! it does not show, and a scene scaled about its camera renders as it did.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::Path;

use balancers::{Assignment, BalancerKind};
use renderer::accel::AccelKind;
use renderer::render::{RenderOptions, render};
use renderer::scene::{Scene, SceneOverrides};
use toml::{Table, Value};

mod common;
use common::scene_path;

/// `quick`, edited by `edit`, written beside a temporary folder's other files and loaded
/// with `accel`.
fn edited_quick(dir: &Path, name: &str, accel: AccelKind, edit: impl Fn(&mut Table)) -> Scene {
    let text = std::fs::read_to_string(scene_path("quick")).unwrap();
    let mut table: Table = text.parse().unwrap();
    edit(&mut table);
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml::to_string(&table).unwrap()).unwrap();
    let overrides = SceneOverrides {
        accel: Some(accel),
        ..Default::default()
    };
    Scene::load(&path, overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// The image and the rays by kind of `scene`, rendered with `static` on 2 threads.
fn image(scene: &Scene) -> (Vec<u8>, [u64; 4]) {
    let frame = render(
        scene,
        &RenderOptions {
            balancer: BalancerKind::static_tiles(Assignment::Interleaved).into(),
            threads: NonZeroUsize::new(2).unwrap(),
            tile: NonZeroU32::new(16).unwrap(),
            work_map: false,
        },
    )
    .unwrap();
    let r = frame.total_rays();
    (
        frame.film.resolve(),
        [r.camera, r.shadow, r.reflection, r.refraction],
    )
}

fn vector(v: [f64; 3]) -> Value {
    Value::Array(v.iter().map(|&x| Value::Float(x)).collect())
}

fn read_vector(v: &Value) -> [f64; 3] {
    let a = v.as_array().unwrap();
    [0, 1, 2].map(|i| {
        a[i].as_float()
            .or(a[i].as_integer().map(|n| n as f64))
            .unwrap()
    })
}

/// The last object of `quick` is its box; this moves it along x.
fn move_the_box(table: &mut Table, x: f64) {
    let objects = table["objects"].as_array_mut().unwrap();
    let the_box = objects.last_mut().unwrap().as_table_mut().unwrap();
    assert!(
        the_box.contains_key("box"),
        "quick's last object is its box"
    );
    let mut t = read_vector(&the_box["translate"]);
    t[0] = x;
    the_box.insert("translate".into(), vector(t));
}

#[test]
fn a_box_moved_far_off_screen_changes_no_pixel() {
    let dir = tempfile::tempdir().unwrap();
    for accel in [AccelKind::Wide, AccelKind::Octree] {
        let near = image(&edited_quick(dir.path(), "x100", accel, |t| {
            move_the_box(t, 100.0)
        }));
        for x in [1e3, 1e4, 1e5] {
            let far = image(&edited_quick(dir.path(), &format!("x{x}"), accel, |t| {
                move_the_box(t, x)
            }));
            assert_eq!(far.1, near.1, "{accel:?}, box at x = {x}: rays by kind");
            assert!(
                far.0 == near.0,
                "{accel:?}, box at x = {x}: the image changed"
            );
        }
        // Off screen means out of every ray's way, not gone: shadows and reflections are all
        // still traced.
        assert!(near.1[1] > 5_000, "{accel:?}: shadow rays {:?}", near.1);
    }
}

/// `quick` scaled by `k` about its camera: every object, light and the camera's aim.
fn scale_about_the_camera(table: &mut Table, k: f64) {
    let camera = table["camera"].as_table_mut().unwrap();
    let c = read_vector(&camera["position"]);
    let about = |p: [f64; 3]| [0, 1, 2].map(|i| c[i] + k * (p[i] - c[i]));
    let look = read_vector(&camera["look_at"]);
    camera.insert("look_at".into(), vector(about(look)));
    for light in table["lights"].as_array_mut().unwrap() {
        let light = light.as_table_mut().unwrap();
        let p = read_vector(&light["position"]);
        light.insert("position".into(), vector(about(p)));
        if let Some(spot) = light.get_mut("spot").and_then(Value::as_table_mut) {
            let look = read_vector(&spot["look_at"]);
            spot.insert("look_at".into(), vector(about(look)));
        }
    }
    for object in table["objects"].as_array_mut().unwrap() {
        let object = object.as_table_mut().unwrap();
        assert!(
            !object.contains_key("scale"),
            "quick's objects are not scaled"
        );
        let t = object.get("translate").map_or([0.0; 3], read_vector);
        // p' = c + k (R p + t - c) = R (k p) + (k t + (1 - k) c)
        let moved = [0, 1, 2].map(|i| k * t[i] + (1.0 - k) * c[i]);
        object.insert("scale".into(), Value::Float(k));
        object.insert("translate".into(), vector(moved));
    }
}

#[test]
fn a_scene_scaled_by_ten_thousand_about_its_camera_renders_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let unscaled = image(&edited_quick(
        dir.path(),
        "unscaled",
        AccelKind::Wide,
        |_| {},
    ));
    let scaled = image(&edited_quick(dir.path(), "scaled", AccelKind::Wide, |t| {
        scale_about_the_camera(t, 1e4)
    }));
    // Rounding moves a few hit points across an edge: at most 0.5% of the rays of each kind
    // and of the pixels may differ.
    for (kind, (a, b)) in unscaled.1.iter().zip(&scaled.1).enumerate() {
        assert!(
            a.abs_diff(*b) * 200 <= *a,
            "rays of kind {kind}: {a} unscaled, {b} scaled"
        );
    }
    let pixels = unscaled.0.len() / 3;
    let differing = unscaled
        .0
        .chunks_exact(3)
        .zip(scaled.0.chunks_exact(3))
        .filter(|(a, b)| a != b)
        .count();
    eprintln!("{differing} of {pixels} pixels differ");
    assert!(
        differing * 200 <= pixels,
        "{differing} of {pixels} pixels differ"
    );
}
