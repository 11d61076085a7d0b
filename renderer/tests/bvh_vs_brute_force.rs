//! Every acceleration structure (the wide BVH and the octree) returns exactly the brute-force
//! closest hit: the same `t` bits, the same triangle and the same barycentrics, for every ray,
//! on random and on deliberately degenerate meshes.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use renderer::accel::{Accel, AccelKind};
use renderer::bvh::wide::{Simd, Width};
use renderer::bvh::{Blockers, BvhSettings, BvhSplit, NoCounters, OctreeBvh, TestCounts, WideBvh};
use renderer::geometry::{PreparedRay, Ray, Triangle, TriangleExt};
use renderer::math::Vec3;

mod common;
use common::meshes::{boxes, coincident, flat_grid, piles, random_point, rays, soup, tri};

/// A closest hit's `t` (its bits) and triangle, or none.
type Answer = Option<(u32, u32)>;

/// The reference: every triangle, smallest `t`, ties to the smaller index. `padding` is the
/// BVH's, which the triangle test takes so that it reports distances inside padded boxes.
fn brute_force(triangles: &[Triangle], padding: f32, ray: &Ray) -> Answer {
    let ray = PreparedRay::new(ray);
    let mut best: Option<(f32, u32)> = None;
    for (i, tri) in triangles.iter().enumerate() {
        if let Some(t) = tri.intersect(&ray, padding)
            && best.is_none_or(|(bt, _)| t < bt)
        {
            best = Some((t, i as u32));
        }
    }
    best.map(|(t, i)| (t.to_bits(), i))
}

/// A structure to test, by name, and how to build it.
type Structure = (&'static str, fn(&[Triangle], BvhSettings) -> Accel);

/// Every structure that each test runs against: the wide BVH at both widths, the eight-wide
/// one also held to AVX2 (where the processor has AVX-512), without AVX2 (its portable path)
/// and split by octant, and the octree.
const STRUCTURES: [Structure; 6] = [
    ("wide4", |t, s| {
        Accel::Wide(WideBvh::build_with_width(t, s, Width::Four))
    }),
    ("wide8", |t, s| {
        Accel::Wide(WideBvh::build_with_width(t, s, Width::Eight))
    }),
    ("wide8 on AVX2 at most", |t, s| {
        Accel::Wide(WideBvh::build_with_width(t, s, Width::Eight).limited_to(Simd::Avx2))
    }),
    ("wide8 without AVX2", |t, s| {
        Accel::Wide(WideBvh::build_with_width(t, s, Width::Eight).limited_to(Simd::Baseline))
    }),
    ("wide8, octant split", |t, s| {
        let s = BvhSettings {
            split: BvhSplit::Octant,
            ..s
        };
        Accel::Wide(WideBvh::build_with_width(t, s, Width::Eight))
    }),
    ("octree", |t, s| {
        Accel::build(AccelKind::Octree, t, s).expect("the build's threads start")
    }),
];

fn check(name: &str, triangles: &[Triangle], settings: BvhSettings, count: usize, seed: u64) {
    let mut reference = Reference::new(triangles, count, seed);
    for structure in STRUCTURES {
        check_one(name, structure, settings, &mut reference);
    }
}

/// Seeded rays against a mesh and their brute-force answers, which are most of a check's time:
/// computed once for every structure built over the mesh (all pad their boxes alike, by the
/// mesh's box), and again only for one that pads differently.
struct Reference<'a> {
    triangles: &'a [Triangle],
    rays: Vec<Ray>,
    /// The padding the answers were computed with (its bits), and the answers.
    answers: Option<(u32, Vec<Answer>)>,
}

impl<'a> Reference<'a> {
    fn new(triangles: &'a [Triangle], count: usize, seed: u64) -> Self {
        let rays = rays(&mut StdRng::seed_from_u64(seed), triangles, count);
        Self {
            triangles,
            rays,
            answers: None,
        }
    }

    /// The rays and their brute-force answers with boxes padded by `padding`.
    fn answers(&mut self, padding: f32) -> (&[Ray], &[Answer]) {
        if self
            .answers
            .as_ref()
            .is_none_or(|(bits, _)| *bits != padding.to_bits())
        {
            let answers = self
                .rays
                .iter()
                .map(|ray| brute_force(self.triangles, padding, ray))
                .collect();
            self.answers = Some((padding.to_bits(), answers));
        }
        let (_, answers) = self.answers.as_ref().expect("computed above");
        (&self.rays, answers)
    }
}

