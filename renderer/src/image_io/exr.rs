//! OpenEXR through the `exr` crate: single-part scan-line or tiled images with R, G, B and
//! optionally A channels, half or float, read as float; written as linear R, G, B in half or
//! float, byte for byte the same for the same pixels.

use std::cell::Cell;
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};

use ::exr::error::Error as ExrError;
use ::exr::meta::MetaData;
use ::exr::meta::attribute::SampleType;
use ::exr::prelude::{
    Blocks, Compression, Encoding, LineOrder, ReadChannels, ReadLayers, SpecificChannels, Vec2,
    WritableImage, f16, read,
};

use super::{Channels, Depth, Image, ImageFormat, ImageInfo, Samples, sample_buffer};

/// The OpenEXR magic number.
pub(super) const MAGIC: &[u8] = &[0x76, 0x2f, 0x31, 0x01];

/// The fewest bytes a chunk takes: its entry in the offset table (8) and, before its data,
/// a scan-line chunk's first line and data size (4 each; a tile's header is longer).
const MIN_CHUNK_BYTES: u64 = 16;

/// The longest attribute name or type name read while looking for the data window: 255
/// bytes with the long-names flag, 31 without.
const MAX_NAME: usize = 255;

/// How the samples of an OpenEXR file are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExrPrecision {
    /// 16-bit floats: half the size, about three decimal digits, at most 65504.
    Half,
    /// 32-bit floats: exactly the renderer's values.
    Float,
}

/// How raylb writes EXR: ZIP over blocks of 16 scan lines (lossless, read by every OpenEXR
/// reader, and deterministic: miniz always makes the same stream for the same input), chunks
/// in increasing line order and compressed on the calling thread, so chunks are written in one
/// order, and no attributes beyond the required ones, so no time stamp or host name.
const ENCODING: Encoding = Encoding {
    compression: Compression::ZIP16,
    blocks: Blocks::ScanLines,
    line_order: LineOrder::Increasing,
};

/// Writes `width × height` linear RGB pixels (row-major triples from the top row) as a
/// single-part scan-line OpenEXR file with channels R, G and B.
pub(crate) fn encode<W: Write + Seek>(
    out: W,
    width: u32,
    height: u32,
    linear_rgb: &[f32],
    precision: ExrPrecision,
) -> io::Result<()> {
    let (w, h) = (width as usize, height as usize);
    if w == 0 || h == 0 || i32::try_from(width).is_err() || i32::try_from(height).is_err() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("an OpenEXR image cannot be {width}×{height}"),
        ));
    }
    check_rgb_len(width, height, linear_rgb)?;
    let pixel = move |Vec2(x, y): Vec2<usize>| {
        let i = 3 * (y * w + x);
        (linear_rgb[i], linear_rgb[i + 1], linear_rgb[i + 2])
    };
    let written = match precision {
        ExrPrecision::Float => ::exr::prelude::Image::from_encoded_channels(
            (w, h),
            ENCODING,
            SpecificChannels::rgb(pixel),
        )
        .write()
        .non_parallel()
        .to_buffered(out),
        ExrPrecision::Half => ::exr::prelude::Image::from_encoded_channels(
            (w, h),
            ENCODING,
            SpecificChannels::rgb(move |position| {
                let (r, g, b) = pixel(position);
                (f16::from_f32(r), f16::from_f32(g), f16::from_f32(b))
            }),
        )
        .write()
        .non_parallel()
        .to_buffered(out),
    };
    written.map_err(|e| match e {
        ExrError::Io(e) => e,
        other => io::Error::other(other.to_string()),
    })
}

/// Refuses a buffer that is not `width × height` RGB triples.
pub(super) fn check_rgb_len(width: u32, height: u32, linear_rgb: &[f32]) -> io::Result<()> {
    let expected = (width as usize)
        .checked_mul(height as usize)
        .and_then(|n| n.checked_mul(3));
    if expected != Some(linear_rgb.len()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{width}×{height} RGB pixels need {} floats, got {}",
                width as u128 * height as u128 * 3,
                linear_rgb.len()
            ),
        ));
    }
    Ok(())
}

/// An OpenEXR file whose headers have been read and found to hold an image raylb can read.
pub(super) struct Header<R> {
    reader: R,
    start: u64,
    info: ImageInfo,
}

impl<R: BufRead + Seek> Header<R> {
    /// Reads the headers of a file of `file_len` bytes, refusing what raylb cannot read, an
    /// inverted data window, and a file too short for its table of chunk offsets.
    pub(super) fn open(mut reader: R, file_len: u64) -> Result<Self, String> {
        let start = reader.stream_position().map_err(|e| describe(e.into()))?;
        check_data_window(&mut reader)?;
        reader
            .seek(SeekFrom::Start(start))
            .map_err(|e| describe(e.into()))?;
        let meta = MetaData::read_from_buffered(&mut reader, false).map_err(describe)?;
        let [header] = meta.headers.as_slice() else {
            return Err(format!(
                "an OpenEXR file of {} parts; only single-part images can be read",
                meta.headers.len()
            ));
        };
        if header.deep {
            return Err("an OpenEXR file of deep data; only flat images can be read".into());
        }
        let names: Vec<String> = header
            .channels
            .list
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        for channel in &header.channels.list {
            if channel.sample_type == SampleType::U32 {
                return Err(format!(
                    "OpenEXR channel `{}` holds 32-bit integers; only half and float channels can be read",
                    channel.name
                ));
            }
            if channel.sampling != Vec2(1, 1) {
                return Err(format!(
                    "OpenEXR channel `{}` is subsampled; only full-resolution channels can be read",
                    channel.name
                ));
            }
        }
        let has = |name: &str| names.iter().any(|n| n == name);
        let known = names
            .iter()
            .all(|n| ["R", "G", "B", "A"].contains(&n.as_str()));
        if !(has("R") && has("G") && has("B") && known) {
            return Err(format!(
                "OpenEXR channels {}; only R, G, B and optionally A can be read",
                names.join(", ")
            ));
        }
        let size = header.layer_size;
        let (Ok(width), Ok(height)) = (u32::try_from(size.x()), u32::try_from(size.y())) else {
            return Err(format!(
                "an OpenEXR image of {}×{} pixels",
                size.x(),
                size.y()
            ));
        };
        let info = ImageInfo {
            format: ImageFormat::Exr,
            width,
            height,
            channels: if has("A") {
                Channels::Rgba
            } else {
                Channels::Rgb
            },
            depth: Depth::F32,
        };
        info.check_fits(u64::MAX)?;
        let least = (header.chunk_count as u64).saturating_mul(MIN_CHUNK_BYTES);
        if file_len < least {
            return Err(format!(
                "not a readable OpenEXR image: its {file_len} bytes cannot hold the {} chunks of the {width}×{height} pixels its header declares (at least {least} bytes); it is truncated or corrupt",
                header.chunk_count
            ));
        }
        Ok(Header {
            reader,
            start,
            info,
        })
    }

