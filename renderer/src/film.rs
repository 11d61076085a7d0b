//! The film: exact fixed-point sums per pixel, and the one pure resolve to 8-bit sRGB.
//!
//! Each ray task converts its weighted contribution to unsigned fixed point
//! ([`to_fixed`]) and adds it to its pixel with an atomic integer add. Integer addition is
//! associative, so the sums, and the image, do not depend on the order in which tasks run:
//! not on the balancer, the thread count, the tile size or the device.
//!
//! ```
//! use renderer::film::Film;
//! use renderer::math::Vec3;
//!
//! let film = Film::new(1, 1, false);
//! // The same contributions in either order give the same sums.
//! film.add(0, Vec3::splat(0.1));
//! film.add(0, Vec3::splat(0.7));
//! let other = Film::new(1, 1, false);
//! other.add(0, Vec3::splat(0.7));
//! other.add(0, Vec3::splat(0.1));
//! assert_eq!(film.sums(), other.sums());
//! ```

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::math::Vec3;

/// Fraction bits of the fixed-point sums: 2^-32 ≈ 2.3e-10, far below what 8-bit output can
/// show, with 32 integer bits of headroom.
pub const FRACTION_BITS: u32 = 32;

/// The largest contribution one task can add, 2^40 (256.0 in colour units): far above the
/// 1.0 at which the resolve saturates, and small enough that a pixel can take 2^24 − 1
/// saturated contributions before its 64-bit sum could wrap. (The weight cutoff bounds the
/// rays of a pixel far below that; see `WeightCutoff` in the scene format.)
pub const MAX_CONTRIBUTION: u64 = 1 << 40;

/// One colour component as fixed point: `x · 2^32`, rounded to nearest (halves away from
/// zero), saturated to `[0, MAX_CONTRIBUTION]`; NaN gives 0.
///
/// ```
/// use renderer::film::{MAX_CONTRIBUTION, to_fixed};
///
/// assert_eq!(to_fixed(1.0), 1 << 32);
/// assert_eq!(to_fixed(-0.5), 0);
/// assert_eq!(to_fixed(1e9), MAX_CONTRIBUTION);
/// assert_eq!(to_fixed(f32::NAN), 0);
/// ```
///
/// Scaling by a power of two is exact in floating point, and rounding to a whole number is
/// exact too, so this is the same on every device that follows IEEE 754.
#[inline]
pub fn to_fixed(x: f32) -> u64 {
    let scaled = (x * (1u64 << FRACTION_BITS) as f32).round();
    // `as` saturates (negative to 0, above the range to the maximum) and maps NaN to 0.
    (scaled as u64).min(MAX_CONTRIBUTION)
}

/// Per-pixel RGB sums, added to from any thread.
///
/// ```
/// use renderer::film::Film;
/// use renderer::math::Vec3;
///
/// let film = Film::new(2, 1, false);
/// std::thread::scope(|s| {
///     s.spawn(|| film.add(1, Vec3::splat(0.25)));
///     s.spawn(|| film.add(1, Vec3::splat(0.25)));
/// });
/// assert_eq!(film.pixel_sums(1), [1 << 31; 3]);
/// assert_eq!(film.resolve()[3..], [188; 3]);
/// ```
#[derive(Debug)]
pub struct Film {
    width: u32,
    height: u32,
    sums: Vec<[AtomicU64; 3]>,
    /// Rays traced per pixel, when a work map was asked for.
    rays: Option<Vec<AtomicU32>>,
}

impl Film {
    /// A black film; `count_rays` also keeps a count of rays per pixel (the work map).
    ///
    /// ```
    /// use renderer::film::Film;
    ///
    /// let film = Film::new(4, 3, true);
    /// assert_eq!(film.sums(), vec![[0; 3]; 12]);
    /// assert_eq!(film.pixel_rays(0), Some(0));
    /// ```
    ///
    /// # Panics
    /// When memory for it cannot be had; [`try_new`](Self::try_new) reports that instead.
    pub fn new(width: u32, height: u32, count_rays: bool) -> Self {
        Self::try_new(width, height, count_rays).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`new`](Self::new), or a one-line error when the memory for the film cannot be had.
    ///
    /// ```
    /// use renderer::film::Film;
    ///
    /// let film = Film::try_new(64, 48, false)?;
    /// assert_eq!(film.pixel_rays(0), None);
    /// assert!(Film::try_new(u32::MAX, u32::MAX, false).is_err());
    /// # Ok::<(), String>(())
    /// ```
    pub fn try_new(width: u32, height: u32, count_rays: bool) -> Result<Self, String> {
        let pixels = width as usize * height as usize;
        let refused = |what: &str, bytes_per_pixel: u64| {
            format!(
                "cannot allocate {} for the {what} of a {width}×{height} frame",
                crate::memory::format_bytes((pixels as u64).saturating_mul(bytes_per_pixel))
            )
        };
        let mut sums = Vec::new();
        sums.try_reserve_exact(pixels)
            .map_err(|_| refused("film", 24))?;
        sums.extend((0..pixels).map(|_| Default::default()));
        let rays = if count_rays {
            let mut rays = Vec::new();
            rays.try_reserve_exact(pixels)
                .map_err(|_| refused("ray counts", 4))?;
            rays.extend((0..pixels).map(|_| AtomicU32::new(0)));
            Some(rays)
        } else {
            None
        };
        Ok(Self {
            width,
            height,
            sums,
            rays,
        })
    }