fn check_one(
    name: &str,
    (label, build): Structure,
    settings: BvhSettings,
    reference: &mut Reference<'_>,
) {
    let triangles = reference.triangles;
    let bvh = build(triangles, settings);
    let name = format!("{name} ({label})");
    let mut hits = 0;
    // Kept across the rays, as the integrator keeps one a light: whatever it remembers, the
    // answer is the brute force's.
    let mut recent = Blockers::default();
    let (rays, answers) = reference.answers(bvh.padding());
    for (n, (ray, &expected)) in rays.iter().zip(answers).enumerate() {
        let got = bvh.closest_hit(ray).map(|h| (h.t.to_bits(), h.original));
        assert_eq!(got, expected, "{name}: ray {n} {ray:?} with {settings:?}");
        if let Some(h) = bvh.closest_hit(ray) {
            assert_eq!(bvh.original_indices()[h.index as usize], h.original);
            // The weights come from the test that found the hit: the triangle's own.
            let own = triangles[h.original as usize]
                .intersect_with_barycentrics(&PreparedRay::new(ray), bvh.padding())
                .expect("the hit triangle is hit");
            assert_eq!(
                h.bary.map(f32::to_bits),
                own.bary.map(f32::to_bits),
                "{name}: ray {n}"
            );
            hits += 1;
        }
        assert_eq!(
            bvh.occluded(ray),
            expected.is_some(),
            "{name}: shadow ray {n} {ray:?}"
        );
        assert_eq!(
            bvh.occluded_remembering(ray, &mut recent, &mut NoCounters),
            expected.is_some(),
            "{name}: shadow ray {n} {ray:?} after blockers {recent:?}"
        );
    }
    // A test that never hits proves nothing.
    let count = rays.len();
    assert!(hits > count / 10, "{name}: only {hits} of {count} rays hit");
}

const SETTINGS: [BvhSettings; 4] = [
    BvhSettings {
        leaf_size: 4,
        max_depth: 24,
        width: None,
        split: BvhSplit::Sah,
    },
    BvhSettings {
        leaf_size: 1,
        max_depth: 24,
        width: None,
        split: BvhSplit::Sah,
    },
    BvhSettings {
        leaf_size: 31,
        max_depth: 24,
        width: None,
        split: BvhSplit::Sah,
    },
    BvhSettings {
        leaf_size: 2,
        max_depth: 2,
        width: None,
        split: BvhSplit::Sah,
    },
];

#[test]
fn random_soup() {
    let triangles = soup(&mut StdRng::seed_from_u64(1), 400);
    for (i, s) in SETTINGS.into_iter().enumerate() {
        check("soup", &triangles, s, 40_000, 10 + i as u64);
    }
}

#[test]
fn flat_grid_with_shared_edges_and_vertices() {
    let triangles = flat_grid(16);
    for (i, s) in SETTINGS.into_iter().enumerate() {
        check("grid", &triangles, s, 25_000, 20 + i as u64);
    }
}

#[test]
fn axis_aligned_flat_and_duplicate_boxes() {
    let triangles = boxes();
    for (i, s) in SETTINGS.into_iter().enumerate() {
        check("boxes", &triangles, s, 25_000, 30 + i as u64);
    }
}

#[test]
fn coincident_centroids() {
    let triangles = coincident(&mut StdRng::seed_from_u64(4));
    for (i, s) in SETTINGS.into_iter().enumerate() {
        check("coincident", &triangles, s, 15_000, 40 + i as u64);
    }
}

#[test]
fn piles_of_copies_and_of_shared_centroids() {
    let triangles = piles(&mut StdRng::seed_from_u64(7));
    for (i, s) in SETTINGS.into_iter().enumerate() {
        check("piles", &triangles, s, 2_500, 70 + i as u64);
    }
}

#[test]
fn far_from_the_origin() {
    // The same soup moved far off the origin: rounding grows with the coordinates.
    let mut triangles = soup(&mut StdRng::seed_from_u64(5), 300);
    for t in &mut triangles {
        for v in &mut t.v {
            *v = *v * 10.0 + Vec3::new(1000.0, -2000.0, 500.0);
        }
    }
    for (label, build) in STRUCTURES {
        let bvh = build(&triangles, BvhSettings::default());
        let mut rng = StdRng::seed_from_u64(50);
        let mut hits = 0;
        for _ in 0..20_000 {
            let target = triangles[rng.random_range(0..triangles.len())].v[0];
            let origin = Vec3::new(1000.0, -2000.0, 500.0) + random_point(&mut rng, -30.0, 30.0);
            let ray = Ray::new(origin, target - origin);
            let expected = brute_force(&triangles, bvh.padding(), &ray);
            hits += usize::from(expected.is_some());
            assert_eq!(
                bvh.closest_hit(&ray).map(|h| (h.t.to_bits(), h.original)),
                expected,
                "{ray:?} ({})",
                label
            );
        }
        assert!(hits > 10_000);
    }
}

