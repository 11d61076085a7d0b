//! Portable Float Map: `PF` (RGB) or `Pf` (grey), then width, height and a scale separated by
//! white space, one white-space byte, and 32-bit float samples, the bottom row first. The
//! scale's sign gives the byte order (negative: little-endian) and its magnitude multiplies
//! the samples. raylb writes `PF`, little-endian, scale −1.
//!
//! The parser is strict, because it is fed files from anywhere: tokens are bounded in length,
//! sizes must fit, and the data must be exactly what the header announces, no more, no less.

use std::io::{self, BufRead, Seek, Write};

use super::{
    Channels, Depth, Image, ImageFormat, ImageInfo, Samples, remaining_len, sample_buffer,
};
use crate::file_errors::io_reason;

/// The first bytes of a colour PFM.
pub(super) const MAGIC_RGB: &[u8] = b"PF";
/// The first bytes of a grey PFM.
pub(super) const MAGIC_GREY: &[u8] = b"Pf";

/// The longest header token read: a width or height has at most 10 digits, and a scale written
/// by any PFM writer (`-1.0`, `-1.000000`, `1e-3`) is far shorter than this; a longer token is
/// refused rather than read on and on.
const MAX_TOKEN: usize = 64;

/// Writes `width × height` linear RGB pixels (row-major triples from the top row) as a
/// little-endian `PF` file, bottom row first.
pub(crate) fn encode(
    out: &mut impl Write,
    width: u32,
    height: u32,
    linear_rgb: &[f32],
) -> io::Result<()> {
    super::exr::check_rgb_len(width, height, linear_rgb)?;
    write!(out, "PF\n{width} {height}\n-1.0\n")?;
    let row_len = width as usize * 3;
    let mut bytes = Vec::with_capacity(row_len * 4);
    for row in linear_rgb.chunks_exact(row_len.max(1)).rev() {
        bytes.clear();
        bytes.extend(row.iter().flat_map(|v| v.to_le_bytes()));
        out.write_all(&bytes)?;
    }
    Ok(())
}

/// A PFM whose header has been read and found to announce exactly the samples that follow it;
/// the reader stands at the first sample.
pub(super) struct Header<R> {
    reader: R,
    info: ImageInfo,
    little_endian: bool,
    scale: f32,
}

impl<R: BufRead + Seek> Header<R> {
    pub(super) fn open(mut reader: R) -> Result<Self, String> {
        let mut magic = [0u8; 2];
        reader.read_exact(&mut magic).map_err(|e| describe_io(&e))?;
        let channels = match &magic {
            b"PF" => Channels::Rgb,
            b"Pf" => Channels::Grey,
            _ => return Err("not a PFM image: it does not start with `PF` or `Pf`".into()),
        };
        let width = dimension(&mut reader, "width")?;
        let height = dimension(&mut reader, "height")?;
        let scale_token = token(&mut reader, "scale")?;
        // Exactly one white-space byte ends the header; the samples follow.
        if peek(&mut reader)?.is_none() {
            return Err("not a readable PFM image: the header ends after its scale, with no white space or pixels".into());
        }
        reader.consume(1);
        let scale: f32 = scale_token
            .parse()
            .ok()
            .filter(|s: &f32| s.is_finite() && *s != 0.0)
            .ok_or_else(|| {
                format!(
                    "not a readable PFM image: scale `{scale_token}` is not a nonzero finite number"
                )
            })?;
        let info = ImageInfo {
            format: ImageFormat::Pfm,
            width,
            height,
            channels,
            depth: Depth::F32,
        };
        info.check_fits(u64::MAX)?;
        let remaining = remaining_len(&mut reader).map_err(|e| io_reason(&e))?;
        check_length(&info, remaining)?;
        Ok(Header {
            reader,
            info,
            little_endian: scale < 0.0,
            scale: scale.abs(),
        })
    }

    pub(super) fn info(&self) -> ImageInfo {
        self.info
    }

