//! Scene files and OBJ/MTL files become the triangles, materials, lights and camera they
//! describe.

use std::fs;
use std::path::{Path, PathBuf};

use renderer::math::Vec3;
use renderer::scene::{AxisDirection, LightExt, MeshFraming, Scene, SceneOverrides};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

const HEADER: &str =
    "[image]\nwidth = 4\nheight = 4\n[camera]\nposition = [0, 0, 10]\nlook_at = [0, 0, 0]\n";

fn load(text: &str) -> Scene {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &format!("{HEADER}{text}"));
    Scene::load(&path, SceneOverrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_shape_gives_its_triangles() {
    let cases = [
        (
            "quad = { corners = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]] }",
            2,
        ),
        ("box = { min = [0, 0, 0], max = [1, 2, 3] }", 12),
        (
            "sphere = { center = [0, 0, 0], radius = 1, subdivisions = 2 }",
            320,
        ),
        // Two profile rings of 8: 16 triangles; the axis points of a closed profile would be
        // degenerate, this one has none.
        ("lathe = { profile = [[1, 0], [1, 1]], segments = 8 }", 16),
        (
            "heightfield = { size = [4, 4], resolution = [3, 2], height = 0.5, seed = 3 }",
            12,
        ),
        (
            "scatter = { shape = \"coin\", count = 5, center = [0, 0, 0], radius = 1, height = 0.5, size = 0.2, segments = 8 }",
            5 * 32,
        ),
        (
            "scatter = { shape = \"gem\", count = 4, center = [0, 0, 0], radius = 1, height = 0.5, size = 0.2, segments = 10 }",
            4 * 40,
        ),
    ];
    for (shape, triangles) in cases {
        let scene = load(&format!("[[objects]]\n{shape}\n"));
        assert_eq!(scene.stats.triangles, triangles, "{shape}");
        assert_eq!(scene.stats.dropped_triangles, 0, "{shape}");
    }
}

#[test]
fn transforms_scale_then_rotate_then_translate() {
    let scene = load(
        "[[objects]]\nquad = { corners = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]] }\n\
         scale = 2\nrotate = [0, 0, 90]\ntranslate = [10, 0, 0]\n",
    );
    let mut points: Vec<Vec3> = scene.accel.triangles().iter().flat_map(|t| t.v).collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    // (1, 0) scaled to (2, 0), turned 90° about z to (0, 2), moved to (10, 2).
    let near = |p: Vec3, q: Vec3| (p - q).length() < 1e-5;
    assert!(
        points.iter().any(|&p| near(p, Vec3::new(10.0, 2.0, 0.0))),
        "{points:?}"
    );
    assert!(
        points.iter().any(|&p| near(p, Vec3::new(8.0, 2.0, 0.0))),
        "{points:?}"
    );
    assert!(
        points
            .iter()
            .all(|p| p.x <= 10.0 + 1e-5 && p.x >= 8.0 - 1e-5)
    );
}

#[test]
fn smooth_and_flat_normals() {
    let sphere = "[[objects]]\nsphere = { center = [0, 0, 0], radius = 1, subdivisions = 1 }\n";
    let smooth = load(sphere);
    let flat = load(&format!("{sphere}smooth = false\n"));
    for (i, t) in smooth.accel.triangles().iter().enumerate() {
        // Smooth: each vertex's normal is its direction from the centre.
        for (v, n) in t.v.iter().zip(smooth.shading[i].normals) {
            assert!((v.normalize() - n).length() < 1e-5);
        }
    }
    for s in &flat.shading {
        assert_eq!(s.normals[0], s.normals[1]);
        assert_eq!(s.normals[1], s.normals[2]);
    }
}

#[test]
fn materials_lights_and_settings() {
    let scene = load(
        "[render]\nmax_depth = 3\nweight_cutoff = 0.2\nambient = [0.1, 0.2, 0.3]\nbackground = 0.5\n\
         [materials.m]\ndiffuse = [0.1, 0.2, 0.3]\nspecular = 0.5\nshininess = 12\nreflectivity = 0.25\nrefractivity = [0.5, 0.6, 0.7]\nior = 1.33\n\
         [[lights]]\nposition = [1, 2, 3]\ncolor = [1, 0.5, 0.25]\nintensity = 2\n\
         [[lights]]\nposition = [0, 5, 0]\nspot = { direction = [0, -1, 0], angle = 60, inner_angle = 45 }\n\
         [[objects]]\nquad = { corners = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]] }\nmaterial = \"m\"\n",
    );
    assert_eq!(scene.settings.max_depth, 3);
    assert_eq!(scene.settings.weight_cutoff, 0.2);
    assert_eq!(scene.settings.ambient, Vec3::new(0.1, 0.2, 0.3));
    assert_eq!(scene.settings.background, Vec3::splat(0.5));
    let m = scene.materials[scene.shading[0].material as usize];
    assert_eq!(m.diffuse, Vec3::new(0.1, 0.2, 0.3));
    assert_eq!(m.ambient, m.diffuse, "ambient defaults to diffuse");
    assert_eq!(
        (m.specular, m.shininess, m.ior),
        (Vec3::splat(0.5), 12, 1.33)
    );
    assert_eq!(m.reflectivity, Vec3::splat(0.25));
    assert_eq!(m.refractivity, Vec3::new(0.5, 0.6, 0.7));
    assert_eq!(scene.lights[0].color, Vec3::new(2.0, 1.0, 0.5));
    assert_eq!(
        scene.lights[0].cone_factor(Vec3::X),
        1.0,
        "point lights shine everywhere"
    );
    let spot = scene.lights[1];
    assert_eq!(spot.direction, -Vec3::Y);
    assert_eq!(spot.cone_factor(-Vec3::Y), 1.0);
    assert_eq!(spot.cone_factor(Vec3::X), 0.0);
    let edge = Vec3::new(0.75f32.sqrt(), -0.5, 0.0).normalize(); // 60° off the axis
    assert!(spot.cone_factor(edge) < 1e-5);
    let between = Vec3::new(1.3, -1.0, 0.0).normalize(); // 52° off the axis
    assert!((0.0..1.0).contains(&spot.cone_factor(between)));
}

#[test]
fn obj_with_mtl_maps_onto_materials() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m.mtl",
        "newmtl matte\nKd 0.2 0.3 0.4\nillum 1\nKs 1 1 1\n\
         newmtl mirror\nKd 0.1 0.1 0.1\nKs 0.8 0.7 0.6\nNs 99.6\nillum 3\n\
         newmtl glass\nKd 0 0 0\nKs 0.1 0.1 0.1\nNi 1.45\nd 0.25\nillum 7\n\
         newmtl tinted\nKa 0.5 0.5 0.5\nTf 0.1 0.9 0.1\nTr 0.5\nillum 9\n",
    );
    let obj = write(
        dir.path(),
        "m.obj",
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\n\
         usemtl matte\nf 1 2 3\nusemtl mirror\nf 1 3 4\nusemtl glass\nf 1 2 5\nusemtl tinted\nf 1 5 4\n",
    );
    let scene = Scene::from_mesh(&obj, SceneOverrides::default(), MeshFraming::default()).unwrap();
    let by_diffuse = |d: Vec3| {
        *scene
            .materials
            .iter()
            .find(|m| m.diffuse == d)
            .expect("material")
    };
    let matte = by_diffuse(Vec3::new(0.2, 0.3, 0.4));
    assert_eq!(
        (matte.specular, matte.reflectivity, matte.refractivity),
        (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO)
    );
    let mirror = by_diffuse(Vec3::splat(0.1));
    assert_eq!(
        (mirror.reflectivity, mirror.shininess),
        (Vec3::new(0.8, 0.7, 0.6), 100)
    );
    let glass = by_diffuse(Vec3::ZERO);
    assert_eq!(
        (glass.reflectivity, glass.refractivity, glass.ior),
        (Vec3::splat(0.1), Vec3::splat(0.75), 1.45)
    );
    let tinted = scene
        .materials
        .iter()
        .find(|m| m.ambient == Vec3::splat(0.5))
        .expect("tinted");
    assert_eq!(
        (tinted.reflectivity, tinted.refractivity),
        (Vec3::ZERO, Vec3::new(0.1, 0.9, 0.1))
    );
    assert_eq!(scene.stats.triangles, 4);
}

