//! The picture a viewer shows of a frame, drawn while the frame renders.
//!
//! A [`Preview`] holds one 0RGB word per pixel, as a window takes them. Drawing a frame that
//! is still rendering touches only the pixels whose camera ray has been traced (their
//! [`FrameWatch`] stamp is set); the rest keep what they showed before: the previous frame,
//! or a neutral grey at first. In the [`Layer::Image`] layer a finished frame draws exactly
//! the bytes [`Film::resolve`] gives, so a screenshot of it is the frame's PNG.
//!
//! ```
//! use renderer::film::Film;
//! use renderer::preview::{Layer, Pixels, Preview};
//! use renderer::watch::FrameWatch;
//!
//! let film = Film::new(4, 4, false);
//! let mut preview = Preview::new(4, 4);
//! preview.draw(&film, &FrameWatch::new(4, 4), Layer::Image, Pixels::All);
//! assert_eq!(preview.to_rgb(), film.resolve());
//! ```

use crate::film::{Film, resolve_pixel};
use crate::watch::FrameWatch;
use crate::workmap::HeatScale;

/// What a [`Preview`] shows of a frame.
///
/// ```
/// use balancers::Choice;
/// use renderer::preview::Layer;
///
/// assert_eq!(Layer::from_keyword("work-map"), Some(Layer::WorkMap));
/// assert_eq!(Layer::default(), Layer::Image);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layer {
    /// The image.
    #[default]
    Image,
    /// Rays per pixel as a heat map (as `raylb render --workmap`), shaded by the image.
    WorkMap,
    /// Each pixel in the colour of the worker that traced its camera ray, shaded by the
    /// image: the tiles as the balancer dealt them out.
    Workers,
}

impl Layer {
    /// The layer after this one, in the order image → work map → workers → image.
    ///
    /// ```
    /// # use renderer::preview::Layer;
    /// assert_eq!(Layer::Image.next(), Layer::WorkMap);
    /// assert_eq!(Layer::Workers.next(), Layer::Image);
    /// ```
    pub fn next(self) -> Self {
        match self {
            Layer::Image => Layer::WorkMap,
            Layer::WorkMap => Layer::Workers,
            Layer::Workers => Layer::Image,
        }
    }

    /// A short name for titles.
    ///
    /// ```
    /// # use renderer::preview::Layer;
    /// assert_eq!(Layer::WorkMap.name(), "work map");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Layer::Image => "image",
            Layer::WorkMap => "work map",
            Layer::Workers => "workers",
        }
    }
}

balancers::choices!(Layer {
    Image => "image", "The image.";
    WorkMap => "work-map", "Rays per pixel as a heat map, shaded by the image.";
    Workers => "workers", "Each pixel in the colour of the worker that traced it, shaded by the image.";
});

/// Which pixels [`Preview::draw`] draws.
///
/// ```
/// use renderer::film::Film;
/// use renderer::preview::{Layer, NEUTRAL_GREY, Pixels, Preview};
/// use renderer::watch::FrameWatch;
///
/// let film = Film::new(2, 1, false);
/// let mut preview = Preview::new(2, 1);
/// // Nothing is traced yet: `New` draws no pixel, `All` draws both.
/// preview.draw(&film, &FrameWatch::new(2, 1), Layer::Image, Pixels::New);
/// assert_eq!(preview.pixels(), &[NEUTRAL_GREY; 2]);
/// preview.draw(&film, &FrameWatch::new(2, 1), Layer::Image, Pixels::All);
/// assert_eq!(preview.pixels(), &[0, 0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pixels {
    /// Those traced since the last few draws of this frame: for a frame still rendering. A
    /// pixel is drawn on the [`RECENT_DRAWS`] draws after its camera ray is traced, which is
    /// when the secondary rays its tile spawned land; later ones show when the frame ends.
    /// Each draw still reads every pixel's stamp, but shades only the new ones.
    New,
    /// Every pixel traced so far.
    Traced,
    /// All of them: for a finished frame, also one that carries no stamps (from a GPU).
    All,
}

