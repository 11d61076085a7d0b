//! Image files read at their native layout (PNG, OpenEXR, PFM) and the HDR encoders (OpenEXR,
//! PFM) behind [`StagedFiles`](crate::output::StagedFiles).
//!
//! Reading is bounded: the header is read first, and an image whose decoded samples would take
//! more than the caller's `max_bytes` is refused before anything is allocated for it, with the
//! figure in the message. So is a file too short to hold what its header declares (a PFM not
//! exactly its samples' size, a PNG shorter than its pixels at deflate's best ratio, an OpenEXR
//! shorter than its table of chunk offsets), so that a corrupt header is reported as such and
//! not taken for a large image. The samples' buffer is allocated fallibly: memory that runs
//! out is an error, not an abort. The decoders' working memory comes on top of that: a few
//! rows (PNG) or one compressed block (EXR), a small fraction of the image. Samples are kept as
//! the file has them (8-bit, 16-bit or float; palette and 1-, 2- and 4-bit PNGs become 8-bit,
//! never wider), so that comparing two 16-bit files sees every bit and a 1-bit image costs one
//! byte a pixel.

mod exr;
mod pfm;
mod png;

use std::fmt;
use std::io::{BufRead, BufReader, Cursor, Seek, SeekFrom};
use std::path::Path;

pub use exr::ExrPrecision;
pub(crate) use exr::encode as encode_exr;
pub(crate) use pfm::encode as encode_pfm;

use crate::file_errors::io_reason;
use crate::input::open_regular_file;
use crate::memory::{AllocError, format_bytes, try_zeroed};

/// The formats raylb writes, chosen by a file's extension.
///
/// ```
/// use renderer::image_io::ImageFormat;
/// use std::path::Path;
///
/// assert_eq!(ImageFormat::of(Path::new("frame.exr")), Ok(ImageFormat::Exr));
/// assert_eq!(ImageFormat::Exr.name(), "OpenEXR");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// Portable Network Graphics: 8-bit sRGB, what `render` writes by default.
    Png,
    /// OpenEXR: linear half or float RGB.
    Exr,
    /// Portable Float Map: linear float RGB, the simplest HDR format.
    Pfm,
}

impl ImageFormat {
    /// The format named by `path`'s extension (`.png`, `.exr`, `.pfm`, any case). The error
    /// names the extension found and those accepted; the caller adds the flag and path.
    ///
    /// ```
    /// use renderer::image_io::ImageFormat;
    /// use std::path::Path;
    ///
    /// assert_eq!(ImageFormat::of(Path::new("out/frame.PNG")), Ok(ImageFormat::Png));
    /// let e = ImageFormat::of(Path::new("frame.jpg")).unwrap_err();
    /// assert_eq!(e, "unknown image extension `.jpg`; use .png, .exr or .pfm");
    /// ```
    pub fn of(path: &Path) -> Result<ImageFormat, String> {
        const ACCEPTED: &str = "use .png, .exr or .pfm";
        let Some(extension) = path.extension() else {
            return Err(format!(
                "no file extension to choose the format by; {ACCEPTED}"
            ));
        };
        match extension.to_string_lossy().to_ascii_lowercase().as_str() {
            "png" => Ok(ImageFormat::Png),
            "exr" => Ok(ImageFormat::Exr),
            "pfm" => Ok(ImageFormat::Pfm),
            _ => Err(format!(
                "unknown image extension `.{}`; {ACCEPTED}",
                extension.to_string_lossy()
            )),
        }
    }

    /// The format's usual name.
    ///
    /// ```
    /// use renderer::image_io::ImageFormat;
    ///
    /// assert_eq!(ImageFormat::Pfm.name(), "PFM");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Png => "PNG",
            ImageFormat::Exr => "OpenEXR",
            ImageFormat::Pfm => "PFM",
        }
    }
}

/// Which channels a pixel has.
///
/// ```
/// use renderer::image_io::Channels;
///
/// assert_eq!(Channels::Rgba.count(), 4);
/// assert!(Channels::GreyAlpha.has_alpha() && Channels::GreyAlpha.is_grey());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    /// One grey value.
    Grey,
    /// Grey and alpha.
    GreyAlpha,
    /// Red, green and blue.
    Rgb,
    /// Red, green, blue and alpha.
    Rgba,
}