#[test]
fn stats_describe_the_tree() {
    let triangles = soup(&mut StdRng::seed_from_u64(6), 1000);
    let bvh = OctreeBvh::build(&triangles, BvhSettings::default());
    let s = bvh.stats();
    assert_eq!(s.triangles, 1000);
    assert!(s.leaves > 1000 / 4 && s.leaves < s.nodes);
    assert!(s.max_leaf_triangles <= 4);
    assert!(s.depth >= 3);
    for octant in 0..8 {
        let nodes = bvh.nodes(octant);
        assert_eq!(nodes.len(), s.nodes);
        assert_eq!(
            nodes[0].skip() as usize,
            nodes.len(),
            "the root's subtree is everything"
        );
        let leaf_tris: usize = nodes
            .iter()
            .filter_map(|n| n.triangles())
            .map(|r| r.len())
            .sum();
        assert_eq!(leaf_tris, 1000, "each triangle in exactly one leaf");
    }
    // The scene's box: every vertex inside, and tight (each face touched by some vertex).
    let b = bvh.bounds();
    let vertices = || triangles.iter().flat_map(|t| t.v);
    assert!(vertices().all(|v| b.contains(v)));
    let lo = vertices().fold(Vec3::splat(f32::INFINITY), Vec3::min);
    let hi = vertices().fold(Vec3::splat(f32::NEG_INFINITY), Vec3::max);
    assert_eq!(b.extent(), hi - lo);
}

#[test]
fn a_tree_deeper_than_the_heuristic_goes() {
    // Triangles spaced ever wider apart along x: the surface area heuristic peels them off one
    // by one, so the wide BVH's binary tree reaches the depth past which it splits at the
    // median, and the traversal's stack bound is exercised.
    let triangles: Vec<Triangle> = (0..600)
        .map(|k| {
            let x = 2f32.powf(k as f32 / 12.0);
            let s = x * 0.01;
            tri([x, 0.0, 0.0], [x + s, 0.0, s], [x, s, 0.0])
        })
        .collect();
    let bvh = WideBvh::build_with_width(&triangles, BvhSettings::default(), Width::Four);
    // Four children per node halve the binary tree's depth: past 20 wide levels, the binary
    // tree went past the heuristic's 40.
    assert!(bvh.stats().depth > 20, "depth {}", bvh.stats().depth);
    let mut reference = Reference::new(&triangles, 20_000, 70);
    for structure in STRUCTURES {
        check_one("deep", structure, BvhSettings::default(), &mut reference);
    }
}

#[test]
fn rays_running_in_the_planes_of_the_wide_nodes_boxes() {
    // An origin coordinate on a box plane with a zero direction component along it gives
    // 0 · ∞ = NaN in the box test, which must constrain nothing.
    let triangles = soup(&mut StdRng::seed_from_u64(8), 300);
    for (width, simd) in [
        (Width::Four, Simd::Baseline),
        (Width::Eight, Simd::Avx512),
        (Width::Eight, Simd::Avx2),
        (Width::Eight, Simd::Baseline),
    ] {
        let wide =
            WideBvh::build_with_width(&triangles, BvhSettings::default(), width).limited_to(simd);
        let padding = wide.padding();
        let mut rng = StdRng::seed_from_u64(80);
        let mut hits = 0;
        for _ in 0..20_000 {
            let node = rng.random_range(0..wide.nodes().len());
            let lane = rng.random_range(0..width.children());
            let Some((min, max)) = wide.nodes().child_box(node, lane) else {
                continue;
            };
            let axis = rng.random_range(0..3);
            let plane = if rng.random::<bool>() { min } else { max };
            let target = triangles[rng.random_range(0..triangles.len())].v[0];
            let mut origin = random_point(&mut rng, -1.5, 1.5);
            origin[axis] = plane[axis];
            let mut dir = target - origin;
            dir[axis] = if rng.random::<bool>() { 0.0 } else { -0.0 };
            if dir.length_squared() == 0.0 {
                continue;
            }
            let ray = Ray::new(origin, dir);
            let expected = brute_force(&triangles, padding, &ray);
            hits += usize::from(expected.is_some());
            assert_eq!(
                wide.closest_hit(&ray).map(|h| (h.t.to_bits(), h.original)),
                expected,
                "{width:?} {simd:?} {ray:?}"
            );
            let blocked = wide.occluded(&ray);
            assert_eq!(blocked, expected.is_some(), "{width:?} {simd:?} {ray:?}");
        }
        assert!(hits > 100, "{width:?} {simd:?}: only {hits} hits");
    }
}

