//! The work map: rays traced per pixel as a heat map, the thesis's diagnostic of where the
//! work of a frame lies.
//!
//! Colours run blue → cyan → green → yellow → red from the fewest rays any pixel took to the
//! most, on a logarithmic scale: a pixel with `c` rays sits at
//! `log(1 + c − min) / log(1 + max − min)` of the way, so that the few pixels with hundreds of
//! rays do not wash out the many with a handful. A bar along the bottom edge,
//! [`LEGEND_HEIGHT`] pixels tall, shows the scale from left (fewest) to right (most); the
//! summary and `--stats` give both numbers.

/// Height of the legend bar under the map.
pub const LEGEND_HEIGHT: u32 = 16;

/// Control points of the colour scale, evenly spaced from 0 to 1.
const SCALE: [[f32; 3]; 5] = [
    [0.0, 0.0, 0.6],
    [0.0, 0.8, 1.0],
    [0.1, 0.8, 0.1],
    [1.0, 0.9, 0.0],
    [0.9, 0.0, 0.0],
];

/// The scale's colour at `s` in `[0, 1]`, as 8-bit RGB.
fn colour(s: f32) -> [u8; 3] {
    let x = s.clamp(0.0, 1.0) * (SCALE.len() - 1) as f32;
    let i = (x as usize).min(SCALE.len() - 2);
    let f = x - i as f32;
    let (a, b) = (SCALE[i], SCALE[i + 1]);
    [0, 1, 2].map(|c| ((a[c] + (b[c] - a[c]) * f) * 255.0).round() as u8)
}

/// A rendered work map: the image (RGB, `width × (height + LEGEND_HEIGHT)`) and its range.
///
/// ```
/// use renderer::workmap::{LEGEND_HEIGHT, work_map};
///
/// let map = work_map(&[3, 5, 7, 3], 2, 2);
/// assert_eq!((map.min, map.max), (3, 7));
/// assert_eq!(map.height, 2 + LEGEND_HEIGHT);
/// assert_eq!(map.rgb.len(), (map.width * map.height * 3) as usize);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkMap {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels, legend included.
    pub height: u32,
    /// Row-major RGB triples.
    pub rgb: Vec<u8>,
    /// The fewest rays of any pixel (the legend's left end).
    pub min: u32,
    /// The most rays of any pixel (the legend's right end).
    pub max: u32,
}

/// The colours of pixels by the rays they took, on the log scale from `min` to `max` rays;
/// counts outside the range take the colour of its nearer end.
///
/// ```
/// use renderer::workmap::HeatScale;
///
/// let scale = HeatScale::new(1, 100);
/// // The fewest rays are blue, the most red.
/// assert_eq!(scale.colour(1), [0, 0, 153]);
/// assert_eq!(scale.colour(100), [230, 0, 0]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HeatScale {
    min: u32,
    span: f32,
}

impl HeatScale {
    /// The scale from `min` to `max` rays per pixel.
    ///
    /// ```
    /// use renderer::workmap::HeatScale;
    ///
    /// let scale = HeatScale::new(10, 20);
    /// // Counts outside the range take the colour of its nearer end.
    /// assert_eq!(scale.colour(0), scale.colour(10));
    /// ```
    pub fn new(min: u32, max: u32) -> Self {
        Self {
            min,
            span: (max.saturating_sub(min) as f32)
                .ln_1p()
                .max(f32::MIN_POSITIVE),
        }
    }

    /// The colour of `rays` rays, as 8-bit RGB.
    ///
    /// ```
    /// use renderer::workmap::HeatScale;
    ///
    /// let scale = HeatScale::new(1, 100);
    /// assert_ne!(scale.colour(10), scale.colour(50));
    /// ```
    #[inline]
    pub fn colour(&self, rays: u32) -> [u8; 3] {
        colour((rays.saturating_sub(self.min) as f32).ln_1p() / self.span)
    }
}

/// Draws the map of `counts` (row-major, `width × height`).
///
/// ```
/// use renderer::workmap::work_map;
///
/// let map = work_map(&[1, 1, 9, 1], 2, 2);
/// // The one busy pixel is the third, and red.
/// assert_eq!(&map.rgb[6..9], &[230, 0, 0]);
/// assert_eq!(&map.rgb[0..3], &[0, 0, 153]);
/// ```
pub fn work_map(counts: &[u32], width: u32, height: u32) -> WorkMap {
    let min = counts.iter().copied().min().unwrap_or(0);
    let max = counts.iter().copied().max().unwrap_or(0);
    let scale = HeatScale::new(min, max);
    let mut rgb = Vec::with_capacity((width * (height + LEGEND_HEIGHT) * 3) as usize);
    for &c in counts {
        rgb.extend(scale.colour(c));
    }
    for _ in 0..LEGEND_HEIGHT {
        for x in 0..width {
            rgb.extend(colour(x as f32 / (width.max(2) - 1) as f32));
        }
    }
    WorkMap {
        width,
        height: height + LEGEND_HEIGHT,
        rgb,
        min,
        max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_the_scale() {
        let map = work_map(&[3, 5, 7, 3], 2, 2);
        assert_eq!((map.min, map.max), (3, 7));
        // 5 rays: log(3) / log(5) of the way.
        assert_eq!(&map.rgb[3..6], &colour(3f32.ln() / 5f32.ln()));
        assert_eq!(map.rgb.len(), (2 * (2 + LEGEND_HEIGHT) * 3) as usize);
        assert_eq!(&map.rgb[0..3], &colour(0.0));
        assert_eq!(&map.rgb[6..9], &colour(1.0));
        assert_eq!(colour(0.0), [0, 0, 153]);
        assert_eq!(colour(1.0), [230, 0, 0]);
    }
}
