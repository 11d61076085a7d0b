//! Checks only a device can answer, for `scripts/gpu-check.sh`'s GPU tests: the device's
//! `roundf`, `sqrtf`, division, `fminf`, `fmaxf` and the film's fixed-point conversion against
//! the host's on every 32-bit pattern, and the device's traversals of the octree and of the
//! wide BVH's GPU form on rays the host chooses. The host build of the kernels' math
//! (`cuda-math-host`) checks the same functions against Rust, but with the host's C library;
//! these run the device's own.
//!
//! The check kernels (`cuda/raylb_checks.cu`) are compiled after the kernels, in their
//! translation unit and with their options, so that what is checked is what the kernels call.
//!
//! Every pattern's results are folded into one digest per chunk of [`CHUNK`] patterns and per
//! function ([`FUNCTIONS`]): the wrapping sum of [`term`] over the chunk's patterns and results.
//! [`host_digests`] folds the host's results the same way, so a chunk whose digests differ
//! holds a pattern whose result differs, and [`DeviceChecks::float_results`] finds it. NaN
//! results are folded as one NaN ([`canonical`]) and zeros from min and max as +0
//! ([`zero_blind`]): what the kernels never look at.

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use layout::wide::WideNode;
use layout::{Ptr, Triangle, params};

use crate::engine::Param;
use crate::{Gpu, GpuError, SceneData, source};

/// Bits of a pattern's position in its chunk.
pub const CHUNK_BITS: u32 = 20;
/// Patterns in a chunk.
pub const CHUNK: u32 = 1 << CHUNK_BITS;
/// Chunks in the 2^32 patterns.
pub const CHUNKS: u32 = 1 << (32 - CHUNK_BITS);
/// The functions a digest is kept for, in the digests' order.
pub const FUNCTIONS: [&str; 6] = ["roundf", "sqrtf", "1/x", "fixed point", "fminf", "fmaxf"];
/// The partners each pattern meets in `fminf` and `fmaxf` ([`partner`]).
pub const PARTNERS: u32 = 8;
/// Results a pattern has: round, square root, reciprocal and fixed point, then min and max
/// against each partner in both orders ([`result`]).
pub const RESULTS: u32 = 4 + 4 * PARTNERS;

/// One digest per function of [`FUNCTIONS`].
pub type Digests = [u64; FUNCTIONS.len()];