#[test]
fn a_ray_with_a_nan_gets_the_brute_force_answer() {
    // A NaN coordinate makes every box test pass, unused child slots included; every structure
    // must still answer, and answer as brute force does (the triangle test decides).
    let triangles = soup(&mut StdRng::seed_from_u64(9), 300);
    let nan = f32::NAN;
    let rays = [
        Ray::new(Vec3::new(nan, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.0)),
        Ray::new(Vec3::splat(nan), Vec3::new(0.0, 0.0, 1.0)),
        Ray::new(Vec3::new(0.0, 0.0, -3.0), Vec3::new(0.0, nan, 1.0)),
        Ray::new(Vec3::new(0.0, 0.0, -3.0), Vec3::new(0.1, 0.2, 1.0)),
    ];
    for (label, build) in STRUCTURES {
        let bvh = build(&triangles, BvhSettings::default());
        for ray in &rays {
            let expected = brute_force(&triangles, bvh.padding(), ray);
            let got = bvh.closest_hit(ray).map(|h| (h.t.to_bits(), h.original));
            assert_eq!(got, expected, "{label}: {ray:?}");
            assert_eq!(bvh.occluded(ray), expected.is_some(), "{label}: {ray:?}");
        }
    }
}

/// Rays whose interval starts behind their origin (a negative `t_min`), which the eight-wide
/// box test on AVX, comparing distances as integers, would get wrong, and so leaves to the
/// floats' test; and rays whose `t_min` is `−0` or whose `t_max` is NaN, which it takes. Every
/// structure answers as brute force does, hits behind the origin included.
#[test]
fn rays_from_behind_their_origin_get_the_brute_force_answer() {
    let mut rng = StdRng::seed_from_u64(31);
    let triangles = soup(&mut rng, 400);
    let mut rays = rays(&mut rng, &triangles, 1500);
    for (n, ray) in rays.iter_mut().enumerate() {
        match n % 5 {
            0 => ray.t_min = -0.0,
            1 => ray.t_max = f32::NAN,
            2 => ray.t_min = f32::NEG_INFINITY,
            _ => ray.t_min = -rng.random_range(0.0..6.0),
        }
    }
    for (label, build) in STRUCTURES {
        let bvh = build(&triangles, BvhSettings::default());
        let mut behind = 0;
        for (n, ray) in rays.iter().enumerate() {
            let expected = brute_force(&triangles, bvh.padding(), ray);
            let got = bvh.closest_hit(ray).map(|h| (h.t.to_bits(), h.original));
            assert_eq!(got, expected, "{label}: ray {n} {ray:?}");
            assert_eq!(
                bvh.occluded(ray),
                expected.is_some(),
                "{label}: ray {n} {ray:?}"
            );
            behind += usize::from(got.is_some_and(|(t, _)| f32::from_bits(t) < 0.0));
        }
        // A test whose rays never hit behind their origin would not tell the tests apart.
        assert!(
            behind > 100,
            "{label}: only {behind} hits behind the origin"
        );
    }
}

/// Shadow rays from a grid of points under a row of slats towards one light: most are blocked,
/// mostly by a slat that blocked one of the rays just before. Each structure answers every ray
/// as without remembered blockers, and answers some from them alone, without a box test.
#[test]
fn remembered_blockers_answer_shadow_rays_as_the_traversal_does() {
    let mut triangles = Vec::new();
    for slat in 0..16 {
        let x = slat as f32 * 0.5;
        let (a, b, c, d) = (
            [x, 1.0, -4.0],
            [x + 0.3, 1.0, -4.0],
            [x + 0.3, 1.0, 4.0],
            [x, 1.0, 4.0],
        );
        triangles.push(tri(a, b, c));
        triangles.push(tri(a, c, d));
    }
    let light = Vec3::new(4.0, 10.0, 0.0);
    let rays: Vec<Ray> = (0..64)
        .flat_map(|i| (0..8).map(move |j| Vec3::new(i as f32 * 0.125, 0.0, j as f32 * 0.25 - 1.0)))
        .map(|point| {
            let to_light = light - point;
            let distance = to_light.length();
            Ray {
                origin: point,
                dir: to_light / distance,
                t_min: 0.0,
                t_max: distance,
            }
        })
        .collect();
    for (label, build) in STRUCTURES {
        let bvh = build(&triangles, SETTINGS[0]);
        let mut recent = Blockers::default();
        let (mut blocked, mut from_memory) = (0, 0);
        for (n, ray) in rays.iter().enumerate() {
            let mut counts = TestCounts::default();
            let answer = bvh.occluded_remembering(ray, &mut recent, &mut counts);
            assert_eq!(answer, bvh.occluded(ray), "{label}: ray {n}");
            blocked += usize::from(answer);
            from_memory += usize::from(answer && counts.boxes == 0);
        }
        assert!(blocked > rays.len() / 3, "{label}: only {blocked} blocked");
        assert!(
            from_memory > blocked / 2,
            "{label}: {from_memory} of {blocked} answered from memory"
        );
    }
}
