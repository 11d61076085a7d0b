//! Comparing two images pixel by pixel: the validation that balancers agree, and `raylb
//! compare` for any two images, as renderer users know it from pbrt's `imgtool diff`.
//!
//! Images are compared at their native depth, one pixel at a time, without a widened copy of
//! either: two 16-bit images compare as 16-bit codes, so a one-code difference counts. Where the
//! layouts differ, grey counts as R = G = B and a missing alpha as opaque; an 8-bit sample
//! meets a 16-bit one widened by ×257 (0 → 0, 255 → 65535), and an integer sample meets a float
//! one divided by its maximum.

use std::fmt;

use crate::image_io::{Channels, Image, Samples};
use crate::memory::{AllocError, try_with_capacity};

/// What two images' comparison found.
///
/// ```
/// use renderer::compare::{Comparison, compare};
/// use renderer::image_io::{Channels, Image, Samples};
///
/// let a = Image::new(2, 1, Channels::Grey, Samples::U8(vec![0, 10]))?;
/// let b = Image::new(1, 1, Channels::Grey, Samples::U8(vec![0]))?;
/// assert_eq!(compare(&a, &b), Comparison::Sizes { a: (2, 1), b: (1, 1) });
/// assert!(matches!(compare(&a, &a), Comparison::Pixels(p) if p.is_identical()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Comparison {
    /// The images have different sizes, `(width, height)` each: a difference, not an error.
    Sizes {
        /// The first image's size.
        a: (u32, u32),
        /// The second image's size.
        b: (u32, u32),
    },
    /// The images have the same size; this is how their pixels compare.
    Pixels(PixelComparison),
}

/// The units samples are compared in: the finest both images can be seen in.
///
/// ```
/// use renderer::compare::{Comparison, Units, compare};
/// use renderer::image_io::{Channels, Image, Samples};
///
/// let eight = Image::new(1, 1, Channels::Grey, Samples::U8(vec![255]))?;
/// let float = Image::new(1, 1, Channels::Grey, Samples::F32(vec![1.0]))?;
/// let Comparison::Pixels(p) = compare(&eight, &float) else { panic!() };
/// // An 8-bit sample meets a float one divided by its maximum.
/// assert_eq!(p.units, Units::Float);
/// assert!(p.is_identical());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Units {
    /// Both images are 8-bit: codes 0 to 255.
    Eight,
    /// Both are integer and at least one is 16-bit: codes 0 to 65535.
    Sixteen,
    /// At least one is float: 1.0 is full scale (HDR values go beyond it).
    Float,
}

impl Units {
    /// The value of full scale (and of an opaque alpha) in these units.
    ///
    /// ```
    /// use renderer::compare::Units;
    ///
    /// assert_eq!(Units::Eight.full_scale(), 255.0);
    /// assert_eq!(Units::Sixteen.full_scale(), 65535.0);
    /// assert_eq!(Units::Float.full_scale(), 1.0);
    /// ```
    pub fn full_scale(self) -> f64 {
        match self {
            Units::Eight => 255.0,
            Units::Sixteen => 65535.0,
            Units::Float => 1.0,
        }
    }

    fn of(a: &Image, b: &Image) -> Units {
        match (a.samples(), b.samples()) {
            (Samples::U8(_), Samples::U8(_)) => Units::Eight,
            (Samples::F32(_), _) | (_, Samples::F32(_)) => Units::Float,
            _ => Units::Sixteen,
        }
    }
}