/// splitmix64's finaliser, as `rl_check_mix`.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The term result `k` of pattern `x` adds to its function's digest, as `rl_check_term`.
///
/// ```
/// use kernels::check::term;
///
/// // A term depends on the pattern, the result's number and the result.
/// assert_ne!(term(7, 0, 1), term(7, 0, 2));
/// assert_ne!(term(7, 0, 1), term(7, 1, 1));
/// assert_eq!(term(7, 0, 1), term(7, 0, 1));
/// ```
pub fn term(x: u32, k: u32, result: u64) -> u64 {
    mix(((u64::from(x) << 8) | u64::from(k)) ^ result.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// A float result as the digests fold it: its bits, every NaN as the one quiet NaN.
///
/// ```
/// use kernels::check::canonical;
///
/// assert_eq!(canonical(1.0), 0x3f80_0000);
/// // Every NaN, whatever its sign and payload, is the one quiet NaN.
/// assert_eq!(canonical(f32::from_bits(0xffc0_1234)), 0x7fc0_0000);
/// assert_ne!(canonical(-0.0), canonical(0.0));
/// ```
pub fn canonical(v: f32) -> u64 {
    if v.is_nan() {
        0x7fc0_0000
    } else {
        u64::from(v.to_bits())
    }
}

/// As [`canonical`], with −0 read as +0: how `fminf` and `fmaxf` results are folded, since
/// neither C nor Rust fixes which of two equal zeros min and max return (and the kernels only
/// compare their results).
///
/// ```
/// use kernels::check::{canonical, zero_blind};
///
/// assert_eq!(zero_blind(-0.0), zero_blind(0.0));
/// assert_eq!(zero_blind(2.5), canonical(2.5));
/// ```
pub fn zero_blind(v: f32) -> u64 {
    if v == 0.0 { 0 } else { canonical(v) }
}

/// Partner `k` of pattern `x` in `fminf` and `fmaxf`, as `rl_check_partner`: +0, −0, 1, +∞,
/// −∞, a quiet NaN, `x` of the other sign, and `x` with its lowest bit flipped.
///
/// ```
/// use kernels::check::{PARTNERS, partner};
///
/// let x = 1.5f32.to_bits();
/// let partners: Vec<f32> = (0..PARTNERS).map(|k| partner(x, k)).collect();
/// assert_eq!(partners[2], 1.0);
/// assert!(partners[5].is_nan());
/// assert_eq!(partners[6], -1.5);
/// assert_eq!(partners[7].to_bits(), x ^ 1);
/// ```
pub fn partner(x: u32, k: u32) -> f32 {
    f32::from_bits(match k {
        0 => 0x0000_0000,
        1 => 0x8000_0000,
        2 => 0x3f80_0000,
        3 => 0x7f80_0000,
        4 => 0xff80_0000,
        5 => 0x7fc0_0000,
        6 => x ^ 0x8000_0000,
        _ => x ^ 1,
    })
}

/// The digest result `k` folds into, as `rl_check_function`.
///
/// ```
/// use kernels::check::{FUNCTIONS, RESULTS, function_of};
///
/// assert_eq!(FUNCTIONS[function_of(0)], "roundf");
/// // After the four single results, min and max alternate in pairs (both orders).
/// let names: Vec<&str> = (4..12).map(|k| FUNCTIONS[function_of(k)]).collect();
/// assert_eq!(names, ["fminf", "fminf", "fmaxf", "fmaxf", "fminf", "fminf", "fmaxf", "fmaxf"]);
/// assert!((0..RESULTS).all(|k| function_of(k) < FUNCTIONS.len()));
/// ```
pub fn function_of(k: u32) -> usize {
    if k < 4 {
        k as usize
    } else {
        4 + ((k - 4) % 4 / 2) as usize
    }
}

/// The host's functions the device's are checked against.
///
/// ```
/// use kernels::check::{FloatFunctions, result};
///
/// /// Rust's own functions (the renderer's tests use its film's fixed point).
/// struct Rust;
///
/// impl FloatFunctions for Rust {
///     fn round(x: f32) -> f32 {
///         x.round()
///     }
///     fn sqrt(x: f32) -> f32 {
///         x.sqrt()
///     }
///     fn recip(x: f32) -> f32 {
///         1.0 / x
///     }
///     fn to_fixed(x: f32) -> u64 {
///         (x.max(0.0) * 4096.0) as u64
///     }
///     fn min(a: f32, b: f32) -> f32 {
///         a.min(b)
///     }
///     fn max(a: f32, b: f32) -> f32 {
///         a.max(b)
///     }
/// }
///
/// // Result 0 of a pattern is its roundf.
/// assert_eq!(result::<Rust>(2.5f32.to_bits(), 0), u64::from(3.0f32.to_bits()));
/// ```
pub trait FloatFunctions {
    /// `roundf`: half away from zero.
    ///
    /// ```
    /// # use kernels::check::FloatFunctions;
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    /// assert_eq!(Rust::round(-2.5), -3.0);
    /// ```
    fn round(x: f32) -> f32;
    /// `sqrtf`.
    ///
    /// ```
    /// # use kernels::check::FloatFunctions;
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    /// assert_eq!(Rust::sqrt(9.0), 3.0);
    /// ```
    fn sqrt(x: f32) -> f32;
    /// `1.0f / x`.
    ///
    /// ```
    /// # use kernels::check::FloatFunctions;
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    /// assert_eq!(Rust::recip(4.0), 0.25);
    /// ```
    fn recip(x: f32) -> f32;
    /// The film's fixed-point conversion (`rl_to_fixed`).
    ///
    /// ```
    /// # use kernels::check::FloatFunctions;
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    /// assert_eq!(Rust::to_fixed(1.0), 4096);
    /// ```
    fn to_fixed(x: f32) -> u64;
    /// `fminf`.
    ///
    /// ```
    /// # use kernels::check::FloatFunctions;
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    /// assert_eq!(Rust::min(1.0, f32::NAN), 1.0);
    /// ```
    fn min(a: f32, b: f32) -> f32;
    /// `fmaxf`.
    ///
    /// ```
    /// # use kernels::check::FloatFunctions;
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    /// assert_eq!(Rust::max(-1.0, f32::NAN), -1.0);
    /// ```
    fn max(a: f32, b: f32) -> f32;
}

/// Result `k` of pattern `x` with the functions of `F`, as `rl_check_result` computes it on
/// the device.
///
/// ```
/// # use kernels::check::FloatFunctions;
/// # struct Rust;
/// # impl FloatFunctions for Rust {
/// #     fn round(x: f32) -> f32 { x.round() }
/// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
/// #     fn recip(x: f32) -> f32 { 1.0 / x }
/// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
/// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
/// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
/// # }
/// use kernels::check::{RESULTS, canonical, result};
///
/// let x = 2.0f32.to_bits();
/// assert_eq!(result::<Rust>(x, 1), canonical(2.0f32.sqrt()));
/// // fminf(x, +0) and fmaxf(+0, x): results 4 and 7.
/// assert_eq!(result::<Rust>(x, 4), 0);
/// assert_eq!(result::<Rust>(x, 7), u64::from(x));
/// assert!((0..RESULTS).all(|k| result::<Rust>(x, k) == result::<Rust>(x, k)));
/// ```
pub fn result<F: FloatFunctions>(x: u32, k: u32) -> u64 {
    let v = f32::from_bits(x);
    match k {
        0 => canonical(F::round(v)),
        1 => canonical(F::sqrt(v)),
        2 => canonical(F::recip(v)),
        3 => F::to_fixed(v),
        _ => {
            let j = k - 4;
            let p = partner(x, j / 4);
            zero_blind(match j % 4 {
                0 => F::min(v, p),
                1 => F::min(p, v),
                2 => F::max(v, p),
                _ => F::max(p, v),
            })
        }
    }
}

/// What result `k` is, for a report: e.g. `fmaxf(-inf [0xff800000], x)`.
///
/// ```
/// use kernels::check::describe;
///
/// let x = 1.0f32.to_bits();
/// assert_eq!(describe(x, 0), "roundf(x)");
/// // fmaxf(+inf, x): result 4 + 4 · 3 + 3.
/// assert_eq!(describe(x, 19), "fmaxf(inf [0x7f800000], x)");
/// ```
pub fn describe(x: u32, k: u32) -> String {
    if k < 4 {
        return format!("{}(x)", FUNCTIONS[k as usize]);
    }
    let j = k - 4;
    let p = partner(x, j / 4);
    let name = FUNCTIONS[function_of(k)];
    if j.is_multiple_of(2) {
        format!("{name}(x, {p:?} [{:#010x}])", p.to_bits())
    } else {
        format!("{name}({p:?} [{:#010x}], x)", p.to_bits())
    }
}

/// The digests of chunk `chunk` with the functions of `F`, folded as the device folds its own:
/// the sum over the chunk of [`term`] of every [`result`], written out so that the
/// functions inline (the check folds 2^32 × [`RESULTS`] of them).
///
/// ```
/// # use kernels::check::FloatFunctions;
/// # struct Rust;
/// # impl FloatFunctions for Rust {
/// #     fn round(x: f32) -> f32 { x.round() }
/// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
/// #     fn recip(x: f32) -> f32 { 1.0 / x }
/// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
/// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
/// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
/// # }
/// use kernels::check::{FUNCTIONS, host_digests};
///
/// // Chunk 0: the positive patterns up to 2^20 (zero and the smallest subnormals).
/// let digests = host_digests::<Rust>(0);
/// assert_eq!(digests.len(), FUNCTIONS.len());
/// assert_eq!(digests, host_digests::<Rust>(0));
/// assert_ne!(digests, host_digests::<Rust>(1));
/// ```
pub fn host_digests<F: FloatFunctions>(chunk: u32) -> Digests {
    let mut sums = [0u64; FUNCTIONS.len()];
    for i in 0..CHUNK {
        let x = (chunk << CHUNK_BITS) | i;
        let v = f32::from_bits(x);
        sums[0] = sums[0].wrapping_add(term(x, 0, canonical(F::round(v))));
        sums[1] = sums[1].wrapping_add(term(x, 1, canonical(F::sqrt(v))));
        sums[2] = sums[2].wrapping_add(term(x, 2, canonical(F::recip(v))));
        sums[3] = sums[3].wrapping_add(term(x, 3, F::to_fixed(v)));
        for j in 0..PARTNERS {
            let p = partner(x, j);
            let k = 4 + 4 * j;
            sums[4] = sums[4]
                .wrapping_add(term(x, k, zero_blind(F::min(v, p))))
                .wrapping_add(term(x, k + 1, zero_blind(F::min(p, v))));
            sums[5] = sums[5]
                .wrapping_add(term(x, k + 2, zero_blind(F::max(v, p))))
                .wrapping_add(term(x, k + 3, zero_blind(F::max(p, v))));
        }
    }
    sums
}

/// The wide BVH in its GPU form, as [`DeviceChecks::traversals`] takes it.
///
/// ```
/// use kernels::check::WideArrays;
///
/// // An empty tree: the traversal check refuses it before it launches anything.
/// let wide = WideArrays { nodes: &[], triangles: &[], ids: &[], padding: 0.0 };
/// assert!(wide.nodes.is_empty() && wide.ids.len() == wide.triangles.len());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct WideArrays<'a> {
    /// The nodes; the root first.
    pub nodes: &'a [WideNode],
    /// The triangles in the tree's leaf order.
    pub triangles: &'a [Triangle],
    /// The input index of each triangle.
    pub ids: &'a [u32],
    /// The boxes' padding.
    pub padding: f32,
}

/// A probe ray: origin, direction, `t_min`, `t_max`.
pub type ProbeRay = [f32; 8];

/// One ray's answers from both structures: the closest hit's leaf-order index (`u32::MAX` for
/// a miss) and distance, and whether the ray is occluded.
///
/// ```
/// use kernels::check::Answers;
///
/// let miss = (u32::MAX, f32::INFINITY.to_bits());
/// let answers = Answers { octree: miss, octree_occluded: false, wide: miss, wide_occluded: false };
/// // Both structures agree when their answers are equal.
/// assert_eq!(answers.octree, answers.wide);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answers {
    /// The octree's closest hit: its leaf-order index and its distance's bits.
    pub octree: (u32, u32),
    /// Whether the octree's triangles block the ray.
    pub octree_occluded: bool,
    /// The wide BVH's closest hit: its leaf-order index and its distance's bits.
    pub wide: (u32, u32),
    /// Whether the wide BVH's triangles block the ray.
    pub wide_occluded: bool,
}