#[test]
fn material_override_beats_the_mtl_and_paths_are_relative_to_the_scene() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("meshes")).unwrap();
    write(dir.path(), "meshes/t.mtl", "newmtl red\nKd 1 0 0\n");
    write(
        dir.path(),
        "meshes/t.obj",
        "mtllib t.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n",
    );
    let own = write(
        dir.path(),
        "own.toml",
        &format!("{HEADER}[[objects]]\nmesh = \"meshes/t.obj\"\n"),
    );
    let scene = Scene::load(&own, SceneOverrides::default()).unwrap();
    assert_eq!(
        scene.materials[scene.shading[0].material as usize].diffuse,
        Vec3::X
    );
    let over = write(
        dir.path(),
        "over.toml",
        &format!(
            "{HEADER}[materials.blue]\ndiffuse = [0, 0, 1]\n[[objects]]\nmesh = \"meshes/t.obj\"\nmaterial = \"blue\"\n"
        ),
    );
    let scene = Scene::load(&over, SceneOverrides::default()).unwrap();
    assert_eq!(
        scene.materials[scene.shading[0].material as usize].diffuse,
        Vec3::Z
    );
}

#[test]
fn one_mtllib_statement_may_name_several_libraries_or_one_with_spaces() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.mtl", "newmtl red\nKd 1 0 0\n");
    write(dir.path(), "b.mtl", "newmtl blue\nKd 0 0 1\n");
    write(dir.path(), "my lib.mtl", "newmtl green\nKd 0 1 0\n");
    let faces = "v 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\nusemtl blue\nf 1 3 2\n";
    let diffuse = |scene: &Scene| -> Vec<Vec3> {
        scene
            .shading
            .iter()
            .map(|s| scene.materials[s.material as usize].diffuse)
            .collect()
    };
    let both = write(
        dir.path(),
        "both.obj",
        &format!("mtllib a.mtl b.mtl\n{faces}"),
    );
    let scene = Scene::from_mesh(&both, SceneOverrides::default(), MeshFraming::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.warnings, Vec::<String>::new());
    assert_eq!(diffuse(&scene), [Vec3::X, Vec3::Z]);
    // A name with a space that is a file is that file.
    let spaced = write(
        dir.path(),
        "spaced.obj",
        "mtllib my lib.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl green\nf 1 2 3\n",
    );
    let scene = Scene::from_mesh(&spaced, SceneOverrides::default(), MeshFraming::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(diffuse(&scene), [Vec3::Y]);
    // A library of the list that cannot be read is named, at the statement.
    let missing = write(
        dir.path(),
        "missing.obj",
        &format!("mtllib a.mtl c.mtl\n{faces}"),
    );
    let e = Scene::from_mesh(&missing, SceneOverrides::default(), MeshFraming::default())
        .map(|_| ())
        .expect_err("a missing library is an error")
        .to_string();
    assert!(
        e.starts_with(&format!(
            "{}:1:8: `mtllib a.mtl c.mtl`: {}: cannot read",
            missing.display(),
            dir.path().join("c.mtl").display()
        )),
        "{e}"
    );
}