    /// A film holding `sums` (and `rays`, if counted), row-major: what another device
    /// accumulated, to be resolved here like any other.
    ///
    /// ```
    /// use renderer::film::Film;
    ///
    /// let film = Film::from_sums(2, 1, &[[0; 3], [1 << 32; 3]], Some(&[1, 3]));
    /// assert_eq!(film.resolve(), [0, 0, 0, 255, 255, 255]);
    /// assert_eq!(film.ray_counts(), Some(vec![1, 3]));
    /// ```
    ///
    /// # Panics
    /// When the lengths are not `width × height`.
    pub fn from_sums(width: u32, height: u32, sums: &[[u64; 3]], rays: Option<&[u32]>) -> Self {
        let pixels = width as usize * height as usize;
        assert_eq!(sums.len(), pixels, "one sum per pixel");
        assert!(
            rays.is_none_or(|r| r.len() == pixels),
            "one count per pixel"
        );
        Self {
            width,
            height,
            sums: sums.iter().map(|s| s.map(AtomicU64::new)).collect(),
            rays: rays.map(|r| r.iter().map(|&c| AtomicU32::new(c)).collect()),
        }
    }

    /// Adds `sums` (and `rays`), row-major, to this film's: what another device accumulated
    /// for part of the same frame. Integer addition, so the total does not depend on which
    /// device traced what.
    ///
    /// ```
    /// use renderer::film::Film;
    /// use renderer::math::Vec3;
    ///
    /// let film = Film::new(2, 1, false);
    /// film.add(0, Vec3::splat(0.5));
    /// film.add_sums(&[[1 << 31; 3], [1; 3]], None);
    /// assert_eq!(film.sums(), [[1 << 32; 3], [1; 3]]);
    /// ```
    ///
    /// # Panics
    /// When the lengths are not this film's pixels, or `rays` is given to a film that does
    /// not count them or left out for one that does: the work map would be wrong.
    pub fn add_sums(&self, sums: &[[u64; 3]], rays: Option<&[u32]>) {
        assert_eq!(sums.len(), self.sums.len(), "one sum per pixel");
        assert_eq!(
            rays.is_some(),
            self.rays.is_some(),
            "ray counts from a device exactly when the film keeps them"
        );
        for (mine, theirs) in self.sums.iter().zip(sums) {
            for (m, &t) in mine.iter().zip(theirs) {
                // Relaxed, as in `add`.
                m.fetch_add(t, Ordering::Relaxed);
            }
        }
        if let (Some(mine), Some(theirs)) = (&self.rays, rays) {
            assert_eq!(theirs.len(), mine.len(), "one count per pixel");
            for (m, &t) in mine.iter().zip(theirs) {
                m.fetch_add(t, Ordering::Relaxed);
            }
        }
    }

    /// Width in pixels.
    ///
    /// ```
    /// # use renderer::film::Film;
    /// assert_eq!(Film::new(4, 3, false).width(), 4);
    /// ```
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    ///
    /// ```
    /// # use renderer::film::Film;
    /// assert_eq!(Film::new(4, 3, false).height(), 3);
    /// ```
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Adds a contribution to pixel `pixel` (row-major index).
    ///
    /// ```
    /// use renderer::film::Film;
    /// use renderer::math::Vec3;
    ///
    /// let film = Film::new(2, 2, false);
    /// film.add(3, Vec3::new(1.0, 0.5, 0.0));
    /// assert_eq!(film.pixel_sums(3), [1 << 32, 1 << 31, 0]);
    /// ```
    #[inline]
    pub fn add(&self, pixel: u32, rgb: Vec3) {
        let sums = &self.sums[pixel as usize];
        for (sum, c) in sums.iter().zip(rgb.to_array()) {
            let fixed = to_fixed(c);
            if fixed != 0 {
                // Relaxed: the final read comes after every worker has been joined, which
                // orders all these adds before it. A watcher that reads while the frame
                // renders synchronises through the pixel's stamp (`FrameWatch::stamp`, a
                // Release store after the camera ray's adds) and otherwise only shows what it
                // happens to see; no other data hangs on the sums.
                sum.fetch_add(fixed, Ordering::Relaxed);
            }
        }
    }

