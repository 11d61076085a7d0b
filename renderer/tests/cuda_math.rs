//! The CUDA kernels' math header (`kernels/cuda/raylb_math.cuh`), compiled for the host by
//! `cuda-math-host`, gives the same bits as the Rust it mirrors: the slab and triangle tests on
//! hundreds of thousands of random and degenerate rays, the vector helpers, the fixed-point
//! conversion, the camera and the spot cone, the traversals of the wide BVH's GPU form and of
//! the octree against the Rust traversals (every shipped scene's camera, secondary, shadow and
//! random rays, and the degenerate meshes of `common::meshes`), and whole frames of the
//! shipped scenes traced task by task against the CPU renderer's film.
//!
//! Every comparison is of bits (`to_bits`), signed zeros and NaNs included.

use std::num::{NonZeroU32, NonZeroUsize};

use balancers::{Assignment, BalancerKind};
use cuda_math_host as host;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use renderer::accel::AccelKind;
use renderer::bvh::wide::Width;
use renderer::bvh::{BvhSettings, OctreeBvh, WideBvh};
use renderer::film::to_fixed;
use renderer::geometry::{PreparedRay, Ray, Triangle, TriangleExt};
use renderer::gpu::DeviceScene;
use renderer::math::{self, Vec3};
use renderer::render::{RenderOptions, render};
use renderer::scene::{Camera, CameraExt, Light, LightExt, Scene, SceneOverrides};

mod common;
use common::meshes::{direction, scene_rays};
use common::{load_scene, meshes, scene_path};

const SEED: u64 = 0x5eed_c0da;

fn bits(v: [f32; 3]) -> [u32; 3] {
    v.map(f32::to_bits)
}

fn host_ray(r: &Ray) -> host::Ray {
    host::Ray {
        origin: r.origin.to_array(),
        dir: r.dir.to_array(),
        t_min: r.t_min,
        t_max: r.t_max,
    }
}

/// A coordinate in `[-scale, scale)`, often a special value: ±0, a multiple of `scale / 4`.
fn coord(rng: &mut StdRng, scale: f32) -> f32 {
    match rng.random_range(0..16) {
        0 => 0.0,
        1 => -0.0,
        2 | 3 => rng.random_range(-4i32..=4) as f32 * scale / 4.0,
        _ => rng.random_range(-scale..scale),
    }
}

fn point(rng: &mut StdRng, scale: f32) -> Vec3 {
    Vec3::new(coord(rng, scale), coord(rng, scale), coord(rng, scale))
}

/// The bits of `x`, with -0 read as +0.
///
/// For the slab test's `(enter, leave)` only. Both sides take maxima and minima of the
/// per-axis distances, which are ±0 when the origin lies on a face, and neither `f32::max` /
/// `f32::min` (documented: "if the inputs compare equal (such as for the case of +0.0 and
/// -0.0), either input may be returned non-deterministically"; LLVM's `maxnum`/`minnum` say
/// the same) nor C's `fmaxf` / `fminf` (C17 F.10.9.2 only recommends `fmax(-0, +0) = +0`)
/// fixes which zero comes out. The sign cannot reach a result: `enter` and `leave` are only
/// compared, and the triangle test's distance clamped into them must exceed `t_min = 0`.
fn zero_blind_bits(x: f32) -> u32 {
    if x == 0.0 { 0 } else { x.to_bits() }
}

fn ray_interval(rng: &mut StdRng) -> (f32, f32) {
    match rng.random_range(0..6) {
        0 => (f32::NEG_INFINITY, f32::INFINITY),
        1 => (0.0, 0.0),
        2 => (rng.random_range(0.0..1.0), rng.random_range(1.0..10.0)),
        3 => (-1.0, 1.0),
        _ => (0.0, f32::INFINITY),
    }
}