impl Channels {
    /// Samples per pixel: 1 to 4.
    ///
    /// ```
    /// use renderer::image_io::Channels;
    ///
    /// assert_eq!(Channels::Grey.count(), 1);
    /// assert_eq!(Channels::Rgb.count(), 3);
    /// ```
    pub fn count(self) -> usize {
        match self {
            Channels::Grey => 1,
            Channels::GreyAlpha => 2,
            Channels::Rgb => 3,
            Channels::Rgba => 4,
        }
    }

    /// Whether the last sample of a pixel is alpha.
    ///
    /// ```
    /// use renderer::image_io::Channels;
    ///
    /// assert!(Channels::Rgba.has_alpha());
    /// assert!(!Channels::Rgb.has_alpha());
    /// ```
    pub fn has_alpha(self) -> bool {
        matches!(self, Channels::GreyAlpha | Channels::Rgba)
    }

    /// Whether the colour is one grey value (rather than red, green and blue).
    ///
    /// ```
    /// use renderer::image_io::Channels;
    ///
    /// assert!(Channels::Grey.is_grey());
    /// assert!(!Channels::Rgba.is_grey());
    /// ```
    pub fn is_grey(self) -> bool {
        matches!(self, Channels::Grey | Channels::GreyAlpha)
    }

    fn name(self) -> &'static str {
        match self {
            Channels::Grey => "grey",
            Channels::GreyAlpha => "grey+alpha",
            Channels::Rgb => "RGB",
            Channels::Rgba => "RGBA",
        }
    }
}

/// How one sample is stored.
///
/// ```
/// use renderer::image_io::{Depth, Samples};
///
/// assert_eq!(Samples::U16(vec![0; 3]).depth(), Depth::U16);
/// assert_eq!(Depth::F32.bytes(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// 8-bit unsigned integer, 0 to 255.
    U8,
    /// 16-bit unsigned integer, 0 to 65535.
    U16,
    /// 32-bit float, 1.0 being full scale (values above it are allowed).
    F32,
}

impl Depth {
    /// Bytes per sample.
    ///
    /// ```
    /// use renderer::image_io::Depth;
    ///
    /// assert_eq!(Depth::U8.bytes(), 1);
    /// assert_eq!(Depth::U16.bytes(), 2);
    /// ```
    pub fn bytes(self) -> u64 {
        match self {
            Depth::U8 => 1,
            Depth::U16 => 2,
            Depth::F32 => 4,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Depth::U8 => "8-bit",
            Depth::U16 => "16-bit",
            Depth::F32 => "32-bit float",
        }
    }
}

/// The samples of an image, row-major from the top row, `Channels::count` per pixel.
///
/// ```
/// use renderer::image_io::{Channels, Image, Samples};
///
/// // One RGB pixel, 16 bits a sample.
/// let image = Image::new(1, 1, Channels::Rgb, Samples::U16(vec![65535, 0, 0]))?;
/// assert_eq!(image.samples(), &Samples::U16(vec![65535, 0, 0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Samples {
    /// 8-bit samples.
    U8(Vec<u8>),
    /// 16-bit samples.
    U16(Vec<u16>),
    /// Float samples.
    F32(Vec<f32>),
}

impl Samples {
    /// How each sample is stored.
    ///
    /// ```
    /// use renderer::image_io::{Depth, Samples};
    ///
    /// assert_eq!(Samples::F32(vec![0.5]).depth(), Depth::F32);
    /// assert_eq!(Samples::U8(Vec::new()).depth(), Depth::U8);
    /// ```
    pub fn depth(&self) -> Depth {
        match self {
            Samples::U8(_) => Depth::U8,
            Samples::U16(_) => Depth::U16,
            Samples::F32(_) => Depth::F32,
        }
    }

    fn len(&self) -> usize {
        match self {
            Samples::U8(v) => v.len(),
            Samples::U16(v) => v.len(),
            Samples::F32(v) => v.len(),
        }
    }
}

/// What a file's header says about its image: enough to know what decoding it would take.
///
/// ```
/// use renderer::image_io::{Channels, Depth, ImageFormat, ImageInfo};
///
/// let info = ImageInfo {
///     format: ImageFormat::Png,
///     width: 640,
///     height: 480,
///     channels: Channels::Rgba,
///     depth: Depth::U16,
/// };
/// assert_eq!(info.to_string(), "640×480, 16-bit RGBA");
/// assert_eq!(info.decoded_bytes(), 640 * 480 * 4 * 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageInfo {
    /// The file's format, as its content says.
    pub format: ImageFormat,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The channels the decoded image has.
    pub channels: Channels,
    /// How the decoded samples are stored.
    pub depth: Depth,
}

