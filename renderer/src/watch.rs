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

use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};

/// Progress, per-pixel worker stamps and the cancel request of one frame.
#[derive(Debug)]
pub struct FrameWatch {
    width: u32,
    height: u32,
    /// Per pixel: 0 before its camera ray is traced, then 1 + the worker that traced it
    /// (workers from 65,534 on share the last stamp).
    stamps: Vec<AtomicU16>,
    pixels_done: AtomicU64,
    cancel_requested: AtomicBool,
    work_dropped: AtomicBool,
}

impl FrameWatch {
    /// A watch over a `width × height` frame that has not started.
    pub fn new(width: u32, height: u32) -> Self {
        let pixels = width as usize * height as usize;
        Self {
            width,
            height,
            stamps: (0..pixels).map(|_| AtomicU16::new(0)).collect(),
            pixels_done: AtomicU64::new(0),
            cancel_requested: AtomicBool::new(false),
            work_dropped: AtomicBool::new(false),
        }
    }

    /// Width of the frame in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height of the frame in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Asks the frame to stop: tasks that start from now on are dropped. Callable from any
    /// thread, any number of times; the frame's render call still returns normally, with
    /// [`Frame::cancelled`](crate::render::Frame::cancelled) set.
    pub fn cancel(&self) {
        // Relaxed: the flag carries no data with it. Workers see it a little sooner or later;
        // either way they stop after a bounded amount of work, and the render call's join
        // orders everything they did before its return.
        self.cancel_requested.store(true, Ordering::Relaxed);
    }

    /// Whether [`cancel`](Self::cancel) has been called.
    #[inline]
    pub fn cancel_requested(&self) -> bool {
        // Relaxed: see `cancel`.
        self.cancel_requested.load(Ordering::Relaxed)
    }

    /// Pixels whose camera rays have been traced so far, counted a tile (or a tile's last
    /// piece, at most 1,024 pixels) at a time; their secondary rays may still be running.
    pub fn pixels_done(&self) -> u64 {
        // Relaxed: a progress figure; it never decides what memory to read.
        self.pixels_done.load(Ordering::Relaxed)
    }

    /// The worker that traced the camera ray of `pixel` (row-major), or `None` if it has not
    /// been traced yet. When this returns `Some`, the pixel's own shading is already in the
    /// film (its secondary rays may not be).
    #[inline]
    pub fn worker_of(&self, pixel: usize) -> Option<u16> {
        // Acquire: pairs with the Release in `stamp`, so the film's sums read after this
        // include the contribution the worker added before stamping.
        match self.stamps[pixel].load(Ordering::Acquire) {
            0 => None,
            s => Some(s - 1),
        }
    }

    /// Whether some work of the frame was dropped because of a cancel request.
    pub fn work_dropped(&self) -> bool {
        // Relaxed: read after the workers have been joined, which orders their stores.
        self.work_dropped.load(Ordering::Relaxed)
    }

    /// Called by worker `worker` once it has added the camera ray of `pixel` to the film.
    #[inline]
    pub(crate) fn stamp(&self, pixel: u32, worker: usize) {
        let stamp = u16::try_from(worker + 1).unwrap_or(u16::MAX);
        // Release: publishes the film adds made before it to a watcher's Acquire load in
        // `worker_of`.
        self.stamps[pixel as usize].store(stamp, Ordering::Release);
    }

    /// Called once per finished run of camera rays (a tile or what is left of one).
    #[inline]
    pub(crate) fn count_done(&self, pixels: u64) {
        // Relaxed: see `pixels_done`.
        self.pixels_done.fetch_add(pixels, Ordering::Relaxed);
    }

    /// Called by a worker that drops a task because the frame was cancelled.
    #[inline]
    pub(crate) fn note_dropped(&self) {
        // Relaxed: see `work_dropped`.
        self.work_dropped.store(true, Ordering::Relaxed);
    }
}
