use std::path::Path;

use super::*;

/// The budget the tests read under, unless a test is about the budget.
const ROOM: usize = 1000;

fn read(bytes: &[u8]) -> Mesh {
    parse(bytes, Path::new("t.ply"), ROOM).unwrap_or_else(|e| panic!("{e}"))
}

fn fault(bytes: &[u8]) -> String {
    fault_within(bytes, ROOM)
}

fn fault_within(bytes: &[u8], max_triangles: usize) -> String {
    match parse(bytes, Path::new("t.ply"), max_triangles) {
        Ok(mesh) => panic!("read without a fault: {mesh:?}"),
        Err(e) => e.to_string(),
    }
}

/// A unit square `0 1 2 3` as one quad, in ASCII: the header is lines 1 to 9, the four
/// vertices lines 10 to 13, the face line 14.
const SQUARE: &str = "ply\n\
    format ascii 1.0\n\
    element vertex 4\n\
    property float x\n\
    property float y\n\
    property float z\n\
    element face 1\n\
    property list uchar int vertex_indices\n\
    end_header\n\
    0 0 0\n\
    1 0 0\n\
    1 1 0\n\
    0 1 0\n\
    4 0 1 2 3\n";

fn square_mesh() -> Mesh {
    Mesh {
        positions: vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ],
        normals: Vec::new(),
        faces: vec![[0, 1, 2], [0, 2, 3]],
    }
}

/// Binary PLY data, written value by value in one byte order.
struct Bin {
    bytes: Vec<u8>,
    big_endian: bool,
}

macro_rules! put {
    ($($name:ident: $t:ty),*) => {
        $(fn $name(mut self, v: $t) -> Self {
            if self.big_endian {
                self.bytes.extend(v.to_be_bytes());
            } else {
                self.bytes.extend(v.to_le_bytes());
            }
            self
        })*
    };
}

impl Bin {
    /// A binary file whose header declares `elements` (the lines between `format` and
    /// `end_header`).
    fn new(big_endian: bool, elements: &str) -> Self {
        let order = if big_endian { "big" } else { "little" };
        let header = format!("ply\nformat binary_{order}_endian 1.0\n{elements}end_header\n");
        Bin {
            bytes: header.into_bytes(),
            big_endian,
        }
    }

    fn len(&self) -> usize {
        self.bytes.len()
    }

    put!(i8: i8, u8: u8, i16: i16, u16: u16, i32: i32, u32: u32, f32: f32, f64: f64);
}

const SQUARE_ELEMENTS: &str = "element vertex 4\n\
    property float x\n\
    property float y\n\
    property float z\n\
    element face 1\n\
    property list uchar int vertex_indices\n";

/// [`SQUARE`] in binary.
fn binary_square(big_endian: bool) -> Bin {
    let mut b = Bin::new(big_endian, SQUARE_ELEMENTS);
    for [x, y] in [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]] {
        b = b.f32(x).f32(y).f32(0.0);
    }
    b.u8(4).i32(0).i32(1).i32(2).i32(3)
}

// ---- reading ----

#[test]
fn ascii_quad_is_split_into_a_fan() {
    assert_eq!(read(SQUARE.as_bytes()), square_mesh());
}

#[test]
fn binary_little_and_big_endian_read_as_ascii() {
    assert_eq!(read(&binary_square(false).bytes), square_mesh());
    assert_eq!(read(&binary_square(true).bytes), square_mesh());
}

#[test]
fn polygons_are_fans_around_their_first_corner() {
    let ply = SQUARE
        .replace("vertex 4", "vertex 5")
        .replace("0 1 0\n4 0 1 2 3", "0 1 0\n-1 0.5 0\n5 0 1 2 3 4");
    assert_eq!(
        read(ply.as_bytes()).faces,
        [[0, 1, 2], [0, 2, 3], [0, 3, 4]]
    );
}

#[test]
fn double_and_integer_coordinates() {
    for big_endian in [false, true] {
        let b = Bin::new(
            big_endian,
            "element vertex 3\nproperty double x\nproperty short y\nproperty uchar z\n\
             element face 1\nproperty list uchar uint vertex_indices\n",
        );
        let b = b.f64(0.25).i16(-300).u8(7);
        let b = b.f64(1e10).i16(2).u8(0);
        let b = b.f64(-2.5).i16(0).u8(255);
        let b = b.u8(3).u32(0).u32(1).u32(2);
        let mesh = read(&b.bytes);
        assert_eq!(
            mesh.positions,
            [
                Vec3::new(0.25, -300.0, 7.0),
                Vec3::new(1e10, 2.0, 0.0),
                Vec3::new(-2.5, 0.0, 255.0),
            ],
            "big endian: {big_endian}"
        );
    }
    let ascii = SQUARE.replace("property float x", "property double x");
    assert_eq!(read(ascii.as_bytes()), square_mesh());
}