/// The warnings of loading `obj` as a bare mesh (panicking on an error).
fn mesh_warnings(obj: &Path) -> Vec<String> {
    Scene::from_mesh(obj, SceneOverrides::default(), MeshFraming::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .warnings
}

#[test]
fn a_usemtl_its_libraries_lack_is_warned_of_once_with_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.mtl", "newmtl red\nKd 1 0 0\n");
    let obj = write(
        dir.path(),
        "m.obj",
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n\
         usemtl blue\nf 1 2 3\nusemtl red\nf 1 3 2\nusemtl blue\nf 2 1 3\n",
    );
    let o = obj.display();
    assert_eq!(
        mesh_warnings(&obj),
        [format!(
            "{o}:7:1: `usemtl blue` here and on 1 more line: no material `blue` in m.mtl; their faces take the default material"
        )]
    );
    // With no `mtllib` at all, or none before the `usemtl`.
    let bare = write(
        dir.path(),
        "bare.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n",
    );
    assert_eq!(
        mesh_warnings(&bare),
        [format!(
            "{}:4:1: `usemtl red`: no `mtllib` before it names a material library; its faces take the default material",
            bare.display()
        )]
    );
    let late = write(
        dir.path(),
        "late.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\nmtllib m.mtl\nusemtl red\nf 1 3 2\n",
    );
    assert_eq!(mesh_warnings(&late).len(), 1, "{:?}", mesh_warnings(&late));
    // Two objects of one mesh: one warning.
    let scene = write(
        dir.path(),
        "s.toml",
        &format!("{HEADER}[[objects]]\nmesh = \"m.obj\"\n[[objects]]\nmesh = \"m.obj\"\n"),
    );
    let scene = Scene::load(&scene, SceneOverrides::default()).unwrap();
    assert_eq!(scene.warnings.len(), 1, "{:?}", scene.warnings);
}

