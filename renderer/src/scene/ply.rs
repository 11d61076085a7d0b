//! PLY meshes (the Stanford format), ASCII and binary of either byte order.
//!
//! The work is split between this module and `ply-rs-bw`, the maintained fork of `ply-rs`:
//!
//! - The header is read here ([`header`]). The crate's header errors are parser diagnostics
//!   over several lines, without a column; here every fault names its line and column in one
//!   line, and the mesh's shape (which element holds the vertices, which list the corners) is
//!   checked, and its faces counted against the triangle budget, before any data is read.
//! - The body is decoded by the crate, one element at a time (`read_ascii_element`,
//!   `read_little_endian_element`, `read_big_endian_element`), into a [`Record`] that keeps
//!   what a mesh needs and skips the rest. Reading one element at a time is what lets every
//!   fault be placed: this module knows which line (ASCII) or byte (binary) each element starts
//!   at, and where a value is faulty it walks the element again to the value's own column or
//!   byte. The crate's ASCII grammar takes numbers as `[+-]digits[.digits][e[+-]digits]`, one
//!   element to a line.
//!
//! Nothing is allocated in proportion to a count the header declares before the data for it
//! has been seen: storage is reserved only for as many entries as the bytes left could hold,
//! and the crate caps what it reserves for a list the same way.

mod header;

#[cfg(test)]
mod tests;

use std::io::ErrorKind;
use std::path::Path;

use ply_rs_bw::parser::Parser;
use ply_rs_bw::ply::{ElementDef, PropertyAccess, PropertyAccessResult, PropertyType, ScalarType};

use crate::input::{MAX_MESH_BYTES, read_regular_file};
use crate::math::Vec3;

use super::error::SceneError;
use super::mesh::Mesh;
use header::{Element, Encoding, Header, scalar_name, scalar_size};

/// Reads `path` (a PLY file); fails if its faces make more than `max_triangles` triangles.
pub(crate) fn load(path: &Path, max_triangles: usize) -> Result<Mesh, SceneError> {
    let bytes = read_regular_file(path, MAX_MESH_BYTES).map_err(|e| SceneError::file(path, e))?;
    parse(&bytes, path, max_triangles)
}

/// Reads a PLY file from `bytes`, naming `path` in errors; fails if its faces make more than
/// `max_triangles` triangles. Faces of more than three corners are split into a fan around
/// their first corner, as the OBJ reader does; vertex normals are kept (made unit length) when
/// the vertices have all of `nx ny nz`.
pub(crate) fn parse(bytes: &[u8], path: &Path, max_triangles: usize) -> Result<Mesh, SceneError> {
    let header = header::read(bytes, path)?;
    let layout = Layout::of(&header, path, max_triangles)?;
    let mut body = Body::new(bytes, &header);
    let mut builder = Builder::new(&header, &layout, bytes.len() - header.body_start);
    for (e, element) in header.elements.iter().enumerate() {
        for index in 0..element.def.count {
            let what = What { element, index };
            let (record, raw) = body.next(&what, path)?;
            let fault = |target: Target, message: String| {
                raw.fault(
                    path,
                    &element.def,
                    header.encoding,
                    target,
                    format!("{what}: {message}"),
                )
            };
            if e == layout.vertex {
                builder.vertex(&record, &layout, fault)?;
            } else if e == layout.face {
                builder.face(&record, &layout, max_triangles, fault)?;
            }
        }
    }
    body.finish(path)?;
    Ok(builder.finish())
}

/// Where the mesh's data lies among the header's elements.
#[derive(Debug)]
struct Layout {
    /// Index of the `vertex` element.
    vertex: usize,
    /// Index of the `face` element.
    face: usize,
    /// Indices of `x y z` among the vertex's properties.
    coordinates: [usize; 3],
    /// Indices of `nx ny nz`, when the vertex has all three as numbers.
    normals: Option<[usize; 3]>,
    /// Index of the face's corner list (`vertex_indices` or `vertex_index`).
    corners: usize,
}

