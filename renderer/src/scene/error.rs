//! Errors in scene input, located by file, line and key (or byte, in binary files).

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Something wrong with a scene config, a mesh or MTL file, or the command-line settings that
/// shape a scene, with the place it was found. Displays on one line:
/// `FILE:LINE:COLUMN: MESSAGE`, `FILE: byte OFFSET: MESSAGE` in binary data, or
/// `FILE: MESSAGE` when no place applies (`MESSAGE` alone for an empty path: a key given as
/// `""`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SceneError {
    /// The file at fault.
    pub path: PathBuf,
    /// Where in the file, when the fault has a place there.
    pub position: Option<Position>,
    /// What is wrong, naming the key where there is one.
    pub message: String,
}

/// A place in a file: a line and column of text, or a byte of binary data (a binary PLY
/// body has no lines to count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// 1-based line and column (in characters).
    Text {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// 0-based offset from the start of the file, as hex dumps count.
    Byte(u64),
}

impl SceneError {
    /// A fault of the file as a whole (missing, unreadable, empty scene).
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            position: None,
            message: message.into(),
        }
    }

    /// A fault at a 1-based line of the file.
    pub fn at_line(path: &Path, line: usize, message: impl Into<String>) -> Self {
        Self::at(path, line, 1, message)
    }

    /// A fault at a 1-based line and column (in characters) of the file.
    pub fn at(path: &Path, line: usize, column: usize, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            position: Some(Position::Text { line, column }),
            message: message.into(),
        }
    }

    /// A fault at a 0-based byte offset of binary data in the file.
    pub fn at_byte(path: &Path, offset: u64, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            position: Some(Position::Byte(offset)),
            message: message.into(),
        }
    }

    /// A fault at a byte range of the file's `source`. Where the range is a value, the message
    /// is prefixed with the key the value belongs to, so that every message names its key.
    pub fn at_span(path: &Path, source: &str, span: Range<usize>, message: &str) -> Self {
        let start = span.start.min(source.len());
        let before = &source[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        let message = match key_before(&before[line_start..]) {
            Some(key) if !message.contains(&format!("`{key}`")) => format!("`{key}`: {message}"),
            _ => message.to_string(),
        };
        Self {
            path: path.to_path_buf(),
            position: Some(Position::Text { line, column }),
            message,
        }
    }
}

/// The key whose value starts at the end of `line_prefix`: the name before the last `=`. A
/// quoted key may hold any letters (`"gölden"`), and what comes before the name may be any
/// character (a byte-order mark), so the name starts after the last character that cannot be
/// part of it, however many bytes that character takes.
fn key_before(line_prefix: &str) -> Option<String> {
    let eq = line_prefix.rfind('=')?;
    let name = line_prefix[..eq].trim_end();
    let start = name
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '"' || c == '.'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let key = name[start..].trim_matches('"');
    (!key.is_empty()).then(|| key.to_string())
}

/// `path` as a message shows it: control characters (a NUL, a newline, an escape) written as
/// Rust escapes them (`\0`, `\n`, `\u{1b}`), so that the message stays one line of text that
/// a terminal prints as it is.
fn shown(path: &Path) -> String {
    path.display()
        .to_string()
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = shown(&self.path);
        let message = &self.message;
        match self.position {
            Some(Position::Text { line, column }) => write!(f, "{path}:{line}:{column}: {message}"),
            Some(Position::Byte(offset)) => write!(f, "{path}: byte {offset}: {message}"),
            // A path that is empty (a key given as "") has no name to show before the fault.
            None if path.is_empty() => f.write_str(message),
            None => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for SceneError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_key_of_a_value() {
        let src = "[image]\nwidth = 0\n";
        let e = SceneError::at_span(Path::new("s.toml"), src, 16..17, "must be at least 1");
        assert_eq!(e.to_string(), "s.toml:2:9: `width`: must be at least 1");
    }

    #[test]
    fn keys_inside_inline_tables() {
        let src = "sphere = { center = [1, nan, 2] }";
        let e = SceneError::at_span(Path::new("s.toml"), src, 20..31, "must be finite");
        assert_eq!(e.to_string(), "s.toml:1:21: `center`: must be finite");
    }

    #[test]
    fn control_characters_of_a_path_are_escaped() {
        let e = SceneError::at_line(Path::new("meshes/a\0b\n\u{1b}[31m.obj"), 2, "no faces");
        assert_eq!(
            e.to_string(),
            "meshes/a\\0b\\n\\u{1b}[31m.obj:2:1: no faces"
        );
        let e = SceneError::file(Path::new("gölden.obj"), "cannot read");
        assert_eq!(e.to_string(), "gölden.obj: cannot read");
    }

    #[test]
    fn places_binary_faults_by_byte() {
        let e = SceneError::at_byte(Path::new("bunny.ply"), 10243, "vertex 12: `y` is NaN");
        assert_eq!(
            e.to_string(),
            "bunny.ply: byte 10243: vertex 12: `y` is NaN"
        );
        let e = SceneError::at(
            Path::new("bunny.ply"),
            3,
            10,
            "unknown property type `flaot`",
        );
        assert_eq!(
            e.to_string(),
            "bunny.ply:3:10: unknown property type `flaot`"
        );
    }

    #[test]
    fn names_a_quoted_key_of_any_letters() {
        let src = "[materials]\n\"gölden\" = 5\n";
        let e = SceneError::at_span(Path::new("s.toml"), src, 24..25, "expected a table");
        assert_eq!(e.to_string(), "s.toml:2:12: `gölden`: expected a table");
    }

    #[test]
    fn a_key_after_a_byte_order_mark_is_an_error_not_a_panic() {
        // Found by `fuzz/` (target `scene`): a byte-order mark, a key and no value.
        let src = std::str::from_utf8(b"\xef\xbb\xbfi=").unwrap();
        let e = crate::scene::Scene::from_toml(Path::new("s.toml"), src, Default::default())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.toml:1:4: `i`: string values must be quoted, expected literal string"
        );
    }

    #[test]
    fn does_not_repeat_a_key_the_message_names() {
        let src = "[image]\ncolour = 1\n";
        let e = SceneError::at_span(Path::new("s.toml"), src, 8..14, "unknown field `colour`");
        assert_eq!(e.to_string(), "s.toml:2:1: unknown field `colour`");
    }
}