    /// Reads the samples (the rest of the input was found to be exactly their size when the
    /// header was read, so a short file is refused before anything is allocated for it).
    pub(super) fn decode(mut self, max_bytes: u64) -> Result<Image, String> {
        let info = self.info;
        info.check_fits(max_bytes)?;
        // `check_fits` refused what this machine cannot address.
        let count = (info.decoded_bytes() / 4) as usize;
        let mut samples: Vec<f32> = sample_buffer(&info, count)?;
        self.reader
            .read_exact(bytemuck::cast_slice_mut(&mut samples))
            .map_err(|e| describe_io(&e))?;
        for sample in &mut samples {
            let bits = sample.to_bits();
            let bits = if self.little_endian {
                u32::from_le(bits)
            } else {
                u32::from_be(bits)
            };
            *sample = f32::from_bits(bits);
            if self.scale != 1.0 {
                *sample *= self.scale;
            }
        }
        flip_rows(&mut samples, info.width as usize * info.channels.count());
        Image::new(
            info.width,
            info.height,
            info.channels,
            Samples::F32(samples),
        )
    }
}

/// A width or height: decimal digits only, at least 1, at most `u32::MAX`.
fn dimension(reader: &mut impl BufRead, what: &str) -> Result<u32, String> {
    let text = token(reader, what)?;
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "not a readable PFM image: {what} `{text}` is not a whole number"
        ));
    }
    match text.parse::<u32>() {
        Ok(0) => Err(format!("not a readable PFM image: {what} is 0")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "not a readable PFM image: {what} `{text}` is too large"
        )),
    }
}

/// The next header token: white space before it (at least one byte, at most `MAX_TOKEN`), then
/// up to `MAX_TOKEN` printable bytes, up to (not including) the white space or end after it.
fn token(reader: &mut impl BufRead, what: &str) -> Result<String, String> {
    let mut skipped = 0;
    while peek(reader)?.is_some_and(|b| b.is_ascii_whitespace()) {
        reader.consume(1);
        skipped += 1;
        if skipped > MAX_TOKEN {
            return Err(format!(
                "not a readable PFM image: more than {MAX_TOKEN} bytes of white space before its {what}"
            ));
        }
    }
    let mut text = Vec::new();
    while let Some(byte) = peek(reader)? {
        if byte.is_ascii_whitespace() {
            break;
        }
        if skipped == 0 {
            return Err(format!(
                "not a readable PFM image: no white space before its {what}"
            ));
        }
        if !byte.is_ascii_graphic() {
            return Err(format!(
                "not a readable PFM image: byte {byte:#04x} in its header, where its {what} should be"
            ));
        }
        if text.len() == MAX_TOKEN {
            return Err(format!(
                "not a readable PFM image: its {what} is longer than {MAX_TOKEN} characters"
            ));
        }
        text.push(byte);
        reader.consume(1);
    }
    if text.is_empty() {
        return Err(format!(
            "not a readable PFM image: the header ends before its {what}"
        ));
    }
    // Only ASCII graphic bytes were kept.
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// The next byte, left unread.
fn peek(reader: &mut impl BufRead) -> Result<Option<u8>, String> {
    let buffer = reader.fill_buf().map_err(|e| describe_io(&e))?;
    Ok(buffer.first().copied())
}

/// Refuses samples that are not exactly the `remaining` bytes after the header: a truncated
/// file, or one with data after its pixels.
fn check_length(info: &ImageInfo, remaining: u64) -> Result<(), String> {
    let needed = info.decoded_bytes();
    if remaining < needed {
        return Err(format!(
            "not a readable PFM image: it ends early (truncated): {}×{} {} pixels need {needed} bytes, {remaining} follow the header",
            info.width,
            info.height,
            if info.channels.is_grey() {
                "grey"
            } else {
                "RGB"
            },
        ));
    }
    if remaining > needed {
        let extra = remaining - needed;
        return Err(format!(
            "not a readable PFM image: {extra} byte{} of trailing data after the pixels",
            if extra == 1 { "" } else { "s" }
        ));
    }
    Ok(())
}

/// Turns bottom-row-first samples into top-row-first, in place.
fn flip_rows(samples: &mut [f32], row_len: usize) {
    if row_len == 0 {
        return;
    }
    let rows = samples.len() / row_len;
    for top in 0..rows / 2 {
        let (upper, lower) = samples.split_at_mut((rows - 1 - top) * row_len);
        upper[top * row_len..(top + 1) * row_len].swap_with_slice(&mut lower[..row_len]);
    }
}

fn describe_io(error: &io::Error) -> String {
    if error.kind() == io::ErrorKind::UnexpectedEof {
        "not a readable PFM image: it ends early (truncated)".into()
    } else {
        io_reason(error)
    }
}
