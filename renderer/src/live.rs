//! A frame rendered on a thread of its own, watched and cancelled from another: what the
//! viewer drives, and what a progress bar watches.
//!
//! ```
//! # use std::num::{NonZeroU32, NonZeroUsize};
//! # use std::sync::Arc;
//! # use balancers::BalancerKind;
//! # use renderer::device::FrameJob;
//! # use renderer::live::LiveFrame;
//! # use renderer::render::RenderOptions;
//! # use renderer::scene::{Scene, SceneOverrides};
//! # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
//! # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
//! # let job = FrameJob::Cpu(RenderOptions {
//! #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
//! #     threads: NonZeroUsize::new(2).unwrap(),
//! #     tile: NonZeroU32::new(8).unwrap(),
//! #     work_map: false,
//! # });
//! let live = LiveFrame::start(scene, job, None)?;
//! while !live.is_finished() {
//!     println!("{} pixels traced", live.watch().pixels_done());
//!     std::thread::sleep(std::time::Duration::from_millis(1));
//! }
//! let frame = live.finish()?;
//! assert_eq!(frame.total_rays().camera, 32 * 32);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::Arc;
use std::thread::{self, JoinHandle};

use anyhow::{Context, Result};

use crate::device::FrameJob;
use crate::film::Film;
use crate::frame::Frame;
use crate::gpu::{Gpu, GpuTiles, render_gpu};
use crate::hybrid::render_hybrid_watched;
use crate::render::render_watched;
use crate::scene::Scene;
use crate::watch::FrameWatch;

/// A frame rendering on its own thread.
///
/// Dropping a `LiveFrame` cancels it and waits for its thread: none outlives it.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use std::sync::Arc;
/// # use balancers::BalancerKind;
/// # use renderer::device::FrameJob;
/// # use renderer::live::LiveFrame;
/// # use renderer::render::RenderOptions;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
/// # let job = FrameJob::Cpu(RenderOptions {
/// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     tile: NonZeroU32::new(8).unwrap(),
/// #     work_map: false,
/// # });
/// let live = LiveFrame::start(scene, job, None)?;
/// let frame = live.finish()?;
/// assert!(!frame.cancelled);
/// assert_eq!(frame.tiles, 16);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LiveFrame {
    film: Arc<Film>,
    watch: Arc<FrameWatch>,
    thread: Option<JoinHandle<Result<Frame>>>,
}

