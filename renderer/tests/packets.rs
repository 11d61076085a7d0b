//! Packets of rays through the wide BVH give every ray the bits the single-ray traversal gives
//! it: the same `t`, triangle and barycentrics from `closest_hit_packet` as from `closest_hit`,
//! the same answer from `occluded_packet` as from `occluded`. On camera blocks of 4×2 and 4×4
//! pixels (coherent: one group, now and then split where the block straddles an axis or a
//! diagonal) and on packets of unrelated rays (split into groups and rays traced alone), of
//! eight rays and of sixteen (traced eight or sixteen lanes wide), with inactive
//! lanes, rays with NaN or zero direction components, and meshes full of equal-`t` ties; for
//! the eight-wide tree (AVX-512 or AVX2 where the processor has them), the same tree held to
//! AVX2, its portable path, and the four-wide tree, its packets on the best the processor has
//! and on two SSE halves. On a processor without AVX-512, the tree held to AVX2 runs what the
//! best level runs.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use renderer::bvh::wide::{LaneMask, PACKET_LANES, RayPacket, Simd, Width};
use renderer::bvh::{BvhHit, BvhSettings, WideBvh};
use renderer::geometry::{Ray, Triangle};
use renderer::math::{Vec3, normalize};
use renderer::scene::{Camera, CameraExt};

mod common;
use common::meshes::{self, boxes, coincident, flat_grid, piles, random_direction, soup};

/// A structure to test, by name, and how to build it.
type Structure = fn(&[Triangle]) -> WideBvh;

fn wide8(triangles: &[Triangle]) -> WideBvh {
    WideBvh::build_with_width(triangles, BvhSettings::default(), Width::Eight)
}

fn wide8_avx2(triangles: &[Triangle]) -> WideBvh {
    wide8(triangles).limited_to(Simd::Avx2)
}

fn wide8_portable(triangles: &[Triangle]) -> WideBvh {
    wide8(triangles).limited_to(Simd::Baseline)
}

fn wide4(triangles: &[Triangle]) -> WideBvh {
    WideBvh::build_with_width(triangles, BvhSettings::default(), Width::Four)
}

fn wide4_portable(triangles: &[Triangle]) -> WideBvh {
    wide4(triangles).limited_to(Simd::Baseline)
}

/// What a lane came back with, as bits.
type Bits = Option<(u32, u32, u32, [u32; 3])>;

fn bits(hit: Option<BvhHit>) -> Bits {
    hit.map(|h| (h.t.to_bits(), h.index, h.original, h.bary.map(f32::to_bits)))
}

/// What the packets were checked against: lanes compared, closest hits among them, and the
/// mismatches with the first of them described.
#[derive(Default)]
struct Tally {
    lanes: usize,
    hits: usize,
    blocked: usize,
    mismatches: usize,
    first: Option<String>,
}

impl Tally {
    /// Traces `packet` both ways and compares every lane.
    fn check(&mut self, bvh: &WideBvh, packet: &RayPacket) {
        let together = bvh.closest_hit_packet(packet);
        let blocked = bvh.occluded_packet(packet);
        for (lane, (ray, &got)) in packet.rays.iter().zip(&together).enumerate() {
            let (expected, expected_blocked) = if packet.active.contains(lane) {
                (bits(bvh.closest_hit(ray)), bvh.occluded(ray))
            } else {
                (None, false)
            };
            self.lanes += usize::from(packet.active.contains(lane));
            self.hits += usize::from(expected.is_some());
            self.blocked += usize::from(expected_blocked);
            let got = bits(got);
            if got != expected || blocked.contains(lane) != expected_blocked {
                self.mismatches += 1;
                self.first.get_or_insert_with(|| {
                    format!(
                        "lane {lane} of {:?}: {got:?}, blocked {} against alone {expected:?}, \
                         blocked {expected_blocked}; {ray:?}",
                        packet.active,
                        blocked.contains(lane)
                    )
                });
            }
        }
    }