impl ImageInfo {
    /// Bytes the decoded samples take (`u64::MAX` where that overflows; [`check_fits`]
    /// refuses any image whose samples this machine cannot address).
    ///
    /// [`check_fits`]: Self::check_fits
    ///
    /// ```
    /// use renderer::image_io::{Channels, Depth, ImageFormat, ImageInfo};
    ///
    /// let info = ImageInfo {
    ///     format: ImageFormat::Pfm,
    ///     width: 100,
    ///     height: 10,
    ///     channels: Channels::Rgb,
    ///     depth: Depth::F32,
    /// };
    /// assert_eq!(info.decoded_bytes(), 12_000);
    /// ```
    pub fn decoded_bytes(&self) -> u64 {
        u64::try_from(self.exact_bytes()).unwrap_or(u64::MAX)
    }

    /// Bytes the decoded samples take, without overflow: at most 2^32 · 2^32 · 16.
    fn exact_bytes(&self) -> u128 {
        u128::from(self.width)
            * u128::from(self.height)
            * self.channels.count() as u128
            * u128::from(self.depth.bytes())
    }

    /// Refuses an image whose samples this machine cannot address, or that would take more
    /// than `max_bytes`, saying how much it would need, for what, and how much is allowed.
    ///
    /// ```
    /// use renderer::image_io::{Channels, Depth, ImageFormat, ImageInfo};
    ///
    /// let info = ImageInfo {
    ///     format: ImageFormat::Exr,
    ///     width: 100,
    ///     height: 10,
    ///     channels: Channels::Rgb,
    ///     depth: Depth::F32,
    /// };
    /// assert!(info.check_fits(12_000).is_ok());
    /// assert!(info.check_fits(11_999).unwrap_err().starts_with("decoding needs"));
    /// ```
    pub fn check_fits(&self, max_bytes: u64) -> Result<(), String> {
        let exact = self.exact_bytes();
        if exact > isize::MAX as u128 {
            return Err(format!(
                "it declares {}×{} pixels of {} {}: {exact} bytes of samples, more than can be addressed",
                self.width,
                self.height,
                self.depth.name(),
                self.channels.name()
            ));
        }
        let needed = self.decoded_bytes();
        if needed > max_bytes {
            return Err(format!(
                "decoding needs {} ({self}), more than the {} allowed",
                format_bytes(needed),
                format_bytes(max_bytes)
            ));
        }
        Ok(())
    }
}

impl fmt::Display for ImageInfo {
    /// `23000×23000, 16-bit RGBA`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}×{}, {} {}",
            self.width,
            self.height,
            self.depth.name(),
            self.channels.name()
        )
    }
}

/// An image at its file's native layout.
///
/// ```
/// use renderer::image_io::{Channels, Image, Samples};
///
/// let grey = Image::new(2, 2, Channels::Grey, Samples::U8(vec![0, 64, 128, 255]))?;
/// assert_eq!((grey.width(), grey.height(), grey.bytes()), (2, 2, 4));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    width: u32,
    height: u32,
    channels: Channels,
    samples: Samples,
}

