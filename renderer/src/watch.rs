//! What the outside world sees of a frame while it renders, and how it stops one.
//!
//! A [`FrameWatch`] is shared between a frame's workers and any number of watchers on other
//! threads (the viewer's window, a progress bar). Workers stamp each pixel with their number
//! once its camera ray is traced and count finished pixels; a watcher reads those to show the
//! finished part of the frame, or asks the frame to stop with [`FrameWatch::cancel`].
//!
//! Cancelling drops work, never waits for it: every task that starts after the request
//! returns at once without tracing or spawning anything, so whatever balancer runs the frame
//! drains its queues in a moment and joins its workers as it always does.
//!
//! ```
//! use renderer::watch::{FrameObserver, FrameWatch};
//!
//! let watch = FrameWatch::new(4, 2);
//! watch.stamp(5, 3);
//! watch.count_done(1);
//! assert_eq!(watch.worker_of(5), Some(3));
//! assert_eq!(watch.pixels_done(), 1);
//! ```

use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};

/// What a frame's workers tell whoever watches the frame, and how they learn that it was
/// cancelled. The integrator is generic over it, so that a frame nobody watches
/// ([`Unwatched`]: `raylb render`, `validate`, the benchmarks) compiles every call away, as
/// [`NoCounters`](crate::bvh::NoCounters) does for the traversal's test counts.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use renderer::watch::FrameObserver;
///
/// /// Counts finished pixels and nothing else.
/// #[derive(Default)]
/// struct Progress(AtomicU64);
///
/// impl FrameObserver for Progress {
///     fn cancel_requested(&self) -> bool { false }
///     fn note_dropped(&self) {}
///     fn stamp(&self, _pixel: u32, _worker: usize) {}
///     fn count_done(&self, pixels: u64) { self.0.fetch_add(pixels, Ordering::Relaxed); }
///     fn work_dropped(&self) -> bool { false }
/// }
///
/// let progress = Progress::default();
/// progress.count_done(64);
/// assert_eq!(progress.0.load(Ordering::Relaxed), 64);
/// ```
pub trait FrameObserver: Sync {
    /// Whether the frame was asked to stop: a task that starts now is dropped.
    ///
    /// ```
    /// use renderer::watch::{FrameObserver, FrameWatch};
    ///
    /// let watch = FrameWatch::new(8, 8);
    /// watch.cancel();
    /// assert!(watch.cancel_requested());
    /// ```
    fn cancel_requested(&self) -> bool;
    /// A task was dropped because of a cancel request.
    ///
    /// ```
    /// use renderer::watch::{FrameObserver, FrameWatch};
    ///
    /// let watch = FrameWatch::new(8, 8);
    /// watch.note_dropped();
    /// assert!(watch.work_dropped());
    /// ```
    fn note_dropped(&self);
    /// Worker `worker` has added the camera rays of `pixel` (row-major) to the film.
    ///
    /// ```
    /// use renderer::watch::{FrameObserver, FrameWatch};
    ///
    /// let watch = FrameWatch::new(8, 8);
    /// watch.stamp(9, 2);
    /// assert_eq!(watch.worker_of(9), Some(2));
    /// assert_eq!(watch.worker_of(10), None);
    /// ```
    fn stamp(&self, pixel: u32, worker: usize);
    /// A run of `pixels` pixels' camera rays is done.
    ///
    /// ```
    /// use renderer::watch::{FrameObserver, FrameWatch};
    ///
    /// let watch = FrameWatch::new(8, 8);
    /// watch.count_done(32);
    /// watch.count_done(32);
    /// assert_eq!(watch.pixels_done(), 64);
    /// ```
    fn count_done(&self, pixels: u64);
    /// Whether some work of the frame was dropped; asked once the workers are joined.
    ///
    /// ```
    /// use renderer::watch::{FrameObserver, Unwatched};
    ///
    /// Unwatched.note_dropped();
    /// assert!(!Unwatched.work_dropped());
    /// ```
    fn work_dropped(&self) -> bool;
}

/// Nobody watches: nothing is stamped or counted, and the frame cannot be cancelled.
///
/// ```
/// use renderer::watch::{FrameObserver, Unwatched};
///
/// Unwatched.stamp(0, 1);
/// assert!(!Unwatched.cancel_requested());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Unwatched;