/// How the pixels of two images of the same size compare.
///
/// ```
/// use renderer::compare::{Comparison, Units, compare};
/// use renderer::image_io::{Channels, Image, Samples};
///
/// let a = Image::new(2, 1, Channels::Grey, Samples::U8(vec![0, 10]))?;
/// let b = Image::new(2, 1, Channels::Grey, Samples::U8(vec![0, 20]))?;
/// let Comparison::Pixels(p) = compare(&a, &b) else { panic!("same sizes") };
/// assert_eq!((p.differing, p.largest, p.units), (1, 10.0, Units::Eight));
/// assert_eq!(p.mse, (10.0 / 255.0) * (10.0 / 255.0) / 2.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PixelComparison {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The units of `largest` and of the first differing pixel's values.
    pub units: Units,
    /// The channels compared: R (grey) or R, G, B, then A where either image has alpha.
    pub channels: &'static [&'static str],
    /// Pixels that differ in any channel.
    pub differing: u64,
    /// The largest difference of one channel, in `units` (infinite where a value is NaN or
    /// infinite in one image and not the same in the other).
    pub largest: f64,
    /// The first differing pixel in row-major order, if any.
    pub first: Option<FirstDifference>,
    /// The mean squared difference over every compared channel of every pixel, with samples
    /// normalised so that full scale is 1.
    pub mse: f64,
}

/// A differing pixel and its values in each image, in the comparison's units, one per compared
/// channel.
///
/// ```
/// use renderer::compare::{Comparison, compare};
/// use renderer::image_io::{Channels, Image, Samples};
///
/// let a = Image::new(2, 1, Channels::Grey, Samples::U8(vec![0, 10]))?;
/// let b = Image::new(2, 1, Channels::Grey, Samples::U8(vec![0, 20]))?;
/// let Comparison::Pixels(p) = compare(&a, &b) else { panic!("same sizes") };
/// let first = p.first.unwrap();
/// assert_eq!((first.x, first.y, first.a, first.b), (1, 0, vec![10.0], vec![20.0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FirstDifference {
    /// Column.
    pub x: u32,
    /// Row, from the top.
    pub y: u32,
    /// The pixel in the first image.
    pub a: Vec<f32>,
    /// The pixel in the second image.
    pub b: Vec<f32>,
}

impl PixelComparison {
    /// Whether every pixel is the same.
    ///
    /// ```
    /// # use renderer::compare::{Comparison, compare};
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// let a = Image::new(2, 1, Channels::Grey, Samples::U8(vec![0, 10]))?;
    /// let Comparison::Pixels(p) = compare(&a, &a) else { panic!("same sizes") };
    /// assert!(p.is_identical());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_identical(&self) -> bool {
        self.differing == 0
    }

    /// Pixels compared.
    ///
    /// ```
    /// # use renderer::compare::{Comparison, compare};
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// let a = Image::new(2, 3, Channels::Grey, Samples::U8(vec![0; 6]))?;
    /// let Comparison::Pixels(p) = compare(&a, &a) else { panic!("same sizes") };
    /// assert_eq!(p.pixels(), 6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// The largest difference of one channel with full scale as 1.
    ///
    /// ```
    /// # use renderer::compare::{Comparison, compare};
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// let a = Image::new(1, 1, Channels::Grey, Samples::U16(vec![0]))?;
    /// let b = Image::new(1, 1, Channels::Grey, Samples::U16(vec![65535]))?;
    /// let Comparison::Pixels(p) = compare(&a, &b) else { panic!("same sizes") };
    /// assert_eq!(p.largest_normalised(), 1.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn largest_normalised(&self) -> f64 {
        self.largest / self.units.full_scale()
    }

    /// Peak signal-to-noise ratio in dB, `10·log10(1 / MSE)` with full scale as 1: infinite for
    /// identical images.
    ///
    /// ```
    /// # use renderer::compare::{Comparison, compare};
    /// # use renderer::image_io::{Channels, Image, Samples};
    /// let a = Image::new(1, 1, Channels::Grey, Samples::F32(vec![0.0]))?;
    /// let b = Image::new(1, 1, Channels::Grey, Samples::F32(vec![0.1]))?;
    /// let Comparison::Pixels(p) = compare(&a, &b) else { panic!("same sizes") };
    /// // An MSE of about 0.01 is 20 dB; identical images are infinitely far above the noise.
    /// assert!((p.psnr() - 20.0).abs() < 1e-3);
    /// assert!(matches!(compare(&a, &a), Comparison::Pixels(q) if q.psnr() == f64::INFINITY));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn psnr(&self) -> f64 {
        if self.mse == 0.0 {
            f64::INFINITY
        } else {
            10.0 * (1.0 / self.mse).log10()
        }
    }
}

