//! The warp emulator: the kernels' own source (`cuda/raylb_kernels.cu`), compiled for the host
//! with `emu/raylb_emu.h` in place of CUDA, run as one fiber per thread under a seeded
//! scheduler (`emu/raylb_emu.cpp`). A [`Gpu`](crate::Gpu) opened with [`Gpu::emulated`](crate::Gpu::emulated) sets frames up,
//! launches and reads them back with the same code as on a device; only the launches run here.
//!
//! What it checks that a plain host build cannot: lanes that diverge and meet again at warp
//! collectives (a collective whose mask leaves out a waiting lane, or names one that has
//! returned, ends the launch with an error naming the source line), every block's own shared
//! memory, atomics and fences as switch points in an order drawn from the seed (a failing
//! schedule comes back with the same seed), and launches that stop making progress (every
//! thread waiting, or no ray traced for [`EmulatorOptions::patience`] switches), reported
//! with where each lane waits instead of hanging.
//!
//! Its figures (warp steps, SIMT efficiency, steals) are those of the schedule it ran; its
//! times mean nothing.
//!
//! The emulator is compiled with the `emulator` feature (it needs a C++ compiler); without
//! it, [`Gpu::emulated`](crate::Gpu::emulated) says so.

#[cfg(feature = "emulator")]
use std::ffi::{CString, c_char, c_int, c_void};

#[cfg(feature = "emulator")]
use crate::GpuError;

/// How the emulator runs a launch.
///
/// ```
/// use kernels::Gpu;
/// use kernels::emulator::EmulatorOptions;
///
/// // Three blocks of four warps, another schedule than the default's; in a build with the
/// // `emulator` feature (raylb's `gpu-emulator`, and every `cargo test` of the renderer).
/// match Gpu::emulated(EmulatorOptions { blocks: 3, seed: 7, ..EmulatorOptions::default() }) {
///     Ok(gpu) => assert_eq!(gpu.resident_warps()?, 12),
///     Err(e) => assert!(e.to_string().contains("built without the warp emulator")),
/// }
/// // No block at all is refused.
/// assert!(Gpu::emulated(EmulatorOptions { blocks: 0, ..EmulatorOptions::default() }).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmulatorOptions {
    /// Blocks resident at once: the persistent kernel's grid (four warps a block), and how many
    /// of `cuda-managed`'s blocks run side by side.
    pub blocks: u32,
    /// The scheduler's seed.
    pub seed: u64,
    /// Switches without a traced ray after which a launch is reported as a livelock.
    pub patience: u64,
    /// A copy of the kernels with a known bug, run in place of the kernels; `None` (the
    /// default) runs the kernels as they are.
    pub planted: Option<PlantedBug>,
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        Self {
            blocks: 2,
            seed: 1,
            patience: 20_000_000,
            planted: None,
        }
    }
}

/// Copies of the kernels with one known bug planted in each: how the emulator's tests show that
/// it catches each kind of bug it is for, and that a copy with nothing planted does not fail.
///
/// Each is `cuda/raylb_kernels.cu` with one piece of text replaced when the emulator is built
/// (`build.rs`, which fails when that text is not in the kernels exactly once, so that no copy
/// silently loses its bug), in as many lines, so that the lines the emulator reports are the
/// kernels' own.
///
/// ```
/// use kernels::Gpu;
/// use kernels::emulator::{EmulatorOptions, PlantedBug};
///
/// // The kernels with a lock that is never released: a launch on this GPU is reported as a
/// // deadlock, naming where each lane waits, instead of hanging.
/// let options = EmulatorOptions {
///     planted: Some(PlantedBug::LockNeverReleased),
///     ..EmulatorOptions::default()
/// };
/// match Gpu::emulated(options) {
///     Ok(gpu) => assert!(gpu.info().name.starts_with("raylb warp emulator")),
///     Err(e) => assert!(e.to_string().contains("built without the warp emulator")),
/// }
/// // renderer/tests/gpu_emulator_planted.rs renders a frame through each planted copy and
/// // checks that it fails as its bug should, and that `PlantedBug::Nothing` does not.
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlantedBug {
    /// Nothing planted: the kernels, built as the planted copies are.
    Nothing,
    /// Lane 31 calls the `__shfl_sync` that hands every lane what lane 0 popped from the warp's
    /// deque with a mask that leaves it out.
    ShuffleMaskMissesALane,
    /// An idle warp pops ray tasks from its own deque into its buffer and keeps all but the
    /// last: that task is counted as taken and never traced.
    PoppedTaskDropped,
    /// A thief releases the tasks it steals from the count of tasks left (`pending`) as it takes
    /// them, before they are traced, and again once they are: the count runs below zero.
    StolenTasksReleasedEarly,
    /// Unlocking a deque leaves its lock taken.
    LockNeverReleased,
}