impl Image {
    /// An image of `width × height` pixels; `samples` must hold exactly
    /// `width × height × channels.count()` samples.
    ///
    /// ```
    /// use renderer::image_io::{Channels, Image, Samples};
    ///
    /// let image = Image::new(2, 1, Channels::Rgb, Samples::F32(vec![0.0; 6]))?;
    /// assert_eq!(image.channels(), Channels::Rgb);
    /// // Too few samples for the size.
    /// let e = Image::new(2, 2, Channels::Rgb, Samples::F32(vec![0.0; 6])).unwrap_err();
    /// assert_eq!(e, "2×2 RGB pixels need 12 samples, got 6");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(
        width: u32,
        height: u32,
        channels: Channels,
        samples: Samples,
    ) -> Result<Image, String> {
        let expected = (width as usize)
            .checked_mul(height as usize)
            .and_then(|n| n.checked_mul(channels.count()));
        if expected != Some(samples.len()) {
            return Err(format!(
                "{width}×{height} {} pixels need {} samples, got {}",
                channels.name(),
                expected.map_or("more than can be addressed".into(), |n| n.to_string()),
                samples.len()
            ));
        }
        Ok(Image {
            width,
            height,
            channels,
            samples,
        })
    }

    /// Width in pixels.
    ///
    /// ```
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// # let image = Image::new(2, 1, Channels::Rgb, Samples::U8(vec![255, 0, 0, 0, 0, 255]))?;
    /// assert_eq!(image.width(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    ///
    /// ```
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// # let image = Image::new(2, 1, Channels::Rgb, Samples::U8(vec![255, 0, 0, 0, 0, 255]))?;
    /// assert_eq!(image.height(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The channels of each pixel.
    ///
    /// ```
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// # let image = Image::new(2, 1, Channels::Rgb, Samples::U8(vec![255, 0, 0, 0, 0, 255]))?;
    /// assert_eq!(image.channels(), Channels::Rgb);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn channels(&self) -> Channels {
        self.channels
    }

    /// The samples, row-major from the top row.
    ///
    /// ```
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// # let image = Image::new(2, 1, Channels::Rgb, Samples::U8(vec![255, 0, 0, 0, 0, 255]))?;
    /// assert_eq!(image.samples(), &Samples::U8(vec![255, 0, 0, 0, 0, 255]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn samples(&self) -> &Samples {
        &self.samples
    }

    /// Bytes the samples take.
    ///
    /// ```
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// # let image = Image::new(2, 1, Channels::Rgb, Samples::U8(vec![255, 0, 0, 0, 0, 255]))?;
    /// assert_eq!(image.bytes(), 6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bytes(&self) -> u64 {
        self.samples.len() as u64 * self.samples.depth().bytes()
    }
}

/// Reads the header of the image file at `path` (PNG, OpenEXR or PFM, told apart by content,
/// whatever the name): what it holds and what decoding it would take. Refuses what
/// [`read_image`] would refuse before decoding: a file that is not a regular file, one larger
/// than `max_bytes`, and an image whose samples would take more than `max_bytes`.
///
/// ```
/// # let path = std::env::temp_dir().join(format!("raylb-doc-{}-{}.pfm", std::process::id(), line!()));
/// # let mut pfm = b"Pf\n2 1\n-1.0\n".to_vec();
/// # pfm.extend([0.25f32, 0.5].iter().flat_map(|x| x.to_le_bytes()));
/// # std::fs::write(&path, &pfm)?;
/// use renderer::image_io::{Channels, Depth, ImageFormat, read_info};
///
/// // Whatever the name, the content says PFM: two grey float pixels.
/// let info = read_info(&path, 1 << 20);
/// # std::fs::remove_file(&path)?;
/// let info = info?;
/// assert_eq!((info.format, info.width, info.height), (ImageFormat::Pfm, 2, 1));
/// assert_eq!((info.channels, info.depth), (Channels::Grey, Depth::F32));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_info(path: &Path, max_bytes: u64) -> Result<ImageInfo, String> {
    let file = open_regular_file(path, max_bytes)?;
    let info = open(BufReader::new(file), max_bytes)?.info();
    info.check_fits(max_bytes)?;
    Ok(info)
}

/// The samples' buffer of an image whose size was checked by [`ImageInfo::check_fits`]:
/// `len` zeroed samples, or a one-line error naming the image where the memory cannot be had.
fn sample_buffer<T: bytemuck::Zeroable>(info: &ImageInfo, len: usize) -> Result<Vec<T>, String> {
    try_zeroed(len, "the decoded samples").map_err(|e: AllocError| format!("{e} ({info})"))
}

/// Bytes from `reader`'s position to the end of its input; the position is kept.
fn remaining_len(reader: &mut impl Seek) -> std::io::Result<u64> {
    let here = reader.stream_position()?;
    let end = reader.seek(SeekFrom::End(0))?;
    reader.seek(SeekFrom::Start(here))?;
    Ok(end.saturating_sub(here))
}