impl Layout {
    /// Finds the vertices and faces and checks that they can make a mesh within the budget.
    fn of(header: &Header, path: &Path, max_triangles: usize) -> Result<Self, SceneError> {
        let find = |name: &str| header.elements.iter().position(|e| e.def.name == name);
        let face = find("face")
            .filter(|&f| header.elements[f].def.count > 0)
            .ok_or_else(|| SceneError::file(path, "the PLY file has no faces"))?;
        let faces = &header.elements[face];
        if faces.def.count > max_triangles {
            return Err(SceneError::at_line(
                path,
                faces.line,
                format!(
                    "{} faces make at least as many triangles: more than the {max_triangles} the scene has room for",
                    faces.def.count
                ),
            ));
        }
        let vertex = find("vertex").ok_or_else(|| {
            SceneError::at_line(path, faces.line, "faces, but no `vertex` element")
        })?;
        let vertices = &header.elements[vertex];
        if vertices.def.count as u64 > 1 << 32 {
            return Err(SceneError::at_line(
                path,
                vertices.line,
                format!(
                    "{} vertices: more than the 2^32 that 32-bit indices can reach",
                    vertices.def.count
                ),
            ));
        }
        let (coordinates, normals) = vertex_properties(vertices, path)?;
        Ok(Layout {
            vertex,
            face,
            coordinates,
            normals,
            corners: corner_list(faces, path)?,
        })
    }
}

/// The indices of `x y z` among the vertex's properties (each must be a number), and of
/// `nx ny nz` when all three are there as numbers.
fn vertex_properties(
    vertices: &Element,
    path: &Path,
) -> Result<([usize; 3], Option<[usize; 3]>), SceneError> {
    let coordinate = |name: &str| match vertices.property(name) {
        Some((i, PropertyType::Scalar(_))) => Ok(i),
        Some((i, PropertyType::List(..))) => Err(SceneError::at_line(
            path,
            vertices.property_lines[i],
            format!("vertex property `{name}` must be a number, not a list"),
        )),
        None => Err(SceneError::at_line(
            path,
            vertices.line,
            format!("element `vertex` has no property `{name}`"),
        )),
    };
    let coordinates = [coordinate("x")?, coordinate("y")?, coordinate("z")?];
    let normal = |name: &str| match vertices.property(name) {
        Some((i, PropertyType::Scalar(_))) => Some(i),
        _ => None,
    };
    let normals = match [normal("nx"), normal("ny"), normal("nz")] {
        [Some(x), Some(y), Some(z)] => Some([x, y, z]),
        _ => None,
    };
    Ok((coordinates, normals))
}

/// The index of the face's corner list, `vertex_indices` or `vertex_index` (one of them, a
/// list of integers).
fn corner_list(faces: &Element, path: &Path) -> Result<usize, SceneError> {
    let at =
        |i: usize, message: String| SceneError::at_line(path, faces.property_lines[i], message);
    let (i, data_type) = match (
        faces.property("vertex_indices"),
        faces.property("vertex_index"),
    ) {
        (Some(_), Some((i, _))) => {
            return Err(at(
                i,
                "element `face` has both `vertex_indices` and `vertex_index`".into(),
            ));
        }
        (Some(found), None) | (None, Some(found)) => found,
        (None, None) => {
            return Err(SceneError::at_line(
                path,
                faces.line,
                "element `face` has no `vertex_indices` list",
            ));
        }
    };
    let name = &faces.def.properties[i].name;
    match data_type {
        PropertyType::List(_, ScalarType::Float | ScalarType::Double) => {
            Err(at(i, format!("`{name}` must list integers")))
        }
        PropertyType::List(..) => Ok(i),
        PropertyType::Scalar(_) => Err(at(i, format!("`{name}` must be a list"))),
    }
}

/// The names of the scalars a [`Record`] keeps, in the order of [`Record::scalars`].
const KEPT_SCALARS: [&str; 6] = ["x", "y", "z", "nx", "ny", "nz"];

/// What a mesh takes from one element, as the crate decodes it: the coordinates and normal
/// components (any numeric type, widened to `f64` without loss), the corner list (any integer
/// type, widened to `i64`), and how many values the element held.
#[derive(Debug, Default)]
struct Record {
    /// `x y z nx ny nz`, where the element has them.
    scalars: [f64; 6],
    /// The corners of a face.
    corners: Vec<i64>,
    /// Values read, a list counting its length and its items: the tokens of an ASCII line.
    values: usize,
}