#[test]
fn slab_box_matches_on_random_and_axis_parallel_rays() {
    let mut rng = StdRng::seed_from_u64(SEED);
    let cases = 200_000;
    let mut entered = 0;
    let mut signed_zeros = 0;
    for i in 0..cases {
        let scale = [1.0, 10.0, 1000.0, 1e-3][i % 4];
        let min = point(&mut rng, scale);
        let extent = |rng: &mut StdRng| {
            if rng.random_range(0..8) == 0 {
                0.0
            } else {
                rng.random_range(0.0..2.0 * scale)
            }
        };
        let max = min + Vec3::new(extent(&mut rng), extent(&mut rng), extent(&mut rng));
        let mut origin = point(&mut rng, 2.0 * scale);
        // Origins on the box's faces (and, with two or three axes, edges and corners).
        for axis in 0..3 {
            match rng.random_range(0..6) {
                0 => origin[axis] = min[axis],
                1 => origin[axis] = max[axis],
                _ => {}
            }
        }
        let (t_min, t_max) = ray_interval(&mut rng);
        // Half the rays aimed at a point of the box (now and then with one component of the
        // direction zeroed), the others in any direction.
        let mut dir = direction(&mut rng);
        if rng.random_bool(0.5) {
            let mut s = || rng.random_range(0.0f32..=1.0);
            let target = min + (max - min) * Vec3::new(s(), s(), s());
            dir = target - origin;
            if rng.random_range(0..4) == 0 {
                dir[rng.random_range(0..3)] = if rng.random_bool(0.5) { 0.0 } else { -0.0 };
            }
        }
        let ray = Ray {
            origin,
            dir,
            t_min,
            t_max,
        };
        let (bt_min, bt_max) = ray_interval(&mut rng);
        let prepared = PreparedRay::new(&ray);
        let (enter, leave) = prepared.slab_box(min.to_array(), max.to_array(), bt_min, bt_max);
        let hray = host_ray(&ray);
        assert_eq!(
            prepared.octant() as u32,
            host::octant(&hray),
            "octant of {ray:?}"
        );
        let (h_enter, h_leave) =
            host::slab_box(&hray, min.to_array(), max.to_array(), bt_min, bt_max);
        assert_eq!(
            (zero_blind_bits(enter), zero_blind_bits(leave)),
            (zero_blind_bits(h_enter), zero_blind_bits(h_leave)),
            "case {i}: {ray:?} box {min} {max} over ({bt_min}, {bt_max}): \
             rust ({enter}, {leave}), c++ ({h_enter}, {h_leave})"
        );
        entered += usize::from(enter <= leave);
        // Results that differ only in the sign of a zero (see `zero_blind_bits`).
        signed_zeros += usize::from(
            (enter.to_bits(), leave.to_bits()) != (h_enter.to_bits(), h_leave.to_bits()),
        );
    }
    eprintln!("{entered} of {cases} rays met their box; {signed_zeros} differ in a zero's sign");
    assert!(
        entered > cases / 5,
        "only {entered} of {cases} rays met their box"
    );
}

