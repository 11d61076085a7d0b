//! What runs the kernels: a CUDA device through the driver API, or the warp emulator
//! ([`crate::emulator`], with the `emulator` feature), which runs the kernels' own source on
//! the host. A frame is set up, launched and read back by the same code for both
//! (`frame.rs`); only the few operations here tell them apart: memory, launches, occupancy,
//! the kernel's clock.

use std::ffi::{OsStr, c_void};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::marker::PhantomData;

use bytemuck::Pod;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchArgs, LaunchConfig, PushKernelArg,
};
use layout::params;
use layout::{Ptr, PtrMut};

use crate::GpuError;

/// What the compiler gave a kernel, as the driver reports it once loaded, and the occupancy
/// that gives at the block size raylb launches it with.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelResources {
    /// The kernel's name, e.g. `rl_persistent`.
    pub kernel: &'static str,
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread, in bytes: the stack frame, spilled registers included.
    pub local_bytes: u32,
    /// Static shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// Threads per block launched.
    pub threads_per_block: u32,
    /// Blocks of that size a multiprocessor holds at once (the occupancy query's answer).
    pub blocks_per_multiprocessor: u32,
    /// Resident threads over the most a multiprocessor holds.
    pub occupancy: f64,
    /// What the driver loaded the kernel from.
    pub code: KernelCode,
}

/// What the kernels were loaded from: their machine code for the device, built by NVRTC, or
/// their PTX, which the driver compiles itself (where no CUBIN could be built or loaded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelCode {
    /// A CUBIN for the device's architecture, `sm_XY`.
    Cubin,
    /// PTX for its compute capability, compiled by the driver.
    Ptx,
}

impl std::fmt::Display for KernelCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Cubin => "CUBIN",
            Self::Ptx => "PTX",
        })
    }
}

/// Where the kernels run.
pub(crate) enum Engine {
    /// A CUDA device.
    Cuda(Cuda),
    /// The warp emulator.
    #[cfg(feature = "emulator")]
    Emulator(crate::emulator::Emulator),
}

/// A CUDA device: its context, the stream every launch and copy goes to, and the module of
/// kernels loaded into it.
pub(crate) struct Cuda {
    pub(crate) context: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) _module: Arc<CudaModule>,
    /// Streaming multiprocessors, and the most threads one holds: for resident blocks and
    /// occupancy.
    pub(crate) multiprocessors: u32,
    pub(crate) max_threads_per_multiprocessor: u32,
    /// What the module was loaded from.
    pub(crate) code: KernelCode,
}

impl Cuda {
    /// The resources of `kernel` (named `name`) at `threads` threads a block.
    fn resources(
        &self,
        kernel: &CudaFunction,
        name: &'static str,
        threads: u32,
    ) -> Result<KernelResources, GpuError> {
        let attribute = |read: fn(&CudaFunction) -> Result<i32, cudarc::driver::DriverError>| {
            read(kernel)
                .map(|v| v.max(0) as u32)
                .map_err(GpuError::driver("reading a kernel's attributes"))
        };
        let blocks = kernel
            .occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)
            .map_err(GpuError::driver("querying occupancy"))?;
        Ok(KernelResources {
            kernel: name,
            registers: attribute(CudaFunction::num_regs)?,
            local_bytes: attribute(CudaFunction::local_size_bytes)?,
            shared_bytes: attribute(CudaFunction::shared_size_bytes)?,
            threads_per_block: threads,
            blocks_per_multiprocessor: blocks,
            occupancy: f64::from(blocks * threads)
                / f64::from(self.max_threads_per_multiprocessor.max(1)),
            code: self.code,
        })
    }
}

/// A kernel: its entry point's name, and on a CUDA device the loaded function.
#[derive(Debug)]
pub(crate) struct Kernel {
    pub(crate) name: &'static str,
    pub(crate) function: Option<CudaFunction>,
}

/// Memory the kernels read and write: on the device, or, under the emulator, on the host
/// (16-byte aligned, as the device's allocations are at least).
#[cfg_attr(not(feature = "emulator"), allow(dead_code))]
pub(crate) enum Memory {
    Cuda(CudaSlice<u8>),
    Host(Box<[u128]>),
}