    /// Counts `rays` rays traced for pixel `pixel`, if the film keeps counts.
    ///
    /// ```
    /// use renderer::film::Film;
    ///
    /// let counted = Film::new(2, 1, true);
    /// counted.count_rays(1, 5);
    /// assert_eq!(counted.pixel_rays(1), Some(5));
    /// let uncounted = Film::new(2, 1, false);
    /// uncounted.count_rays(1, 5);
    /// assert_eq!(uncounted.pixel_rays(1), None);
    /// ```
    #[inline]
    pub fn count_rays(&self, pixel: u32, rays: u32) {
        if let Some(counts) = &self.rays {
            // Relaxed, as in `add`.
            counts[pixel as usize].fetch_add(rays, Ordering::Relaxed);
        }
    }

    /// The fixed-point sums of pixel `pixel` (row-major index) as they stand.
    ///
    /// While workers still add to the film this is a snapshot for display: it includes what
    /// was added before a synchronising read (such as
    /// [`FrameWatch::worker_of`](crate::watch::FrameWatch::worker_of) returning `Some`),
    /// perhaps more.
    ///
    /// ```
    /// use renderer::film::Film;
    /// use renderer::math::Vec3;
    ///
    /// let film = Film::new(1, 1, false);
    /// film.add(0, Vec3::new(0.0, 0.0, 2.0));
    /// assert_eq!(film.pixel_sums(0), [0, 0, 2 << 32]);
    /// ```
    #[inline]
    pub fn pixel_sums(&self, pixel: usize) -> [u64; 3] {
        // Relaxed: see `add`; a watcher's own Acquire read orders what it needs.
        self.sums[pixel]
            .each_ref()
            .map(|c| c.load(Ordering::Relaxed))
    }

    /// Rays traced so far for pixel `pixel`, if the film keeps counts.
    ///
    /// ```
    /// # use renderer::film::Film;
    /// let film = Film::new(1, 1, true);
    /// film.count_rays(0, 2);
    /// film.count_rays(0, 3);
    /// assert_eq!(film.pixel_rays(0), Some(5));
    /// ```
    #[inline]
    pub fn pixel_rays(&self, pixel: usize) -> Option<u32> {
        // Relaxed: as `pixel_sums`.
        self.rays.as_ref().map(|r| r[pixel].load(Ordering::Relaxed))
    }

    /// The fixed-point sums, row-major.
    ///
    /// ```
    /// # use renderer::film::Film;
    /// # use renderer::math::Vec3;
    /// let film = Film::new(2, 1, false);
    /// film.add(1, Vec3::ONE);
    /// assert_eq!(film.sums(), [[0; 3], [1 << 32; 3]]);
    /// ```
    pub fn sums(&self) -> Vec<[u64; 3]> {
        self.sums
            .iter()
            .map(|s| s.each_ref().map(|c| c.load(Ordering::Relaxed)))
            .collect()
    }

    /// Rays per pixel, row-major, if counted.
    ///
    /// ```
    /// # use renderer::film::Film;
    /// let film = Film::new(2, 1, true);
    /// film.count_rays(0, 7);
    /// assert_eq!(film.ray_counts(), Some(vec![7, 0]));
    /// assert_eq!(Film::new(2, 1, false).ray_counts(), None);
    /// ```
    pub fn ray_counts(&self) -> Option<Vec<u32>> {
        self.rays
            .as_ref()
            .map(|r| r.iter().map(|c| c.load(Ordering::Relaxed)).collect())
    }

