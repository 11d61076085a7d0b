//! The device: a CUDA context, the kernels compiled for it, and the figures the launches need.

use std::sync::Arc;

use cudarc::driver::sys::{self, CUdevice_attribute};
use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::engine::{Cuda, Engine, Kernel, KernelCode};
use crate::{GpuError, source};

/// What the device is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// The SM clock in kHz, to turn the kernels' cycle counts into time.
    pub clock_khz: u32,
    /// The most threads a multiprocessor holds at once: the measure of occupancy.
    pub max_threads_per_multiprocessor: u32,
}

/// An opened GPU with raylb's kernels loaded. Opening compiles the kernels (NVRTC, for this
/// device's architecture), or takes the PTX a previous run left in the cache
/// ([`source::cache_dir`]); every frame rendered through the same `Gpu` reuses the module.
/// With the `emulator` feature, `Gpu::emulated` runs the same kernels on the warp emulator.
pub struct Gpu {
    pub(crate) engine: Engine,
    /// The kernels that trace scenes in the octree.
    pub(crate) octree: TracingKernels,
    /// The kernels that trace scenes in the wide BVH.
    pub(crate) wide: TracingKernels,
    pub(crate) fill_deques: Kernel,
    pub(crate) info: DeviceInfo,
    pub(crate) compile_log: String,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("info", &self.info)
            .field("emulated", &self.is_emulated())
            .finish_non_exhaustive()
    }
}

/// The kernels that trace rays, compiled for one structure (`rl_persistent_body` and
/// `rl_block_per_tile_body` in `cuda/raylb_kernels.cu`, one entry point each per structure).
#[derive(Debug)]
pub(crate) struct TracingKernels {
    /// The persistent kernel of `static`, `counter` and `stealing`.
    pub(crate) persistent: Kernel,
    /// `cuda-managed`'s kernel, one block per tile.
    pub(crate) block_per_tile: Kernel,
}

impl Gpu {
    /// The kernels for a scene whose parameter is `scene`: those of the wide BVH where its
    /// wide nodes are given, else those of the octree.
    pub(crate) fn tracing(&self, scene: &layout::params::Scene) -> &TracingKernels {
        if scene.wide_nodes == layout::Ptr::NULL {
            &self.octree
        } else {
            &self.wide
        }
    }

    /// Opens device 0 and compiles the kernels for it.
    ///
    /// # Errors
    /// Says which is missing: the driver, a device, or NVRTC; or why compiling or loading the
    /// kernels failed.
    pub fn open() -> Result<Self, GpuError> {
        check_present()?;
        let context = open_context()?;
        let info = device_info(&context)?;
        let (module, compile_log, code) = load_module(&context, info.compute_capability)?;
        let kernel = |name| find_kernel(&module, name);
        Ok(Self {
            octree: TracingKernels {
                persistent: kernel("rl_persistent")?,
                block_per_tile: kernel("rl_block_per_tile")?,
            },
            wide: TracingKernels {
                persistent: kernel("rl_persistent_wide")?,
                block_per_tile: kernel("rl_block_per_tile_wide")?,
            },
            fill_deques: kernel("rl_fill_deques")?,
            engine: Engine::Cuda(Cuda {
                stream: context.default_stream(),
                context,
                _module: module,
                multiprocessors: info.multiprocessors,
                max_threads_per_multiprocessor: info.max_threads_per_multiprocessor,
                code,
            }),
            info,
            compile_log,
        })
    }

    /// Whether the kernels run on the warp emulator.
    pub fn is_emulated(&self) -> bool {
        self.engine.is_emulated()
    }

    /// What the device is.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// NVRTC's log of the compilation (empty: no warnings are allowed).
    pub fn compile_log(&self) -> &str {
        &self.compile_log
    }
}

/// Refuses, saying which is missing, a machine without the CUDA driver, a device, or NVRTC.
fn check_present() -> Result<(), GpuError> {
    // SAFETY: only tries to open the driver library (dlopen) under its known names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(GpuError::NoDriver);
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => {}
        // cuInit fails with "no device" on machines with a driver but no GPU.
        _ => return Err(GpuError::NoDevice),
    }
    if !source::nvrtc_available() {
        return Err(GpuError::NoNvrtc);
    }
    Ok(())
}

/// Device 0's primary context, which waits for the device by sleeping.
///
/// The driver's default scheduling (`SCHED_AUTO`, with one context and more cores than
/// contexts) spins a core while the host waits for the device, in every synchronous copy and
/// event wait; a hybrid frame's threads (its CPU workers, and the GPU's host thread on the
/// last core) use every core, and a spinning waiter takes one from them. Blocking synchronisation makes the waiting thread sleep in the driver instead.
/// It is set on device 0's primary context before the context is retained, which the driver
/// accepts (since CUDA 11) whether or not it is active.
fn open_context() -> Result<Arc<CudaContext>, GpuError> {
    let device =
        cudarc::driver::result::device::get(0).map_err(GpuError::driver("finding device 0"))?;
    // SAFETY: `device` is a handle the driver has just returned, and the call only sets the
    // scheduling flags of its primary context.
    unsafe {
        sys::cuDevicePrimaryCtxSetFlags_v2(
            device,
            sys::CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC as u32,
        )
    }
    .result()
    .map_err(GpuError::driver("asking for blocking synchronisation"))?;
    CudaContext::new(0).map_err(GpuError::driver("opening device 0"))
}