#[cfg_attr(not(feature = "emulator"), allow(dead_code))]
impl Memory {
    fn host(bytes: usize) -> Self {
        Memory::Host(vec![0u128; bytes.div_ceil(16).max(1)].into_boxed_slice())
    }

    fn host_bytes(words: &[u128]) -> &[u8] {
        bytemuck::cast_slice(words)
    }
}

/// A kernel's parameters, in order: the shared layout's structs (and plain integers), passed by
/// value.
pub(crate) trait Params {
    /// Pushes each onto a CUDA launch.
    fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>);
    /// The address of each, in order, for the emulator.
    #[cfg_attr(not(feature = "emulator"), allow(dead_code))]
    fn addresses(&self) -> Vec<*const c_void>;
}

impl<A, B> Params for (Param<A>, Param<B>)
where
    Param<A>: DeviceRepr,
    Param<B>: DeviceRepr,
{
    fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>) {
        launch.arg(&self.0).arg(&self.1);
    }

    fn addresses(&self) -> Vec<*const c_void> {
        vec![
            (&raw const self.0).cast::<c_void>(),
            (&raw const self.1).cast::<c_void>(),
        ]
    }
}

impl<A, B, C> Params for (Param<A>, Param<B>, Param<C>)
where
    Param<A>: DeviceRepr,
    Param<B>: DeviceRepr,
    Param<C>: DeviceRepr,
{
    fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>) {
        launch.arg(&self.0).arg(&self.1).arg(&self.2);
    }

    fn addresses(&self) -> Vec<*const c_void> {
        vec![
            (&raw const self.0).cast::<c_void>(),
            (&raw const self.1).cast::<c_void>(),
            (&raw const self.2).cast::<c_void>(),
        ]
    }
}

/// A point in a launch sequence the kernel time is measured from or to: an event recorded on
/// the device's stream, or, under the emulator, the host's clock (its times mean nothing).
#[cfg_attr(not(feature = "emulator"), allow(dead_code))]
pub(crate) enum Mark {
    Cuda(CudaEvent),
    Host(Instant),
}

impl Engine {
    /// The CUDA device, for what only a device can do (the device checks).
    ///
    /// # Errors
    /// Under the emulator.
    pub(crate) fn cuda(&self) -> Result<&Cuda, GpuError> {
        match self {
            Engine::Cuda(cuda) => Ok(cuda),
            #[cfg(feature = "emulator")]
            Engine::Emulator(_) => Err(GpuError::Request(
                "this needs a GPU: the warp emulator runs the kernels alone".into(),
            )),
        }
    }

    /// Whether the kernels run on the warp emulator.
    pub(crate) fn is_emulated(&self) -> bool {
        !matches!(self, Engine::Cuda(_))
    }

    pub(crate) fn address(&self, memory: &Memory) -> u64 {
        match (memory, self) {
            (Memory::Cuda(bytes), Engine::Cuda(cuda)) => {
                let (ptr, _sync) = bytes.device_ptr(&cuda.stream);
                ptr
            }
            (Memory::Host(words), _) => words.as_ptr() as u64,
            #[allow(unreachable_patterns)]
            _ => unreachable!("memory of another engine"),
        }
    }

    /// `items` copied to the kernels' memory.
    pub(crate) fn upload<T: Pod>(
        &self,
        items: &[T],
        what: &'static str,
    ) -> Result<DeviceArray<T>, GpuError> {
        let bytes: &[u8] = bytemuck::cast_slice(items);
        // A zero-length allocation is refused; an empty array gets one unread byte.
        let bytes = if bytes.is_empty() { &[0u8][..] } else { bytes };
        let memory = match self {
            Engine::Cuda(cuda) => Memory::Cuda(
                cuda.stream
                    .clone_htod(bytes)
                    .map_err(GpuError::driver(what))?,
            ),
            #[cfg(feature = "emulator")]
            Engine::Emulator(_) => {
                let mut memory = Memory::host(bytes.len());
                if let Memory::Host(words) = &mut memory {
                    bytemuck::cast_slice_mut::<u128, u8>(words)[..bytes.len()]
                        .copy_from_slice(bytes);
                }
                memory
            }
        };
        Ok(DeviceArray::new(memory, bytes.len()))
    }

