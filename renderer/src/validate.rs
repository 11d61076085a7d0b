//! The determinism contract as a matrix: one scene rendered by every balancer, thread count,
//! tile edge and device a validation names, each frame's fixed-point sums compared with the
//! first frame's. `raylb validate` prints the matrix; the tests assert it.
//!
//! The sums are what is compared: every image format (the PNG's 8-bit codes, the EXR's and
//! PFM's floats) is resolved from them, so equal sums are equal files in all of them.
//!
//! ```
//! # use std::num::{NonZeroU32, NonZeroUsize};
//! # use renderer::scene::Scene;
//! # use renderer::validate::{Plan, SameSums, Verdict};
//! # fn demo(scene: &Scene) -> anyhow::Result<()> {
//! let plan = Plan {
//!     cpu: balancers::BalancerKind::every_variant().into_iter().map(Into::into).collect(),
//!     threads: vec![NonZeroUsize::MIN, NonZeroUsize::new(8).unwrap()],
//!     tiles: vec![NonZeroU32::new(16).unwrap()],
//!     hybrid: false,
//!     gpu: Vec::new(),
//! };
//! let mut sums = SameSums::default();
//! for run in plan.runs() {
//!     let frame = run.render(scene, None)?;
//!     if let Verdict::Differs { first, pixels } = sums.check(&run.label(), &frame.film) {
//!         eprintln!("{} differs from {first} in {pixels} pixels", run.label());
//!     }
//! }
//! assert_eq!(sums.differing(), 0);
//! # Ok(())
//! # }
//! ```

use std::num::{NonZeroU32, NonZeroUsize};

use anyhow::{Result, bail};
use balancers::HybridStealing;

use crate::device::FrameJob;
use crate::film::Film;
use crate::gpu::{GpuBalancer, GpuOptions};
use crate::hybrid::HybridOptions;
use crate::render::{CpuBalancer, RenderOptions};

/// What a validation renders in each structure: every CPU balancer at every thread count and
/// tile edge, the hybrid (CPU workers and the GPU) at each, and every GPU balancer at each
/// tile edge.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::{Assignment, BalancerKind};
/// # use renderer::validate::Plan;
/// # let plan = Plan {
/// #     cpu: vec![
/// #         BalancerKind::static_tiles(Assignment::Interleaved).into(),
/// #         BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     ],
/// #     threads: vec![NonZeroUsize::MIN, NonZeroUsize::new(2).unwrap()],
/// #     tiles: vec![NonZeroU32::new(8).unwrap()],
/// #     hybrid: false,
/// #     gpu: Vec::new(),
/// # };
/// // Two balancers at two thread counts and one tile edge.
/// assert_eq!(plan.runs().len(), 4);
/// assert_eq!(plan.renders_per_structure(), 4);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The CPU's balancers.
    pub cpu: Vec<CpuBalancer>,
    /// The thread counts of the CPU's balancers and of the hybrid's CPU side.
    pub threads: Vec<NonZeroUsize>,
    /// The tile edges, in pixels.
    pub tiles: Vec<NonZeroU32>,
    /// Whether the hybrid runs too (it needs a GPU).
    pub hybrid: bool,
    /// The GPU's balancers (they need a GPU).
    pub gpu: Vec<GpuBalancer>,
}

impl Plan {
    /// The runs of one structure, in the order they are rendered and printed: the CPU's
    /// balancers, then the hybrid, then the GPU's.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::{Assignment, BalancerKind};
    /// # use renderer::validate::Plan;
    /// # let plan = Plan {
    /// #     cpu: vec![
    /// #         BalancerKind::static_tiles(Assignment::Interleaved).into(),
    /// #         BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     ],
    /// #     threads: vec![NonZeroUsize::MIN, NonZeroUsize::new(2).unwrap()],
    /// #     tiles: vec![NonZeroU32::new(8).unwrap()],
    /// #     hybrid: false,
    /// #     gpu: Vec::new(),
    /// # };
    /// let labels: Vec<String> = plan.runs().iter().map(|r| r.label()).collect();
    /// assert!(labels[0].starts_with("static/interleaved threads=1"));
    /// assert!(labels[3].starts_with("counter/chunk=1 threads=2"));
    /// ```
    pub fn runs(&self) -> Vec<FrameJob> {
        let mut runs = Vec::with_capacity(self.renders_per_structure());
        for &balancer in &self.cpu {
            for &threads in &self.threads {
                for &tile in &self.tiles {
                    runs.push(FrameJob::Cpu(RenderOptions {
                        balancer,
                        threads,
                        tile,
                        work_map: false,
                    }));
                }
            }
        }
        if self.hybrid {
            for &threads in &self.threads {
                for &tile in &self.tiles {
                    runs.push(FrameJob::Hybrid(HybridOptions {
                        balancer: HybridStealing::default(),
                        threads,
                        tile,
                        work_map: false,
                    }));
                }
            }
        }
        for &balancer in &self.gpu {
            for &tile in &self.tiles {
                runs.push(FrameJob::Gpu(GpuOptions {
                    balancer,
                    tile,
                    work_map: false,
                    max_warps: None,
                }));
            }
        }
        runs
    }