/// How many draws with [`Pixels::New`] draw a pixel after its camera ray is traced.
pub const RECENT_DRAWS: u8 = 3;

/// The grey of pixels not drawn yet.
pub const NEUTRAL_GREY: u32 = 0x0080_8080;

/// A frame as a window shows it: `width × height` 0RGB words, row-major.
///
/// ```
/// use renderer::film::Film;
/// use renderer::math::Vec3;
/// use renderer::preview::{Layer, NEUTRAL_GREY, Pixels, Preview};
/// use renderer::watch::{FrameObserver, FrameWatch};
///
/// let (film, watch) = (Film::new(2, 1, false), FrameWatch::new(2, 1));
/// film.add(0, Vec3::ONE);
/// watch.stamp(0, 0);
/// let mut preview = Preview::new(2, 1);
/// preview.draw(&film, &watch, Layer::Image, Pixels::New);
/// assert_eq!(preview.pixels(), &[0x00ff_ffff, NEUTRAL_GREY]);
/// ```
#[derive(Clone, Debug)]
pub struct Preview {
    width: u32,
    height: u32,
    pixels: Vec<u32>,
    /// Per pixel: how many `New` draws have drawn it in this frame (0: not traced yet).
    draws: Vec<u8>,
    /// The work map's range over the pixels drawn last.
    rays_range: Option<(u32, u32)>,
}

impl Preview {
    /// A neutral grey picture.
    ///
    /// ```
    /// use renderer::preview::{NEUTRAL_GREY, Preview};
    ///
    /// let preview = Preview::new(3, 2);
    /// assert!(preview.pixels().iter().all(|&p| p == NEUTRAL_GREY));
    /// ```
    pub fn new(width: u32, height: u32) -> Self {
        let pixels = width as usize * height as usize;
        Self {
            width,
            height,
            pixels: vec![NEUTRAL_GREY; pixels],
            draws: vec![0; pixels],
            rays_range: None,
        }
    }

    /// Width in pixels.
    ///
    /// ```
    /// # use renderer::preview::Preview;
    /// assert_eq!(Preview::new(3, 2).width(), 3);
    /// ```
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    ///
    /// ```
    /// # use renderer::preview::Preview;
    /// assert_eq!(Preview::new(3, 2).height(), 2);
    /// ```
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The picture, 0RGB words, row-major.
    ///
    /// ```
    /// # use renderer::preview::Preview;
    /// assert_eq!(Preview::new(3, 2).pixels().len(), 6);
    /// ```
    pub fn pixels(&self) -> &[u32] {
        &self.pixels
    }

    /// The fewest and most rays per pixel over the pixels drawn last in the work-map layer.
    ///
    /// ```
    /// use renderer::film::Film;
    /// use renderer::preview::{Layer, Pixels, Preview};
    /// use renderer::watch::FrameWatch;
    ///
    /// let film = Film::new(2, 1, true);
    /// film.count_rays(0, 3);
    /// film.count_rays(1, 7);
    /// let mut preview = Preview::new(2, 1);
    /// preview.draw(&film, &FrameWatch::new(2, 1), Layer::WorkMap, Pixels::All);
    /// assert_eq!(preview.rays_range(), Some((3, 7)));
    /// ```
    pub fn rays_range(&self) -> Option<(u32, u32)> {
        self.rays_range
    }

    /// The picture as 8-bit RGB triples, row-major, for a PNG.
    ///
    /// ```
    /// # use renderer::preview::Preview;
    /// assert_eq!(Preview::new(1, 1).to_rgb(), [0x80, 0x80, 0x80]);
    /// ```
    pub fn to_rgb(&self) -> Vec<u8> {
        self.pixels
            .iter()
            .flat_map(|&p| [(p >> 16) as u8, (p >> 8) as u8, p as u8])
            .collect()
    }