    /// `n` zeroed `T`s (all the shared types are valid as zeros).
    pub(crate) fn zeros<T: Pod>(
        &self,
        n: usize,
        what: &'static str,
    ) -> Result<DeviceArray<T>, GpuError> {
        let bytes = (n * size_of::<T>()).max(1);
        let memory = match self {
            Engine::Cuda(cuda) => Memory::Cuda(
                cuda.stream
                    .alloc_zeros::<u8>(bytes)
                    .map_err(GpuError::driver(what))?,
            ),
            #[cfg(feature = "emulator")]
            Engine::Emulator(_) => Memory::host(bytes),
        };
        Ok(DeviceArray::new(memory, bytes))
    }

    /// The array brought back.
    pub(crate) fn read<T: Pod>(
        &self,
        array: &DeviceArray<T>,
        what: &'static str,
    ) -> Result<Vec<T>, GpuError> {
        let copied;
        let bytes: &[u8] = match (&array.memory, self) {
            (Memory::Cuda(slice), Engine::Cuda(cuda)) => {
                copied = cuda
                    .stream
                    .clone_dtoh(slice)
                    .map_err(GpuError::driver(what))?;
                &copied
            }
            (Memory::Host(words), _) => &Memory::host_bytes(words)[..array.len],
            #[allow(unreachable_patterns)]
            _ => unreachable!("memory of another engine"),
        };
        let mut items = vec![T::zeroed(); bytes.len() / size_of::<T>()];
        let whole = items.len() * size_of::<T>();
        bytemuck::cast_slice_mut(&mut items).copy_from_slice(&bytes[..whole]);
        Ok(items)
    }

    /// How many blocks of `threads` threads running `kernel` are resident at once: on a
    /// device, the occupancy query's blocks per multiprocessor times the multiprocessors;
    /// under the emulator, the blocks it was opened with.
    pub(crate) fn resident_blocks(&self, kernel: &Kernel, threads: u32) -> Result<u32, GpuError> {
        match self {
            Engine::Cuda(cuda) => {
                // Driver calls on a function act on the thread's current context, which the
                // calling thread (a hybrid frame's GPU worker) may not have bound yet.
                cuda.context
                    .bind_to_thread()
                    .map_err(GpuError::driver("binding the context to this thread"))?;
                let per_sm = cuda_function(kernel)
                    .occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)
                    .map_err(GpuError::driver("querying occupancy"))?;
                Ok(per_sm * cuda.multiprocessors)
            }
            #[cfg(feature = "emulator")]
            Engine::Emulator(emulator) => Ok(emulator.blocks()),
        }
    }

    /// What the compiler gave `kernel` and the occupancy at `threads` a block; `None` under
    /// the emulator, where there is no compiler's report.
    pub(crate) fn resources(
        &self,
        kernel: &Kernel,
        threads: u32,
    ) -> Result<Option<KernelResources>, GpuError> {
        match self {
            Engine::Cuda(cuda) => {
                cuda.context
                    .bind_to_thread()
                    .map_err(GpuError::driver("binding the context to this thread"))?;
                cuda.resources(cuda_function(kernel), kernel.name, threads)
                    .map(Some)
            }
            #[cfg(feature = "emulator")]
            Engine::Emulator(_) => Ok(None),
        }
    }

    /// Launches `kernel` on `blocks` blocks of `threads` threads with `params`, after what was
    /// launched before (a device's stream keeps the order; the emulator runs it at once).
    ///
    /// # Safety
    /// `params` are `kernel`'s parameters, in order, in the shared layout, and every address
    /// in them is a live allocation of this engine of the size the kernel indexes at that
    /// launch size.
    pub(crate) unsafe fn launch<P: Params>(
        &self,
        kernel: &Kernel,
        blocks: u32,
        threads: u32,
        params: &P,
        what: &'static str,
    ) -> Result<(), GpuError> {
        match self {
            Engine::Cuda(cuda) => {
                let config = LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (threads, 1, 1),
                    shared_mem_bytes: 0,
                };
                let mut builder = cuda.stream.launch_builder(cuda_function(kernel));
                params.push(&mut builder);
                // SAFETY: the caller's contract.
                unsafe { builder.launch(config) }.map_err(GpuError::driver(what))?;
                Ok(())
            }
            #[cfg(feature = "emulator")]
            Engine::Emulator(emulator) => {
                // SAFETY: the caller's contract; the memory is the host's.
                unsafe { emulator.launch(kernel.name, blocks, threads, &params.addresses()) }
            }
        }
    }

    /// A mark after everything launched so far.
    pub(crate) fn mark(&self) -> Result<Mark, GpuError> {
        match self {
            Engine::Cuda(cuda) => {
                let event = cuda
                    .context
                    .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                    .map_err(GpuError::driver("creating an event"))?;
                event
                    .record(&cuda.stream)
                    .map_err(GpuError::driver("recording an event"))?;
                Ok(Mark::Cuda(event))
            }
            #[cfg(feature = "emulator")]
            Engine::Emulator(_) => Ok(Mark::Host(Instant::now())),
        }
    }

    /// Waits for everything launched up to `end`, and gives the time from `start` to `end`.
    ///
    /// On a device the wait has a deadline, so that a livelocked kernel ends in an error
    /// instead of a process that never returns: `RAYLB_GPU_TIMEOUT` seconds (fractions
    /// allowed), 600 when unset or empty. Any value other than a positive number is an error
    /// rather than the default, so that a mistyped limit is not quietly replaced. Past the
    /// deadline the answer is [`GpuError::Timeout`] while the kernel is still running: nothing
    /// else this process queues on the device will run. The end is looked at between short
    /// sleeps rather than waited on, so that the waiting thread leaves its core to the CPU's
    /// workers.
    pub(crate) fn finish_launches(&self, start: &Mark, end: &Mark) -> Result<Duration, GpuError> {
        match (self, start, end) {
            (Engine::Cuda(_), Mark::Cuda(start), Mark::Cuda(end)) => {
                let deadline =
                    launch_deadline(std::env::var_os(LAUNCH_DEADLINE_VARIABLE).as_deref())?;
                wait_for(end, deadline)?;
                let ms = start
                    .elapsed_ms(end)
                    .map_err(GpuError::driver("reading the kernel time"))?;
                Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
            }
            (_, Mark::Host(start), Mark::Host(end)) => Ok(end.duration_since(*start)),
            _ => unreachable!("marks of another engine"),
        }
    }
}