    /// Requires no mismatch, and enough hits that the comparison meant something.
    fn assert_all_agree(&self, what: &str) {
        assert_eq!(
            self.mismatches,
            0,
            "{what}: {} of {} lanes differ, first {}",
            self.mismatches,
            self.lanes,
            self.first.as_deref().unwrap_or("")
        );
        assert!(
            self.hits * 10 > self.lanes && self.blocked * 10 > self.lanes,
            "{what}: only {} hits and {} blocked of {} lanes",
            self.hits,
            self.blocked,
            self.lanes
        );
    }
}

/// Camera blocks of 4×2 and of 4×4 pixels, as `raylb bench trace --packets on` makes them
/// (for packets of eight rays and of sixteen), from cameras
/// around and inside the mesh's box: straight along an axis (the middle of the image, where
/// a direction component changes sign, cuts blocks in two), from a corner, and from the
/// middle with a wide view (the dominant axis changes across the image). The image's sizes
/// are not multiples of the block's, so the last blocks of rows and columns have inactive
/// lanes.
fn camera_packets(bvh: &WideBvh) -> Vec<RayPacket> {
    let bounds = bvh.bounds();
    let (centre, size) = (bounds.center(), bounds.extent().length().max(1e-3));
    let views = [
        (centre + Vec3::Z * 2.0 * size, -Vec3::Z, Vec3::Y, 45.0),
        (
            centre + Vec3::new(1.0, 0.7, 1.3) * size,
            Vec3::new(-1.0, -0.7, -1.3),
            Vec3::Y,
            40.0,
        ),
        (centre - Vec3::X * 1.5 * size, Vec3::X, Vec3::Z, 60.0),
        (
            centre + Vec3::new(0.01, 0.02, 0.03) * size,
            Vec3::new(0.3, -0.2, -1.0),
            Vec3::Y,
            120.0,
        ),
    ];
    let (width, height) = (62, 45);
    let mut packets = Vec::new();
    for (origin, direction, up, fov) in views {
        let camera = Camera::new(origin, direction, up, fov).expect("a camera");
        for rows in [2, 4] {
            packets.extend(camera_blocks(&camera, width, height, rows));
        }
    }
    packets
}

/// The camera rays of a `width` × `height` image in blocks of 4 × `rows` pixels, a block to a
/// packet, row after row of blocks.
fn camera_blocks(camera: &Camera, width: u32, height: u32, rows: u32) -> Vec<RayPacket> {
    let mut packets = Vec::new();
    for y0 in (0..height).step_by(rows as usize) {
        for x0 in (0..width).step_by(4) {
            let rays: Vec<Ray> = (y0..(y0 + rows).min(height))
                .flat_map(|y| (x0..(x0 + 4).min(width)).map(move |x| (x, y)))
                .map(|(x, y)| camera.primary_ray(x, y, width, height))
                .collect();
            packets.push(RayPacket::new(&rays));
        }
    }
    packets
}

/// Packets of unrelated rays: the features that break naive traversals (`meshes::rays`),
/// with random lanes inactive, some rays given a NaN or a zero direction, some a zero or
/// negative component, an infinite origin, a NaN `t_min` or `t_max`, or `t_min = −∞`, and
/// some packets of rays from one point in random directions (the octants mixed). A third of
/// the packets have random lanes active among all sixteen, a third among the first eight
/// (traced eight lanes wide), and a third all sixteen.
fn random_packets(triangles: &[Triangle], rng: &mut StdRng, count: usize) -> Vec<RayPacket> {
    let mut packets = Vec::with_capacity(count);
    for n in 0..count {
        let mut rays = meshes::rays(rng, triangles, PACKET_LANES);
        if n % 4 == 0 {
            let origin = meshes::random_point(rng, -2.0, 2.0);
            for ray in &mut rays {
                *ray = Ray::new(origin, random_direction(rng));
            }
        }
        for ray in &mut rays {
            match rng.random_range(0..40) {
                0 => ray.dir = Vec3::ZERO,
                1 => ray.dir[rng.random_range(0..3)] = f32::NAN,
                2 => ray.origin[rng.random_range(0..3)] = f32::NAN,
                3 => ray.dir = -ray.dir,
                4 => ray.origin[rng.random_range(0..3)] = f32::INFINITY,
                5 => ray.t_max = f32::NAN,
                6 => ray.t_min = f32::NAN,
                7 => ray.t_min = f32::NEG_INFINITY,
                _ => {}
            }
        }
        let mut packet = RayPacket {
            rays: rays.try_into().expect("a packet's rays"),
            active: LaneMask::ALL,
        };
        match n % 3 {
            0 => packet.active = LaneMask::from_bits(rng.random::<u16>()),
            1 => packet.active = LaneMask::from_bits(u16::from(rng.random::<u8>())),
            _ => {}
        }
        packets.push(packet);
    }
    packets
}