/// The two images' sizes, or how their pixels compare.
///
/// ```
/// use renderer::compare::{Comparison, compare};
/// use renderer::image_io::{Channels, Image, Samples};
///
/// let a = Image::new(2, 1, Channels::Rgb, Samples::U8(vec![0, 0, 0, 9, 9, 9]))?;
/// let b = Image::new(2, 1, Channels::Rgb, Samples::U8(vec![0, 0, 0, 9, 9, 8]))?;
/// let report = compare(&a, &b);
/// assert!(report.to_string().starts_with("differ: 1 of 2 pixels"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compare(a: &Image, b: &Image) -> Comparison {
    if (a.width(), a.height()) != (b.width(), b.height()) {
        return Comparison::Sizes {
            a: (a.width(), a.height()),
            b: (b.width(), b.height()),
        };
    }
    Comparison::Pixels(compare_pixels(a, b))
}

/// Compares two images of the same size.
fn compare_pixels(a: &Image, b: &Image) -> PixelComparison {
    let units = Units::of(a, b);
    let (indices, channels) = compared_channels(a.channels(), b.channels());
    let mut report = PixelComparison {
        width: a.width(),
        height: a.height(),
        units,
        channels,
        differing: 0,
        largest: 0.0,
        first: None,
        mse: 0.0,
    };
    let scale = units.full_scale();
    let mut squares = 0.0f64;
    let width = a.width() as usize;
    let (mut block_a, mut block_b) = ([[0f32; 4]; BLOCK], [[0f32; 4]; BLOCK]);
    for (start, len) in blocks(report.pixels() as usize) {
        if same_samples(a, b, start, len) {
            continue;
        }
        convert(a, start, units, &mut block_a[..len]);
        convert(b, start, units, &mut block_b[..len]);
        for (k, (pa, pb)) in block_a[..len].iter().zip(&block_b[..len]).enumerate() {
            let mut differs = false;
            for &c in indices {
                let d = difference(pa[c], pb[c]);
                if d != 0.0 {
                    differs = true;
                    report.largest = report.largest.max(d);
                    squares += (d / scale) * (d / scale);
                }
            }
            if differs {
                report.differing += 1;
                if report.first.is_none() {
                    let i = start + k;
                    report.first = Some(FirstDifference {
                        x: (i % width) as u32,
                        y: (i / width) as u32,
                        a: indices.iter().map(|&c| pa[c]).collect(),
                        b: indices.iter().map(|&c| pb[c]).collect(),
                    });
                }
            }
        }
    }
    report.mse = squares / (report.pixels() as f64 * indices.len() as f64);
    report
}

/// An 8-bit RGB image of where two images of the same size differ: each channel is the pixel's
/// difference in that channel (or in alpha, where that is larger), with full scale as 1, scaled
/// so that the largest difference is 255 and any difference at least 1, so that one-code
/// differences show; black where the images agree, white where a value is NaN or infinite in
/// only one of them. `None` when the sizes differ; an error where the memory for it cannot be
/// had.
///
/// ```
/// use renderer::compare::difference_image;
/// use renderer::image_io::{Channels, Image, Samples};
///
/// let a = Image::new(2, 1, Channels::Grey, Samples::U8(vec![0, 10]))?;
/// let b = Image::new(2, 1, Channels::Grey, Samples::U8(vec![0, 11]))?;
/// // Black where the images agree; the largest difference, one code here, is 255.
/// let rgb = difference_image(&a, &b)?.expect("same sizes");
/// assert_eq!(rgb, [0, 0, 0, 255, 255, 255]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn difference_image(a: &Image, b: &Image) -> Result<Option<Vec<u8>>, AllocError> {
    if (a.width(), a.height()) != (b.width(), b.height()) {
        return Ok(None);
    }
    let units = Units::of(a, b);
    let pixels = a.width() as usize * a.height() as usize;
    let mut out = try_with_capacity(pixels * 3, "the difference image")?;
    let mut largest = 0.0f64;
    each_drawn(a, b, units, |drawn| {
        for d in drawn.into_iter().filter(|d| d.is_finite()) {
            largest = largest.max(d);
        }
    });
    each_drawn(a, b, units, |drawn| {
        out.extend(drawn.map(|d| {
            if d == 0.0 {
                0
            } else if !d.is_finite() {
                255
            } else {
                (d / largest * 255.0).round().clamp(1.0, 255.0) as u8
            }
        }));
    });
    Ok(Some(out))
}