    /// Forgets which pixels were drawn: call when a new frame starts, before drawing it with
    /// [`Pixels::New`]. The picture itself stays until the new frame's pixels replace it.
    ///
    /// ```
    /// use renderer::film::Film;
    /// use renderer::preview::{Layer, Pixels, Preview};
    /// use renderer::watch::FrameWatch;
    ///
    /// let film = Film::new(2, 1, true);
    /// film.count_rays(1, 4);
    /// let mut preview = Preview::new(2, 1);
    /// preview.draw(&film, &FrameWatch::new(2, 1), Layer::WorkMap, Pixels::All);
    /// preview.start_frame();
    /// assert_eq!(preview.rays_range(), None);
    /// assert_eq!(preview.pixels().len(), 2);
    /// ```
    pub fn start_frame(&mut self) {
        self.draws.fill(0);
        self.rays_range = None;
    }

    /// Draws `layer` of the frame in `film` and `watch` (of this picture's size) at `pixels`.
    /// In the work-map layer the scale runs over the pixels traced (or all, for
    /// [`Pixels::All`]). While a frame renders ([`Pixels::New`]) the scale only widens, with
    /// a quarter of headroom at the top, and every traced pixel is drawn again when it does:
    /// a handful of times per frame, not at every draw. A film that counts no rays draws the
    /// image instead.
    ///
    /// ```
    /// use renderer::film::Film;
    /// use renderer::math::Vec3;
    /// use renderer::preview::{Layer, Pixels, Preview, worker_colour};
    /// use renderer::watch::{FrameObserver, FrameWatch};
    ///
    /// let (film, watch) = (Film::new(1, 1, false), FrameWatch::new(1, 1));
    /// film.add(0, Vec3::ONE);
    /// watch.stamp(0, 5);
    /// let mut preview = Preview::new(1, 1);
    /// preview.draw(&film, &watch, Layer::Workers, Pixels::Traced);
    /// let [r, g, b] = worker_colour(5).map(u32::from);
    /// assert_eq!(preview.pixels(), &[(r << 16) | (g << 8) | b]);
    /// ```
    ///
    /// # Panics
    /// When `film` or `watch` is not of this picture's size.
    pub fn draw(&mut self, film: &Film, watch: &FrameWatch, layer: Layer, pixels: Pixels) {
        let size = (self.width, self.height);
        assert_eq!(
            (film.width(), film.height()),
            size,
            "film of the preview's size"
        );
        assert_eq!(
            (watch.width(), watch.height()),
            size,
            "watch of the preview's size"
        );
        let counts_rays = film.pixel_rays(0).is_some();
        let mut pixels = pixels;
        let mut heat = None;
        if layer == Layer::WorkMap && counts_rays {
            let Some((lo, hi)) = rays_range(film, watch, pixels) else {
                return;
            };
            let range = match (pixels, self.rays_range) {
                (Pixels::New, Some((min, max))) if lo >= min && hi <= max => (min, max),
                (Pixels::New, shown) => {
                    // Wider than what is on show: widen with headroom, draw everything again.
                    pixels = Pixels::Traced;
                    let (min, max) = shown.unwrap_or((lo, hi));
                    (lo.min(min), hi.max(max).saturating_add(hi.max(max) / 4))
                }
                _ => (lo, hi),
            };
            self.rays_range = Some(range);
            heat = Some(HeatTable::new(range.0, range.1));
        }
        for p in 0..self.pixels.len() {
            let worker = match pixels {
                Pixels::All => watch.worker_of(p),
                Pixels::Traced | Pixels::New => {
                    let Some(worker) = watch.worker_of(p) else {
                        continue;
                    };
                    if pixels == Pixels::New {
                        let draws = &mut self.draws[p];
                        if *draws >= RECENT_DRAWS {
                            continue;
                        }
                        *draws += 1;
                    }
                    Some(worker)
                }
            };
            let image = resolve_pixel(film.pixel_sums(p));
            self.pixels[p] = pack(match (layer, &heat) {
                (Layer::WorkMap, Some(heat)) => {
                    shade(heat.colour(film.pixel_rays(p).unwrap_or(0)), image)
                }
                (Layer::Workers, _) => shade(
                    worker.map_or([160; 3], |w| {
                        if watch.is_device(w) {
                            DEVICE_COLOUR
                        } else {
                            worker_colour(w)
                        }
                    }),
                    image,
                ),
                _ => image,
            });
        }
    }
}

