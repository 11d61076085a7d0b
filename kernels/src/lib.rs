//! raylb's GPU balancers: CUDA kernels in which a warp is the worker and its lanes trace rays.
//!
//! - [`source`]: the CUDA C sources (`cuda/`) and their compilation with NVRTC.
//! - [`Gpu`]: the device, opened through the CUDA driver API, with the kernels compiled for it.
//! - [`Gpu::render`]: one frame with a [`GpuBalancer`]; the film comes back as the same
//!   fixed-point sums the CPU accumulates, so the resolve to 8-bit sRGB is the CPU's.
//!
//! The driver and NVRTC are loaded at run time (cudarc's dynamic loading): this crate builds
//! and its callers run on machines without CUDA, where [`Gpu::open`] answers which part is
//! missing.
//!
//! The scene is handed over as [`SceneData`]: the renderer's arrays (the flattened BVH's eight
//! node orders, triangles, shading, materials, lights, camera and settings), whose types are
//! those of the `layout` crate, copied to the device as they are. Everything else the kernels
//! share with the host (parameter structs, tasks, codes, figure slots, error bits, launch
//! sizes) comes from there too; `cuda/raylb_layout.cuh` is generated from the same
//! definitions, and `tests/layout_header.rs` checks that it is.

#![deny(missing_docs)]

pub mod check;
mod device;
pub mod emulator;
mod engine;
mod frame;
pub mod source;

pub use device::{DeviceInfo, Gpu};
pub use engine::{KernelCode, KernelResources};
pub use frame::{
    FrameRequest, GpuBalancer, GpuBatches, GpuFrame, SceneData, Structure, WarpDeque, WarpStats,
};

/// Why the GPU cannot render.
///
/// ```
/// use kernels::{Gpu, GpuError};
///
/// match Gpu::open() {
///     Ok(gpu) => println!("rendering on {}", gpu.info().name),
///     // A machine without an NVIDIA driver or GPU is told so in one line.
///     Err(e @ (GpuError::NoDriver | GpuError::NoDevice)) => assert!(!e.to_string().contains('\n')),
///     Err(e) => println!("no GPU: {e}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The CUDA driver library (`libcuda.so`) cannot be loaded.
    #[error("no NVIDIA driver: libcuda.so cannot be loaded")]
    NoDriver,
    /// The driver loads but finds no device.
    #[error("no CUDA device: the NVIDIA driver found no GPU")]
    NoDevice,
    /// NVRTC's library cannot be loaded.
    #[error(
        "no NVRTC: libnvrtc.so cannot be loaded (install the CUDA toolkit or the nvidia-cuda-nvrtc wheel and add its lib folder to LD_LIBRARY_PATH)"
    )]
    NoNvrtc,
    /// NVRTC rejected the kernels, or warned.
    #[error("the CUDA kernels do not compile: {0}")]
    Compile(String),
    /// A driver call failed.
    #[error("CUDA driver error in {what}: {error}")]
    Driver {
        /// What was being done.
        what: &'static str,
        /// The driver's error.
        error: String,
    },
    /// The kernel reported that a queue of tasks overflowed.
    #[error("a GPU task queue overflowed ({0}); the image would be incomplete")]
    Overflow(&'static str),
    /// The request cannot run as given.
    #[error("{0}")]
    Request(String),
    /// A frame's launches ran past their deadline (`RAYLB_GPU_TIMEOUT` seconds, 600 by
    /// default); the kernel is still running, and nothing else queued on the device will run.
    #[error(
        "the GPU's launches ran past their deadline of {seconds} s (RAYLB_GPU_TIMEOUT); a kernel may be livelocked"
    )]
    Timeout {
        /// The deadline, in seconds.
        seconds: f64,
    },
    /// The warp emulator stopped a launch: a deadlock, a livelock or a broken collective.
    #[error("the warp emulator stopped a launch: {0}")]
    Emulated(String),
}

impl GpuError {
    pub(crate) fn driver(what: &'static str) -> impl FnOnce(cudarc::driver::DriverError) -> Self {
        move |e| GpuError::Driver {
            what,
            error: format!("{e:?}"),
        }
    }
}