/// The environment variable that sets the deadline of a frame's launches, in seconds.
const LAUNCH_DEADLINE_VARIABLE: &str = "RAYLB_GPU_TIMEOUT";

/// The deadline when [`LAUNCH_DEADLINE_VARIABLE`] is not set: ten minutes, thousands of times
/// the frames measured (milliseconds to a fraction of a second, `BENCHMARKS.md`), so that it
/// ends only a kernel that will not finish.
const DEFAULT_LAUNCH_DEADLINE: Duration = Duration::from_secs(600);

/// The first and the longest sleep between two looks at the end of the launches. The wait
/// ends at most the longest late, small against a GPU frame of a few milliseconds (the kernel
/// time comes from the events, not from this wait); a look is one driver call, so looking
/// every 200 µs keeps the waiting thread nearly idle.
const FIRST_PAUSE: Duration = Duration::from_micros(20);
const LONGEST_PAUSE: Duration = Duration::from_micros(200);

/// A kernel parameter, passed by value: one of the shared parameter structs.
#[repr(transparent)]
pub(crate) struct Param<T>(pub(crate) T);

// SAFETY: each is a `#[repr(C)]`, `Pod` struct of the layout crate, whose C declaration in
// raylb_layout.cuh is generated from the same definition and asserts the same size and
// offsets: its bytes are what the kernel's parameter of that type reads. Addresses are
// 64-bit integers, as device pointers are.
unsafe impl DeviceRepr for Param<params::Scene> {}
// SAFETY: as above.
unsafe impl DeviceRepr for Param<params::Film> {}
// SAFETY: as above.
unsafe impl DeviceRepr for Param<params::Work> {}
// SAFETY: as above.
unsafe impl DeviceRepr for Param<params::Managed> {}
// SAFETY: as above.
unsafe impl DeviceRepr for Param<params::WideBvh> {}

/// An array of `T` in the kernels' memory, moved as bytes: the shared types are plain data.
pub(crate) struct DeviceArray<T> {
    pub(crate) memory: Memory,
    /// Its length in bytes.
    pub(crate) len: usize,
    _items: PhantomData<T>,
}