/// Calls `draw` with each pixel's difference as [`difference_image`] draws it: in each channel
/// its own or alpha's, whichever is larger.
fn each_drawn(a: &Image, b: &Image, units: Units, mut draw: impl FnMut([f64; 3])) {
    let pixels = a.width() as usize * a.height() as usize;
    let (mut block_a, mut block_b) = ([[0f32; 4]; BLOCK], [[0f32; 4]; BLOCK]);
    for (start, len) in blocks(pixels) {
        convert(a, start, units, &mut block_a[..len]);
        convert(b, start, units, &mut block_b[..len]);
        for (pa, pb) in block_a[..len].iter().zip(&block_b[..len]) {
            let alpha = difference(pa[3], pb[3]);
            draw([0, 1, 2].map(|c| difference(pa[c], pb[c]).max(alpha)));
        }
    }
}

/// The indices into [`convert`]'s pixels that are compared, and their names: one grey value where
/// both images are grey (R = G = B there), else R, G and B; and alpha where either has it.
fn compared_channels(a: Channels, b: Channels) -> (&'static [usize], &'static [&'static str]) {
    match (a.is_grey() && b.is_grey(), a.has_alpha() || b.has_alpha()) {
        (true, false) => (&[0], &["Y"]),
        (true, true) => (&[0, 3], &["Y", "A"]),
        (false, false) => (&[0, 1, 2], &["R", "G", "B"]),
        (false, true) => (&[0, 1, 2, 3], &["R", "G", "B", "A"]),
    }
}

/// Pixels converted at a time: 256 of them take 4 KiB per image, which stays in the L1 cache,
/// and are enough that the layouts are looked at once per block rather than once per pixel.
/// Measured on two 23000×23000 1-bit PNGs one pixel apart (2-core development machine): the
/// whole `raylb compare` takes 2.2 s with blocks, most of it decoding, and 14 s when the
/// layouts are matched per pixel.
const BLOCK: usize = 256;

/// `(start, len)` of the blocks that cover `pixels` pixels.
fn blocks(pixels: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..pixels)
        .step_by(BLOCK)
        .map(move |start| (start, BLOCK.min(pixels - start)))
}

/// Whether pixels `start..start + len` are stored the same in both images (which makes them
/// identical; images of different layouts are never taken for the same here).
fn same_samples(a: &Image, b: &Image, start: usize, len: usize) -> bool {
    if a.channels() != b.channels() {
        return false;
    }
    let n = a.channels().count();
    let range = start * n..(start + len) * n;
    match (a.samples(), b.samples()) {
        (Samples::U8(x), Samples::U8(y)) => x[range.clone()] == y[range],
        (Samples::U16(x), Samples::U16(y)) => x[range.clone()] == y[range],
        // Bit for bit: the same bits are the same value, NaN included.
        (Samples::F32(x), Samples::F32(y)) => {
            bytemuck::cast_slice::<f32, u32>(&x[range.clone()])
                == bytemuck::cast_slice::<f32, u32>(&y[range])
        }
        _ => false,
    }
}

/// Pixels `start..start + out.len()` of `image` as R, G, B, A in `units`: grey repeated into R,
/// G and B, a missing alpha opaque. Every integer below 2²⁴ is exact in `f32`, so integer codes
/// compare exactly.
fn convert(image: &Image, start: usize, units: Units, out: &mut [[f32; 4]]) {
    let channels = image.channels();
    let opaque = units.full_scale() as f32;
    match (image.samples(), units) {
        (Samples::U8(v), Units::Sixteen) => {
            spread(v, channels, start, opaque, out, |s| f32::from(s) * 257.0)
        }
        (Samples::U8(v), Units::Float) => {
            spread(v, channels, start, opaque, out, |s| f32::from(s) / 255.0)
        }
        (Samples::U8(v), Units::Eight) => spread(v, channels, start, opaque, out, f32::from),
        (Samples::U16(v), Units::Float) => {
            spread(v, channels, start, opaque, out, |s| f32::from(s) / 65535.0)
        }
        // `Units::of` never puts 16-bit samples in 8-bit units.
        (Samples::U16(v), Units::Sixteen | Units::Eight) => {
            spread(v, channels, start, opaque, out, f32::from)
        }
        (Samples::F32(v), _) => spread(v, channels, start, opaque, out, |s| s),
    }
}