#[test]
fn an_indented_usemtl_names_the_material_it_shows() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.mtl", "newmtl red\nKd 1 0 0\n");
    let obj = write(
        dir.path(),
        "m.obj",
        "  mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\n\tusemtl red  # indented\nf 1 2 3\n",
    );
    let scene = Scene::from_mesh(&obj, SceneOverrides::default(), MeshFraming::default()).unwrap();
    assert!(scene.warnings.is_empty(), "{:?}", scene.warnings);
    assert_eq!(
        scene.materials[scene.shading[0].material as usize].diffuse,
        Vec3::X
    );
}

#[test]
fn mtl_statements_raylb_leaves_out_are_warned_of_once_per_keyword() {
    let dir = tempfile::tempdir().unwrap();
    let mtl = write(
        dir.path(),
        "m.mtl",
        "# a material library\nnewmtl red\nKdd 1 0 0\nKd 1 0 0\nmap_Kd red.png\nbump b.png\n\
         newmtl green\nKd 0 1 0\nmap_Kd green.png\nmap_Kd again.png\n",
    );
    let obj = write(
        dir.path(),
        "m.obj",
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n",
    );
    let reads = "of an MTL file raylb reads only `newmtl`, `Ka`, `Kd`, `Ks`, `Ns`, `Ni`, `d`, `Tr`, `Tf` and `illum`";
    let m = mtl.display();
    assert_eq!(
        mesh_warnings(&obj),
        [
            format!("{m}:3:1: `Kdd` is left out: {reads}"),
            format!("{m}:5:1: `map_Kd` is left out here and on 2 more lines: {reads}"),
            format!("{m}:6:1: `bump` is left out: {reads}"),
        ]
    );
    // A scene's own material stands in for the library's: nothing of it is left out.
    let scene = write(
        dir.path(),
        "s.toml",
        &format!(
            "{HEADER}[materials.blue]\ndiffuse = [0, 0, 1]\n[[objects]]\nmesh = \"m.obj\"\nmaterial = \"blue\"\n"
        ),
    );
    let scene = Scene::load(&scene, SceneOverrides::default()).unwrap();
    assert!(scene.warnings.is_empty(), "{:?}", scene.warnings);
}

