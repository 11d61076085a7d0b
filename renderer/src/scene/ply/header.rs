//! The PLY header: the lines from `ply` to `end_header` that say how the body is encoded and
//! which elements, with which properties, it holds.
//!
//! The header is read here rather than by `ply-rs-bw`, whose header errors are several lines
//! of parser diagnostics without a column; here every fault names its line and the column of
//! the word at fault. The result is the crate's own [`ElementDef`]s, so that the crate decodes
//! the body exactly as this header describes it.

use std::path::Path;

use ply_rs_bw::ply::{ElementDef, PropertyDef, PropertyType, ScalarType};

use crate::scene::SceneError;

/// How the body after `end_header` is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Encoding {
    /// One element per line, values as decimal text.
    Ascii,
    /// Packed values, least significant byte first.
    LittleEndian,
    /// Packed values, most significant byte first.
    BigEndian,
}

/// One `element` of the header, with the lines that declared it (for faults that are the
/// declaration's rather than the data's).
#[derive(Debug)]
pub(super) struct Element {
    /// Name, count and properties in file order.
    pub(super) def: ElementDef,
    /// The 1-based line of its `element` statement.
    pub(super) line: usize,
    /// The 1-based line of each of its `property` statements, in the order of `def.properties`.
    pub(super) property_lines: Vec<usize>,
}

impl Element {
    /// The property called `name`, with its index among the element's properties.
    pub(super) fn property(&self, name: &str) -> Option<(usize, &PropertyType)> {
        self.def
            .properties
            .get_full(name)
            .map(|(i, _, p)| (i, &p.data_type))
    }
}

/// A parsed header.
#[derive(Debug)]
pub(super) struct Header {
    pub(super) encoding: Encoding,
    /// The elements in the order their data follows in the body.
    pub(super) elements: Vec<Element>,
    /// Lines in the header, `ply` and `end_header` included: the body's first line (in an
    /// ASCII file) is the next one.
    pub(super) lines: usize,
    /// Where the body starts: the byte after the newline that ends `end_header`.
    pub(super) body_start: usize,
}

/// Reads the header at the start of `bytes`; every fault is reported at its line and column.
pub(super) fn read(bytes: &[u8], path: &Path) -> Result<Header, SceneError> {
    let mut lines = HeaderLines {
        bytes,
        path,
        offset: 0,
        number: 0,
    };
    lines.magic()?;
    let mut declared = Declared::default();
    loop {
        let line = lines.next()?;
        let Some(&(_, keyword)) = line.words.first() else {
            continue;
        };
        match keyword {
            "comment" | "obj_info" => {}
            "format" => declared.format(&line)?,
            "element" => declared.element(&line)?,
            "property" => declared.property(&line)?,
            "end_header" => return declared.end(&line, lines.offset),
            other => return Err(line.fault(0, format!("unknown header keyword `{other}`"))),
        }
    }
}

/// The header's lines, one at a time, each with its number.
struct HeaderLines<'a> {
    bytes: &'a [u8],
    path: &'a Path,
    /// Where the next line starts.
    offset: usize,
    /// The 1-based number of the line last read.
    number: usize,
}

impl<'a> HeaderLines<'a> {
    /// The next line, split into words; a fault where the bytes end before `end_header` or
    /// the line is not text.
    fn next(&mut self) -> Result<Line<'a>, SceneError> {
        let (bytes, path) = (self.bytes, self.path);
        if self.offset >= bytes.len() {
            return Err(SceneError::file(
                path,
                "the header ends without an `end_header` line: the file is truncated or not PLY",
            ));
        }
        let rest = &bytes[self.offset..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let raw = &rest[..end];
        self.number += 1;
        self.offset += (end + 1).min(rest.len());
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(text) = std::str::from_utf8(raw) else {
            return Err(SceneError::at_line(
                path,
                self.number,
                "the header is not text",
            ));
        };
        Ok(Line::split(path, self.number, text))
    }

    /// The first line, which must be `ply` alone.
    fn magic(&mut self) -> Result<(), SceneError> {
        let line = self.next()?;
        if line.words.len() != 1 || line.words[0].1 != "ply" {
            return Err(SceneError::at_line(
                self.path,
                1,
                "not a PLY file: the first line must be `ply`",
            ));
        }
        Ok(())
    }
}