/// A triangle and a ray for it: mostly rays aimed inside the triangle, and edges, vertices,
/// slivers, shared edges, grid-aligned geometry (edge functions exactly zero, so the double
/// precision fallback runs), zero-area triangles and random misses.
fn triangle_case(rng: &mut StdRng, i: usize) -> (Triangle, Ray, f32) {
    let scale = [1.0, 10.0, 100.0, 0.01][i % 4];
    let mut padding = scale / 65536.0;
    if rng.random_range(0..8) == 0 {
        padding = 0.0;
    }
    let p = |rng: &mut StdRng| point(rng, scale);
    let mut v = [p(rng), p(rng), p(rng)];
    let bary = |rng: &mut StdRng| {
        let (a, b): (f32, f32) = (rng.random(), rng.random());
        let (a, b) = if a + b > 1.0 {
            (1.0 - a, 1.0 - b)
        } else {
            (a, b)
        };
        [1.0 - a - b, a, b]
    };
    let mut weights = bary(rng);
    match rng.random_range(0..10) {
        // An edge or a vertex.
        0 => {
            weights[rng.random_range(0..3)] = 0.0;
            if rng.random_bool(0.3) {
                weights = [0.0; 3];
                weights[rng.random_range(0..3)] = 1.0;
            }
        }
        // A sliver: the third vertex a hair off the line through the other two.
        1 => {
            let s: f32 = rng.random();
            let off = scale * [1e-6, 1e-5, 1e-7][rng.random_range(0..3)];
            v[2] = v[0] + (v[1] - v[0]) * s + Vec3::new(off, -off, off * 0.5);
        }
        // The other triangle of a quad, sharing the edge v0–v1 (reversed), hit on that edge.
        2 => {
            let t: f32 = rng.random();
            v = [v[1], v[0], p(rng)];
            weights = [t, 1.0 - t, 0.0];
        }
        // Grid-aligned: small integer coordinates, rays along an axis through grid points.
        3 => {
            let g = |rng: &mut StdRng| rng.random_range(-3i32..=3) as f32 * scale;
            let flat = rng.random_range(0..3);
            let level = g(rng);
            for vertex in &mut v {
                *vertex = Vec3::new(g(rng), g(rng), g(rng));
                vertex[flat] = level;
            }
            let mut origin = Vec3::new(g(rng), g(rng), g(rng)) * 0.5;
            origin[flat] = level + 5.0 * scale;
            let mut dir = Vec3::ZERO;
            dir[flat] = if rng.random_bool(0.5) { -1.0 } else { -0.5 };
            let ray = Ray::new(origin, dir);
            return (Triangle { v }, ray, padding);
        }
        // Zero area: a repeated vertex or three collinear ones.
        4 => {
            if rng.random_bool(0.5) {
                v[2] = v[rng.random_range(0..2)];
            } else {
                v[2] = v[0] + (v[1] - v[0]) * 2.0;
            }
        }
        // A random ray, mostly a miss.
        5 => {
            let ray = Ray::new(p(rng) * 2.0, direction(rng));
            return (Triangle { v }, ray, padding);
        }
        _ => {}
    }
    let target = v[0] * weights[0] + v[1] * weights[1] + v[2] * weights[2];
    let origin = point(rng, 3.0 * scale);
    let mut dir = target - origin;
    if rng.random_bool(0.5) {
        dir = math::normalize(dir);
    }
    // Now and then one component zeroed: a ray parallel to a coordinate plane.
    if rng.random_range(0..8) == 0 {
        dir[rng.random_range(0..3)] = if rng.random_bool(0.5) { 0.0 } else { -0.0 };
    }
    let mut ray = Ray::new(origin, dir);
    if rng.random_range(0..6) == 0 {
        ray.t_max = rng.random_range(0.0..2.0);
    }
    (Triangle { v }, ray, padding)
}

#[test]
fn triangle_test_matches_on_hits_edges_slivers_and_degenerate_triangles() {
    let mut rng = StdRng::seed_from_u64(SEED ^ 1);
    let cases = 200_000;
    let mut hits = 0;
    let mut on_edges = 0;
    for i in 0..cases {
        let (tri, ray, padding) = triangle_case(&mut rng, i);
        let rust = tri.intersect_with_barycentrics(&PreparedRay::new(&ray), padding);
        let cpp = host::triangle_hit(&tri, &host_ray(&ray), padding);
        let rust_bits = rust.map(|h| (h.t.to_bits(), bits(h.bary)));
        let cpp_bits = cpp.map(|(t, b)| (t.to_bits(), bits(b)));
        assert_eq!(
            rust_bits, cpp_bits,
            "case {i}: {tri:?} {ray:?} padding {padding}: rust {rust:?}, c++ {cpp:?}"
        );
        hits += usize::from(rust.is_some());
        // A zero weight means an edge function was exactly zero: the double-precision
        // fallback ran.
        on_edges += usize::from(rust.is_some_and(|h| h.bary.contains(&0.0)));
    }
    eprintln!("{hits} of {cases} rays hit their triangle, {on_edges} on an edge or vertex");
    assert!(hits > cases / 3, "only {hits} of {cases} rays hit");
    assert!(on_edges > cases / 100, "only {on_edges} hits on edges");
}