impl Record {
    fn scalar(&mut self, name: &str, value: f64) -> PropertyAccessResult {
        self.values += 1;
        match KEPT_SCALARS.iter().position(|&n| n == name) {
            Some(i) => {
                self.scalars[i] = value;
                PropertyAccessResult::Set
            }
            None => PropertyAccessResult::Ignored,
        }
    }

    fn list<T: Into<i64>>(&mut self, name: &str, items: Vec<T>) -> PropertyAccessResult {
        self.values += 1 + items.len();
        if name == "vertex_indices" || name == "vertex_index" {
            self.corners = items.into_iter().map(Into::into).collect();
            PropertyAccessResult::Set
        } else {
            PropertyAccessResult::Ignored
        }
    }

    fn skipped_list(&mut self, length: usize) -> PropertyAccessResult {
        self.values += 1 + length;
        PropertyAccessResult::Ignored
    }
}

impl PropertyAccess for Record {
    fn new() -> Self {
        Self::default()
    }
    fn set_char(&mut self, name: &str, value: i8) -> PropertyAccessResult {
        self.scalar(name, value.into())
    }
    fn set_uchar(&mut self, name: &str, value: u8) -> PropertyAccessResult {
        self.scalar(name, value.into())
    }
    fn set_short(&mut self, name: &str, value: i16) -> PropertyAccessResult {
        self.scalar(name, value.into())
    }
    fn set_ushort(&mut self, name: &str, value: u16) -> PropertyAccessResult {
        self.scalar(name, value.into())
    }
    fn set_int(&mut self, name: &str, value: i32) -> PropertyAccessResult {
        self.scalar(name, value.into())
    }
    fn set_uint(&mut self, name: &str, value: u32) -> PropertyAccessResult {
        self.scalar(name, value.into())
    }
    fn set_float(&mut self, name: &str, value: f32) -> PropertyAccessResult {
        self.scalar(name, value.into())
    }
    fn set_double(&mut self, name: &str, value: f64) -> PropertyAccessResult {
        self.scalar(name, value)
    }
    fn set_list_char(&mut self, name: &str, value: Vec<i8>) -> PropertyAccessResult {
        self.list(name, value)
    }
    fn set_list_uchar(&mut self, name: &str, value: Vec<u8>) -> PropertyAccessResult {
        self.list(name, value)
    }
    fn set_list_short(&mut self, name: &str, value: Vec<i16>) -> PropertyAccessResult {
        self.list(name, value)
    }
    fn set_list_ushort(&mut self, name: &str, value: Vec<u16>) -> PropertyAccessResult {
        self.list(name, value)
    }
    fn set_list_int(&mut self, name: &str, value: Vec<i32>) -> PropertyAccessResult {
        self.list(name, value)
    }
    fn set_list_uint(&mut self, name: &str, value: Vec<u32>) -> PropertyAccessResult {
        self.list(name, value)
    }
    fn set_list_float(&mut self, _name: &str, value: Vec<f32>) -> PropertyAccessResult {
        self.skipped_list(value.len())
    }
    fn set_list_double(&mut self, _name: &str, value: Vec<f64>) -> PropertyAccessResult {
        self.skipped_list(value.len())
    }
}

/// One element of the body, for messages: `vertex 12`, `face 7`, `` `edge` 3 ``.
#[derive(Clone, Copy, Debug)]
struct What<'h> {
    element: &'h Element,
    index: usize,
}

impl std::fmt::Display for What<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.element.def.name.as_str() {
            name @ ("vertex" | "face") => write!(f, "{name} {}", self.index),
            name => write!(f, "`{name}` {}", self.index),
        }
    }
}

/// The body after the header, read one element at a time.
#[derive(Debug)]
struct Body<'a> {
    bytes: &'a [u8],
    encoding: Encoding,
    /// The next unread byte.
    at: usize,
    /// The line that starts at `at` (ASCII only).
    line: usize,
    parser: Parser<Record>,
}