    pub(super) fn info(&self) -> ImageInfo {
        self.info
    }

    /// Decodes the one layer's largest resolution level as float. The pixel buffer is made only
    /// if the layer the decoder finds is the size the header promised and fits `max_bytes`.
    pub(super) fn decode(mut self, max_bytes: u64) -> Result<Image, String> {
        let info = self.info;
        info.check_fits(max_bytes)?;
        self.reader
            .seek(SeekFrom::Start(self.start))
            .map_err(|e| describe(e.into()))?;
        let (width, height) = (info.width as usize, info.height as usize);
        let channels = info.channels.count();
        let expected = width * height * channels;
        // Allocated here, where running out can be reported; the decoder takes it once, for
        // the layer of the header's size.
        let buffer = Cell::new(sample_buffer::<f32>(&info, expected)?);
        let image = read()
            .no_deep_data()
            .largest_resolution_level()
            .rgba_channels(
                move |size, _| {
                    if size == Vec2(width, height) {
                        buffer.take()
                    } else {
                        Vec::new()
                    }
                },
                move |pixels: &mut Vec<f32>, Vec2(x, y), (r, g, b, a): (f32, f32, f32, f32)| {
                    let i = (y * width + x) * channels;
                    if let Some(pixel) = pixels.get_mut(i..i + channels) {
                        pixel[..3].copy_from_slice(&[r, g, b]);
                        if let Some(alpha) = pixel.get_mut(3) {
                            *alpha = a;
                        }
                    }
                },
            )
            .first_valid_layer()
            .all_attributes()
            .non_parallel()
            .from_buffered(self.reader)
            .map_err(describe)?;
        let samples = image.layer_data.channel_data.pixels;
        if samples.len() != expected {
            return Err(format!(
                "not a readable OpenEXR image: its layer is {}×{}, not the {}×{} of its header",
                image.layer_data.size.x(),
                image.layer_data.size.y(),
                width,
                height
            ));
        }
        Image::new(
            info.width,
            info.height,
            info.channels,
            Samples::F32(samples),
        )
    }
}

/// Refuses a data window (the `dataWindow` attribute of the first header) whose maximum is
/// below its minimum, which the `exr` crate would silently swap into a window of another size.
/// Anything else wrong with the headers is left for the crate's parser to report.
fn check_data_window(reader: &mut impl Read) -> Result<(), String> {
    let mut start = [0u8; 8];
    if reader.read_exact(&mut start).is_err() {
        return Ok(());
    }
    while let Some(name) = c_string(reader) {
        if name.is_empty() {
            return Ok(());
        }
        let (Some(kind), Some(size)) = (c_string(reader), read_i32(reader)) else {
            return Ok(());
        };
        let Ok(size) = u64::try_from(size) else {
            return Ok(());
        };
        if name == b"dataWindow" && kind == b"box2i" && size == 16 {
            let mut value = [0i32; 4];
            for v in &mut value {
                let Some(x) = read_i32(reader) else {
                    return Ok(());
                };
                *v = x;
            }
            let [x_min, y_min, x_max, y_max] = value;
            if x_max < x_min || y_max < y_min {
                return Err(format!(
                    "not a readable OpenEXR image: its data window runs from ({x_min}, {y_min}) to ({x_max}, {y_max}), a maximum below its minimum"
                ));
            }
            return Ok(());
        }
        if io::copy(&mut reader.take(size), &mut io::sink()).ok() != Some(size) {
            return Ok(());
        }
    }
    Ok(())
}

/// A null-terminated name of at most [`MAX_NAME`] bytes, without its null; `None` at the end
/// of the input or past that length.
fn c_string(reader: &mut impl Read) -> Option<Vec<u8>> {
    let mut name = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        reader.read_exact(&mut byte).ok()?;
        if byte[0] == 0 {
            return Some(name);
        }
        if name.len() == MAX_NAME {
            return None;
        }
        name.push(byte[0]);
    }
}

fn read_i32(reader: &mut impl Read) -> Option<i32> {
    let mut bytes = [0u8; 4];
    reader.read_exact(&mut bytes).ok()?;
    Some(i32::from_le_bytes(bytes))
}

fn describe(error: ExrError) -> String {
    match error {
        ExrError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            "not a readable OpenEXR image: it ends early (truncated)".into()
        }
        ExrError::Io(e) => crate::file_errors::io_reason(&e),
        ExrError::NotSupported(what) => {
            format!("an OpenEXR feature raylb cannot read: {what}")
        }
        other => format!("not a readable OpenEXR image: {other}"),
    }
}