fn spread<T: Copy>(
    samples: &[T],
    channels: Channels,
    start: usize,
    opaque: f32,
    out: &mut [[f32; 4]],
    value: impl Fn(T) -> f32,
) {
    let n = channels.count();
    let pixels = samples[start * n..(start + out.len()) * n]
        .chunks_exact(n)
        .zip(out);
    match channels {
        Channels::Grey => pixels.for_each(|(p, o)| {
            let v = value(p[0]);
            *o = [v, v, v, opaque];
        }),
        Channels::GreyAlpha => pixels.for_each(|(p, o)| {
            let v = value(p[0]);
            *o = [v, v, v, value(p[1])];
        }),
        Channels::Rgb => pixels.for_each(|(p, o)| {
            *o = [value(p[0]), value(p[1]), value(p[2]), opaque];
        }),
        Channels::Rgba => pixels.for_each(|(p, o)| {
            *o = [value(p[0]), value(p[1]), value(p[2]), value(p[3])];
        }),
    }
}

/// `|x − y|`, zero where the two are the same value (NaN being the same as NaN), infinite where
/// a NaN or infinity meets anything else.
fn difference(x: f32, y: f32) -> f64 {
    if x == y || (x.is_nan() && y.is_nan()) {
        return 0.0;
    }
    let d = (f64::from(x) - f64::from(y)).abs();
    if d.is_nan() { f64::INFINITY } else { d }
}

impl fmt::Display for Comparison {
    /// What `raylb compare` prints: `differ: sizes 512×512 vs 256×256`, or a first line
    /// (`identical: W×H`, or `differ: N of M pixels, largest channel difference D, first at
    /// (x, y): [..] vs [..]`) and a second with the MSE, PSNR and largest difference with full
    /// scale as 1.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = match self {
            Comparison::Sizes { a, b } => {
                return write!(f, "differ: sizes {}×{} vs {}×{}", a.0, a.1, b.0, b.1);
            }
            Comparison::Pixels(report) => report,
        };
        match &report.first {
            None => writeln!(f, "identical: {}×{}", report.width, report.height)?,
            Some(first) => writeln!(
                f,
                "differ: {} of {} pixels, largest channel difference {}{}, first at ({}, {}): {} vs {}",
                report.differing,
                report.pixels(),
                report.units.show(report.largest),
                if report.largest.is_finite() {
                    ""
                } else {
                    " (a NaN or an infinity against another value)"
                },
                first.x,
                first.y,
                Values(&first.a),
                Values(&first.b)
            )?,
        }
        let mse = if report.mse == 0.0 {
            "0".to_owned()
        } else {
            format!("{:.3e}", report.mse)
        };
        write!(
            f,
            "mse {mse}, psnr {:.2} dB, largest difference {} of full scale",
            report.psnr(),
            significant(report.largest_normalised())
        )
    }
}

/// `x` to four significant digits without an exponent (`0.2000`, `0.003922`, `0.00001526`), so
/// that one code of 8 or 16 bits reads as what it is; `0` and `inf` as such.
fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return x.to_string();
    }
    let decimals = (3 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.decimals$}")
}

impl Units {
    /// A difference in these units: integer codes as integers, floats in their shortest form.
    fn show(self, d: f64) -> String {
        match self {
            Units::Float => (d as f32).to_string(),
            Units::Eight | Units::Sixteen => d.to_string(),
        }
    }
}

/// Values as `[12, 200, 3]` (integer codes) or `[0.25, 1.5, 0]` (floats), shortest form.
struct Values<'a>(&'a [f32]);

impl fmt::Display for Values<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{v}")?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests;