impl FrameObserver for Unwatched {
    #[inline(always)]
    fn cancel_requested(&self) -> bool {
        false
    }
    #[inline(always)]
    fn note_dropped(&self) {}
    #[inline(always)]
    fn stamp(&self, _pixel: u32, _worker: usize) {}
    #[inline(always)]
    fn count_done(&self, _pixels: u64) {}
    #[inline(always)]
    fn work_dropped(&self) -> bool {
        false
    }
}

/// Progress, per-pixel worker stamps and the cancel request of one frame.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use std::sync::Arc;
/// use balancers::BalancerKind;
/// use renderer::film::Film;
/// use renderer::render::{RenderOptions, render_watched};
/// use renderer::scene::{Scene, SceneOverrides};
/// use renderer::watch::FrameWatch;
///
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// let scene = Scene::load(path.as_ref(), overrides)?;
/// let watch = FrameWatch::new(32, 32);
/// let film = Arc::new(Film::new(32, 32, false));
/// let options = RenderOptions {
///     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
///     threads: NonZeroUsize::new(2).unwrap(),
///     tile: NonZeroU32::new(8).unwrap(),
///     work_map: false,
/// };
/// let frame = render_watched(&scene, &options, film, &watch)?;
/// assert!(!frame.cancelled);
/// assert_eq!(watch.pixels_done(), 32 * 32);
/// assert!((0..32 * 32).all(|pixel| watch.worker_of(pixel).is_some()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FrameWatch {
    width: u32,
    height: u32,
    /// Per pixel: 0 before its camera ray is traced, then 1 + the worker that traced it
    /// (workers from 65,534 on share the last stamp).
    stamps: Vec<AtomicU16>,
    /// Workers from this number on are devices tracing whole batches of tiles (a hybrid
    /// frame's GPUs), not CPU threads.
    first_device: Option<u16>,
    pixels_done: AtomicU64,
    cancel_requested: AtomicBool,
    work_dropped: AtomicBool,
}

impl FrameWatch {
    /// A watch over a `width × height` frame that has not started.
    ///
    /// ```
    /// use renderer::watch::FrameWatch;
    ///
    /// let watch = FrameWatch::new(64, 48);
    /// assert_eq!((watch.width(), watch.height()), (64, 48));
    /// assert_eq!(watch.pixels_done(), 0);
    /// ```
    pub fn new(width: u32, height: u32) -> Self {
        let pixels = width as usize * height as usize;
        Self {
            width,
            height,
            stamps: (0..pixels).map(|_| AtomicU16::new(0)).collect(),
            first_device: None,
            pixels_done: AtomicU64::new(0),
            cancel_requested: AtomicBool::new(false),
            work_dropped: AtomicBool::new(false),
        }
    }

    /// A watch over a `width × height` frame whose workers from `first_device` on are
    /// devices (a hybrid frame's GPUs, after its CPU threads): see [`is_device`](Self::is_device).
    ///
    /// ```
    /// use renderer::watch::FrameWatch;
    ///
    /// // Four CPU threads (workers 0 to 3), then a GPU.
    /// let watch = FrameWatch::with_devices(64, 48, 4);
    /// assert!(!watch.is_device(3));
    /// assert!(watch.is_device(4));
    /// ```
    pub fn with_devices(width: u32, height: u32, first_device: usize) -> Self {
        Self {
            first_device: Some(Self::worker_number(first_device)),
            ..Self::new(width, height)
        }
    }

    /// The number [`worker_of`](Self::worker_of) gives for worker `worker`: its own, with
    /// workers from 65,534 on folded into one (a pixel's stamp is 16 bits).
    ///
    /// ```
    /// use renderer::watch::FrameWatch;
    ///
    /// assert_eq!(FrameWatch::worker_number(7), 7);
    /// assert_eq!(FrameWatch::worker_number(70_000), 65_534);
    /// ```
    pub fn worker_number(worker: usize) -> u16 {
        u16::try_from(worker).map_or(u16::MAX - 1, |w| w.min(u16::MAX - 1))
    }

