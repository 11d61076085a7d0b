//! A scene exported as a mesh loads back as the very triangles the tracer traces: the same
//! float bits, in the same order; and a structure rebuilt over them on more threads
//! (`raylb bench build`) is the same structure.

mod common;

use renderer::mesh_export::{MeshFormat, write_mesh};
use renderer::scene::{MeshFraming, Scene, SceneOverrides};

use common::load_scene;

#[test]
fn an_exported_scene_loads_back_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["treasure", "cornell", "quick"] {
        let scene = load_scene(name, Some(32), Some(32));
        let triangles = scene.accel.input_triangles();
        for (format, file) in [(MeshFormat::Obj, "mesh.obj"), (MeshFormat::Ply, "mesh.ply")] {
            let path = dir.path().join(file);
            let mut bytes = Vec::new();
            write_mesh(&triangles, format, &mut bytes).unwrap();
            std::fs::write(&path, bytes).unwrap();
            let back = Scene::from_mesh(&path, SceneOverrides::default(), MeshFraming::default())
                .unwrap_or_else(|e| panic!("{name} {file}: {e}"));
            let again = back.accel.input_triangles();
            assert_eq!(again.len(), triangles.len(), "{name} {file}");
            let bits =
                |t: &renderer::geometry::Triangle| t.v.map(|v| v.to_array().map(f32::to_bits));
            for (k, (a, b)) in triangles.iter().zip(&again).enumerate() {
                assert_eq!(bits(a), bits(b), "{name} {file}: triangle {k}");
            }
        }
    }
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
