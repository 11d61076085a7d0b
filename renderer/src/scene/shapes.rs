//! Built-in shapes and procedural generators: the project's own geometry, from a quad to a
//! treasure hoard. Angles come from `libm`, so the same config gives the same triangles on
//! every machine.

use std::collections::HashMap;
use std::f32::consts::{PI, TAU};

use glam::{Mat4, Quat};

use crate::math::Vec3;

use super::mesh::Mesh;

/// Two triangles `a b c`, `a c d`.
pub(crate) fn quad(corners: [Vec3; 4]) -> Mesh {
    let mut m = Mesh::default();
    let [a, b, c, d] = corners.map(|p| m.vertex(p));
    m.face(a, b, c);
    m.face(a, c, d);
    m
}

/// An axis-aligned box, faces wound outwards, flat-shaded.
pub(crate) fn cuboid(min: Vec3, max: Vec3) -> Mesh {
    let mut m = Mesh::default();
    let corner = |i: u32| {
        Vec3::new(
            if i & 1 == 0 { min.x } else { max.x },
            if i & 2 == 0 { min.y } else { max.y },
            if i & 4 == 0 { min.z } else { max.z },
        )
    };
    for i in 0..8 {
        m.vertex(corner(i));
    }
    // Each face as four corner indices, counter-clockwise seen from outside.
    for [a, b, c, d] in [
        [0, 4, 6, 2], // -x
        [1, 3, 7, 5], // +x
        [0, 1, 5, 4], // -y
        [2, 6, 7, 3], // +y
        [0, 2, 3, 1], // -z
        [4, 5, 7, 6], // +z
    ] {
        m.face(a, b, c);
        m.face(a, c, d);
    }
    m
}

/// An icosphere: the icosahedron with each triangle split in four `subdivisions` times,
/// vertices pushed onto the sphere; smooth normals.
pub(crate) fn icosphere(center: Vec3, radius: f32, subdivisions: u32) -> Mesh {
    let t = (1.0 + 5.0f32.sqrt()) / 2.0;
    let mut unit: Vec<Vec3> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .iter()
    .map(|&p| Vec3::from(p).normalize())
    .collect();
    let mut faces: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut midpoints: HashMap<(u32, u32), u32> = HashMap::new();
        let mut midpoint = |a: u32, b: u32, unit: &mut Vec<Vec3>| {
            *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                unit.push(((unit[a as usize] + unit[b as usize]) * 0.5).normalize());
                unit.len() as u32 - 1
            })
        };
        let mut next = Vec::with_capacity(faces.len() * 4);
        for [a, b, c] in faces {
            let ab = midpoint(a, b, &mut unit);
            let bc = midpoint(b, c, &mut unit);
            let ca = midpoint(c, a, &mut unit);
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        faces = next;
    }
    Mesh {
        positions: unit.iter().map(|&n| center + n * radius).collect(),
        normals: unit,
        faces,
    }
}

/// The surface swept by turning `profile` (radius, height) about the y axis in `segments`
/// steps; smooth normals. Profile points on the axis give degenerate triangles, which the
/// scene drops.
pub(crate) fn lathe(profile: &[[f32; 2]], segments: u32) -> Mesh {
    let mut m = Mesh::default();
    for &[r, y] in profile {
        for j in 0..segments {
            let angle = TAU * j as f32 / segments as f32;
            m.vertex(Vec3::new(r * libm::cosf(angle), y, -r * libm::sinf(angle)));
        }
    }
    for i in 0..profile.len().saturating_sub(1) as u32 {
        for j in 0..segments {
            let a = i * segments + j;
            let b = i * segments + (j + 1) % segments;
            let (c, d) = (a + segments, b + segments);
            m.face(a, b, d);
            m.face(a, d, c);
        }
    }
    m.smooth_normals();
    m
}

/// A counter-based hash to `[0, 1)`: generators draw their randomness from the position of
/// what they generate, never from a shared generator.
fn hash01(a: u32, b: u32, c: u32) -> f32 {
    let mut h =
        a.wrapping_mul(0x9E37_79B9) ^ b.wrapping_mul(0x85EB_CA6B) ^ c.wrapping_mul(0xC2B2_AE35);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7FEB_352D);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846C_A68B);
    h ^= h >> 16;
    (h >> 8) as f32 / (1u32 << 24) as f32
}