impl<T: Pod> DeviceArray<T> {
    pub(crate) fn new(memory: Memory, len: usize) -> Self {
        Self {
            memory,
            len,
            _items: PhantomData,
        }
    }

    /// Its address on `engine`, for a field the kernels read.
    pub(crate) fn ptr(&self, engine: &Engine) -> Ptr<T> {
        Ptr::new(engine.address(&self.memory))
    }

    /// Its address on `engine`, for a field the kernels write.
    pub(crate) fn ptr_mut(&self, engine: &Engine) -> PtrMut<T> {
        PtrMut::new(engine.address(&self.memory))
    }
}

/// The deadline that `value`, [`LAUNCH_DEADLINE_VARIABLE`]'s value, sets: unset or empty, the
/// default; else a positive number of seconds.
///
/// # Errors
/// [`GpuError::Request`], naming the variable, for anything else (a word, zero, a negative,
/// infinite or non-Unicode value, or one too large for a [`Duration`]).
fn launch_deadline(value: Option<&OsStr>) -> Result<Duration, GpuError> {
    let Some(value) = value else {
        return Ok(DEFAULT_LAUNCH_DEADLINE);
    };
    let text = value.to_string_lossy();
    let text = text.trim();
    if text.is_empty() {
        return Ok(DEFAULT_LAUNCH_DEADLINE);
    }
    value
        .to_str()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|seconds| *seconds > 0.0)
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| {
            GpuError::Request(format!(
                "{LAUNCH_DEADLINE_VARIABLE} must be a positive number of seconds, not {text:?}"
            ))
        })
}

/// Waits until the device has reached `end`, looking with sleeps that grow from
/// [`FIRST_PAUSE`] to [`LONGEST_PAUSE`].
///
/// # Errors
/// [`GpuError::Timeout`] once `deadline` has passed; [`GpuError::Driver`] when a launch
/// failed.
fn wait_for(end: &CudaEvent, deadline: Duration) -> Result<(), GpuError> {
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    while !end
        .try_is_complete()
        .map_err(GpuError::driver("running the kernel"))?
    {
        if started.elapsed() >= deadline {
            return Err(GpuError::Timeout {
                seconds: deadline.as_secs_f64(),
            });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
    Ok(())
}

/// The loaded function of a kernel on a CUDA device.
fn cuda_function(kernel: &Kernel) -> &CudaFunction {
    kernel
        .function
        .as_ref()
        .expect("a CUDA device's kernels are loaded")
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::time::Duration;

    use super::{DEFAULT_LAUNCH_DEADLINE, launch_deadline};
    use crate::GpuError;

    fn deadline(value: &str) -> Result<Duration, GpuError> {
        launch_deadline(Some(OsStr::new(value)))
    }

    #[test]
    fn the_launch_deadline_defaults_when_unset_or_empty() {
        assert_eq!(launch_deadline(None).unwrap(), DEFAULT_LAUNCH_DEADLINE);
        assert_eq!(deadline("").unwrap(), DEFAULT_LAUNCH_DEADLINE);
        assert_eq!(deadline("  ").unwrap(), DEFAULT_LAUNCH_DEADLINE);
    }

    #[test]
    fn the_launch_deadline_is_read_in_seconds() {
        assert_eq!(deadline("30").unwrap(), Duration::from_secs(30));
        assert_eq!(deadline(" 2.5 ").unwrap(), Duration::from_millis(2500));
        assert_eq!(deadline("1e3").unwrap(), Duration::from_secs(1000));
    }

    #[test]
    fn a_launch_deadline_that_is_not_a_positive_number_is_refused() {
        for bad in ["ten", "0", "-5", "nan", "inf", "1e400", "30s"] {
            match deadline(bad) {
                Err(GpuError::Request(message)) => {
                    assert!(message.contains("RAYLB_GPU_TIMEOUT"), "{bad}: {message}");
                    assert!(message.contains(bad), "{bad}: {message}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_launch_deadline_that_is_not_unicode_is_refused() {
        use std::os::unix::ffi::OsStrExt;
        let value = OsStr::from_bytes(b"3\xff");
        assert!(matches!(
            launch_deadline(Some(value)),
            Err(GpuError::Request(_))
        ));
    }
}
