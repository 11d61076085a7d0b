//! PNG at its native depth, through the `png` crate: 8- and 16-bit samples as stored; palette,
//! 1-, 2- and 4-bit images and `tRNS` transparency expanded to 8-bit grey, RGB or RGBA (or
//! 16-bit where the image is), never wider.

use std::io::{self, BufRead, Seek};

use ::png::{BitDepth, ColorType, Decoder, DecodingError, Limits, Reader, Transformations};

use super::{Channels, Depth, Image, ImageFormat, ImageInfo, Samples, sample_buffer};
use crate::file_errors::io_reason;
use crate::memory::format_bytes;

/// The PNG signature.
pub(super) const MAGIC: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

/// The most bytes one byte of a deflate stream can expand to: a length–distance pair copies
/// at most 258 bytes and takes at least two bits (zlib's FAQ gives the same 1032:1 bound). A
/// PNG's pixel data is one zlib stream, so a file shorter than its pixels over this cannot
/// hold them.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// A PNG whose chunks up to the image data have been read.
pub(super) struct Header<R: BufRead + Seek> {
    reader: Reader<R>,
    info: ImageInfo,
}

impl<R: BufRead + Seek> Header<R> {
    /// Reads the chunks before the image data, the decoder allocating at most `max_bytes` for
    /// them and its row buffers. Text and ICC profile chunks are skipped unread: nothing here
    /// uses them, and they could be large. Refuses pixels this machine cannot address, and a
    /// file of `file_len` bytes too short to hold its pixels however well compressed.
    pub(super) fn open(reader: R, max_bytes: u64, file_len: u64) -> Result<Self, String> {
        let limits = Limits {
            bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
        };
        let mut decoder = Decoder::new_with_limits(reader, limits);
        decoder.set_transformations(Transformations::EXPAND);
        decoder.set_ignore_text_chunk(true);
        decoder.set_ignore_iccp_chunk(true);
        let header = decoder
            .read_header_info()
            .map_err(|e| describe(e, max_bytes))?;
        let declared = declared(header);
        let bits_per_pixel = header.bits_per_pixel() as u64;
        // The decoder refuses, as over its limits, an image whose buffer it cannot address:
        // say that in the image's own figures.
        declared
            .check_fits(u64::MAX)
            .map_err(|e| format!("not a readable PNG image: {e}"))?;
        check_length(&declared, bits_per_pixel, file_len)?;
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
                let mut samples: Vec<u16> = sample_buffer(&info, bytes / 2)?;
                self.next_frame(bytemuck::cast_slice_mut(&mut samples), max_bytes)?;
                for sample in &mut samples {
                    *sample = u16::from_be(*sample);
                }
                Samples::U16(samples)
            }
            _ => {
                let mut samples: Vec<u8> = sample_buffer(&info, bytes)?;
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

/// What the header says the image is, at least: its size, and the channels and depth of its
/// samples as stored, with a palette as 8-bit RGB (a `tRNS` chunk, read later, may add
/// alpha).
fn declared(header: &::png::Info<'_>) -> ImageInfo {
    let channels = match header.color_type {
        ColorType::Grayscale => Channels::Grey,
        ColorType::GrayscaleAlpha => Channels::GreyAlpha,
        ColorType::Rgb | ColorType::Indexed => Channels::Rgb,
        ColorType::Rgba => Channels::Rgba,
    };
    ImageInfo {
        format: ImageFormat::Png,
        width: header.width,
        height: header.height,
        channels,
        depth: if header.bit_depth == BitDepth::Sixteen {
            Depth::U16
        } else {
            Depth::U8
        },
    }
}

/// Refuses a file of `file_len` bytes that cannot hold the pixels of `declared`, stored at
/// `bits_per_pixel`, even at deflate's best ratio: a header whose data is missing or cut
/// short, however large the image it announces.
fn check_length(declared: &ImageInfo, bits_per_pixel: u64, file_len: u64) -> Result<(), String> {
    let pixel_bytes =
        (u128::from(declared.width) * u128::from(declared.height) * u128::from(bits_per_pixel))
            .div_ceil(8);
    let least = pixel_bytes.div_ceil(u128::from(DEFLATE_MAX_RATIO));
    if u128::from(file_len) < least {
        return Err(format!(
            "not a readable PNG image: its {file_len} bytes cannot hold the {}×{} pixels its header declares (they compress to at least {} bytes); it is truncated or corrupt",
            declared.width, declared.height, least
        ));
    }
    Ok(())
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
        // Without a limit of ours, only the address space can have been exceeded.
        DecodingError::LimitsExceeded if max_bytes >= isize::MAX as u64 => {
            "not a readable PNG image: its pixels need more bytes than can be addressed".into()
        }
        DecodingError::LimitsExceeded => format!(
            "not a readable PNG image: decoding it needs more than the {} allowed",
            format_bytes(max_bytes)
        ),
        other => format!(
            "not a readable PNG image: {}",
            chunk_named(&other.to_string())
        ),
    }
}

/// `message` with the decoder's description of a chunk's type
/// (`ChunkType { type: IHDR, critical: true, … }`, its debug form) cut to the type's name.
fn chunk_named(message: &str) -> String {
    const START: &str = "ChunkType { type: ";
    let Some(at) = message.find(START) else {
        return message.to_string();
    };
    let rest = &message[at + START.len()..];
    let (Some(name_end), Some(close)) = (rest.find(','), rest.find('}')) else {
        return message.to_string();
    };
    format!(
        "{}{}{}",
        &message[..at],
        &rest[..name_end],
        &rest[close + 1..]
    )
}