/// Where an element's data lies, for placing its faults.
#[derive(Debug)]
enum Raw<'a> {
    /// An ASCII element: its line and the line's text.
    Line { number: usize, text: &'a str },
    /// A binary element: its first byte, and the file from there on.
    Bytes { start: usize, data: &'a [u8] },
}

impl<'a> Body<'a> {
    fn new(bytes: &'a [u8], header: &Header) -> Self {
        Body {
            bytes,
            encoding: header.encoding,
            at: header.body_start,
            line: header.lines + 1,
            parser: Parser::new(),
        }
    }

    /// Reads the next element, which `what` names.
    fn next(&mut self, what: &What<'_>, path: &Path) -> Result<(Record, Raw<'a>), SceneError> {
        if self.encoding == Encoding::Ascii {
            self.next_line(what, path)
        } else {
            self.next_binary(what, path)
        }
    }

    fn next_line(&mut self, what: &What<'_>, path: &Path) -> Result<(Record, Raw<'a>), SceneError> {
        let def = &what.element.def;
        let Some((number, raw)) = self.take_line() else {
            return Err(SceneError::file(
                path,
                format!(
                    "the file ends after line {}, before {what} of the {} the header declares: it is truncated",
                    self.line - 1,
                    def.count
                ),
            ));
        };
        let Ok(text) = std::str::from_utf8(raw) else {
            return Err(SceneError::at_line(
                path,
                number,
                format!("{what}: the line is not text"),
            ));
        };
        let raw = Raw::Line { number, text };
        match self.parser.read_ascii_element(text, def) {
            Ok(record) => match tokens(text).nth(record.values) {
                Some((column, token)) => Err(SceneError::at(
                    path,
                    number,
                    column,
                    format!(
                        "{what}: unexpected `{token}` after the element's {} values",
                        record.values
                    ),
                )),
                None => Ok((record, raw)),
            },
            Err(e) => {
                let (column, message) = diagnose_line(text, def)
                    .unwrap_or_else(|| (1, first_line(&e.to_string()).to_string()));
                Err(SceneError::at(
                    path,
                    number,
                    column,
                    format!("{what}: {message}"),
                ))
            }
        }
    }

    /// The next line of the body and its number, without its line break.
    fn take_line(&mut self) -> Option<(usize, &'a [u8])> {
        let rest = self.bytes.get(self.at..).filter(|r| !r.is_empty())?;
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        self.at += (end + 1).min(rest.len());
        let number = self.line;
        self.line += 1;
        let line = &rest[..end];
        Some((number, line.strip_suffix(b"\r").unwrap_or(line)))
    }

    fn next_binary(
        &mut self,
        what: &What<'_>,
        path: &Path,
    ) -> Result<(Record, Raw<'a>), SceneError> {
        let def = &what.element.def;
        let start = self.at;
        let data = &self.bytes[start..];
        if data.is_empty() {
            return Err(SceneError::at_byte(
                path,
                start as u64,
                format!(
                    "the file ends before {what} of the {} the header declares: it is truncated",
                    def.count
                ),
            ));
        }
        let mut rest = data;
        let decoded = if self.encoding == Encoding::BigEndian {
            self.parser.read_big_endian_element(&mut rest, def)
        } else {
            self.parser.read_little_endian_element(&mut rest, def)
        };
        match decoded {
            Ok(record) => {
                self.at = self.bytes.len() - rest.len();
                Ok((record, Raw::Bytes { start, data }))
            }
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Err(SceneError::at_byte(
                path,
                start as u64,
                format!(
                    "{what} starts here, but the file ends at byte {} before its last value: it is truncated",
                    self.bytes.len()
                ),
            )),
            Err(e) => {
                let big_endian = self.encoding == Encoding::BigEndian;
                let (offset, message) = diagnose_bytes(data, def, big_endian)
                    .unwrap_or_else(|| (0, first_line(&e.to_string()).to_string()));
                Err(SceneError::at_byte(
                    path,
                    (start + offset) as u64,
                    format!("{what}: {message}"),
                ))
            }
        }
    }

    /// Faults data after the last element the header declares.
    fn finish(mut self, path: &Path) -> Result<(), SceneError> {
        if self.encoding == Encoding::Ascii {
            while let Some((number, line)) = self.take_line() {
                if !line.iter().all(u8::is_ascii_whitespace) {
                    return Err(SceneError::at_line(
                        path,
                        number,
                        "data after the last element the header declares",
                    ));
                }
            }
        } else if self.at < self.bytes.len() {
            return Err(SceneError::at_byte(
                path,
                self.at as u64,
                format!(
                    "{} bytes after the last element the header declares",
                    self.bytes.len() - self.at
                ),
            ));
        }
        Ok(())
    }
}

/// What of an element a fault is about.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// The element as a whole.
    Whole,
    /// The scalar property with this index.
    Value(usize),
    /// The length of the list property with this index.
    Length(usize),
    /// An item of the list property with this index.
    Item(usize, usize),
}