    /// How many frames one structure renders.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::{Assignment, BalancerKind};
    /// # use renderer::validate::Plan;
    /// # let plan = Plan {
    /// #     cpu: vec![
    /// #         BalancerKind::static_tiles(Assignment::Interleaved).into(),
    /// #         BalancerKind::counter(NonZeroUsize::MIN).into(),
    /// #     ],
    /// #     threads: vec![NonZeroUsize::MIN, NonZeroUsize::new(2).unwrap()],
    /// #     tiles: vec![NonZeroU32::new(8).unwrap()],
    /// #     hybrid: false,
    /// #     gpu: Vec::new(),
    /// # };
    /// use renderer::gpu::GpuBalancer;
    ///
    /// // Each GPU balancer once a tile edge, beside the CPU's four.
    /// let with_gpu = Plan { gpu: vec![GpuBalancer::STEALING, GpuBalancer::CudaManaged], ..plan };
    /// assert_eq!(with_gpu.renders_per_structure(), 6);
    /// ```
    pub fn renders_per_structure(&self) -> usize {
        let hybrid = if self.hybrid { self.threads.len() } else { 0 };
        (self.cpu.len() * self.threads.len() + hybrid + self.gpu.len()) * self.tiles.len()
    }

    /// Refuses a validation that compares nothing: fewer than two frames in `renders` (this
    /// plan's runs in each structure it is rendered in, and any further variants).
    ///
    /// # Errors
    /// Saying how many renders the plan makes.
    ///
    /// ```
    /// use renderer::validate::Plan;
    ///
    /// assert!(Plan::check_compares(2).is_ok());
    /// assert!(Plan::check_compares(1).is_err());
    /// ```
    pub fn check_compares(renders: usize) -> Result<()> {
        if renders < 2 {
            bail!(
                "nothing to compare: these balancers, thread counts and tile edges make {renders} render{}; validation needs at least two",
                if renders == 1 { "" } else { "s" }
            );
        }
        Ok(())
    }
}

/// How a frame compares with the first frame of the matrix.
///
/// ```
/// use renderer::film::Film;
/// use renderer::validate::{SameSums, Verdict};
///
/// let black = Film::new(4, 4, false);
/// let mut sums = SameSums::default();
/// assert_eq!(sums.check("first", &black), Verdict::Reference);
/// assert_eq!(sums.check("second", &Film::new(4, 4, false)), Verdict::Identical);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It is the first: the others are compared with it.
    Reference,
    /// Its sums equal the first frame's, pixel for pixel.
    Identical,
    /// `pixels` of its pixels differ from those of `first`, the first frame's label.
    Differs {
        /// The label of the first frame.
        first: String,
        /// How many pixels differ.
        pixels: usize,
    },
}

/// The frames checked so far, each against the first.
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::{Assignment, BalancerKind};
/// # use renderer::validate::Plan;
/// # let plan = Plan {
/// #     cpu: vec![
/// #         BalancerKind::static_tiles(Assignment::Interleaved).into(),
/// #         BalancerKind::counter(NonZeroUsize::MIN).into(),
/// #     ],
/// #     threads: vec![NonZeroUsize::MIN, NonZeroUsize::new(2).unwrap()],
/// #     tiles: vec![NonZeroU32::new(8).unwrap()],
/// #     hybrid: false,
/// #     gpu: Vec::new(),
/// # };
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// use renderer::validate::{SameSums, Verdict};
///
/// let mut sums = SameSums::default();
/// for run in plan.runs() {
///     let frame = run.render(&scene, None)?;
///     let verdict = sums.check(&run.label(), &frame.film);
///     assert!(matches!(verdict, Verdict::Reference | Verdict::Identical), "{verdict:?}");
/// }
/// assert_eq!(sums.differing(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct SameSums {
    /// The first frame's label and fixed-point sums.
    reference: Option<(String, Vec<[u64; 3]>)>,
    differing: usize,
}

impl SameSums {
    /// Compares `film` (of the frame `label`) with the first film checked, or keeps it as the
    /// first.
    ///
    /// ```
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// use std::num::{NonZeroU32, NonZeroUsize};
    /// use balancers::BalancerKind;
    /// use renderer::film::Film;
    /// use renderer::render::{RenderOptions, render};
    /// use renderer::validate::{SameSums, Verdict};
    ///
    /// let options = RenderOptions {
    ///     balancer: BalancerKind::counter(NonZeroUsize::MIN).into(),
    ///     threads: NonZeroUsize::MIN,
    ///     tile: NonZeroU32::new(8).unwrap(),
    ///     work_map: false,
    /// };
    /// let mut sums = SameSums::default();
    /// sums.check("counter", &render(&scene, &options)?.film);
    /// // A black film of the same size differs wherever the scene is not black.
    /// let verdict = sums.check("black", &Film::new(32, 32, false));
    /// assert!(matches!(verdict, Verdict::Differs { pixels, .. } if pixels > 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check(&mut self, label: &str, film: &Film) -> Verdict {
        let Some((first, want)) = &self.reference else {
            self.reference = Some((label.to_string(), film.sums()));
            return Verdict::Reference;
        };
        // Pixel by pixel against the film itself: no second copy of the sums.
        let pixels = want
            .iter()
            .enumerate()
            .filter(|&(i, w)| film.pixel_sums(i) != *w)
            .count();
        if pixels == 0 {
            Verdict::Identical
        } else {
            self.differing += 1;
            Verdict::Differs {
                first: first.clone(),
                pixels,
            }
        }
    }

    /// How many frames differ from the first.
    ///
    /// ```
    /// use renderer::film::Film;
    /// use renderer::validate::SameSums;
    ///
    /// let mut sums = SameSums::default();
    /// sums.check("a", &Film::new(2, 2, false));
    /// sums.check("b", &Film::new(2, 2, false));
    /// assert_eq!(sums.differing(), 0);
    /// ```
    pub fn differing(&self) -> usize {
        self.differing
    }
}
