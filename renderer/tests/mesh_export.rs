//! A scene exported as a mesh loads back as the very triangles the tracer traces: the same
//! float bits, in the same order, whether read with a structure over them or alone (as
//! `raylb export` reads them); and a structure rebuilt over them on more threads (`raylb bench
//! build`) is the same structure.

mod common;

use renderer::geometry::Triangle;
use renderer::mesh_export::{MeshFormat, write_mesh};
use renderer::scene::{MeshFraming, Scene, SceneOverrides, SceneTriangles};

use common::{load_scene, scene_path};

fn bits(t: &Triangle) -> [[u32; 3]; 3] {
    t.v.map(|v| v.to_array().map(f32::to_bits))
}

#[test]
fn an_exported_scene_loads_back_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["treasure", "cornell", "quick"] {
        let scene = load_scene(name, Some(32), Some(32));
        let triangles = scene.accel.input_triangles();
        let alone = SceneTriangles::load(&scene_path(name), SceneOverrides::default()).unwrap();
        assert_eq!(alone.name, scene.name);
        assert_eq!(alone.inputs, scene.inputs, "{name}");
        assert_eq!(
            alone.dropped_triangles, scene.stats.dropped_triangles,
            "{name}"
        );
        assert_eq!(
            alone.triangles.iter().map(bits).collect::<Vec<_>>(),
            triangles.iter().map(bits).collect::<Vec<_>>(),
            "{name}: the triangles read alone"
        );
        for (format, file) in [(MeshFormat::Obj, "mesh.obj"), (MeshFormat::Ply, "mesh.ply")] {
            let path = dir.path().join(file);
            let mut bytes = Vec::new();
            write_mesh(&triangles, format, &mut bytes).unwrap();
            std::fs::write(&path, bytes).unwrap();
            let back = Scene::from_mesh(&path, SceneOverrides::default(), MeshFraming::default())
                .unwrap_or_else(|e| panic!("{name} {file}: {e}"));
            let again = back.accel.input_triangles();
            assert_eq!(again.len(), triangles.len(), "{name} {file}");
            for (k, (a, b)) in triangles.iter().zip(&again).enumerate() {
                assert_eq!(bits(a), bits(b), "{name} {file}: triangle {k}");
            }
            let alone = SceneTriangles::from_mesh(&path, SceneOverrides::default()).unwrap();
            assert_eq!(alone.inputs, back.inputs, "{name} {file}");
            assert_eq!(alone.triangles, again, "{name} {file}: read alone");
        }
    }
}

#[test]
fn triangles_read_alone_take_the_memory_of_triangles_not_of_a_structure() {
    let scene = load_scene("treasure", Some(8), Some(8));
    let triangles = scene.stats.triangles as u64;
    // Room for the triangles alone (100 bytes each) and the scene's text, not for the wide
    // BVH (260 bytes each).
    let memory = 200 * triangles;
    let tight = SceneOverrides {
        memory: Some(memory),
        ..Default::default()
    };
    let path = scene_path("treasure");
    let alone = SceneTriangles::load(&path, tight).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alone.triangles.len() as u64, triangles);
    let refused = Scene::load(&path, tight).unwrap_err().to_string();
    assert!(refused.contains("in the wide structure"), "{refused}");
    // And too little for the triangles alone is refused in their terms.
    let tighter = SceneOverrides {
        memory: Some(90 * triangles),
        ..Default::default()
    };
    let refused = SceneTriangles::load(&path, tighter)
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("100 bytes each as triangles alone"),
        "{refused}"
    );
}

#[test]
fn a_scene_of_no_triangles_is_refused_read_alone_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flat.obj");
    std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n").unwrap();
    let refused = SceneTriangles::from_mesh(&path, SceneOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("no triangles (1 zero-area triangles were dropped)"),
        "{refused}"
    );
}

#[test]
fn a_structure_built_on_more_threads_is_the_same_structure() {
    use std::num::NonZeroUsize;

    use renderer::accel::{Accel, AccelKind};

    let scene = load_scene("treasure", Some(8), Some(8));
    let triangles = scene.accel.input_triangles();
    for kind in [AccelKind::Wide, AccelKind::Octree] {
        let on = |threads: usize| {
            Accel::build_on(
                kind,
                &triangles,
                scene.bvh_settings,
                NonZeroUsize::new(threads).unwrap(),
            )
            .unwrap()
        };
        let (one, three) = (on(1), on(3));
        assert_eq!(one.original_indices(), three.original_indices(), "{kind:?}");
        assert_eq!(one.triangles(), three.triangles(), "{kind:?}");
    }
}