    /// The image as linear light, row-major RGB triples of `f32`: each sum over 2^32, in
    /// `f64` (exact) and then rounded once to `f32`, so it is as stable as the sums are.
    ///
    /// ```
    /// # use renderer::film::Film;
    /// # use renderer::math::Vec3;
    /// let film = Film::new(1, 1, false);
    /// film.add(0, Vec3::new(0.25, 0.5, 3.0));
    /// assert_eq!(film.linear_rgb(), [0.25, 0.5, 3.0]);
    /// ```
    pub fn linear_rgb(&self) -> Vec<f32> {
        let unit = (1u64 << FRACTION_BITS) as f64;
        self.sums()
            .iter()
            .flat_map(|s| s.map(|c| (c as f64 / unit) as f32))
            .collect()
    }

    /// The image as 8-bit sRGB, row-major RGB triples.
    ///
    /// ```
    /// # use renderer::film::Film;
    /// # use renderer::math::Vec3;
    /// let film = Film::new(2, 1, false);
    /// film.add(0, Vec3::new(1.0, 0.0, 2.0));
    /// assert_eq!(film.resolve(), [255, 0, 255, 0, 0, 0]);
    /// ```
    pub fn resolve(&self) -> Vec<u8> {
        self.sums().iter().flat_map(|&s| resolve_pixel(s)).collect()
    }
}

/// One pixel's sums to 8-bit sRGB: the linear value is clamped to `[0, 1]` and encoded with
/// the sRGB curve, rounded to the nearest code. Pure integer work against a table of
/// thresholds fixed at compile time, so it is the same everywhere.
///
/// ```
/// use renderer::film::resolve_pixel;
///
/// assert_eq!(resolve_pixel([0, 1 << 32, 5 << 32]), [0, 255, 255]);
/// // Linear 0.5 is sRGB code 188.
/// assert_eq!(resolve_pixel([1 << 31; 3]), [188; 3]);
/// ```
#[inline]
pub fn resolve_pixel(sums: [u64; 3]) -> [u8; 3] {
    sums.map(srgb_code)
}

/// The sRGB code of one fixed-point sum: the number of thresholds at or below it.
///
/// The code of the bucket's lower end is looked up, then the one or two thresholds inside the
/// bucket are stepped over: the same answer as a binary search over the thresholds, in a
/// fraction of the time (the viewer resolves the frame many times a second).
#[inline]
fn srgb_code(sum: u64) -> u8 {
    let bucket = sum >> BUCKET_SHIFT;
    if bucket >= BUCKETS as u64 {
        // At or above 1.0: white, whatever the sum.
        return 255;
    }
    let mut code = BUCKET_CODES[bucket as usize] as usize;
    while code < SRGB_THRESHOLDS.len() && SRGB_THRESHOLDS[code] <= sum {
        code += 1;
    }
    code as u8
}

/// Buckets of [`BUCKET_CODES`] span `[0, 1)` in linear value.
const BUCKETS: usize = 1 << 12;
/// `sum >> BUCKET_SHIFT` is a sum's bucket.
const BUCKET_SHIFT: u32 = FRACTION_BITS - 12;

/// `BUCKET_CODES[i]`: the sRGB code of the sum `i << BUCKET_SHIFT`, the lower end of bucket `i`.
const BUCKET_CODES: [u8; BUCKETS] = bucket_codes();

const fn bucket_codes() -> [u8; BUCKETS] {
    let mut codes = [0u8; BUCKETS];
    let mut code = 0;
    let mut i = 0;
    while i < BUCKETS {
        let low = (i as u64) << BUCKET_SHIFT;
        while code < SRGB_THRESHOLDS.len() && SRGB_THRESHOLDS[code] <= low {
            code += 1;
        }
        codes[i] = code as u8;
        i += 1;
    }
    codes
}

/// `SRGB_THRESHOLDS[k - 1]`: the smallest fixed-point sum whose sRGB code is at least `k`,
/// i.e. the linear value at which `255 · encode(v)` reaches `k − ½`.
const SRGB_THRESHOLDS: [u64; 255] = srgb_thresholds();

const fn srgb_thresholds() -> [u64; 255] {
    let mut table = [0u64; 255];
    let mut k = 1;
    while k <= 255 {
        let code = (k as f64 - 0.5) / 255.0;
        let linear = srgb_decode(code);
        let fixed = linear * (1u64 << FRACTION_BITS) as f64;
        // The smallest whole sum at or above the boundary.
        let floor = fixed as u64;
        table[k - 1] = if (floor as f64) < fixed {
            floor + 1
        } else {
            floor
        };
        k += 1;
    }
    table
}

