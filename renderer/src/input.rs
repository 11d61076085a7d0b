//! Reading input files: regular files only, and only up to a size bound.
//!
//! A scene or mesh path that names `/dev/zero` would be read until memory runs out, and a FIFO
//! would block the open forever. Inputs are therefore looked at (without opening them) before
//! they are read: anything but a regular file is refused, and so is a file larger than its
//! kind may be. The file is checked again once open, in case it was swapped meanwhile, and
//! read no further than the bound.

use std::fs::{self, File, Metadata};
use std::io::{self, Read};
use std::path::Path;

use crate::file_errors::{file_kind, io_reason};

/// The largest scene file read: far above any hand-written scene (the shipped ones are under
/// 8 KiB), far below what would trouble memory.
pub const MAX_SCENE_BYTES: u64 = 16 << 20;

/// The largest MTL file read: material libraries are small text.
pub const MAX_MTL_BYTES: u64 = 16 << 20;

/// The largest mesh file read. An OBJ of the largest scene raylb renders
/// ([`MAX_SCENE_TRIANGLES`](crate::scene::MAX_SCENE_TRIANGLES), 20 million triangles over 10
/// million vertices) takes about 1 GiB of text; twice that leaves room for normals and
/// texture coordinates.
pub const MAX_MESH_BYTES: u64 = 2 << 30;

/// Opens `path` for reading if it is a regular file of at most `max_bytes`. The error says
/// what is wrong, without the path (the caller names it).
///
/// ```
/// use renderer::input::{MAX_SCENE_BYTES, open_regular_file};
/// use std::path::Path;
///
/// let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// assert!(open_regular_file(Path::new(scene), MAX_SCENE_BYTES).is_ok());
/// // A directory is refused without being opened.
/// let e = open_regular_file(Path::new(env!("CARGO_MANIFEST_DIR")), MAX_SCENE_BYTES);
/// assert_eq!(e.unwrap_err(), "not a regular file (a directory)");
/// ```
pub fn open_regular_file(path: &Path, max_bytes: u64) -> Result<File, String> {
    let reason = |e: io::Error| format!("cannot read: {}", io_reason(&e));
    // `metadata` follows links and opens nothing, so a FIFO is found before it can block.
    check(&fs::metadata(path).map_err(reason)?, max_bytes)?;
    let file = File::open(path).map_err(reason)?;
    // The path may have been replaced between the two looks; the open file is what counts.
    check(&file.metadata().map_err(reason)?, max_bytes)?;
    Ok(file)
}

/// Reads the whole of `path`, which must be a regular file of at most `max_bytes`. The error
/// says what is wrong, without the path (the caller names it).
///
/// ```
/// use renderer::input::read_regular_file;
///
/// let path = std::env::temp_dir().join(format!("raylb-doc-input-{}.txt", std::process::id()));
/// std::fs::write(&path, b"12345")?;
/// assert_eq!(read_regular_file(&path, 5)?, b"12345");
/// assert!(read_regular_file(&path, 4).unwrap_err().starts_with("too large: 5 bytes"));
/// std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_regular_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    let reason = |e: io::Error| format!("cannot read: {}", io_reason(&e));
    let file = open_regular_file(path, max_bytes)?;
    let length = file.metadata().map_err(reason)?.len();
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(length as usize)
        .map_err(|_| format!("cannot read: no memory for its {length} bytes"))?;
    // One byte more than allowed: a file that grew past the bound since `metadata` is caught.
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(reason)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64, max_bytes));
    }
    Ok(bytes)
}

/// Refuses anything but a regular file of at most `max_bytes`.
fn check(metadata: &Metadata, max_bytes: u64) -> Result<(), String> {
    if !metadata.is_file() {
        return Err(format!("not a regular file ({})", file_kind(metadata)));
    }
    if metadata.len() > max_bytes {
        return Err(too_large(metadata.len(), max_bytes));
    }
    Ok(())
}

fn too_large(bytes: u64, max_bytes: u64) -> String {
    format!("too large: {bytes} bytes, where files of this kind may have at most {max_bytes}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_regular_files_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        fs::write(&path, b"12345").unwrap();
        assert_eq!(read_regular_file(&path, 5).unwrap(), b"12345");
        let e = read_regular_file(&path, 4).unwrap_err();
        assert!(e.starts_with("too large: 5 bytes"), "{e}");
    }

    #[test]
    fn refuses_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read_regular_file(dir.path(), 100).unwrap_err(),
            "not a regular file (a directory)"
        );
        if Path::new("/dev/zero").exists() {
            assert_eq!(
                read_regular_file(Path::new("/dev/zero"), 100).unwrap_err(),
                "not a regular file (a character device)"
            );
        }
        let e = read_regular_file(&dir.path().join("missing"), 100).unwrap_err();
        assert!(e.starts_with("cannot read: no such file"), "{e}");
    }
}