/// Packets of rays a little apart, all from near one point towards near another: coherent,
/// but over short intervals and with `t_min` above zero, so that hits come and go within the
/// packet. Eight rays and sixteen in turn.
fn bundle_packets(triangles: &[Triangle], rng: &mut StdRng, count: usize) -> Vec<RayPacket> {
    (0..count)
        .map(|n| {
            let target = triangles[rng.random_range(0..triangles.len())].v[0];
            let origin = meshes::random_point(rng, -2.5, 2.5);
            let spread = rng.random_range(0.0..0.05f32);
            let rays: Vec<Ray> = (0..[8, PACKET_LANES][n % 2])
                .map(|_| {
                    let aim = target + meshes::random_point(rng, -spread, spread);
                    let mut ray = Ray::new(origin, normalize(aim - origin));
                    if rng.random_bool(0.3) {
                        ray.t_min = rng.random_range(0.0..1.0);
                        ray.t_max = ray.t_min + rng.random_range(0.0..3.0);
                    }
                    ray
                })
                .collect();
            RayPacket::new(&rays)
        })
        .collect()
}

/// Every triangle of a soup three times over, the copies scattered through the input order:
/// every hit is a tie of three equal distances, decided by the smallest input index.
fn tied_soup(rng: &mut StdRng) -> Vec<Triangle> {
    let triangles = soup(rng, 300);
    let mut out: Vec<Triangle> = triangles
        .iter()
        .chain(&triangles)
        .chain(&triangles)
        .copied()
        .collect();
    for i in (1..out.len()).rev() {
        out.swap(i, rng.random_range(0..=i));
    }
    out
}

/// Checks camera, random and bundled packets on `triangles` in `structure`.
fn check(what: &str, triangles: &[Triangle], structure: Structure, seed: u64) {
    let bvh = structure(triangles);
    let mut camera = Tally::default();
    for packet in camera_packets(&bvh) {
        camera.check(&bvh, &packet);
    }
    camera.assert_all_agree(&format!("{what}, camera blocks"));
    let mut rng = StdRng::seed_from_u64(seed);
    let mut random = Tally::default();
    for packet in random_packets(triangles, &mut rng, 3_000) {
        random.check(&bvh, &packet);
    }
    random.assert_all_agree(&format!("{what}, random packets"));
    let mut bundles = Tally::default();
    for packet in bundle_packets(triangles, &mut rng, 2_000) {
        bundles.check(&bvh, &packet);
    }
    bundles.assert_all_agree(&format!("{what}, bundles"));
}

/// A test per mesh and structure, so that a failure names both.
macro_rules! packet_tests {
    ($($mesh:ident: $triangles:expr, $seed:expr;)+) => {
        $(
            mod $mesh {
                use super::*;

                #[test]
                fn eight_wide() {
                    check(concat!(stringify!($mesh), ", wide8"), &$triangles, wide8, $seed);
                }

                #[test]
                fn eight_wide_avx2() {
                    let what = concat!(stringify!($mesh), ", wide8 on AVX2 at most");
                    check(what, &$triangles, wide8_avx2, $seed);
                }

                #[test]
                fn eight_wide_portable() {
                    let what = concat!(stringify!($mesh), ", wide8 without AVX2");
                    check(what, &$triangles, wide8_portable, $seed);
                }

                #[test]
                fn four_wide() {
                    check(concat!(stringify!($mesh), ", wide4"), &$triangles, wide4, $seed);
                }

                #[test]
                fn four_wide_portable() {
                    let what = concat!(stringify!($mesh), ", wide4 without AVX2");
                    check(what, &$triangles, wide4_portable, $seed);
                }
            }
        )+
    };
}

