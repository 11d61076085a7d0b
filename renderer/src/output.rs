//! Files written: images (PNG, OpenEXR, PFM) and JSON reports, written so that a failure never
//! leaves a half-written file or clobbers an existing one.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageEncoder};

pub use crate::image_io::{ExrPrecision, ImageFormat};

use crate::film::Film;
use crate::image_io::{encode_exr, encode_pfm};

/// Output files written to temporary names beside their targets and put in place together by
/// [`commit`](Self::commit), so that a run that fails part-way leaves every target as it was.
/// Temporary files not committed are removed when this is dropped.
#[derive(Debug, Default)]
pub struct StagedFiles {
    /// `(temporary, target)` pairs written and not yet renamed.
    pending: Vec<(PathBuf, PathBuf)>,
}

impl StagedFiles {
    /// Nothing staged yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the future contents of `path` to a temporary file beside it.
    pub fn write(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
    ) -> io::Result<()> {
        let temporary = temporary_name(path);
        let result = File::create(&temporary).and_then(|file| {
            let mut out = BufWriter::new(file);
            write(&mut out)?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()
        });
        match result {
            Ok(()) => {
                self.pending.push((temporary, path.to_path_buf()));
                Ok(())
            }
            Err(e) => {
                let _ = fs::remove_file(&temporary);
                Err(e)
            }
        }
    }

    /// Stages an 8-bit RGB image (row-major triples) as PNG.
    pub fn png(&mut self, path: &Path, width: u32, height: u32, rgb: &[u8]) -> io::Result<()> {
        self.write(path, |out| {
            PngEncoder::new(out)
                .write_image(rgb, width, height, ExtendedColorType::Rgb8)
                .map_err(io::Error::other)
        })
    }

    /// Stages linear RGB (row-major float triples from the top row) as OpenEXR: channels R, G
    /// and B at `precision`, the same bytes for the same pixels every time.
    pub fn exr(
        &mut self,
        path: &Path,
        width: u32,
        height: u32,
        linear_rgb: &[f32],
        precision: ExrPrecision,
    ) -> io::Result<()> {
        self.write(path, |out| {
            encode_exr(out, width, height, linear_rgb, precision)
        })
    }

    /// Stages linear RGB (row-major float triples from the top row) as a Portable Float Map:
    /// `PF`, little-endian, bottom row first, as the format has it.
    pub fn pfm(
        &mut self,
        path: &Path,
        width: u32,
        height: u32,
        linear_rgb: &[f32],
    ) -> io::Result<()> {
        self.write(path, |out| encode_pfm(out, width, height, linear_rgb))
    }

    /// Stages the image in `film` in the format `path`'s extension names: 8-bit sRGB PNG, or
    /// linear float OpenEXR (at `precision`) or PFM, all resolved from the same fixed-point
    /// sums.
    pub fn frame(&mut self, path: &Path, film: &Film, precision: ExrPrecision) -> io::Result<()> {
        let (w, h) = (film.width(), film.height());
        match ImageFormat::of(path).map_err(io::Error::other)? {
            ImageFormat::Png => self.png(path, w, h, &film.resolve()),
            ImageFormat::Exr => self.exr(path, w, h, &film.linear_rgb(), precision),
            ImageFormat::Pfm => self.pfm(path, w, h, &film.linear_rgb()),
        }
    }

    /// Stages `text`.
    pub fn text(&mut self, path: &Path, text: &str) -> io::Result<()> {
        self.write(path, |out| out.write_all(text.as_bytes()))
    }

    /// Renames every staged file over its target.
    pub fn commit(mut self) -> io::Result<()> {
        for (temporary, target) in std::mem::take(&mut self.pending) {
            fs::rename(&temporary, &target)?;
        }
        Ok(())
    }
}

impl Drop for StagedFiles {
    fn drop(&mut self) {
        for (temporary, _) in &self.pending {
            let _ = fs::remove_file(temporary);
        }
    }
}

/// `dir/.name.tmp-PID`: hidden, in the same directory (so the rename is atomic), and
/// distinct between processes.
fn temporary_name(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or("output".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Checks, before any work is done, that `path` can be written the way [`StagedFiles`] will
/// write it: the target is not a directory, its directory exists, and a file can be created
/// there. The last is not guessed from permission bits (which say nothing of read-only mounts,
/// access control lists or a privileged user) but tried: the temporary file a write would use
/// is created and removed again. The error says what is wrong, without the path: `is a
/// directory`, `no such directory: DIR`, `not a directory: DIR`, or the system's reason, such
/// as `permission denied`.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err("is a directory".into());
    }
    // An output takes the place of what is there: a device (`/dev/null`), a FIFO or a
    // socket would be replaced by a regular file, which is never what was meant.
    if let Ok(metadata) = fs::metadata(path)
        && !metadata.is_file()
    {
        return Err(format!(
            "{} is there, not a regular file; raylb writes a whole new file in an output's place and replaces only regular files",
            crate::input::kind(&metadata)
        ));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(if dir.exists() {
            format!("not a directory: {}", dir.display())
        } else {
            format!("no such directory: {}", dir.display())
        });
    }
    let probe = temporary_name(path);
    File::create(&probe).map_err(|e| io_reason(&e))?;
    fs::remove_file(&probe).map_err(|e| io_reason(&e))
}

/// The input that `output` would replace, if any: the same file under another name, through
/// a symbolic link or a hard link included. An output that does not exist yet replaces
/// nothing.
pub fn replaces_input<'a>(output: &Path, inputs: &'a [PathBuf]) -> Option<&'a Path> {
    inputs
        .iter()
        .find(|input| same_file::is_same_file(output, input).unwrap_or(false))
        .map(PathBuf::as_path)
}

/// Writes `text` to `path`, atomically.
pub fn write_text(path: &Path, text: &str) -> io::Result<()> {
    let mut staged = StagedFiles::new();
    staged.text(path, text)?;
    staged.commit()
}

/// Writes an 8-bit RGB image (row-major triples) as PNG, atomically.
pub fn write_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> io::Result<()> {
    let mut staged = StagedFiles::new();
    staged.png(path, width, height, rgb)?;
    staged.commit()
}

/// The operating system's reason for `e`, without the "(os error N)" suffix, in lower case
/// (it follows a colon in our messages).
pub fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    let text = text
        .find(" (os error")
        .map_or(text.as_str(), |i| &text[..i]);
    let mut chars = text.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_lowercase().chain(chars).collect()
    })
}