#[test]
fn index_lists_of_every_integer_type() {
    for (count, item) in [
        ("uchar", "uchar"),
        ("uint8", "char"),
        ("ushort", "short"),
        ("short", "ushort"),
        ("int", "int"),
        ("uint", "uint32"),
        ("char", "int32"),
    ] {
        let elements = SQUARE_ELEMENTS.replace(
            "list uchar int vertex_indices",
            &format!("list {count} {item} vertex_indices"),
        );
        for big_endian in [false, true] {
            let mut b = Bin::new(big_endian, &elements);
            for [x, y] in [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]] {
                b = b.f32(x).f32(y).f32(0.0);
            }
            b = match count {
                "uchar" | "uint8" => b.u8(4),
                "char" => b.i8(4),
                "ushort" => b.u16(4),
                "short" => b.i16(4),
                "int" => b.i32(4),
                _ => b.u32(4),
            };
            for i in 0..4 {
                b = match item {
                    "uchar" => b.u8(i),
                    "char" => b.i8(i as i8),
                    "short" => b.i16(i.into()),
                    "ushort" => b.u16(i.into()),
                    "int" | "int32" => b.i32(i.into()),
                    _ => b.u32(i.into()),
                };
            }
            assert_eq!(
                read(&b.bytes),
                square_mesh(),
                "list {count} {item}, big endian: {big_endian}"
            );
        }
        let ascii = SQUARE.replace(
            "list uchar int vertex_indices",
            &format!("list {count} {item} vertex_indices"),
        );
        assert_eq!(
            read(ascii.as_bytes()),
            square_mesh(),
            "ASCII list {count} {item}"
        );
    }
}

#[test]
fn vertex_index_is_the_corner_list_too() {
    let ply = SQUARE.replace("vertex_indices", "vertex_index");
    assert_eq!(read(ply.as_bytes()), square_mesh());
}

#[test]
fn normals_are_made_unit_length() {
    let ply = SQUARE
        .replace(
            "property float z\n",
            "property float z\nproperty float nx\nproperty float ny\nproperty float nz\n",
        )
        .replace("0 0 0\n", "0 0 0 0 0 2\n")
        .replace("1 0 0\n", "1 0 0 3 0 4\n")
        .replace("1 1 0\n", "1 1 0 0 0 0\n")
        .replace("0 1 0\n", "0 1 0 0 -1 0\n");
    let mesh = read(ply.as_bytes());
    assert_eq!(
        mesh.normals,
        [
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(0.6, 0.0, 0.8),
            Vec3::ZERO,
            Vec3::new(0.0, -1.0, 0.0),
        ]
    );
    assert_eq!(mesh.positions, square_mesh().positions);
}

#[test]
fn normals_are_left_out_unless_all_three_are_there() {
    let ply = SQUARE
        .replace(
            "property float z\n",
            "property float z\nproperty float nx\nproperty float ny\n",
        )
        .replace(" 0\n", " 0 0 1\n");
    assert_eq!(read(ply.as_bytes()), square_mesh());
}

#[test]
fn other_elements_and_properties_are_skipped() {
    let ply = "ply\n\
        format ascii 1.0\n\
        comment made by hand\n\
        obj_info nothing\n\
        element material 1\n\
        property list uchar float colours\n\
        property uchar shininess\n\
        element vertex 4\n\
        property float confidence\n\
        property float x\n\
        property float y\n\
        property uchar red\n\
        property float z\n\
        element face 1\n\
        property list uchar float texcoord\n\
        property list uchar int vertex_indices\n\
        property int flags\n\
        element edge 2\n\
        property int vertex1\n\
        property int vertex2\n\
        end_header\n\
        3 0.5 0.5 0.5 20\n\
        0.9 0 0 255 0\n\
        0.9 1 0 0 0\n\
        0.9 1 1 10 0\n\
        0.9 0 1 20 0\n\
        2 0.5 0.5 4 0 1 2 3 -7\n\
        0 1\n\
        1 2\n";
    assert_eq!(read(ply.as_bytes()), square_mesh());

    let b = Bin::new(
        false,
        "element vertex 4\nproperty float x\nproperty list uchar double extra\nproperty float y\n\
         property float z\nelement face 1\nproperty list uchar float texcoord\n\
         property list uchar int vertex_indices\n",
    );
    let mut b = b;
    for [x, y] in [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]] {
        b = b.f32(x).u8(1).f64(9.0).f32(y).f32(0.0);
    }
    let b = b.u8(2).f32(0.5).f32(0.5).u8(4).i32(0).i32(1).i32(2).i32(3);
    assert_eq!(read(&b.bytes), square_mesh());
}