/// The check kernels, loaded on a [`Gpu`].
///
/// ```no_run
/// use kernels::Gpu;
/// use kernels::check::{DeviceChecks, FloatFunctions, host_digests};
/// # struct Rust;
/// # impl FloatFunctions for Rust {
/// #     fn round(x: f32) -> f32 { x.round() }
/// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
/// #     fn recip(x: f32) -> f32 { 1.0 / x }
/// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
/// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
/// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
/// # }
///
/// // Needs an NVIDIA GPU: the device's own functions, not the host's.
/// let gpu = Gpu::open()?;
/// let checks = DeviceChecks::new(&gpu)?;
/// assert_eq!(checks.float_digests(0, 1)?[0], host_digests::<Rust>(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct DeviceChecks<'g> {
    gpu: &'g Gpu,
    floats: CudaFunction,
    float_results: CudaFunction,
    traversals: CudaFunction,
}

impl<'g> DeviceChecks<'g> {
    /// Compiles the check kernels with the kernels, for `gpu`'s architecture, and loads them.
    ///
    /// # Errors
    /// When NVRTC rejects them or the driver cannot load them.
    ///
    /// ```no_run
    /// use kernels::Gpu;
    /// use kernels::check::{DeviceChecks, FloatFunctions, host_digests};
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    ///
    /// // Needs an NVIDIA GPU: the device's own functions, not the host's.
    /// let gpu = Gpu::open()?;
    /// let checks = DeviceChecks::new(&gpu)?;
    /// assert_eq!(checks.float_digests(0, 1)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(gpu: &'g Gpu) -> Result<Self, GpuError> {
        let (major, minor) = gpu.info().compute_capability;
        let program = source::program_source() + "\n" + source::CHECKS;
        let compiled = source::compile_source(&program, major, minor)?;
        let module = gpu
            .engine
            .cuda()?
            .context
            .load_module(Ptx::from_src(compiled.ptx))
            .map_err(GpuError::driver("loading the check kernels"))?;
        let function = |name: &str| {
            module
                .load_function(name)
                .map_err(GpuError::driver("finding a check kernel"))
        };
        Ok(Self {
            gpu,
            floats: function("rl_check_floats")?,
            float_results: function("rl_check_float_results")?,
            traversals: function("rl_check_traversals")?,
        })
    }

    /// The device's digests of chunks `first..first + count`.
    ///
    /// # Errors
    /// When the chunks are not all among the [`CHUNKS`], or a driver call fails.
    ///
    /// ```no_run
    /// use kernels::Gpu;
    /// use kernels::check::{DeviceChecks, FloatFunctions, host_digests};
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    ///
    /// // Needs an NVIDIA GPU: the device's own functions, not the host's.
    /// let gpu = Gpu::open()?;
    /// let checks = DeviceChecks::new(&gpu)?;
    /// let device = checks.float_digests(0, 4)?;
    /// let differ = (0..4).filter(|&c| device[c as usize] != host_digests::<Rust>(c)).count();
    /// assert_eq!(differ, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn float_digests(&self, first: u32, count: u32) -> Result<Vec<Digests>, GpuError> {
        if count == 0 || first.checked_add(count).is_none_or(|end| end > CHUNKS) {
            return Err(GpuError::Request(format!(
                "chunks {first}..{first}+{count} of {CHUNKS}"
            )));
        }
        let gpu = self.gpu;
        let digests = gpu
            .engine
            .zeros::<u64>(count as usize * FUNCTIONS.len(), "allocating the digests")?;
        let out = digests.ptr_mut(&gpu.engine).address();
        let config = LaunchConfig {
            // 16 blocks of 256 threads a chunk: 256 patterns a thread.
            grid_dim: (16, count, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut builder = gpu.engine.cuda()?.stream.launch_builder(&self.floats);
        builder.arg(&first).arg(&out);
        // SAFETY: `rl_check_floats(rl_u32 first_chunk, rl_u64* digests)`: blockIdx.y runs over
        // `count` chunks, each adding to its own FUNCTIONS words of `digests`, which holds
        // `count` × FUNCTIONS zeroed words.
        unsafe { builder.launch(config) }.map_err(GpuError::driver("launching the float check"))?;
        let flat = gpu.engine.read(&digests, "reading the digests")?;
        Ok(flat
            .chunks_exact(FUNCTIONS.len())
            .take(count as usize)
            .map(|d| d.try_into().expect("FUNCTIONS words"))
            .collect())
    }

    /// Every result of the `count` patterns from `first`: [`RESULTS`] words a pattern.
    ///
    /// # Errors
    /// When the patterns run past 2^32, or a driver call fails.
    ///
    /// ```no_run
    /// use kernels::Gpu;
    /// use kernels::check::{DeviceChecks, FloatFunctions, host_digests};
    /// # struct Rust;
    /// # impl FloatFunctions for Rust {
    /// #     fn round(x: f32) -> f32 { x.round() }
    /// #     fn sqrt(x: f32) -> f32 { x.sqrt() }
    /// #     fn recip(x: f32) -> f32 { 1.0 / x }
    /// #     fn to_fixed(x: f32) -> u64 { (x.max(0.0) * 4096.0) as u64 }
    /// #     fn min(a: f32, b: f32) -> f32 { a.min(b) }
    /// #     fn max(a: f32, b: f32) -> f32 { a.max(b) }
    /// # }
    ///
    /// // Needs an NVIDIA GPU: the device's own functions, not the host's.
    /// let gpu = Gpu::open()?;
    /// let checks = DeviceChecks::new(&gpu)?;
    /// use kernels::check::{RESULTS, result};
    ///
    /// // Where a chunk's digests differ, its patterns' results say which differ.
    /// let results = checks.float_results(0x3fc0_0000, 16)?;
    /// for (i, pattern) in results.chunks_exact(RESULTS as usize).enumerate() {
    ///     let x = 0x3fc0_0000 + i as u32;
    ///     assert!((0..RESULTS).all(|k| pattern[k as usize] == result::<Rust>(x, k)));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn float_results(&self, first: u32, count: u32) -> Result<Vec<u64>, GpuError> {
        if count == 0 || first.checked_add(count - 1).is_none() {
            return Err(GpuError::Request(format!("patterns {first}+{count}")));
        }
        let gpu = self.gpu;
        let results = gpu.engine.zeros::<u64>(
            count as usize * RESULTS as usize,
            "allocating the float results",
        )?;
        let out = results.ptr_mut(&gpu.engine).address();
        let config = LaunchConfig {
            grid_dim: (count.div_ceil(256), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut builder = gpu
            .engine
            .cuda()?
            .stream
            .launch_builder(&self.float_results);
        builder.arg(&first).arg(&count).arg(&out);
        // SAFETY: `rl_check_float_results(rl_u32 first, rl_u32 count, rl_u64* out)`: thread i
        // < count writes RESULTS words from i · RESULTS, inside the `count` × RESULTS words of
        // `results`.
        unsafe { builder.launch(config) }
            .map_err(GpuError::driver("launching the float results"))?;
        gpu.engine.read(&results, "reading the float results")
    }

    /// The device's answers for `rays` in the octree of `scene` and in the wide BVH `wide`
    /// (both built from the same triangles).
    ///
    /// # Errors
    /// When a driver call fails, or `scene`'s node arrays are not eight orders of one length.
    ///
    /// ```
    /// use kernels::check::{DeviceChecks, ProbeRay, WideArrays};
    /// use kernels::{GpuError, SceneData};
    ///
    /// /// How many of `rays` the device's two traversals answer alike.
    /// fn agreeing(
    ///     checks: &DeviceChecks,
    ///     scene: &SceneData,
    ///     wide: &WideArrays,
    ///     rays: &[ProbeRay],
    /// ) -> Result<usize, GpuError> {
    ///     let answers = checks.traversals(scene, wide, rays)?;
    ///     Ok(answers
    ///         .iter()
    ///         .filter(|a| a.octree.0 == a.wide.0 && a.octree_occluded == a.wide_occluded)
    ///         .count())
    /// }
    /// ```
    pub fn traversals(
        &self,
        scene: &SceneData,
        wide: &WideArrays,
        rays: &[ProbeRay],
    ) -> Result<Vec<Answers>, GpuError> {
        let octree =
            matches!(scene.structure, crate::Structure::Octree(n) if n.len().is_multiple_of(8));
        if !octree || wide.nodes.is_empty() {
            return Err(GpuError::Request(
                "the octree's eight node orders and a wide root are needed".into(),
            ));
        }
        if wide.ids.len() != wide.triangles.len() {
            return Err(GpuError::Request(
                "the wide BVH's ids and triangles differ in length".into(),
            ));
        }
        let n = u32::try_from(rays.len())
            .map_err(|_| GpuError::Request(format!("{} rays", rays.len())))?;
        let gpu = self.gpu;
        let uploaded = gpu.upload_scene(scene)?;
        let nodes = gpu.engine.upload(wide.nodes, "uploading the wide nodes")?;
        let triangles = gpu
            .engine
            .upload(wide.triangles, "uploading the wide triangles")?;
        let ids = gpu.engine.upload(wide.ids, "uploading the wide ids")?;
        let flat: Vec<f32> = rays.iter().flatten().copied().collect();
        let probe = gpu.engine.upload(&flat, "uploading the rays")?;
        let out = gpu
            .engine
            .zeros::<u32>(rays.len() * 6, "allocating the answers")?;
        let bvh = params::WideBvh {
            nodes: nodes.ptr(&gpu.engine),
            triangles: triangles.ptr(&gpu.engine),
            ids: ids.ptr(&gpu.engine),
            padding: wide.padding,
            pad: 0,
        };
        let (scene_param, wide_param) = (Param(uploaded.params), Param(bvh));
        let rays_address: Ptr<f32> = probe.ptr(&gpu.engine);
        let (rays_address, out_address) =
            (rays_address.address(), out.ptr_mut(&gpu.engine).address());
        let config = LaunchConfig {
            grid_dim: (n.div_ceil(128).max(1), 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut builder = gpu.engine.cuda()?.stream.launch_builder(&self.traversals);
        builder
            .arg(&scene_param)
            .arg(&wide_param)
            .arg(&rays_address)
            .arg(&n)
            .arg(&out_address);
        // SAFETY: `rl_check_traversals(rl_scene, rl_wide_bvh, const float* rays, rl_u32 n,
        // rl_u32* out)`, the structs in the shared layout: the scene's and the wide BVH's
        // arrays are live uploads of the slices given (the traversals index only inside a
        // well-formed tree, which the renderer builds), `n` rays of eight floats, and six
        // words of `out` a ray.
        unsafe { builder.launch(config) }
            .map_err(GpuError::driver("launching the traversal check"))?;
        let words = gpu.engine.read(&out, "reading the answers")?;
        Ok(words
            .chunks_exact(6)
            .take(rays.len())
            .map(|w| Answers {
                octree: (w[0], w[1]),
                octree_occluded: w[2] != 0,
                wide: (w[3], w[4]),
                wide_occluded: w[5] != 0,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rust's functions, as the renderer computes.
    struct Rust;

    impl FloatFunctions for Rust {
        fn round(x: f32) -> f32 {
            x.round()
        }
        fn sqrt(x: f32) -> f32 {
            x.sqrt()
        }
        fn recip(x: f32) -> f32 {
            1.0 / x
        }
        fn to_fixed(x: f32) -> u64 {
            // Any function of the float does for the fold; the film's is in the renderer.
            (x * 4_294_967_296.0).round() as u64
        }
        fn min(a: f32, b: f32) -> f32 {
            a.min(b)
        }
        fn max(a: f32, b: f32) -> f32 {
            a.max(b)
        }
    }

    /// Rust's functions, but `round` wrong for 1.5 (rounded down).
    struct RoundWrongOnce;

    impl FloatFunctions for RoundWrongOnce {
        fn round(x: f32) -> f32 {
            if x == 1.5 { 1.0 } else { x.round() }
        }
        fn sqrt(x: f32) -> f32 {
            Rust::sqrt(x)
        }
        fn recip(x: f32) -> f32 {
            Rust::recip(x)
        }
        fn to_fixed(x: f32) -> u64 {
            Rust::to_fixed(x)
        }
        fn min(a: f32, b: f32) -> f32 {
            Rust::min(a, b)
        }
        fn max(a: f32, b: f32) -> f32 {
            Rust::max(a, b)
        }
    }

    #[test]
    fn the_written_out_fold_is_the_sum_of_every_results_term() {
        let chunk = 1.0f32.to_bits() >> CHUNK_BITS;
        let mut sums = [0u64; FUNCTIONS.len()];
        for i in 0..CHUNK {
            let x = (chunk << CHUNK_BITS) | i;
            for k in 0..RESULTS {
                let f = function_of(k);
                sums[f] = sums[f].wrapping_add(term(x, k, result::<Rust>(x, k)));
            }
        }
        assert_eq!(host_digests::<Rust>(chunk), sums);
    }

    #[test]
    fn a_function_wrong_for_one_pattern_changes_its_chunks_digest_alone() {
        let chunk = 1.5f32.to_bits() >> CHUNK_BITS;
        let right = host_digests::<Rust>(chunk);
        let wrong = host_digests::<RoundWrongOnce>(chunk);
        assert_ne!(right[0], wrong[0], "roundf's digest");
        assert_eq!(right[1..], wrong[1..], "the other functions' digests");
        // The chunk before it holds no 1.5.
        assert_eq!(
            host_digests::<RoundWrongOnce>(chunk - 1),
            host_digests::<Rust>(chunk - 1)
        );
    }

    #[test]
    fn nan_payloads_and_zeros_from_min_and_max_are_folded_as_one() {
        assert_eq!(canonical(f32::from_bits(0xffc0_0001)), 0x7fc0_0000);
        assert_eq!(canonical(-0.0), 0x8000_0000);
        assert_eq!(zero_blind(-0.0), 0);
        assert_eq!(zero_blind(f32::NAN), 0x7fc0_0000);
        // Every result number folds into the function it is of.
        let mut per_function = [0; FUNCTIONS.len()];
        for k in 0..RESULTS {
            per_function[function_of(k)] += 1;
        }
        assert_eq!(per_function, [1, 1, 1, 1, 2 * PARTNERS, 2 * PARTNERS]);
    }
}