/// Smoothly interpolated value noise on a unit lattice, in `[0, 1)`.
fn value_noise(x: f32, z: f32, seed: u32) -> f32 {
    let (x0, z0) = (x.floor(), z.floor());
    let (fx, fz) = (x - x0, z - z0);
    let (sx, sz) = (fx * fx * (3.0 - 2.0 * fx), fz * fz * (3.0 - 2.0 * fz));
    let (ix, iz) = (x0 as i32 as u32, z0 as i32 as u32);
    let h = |dx: u32, dz: u32| hash01(ix.wrapping_add(dx), iz.wrapping_add(dz), seed);
    let top = h(0, 0) + (h(1, 0) - h(0, 0)) * sx;
    let bottom = h(0, 1) + (h(1, 1) - h(0, 1)) * sx;
    top + (bottom - top) * sz
}

/// Rolling ground: a grid of `resolution` cells over `size` (x, z), centred on the origin,
/// its height three octaves of value noise of the given feature size; smooth normals.
pub(crate) fn heightfield(
    size: [f32; 2],
    resolution: [u32; 2],
    height: f32,
    feature: f32,
    seed: u32,
) -> Mesh {
    let [nx, nz] = resolution;
    let mut m = Mesh::default();
    for i in 0..=nz {
        for j in 0..=nx {
            let x = (j as f32 / nx as f32 - 0.5) * size[0];
            let z = (i as f32 / nz as f32 - 0.5) * size[1];
            let (u, v) = (x / feature, z / feature);
            let n = value_noise(u, v, seed) * 0.6
                + value_noise(u * 2.0, v * 2.0, seed ^ 1) * 0.3
                + value_noise(u * 4.0, v * 4.0, seed ^ 2) * 0.1;
            m.vertex(Vec3::new(x, n * height, z));
        }
    }
    let row = nx + 1;
    for i in 0..nz {
        for j in 0..nx {
            let a = i * row + j;
            let (b, c, d) = (a + 1, a + row, a + row + 1);
            m.face(a, c, d);
            m.face(a, d, b);
        }
    }
    m.smooth_normals();
    m
}

/// A coin of unit diameter centred on the origin, face-up: two discs and a rim,
/// flat-shaded.
fn coin(segments: u32) -> Mesh {
    let half = 0.06;
    let mut m = Mesh::default();
    let top = m.vertex(Vec3::new(0.0, half, 0.0));
    let bottom = m.vertex(Vec3::new(0.0, -half, 0.0));
    let ring = |m: &mut Mesh, y: f32| -> Vec<u32> {
        (0..segments)
            .map(|j| {
                let a = TAU * j as f32 / segments as f32;
                m.vertex(Vec3::new(0.5 * libm::cosf(a), y, -0.5 * libm::sinf(a)))
            })
            .collect()
    };
    let up = ring(&mut m, half);
    let down = ring(&mut m, -half);
    for j in 0..segments as usize {
        let k = (j + 1) % segments as usize;
        m.face(top, up[j], up[k]);
        m.face(bottom, down[k], down[j]);
        m.face(up[j], down[j], down[k]);
        m.face(up[j], down[k], up[k]);
    }
    m
}

/// A cut gem of unit width: an octagonal-ish table on top, a crown down to the girdle, and a
/// pavilion to a point below; flat-shaded for sparkle.
fn gem(segments: u32) -> Mesh {
    let mut m = Mesh::default();
    let ring = |m: &mut Mesh, r: f32, y: f32, offset: f32| -> Vec<u32> {
        (0..segments)
            .map(|j| {
                let a = TAU * (j as f32 + offset) / segments as f32;
                m.vertex(Vec3::new(r * libm::cosf(a), y, -r * libm::sinf(a)))
            })
            .collect()
    };
    let table_centre = m.vertex(Vec3::new(0.0, 0.18, 0.0));
    let table = ring(&mut m, 0.3, 0.18, 0.5);
    let girdle = ring(&mut m, 0.5, 0.0, 0.0);
    let culet = m.vertex(Vec3::new(0.0, -0.45, 0.0));
    for j in 0..segments as usize {
        let k = (j + 1) % segments as usize;
        m.face(table_centre, table[j], table[k]);
        m.face(table[j], girdle[k], table[k]);
        m.face(table[j], girdle[j], girdle[k]);
        m.face(culet, girdle[k], girdle[j]);
    }
    m
}

/// What [`scatter`] piles up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Coin,
    Gem,
}