/// What the header has declared so far.
#[derive(Default)]
struct Declared {
    encoding: Option<Encoding>,
    elements: Vec<Element>,
}

impl Declared {
    /// `format …`, once.
    fn format(&mut self, line: &Line<'_>) -> Result<(), SceneError> {
        if self.encoding.is_some() {
            return Err(line.fault(0, "a second `format` line"));
        }
        self.encoding = Some(format(line)?);
        Ok(())
    }

    /// `element …`, of a name not declared before.
    fn element(&mut self, line: &Line<'_>) -> Result<(), SceneError> {
        let element = element(line)?;
        if self.elements.iter().any(|e| e.def.name == element.def.name) {
            return Err(line.fault(1, format!("a second element named `{}`", element.def.name)));
        }
        self.elements.push(element);
        Ok(())
    }

    /// `property …`, of the last element declared, of a name it does not have yet.
    fn property(&mut self, line: &Line<'_>) -> Result<(), SceneError> {
        let Some(element) = self.elements.last_mut() else {
            return Err(line.fault(0, "`property` before any `element`"));
        };
        let property = property(line)?;
        if element.def.properties.contains_key(&property.name) {
            return Err(line.fault(
                line.words.len() - 1,
                format!(
                    "element `{}` already has a property `{}`",
                    element.def.name, property.name
                ),
            ));
        }
        element
            .def
            .properties
            .insert(property.name.clone(), property);
        element.property_lines.push(line.number);
        Ok(())
    }

    /// `end_header`, the last line, at which the body starts at `body_start`: the header,
    /// once it is known to have a `format` line and no element with entries but no
    /// properties.
    fn end(self, line: &Line<'_>, body_start: usize) -> Result<Header, SceneError> {
        line.no_more_words(1, "`end_header`")?;
        let Some(encoding) = self.encoding else {
            return Err(SceneError::at_line(
                line.path,
                line.number,
                "the header has no `format` line",
            ));
        };
        if let Some(e) = self
            .elements
            .iter()
            .find(|e| e.def.count > 0 && e.def.properties.is_empty())
        {
            return Err(SceneError::at_line(
                line.path,
                e.line,
                format!(
                    "element `{}` has {} entries but no properties",
                    e.def.name, e.def.count
                ),
            ));
        }
        Ok(Header {
            encoding,
            elements: self.elements,
            lines: line.number,
            body_start,
        })
    }
}

/// A header line split into words, each with its 1-based column.
struct Line<'a> {
    path: &'a Path,
    number: usize,
    words: Vec<(usize, &'a str)>,
    /// The column just past the last character, for faults about a missing word.
    end: usize,
}