    /// Whether `worker` (as [`worker_of`](Self::worker_of) gives it) is a device rather than
    /// a CPU thread. Stamps fold workers from 65,534 on into one, so with that many CPU
    /// threads or more the last of them read as devices (the command line stops at 4,096).
    ///
    /// ```
    /// use renderer::watch::FrameWatch;
    ///
    /// let cpu_only = FrameWatch::new(8, 8);
    /// assert!(!cpu_only.is_device(0));
    /// let hybrid = FrameWatch::with_devices(8, 8, 2);
    /// assert!(hybrid.is_device(2));
    /// ```
    pub fn is_device(&self, worker: u16) -> bool {
        self.first_device.is_some_and(|first| worker >= first)
    }

    /// Width of the frame in pixels.
    ///
    /// ```
    /// # use renderer::watch::FrameWatch;
    /// assert_eq!(FrameWatch::new(64, 48).width(), 64);
    /// ```
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height of the frame in pixels.
    ///
    /// ```
    /// # use renderer::watch::FrameWatch;
    /// assert_eq!(FrameWatch::new(64, 48).height(), 48);
    /// ```
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Asks the frame to stop: tasks that start from now on are dropped. Callable from any
    /// thread, any number of times; the frame's render call still returns normally, with
    /// [`Frame::cancelled`](crate::frame::Frame::cancelled) set.
    ///
    /// ```
    /// use renderer::watch::{FrameObserver, FrameWatch};
    ///
    /// let watch = FrameWatch::new(8, 8);
    /// assert!(!watch.cancel_requested());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| watch.cancel());
    /// });
    /// assert!(watch.cancel_requested());
    /// ```
    pub fn cancel(&self) {
        // Relaxed: the flag carries no data with it. Workers see it a little sooner or later;
        // either way they stop after a bounded amount of work, and the render call's join
        // orders everything they did before its return.
        self.cancel_requested.store(true, Ordering::Relaxed);
    }

    /// Pixels whose camera rays have been traced so far, counted a tile (or a tile's last
    /// piece, at most 1,024 pixels) at a time; their secondary rays may still be running.
    ///
    /// ```
    /// use renderer::watch::{FrameObserver, FrameWatch};
    ///
    /// let watch = FrameWatch::new(8, 8);
    /// watch.count_done(16);
    /// assert_eq!(watch.pixels_done(), 16);
    /// ```
    pub fn pixels_done(&self) -> u64 {
        // Relaxed: a progress figure; it never decides what memory to read.
        self.pixels_done.load(Ordering::Relaxed)
    }

    /// The worker that traced the camera ray of `pixel` (row-major), or `None` if it has not
    /// been traced yet. When this returns `Some`, the pixel's own shading is already in the
    /// film (its secondary rays may not be).
    ///
    /// ```
    /// use renderer::watch::{FrameObserver, FrameWatch};
    ///
    /// let watch = FrameWatch::new(8, 8);
    /// assert_eq!(watch.worker_of(0), None);
    /// watch.stamp(0, 1);
    /// assert_eq!(watch.worker_of(0), Some(1));
    /// ```
    #[inline]
    pub fn worker_of(&self, pixel: usize) -> Option<u16> {
        // Acquire: pairs with the Release in `stamp`, so the film's sums read after this
        // include the contribution the worker added before stamping.
        match self.stamps[pixel].load(Ordering::Acquire) {
            0 => None,
            s => Some(s - 1),
        }
    }
}

impl FrameObserver for FrameWatch {
    /// Whether [`cancel`](FrameWatch::cancel) has been called.
    #[inline]
    fn cancel_requested(&self) -> bool {
        // Relaxed: see `cancel`.
        self.cancel_requested.load(Ordering::Relaxed)
    }

    #[inline]
    fn note_dropped(&self) {
        // Relaxed: see `work_dropped`.
        self.work_dropped.store(true, Ordering::Relaxed);
    }

    #[inline]
    fn stamp(&self, pixel: u32, worker: usize) {
        // 0 is "not yet traced".
        let stamp = Self::worker_number(worker) + 1;
        // Release: publishes the film adds made before it to a watcher's Acquire load in
        // `worker_of`.
        self.stamps[pixel as usize].store(stamp, Ordering::Release);
    }

    #[inline]
    fn count_done(&self, pixels: u64) {
        // Relaxed: see `pixels_done`.
        self.pixels_done.fetch_add(pixels, Ordering::Relaxed);
    }

    fn work_dropped(&self) -> bool {
        // Relaxed: read after the workers have been joined, which orders their stores.
        self.work_dropped.load(Ordering::Relaxed)
    }
}