#[test]
fn vector_helpers_match() {
    let mut rng = StdRng::seed_from_u64(SEED ^ 2);
    for i in 0..100_000 {
        let scale = [1.0, 1e-20, 1e20, 3.0][i % 4];
        let v = point(&mut rng, scale);
        assert_eq!(
            bits(math::normalize(v).to_array()),
            bits(host::normalize(v.to_array())),
            "normalize {v}"
        );
        let d = math::normalize(direction(&mut rng) + Vec3::new(0.0, 0.0, 1e-3));
        let n = math::normalize(point(&mut rng, 1.0) + Vec3::new(1e-3, 0.0, 0.0));
        assert_eq!(
            bits(math::reflect(d, n).to_array()),
            bits(host::reflect(d.to_array(), n.to_array())),
            "reflect {d} {n}"
        );
        let eta = match rng.random_range(0..4) {
            0 => 1.0 / 1.5,
            1 => 1.5,
            _ => rng.random_range(0.3f32..2.5),
        };
        let rust = math::refract(d, n, eta).map(|r| bits(r.to_array()));
        let cpp = host::refract(d.to_array(), n.to_array(), eta).map(bits);
        assert_eq!(rust, cpp, "refract {d} {n} {eta}");
        let x = match rng.random_range(0..4) {
            0 => rng.random_range(-1.5f32..1.5),
            1 => f32::from_bits(rng.random()),
            _ => rng.random_range(0.0f32..1.0),
        };
        let e = match rng.random_range(0..4) {
            0 => rng.random(),
            _ => rng.random_range(0..300),
        };
        assert_eq!(
            math::powi(x, e).to_bits(),
            host::powi(x, e).to_bits(),
            "powi {x} {e}"
        );
    }
}

#[test]
fn fixed_point_conversion_matches() {
    let mut rng = StdRng::seed_from_u64(SEED ^ 3);
    let specials = [
        0.0,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        f32::MAX,
        256.0,
        255.99998,
        256.00002,
        1.0,
        2f32.powi(-33),
        2f32.powi(-34),
        3.0 * 2f32.powi(-33),
    ];
    for x in specials {
        assert_eq!(to_fixed(x), host::to_fixed(x), "to_fixed {x}");
    }
    for _ in 0..200_000 {
        let x = match rng.random_range(0..4) {
            0 => f32::from_bits(rng.random()),
            // Exact halves of the last fixed-point unit: the rounding's ties.
            1 => (rng.random_range(0u32..1 << 24) as f32 + 0.5) * 2f32.powi(-32),
            2 => rng.random_range(0.0f32..300.0),
            _ => rng.random_range(-1e-6f32..1.0),
        };
        assert_eq!(
            to_fixed(x),
            host::to_fixed(x),
            "to_fixed {x} ({:#x})",
            x.to_bits()
        );
    }
}

#[test]
fn camera_rays_match() {
    let mut rng = StdRng::seed_from_u64(SEED ^ 4);
    let mut checked = 0;
    while checked < 100_000 {
        let Some(camera) = Camera::new(
            point(&mut rng, 10.0),
            direction(&mut rng),
            direction(&mut rng),
            rng.random_range(1.0f32..170.0),
        ) else {
            continue;
        };
        for _ in 0..10 {
            let (w, h) = (rng.random_range(1..4096), rng.random_range(1..4096));
            let (x, y) = (rng.random_range(0..w), rng.random_range(0..h));
            let ray = camera.primary_ray(x, y, w, h);
            assert_eq!(
                bits(ray.dir.to_array()),
                bits(host::primary_dir(&camera, x, y, w, h)),
                "{camera:?} pixel ({x}, {y}) of {w}×{h}"
            );
            checked += 1;
        }
    }
}