/// What the device of `context` is: its name, compute capability and the attributes the
/// launches and reports need.
fn device_info(context: &CudaContext) -> Result<DeviceInfo, GpuError> {
    let compute_capability = context
        .compute_capability()
        .map_err(GpuError::driver("reading the compute capability"))?;
    let attribute = |a: CUdevice_attribute, what: &'static str| {
        context
            .attribute(a)
            .map(|v| v as u32)
            .map_err(GpuError::driver(what))
    };
    Ok(DeviceInfo {
        name: context
            .name()
            .map_err(GpuError::driver("reading the name"))?,
        compute_capability,
        multiprocessors: attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "reading the multiprocessor count",
        )?,
        clock_khz: attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
            "reading the clock rate",
        )?,
        max_threads_per_multiprocessor: attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            "reading the threads per multiprocessor",
        )?,
    })
}

/// The kernels' module loaded into `context` for a device of `compute_capability`, with
/// NVRTC's log and what it was loaded from.
///
/// Machine code for this device first: a driver older than the NVRTC loads it, where it would
/// refuse that NVRTC's PTX. PTX, which the driver compiles itself, where no CUBIN can be had or
/// loaded. Either is compiled once and then taken from the cache ([`source::cache_dir`]).
fn load_module(
    context: &Arc<CudaContext>,
    (major, minor): (i32, i32),
) -> Result<(Arc<CudaModule>, String, KernelCode), GpuError> {
    let cache = source::cache_dir();
    let cubin = source::compile_cubin_cached(major, minor, cache.as_deref()).and_then(
        |(code, log, _from_cache)| {
            context
                .load_module(Ptx::from_binary(code))
                .map(|module| (module, log))
                .map_err(GpuError::driver("loading the kernels' machine code"))
        },
    );
    match cubin {
        Ok((module, log)) => Ok((module, log, KernelCode::Cubin)),
        Err(_) => {
            let (compiled, _from_cache) = source::compile_cached(major, minor, cache.as_deref())?;
            let module = context
                .load_module(Ptx::from_src(compiled.ptx))
                .map_err(GpuError::driver("loading the compiled kernels (PTX newer than the driver? use the driver's own NVRTC)"))?;
            Ok((module, compiled.log, KernelCode::Ptx))
        }
    }
}

/// The kernel `name` of `module`.
fn find_kernel(module: &Arc<CudaModule>, name: &'static str) -> Result<Kernel, GpuError> {
    Ok(Kernel {
        name,
        function: Some(
            module
                .load_function(name)
                .map_err(GpuError::driver("finding a kernel in the module"))?,
        ),
    })
}

impl Gpu {
    /// The warp emulator as a GPU: frames are set up and read back as on a device, and every
    /// launch runs the kernels' own source on this machine (see [`crate::emulator`]).
    ///
    /// # Errors
    /// When `options` name no block, or this build has no emulator (the `emulator` feature).
    pub fn emulated(options: crate::emulator::EmulatorOptions) -> Result<Self, GpuError> {
        if options.blocks == 0 {
            return Err(GpuError::Request(
                "the emulator needs at least one block".into(),
            ));
        }
        #[cfg(not(feature = "emulator"))]
        return Err(GpuError::Request(
            "this raylb is built without the warp emulator; build it with `cargo build --release --features gpu-emulator`".into(),
        ));
        #[cfg(feature = "emulator")]
        Self::on_emulator(options)
    }

    #[cfg(feature = "emulator")]
    fn on_emulator(options: crate::emulator::EmulatorOptions) -> Result<Self, GpuError> {
        let kernel = |name| Kernel {
            name,
            function: None,
        };
        Ok(Gpu {
            engine: Engine::Emulator(crate::emulator::Emulator { options }),
            octree: TracingKernels {
                persistent: kernel("rl_persistent"),
                block_per_tile: kernel("rl_block_per_tile"),
            },
            wide: TracingKernels {
                persistent: kernel("rl_persistent_wide"),
                block_per_tile: kernel("rl_block_per_tile_wide"),
            },
            fill_deques: kernel("rl_fill_deques"),
            info: DeviceInfo {
                name: format!(
                    "raylb warp emulator ({} blocks, seed {}; its times mean nothing)",
                    options.blocks, options.seed
                ),
                compute_capability: (0, 0),
                multiprocessors: 1,
                // The emulator's clock counts scheduler steps: a step is read as a nanosecond.
                clock_khz: 1_000_000,
                max_threads_per_multiprocessor: options.blocks * layout::kernel::PERSISTENT_THREADS,
            },
            compile_log: String::new(),
        })
    }
}