impl Raw<'_> {
    /// The fault `message` at the place of `target` in this element.
    #[cold]
    fn fault(
        &self,
        path: &Path,
        def: &ElementDef,
        encoding: Encoding,
        target: Target,
        message: String,
    ) -> SceneError {
        match *self {
            Raw::Line { number, text } => {
                SceneError::at(path, number, column_of(text, def, target), message)
            }
            Raw::Bytes { start, data } => {
                let big_endian = encoding == Encoding::BigEndian;
                let offset = start + offset_of(data, def, big_endian, target);
                SceneError::at_byte(path, offset as u64, message)
            }
        }
    }
}

/// The words of an ASCII line, each with its 1-based column.
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut column = 1;
    text.split([' ', '\t']).filter_map(move |word| {
        let at = column;
        column += word.chars().count() + 1;
        (!word.is_empty()).then_some((at, word))
    })
}

/// The column of `target` in an element's ASCII line, walking the properties as the crate
/// read them (list lengths tell how many words to pass).
fn column_of(text: &str, def: &ElementDef, target: Target) -> usize {
    if let Target::Whole = target {
        return 1;
    }
    let end = text.chars().count() + 1;
    let mut words = tokens(text);
    for (i, p) in def.properties.values().enumerate() {
        let Some((column, word)) = words.next() else {
            return end;
        };
        match (target, &p.data_type) {
            (Target::Value(t) | Target::Length(t), _) if t == i => return column,
            (_, PropertyType::Scalar(_)) => {}
            (_, PropertyType::List(..)) => {
                let length = word.parse::<usize>().unwrap_or(0);
                if let Target::Item(t, k) = target
                    && t == i
                {
                    return words.nth(k).map_or(end, |(c, _)| c);
                }
                for _ in 0..length {
                    words.next();
                }
            }
        }
    }
    1
}

/// The offset of `target` from an element's first byte, walking the properties by their
/// sizes (list lengths read from the data).
fn offset_of(data: &[u8], def: &ElementDef, big_endian: bool, target: Target) -> usize {
    let mut at = 0;
    for (i, p) in def.properties.values().enumerate() {
        match (target, &p.data_type) {
            (Target::Value(t) | Target::Length(t), _) if t == i => return at,
            (_, PropertyType::Scalar(s)) => at += scalar_size(s),
            (_, PropertyType::List(count, item)) => {
                let length = read_integer(data.get(at..).unwrap_or(&[]), count, big_endian);
                at += scalar_size(count);
                if let Target::Item(t, k) = target
                    && t == i
                {
                    return at + k * scalar_size(item);
                }
                at += usize::try_from(length.unwrap_or(0)).unwrap_or(0) * scalar_size(item);
            }
        }
    }
    0
}

/// The integer of type `t` at the start of `data`, if it holds one.
fn read_integer(data: &[u8], t: &ScalarType, big_endian: bool) -> Option<i64> {
    let size = scalar_size(t);
    let bytes = data.get(..size)?;
    let mut word = [0u8; 8];
    if big_endian {
        word[8 - size..].copy_from_slice(bytes);
        word.reverse();
    } else {
        word[..size].copy_from_slice(bytes);
    }
    let unsigned = u64::from_le_bytes(word);
    let shift = 64 - 8 * size as u32;
    Some(match t {
        ScalarType::Char | ScalarType::Short | ScalarType::Int => {
            ((unsigned << shift) as i64) >> shift
        }
        _ => unsigned as i64,
    })
}

/// Why the crate could not decode an element's binary data: the only faults other than the
/// end of the file are negative list lengths. Returns the offset of the length and what is
/// wrong.
#[cold]
fn diagnose_bytes(data: &[u8], def: &ElementDef, big_endian: bool) -> Option<(usize, String)> {
    let mut at = 0;
    for p in def.properties.values() {
        match &p.data_type {
            PropertyType::Scalar(s) => at += scalar_size(s),
            PropertyType::List(count, item) => {
                let length = read_integer(data.get(at..)?, count, big_endian)?;
                if length < 0 {
                    return Some((at, format!("`{}` has a negative length ({length})", p.name)));
                }
                at += scalar_size(count) + usize::try_from(length).ok()? * scalar_size(item);
            }
        }
    }
    None
}