#[test]
fn spot_cones_match() {
    let mut rng = StdRng::seed_from_u64(SEED ^ 5);
    for i in 0..100_000 {
        let direction = math::normalize(point(&mut rng, 1.0) + Vec3::new(0.0, -1e-3, 0.0));
        let light = if i % 10 == 0 {
            Light::point(point(&mut rng, 5.0), Vec3::ONE)
        } else {
            let outer: f32 = rng.random_range(-1.0..1.0);
            let inner = if rng.random_bool(0.1) {
                outer
            } else {
                rng.random_range(outer..1.0)
            };
            Light {
                position: point(&mut rng, 5.0),
                color: Vec3::ONE,
                direction,
                cos_outer: outer,
                cos_inner: inner,
            }
        };
        let to_point = match rng.random_range(0..4) {
            0 => direction,
            1 => -direction,
            _ => math::normalize(point(&mut rng, 1.0) + Vec3::new(1e-3, 0.0, 0.0)),
        };
        assert_eq!(
            light.cone_factor(to_point).to_bits(),
            host::cone_factor(&light, to_point.to_array()).to_bits(),
            "{light:?} towards {to_point}"
        );
    }
}

/// Renders a shipped scene at `samples` per pixel on the CPU and traces the same frame with
/// the header's `rl_trace` through `structure`, one pixel at a time with a stack of child
/// tasks, and requires the same film and work map.
fn frame_matches(name: &str, structure: AccelKind, samples: u32) {
    let overrides = SceneOverrides {
        width: Some(64),
        height: Some(48),
        samples: Some(samples),
        ..Default::default()
    };
    let scene = Scene::load(&scene_path(name), overrides).unwrap_or_else(|e| panic!("{e}"));
    let options = RenderOptions {
        balancer: BalancerKind::static_tiles(Assignment::Interleaved).into(),
        threads: NonZeroUsize::MIN,
        tile: NonZeroU32::new(8).unwrap(),
        work_map: true,
    };
    let frame = render(&scene, &options).expect("workers start");

    // The CPU rendered with the wide BVH; the kernels' math traverses `structure`'s device
    // form, built from the same triangles, in its own leaf order.
    assert_eq!(scene.accel.kind(), AccelKind::Wide);
    let rebuilt = scene
        .with_accel(structure)
        .expect("the build's threads start");
    let traced = rebuilt.as_ref().unwrap_or(&scene);
    assert_eq!(traced.accel.kind(), structure);
    let device_scene = DeviceScene::new(traced);
    let host_scene = host::Scene::new(&device_scene.data(traced));
    let pixels = (scene.width * scene.height) as usize;
    let mut sums = vec![0u64; 3 * pixels];
    let mut rays = vec![0u32; pixels];
    let mut counts = layout::kernel::Counts::default();
    let mut stack = Vec::new();
    for y in 0..scene.height {
        for x in 0..scene.width {
            for sample in 0..samples {
                stack.push(host_scene.camera_task(x, y, sample));
                while let Some(task) = stack.pop() {
                    let children = host_scene.trace(&task, &mut sums, Some(&mut rays), &mut counts);
                    stack.extend(children);
                }
            }
        }
    }

    let cpu = frame.total_rays();
    assert_eq!(
        (
            counts.camera,
            counts.shadow,
            counts.reflection,
            counts.refraction
        ),
        (cpu.camera, cpu.shadow, cpu.reflection, cpu.refraction),
        "{name}: rays by kind"
    );
    assert!(
        cpu.reflection + cpu.refraction > 0,
        "{name}: no secondary rays"
    );
    let cpu_sums: Vec<u64> = frame.film.sums().into_iter().flatten().collect();
    let differing = (0..pixels)
        .filter(|&p| cpu_sums[3 * p..3 * p + 3] != sums[3 * p..3 * p + 3])
        .count();
    assert_eq!(
        differing, 0,
        "{name}: {differing} of {pixels} pixels differ"
    );
    assert_eq!(
        frame.film.ray_counts().expect("work map asked for"),
        rays,
        "{name}: rays per pixel"
    );
}

#[test]
fn quick_frame_matches_the_cpu_film() {
    frame_matches("quick", AccelKind::Octree, 1);
}