#[test]
fn points_polylines_and_free_form_geometry_are_warned_of_once_per_keyword() {
    let dir = tempfile::tempdir().unwrap();
    let obj = write(
        dir.path(),
        "m.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nl 1 2\np 3\n  l 2 3 # indented\ncurv 0 1 1 2\n",
    );
    let m = obj.display();
    let faces = "raylb traces faces alone";
    assert_eq!(
        mesh_warnings(&obj),
        [
            format!("{m}:5:1: `l` (a polyline) is left out here and on 1 more line: {faces}"),
            format!("{m}:6:1: `p` (points) is left out: {faces}"),
            format!("{m}:8:1: `curv` (a free-form curve) is left out: {faces}"),
        ]
    );
    // Statements that group or name faces are no geometry of their own.
    let plain = write(
        dir.path(),
        "plain.obj",
        "o tri\ng side\ns 1\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    );
    assert!(mesh_warnings(&plain).is_empty());
}

#[test]
fn a_file_full_of_unknown_statements_is_warned_of_in_a_few_lines() {
    let dir = tempfile::tempdir().unwrap();
    let junk: String = (0..1000).map(|i| format!("junk{i} 1\n")).collect();
    write(dir.path(), "m.mtl", &format!("newmtl red\n{junk}"));
    let obj = write(
        dir.path(),
        "m.obj",
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\nf 1 2 3\n",
    );
    let warnings = mesh_warnings(&obj);
    assert_eq!(warnings.len(), 9, "{warnings:?}");
    assert!(
        warnings[8]
            .ends_with(":10:1: 992 more lines, the first here, hold statements raylb leaves out"),
        "{}",
        warnings[8]
    );
}

#[test]
fn an_mtllib_naming_the_obj_itself_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, library) in [("m.obj", "m.obj"), ("n.obj", "./n.obj")] {
        let obj = write(
            dir.path(),
            name,
            &format!("v 0 0 0\nv 1 0 0\nv 0 1 0\nmtllib {library}\nf 1 2 3\n"),
        );
        let e =
            Scene::from_mesh(&obj, SceneOverrides::default(), MeshFraming::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}:4:8: `mtllib {library}` names this OBJ file itself; a material library is an MTL file of its own",
                obj.display()
            )
        );
    }
}
#[test]
fn mesh_camera_frames_the_bounding_box() {
    let dir = tempfile::tempdir().unwrap();
    let obj = write(
        dir.path(),
        "b.obj",
        "v 0 0 0\nv 4 0 0\nv 4 2 0\nv 0 2 -2\nf 1 2 3\nf 1 3 4\n",
    );
    let scene = Scene::from_mesh(
        &obj,
        SceneOverrides {
            width: Some(32),
            ..Default::default()
        },
        MeshFraming::default(),
    )
    .unwrap();
    // Centre (2, 1, -1); extents 4, 2, 2: d = 1.1 · 4 / (2 tan 22.5°) + 1.
    let d = 1.1 * 4.0 / (2.0 * 22.5f32.to_radians().tan()) + 1.0;
    assert!((scene.camera.origin - Vec3::new(2.0, 1.0, -1.0 + d)).length() < 1e-4);
    assert_eq!(scene.camera.forward, -Vec3::Z);
    assert_eq!((scene.width, scene.height), (32, 1024));
    assert_eq!(scene.lights.len(), 1);
    // The light is above and to the left of the eye, half the distance off the line of sight.
    let light = scene.camera.origin + Vec3::new(-d / 2.0, d / 2.0, 0.0);
    assert!((scene.lights[0].position - light).length() < 1e-4);
    assert_eq!(scene.settings.max_depth, 0);
}

#[test]
fn a_bare_mesh_is_framed_along_the_axes_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    // A z-up mesh: extents 4 (x), 2 (y), 6 (z) around (2, 1, 3).
    let obj = write(
        dir.path(),
        "z.obj",
        "v 0 0 0\nv 4 0 0\nv 4 2 6\nv 0 2 6\nf 1 2 3\nf 1 3 4\n",
    );
    let framing = MeshFraming {
        up: AxisDirection::PLUS_Z,
        view: AxisDirection::parse("+y").unwrap(),
    };
    let scene = Scene::from_mesh(&obj, SceneOverrides::default(), framing).unwrap();
    // Across is x (4), up is z (6), along is y (2): d = 1.1 · 6 / (2 tan 22.5°) + 1.
    let d = 1.1 * 6.0 / (2.0 * 22.5f32.to_radians().tan()) + 1.0;
    assert!((scene.camera.origin - Vec3::new(2.0, 1.0 - d, 3.0)).length() < 1e-4);
    assert_eq!(scene.camera.forward, Vec3::Y);
    assert_eq!(scene.viewpoint.up, Vec3::Z);
    // Looking along +y with +z up, the camera's right is +x; the light is above and left.
    let light = scene.camera.origin + Vec3::new(-d / 2.0, 0.0, d / 2.0);
    assert!((scene.lights[0].position - light).length() < 1e-4);

    for (text, want) in [("x", "+x"), ("+Y", "+y"), ("-z", "-z")] {
        assert_eq!(AxisDirection::parse(text).unwrap().to_string(), want);
    }
    assert!(AxisDirection::parse("w").is_err() && AxisDirection::parse("--x").is_err());

    let same_axis = MeshFraming {
        up: AxisDirection::PLUS_Z,
        view: AxisDirection::MINUS_Z,
    };
    let e = Scene::from_mesh(&obj, SceneOverrides::default(), same_axis).unwrap_err();
    assert!(e.to_string().contains("lie on one axis"), "{e}");
}
