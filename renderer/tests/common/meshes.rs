//! Triangle meshes that break naive traversals (random soups, a flat grid of shared edges and
//! vertices, axis-aligned and flat and duplicated boxes, piles of coincident centroids and of
//! copies) and the rays aimed at their features: what several tests run every structure on.

use rand::RngExt;
use rand::rngs::StdRng;
use renderer::geometry::{Ray, Triangle, TriangleExt};
use renderer::math::{self, Vec3, normalize};
use renderer::scene::{CameraExt, Scene};

pub(crate) fn tri(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> Triangle {
    Triangle {
        v: [Vec3::from(a), Vec3::from(b), Vec3::from(c)],
    }
}

pub(crate) fn random_point(rng: &mut StdRng, lo: f32, hi: f32) -> Vec3 {
    Vec3::new(
        rng.random_range(lo..hi),
        rng.random_range(lo..hi),
        rng.random_range(lo..hi),
    )
}

pub(crate) fn random_direction(rng: &mut StdRng) -> Vec3 {
    loop {
        let d = random_point(rng, -1.0, 1.0);
        let l = d.length_squared();
        if l > 1e-4 && l <= 1.0 {
            return normalize(d);
        }
    }
}

/// Random triangles of mixed sizes in `[-1, 1]^3`.
pub(crate) fn soup(rng: &mut StdRng, n: usize) -> Vec<Triangle> {
    (0..n)
        .map(|_| {
            let c = random_point(rng, -1.0, 1.0);
            let size = if rng.random::<f32>() < 0.1 { 0.8 } else { 0.1 };
            let p = |rng: &mut StdRng| c + random_point(rng, -size, size);
            Triangle {
                v: [p(rng), p(rng), p(rng)],
            }
        })
        .collect()
}

/// A flat grid in the plane z = 0 (a zero-thickness box around everything), every interior
/// edge shared by two triangles and every interior vertex by six.
pub(crate) fn flat_grid(n: usize) -> Vec<Triangle> {
    let mut out = Vec::new();
    let at = |i: usize, j: usize| {
        [
            i as f32 / n as f32 * 2.0 - 1.0,
            j as f32 / n as f32 * 2.0 - 1.0,
            0.0,
        ]
    };
    for i in 0..n {
        for j in 0..n {
            out.push(tri(at(i, j), at(i + 1, j), at(i + 1, j + 1)));
            out.push(tri(at(i, j), at(i + 1, j + 1), at(i, j + 1)));
        }
    }
    out
}

/// Axis-aligned boxes made of quads: a unit cube, a flat box whose top and bottom coincide
/// (coplanar duplicates, opposite winding: equal `t`, decided by the index), a thin slab,
/// and a triangle that appears twice.
pub(crate) fn boxes() -> Vec<Triangle> {
    let mut out = Vec::new();
    let mut quad = |a: [f32; 3], b: [f32; 3], c: [f32; 3], d: [f32; 3]| {
        out.push(tri(a, b, c));
        out.push(tri(a, c, d));
    };
    let cube = |lo: [f32; 3],
                hi: [f32; 3],
                quad: &mut dyn FnMut([f32; 3], [f32; 3], [f32; 3], [f32; 3])| {
        let [x0, y0, z0] = lo;
        let [x1, y1, z1] = hi;
        quad([x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0]);
        quad([x0, y0, z1], [x0, y1, z1], [x1, y1, z1], [x1, y0, z1]);
        quad([x0, y0, z0], [x0, y0, z1], [x1, y0, z1], [x1, y0, z0]);
        quad([x0, y1, z0], [x1, y1, z0], [x1, y1, z1], [x0, y1, z1]);
        quad([x0, y0, z0], [x0, y1, z0], [x0, y1, z1], [x0, y0, z1]);
        quad([x1, y0, z0], [x1, y0, z1], [x1, y1, z1], [x1, y1, z0]);
    };
    cube([-1.0, -1.0, -1.0], [0.0, 0.0, 0.0], &mut quad);
    // Zero thickness in y: its side faces have zero area and never hit; top and bottom coincide.
    cube([0.0, 0.5, -1.0], [1.0, 0.5, 0.0], &mut quad);
    cube([-1.0, 0.25, 0.5], [1.0, 0.25 + 1e-6, 1.0], &mut quad);
    quad(
        [-0.5, -0.5, 0.75],
        [0.5, -0.5, 0.75],
        [0.5, 0.5, 0.75],
        [-0.5, 0.5, 0.75],
    );
    quad(
        [-0.5, -0.5, 0.75],
        [0.5, -0.5, 0.75],
        [0.5, 0.5, 0.75],
        [-0.5, 0.5, 0.75],
    );
    out
}

/// Many triangles with the same centroid (no octant split separates them) next to a few
/// large ones: forces over-full leaves to be chunked.
pub(crate) fn coincident(rng: &mut StdRng) -> Vec<Triangle> {
    let mut out = Vec::new();
    for _ in 0..200 {
        let a = random_point(rng, -0.5, 0.5);
        let b = random_point(rng, -0.5, 0.5);
        out.push(Triangle { v: [a, b, -a - b] });
    }
    out.extend(soup(rng, 20));
    out
}

/// Copies of one triangle, distinct triangles sharing one centroid, and a soup around them, all
/// interleaved: no octant split separates the first two piles, so they are split by index, and
/// every ray through the copies must still come back with the smallest index among them.
pub(crate) fn piles(rng: &mut StdRng) -> Vec<Triangle> {
    let copy = tri([-0.4, -0.3, 0.1], [0.5, -0.2, 0.0], [0.0, 0.6, -0.1]);
    let mut out = Vec::new();
    for _ in 0..4_000 {
        out.push(copy);
        let a = random_point(rng, -0.8, 0.8);
        let b = random_point(rng, -0.8, 0.8);
        out.push(Triangle { v: [a, b, -a - b] });
    }
    out.extend(soup(rng, 400));
    out
}

/// Rays aimed at the features that break naive traversals: vertices, edge midpoints, points
/// on the surface as origins, axis-parallel directions and zero components of both signs.
pub(crate) fn rays(rng: &mut StdRng, triangles: &[Triangle], count: usize) -> Vec<Ray> {
    let mut out = Vec::with_capacity(count);
    let axes = [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::X, -Vec3::Y, -Vec3::Z];
    while out.len() < count {
        let t = &triangles[rng.random_range(0..triangles.len())];
        let vertex = t.v[rng.random_range(0..3)];
        let edge_mid = (t.v[0] + t.v[1]) * 0.5;
        let w = [rng.random::<f32>(), rng.random::<f32>()];
        let on_surface =
            t.v[0] + (t.v[1] - t.v[0]) * (w[0] * 0.5) + (t.v[2] - t.v[0]) * (w[1] * 0.5);
        let origin = random_point(rng, -3.0, 3.0);
        let ray = match rng.random_range(0..8) {
            0 | 1 => Ray::new(origin, random_direction(rng)),
            2 => Ray::new(origin, vertex - origin),
            3 => Ray::new(origin, edge_mid - origin),
            4 => Ray::new(on_surface, random_direction(rng)),
            5 => {
                // Axis-parallel, from a point in line with a vertex or an edge midpoint.
                let d = axes[rng.random_range(0..6)];
                let target = if rng.random::<bool>() {
                    vertex
                } else {
                    edge_mid
                };
                Ray::new(target - d * rng.random_range(0.5..3.0), d)
            }
            6 => {
                // A zero component of either sign, origin on a vertex's coordinate.
                let mut d = random_direction(rng);
                let axis = rng.random_range(0..3);
                d[axis] = if rng.random::<bool>() { 0.0 } else { -0.0 };
                let mut o = origin;
                o[axis] = vertex[axis];
                Ray::new(o, d)
            }
            _ => {
                let mut r = Ray::new(origin, random_direction(rng));
                r.t_min = rng.random_range(0.0..1.0);
                r.t_max = r.t_min + rng.random_range(0.0..4.0);
                r
            }
        };
        out.push(ray);
    }
    out
}

/// A direction, not normalised, with many zero (of either sign), axis-parallel and tied
/// components; now and then all zero.
pub(crate) fn direction(rng: &mut StdRng) -> Vec3 {
    let mut c = || match rng.random_range(0..12) {
        0 | 1 => 0.0,
        2 => -0.0,
        3 => 1.0,
        4 => -1.0,
        5 => 0.5,
        6 => -0.5,
        _ => rng.random_range(-1.0f32..1.0),
    };
    Vec3::new(c(), c(), c())
}

/// The rays a frame traces and more: the camera ray of every pixel; from each point a camera
/// ray hits, its reflection, a ray in a random direction and a shadow ray to each light (ending
/// at the light); and rays between random points of the scene's box grown by half, now and then
/// along an axis or with a zero component, some over a bounded interval. `random` of the last.
pub(crate) fn scene_rays(scene: &Scene, rng: &mut StdRng, random: usize) -> Vec<Ray> {
    let (w, h) = (scene.width, scene.height);
    let mut rays: Vec<Ray> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| scene.camera.primary_ray(x, y, w, h))
        .collect();
    for i in 0..rays.len() {
        let ray = rays[i];
        let Some(hit) = scene.accel.closest_hit(&ray) else {
            continue;
        };
        let triangle = &scene.accel.triangles()[hit.index as usize];
        let normal = math::normalize(triangle.normal());
        let normal = if math::dot(ray.dir, normal) < 0.0 {
            normal
        } else {
            -normal
        };
        let hit_point = math::interpolate(&triangle.v, hit.bary);
        let offset = math::surface_offset(&triangle.v, hit_point, scene.settings.offset_scale);
        let point = hit_point + normal * offset;
        rays.push(Ray::new(point, math::reflect(ray.dir, normal)));
        rays.push(Ray::new(point, direction(rng)));
        for light in &scene.lights {
            let to_light = light.position - point;
            let distance = to_light.length();
            rays.push(Ray {
                origin: point,
                dir: to_light / distance,
                t_min: 0.0,
                t_max: distance,
            });
        }
    }
    let bounds = scene.accel.bounds();
    let (centre, extent) = (bounds.center(), bounds.extent() * 0.75);
    let inside = |rng: &mut StdRng| {
        centre
            + Vec3::new(
                rng.random_range(-1.0f32..1.0),
                rng.random_range(-1.0f32..1.0),
                rng.random_range(-1.0f32..1.0),
            ) * extent
    };
    for _ in 0..random {
        let origin = inside(rng);
        let mut ray = Ray::new(origin, inside(rng) - origin);
        match rng.random_range(0..6) {
            0 => ray.dir = [Vec3::X, -Vec3::Y, Vec3::Z][rng.random_range(0..3)],
            1 => ray.dir[rng.random_range(0..3)] = if rng.random_bool(0.5) { 0.0 } else { -0.0 },
            2 => {
                ray.t_min = rng.random_range(0.0..0.5);
                ray.t_max = rng.random_range(0.5..1.0);
            }
            _ => {}
        }
        rays.push(ray);
    }
    rays
}

