//! Mesh files from anywhere: the byte-level readers a fuzzer calls return on any input,
//! without panicking, and allocate in proportion to the bytes given rather than to the counts
//! a header declares.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic;
use std::path::Path;

use renderer::scene::{parse_obj, parse_ply};

/// The system allocator, keeping count of each thread's bytes in use and their peak (per
/// thread, so that tests running beside each other do not disturb the count).
struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn note(grown: usize, shrunk: usize) {
    // `try_with`: a thread's counters may be gone while it frees its last storage.
    let _ = LIVE.try_with(|live| {
        let now = (live.get() + grown).saturating_sub(shrunk);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed to `System` unchanged; the counting touches only
// thread-local cells, which allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size(), 0);
        // SAFETY: the caller's contract for `alloc` is `System::alloc`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, layout.size());
        // SAFETY: `ptr` came from `System` with this layout, by the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size, layout.size());
        // SAFETY: the caller's contract for `realloc` is `System::realloc`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes this thread held at once while `f` ran, beyond what it held before.
fn peak_while<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let result = f();
    (result, PEAK.with(Cell::get) - before)
}

/// A bound on what reading a file of a few hundred bytes may take: far below what any of the
/// declared counts below would need (2^31 vertices of 12 bytes is 24 GiB).
const SMALL: usize = 1 << 20;

const TRIANGLE_ELEMENTS: &str = "element vertex 3\nproperty float x\nproperty float y\n\
    property float z\nelement face 1\nproperty list uchar int vertex_indices\n";

fn binary(elements: &str, body: &[u8]) -> Vec<u8> {
    let mut bytes =
        format!("ply\nformat binary_little_endian 1.0\n{elements}end_header\n").into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

fn triangle_body() -> Vec<u8> {
    let mut body = Vec::new();
    for x in [0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0] {
        body.extend(x.to_le_bytes());
    }
    body.push(3);
    for i in [0i32, 1, 2] {
        body.extend(i.to_le_bytes());
    }
    body
}

#[test]
fn declared_counts_do_not_reserve_memory_the_data_does_not_back() {
    let huge = TRIANGLE_ELEMENTS
        .replace("vertex 3", "vertex 2147483648")
        .replace("face 1", "face 2147483648");
    let body = triangle_body();
    let files = [
        ("binary", binary(&huge, &body)),
        (
            "ascii",
            format!("ply\nformat ascii 1.0\n{huge}end_header\n0 0 0\n1 0 0\n").into_bytes(),
        ),
        (
            "list",
            binary(
                &TRIANGLE_ELEMENTS.replace("list uchar int", "list uint int"),
                &[&body[..36], &u32::MAX.to_le_bytes(), &[0; 8]].concat(),
            ),
        ),
        (
            "skipped element",
            binary(
                &format!(
                    "element junk 4294967295\nproperty list uint double d\n{TRIANGLE_ELEMENTS}"
                ),
                &[&u32::MAX.to_le_bytes()[..], &[0; 16]].concat(),
            ),
        ),
    ];
    for (name, bytes) in files {
        let (result, peak) = peak_while(|| parse_ply(&bytes, Path::new("t.ply"), usize::MAX));
        let error = result.expect_err(name).to_string();
        assert!(error.contains("truncated"), "{name}: {error}");
        assert!(
            peak < SMALL,
            "{name}: reading {} bytes took {peak} bytes",
            bytes.len()
        );
    }
}

/// A small seeded generator (xorshift64*), so that every run tries the same inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Bytes that make for interesting faults: digits, signs, separators, line breaks, the
/// extremes of a byte.
const INTERESTING: &[u8] = b"0123456789-+.e \n\r\t\x00\x7f\xff";

/// `seed` with a few random changes: bytes overwritten, removed, repeated, or the end cut.
fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        if bytes.is_empty() {
            break;
        }
        let at = rng.below(bytes.len());
        match rng.below(5) {
            0 => bytes[at] = rng.next() as u8,
            1 => bytes[at] = INTERESTING[rng.below(INTERESTING.len())],
            2 => {
                bytes.remove(at);
            }
            3 => {
                let end = (at + 1 + rng.below(8)).min(bytes.len());
                let piece = bytes[at..end].to_vec();
                bytes.splice(at..at, piece);
            }
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// Runs `read` on many mutations of each seed; fails with the input that made it panic.
fn survives_mutations(seeds: &[Vec<u8>], read: impl Fn(&[u8]) + panic::RefUnwindSafe) {
    let mut rng = Rng(0x5eed_2024_0b1e_c7ed);
    for seed in seeds {
        read(seed);
        for _ in 0..3000 {
            let input = mutate(seed, &mut rng);
            if panic::catch_unwind(|| read(&input)).is_err() {
                panic!("panicked on {:?}", String::from_utf8_lossy(&input));
            }
        }
    }
}

#[test]
fn ply_reader_survives_mutated_files() {
    let ascii = b"ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\n\
        property float z\nproperty float nx\nproperty float ny\nproperty float nz\n\
        element face 2\nproperty list uchar int vertex_indices\nelement edge 1\n\
        property list int float data\nend_header\n0 0 0 0 0 1\n1 0 0 0 0 1\n1 1 0 0 0 1\n\
        0 1 0 0 0 1\n4 0 1 2 3\n3 0 1 2\n2 0.5 1.5\n"
        .to_vec();
    let binary_le = binary(TRIANGLE_ELEMENTS, &triangle_body());
    let binary_be = String::from_utf8_lossy(&binary(TRIANGLE_ELEMENTS, &[]))
        .replace("little", "big")
        .into_bytes()
        .into_iter()
        .chain([0u8; 36])
        .chain([3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2])
        .collect();
    survives_mutations(&[ascii, binary_le, binary_be], |bytes| {
        let _ = parse_ply(bytes, Path::new("t.ply"), 1000);
    });
}

#[test]
fn obj_reader_survives_mutated_files() {
    let obj = b"mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nvt 0 0\n\
        usemtl m\nf 1//1 2//1 3//1 4//1\nf -1 -2 -3\no other\nf 1/1/1 2/1/1 3/1/1\n"
        .to_vec();
    survives_mutations(&[obj], |bytes| {
        let _ = parse_obj(bytes, Path::new("t.obj"), 1000);
    });
}

#[test]
fn polylines_are_no_faces_and_their_indices_cannot_reach_past_the_start() {
    // A polyline of three points whose relative normal index points before the first normal
    // (found by fuzzing: the OBJ library reads `l` as a face, and resolved the index to a
    // number that overflowed its bounds check).
    let obj = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nl -3//-3 -2//-2 -1//-1\nl 1 2 3\nf 1 2 3\n";
    let mesh = parse_obj(obj, Path::new("t.obj"), 1000).expect("polylines are left out");
    assert_eq!(mesh.triangles, 1, "the face alone: {mesh:?}");
    let commented = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2 3 # a polyline\nf 1 2 3 # a face\n";
    let mesh = parse_obj(commented, Path::new("t.obj"), 1000).unwrap();
    assert_eq!(mesh.triangles, 1, "{mesh:?}");
}
