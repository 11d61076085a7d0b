//! PNG at its native depth, through the `png` crate: 8- and 16-bit samples as stored; palette,
//! 1-, 2- and 4-bit images and `tRNS` transparency expanded to 8-bit grey, RGB or RGBA (or
//! 16-bit where the image is), never wider.

use std::io::{self, BufRead, Seek};

use ::png::{BitDepth, ColorType, Decoder, DecodingError, Limits, Reader, Transformations};

use super::{Channels, Depth, Image, ImageFormat, ImageInfo, Samples};
use crate::memory::format_bytes;
use crate::output::io_reason;

/// The PNG signature.
pub(super) const MAGIC: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

/// A PNG whose chunks up to the image data have been read.
pub(super) struct Header<R: BufRead + Seek> {
    reader: Reader<R>,
    info: ImageInfo,
}

impl<R: BufRead + Seek> Header<R> {
    /// Reads the chunks before the image data, the decoder allocating at most `max_bytes` for
    /// them and its row buffers. Text and ICC profile chunks are skipped unread: nothing here
    /// uses them, and they could be large.
    pub(super) fn open(reader: R, max_bytes: u64) -> Result<Self, String> {
        let limits = Limits {
            bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
        };
        let mut decoder = Decoder::new_with_limits(reader, limits);
        decoder.set_transformations(Transformations::EXPAND);
        decoder.set_ignore_text_chunk(true);
        decoder.set_ignore_iccp_chunk(true);
        let reader = decoder.read_info().map_err(|e| describe(e, max_bytes))?;
        check_palette(reader.info())?;
        let (color, depth) = reader.output_color_type();
        let channels = match color {
            ColorType::Grayscale => Channels::Grey,
            ColorType::GrayscaleAlpha => Channels::GreyAlpha,
            ColorType::Rgb => Channels::Rgb,
            ColorType::Rgba => Channels::Rgba,
            // EXPAND turns a palette into RGB or RGBA.
            ColorType::Indexed => return Err("a palette PNG was not expanded".into()),
        };
        let depth = match depth {
            BitDepth::Sixteen => Depth::U16,
            // EXPAND widens 1-, 2- and 4-bit samples to 8.
            _ => Depth::U8,
        };
        let info = ImageInfo {
            format: ImageFormat::Png,
            width: reader.info().width,
            height: reader.info().height,
            channels,
            depth,
        };
        Ok(Header { reader, info })
    }

    pub(super) fn info(&self) -> ImageInfo {
        self.info
    }

    /// Decodes the image into a buffer of exactly its samples: 16-bit samples are decoded into
    /// the `u16` buffer's bytes and put in native byte order in place, with no second copy.
    pub(super) fn decode(mut self, max_bytes: u64) -> Result<Image, String> {
        let info = self.info;
        info.check_fits(max_bytes)?;
        let bytes = self
            .reader
            .output_buffer_size()
            .filter(|&n| n as u64 == info.decoded_bytes())
            .ok_or("the PNG's decoded size does not match its header")?;
        let samples = match info.depth {
            Depth::U16 => {
                let mut samples = vec![0u16; bytes / 2];
                self.next_frame(bytemuck::cast_slice_mut(&mut samples), max_bytes)?;
                for sample in &mut samples {
                    *sample = u16::from_be(*sample);
                }
                Samples::U16(samples)
            }
            _ => {
                let mut samples = vec![0u8; bytes];
                self.next_frame(&mut samples, max_bytes)?;
                Samples::U8(samples)
            }
        };
        Image::new(info.width, info.height, info.channels, samples)
    }

    fn next_frame(&mut self, buffer: &mut [u8], max_bytes: u64) -> Result<(), String> {
        self.reader
            .next_frame(buffer)
            .map(drop)
            .map_err(|e| describe(e, max_bytes))
    }
}

/// Refuses a palette image whose palette is not a whole number of RGB entries (the PNG
/// standard requires one; the decoder assumes it and would index past a shorter one).
fn check_palette(info: &::png::Info<'_>) -> Result<(), String> {
    if info.color_type != ColorType::Indexed {
        return Ok(());
    }
    match info.palette.as_deref().map_or(0, <[u8]>::len) {
        0 => Err("not a readable PNG image: a palette image with no palette (PLTE)".into()),
        n if n % 3 != 0 => Err(format!(
            "not a readable PNG image: its palette (PLTE) holds {n} bytes, not a whole number of RGB entries"
        )),
        _ => Ok(()),
    }
}

fn describe(error: DecodingError, max_bytes: u64) -> String {
    match error {
        DecodingError::IoError(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            "not a readable PNG image: it ends early (truncated)".into()
        }
        DecodingError::IoError(e) => io_reason(&e),
        DecodingError::LimitsExceeded => format!(
            "not a readable PNG image: decoding it needs more than the {} allowed",
            format_bytes(max_bytes)
        ),
        other => format!("not a readable PNG image: {other}"),
    }
}