impl<'a> Line<'a> {
    fn split(path: &'a Path, number: usize, text: &'a str) -> Self {
        let mut words = Vec::new();
        let mut column = 0;
        let mut start = None;
        for (i, c) in text.char_indices() {
            column += 1;
            let blank = c == ' ' || c == '\t';
            match (blank, start) {
                (false, None) => start = Some((column, i)),
                (true, Some((col, from))) => {
                    words.push((col, &text[from..i]));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some((col, from)) = start {
            words.push((col, &text[from..]));
        }
        Line {
            path,
            number,
            words,
            end: column + 1,
        }
    }

    /// A fault at the column of word `index`, or just past the line's end if it has no such
    /// word.
    fn fault(&self, index: usize, message: impl Into<String>) -> SceneError {
        let column = self.words.get(index).map_or(self.end, |&(c, _)| c);
        SceneError::at(self.path, self.number, column, message)
    }

    /// Word `index`, or a fault saying that `what` is missing.
    fn word(&self, index: usize, what: &str) -> Result<&'a str, SceneError> {
        self.words
            .get(index)
            .map(|&(_, w)| w)
            .ok_or_else(|| self.fault(index, format!("missing {what}")))
    }

    /// Faults the first word from `index` on, which `statement` does not take.
    fn no_more_words(&self, index: usize, statement: &str) -> Result<(), SceneError> {
        match self.words.get(index) {
            Some(&(_, w)) => Err(self.fault(index, format!("unexpected `{w}` after {statement}"))),
            None => Ok(()),
        }
    }
}

/// `format ENCODING 1.0`
fn format(line: &Line<'_>) -> Result<Encoding, SceneError> {
    let encoding = match line.word(1, "the encoding after `format`")? {
        "ascii" => Encoding::Ascii,
        "binary_little_endian" => Encoding::LittleEndian,
        "binary_big_endian" => Encoding::BigEndian,
        other => {
            return Err(line.fault(
                1,
                format!(
                    "unknown format `{other}`; expected `ascii`, `binary_little_endian` or `binary_big_endian`"
                ),
            ));
        }
    };
    let version = line.word(2, "the version after the format (`1.0`)")?;
    if version != "1.0" {
        return Err(line.fault(
            2,
            format!("PLY version `{version}` is not supported; raylb reads version 1.0"),
        ));
    }
    line.no_more_words(3, "the version")?;
    Ok(encoding)
}

/// `element NAME COUNT`
fn element(line: &Line<'_>) -> Result<Element, SceneError> {
    let name = line.word(1, "the element's name")?;
    let count = line.word(2, "the element's count")?;
    let Ok(count) = count.parse::<usize>() else {
        return Err(line.fault(
            2,
            format!("element count `{count}` is not a whole number (0 or more)"),
        ));
    };
    line.no_more_words(3, "the element's count")?;
    let mut def = ElementDef::new(name.to_string());
    def.count = count;
    Ok(Element {
        def,
        line: line.number,
        property_lines: Vec::new(),
    })
}

/// `property TYPE NAME` or `property list COUNT_TYPE ITEM_TYPE NAME`
fn property(line: &Line<'_>) -> Result<PropertyDef, SceneError> {
    let scalar = |index: usize| -> Result<ScalarType, SceneError> {
        let word = line.word(index, "the property's type")?;
        scalar_type(word)
            .ok_or_else(|| line.fault(index, format!("unknown property type `{word}`")))
    };
    let (data_type, name_at) = if line.word(1, "the property's type")? == "list" {
        let count = scalar(2)?;
        if matches!(count, ScalarType::Float | ScalarType::Double) {
            return Err(line.fault(
                2,
                format!(
                    "a list's length must have an integer type, not `{}`",
                    line.words[2].1
                ),
            ));
        }
        (PropertyType::List(count, scalar(3)?), 4)
    } else {
        (PropertyType::Scalar(scalar(1)?), 2)
    };
    let name = line.word(name_at, "the property's name")?;
    line.no_more_words(name_at + 1, "the property's name")?;
    Ok(PropertyDef::new(name.to_string(), data_type))
}

/// The scalar types of the PLY format, by their original names and the sized names that
/// later writers use.
fn scalar_type(word: &str) -> Option<ScalarType> {
    Some(match word {
        "char" | "int8" => ScalarType::Char,
        "uchar" | "uint8" => ScalarType::UChar,
        "short" | "int16" => ScalarType::Short,
        "ushort" | "uint16" => ScalarType::UShort,
        "int" | "int32" => ScalarType::Int,
        "uint" | "uint32" => ScalarType::UInt,
        "float" | "float32" => ScalarType::Float,
        "double" | "float64" => ScalarType::Double,
        _ => return None,
    })
}

/// The size of a scalar in binary data, in bytes.
pub(super) fn scalar_size(t: &ScalarType) -> usize {
    match t {
        ScalarType::Char | ScalarType::UChar => 1,
        ScalarType::Short | ScalarType::UShort => 2,
        ScalarType::Int | ScalarType::UInt | ScalarType::Float => 4,
        ScalarType::Double => 8,
    }
}

/// The name the header gives a scalar type, for messages.
pub(super) fn scalar_name(t: &ScalarType) -> &'static str {
    match t {
        ScalarType::Char => "char",
        ScalarType::UChar => "uchar",
        ScalarType::Short => "short",
        ScalarType::UShort => "ushort",
        ScalarType::Int => "int",
        ScalarType::UInt => "uint",
        ScalarType::Float => "float",
        ScalarType::Double => "double",
    }
}