/// A heap of pieces for [`scatter`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Heap {
    pub(crate) piece: Piece,
    pub(crate) count: u32,
    /// Centre of the heap's base.
    pub(crate) center: Vec3,
    /// Radius of the base.
    pub(crate) radius: f32,
    /// Height of the peak.
    pub(crate) height: f32,
    /// Size of one piece.
    pub(crate) size: f32,
    /// Segments around one piece.
    pub(crate) segments: u32,
    pub(crate) seed: u32,
}

/// The pieces of `heap` piled in a cone, each turned and tilted at random (from [`hash01`]
/// of its index and the seed).
pub(crate) fn scatter(heap: &Heap) -> Mesh {
    let template = match heap.piece {
        Piece::Coin => coin(heap.segments),
        Piece::Gem => gem(heap.segments),
    };
    let (seed, radius) = (heap.seed, heap.radius);
    let mut out = Mesh::default();
    for i in 0..heap.count {
        let r = radius * hash01(i, seed, 1).sqrt();
        let angle = TAU * hash01(i, seed, 2);
        let y = heap.height * (1.0 - r / radius) * hash01(i, seed, 3);
        let position = heap.center + Vec3::new(r * libm::cosf(angle), y, r * libm::sinf(angle));
        let spin = Quat::from_rotation_y(TAU * hash01(i, seed, 4));
        let tilt = Quat::from_rotation_x(PI / 3.0 * (hash01(i, seed, 5) - 0.5));
        let s = heap.size * (0.85 + 0.3 * hash01(i, seed, 6));
        let transform =
            Mat4::from_scale_rotation_translation(Vec3::splat(s), spin * tilt, position);
        if let Some(piece) = template.transformed(&transform) {
            out.append(&piece);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heap(piece: Piece, count: u32, seed: u32) -> Heap {
        Heap {
            piece,
            count,
            center: Vec3::ZERO,
            radius: 1.0,
            height: 0.5,
            size: 0.1,
            segments: 8,
            seed,
        }
    }

    fn closed_and_outward(m: &Mesh) {
        // Every edge of a closed surface appears once in each direction.
        let mut edges = HashMap::new();
        for f in &m.faces {
            for k in 0..3 {
                *edges.entry((f[k], f[(k + 1) % 3])).or_insert(0) += 1;
            }
        }
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1, "edge {a}-{b} used {n} times one way");
            assert_eq!(edges.get(&(b, a)), Some(&1), "edge {a}-{b} has no twin");
        }
    }

    #[test]
    fn primitive_counts() {
        assert_eq!(
            quad([Vec3::ZERO, Vec3::X, Vec3::ONE, Vec3::Y]).faces.len(),
            2
        );
        assert_eq!(cuboid(Vec3::ZERO, Vec3::ONE).faces.len(), 12);
        assert_eq!(icosphere(Vec3::ZERO, 1.0, 2).faces.len(), 20 * 16);
        assert_eq!(heightfield([2.0, 2.0], [4, 3], 1.0, 0.5, 0).faces.len(), 24);
        assert_eq!(coin(16).faces.len(), 64);
        assert_eq!(gem(16).faces.len(), 64);
        assert_eq!(scatter(&heap(Piece::Gem, 5, 3)).faces.len(), 5 * 32);
    }

    #[test]
    fn closed_shapes_are_closed() {
        closed_and_outward(&cuboid(Vec3::ZERO, Vec3::ONE));
        closed_and_outward(&icosphere(Vec3::ZERO, 1.0, 2));
        closed_and_outward(&coin(12));
        closed_and_outward(&gem(12));
    }

    #[test]
    fn box_faces_point_outwards() {
        let m = cuboid(Vec3::ZERO, Vec3::ONE);
        for f in &m.faces {
            let [a, b, c] = f.map(|i| m.positions[i as usize]);
            let n = crate::math::cross(b - a, c - a);
            let centre = (a + b + c) / 3.0 - Vec3::splat(0.5);
            assert!(n.dot(centre) > 0.0, "face {f:?} points inwards");
        }
    }

    #[test]
    fn generators_are_pure() {
        let a = scatter(&heap(Piece::Coin, 20, 9));
        let b = scatter(&heap(Piece::Coin, 20, 9));
        assert_eq!(a, b);
        let c = scatter(&heap(Piece::Coin, 20, 10));
        assert_ne!(a, c);
    }
}