/// The sRGB transfer function's inverse, with `x^2.4 = x² · (x²)^(1/5)` and the fifth root
/// by bisection, so that it needs no math library and runs at compile time.
const fn srgb_decode(c: f64) -> f64 {
    if c <= 0.04045 {
        return c / 12.92;
    }
    let x = (c + 0.055) / 1.055;
    let square = x * x;
    let (mut lo, mut hi) = (0.0, 1.0);
    let mut i = 0;
    while i < 64 {
        let mid = (lo + hi) / 2.0;
        if mid * mid * mid * mid * mid < square {
            lo = mid;
        } else {
            hi = mid;
        }
        i += 1;
    }
    square * lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_rounds_and_saturates() {
        assert_eq!(to_fixed(0.0), 0);
        assert_eq!(to_fixed(-1.0), 0);
        assert_eq!(to_fixed(f32::NAN), 0);
        assert_eq!(to_fixed(1.0), 1 << 32);
        assert_eq!(to_fixed(0.5), 1 << 31);
        assert_eq!(to_fixed(f32::INFINITY), MAX_CONTRIBUTION);
        assert_eq!(to_fixed(1e30), MAX_CONTRIBUTION);
        // 2^-33 is exactly half a unit: rounds away from zero.
        assert_eq!(to_fixed(2f32.powi(-33)), 1);
        assert_eq!(to_fixed(2f32.powi(-34)), 0);
    }

    #[test]
    fn resolve_matches_the_srgb_curve() {
        let encode = |v: f64| {
            let s = if v <= 0.0031308 {
                v * 12.92
            } else {
                1.055 * v.powf(1.0 / 2.4) - 0.055
            };
            (s * 255.0).round() as u8
        };
        for i in 0..=4000 {
            let v = i as f64 / 4000.0;
            let fixed = (v * (1u64 << 32) as f64) as u64;
            let got = resolve_pixel([fixed; 3])[0];
            let want = encode(v);
            assert!(got.abs_diff(want) <= 1, "v = {v}: {got} vs {want}");
            // Away from a code boundary the two agree exactly.
            let s = encode(v) as f64;
            let exact = if v <= 0.0031308 {
                v * 12.92
            } else {
                1.055 * v.powf(1.0 / 2.4) - 0.055
            } * 255.0;
            if (exact - s).abs() < 0.49 {
                assert_eq!(got, want, "v = {v}");
            }
        }
        assert_eq!(resolve_pixel([0, 1 << 32, u64::MAX]), [0, 255, 255]);
    }

    #[test]
    fn bucketed_lookup_agrees_with_a_search_of_the_thresholds() {
        let search = |s: u64| SRGB_THRESHOLDS.partition_point(|&t| t <= s) as u8;
        let mut probes: Vec<u64> = vec![0, 1, u64::MAX, 1 << 32, (1 << 32) - 1, 1 << 40];
        for &t in &SRGB_THRESHOLDS {
            probes.extend([t - 1, t, t + 1]);
        }
        for i in 0..=BUCKETS as u64 {
            let low = i << BUCKET_SHIFT;
            probes.extend([low.saturating_sub(1), low, low + 1]);
        }
        // And a dense walk over the dark end, where the curve is steepest.
        probes.extend((0..200_000u64).map(|k| k * 97));
        for s in probes {
            assert_eq!(srgb_code(s), search(s), "sum {s}");
        }
    }

    #[test]
    fn a_film_too_large_to_allocate_is_an_error_not_an_abort() {
        let e = Film::try_new(u32::MAX, u32::MAX, false).unwrap_err();
        assert!(e.starts_with("cannot allocate "), "{e}");
        assert!(
            e.ends_with("for the film of a 4294967295×4294967295 frame"),
            "{e}"
        );
    }

    #[test]
    fn linear_values_are_the_sums_over_two_to_the_32() {
        let film = Film::from_sums(2, 1, &[[1 << 32, 1 << 31, 0], [3 << 30, 1, 7 << 32]], None);
        assert_eq!(
            film.linear_rgb(),
            vec![1.0, 0.5, 0.0, 0.75, 2f32.powi(-32), 7.0]
        );
    }

    #[test]
    fn sums_are_order_free() {
        let a = Film::new(1, 1, false);
        let b = Film::new(1, 1, false);
        let parts = [
            Vec3::new(0.1, 0.2, 0.3),
            Vec3::new(1e-7, 0.5, 0.0),
            Vec3::new(0.33, 0.0, 7.0),
        ];
        for p in parts {
            a.add(0, p);
        }
        for p in parts.iter().rev() {
            b.add(0, *p);
        }
        assert_eq!(a.sums(), b.sums());
    }
}