#[test]
fn cornell_frame_matches_the_cpu_film() {
    frame_matches("cornell", AccelKind::Octree, 1);
}

#[test]
fn quick_frame_through_the_wide_bvh_matches_the_cpu_film() {
    frame_matches("quick", AccelKind::Wide, 1);
}

#[test]
fn cornell_frame_through_the_wide_bvh_matches_the_cpu_film() {
    frame_matches("cornell", AccelKind::Wide, 1);
}

#[test]
fn cornell_frame_at_four_samples_matches_the_cpu_film_through_either_structure() {
    frame_matches("cornell", AccelKind::Octree, 4);
    frame_matches("cornell", AccelKind::Wide, 4);
}

#[test]
fn quick_frame_at_three_samples_matches_the_cpu_film() {
    // Three samples: not a power of two, so the rows' radical inverse skips a value.
    frame_matches("quick", AccelKind::Wide, 3);
}

// ---------------------------------------------------------------------------------------------
// Traversal: the header's traversals of the wide BVH's GPU form and of the octree, against the
// Rust traversals of the same trees.

/// The closest hit as the closest-hit rule defines it: its distance's bits and the triangle's
/// index in the input. (Leaf orders differ between structures; input indices do not.)
type Answer = Option<(u32, u32)>;

/// Checks the header's traversal of the wide BVH's GPU form against the Rust traversal of the
/// wide BVH it was built from, at both widths, and the header's octree traversal against the
/// Rust octree's: the same closest hit (distance bits and input index) and the same occlusion
/// answer for every ray. Returns how many rays hit.
fn traversals_match(name: &str, triangles: &[Triangle], settings: BvhSettings, rays: &[Ray]) {
    let mut answers: Option<Vec<Answer>> = None;
    for width in [Width::Eight, Width::Four] {
        let cpu = WideBvh::build_with_width(triangles, settings, width);
        let gpu = cpu.to_gpu();
        let host = host::WideScene::new(
            gpu.nodes(),
            gpu.triangles(),
            gpu.original_indices(),
            gpu.padding(),
        );
        let mut found = Vec::with_capacity(rays.len());
        for (n, ray) in rays.iter().enumerate() {
            let want = cpu.closest_hit(ray).map(|h| (h.t.to_bits(), h.original));
            let got = host
                .closest_hit(&host_ray(ray))
                .map(|h| (h.t.to_bits(), gpu.original_indices()[h.index as usize]));
            assert_eq!(got, want, "{name}, {width:?}: ray {n} {ray:?}");
            assert_eq!(
                host.occluded(&host_ray(ray)),
                cpu.occluded(ray),
                "{name}, {width:?}: occlusion of ray {n} {ray:?}"
            );
            found.push(want);
        }
        // Both widths find the same hits, as every structure must.
        if let Some(first) = &answers {
            assert_eq!(first, &found, "{name}: the widths disagree");
        }
        answers = Some(found);
    }
    let answers = answers.expect("two widths");

    let octree = OctreeBvh::build(triangles, settings);
    let scene = meshes::TraversalScene::new(&octree);
    let host = host::Scene::new(&scene.data());
    for (n, ray) in rays.iter().enumerate() {
        let got = host
            .closest_hit(&host_ray(ray))
            .map(|h| (h.t.to_bits(), octree.original_indices()[h.index as usize]));
        assert_eq!(got, answers[n], "{name}, octree: ray {n} {ray:?}");
        assert_eq!(
            host.occluded(&host_ray(ray)),
            octree.occluded(ray),
            "{name}, octree: occlusion of ray {n} {ray:?}"
        );
    }

    let hits = answers.iter().filter(|a| a.is_some()).count();
    eprintln!("{name}: {hits} of {} rays hit", rays.len());
    // A test that never hits, or never misses, proves little.
    assert!(hits > rays.len() / 10, "{name}: only {hits} hits");
    assert!(hits < rays.len(), "{name}: no misses");
}