/// The fewest and most rays over the pixels `pixels` selects (`New` as `Traced`).
fn rays_range(film: &Film, watch: &FrameWatch, pixels: Pixels) -> Option<(u32, u32)> {
    let total = film.width() as usize * film.height() as usize;
    (0..total)
        .filter(|&p| pixels == Pixels::All || watch.worker_of(p).is_some())
        .map(|p| film.pixel_rays(p).unwrap_or(0))
        .fold(None, |range, rays| {
            Some(range.map_or((rays, rays), |(lo, hi): (u32, u32)| {
                (lo.min(rays), hi.max(rays))
            }))
        })
}

/// The heat scale's colours looked up by ray count: one logarithm per count in the range,
/// not one per pixel.
struct HeatTable {
    min: u32,
    scale: HeatScale,
    colours: Vec<[u8; 3]>,
}

impl HeatTable {
    /// Ranges wider than this are coloured count by count.
    const MAX_ENTRIES: u32 = 1 << 16;

    fn new(min: u32, max: u32) -> Self {
        let scale = HeatScale::new(min, max);
        let span = max - min;
        let colours = if span < Self::MAX_ENTRIES {
            (min..=max).map(|c| scale.colour(c)).collect()
        } else {
            Vec::new()
        };
        Self {
            min,
            scale,
            colours,
        }
    }

    #[inline]
    fn colour(&self, rays: u32) -> [u8; 3] {
        let i = rays.saturating_sub(self.min) as usize;
        self.colours
            .get(i)
            .copied()
            .unwrap_or_else(|| self.scale.colour(rays))
    }
}

/// `[r, g, b]` as a 0RGB word.
#[inline]
fn pack([r, g, b]: [u8; 3]) -> u32 {
    (u32::from(r) << 16) | (u32::from(g) << 8) | u32::from(b)
}

/// `colour` darkened where the image is dark, so that the scene's shapes show through an
/// overlay: from 35% of `colour` on black to all of it on white.
#[inline]
fn shade(colour: [u8; 3], image: [u8; 3]) -> [u8; 3] {
    let [r, g, b] = image.map(u32::from);
    let luma = (54 * r + 183 * g + 19 * b) >> 8; // Rec. 709 weights in 1/256ths
    let factor = 90 + luma * 166 / 255; // 90/256 ≈ 35% … 256/256
    colour.map(|c| ((u32::from(c) * factor) >> 8) as u8)
}

/// The colour of a device's pixels in the workers layer (a hybrid frame's GPU): white, which
/// no CPU worker's hue is (each of theirs has a channel at a quarter).
pub const DEVICE_COLOUR: [u8; 3] = [255, 255, 255];