/// An octree's arrays as the kernels read a scene, for its traversals alone: its eight node
/// orders one after the other, with shading data the traversals never read.
pub(crate) struct TraversalScene<'a> {
    octree: &'a renderer::bvh::OctreeBvh,
    nodes: Vec<renderer::bvh::FlatNode>,
    shading: Vec<renderer::scene::TriangleShading>,
    materials: [renderer::scene::Material; 1],
}

impl<'a> TraversalScene<'a> {
    pub(crate) fn new(octree: &'a renderer::bvh::OctreeBvh) -> Self {
        Self {
            octree,
            nodes: (0..8).flat_map(|o| octree.nodes(o).to_vec()).collect(),
            shading: vec![bytemuck::Zeroable::zeroed(); octree.triangles().len()],
            materials: [renderer::scene::Material::default()],
        }
    }

    pub(crate) fn data(&self) -> kernels::SceneData<'_> {
        kernels::SceneData {
            structure: kernels::Structure::Octree(&self.nodes),
            triangles: self.octree.triangles(),
            ids: self.octree.original_indices(),
            shading: &self.shading,
            materials: &self.materials,
            lights: &[],
            width: 1,
            height: 1,
            padding: self.octree.padding(),
            camera: bytemuck::Zeroable::zeroed(),
            settings: bytemuck::Zeroable::zeroed(),
            samples: 1,
        }
    }
}