/// A shipped scene at 64×48: its camera, secondary and shadow rays and 4,000 random ones.
fn scene_traversals_match(name: &str, seed: u64) {
    let scene = load_scene(name, Some(64), Some(48));
    let rays = scene_rays(&scene, &mut StdRng::seed_from_u64(seed), 4_000);
    traversals_match(
        name,
        &scene.accel.input_triangles(),
        scene.bvh_settings,
        &rays,
    );
}

/// One of the meshes of `common::meshes`, at leaf sizes 1, 4 and 31, with rays aimed at its
/// vertices and edges, along axes and with zero components.
fn mesh_traversals_match(name: &str, triangles: &[Triangle], seed: u64) {
    for leaf_size in [1, 4, 31] {
        let settings = BvhSettings {
            leaf_size,
            ..BvhSettings::default()
        };
        let rays = meshes::rays(&mut StdRng::seed_from_u64(seed), triangles, 5_000);
        traversals_match(
            &format!("{name}, leaf size {leaf_size}"),
            triangles,
            settings,
            &rays,
        );
    }
}

/// One test per scene and per mesh, so that a failure names its case.
macro_rules! traversal_tests {
    ($($test:ident: $body:expr;)*) => {$(
        #[test]
        fn $test() {
            $body
        }
    )*};
}

traversal_tests! {
    wide_and_octree_traversals_match_on_quick: scene_traversals_match("quick", SEED ^ 10);
    wide_and_octree_traversals_match_on_cornell: scene_traversals_match("cornell", SEED ^ 11);
    wide_and_octree_traversals_match_on_treasure: scene_traversals_match("treasure", SEED ^ 12);
    wide_and_octree_traversals_match_on_treasure_calm:
        scene_traversals_match("treasure-calm", SEED ^ 13);
    wide_and_octree_traversals_match_on_a_soup:
        mesh_traversals_match("soup", &meshes::soup(&mut StdRng::seed_from_u64(SEED ^ 14), 500), SEED ^ 15);
    wide_and_octree_traversals_match_on_a_flat_grid:
        mesh_traversals_match("flat grid", &meshes::flat_grid(16), SEED ^ 16);
    wide_and_octree_traversals_match_on_flat_and_duplicate_boxes:
        mesh_traversals_match("boxes", &meshes::boxes(), SEED ^ 17);
    wide_and_octree_traversals_match_on_coincident_centroids: mesh_traversals_match(
        "coincident",
        &meshes::coincident(&mut StdRng::seed_from_u64(SEED ^ 18)),
        SEED ^ 19,
    );
    wide_and_octree_traversals_match_on_piles_of_copies:
        mesh_traversals_match("piles", &meshes::piles(&mut StdRng::seed_from_u64(SEED ^ 20)), SEED ^ 21);
}

// ---------------------------------------------------------------------------------------------
// The device's float check (`kernels::check`): its functions, built for the host, give the
// results and terms that the Rust side folds, so that on a GPU only the device's own
// arithmetic can make the digests differ.

#[test]
fn the_device_float_check_computes_and_folds_as_the_host_check() {
    use kernels::check::{self, CHUNK_BITS, RESULTS};
    let mut rng = StdRng::seed_from_u64(SEED ^ 30);
    // Zeros and denormals, around one, the infinities and NaNs, their negatives, and a random
    // chunk.
    let chunks = [
        0x000,
        0x3f8,
        0x7f8,
        0x800,
        0xff8,
        rng.random_range(0..check::CHUNKS),
    ];
    for chunk in chunks {
        // Every 7th pattern of each chunk: all of them in a few chunks takes seconds.
        for i in (0..check::CHUNK).step_by(7) {
            let x = (chunk << CHUNK_BITS) | i;
            for k in 0..RESULTS {
                let want = check::result::<common::RustFloats>(x, k);
                let got = host::check_result(x, k);
                assert_eq!(
                    got,
                    want,
                    "{} of {:?} ({x:#010x})",
                    check::describe(x, k),
                    f32::from_bits(x)
                );
                assert_eq!(host::check_term(x, k, got), check::term(x, k, got));
            }
        }
    }
}