/// Why the crate could not decode an element's ASCII line: the first word that is not a
/// number of its property's type, or the property the line ends before. Returns the column
/// and what is wrong.
#[cold]
fn diagnose_line(text: &str, def: &ElementDef) -> Option<(usize, String)> {
    let end = text.chars().count() + 1;
    let mut words = tokens(text);
    for p in def.properties.values() {
        let name = &p.name;
        match &p.data_type {
            PropertyType::Scalar(t) => {
                let Some((column, word)) = words.next() else {
                    return Some((end, format!("the line ends before `{name}`")));
                };
                if let Some(why) = not_a(word, t, name) {
                    return Some((column, why));
                }
            }
            PropertyType::List(_, item) => {
                let Some((column, word)) = words.next() else {
                    return Some((end, format!("the line ends before the list `{name}`")));
                };
                let Ok(length) = word.parse::<usize>() else {
                    return Some((
                        column,
                        format!(
                            "the length of `{name}` is `{word}`, not a whole number (0 or more)"
                        ),
                    ));
                };
                for k in 0..length {
                    let Some((column, word)) = words.next() else {
                        return Some((
                            end,
                            format!("the line ends after {k} of the {length} items of `{name}`"),
                        ));
                    };
                    if let Some(why) = not_a(word, item, name) {
                        return Some((column, why));
                    }
                }
            }
        }
    }
    None
}

/// Why `word` is not a value of type `t` for the property `name`, if it is not one.
fn not_a(word: &str, t: &ScalarType, name: &str) -> Option<String> {
    let range = |min: i64, max: u64| {
        Some(format!(
            "`{name}` is `{word}`, but its type `{}` holds whole numbers from {min} to {max}",
            scalar_name(t)
        ))
    };
    if !is_ply_number(word) {
        return match word.parse::<f64>() {
            Ok(x) if !x.is_finite() => Some(format!(
                "`{name}` is {}; {} must be finite",
                if x.is_nan() { "NaN" } else { "infinite" },
                rule(name)
            )),
            _ => Some(format!("`{name}` is `{word}`, not a number")),
        };
    }
    let fits = match t {
        ScalarType::Char => word.parse::<i8>().is_ok(),
        ScalarType::UChar => word.parse::<u8>().is_ok(),
        ScalarType::Short => word.parse::<i16>().is_ok(),
        ScalarType::UShort => word.parse::<u16>().is_ok(),
        ScalarType::Int => word.parse::<i32>().is_ok(),
        ScalarType::UInt => word.parse::<u32>().is_ok(),
        ScalarType::Float | ScalarType::Double => true,
    };
    if fits {
        return None;
    }
    match t {
        ScalarType::Char => range(i8::MIN.into(), i8::MAX as u64),
        ScalarType::UChar => range(0, u8::MAX.into()),
        ScalarType::Short => range(i16::MIN.into(), i16::MAX as u64),
        ScalarType::UShort => range(0, u16::MAX.into()),
        ScalarType::Int => range(i32::MIN.into(), i32::MAX as u64),
        _ => range(0, u32::MAX.into()),
    }
}

/// Whether `word` is a number as the PLY ASCII grammar (the crate's) writes one:
/// `[+-]digits[.digits][(e|E)[+-]digits]`.
fn is_ply_number(word: &str) -> bool {
    fn digits(s: &str) -> (usize, &str) {
        let n = s.bytes().take_while(u8::is_ascii_digit).count();
        (n, &s[n..])
    }
    let s = word.strip_prefix(['+', '-']).unwrap_or(word);
    let (n, mut s) = digits(s);
    if n == 0 {
        return false;
    }
    if let Some(fraction) = s.strip_prefix('.') {
        let (n, rest) = digits(fraction);
        if n == 0 {
            return false;
        }
        s = rest;
    }
    if let Some(exponent) = s.strip_prefix(['e', 'E']) {
        let (n, rest) = digits(exponent.strip_prefix(['+', '-']).unwrap_or(exponent));
        if n == 0 {
            return false;
        }
        s = rest;
    }
    s.is_empty()
}

/// What must be finite, in a message about the property `name`.
fn rule(name: &str) -> &'static str {
    match name {
        "x" | "y" | "z" => "coordinates",
        "nx" | "ny" | "nz" => "normals",
        _ => "values",
    }
}