/// The emulator behind a [`Gpu`](crate::Gpu).
#[cfg(feature = "emulator")]
#[derive(Debug)]
pub(crate) struct Emulator {
    pub(crate) options: EmulatorOptions,
}

/// `rl_emu_launch` in `emu/raylb_emu.h`.
#[cfg(feature = "emulator")]
#[repr(C)]
struct Launch {
    blocks: u32,
    threads: u32,
    resident: u32,
    seed: u64,
    patience: u64,
}

/// `rlh_emu_launch` in `emu/raylb_emu_kernels.cpp`, and each planted copy's launcher.
#[cfg(feature = "emulator")]
type Launcher = unsafe extern "C" fn(
    name: *const c_char,
    params: *const *const c_void,
    launch: *const Launch,
    error: *mut c_char,
    error_len: usize,
) -> c_int;

/// Declares the launchers, all of the [`Launcher`] type.
#[cfg(feature = "emulator")]
macro_rules! launchers {
    ($($name:ident),* $(,)?) => {
        unsafe extern "C" {
            $(fn $name(
                name: *const c_char,
                params: *const *const c_void,
                launch: *const Launch,
                error: *mut c_char,
                error_len: usize,
            ) -> c_int;)*
        }
    };
}

#[cfg(feature = "emulator")]
launchers!(
    rlh_emu_launch,
    rlh_emu_launch_planted_nothing,
    rlh_emu_launch_planted_shuffle_mask_misses_a_lane,
    rlh_emu_launch_planted_popped_task_dropped,
    rlh_emu_launch_planted_stolen_tasks_released_early,
    rlh_emu_launch_planted_lock_never_released,
);

#[cfg(feature = "emulator")]
impl PlantedBug {
    /// The launcher of this copy's kernels (named after `build.rs`'s name for it).
    fn launcher(self) -> Launcher {
        match self {
            PlantedBug::Nothing => rlh_emu_launch_planted_nothing,
            PlantedBug::ShuffleMaskMissesALane => rlh_emu_launch_planted_shuffle_mask_misses_a_lane,
            PlantedBug::PoppedTaskDropped => rlh_emu_launch_planted_popped_task_dropped,
            PlantedBug::StolenTasksReleasedEarly => {
                rlh_emu_launch_planted_stolen_tasks_released_early
            }
            PlantedBug::LockNeverReleased => rlh_emu_launch_planted_lock_never_released,
        }
    }
}

#[cfg(feature = "emulator")]
impl Emulator {
    /// Blocks resident at once.
    pub(crate) fn blocks(&self) -> u32 {
        self.options.blocks
    }

    /// Runs kernel `name` on `blocks` blocks of `threads` threads with the parameters at
    /// `params`, at most [`EmulatorOptions::blocks`] blocks at once: the kernels' own, or
    /// those of the copy [`EmulatorOptions::planted`] names.
    ///
    /// # Safety
    /// `params` point to `name`'s parameters, in order, in the shared layout, and every address
    /// in them is a live host allocation of the size the kernel indexes.
    pub(crate) unsafe fn launch(
        &self,
        name: &str,
        blocks: u32,
        threads: u32,
        params: &[*const c_void],
    ) -> Result<(), GpuError> {
        let launch = Launch {
            blocks,
            threads,
            resident: self.options.blocks,
            seed: self.options.seed,
            patience: self.options.patience,
        };
        let name = CString::new(name).expect("kernel names have no NUL");
        let mut error = vec![0 as c_char; 2048];
        let launcher: Launcher = self
            .options
            .planted
            .map_or(rlh_emu_launch, PlantedBug::launcher);
        // SAFETY: the caller's contract for `params` (a planted copy's kernels take the same
        // parameters as the kernels'); `name` is a C string; `error` has room for the message
        // the launcher writes, NUL included, within its length.
        let status = unsafe {
            launcher(
                name.as_ptr(),
                params.as_ptr(),
                &launch,
                error.as_mut_ptr(),
                error.len(),
            )
        };
        if status == 0 {
            return Ok(());
        }
        let bytes: Vec<u8> = error
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        Err(GpuError::Emulated(
            String::from_utf8_lossy(&bytes).into_owned(),
        ))
    }
}
