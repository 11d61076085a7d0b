//! Files written and read: PNG images and JSON reports, written so that a failure never
//! leaves a half-written file or clobbers an existing one.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageEncoder};

/// Writes `path` by writing a temporary file beside it and renaming it over `path` once
/// complete. On any error the temporary file is removed and `path` is left as it was.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let temporary = temporary_name(path);
    let result = File::create(&temporary).and_then(|file| {
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()
    });
    let result = result.and_then(|()| fs::rename(&temporary, path));
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// `dir/.name.tmp-PID`: hidden, in the same directory (so the rename is atomic), and
/// distinct between processes.
fn temporary_name(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or("output".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Writes an 8-bit RGB image (row-major triples) as PNG.
pub fn write_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> io::Result<()> {
    write_atomically(path, |out| {
        PngEncoder::new(out)
            .write_image(rgb, width, height, ExtendedColorType::Rgb8)
            .map_err(io::Error::other)
    })
}

/// Writes `text` to `path`.
pub fn write_text(path: &Path, text: &str) -> io::Result<()> {
    write_atomically(path, |out| out.write_all(text.as_bytes()))
}

/// A decoded image as 8-bit RGBA, for comparing.
#[derive(Debug, PartialEq, Eq)]
pub struct Rgba8 {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major RGBA quadruples.
    pub pixels: Vec<u8>,
}

/// Reads an image file (PNG) as 8-bit RGBA.
pub fn read_image(path: &Path) -> Result<Rgba8, String> {
    let image = image::open(path).map_err(|e| match e {
        image::ImageError::IoError(io) => crate::scene::io_reason(&io),
        other => format!("not a readable PNG image: {other}"),
    })?;
    let rgba = image.to_rgba8();
    Ok(Rgba8 {
        width: rgba.width(),
        height: rgba.height(),
        pixels: rgba.into_raw(),
    })
}