#[test]
fn windows_line_breaks() {
    let ply = SQUARE.replace('\n', "\r\n");
    assert_eq!(read(ply.as_bytes()), square_mesh());
    let mut b = binary_square(false);
    let header_end = b
        .bytes
        .windows(11)
        .position(|w| w == b"end_header\n")
        .unwrap();
    b.bytes.splice(header_end + 10..header_end + 10, *b"\r");
    assert_eq!(read(&b.bytes), square_mesh());
}

#[test]
fn trailing_blank_lines_are_allowed() {
    let ply = format!("{SQUARE}\n  \n");
    assert_eq!(read(ply.as_bytes()), square_mesh());
}

// ---- faults in the header: line and column ----

#[test]
fn header_faults_name_line_and_column() {
    let mut wrong = Vec::new();
    let mut check = |name: &str, ply: String, expected: &str| {
        let got = fault(ply.as_bytes());
        if got != expected {
            wrong.push(format!("{name}:\n  expected {expected}\n  got      {got}"));
        }
    };
    let with = |from: &str, to: &str| {
        assert!(SQUARE.contains(from), "{from}");
        SQUARE.replacen(from, to, 1)
    };
    check(
        "misspelt type",
        with("property float x", "property flaot x"),
        "t.ply:4:10: unknown property type `flaot`",
    );
    check(
        "misspelt list item type",
        with("list uchar int", "list uchar itn"),
        "t.ply:8:21: unknown property type `itn`",
    );
    check(
        "not PLY",
        with("ply\n", "plx\n"),
        "t.ply:1:1: not a PLY file: the first line must be `ply`",
    );
    check(
        "unknown keyword",
        with("element face", "elment face"),
        "t.ply:7:1: unknown header keyword `elment`",
    );
    check(
        "unknown format",
        with("format ascii", "format text"),
        "t.ply:2:8: unknown format `text`; expected `ascii`, `binary_little_endian` or `binary_big_endian`",
    );
    check(
        "version",
        with("ascii 1.0", "ascii 2.0"),
        "t.ply:2:14: PLY version `2.0` is not supported; raylb reads version 1.0",
    );
    check(
        "no version",
        with("ascii 1.0", "ascii"),
        "t.ply:2:13: missing the version after the format (`1.0`)",
    );
    check(
        "second format",
        with("end_header", "format ascii 1.0\nend_header"),
        "t.ply:9:1: a second `format` line",
    );
    check(
        "no format",
        with("format ascii 1.0\n", ""),
        "t.ply:8:1: the header has no `format` line",
    );
    check(
        "count not a number",
        with("vertex 4", "vertex four"),
        "t.ply:3:16: element count `four` is not a whole number (0 or more)",
    );
    check(
        "negative count",
        with("face 1", "face -1"),
        "t.ply:7:14: element count `-1` is not a whole number (0 or more)",
    );
    check(
        "no count",
        with("element face 1", "element face"),
        "t.ply:7:13: missing the element's count",
    );
    check(
        "word after the count",
        with("vertex 4", "vertex 4 5"),
        "t.ply:3:18: unexpected `5` after the element's count",
    );
    check(
        "second element of a name",
        with("element face 1", "element vertex 1"),
        "t.ply:7:9: a second element named `vertex`",
    );
    check(
        "property before any element",
        with("element vertex 4\n", ""),
        "t.ply:3:1: `property` before any `element`",
    );
    check(
        "property twice",
        with("property float y", "property float x"),
        "t.ply:5:16: element `vertex` already has a property `x`",
    );
    check(
        "no property name",
        with("property float z", "property float"),
        "t.ply:6:15: missing the property's name",
    );
    check(
        "word after the name",
        with("property float z", "property float z w"),
        "t.ply:6:18: unexpected `w` after the property's name",
    );
    check(
        "float list length",
        with("list uchar int", "list float int"),
        "t.ply:8:15: a list's length must have an integer type, not `float`",
    );
    check(
        "word after end_header",
        with("end_header", "end_header now"),
        "t.ply:9:12: unexpected `now` after `end_header`",
    );
    check(
        "element without properties",
        with("end_header", "element nothing 3\nend_header"),
        "t.ply:9:1: element `nothing` has 3 entries but no properties",
    );
    check(
        "no end_header",
        SQUARE[..SQUARE.find("end_header").unwrap()].to_string(),
        "t.ply: the header ends without an `end_header` line: the file is truncated or not PLY",
    );
    check(
        "empty file",
        String::new(),
        "t.ply: the header ends without an `end_header` line: the file is truncated or not PLY",
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn header_that_is_not_text() {
    let mut ply = SQUARE.as_bytes().to_vec();
    ply[SQUARE.find("float y").unwrap()] = 0xff;
    assert_eq!(fault(&ply), "t.ply:5:1: the header is not text");
}

// ---- faults in what the header describes ----

#[test]
fn a_file_without_faces_is_refused() {
    let no_face_element = &SQUARE[..SQUARE.find("element face").unwrap()];
    let ply = format!("{no_face_element}end_header\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n");
    assert_eq!(fault(ply.as_bytes()), "t.ply: the PLY file has no faces");
    let ply = SQUARE
        .replace("face 1", "face 0")
        .replace("4 0 1 2 3\n", "");
    assert_eq!(fault(ply.as_bytes()), "t.ply: the PLY file has no faces");
}

#[test]
fn vertices_need_x_y_z_as_numbers() {
    let ply = SQUARE.replace("property float z\n", "");
    assert_eq!(
        fault(ply.as_bytes()),
        "t.ply:3:1: element `vertex` has no property `z`"
    );
    let ply = SQUARE.replace("property float y", "property list uchar float y");
    assert_eq!(
        fault(ply.as_bytes()),
        "t.ply:5:1: vertex property `y` must be a number, not a list"
    );
    let ply = SQUARE.replace("element vertex 4", "element point 4");
    assert_eq!(
        fault(ply.as_bytes()),
        "t.ply:7:1: faces, but no `vertex` element"
    );
}

#[test]
fn faces_need_an_integer_corner_list() {
    let cases = [
        (
            "property list uchar int vertex_indices",
            "property list uchar int corners",
            "t.ply:7:1: element `face` has no `vertex_indices` list",
        ),
        (
            "property list uchar int vertex_indices",
            "property list uchar float vertex_indices",
            "t.ply:8:1: `vertex_indices` must list integers",
        ),
        (
            "property list uchar int vertex_indices",
            "property int vertex_indices",
            "t.ply:8:1: `vertex_indices` must be a list",
        ),
        (
            "property list uchar int vertex_indices\n",
            "property list uchar int vertex_indices\nproperty list uchar int vertex_index\n",
            "t.ply:9:1: element `face` has both `vertex_indices` and `vertex_index`",
        ),
    ];
    for (from, to, expected) in cases {
        assert_eq!(fault(SQUARE.replace(from, to).as_bytes()), expected, "{to}");
    }
}

#[test]
fn more_faces_than_the_budget_are_refused_before_reading_them() {
    let ply = SQUARE.replace("face 1", "face 2000000000");
    assert_eq!(
        fault_within(ply.as_bytes(), 1_000_000),
        "t.ply:7:1: 2000000000 faces make at least as many triangles: more than the 1000000 the scene has room for"
    );
}

#[test]
fn more_triangles_than_the_budget_are_refused_at_the_face_that_passes_it() {
    let ply = SQUARE
        .replace("face 1", "face 2")
        .replace("4 0 1 2 3\n", "3 0 1 2\n4 0 1 2 3\n");
    assert_eq!(
        fault_within(ply.as_bytes(), 2),
        "t.ply:15:1: face 1: its triangles take the mesh past the 2 the scene has room for"
    );
    assert_eq!(read(ply.as_bytes()).faces.len(), 3);
}

// ---- faults in ASCII data: line and column ----

#[test]
fn ascii_faults_name_line_and_column() {
    let cases = [
        (
            "1 0 0\n",
            "1 x 0\n",
            "t.ply:11:3: vertex 1: `y` is `x`, not a number",
        ),
        (
            "1 1 0\n",
            "1 1 nan\n",
            "t.ply:12:5: vertex 2: `z` is NaN; coordinates must be finite",
        ),
        (
            "1 1 0\n",
            "-inf 1 0\n",
            "t.ply:12:1: vertex 2: `x` is infinite; coordinates must be finite",
        ),
        (
            "1 1 0\n",
            "1 1e39 0\n",
            "t.ply:12:3: vertex 2: `y` is infinite; coordinates must be finite",
        ),
        (
            "1 1 0\n",
            "1 .5 0\n",
            "t.ply:12:3: vertex 2: `y` is `.5`, not a number",
        ),
        (
            "0 1 0\n",
            "0 1\n",
            "t.ply:13:4: vertex 3: the line ends before `z`",
        ),
        (
            "0 1 0\n",
            "0 1 0 0\n",
            "t.ply:13:7: vertex 3: unexpected `0` after the element's 3 values",
        ),
        (
            "4 0 1 2 3\n",
            "4 0 1 2\n",
            "t.ply:14:8: face 0: the line ends after 3 of the 4 items of `vertex_indices`",
        ),
        (
            "4 0 1 2 3\n",
            "4 0 1 2 3 4\n",
            "t.ply:14:11: face 0: unexpected `4` after the element's 5 values",
        ),
        (
            "4 0 1 2 3\n",
            "4 0 1.5 2 3\n",
            "t.ply:14:5: face 0: `vertex_indices` is `1.5`, but its type `int` holds whole numbers from -2147483648 to 2147483647",
        ),
        (
            "4 0 1 2 3\n",
            "-4 0 1 2 3\n",
            "t.ply:14:1: face 0: the length of `vertex_indices` is `-4`, not a whole number (0 or more)",
        ),
        (
            "4 0 1 2 3\n",
            "\n",
            "t.ply:14:1: face 0: the line ends before the list `vertex_indices`",
        ),
    ];
    let mut wrong = Vec::new();
    for (from, to, expected) in cases {
        let got = fault(SQUARE.replacen(from, to, 1).as_bytes());
        if got != expected {
            wrong.push(format!("{to:?}:\n  expected {expected}\n  got      {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn ascii_values_out_of_their_type() {
    let ply = SQUARE
        .replace(
            "property float z\n",
            "property float z\nproperty uchar red\n",
        )
        .replace(" 0\n", " 0 9\n")
        .replacen("0 0 0 9", "0 0 0 256", 1);
    assert_eq!(
        fault(ply.as_bytes()),
        "t.ply:11:7: vertex 0: `red` is `256`, but its type `uchar` holds whole numbers from 0 to 255"
    );
}

#[test]
fn ascii_truncated_and_overlong() {
    let ply = SQUARE.replace("4 0 1 2 3\n", "");
    assert_eq!(
        fault(ply.as_bytes()),
        "t.ply: the file ends after line 13, before face 0 of the 1 the header declares: it is truncated"
    );
    let ply = format!("{SQUARE}3 0 1 2\n");
    assert_eq!(
        fault(ply.as_bytes()),
        "t.ply:15:1: data after the last element the header declares"
    );
}

#[test]
fn ascii_faces_out_of_range() {
    let cases = [
        (
            "4 0 1 2 9\n",
            "t.ply:14:9: face 0: corner 3 refers to vertex 9, but the vertices are numbered 0 to 3",
        ),
        (
            "4 0 -1 2 3\n",
            "t.ply:14:5: face 0: corner 1 refers to vertex -1, but the vertices are numbered 0 to 3",
        ),
        (
            "4 0 4 2 3\n",
            "t.ply:14:5: face 0: corner 1 refers to vertex 4, but the vertices are numbered 0 to 3",
        ),
        (
            "2 0 1\n",
            "t.ply:14:1: face 0: a face needs at least 3 corners, found 2",
        ),
        (
            "0\n",
            "t.ply:14:1: face 0: a face needs at least 3 corners, found 0",
        ),
    ];
    for (face, expected) in cases {
        assert_eq!(
            fault(SQUARE.replace("4 0 1 2 3\n", face).as_bytes()),
            expected,
            "{face}"
        );
    }
}

#[test]
fn faces_over_no_vertices() {
    let ply = SQUARE
        .replace("vertex 4", "vertex 0")
        .replace("0 0 0\n1 0 0\n1 1 0\n0 1 0\n", "");
    assert_eq!(
        fault(ply.as_bytes()),
        "t.ply:10:3: face 0: corner 0 refers to vertex 0, but there are no vertices"
    );
}

#[test]
fn ascii_line_that_is_not_text() {
    let mut ply = SQUARE.as_bytes().to_vec();
    let at = SQUARE.find("1 1 0").unwrap();
    ply[at + 2] = 0xc3;
    assert_eq!(fault(&ply), "t.ply:12:1: vertex 2: the line is not text");
}

// ---- faults in binary data: byte offsets ----

/// Byte offsets in [`binary_square`]: where the body starts, and the size of a vertex.
fn body_start(b: &Bin) -> usize {
    b.bytes
        .windows(11)
        .position(|w| w == b"end_header\n")
        .unwrap()
        + 11
}
const VERTEX: usize = 12;

#[test]
fn binary_non_finite_coordinates_name_their_byte() {
    for big_endian in [false, true] {
        let mut b = Bin::new(big_endian, SQUARE_ELEMENTS);
        let body = b.len();
        b = b.f32(0.0).f32(0.0).f32(0.0).f32(1.0).f32(f32::NAN).f32(0.0);
        b = b
            .f32(1.0)
            .f32(1.0)
            .f32(f32::INFINITY)
            .f32(0.0)
            .f32(1.0)
            .f32(0.0);
        b = b.u8(3).i32(0).i32(1).i32(2);
        assert_eq!(
            fault(&b.bytes),
            format!(
                "t.ply: byte {}: vertex 1: `y` is NaN; coordinates must be finite",
                body + VERTEX + 4
            ),
            "big endian: {big_endian}"
        );
        let nan = body + VERTEX + 4;
        b.bytes[nan..nan + 4].copy_from_slice(&if big_endian {
            1f32.to_be_bytes()
        } else {
            1f32.to_le_bytes()
        });
        assert_eq!(
            fault(&b.bytes),
            format!(
                "t.ply: byte {}: vertex 2: `z` is infinite; coordinates must be finite",
                body + 2 * VERTEX + 8
            ),
            "big endian: {big_endian}"
        );
    }
}

#[test]
fn binary_doubles_beyond_single_precision() {
    let b = Bin::new(
        false,
        "element vertex 3\nproperty double x\nproperty double y\nproperty double z\n\
         element face 1\nproperty list uchar int vertex_indices\n",
    );
    let body = b.len();
    let b = b.f64(0.0).f64(0.0).f64(0.0);
    let b = b.f64(1.0).f64(0.0).f64(-1e300);
    let b = b.f64(0.0).f64(1.0).f64(0.0);
    let b = b.u8(3).i32(0).i32(1).i32(2);
    assert_eq!(
        fault(&b.bytes),
        format!(
            "t.ply: byte {}: vertex 1: `z` is -1e300, beyond the range of 32-bit floats; coordinates must be finite",
            body + 24 + 16
        )
    );
}

#[test]
fn binary_non_finite_normals_are_refused() {
    let b = Bin::new(
        false,
        "element vertex 3\nproperty float x\nproperty float y\nproperty float z\n\
         property float nx\nproperty float ny\nproperty float nz\n\
         element face 1\nproperty list uchar int vertex_indices\n",
    );
    let body = b.len();
    let b = b.f32(0.0).f32(0.0).f32(0.0).f32(0.0).f32(0.0).f32(1.0);
    let b = b.f32(1.0).f32(0.0).f32(0.0).f32(f32::NAN).f32(0.0).f32(1.0);
    let b = b.f32(0.0).f32(1.0).f32(0.0).f32(0.0).f32(0.0).f32(1.0);
    let b = b.u8(3).i32(0).i32(1).i32(2);
    assert_eq!(
        fault(&b.bytes),
        format!(
            "t.ply: byte {}: vertex 1: `nx` is NaN; normals must be finite",
            body + 24 + 12
        )
    );
}

#[test]
fn binary_faces_out_of_range_name_the_byte_of_the_corner() {
    for big_endian in [false, true] {
        let b = binary_square(big_endian);
        let face = body_start(&b) + 4 * VERTEX;
        let mut bytes = b.bytes.clone();
        let corner = face + 1 + 4 * 2;
        bytes[corner..corner + 4].copy_from_slice(&if big_endian {
            (-1i32).to_be_bytes()
        } else {
            (-1i32).to_le_bytes()
        });
        assert_eq!(
            fault(&bytes),
            format!(
                "t.ply: byte {corner}: face 0: corner 2 refers to vertex -1, but the vertices are numbered 0 to 3"
            ),
            "big endian: {big_endian}"
        );
    }
}

#[test]
fn binary_faces_with_too_few_corners_name_the_byte_of_their_length() {
    let mut b = Bin::new(false, &SQUARE_ELEMENTS.replace("face 1", "face 2"));
    for [x, y] in [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]] {
        b = b.f32(x).f32(y).f32(0.0);
    }
    let second = b.len() + 1 + 3 * 4;
    let b = b.u8(3).i32(0).i32(1).i32(2).u8(2).i32(0).i32(1);
    assert_eq!(
        fault(&b.bytes),
        format!("t.ply: byte {second}: face 1: a face needs at least 3 corners, found 2")
    );
}

#[test]
fn binary_negative_list_length() {
    let mut b = Bin::new(
        true,
        &SQUARE_ELEMENTS.replace("list uchar int", "list int int"),
    );
    for [x, y] in [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]] {
        b = b.f32(x).f32(y).f32(0.0);
    }
    let face = b.len();
    let b = b.i32(-3).i32(0).i32(1).i32(2);
    assert_eq!(
        fault(&b.bytes),
        format!("t.ply: byte {face}: face 0: `vertex_indices` has a negative length (-3)")
    );
}

#[test]
fn binary_truncated_inside_and_between_elements() {
    let b = binary_square(false);
    let body = body_start(&b);
    let cut = &b.bytes[..body + 2 * VERTEX + 5];
    assert_eq!(
        fault(cut),
        format!(
            "t.ply: byte {}: vertex 2 starts here, but the file ends at byte {} before its last value: it is truncated",
            body + 2 * VERTEX,
            cut.len()
        )
    );
    let cut = &b.bytes[..body + 4 * VERTEX];
    assert_eq!(
        fault(cut),
        format!(
            "t.ply: byte {}: the file ends before face 0 of the 1 the header declares: it is truncated",
            cut.len()
        )
    );
    let cut = &b.bytes[..b.len() - 1];
    assert_eq!(
        fault(cut),
        format!(
            "t.ply: byte {}: face 0 starts here, but the file ends at byte {} before its last value: it is truncated",
            body + 4 * VERTEX,
            cut.len()
        )
    );
}

#[test]
fn binary_bytes_after_the_last_element() {
    let b = binary_square(false);
    let end = b.len();
    let b = b.u8(0).u8(0);
    assert_eq!(
        fault(&b.bytes),
        format!("t.ply: byte {end}: 2 bytes after the last element the header declares")
    );
}

// ---- declared sizes are not trusted ----

#[test]
fn huge_declared_counts_over_a_short_body_fail_fast() {
    let ascii = SQUARE.replace("vertex 4", "vertex 2147483648");
    assert_eq!(
        fault_within(ascii.as_bytes(), usize::MAX),
        "t.ply:14:7: vertex 4: unexpected `2` after the element's 3 values"
    );
    let b = Bin::new(
        false,
        &SQUARE_ELEMENTS
            .replace("vertex 4", "vertex 2147483648")
            .replace("face 1", "face 2147483648"),
    );
    let body = b.len();
    let b = b.f32(0.0).f32(0.0).f32(0.0).f32(1.0);
    assert_eq!(
        fault_within(&b.bytes, usize::MAX),
        format!(
            "t.ply: byte {}: vertex 1 starts here, but the file ends at byte {} before its last value: it is truncated",
            body + VERTEX,
            b.len()
        )
    );
    let mut list = Bin::new(
        false,
        &SQUARE_ELEMENTS.replace("list uchar int", "list uint int"),
    );
    for [x, y] in [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]] {
        list = list.f32(x).f32(y).f32(0.0);
    }
    let face = list.len();
    let list = list.u32(u32::MAX).i32(0).i32(1);
    assert_eq!(
        fault(&list.bytes),
        format!(
            "t.ply: byte {face}: face 0 starts here, but the file ends at byte {} before its last value: it is truncated",
            list.len()
        )
    );
}

#[test]
fn more_vertices_than_32_bit_indices_reach() {
    let ply = SQUARE.replace("vertex 4", "vertex 4294967297");
    assert_eq!(
        fault(ply.as_bytes()),
        "t.ply:3:1: 4294967297 vertices: more than the 2^32 that 32-bit indices can reach"
    );
}