impl LiveFrame {
    /// Starts rendering `scene` on a new thread named `raylb-frame`; `gpu` is the device of
    /// a GPU or hybrid frame.
    ///
    /// On CPU worker threads the film fills in as tiles finish, and a cancel stops the frame
    /// within a task. On a GPU the film arrives whole when the kernel ends, and a cancel takes
    /// effect only then (a kernel is not interrupted). In a hybrid frame the CPU's pixels fill
    /// in as they finish and the GPU's arrive when its last batch is done, stamped as worker
    /// `options.threads` ([`FrameWatch::is_device`]); a cancel stops the CPU's work within a
    /// task and launches no further batch.
    ///
    /// # Errors
    /// When the thread cannot be started, the film's memory cannot be had, or a GPU or hybrid
    /// frame is given no GPU.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use std::sync::Arc;
    /// # use balancers::BalancerKind;
    /// # use renderer::device::FrameJob;
    /// # use renderer::live::LiveFrame;
    /// # use renderer::render::RenderOptions;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
    /// # let job = FrameJob::Cpu(RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # });
    /// use renderer::gpu::{GpuBalancer, GpuOptions};
    ///
    /// let live = LiveFrame::start(Arc::clone(&scene), job, None)?;
    /// live.finish()?;
    /// // A GPU frame without a GPU is refused before any thread starts.
    /// let gpu_job = FrameJob::Gpu(GpuOptions {
    ///     balancer: GpuBalancer::STEALING,
    ///     tile: NonZeroU32::new(8).unwrap(),
    ///     work_map: false,
    ///     max_warps: None,
    /// });
    /// assert!(LiveFrame::start(scene, gpu_job, None).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start(scene: Arc<Scene>, job: FrameJob, gpu: Option<Arc<Gpu>>) -> Result<Self> {
        let gpu = match job {
            FrameJob::Cpu(_) => None,
            FrameJob::Gpu(_) | FrameJob::Hybrid(_) => {
                Some(gpu.ok_or_else(|| anyhow::anyhow!("{} needs a GPU", job.label()))?)
            }
        };
        let (work_map, watch) = match &job {
            FrameJob::Cpu(o) => (o.work_map, FrameWatch::new(scene.width, scene.height)),
            FrameJob::Gpu(o) => (o.work_map, FrameWatch::new(scene.width, scene.height)),
            FrameJob::Hybrid(o) => (
                o.work_map,
                FrameWatch::with_devices(scene.width, scene.height, o.threads.get()),
            ),
        };
        let film =
            Film::try_new(scene.width, scene.height, work_map).map_err(anyhow::Error::msg)?;
        let film = Arc::new(film);
        let watch = Arc::new(watch);
        let thread = thread::Builder::new()
            .name("raylb-frame".into())
            // Worker 0 of the frame runs here.
            .stack_size(balancers::worker_stack_size())
            .spawn({
                let (film, watch) = (Arc::clone(&film), Arc::clone(&watch));
                move || match (job, gpu) {
                    (FrameJob::Cpu(options), _) => {
                        render_watched(&scene, &options, film, &watch).map_err(anyhow::Error::from)
                    }
                    (FrameJob::Gpu(options), Some(gpu)) => {
                        render_gpu(&gpu, &scene, &options).context("rendering on the GPU")
                    }
                    (FrameJob::Hybrid(options), Some(gpu)) => {
                        let device = GpuTiles::new(&gpu, &scene, options.tile, options.work_map)
                            .context("preparing the GPU for a hybrid frame")?;
                        render_hybrid_watched(&scene, &options, vec![device], film, &watch)
                            .context("rendering on the CPU and the GPU")
                    }
                    (FrameJob::Gpu(_) | FrameJob::Hybrid(_), None) => {
                        unreachable!("a GPU frame without a GPU is refused above")
                    }
                }
            })
            .context("cannot start the frame's thread")?;
        Ok(Self {
            film,
            watch,
            thread: Some(thread),
        })
    }

    /// The film the frame adds to: on a CPU, partly filled while the frame runs; in a hybrid
    /// frame, the CPU's pixels while it runs and the GPU's when its last batch is done.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use std::sync::Arc;
    /// # use balancers::BalancerKind;
    /// # use renderer::device::FrameJob;
    /// # use renderer::live::LiveFrame;
    /// # use renderer::render::RenderOptions;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
    /// # let job = FrameJob::Cpu(RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # });
    /// let live = LiveFrame::start(scene, job, None)?;
    /// assert_eq!((live.film().width(), live.film().height()), (32, 32));
    /// live.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn film(&self) -> &Film {
        &self.film
    }

    /// The frame's progress and per-pixel worker stamps.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use std::sync::Arc;
    /// # use balancers::BalancerKind;
    /// # use renderer::device::FrameJob;
    /// # use renderer::live::LiveFrame;
    /// # use renderer::render::RenderOptions;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
    /// # let job = FrameJob::Cpu(RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # });
    /// let live = LiveFrame::start(scene, job, None)?;
    /// while !live.is_finished() {
    ///     assert!(live.watch().pixels_done() <= 32 * 32);
    ///     std::thread::yield_now();
    /// }
    /// assert_eq!(live.watch().pixels_done(), 32 * 32);
    /// live.finish()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn watch(&self) -> &FrameWatch {
        &self.watch
    }

    /// The frame's watch, to keep after [`finish`](Self::finish): its worker stamps stay
    /// with the finished frame.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use std::sync::Arc;
    /// # use balancers::BalancerKind;
    /// # use renderer::device::FrameJob;
    /// # use renderer::live::LiveFrame;
    /// # use renderer::render::RenderOptions;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
    /// # let job = FrameJob::Cpu(RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # });
    /// let live = LiveFrame::start(scene, job, None)?;
    /// let watch = live.shared_watch();
    /// live.finish()?;
    /// // The stamps outlive the frame: which worker traced each pixel.
    /// assert!((0..32 * 32).all(|p| watch.worker_of(p).is_some()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shared_watch(&self) -> Arc<FrameWatch> {
        Arc::clone(&self.watch)
    }

    /// Whether the frame's thread has ended: [`finish`](Self::finish) will not block.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use std::sync::Arc;
    /// # use balancers::BalancerKind;
    /// # use renderer::device::FrameJob;
    /// # use renderer::live::LiveFrame;
    /// # use renderer::render::RenderOptions;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
    /// # let job = FrameJob::Cpu(RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # });
    /// let live = LiveFrame::start(scene, job, None)?;
    /// while !live.is_finished() {
    ///     std::thread::sleep(std::time::Duration::from_millis(1));
    /// }
    /// // Does not block now.
    /// let frame = live.finish()?;
    /// assert!(!frame.cancelled);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits for the frame to end and returns it.
    ///
    /// # Errors
    /// When the frame's workers could not be started or the GPU failed.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use std::sync::Arc;
    /// # use balancers::BalancerKind;
    /// # use renderer::device::FrameJob;
    /// # use renderer::live::LiveFrame;
    /// # use renderer::render::RenderOptions;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
    /// # let job = FrameJob::Cpu(RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # });
    /// let frame = LiveFrame::start(scene, job, None)?.finish()?;
    /// assert_eq!(frame.total_rays().camera, 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(mut self) -> Result<Frame> {
        let thread = self.thread.take().expect("joined only here and in drop");
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// Cancels the frame and waits for its thread: every worker has been joined when this
    /// returns. A CPU frame comes back with [`Frame::cancelled`] set unless it had already
    /// finished all its work; a GPU frame cannot be interrupted, so this waits for its kernel
    /// and the frame comes back whole. A hybrid frame stops its CPU workers within a task and
    /// launches no further batch, but waits for the scene's upload, the batch in flight and
    /// the GPU's sums to come back.
    ///
    /// # Errors
    /// As [`finish`](Self::finish).
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use std::sync::Arc;
    /// # use balancers::BalancerKind;
    /// # use renderer::device::FrameJob;
    /// # use renderer::live::LiveFrame;
    /// # use renderer::render::RenderOptions;
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Arc::new(Scene::load(path.as_ref(), overrides)?);
    /// # let job = FrameJob::Cpu(RenderOptions {
    /// #     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     threads: NonZeroUsize::new(2).unwrap(),
    /// #     tile: NonZeroU32::new(8).unwrap(),
    /// #     work_map: false,
    /// # });
    /// let live = LiveFrame::start(scene, job, None)?;
    /// let frame = live.cancel()?;
    /// // Cancelled, unless it had finished all its work first: either way every worker is joined.
    /// assert!(frame.cancelled || frame.total_rays().camera == 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cancel(self) -> Result<Frame> {
        self.watch.cancel();
        self.finish()
    }
}

impl Drop for LiveFrame {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.watch.cancel();
            // A panic of the frame was the frame's to report; here it is only waited for.
            let _ = thread.join();
        }
    }
}
