//! Analytic scenes with a known answer, rendered through the whole pipeline.

use std::fs;
use std::num::{NonZeroU32, NonZeroUsize};

use balancers::BalancerKind;
use renderer::film::to_fixed;
use renderer::frame::Frame;
use renderer::render::{RenderOptions, render};
use renderer::scene::{Scene, SceneOverrides};

fn frame(text: &str) -> (Scene, Frame) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    fs::write(&path, format!("[image]\nwidth = 9\nheight = 9\n[camera]\nposition = [0, 0, 5]\nlook_at = [0, 0, 0]\nfov = 20\n{text}")).unwrap();
    let scene = Scene::load(&path, SceneOverrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let options = RenderOptions {
        balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
        threads: NonZeroUsize::new(2).unwrap(),
        tile: NonZeroU32::new(4).unwrap(),
        work_map: true,
    };
    let frame = render(&scene, &options).expect("workers start");
    (scene, frame)
}

/// The centre pixel's sums as colour.
fn centre(frame: &Frame) -> [f64; 3] {
    frame.film.sums()[4 * 9 + 4].map(|s| s as f64 / (1u64 << 32) as f64)
}

fn close(got: [f64; 3], want: [f64; 3]) {
    close_within(got, want, 1e-6);
}

fn close_within(got: [f64; 3], want: [f64; 3], tolerance: f64) {
    for c in 0..3 {
        assert!((got[c] - want[c]).abs() < tolerance, "{got:?} vs {want:?}");
    }
}

const WALL: &str = "[[objects]]\nquad = { corners = [[-9, -9, 0], [9, -9, 0], [9, 9, 0], [-9, 9, 0]] }\nmaterial = \"m\"\n";

#[test]
fn lambert_and_ambient_facing_the_light() {
    // Light at the eye, surface facing it: ambient · ka + diffuse · cos 0.
    let (_, f) = frame(&format!(
        "[render]\nambient = 0.2\n[[lights]]\nposition = [0, 0, 5]\n[materials.m]\ndiffuse = [0.5, 0.25, 0.125]\n{WALL}"
    ));
    close(
        centre(&f),
        [0.2 * 0.5 + 0.5, 0.2 * 0.25 + 0.25, 0.2 * 0.125 + 0.125],
    );
    assert_eq!(f.film.sums()[40][0], to_fixed(0.2f32 * 0.5 + 0.5));
    // 0.6 linear is sRGB code 203.
    assert_eq!(f.film.resolve()[40 * 3], 203);
    let rays = f.total_rays();
    assert_eq!(
        (rays.camera, rays.shadow, rays.reflection, rays.refraction),
        (81, 81, 0, 0)
    );
    assert_eq!(
        f.film.ray_counts().unwrap()[40],
        2,
        "a camera ray and a shadow ray"
    );
}

#[test]
fn shadowed_points_get_ambient_only() {
    // Light up and to the side: the centre sees it at 45°, unless a box sits in between.
    let lit = format!(
        "[render]\nambient = 0.2\n[[lights]]\nposition = [3, 0, 3]\n[materials.m]\ndiffuse = 0.5\n{WALL}"
    );
    let (_, f) = frame(&lit);
    // Shadow rays start a hair off the surface (the scene's ray offset), which tilts the
    // light's direction by about 1e-4.
    let cos = (0.5f64).sqrt();
    close_within(centre(&f), [0.1 + 0.5 * cos; 3], 2e-4);
    let (_, g) = frame(&format!(
        "{lit}[[objects]]\nbox = {{ min = [1.4, -0.1, 1.4], max = [1.6, 0.1, 1.6] }}\nmaterial = \"m\"\n"
    ));
    close(centre(&g), [0.1; 3]);
}

#[test]
fn mirror_shows_the_background_weighted() {
    let (_, f) = frame(&format!(
        "[render]\nambient = 0\nbackground = [0.8, 0.4, 0.2]\n[materials.m]\ndiffuse = 0\nreflectivity = 0.5\n{WALL}"
    ));
    close(centre(&f), [0.4, 0.2, 0.1]);
    let rays = f.total_rays();
    assert_eq!((rays.camera, rays.reflection), (81, 81));
}

#[test]
fn glass_slab_passes_light_twice_weighted() {
    // Straight through a slab at normal incidence: in and out, each weighted 0.8.
    let (_, f) = frame(
        "[render]\nambient = 0\nbackground = 1\n[materials.glass]\ndiffuse = 0\nrefractivity = 0.8\nior = 1.5\n\
         [[objects]]\nbox = { min = [-9, -9, -0.5], max = [9, 9, 0] }\nmaterial = \"glass\"\n",
    );
    close(centre(&f), [0.64; 3]);
    let rays = f.total_rays();
    assert_eq!((rays.camera, rays.refraction), (81, 2 * 81));
}

#[test]
fn depth_and_cutoff_stop_the_recursion() {
    // Two facing mirrors: the ray bounces until max_depth.
    let mirrors = "[materials.m]\ndiffuse = 0\nreflectivity = 0.9\n\
         [[objects]]\nquad = { corners = [[-9, -9, 0], [9, -9, 0], [9, 9, 0], [-9, 9, 0]] }\nmaterial = \"m\"\n\
         [[objects]]\nquad = { corners = [[-9, -9, 6], [-9, 9, 6], [9, 9, 6], [9, -9, 6]] }\nmaterial = \"m\"\n";
    let (_, f) = frame(&format!(
        "[render]\nmax_depth = 5\nweight_cutoff = 0.0001\n{mirrors}"
    ));
    assert_eq!(f.total_rays().reflection, 81 * 5);
    // 0.9^k >= 0.5 for k <= 6: the cutoff stops it first.
    let (_, g) = frame(&format!(
        "[render]\nmax_depth = 64\nweight_cutoff = 0.5\n{mirrors}"
    ));
    assert_eq!(g.total_rays().reflection, 81 * 6);
    let (_, h) = frame(&format!("[render]\nmax_depth = 0\n{mirrors}"));
    assert_eq!(h.total_rays().reflection, 0);
}

#[test]
fn total_internal_reflection_turns_refraction_into_reflection() {
    // A wedge of glass: the camera rays enter its front face head-on and meet its back face,
    // tilted 60° and facing away, from inside: past the critical angle of glass (41.8°) even
    // at the edges of the 20° field of view.
    let (_, f) = frame(
        "[render]\nambient = 0\nbackground = 1\nmax_depth = 2\nweight_cutoff = 0.0001\n\
         [materials.glass]\ndiffuse = 0\nrefractivity = 1\nior = 1.5\n\
         [[objects]]\nquad = { corners = [[-9, -9, 0], [-9, 9, -31.2], [9, 9, -31.2], [9, -9, 0]] }\nmaterial = \"glass\"\n\
         [[objects]]\nquad = { corners = [[-9, -9, 1], [9, -9, 1], [9, 9, 1], [-9, 9, 1]] }\nmaterial = \"glass\"\n",
    );
    let rays = f.total_rays();
    assert_eq!(rays.refraction, 81);
    assert_eq!(rays.reflection, 81);
}