packet_tests! {
    random_soup: soup(&mut StdRng::seed_from_u64(1), 2_000), 11;
    tied_soup: tied_soup(&mut StdRng::seed_from_u64(2)), 12;
    flat_grid: flat_grid(24), 13;
    axis_aligned_boxes: boxes(), 14;
    coincident_centroids: coincident(&mut StdRng::seed_from_u64(4)), 15;
    piles_of_copies: piles(&mut StdRng::seed_from_u64(7)), 16;
}

/// A shipped scene's own camera blocks, 4×2 and 4×4 pixels, at its size and at one whose
/// rows and columns do not fill the blocks.
#[test]
fn a_shipped_scenes_camera() {
    for (name, width, height) in [("quick", 96, 64), ("cornell", 61, 47)] {
        let scene = common::load_scene(name, Some(width), Some(height));
        let triangles = scene.accel.input_triangles();
        for (label, structure) in [
            ("wide8", wide8 as Structure),
            ("wide8 on AVX2 at most", wide8_avx2),
            ("wide8 without AVX2", wide8_portable),
            ("wide4", wide4),
        ] {
            let bvh = structure(&triangles);
            let mut tally = Tally::default();
            for rows in [2, 4] {
                for packet in camera_blocks(&scene.camera, width, height, rows) {
                    tally.check(&bvh, &packet);
                }
            }
            assert_eq!(tally.mismatches, 0, "{name} ({label}): {:?}", tally.first);
            assert!(
                tally.hits * 2 > tally.lanes,
                "{name} ({label}): {} hits",
                tally.hits
            );
        }
    }
}

/// The rays a frame of a shipped scene traces (camera, reflection, random and shadow rays, and
/// random rays through its box: `meshes::scene_rays`), eight and sixteen at a time in the
/// order they come.
#[test]
fn a_shipped_scenes_frame_rays() {
    let scene = common::load_scene("quick", Some(48), Some(32));
    let triangles = scene.accel.input_triangles();
    let rays = meshes::scene_rays(&scene, &mut StdRng::seed_from_u64(60), 20_000);
    for (label, structure) in [
        ("wide8", wide8 as Structure),
        ("wide8 on AVX2 at most", wide8_avx2),
        ("wide8 without AVX2", wide8_portable),
        ("wide4", wide4),
    ] {
        let bvh = structure(&triangles);
        let mut tally = Tally::default();
        for lanes in [8, PACKET_LANES] {
            for chunk in rays.chunks(lanes) {
                tally.check(&bvh, &RayPacket::new(chunk));
            }
        }
        tally.assert_all_agree(&format!("quick's frame rays ({label})"));
    }
}

/// An empty packet traces nothing; a packet of one ray is that ray.
#[test]
fn empty_and_single_lane_packets() {
    let triangles = soup(&mut StdRng::seed_from_u64(3), 200);
    let bvh = wide8(&triangles);
    let empty = RayPacket::new(&[]);
    assert_eq!(bvh.closest_hit_packet(&empty), [None; PACKET_LANES]);
    assert_eq!(bvh.occluded_packet(&empty), LaneMask::NONE);
    let mut rng = StdRng::seed_from_u64(30);
    let mut tally = Tally::default();
    for ray in meshes::rays(&mut rng, &triangles, 2_000) {
        tally.check(&bvh, &RayPacket::new(&[ray]));
    }
    tally.assert_all_agree("one-ray packets");
}