/// A colour for worker `worker`: hues a golden angle apart, so that neighbouring numbers
/// differ clearly for any count of workers.
///
/// ```
/// use renderer::preview::{DEVICE_COLOUR, worker_colour};
///
/// assert_ne!(worker_colour(0), worker_colour(1));
/// assert_ne!(worker_colour(3), DEVICE_COLOUR);
/// ```
pub fn worker_colour(worker: u16) -> [u8; 3] {
    let hue = (f32::from(worker) * 0.381_966).fract() * 6.0;
    let sector = hue as u32;
    let f = hue - sector as f32;
    let (hi, lo) = (1.0, 0.25);
    let rise = lo + (hi - lo) * f;
    let fall = hi - (hi - lo) * f;
    let rgb = match sector {
        0 => [hi, rise, lo],
        1 => [fall, hi, lo],
        2 => [lo, hi, rise],
        3 => [lo, fall, hi],
        4 => [rise, lo, hi],
        _ => [hi, lo, fall],
    };
    rgb.map(|c: f32| (c * 255.0).round() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Vec3;
    use crate::watch::FrameObserver;

    #[test]
    fn only_traced_pixels_are_drawn_until_the_frame_is_done() {
        let bright = Film::new(2, 1, true);
        bright.add(0, Vec3::ONE);
        let dark = Film::new(2, 1, true);
        let watch = FrameWatch::new(2, 1);
        watch.stamp(0, 4);
        let mut preview = Preview::new(2, 1);
        preview.draw(&bright, &watch, Layer::Image, Pixels::New);
        assert_eq!(preview.pixels(), &[0x00ff_ffff, NEUTRAL_GREY]);
        // Drawn again for a few refreshes after it was traced (its secondary rays land)...
        for _ in 1..RECENT_DRAWS {
            preview.draw(&dark, &watch, Layer::Image, Pixels::New);
        }
        assert_eq!(preview.pixels()[0], 0, "redrawn while recent");
        // ...then left alone until asked for.
        preview.draw(&bright, &watch, Layer::Image, Pixels::New);
        assert_eq!(preview.pixels()[0], 0, "no longer recent");
        preview.draw(&bright, &watch, Layer::Image, Pixels::Traced);
        assert_eq!(
            preview.pixels()[0],
            0x00ff_ffff,
            "Traced draws every traced pixel"
        );
        preview.start_frame();
        preview.draw(&dark, &watch, Layer::Image, Pixels::New);
        assert_eq!(preview.pixels()[0], 0, "a new frame draws it again");
        preview.draw(&bright, &watch, Layer::Image, Pixels::All);
        assert_eq!(preview.pixels(), &[0x00ff_ffff, 0]);
        assert_eq!(preview.to_rgb(), bright.resolve());
    }

    #[test]
    fn overlays_colour_by_rays_and_by_worker() {
        let film = Film::new(3, 1, true);
        let watch = FrameWatch::new(3, 1);
        for (p, rays) in [(0, 1), (1, 9), (2, 9)] {
            film.add(p, Vec3::ONE);
            film.count_rays(p, rays);
        }
        watch.stamp(0, 0);
        watch.stamp(1, 1);
        watch.stamp(2, 1);
        let mut preview = Preview::new(3, 1);
        preview.draw(&film, &watch, Layer::WorkMap, Pixels::All);
        assert_eq!(preview.rays_range(), Some((1, 9)));
        let heat = HeatScale::new(1, 9);
        assert_eq!(
            preview.pixels()[0],
            pack(heat.colour(1)),
            "white image: full colour"
        );
        assert_eq!(preview.pixels()[1], pack(heat.colour(9)));
        preview.draw(&film, &watch, Layer::Workers, Pixels::All);
        let px = preview.pixels();
        assert_eq!(px[0], pack(worker_colour(0)));
        assert_eq!(px[1], px[2]);
        assert_ne!(px[0], px[1]);
    }

    #[test]
    fn worker_colours_differ_between_neighbours() {
        for w in 0..64u16 {
            assert_ne!(worker_colour(w), worker_colour(w + 1), "worker {w}");
        }
    }

    #[test]
    fn a_devices_pixels_are_white_and_no_cpu_worker_is() {
        let film = Film::new(3, 1, false);
        // Two CPU threads, then the GPU.
        let watch = FrameWatch::with_devices(3, 1, 2);
        for p in 0..3 {
            film.add(p, Vec3::ONE);
            watch.stamp(p, p as usize);
        }
        let mut preview = Preview::new(3, 1);
        preview.draw(&film, &watch, Layer::Workers, Pixels::All);
        let px = preview.pixels();
        assert_eq!(px[0], pack(worker_colour(0)));
        assert_eq!(px[1], pack(worker_colour(1)));
        assert_eq!(px[2], pack(DEVICE_COLOUR));
        for w in 0..4096u16 {
            assert_ne!(worker_colour(w), DEVICE_COLOUR, "worker {w}");
        }
        assert!(
            !FrameWatch::new(1, 1).is_device(7),
            "no devices without them"
        );
        let many = FrameWatch::with_devices(1, 1, 100_000);
        many.stamp(0, 100_000);
        assert!(
            many.is_device(many.worker_of(0).unwrap()),
            "stamps fold alike"
        );
    }
}