/// The first line of a crate error's text (its later lines repeat the input).
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// The mesh as its elements arrive.
#[derive(Debug)]
struct Builder {
    vertices: usize,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    faces: Vec<[u32; 3]>,
}

impl Builder {
    /// Reserves room for the declared vertices and faces only as far as `body_bytes` could
    /// hold them, so that a header declaring billions of entries over a short body reserves
    /// no more than the body could fill.
    fn new(header: &Header, layout: &Layout, body_bytes: usize) -> Self {
        let backed = |e: usize| {
            let element = &header.elements[e];
            element
                .def
                .count
                .min(body_bytes / min_bytes(element, header.encoding))
        };
        let vertices = header.elements[layout.vertex].def.count;
        Builder {
            vertices,
            positions: Vec::with_capacity(backed(layout.vertex)),
            normals: Vec::with_capacity(if layout.normals.is_some() {
                backed(layout.vertex)
            } else {
                0
            }),
            faces: Vec::with_capacity(backed(layout.face)),
        }
    }

    fn vertex(
        &mut self,
        record: &Record,
        layout: &Layout,
        fault: impl Fn(Target, String) -> SceneError,
    ) -> Result<(), SceneError> {
        let finite = |slot: usize, property: usize| -> Result<f32, SceneError> {
            let value = record.scalars[slot];
            let narrow = value as f32;
            if narrow.is_finite() {
                return Ok(narrow);
            }
            let name = KEPT_SCALARS[slot];
            let why = if value.is_nan() {
                "is NaN".to_string()
            } else if value.is_infinite() {
                "is infinite".to_string()
            } else {
                format!("is {value:e}, beyond the range of 32-bit floats")
            };
            Err(fault(
                Target::Value(property),
                format!("`{name}` {why}; {} must be finite", rule(name)),
            ))
        };
        let [x, y, z] = layout.coordinates;
        self.positions
            .push(Vec3::new(finite(0, x)?, finite(1, y)?, finite(2, z)?));
        if let Some([nx, ny, nz]) = layout.normals {
            let n = Vec3::new(finite(3, nx)?, finite(4, ny)?, finite(5, nz)?);
            self.normals.push(n.normalize_or_zero());
        }
        Ok(())
    }

    fn face(
        &mut self,
        record: &Record,
        layout: &Layout,
        max_triangles: usize,
        fault: impl Fn(Target, String) -> SceneError,
    ) -> Result<(), SceneError> {
        let list = layout.corners;
        let corners = &record.corners;
        if corners.len() < 3 {
            return Err(fault(
                Target::Length(list),
                format!("a face needs at least 3 corners, found {}", corners.len()),
            ));
        }
        for (k, &index) in corners.iter().enumerate() {
            if index < 0 || index >= self.vertices as i64 {
                let numbered = match self.vertices {
                    0 => "there are no vertices".to_string(),
                    n => format!("the vertices are numbered 0 to {}", n - 1),
                };
                return Err(fault(
                    Target::Item(list, k),
                    format!("corner {k} refers to vertex {index}, but {numbered}"),
                ));
            }
        }
        if self.faces.len() + corners.len() - 2 > max_triangles {
            return Err(fault(
                Target::Whole,
                format!(
                    "its triangles take the mesh past the {max_triangles} the scene has room for"
                ),
            ));
        }
        // Every index was checked against the vertex count, which is at most 2^32.
        let first = corners[0] as u32;
        self.faces.extend(
            corners
                .windows(2)
                .skip(1)
                .map(|w| [first, w[0] as u32, w[1] as u32]),
        );
        Ok(())
    }

    fn finish(self) -> Mesh {
        Mesh {
            positions: self.positions,
            normals: self.normals,
            faces: self.faces,
        }
    }
}

/// The fewest bytes an entry of `element` can take: each property at least one digit and a
/// separator in ASCII, its scalars and list lengths in binary (lists may be empty).
fn min_bytes(element: &Element, encoding: Encoding) -> usize {
    let properties = element.def.properties.values();
    let bytes = if encoding == Encoding::Ascii {
        2 * properties.len()
    } else {
        properties
            .map(|p| match &p.data_type {
                PropertyType::Scalar(t) | PropertyType::List(t, _) => scalar_size(t),
            })
            .sum()
    };
    bytes.max(1)
}