/// Reads the image file at `path` (PNG, OpenEXR or PFM, told apart by content, whatever the
/// name) at its native layout, refusing, before decoding, a file that is not a regular file,
/// one larger than `max_bytes`, and an image whose samples would take more than `max_bytes`.
/// Errors are one line without the path (the caller adds it).
///
/// ```
/// # let path = std::env::temp_dir().join(format!("raylb-doc-{}-{}.pfm", std::process::id(), line!()));
/// # let mut pfm = b"Pf\n2 1\n-1.0\n".to_vec();
/// # pfm.extend([0.25f32, 0.5].iter().flat_map(|x| x.to_le_bytes()));
/// # std::fs::write(&path, &pfm)?;
/// use renderer::image_io::{Samples, read_image};
///
/// let image = read_image(&path, 1 << 20);
/// # std::fs::remove_file(&path)?;
/// assert_eq!(image?.samples(), &Samples::F32(vec![0.25, 0.5]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_image(path: &Path, max_bytes: u64) -> Result<Image, String> {
    let file = open_regular_file(path, max_bytes)?;
    decode(BufReader::new(file), max_bytes)
}

/// Decodes an image from its bytes (PNG, OpenEXR or PFM, told apart by their magic numbers),
/// refusing an image whose samples would take more than `max_bytes` before allocating them. Any
/// input gives an image or an error: this is the entry point for fuzzing.
///
/// ```
/// use renderer::image_io::{Samples, decode_image};
///
/// let mut pfm = b"Pf\n2 1\n-1.0\n".to_vec();
/// pfm.extend([0.25f32, 0.5].iter().flat_map(|x| x.to_le_bytes()));
/// assert_eq!(decode_image(&pfm, 1 << 20)?.samples(), &Samples::F32(vec![0.25, 0.5]));
/// // Eight bytes of samples are more than a bound of four allows.
/// assert!(decode_image(&pfm, 4).is_err());
/// assert!(decode_image(b"GIF89a", 1 << 20).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_image(bytes: &[u8], max_bytes: u64) -> Result<Image, String> {
    decode(Cursor::new(bytes), max_bytes)
}

fn decode<R: BufRead + Seek>(reader: R, max_bytes: u64) -> Result<Image, String> {
    let opened = open(reader, max_bytes)?;
    opened.info().check_fits(max_bytes)?;
    opened.decode(max_bytes)
}

/// A file whose header has been read, ready to decode.
enum Opened<R: BufRead + Seek> {
    // The PNG decoder's state is large; it lives on the heap so the others need not carry it.
    Png(Box<png::Header<R>>),
    Exr(exr::Header<R>),
    Pfm(pfm::Header<R>),
}

impl<R: BufRead + Seek> Opened<R> {
    fn info(&self) -> ImageInfo {
        match self {
            Opened::Png(h) => h.info(),
            Opened::Exr(h) => h.info(),
            Opened::Pfm(h) => h.info(),
        }
    }

    /// Decodes the samples; the caller has checked [`ImageInfo::check_fits`], and each decoder
    /// checks again against what it is about to allocate.
    fn decode(self, max_bytes: u64) -> Result<Image, String> {
        match self {
            Opened::Png(h) => (*h).decode(max_bytes),
            Opened::Exr(h) => h.decode(max_bytes),
            Opened::Pfm(h) => h.decode(max_bytes),
        }
    }
}

/// Reads the header of whichever format `reader`'s first bytes announce, allocating at most
/// `max_bytes` for what comes before the pixels, and refuses a file too short to hold what
/// its header declares.
fn open<R: BufRead + Seek>(mut reader: R, max_bytes: u64) -> Result<Opened<R>, String> {
    let file_len = remaining_len(&mut reader).map_err(|e| io_reason(&e))?;
    let start = reader.fill_buf().map_err(|e| io_reason(&e))?;
    let magic: Vec<u8> = start.iter().take(8).copied().collect();
    if magic.starts_with(png::MAGIC) {
        png::Header::open(reader, max_bytes, file_len).map(|h| Opened::Png(Box::new(h)))
    } else if magic.starts_with(exr::MAGIC) {
        exr::Header::open(reader, file_len).map(Opened::Exr)
    } else if magic.starts_with(pfm::MAGIC_RGB) || magic.starts_with(pfm::MAGIC_GREY) {
        pfm::Header::open(reader).map(Opened::Pfm)
    } else if magic.is_empty() {
        Err("empty file; expected a PNG, OpenEXR or PFM image".into())
    } else {
        let shown: Vec<String> = magic.iter().map(|b| format!("{b:02x}")).collect();
        Err(format!(
            "not a PNG, OpenEXR or PFM image (it starts with {})",
            shown.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests;
