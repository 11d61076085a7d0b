//! A rendered frame and its figures, whatever rendered it: the film, the balancer's account,
//! the rays by kind, and what a GPU or a hybrid frame adds. Every frame driver (`render`,
//! `gpu`, `hybrid`, `cluster`) returns one, and the reports (`stats`) read it.

use std::sync::Arc;
use std::time::Duration;

use balancers::{ProcessorTelemetry, Telemetry};

use crate::film::Film;
use crate::integrator::RayCounts;

/// A rendered frame and how it went.
#[derive(Debug)]
pub struct Frame {
    /// The accumulated image (shared with whoever watched it render).
    pub film: Arc<Film>,
    /// The balancer's per-worker account.
    pub telemetry: Telemetry,
    /// Rays traced by each worker, by kind.
    pub rays: Vec<RayCounts>,
    /// Initial tasks handed to the balancer.
    pub tiles: usize,
    /// What the GPU adds, for frames rendered on one.
    pub device: Option<DeviceFigures>,
    /// What CPU workers and devices together add, for frames rendered by `hybrid`.
    pub hybrid: Option<HybridFigures>,
    /// Whether the frame was cancelled before all its work was done: the film is then
    /// incomplete.
    pub cancelled: bool,
}

/// Figures of a frame rendered on a GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceFigures {
    /// The device's name.
    pub name: String,
    /// Mean active lanes per warp step over the warp size.
    pub simt_efficiency: f64,
    /// What the workers of the telemetry are: persistent warps or resident block slots.
    pub workers_are: &'static str,
    /// Threads per block launched.
    pub threads_per_block: u32,
    /// Blocks launched.
    pub blocks: u32,
    /// The kernel's registers, local and shared memory, and the occupancy they give.
    pub kernel: Option<kernels::KernelResources>,
}

impl Frame {
    /// Rays of all workers together.
    pub fn total_rays(&self) -> RayCounts {
        let mut all = RayCounts::default();
        for r in &self.rays {
            all.merge(r);
        }
        all
    }

    /// Wall-clock time of the balancer's run.
    pub fn wall(&self) -> Duration {
        self.telemetry.wall
    }

    /// Millions of rays (of every kind) per second of wall-clock time.
    pub fn mrays_per_second(&self) -> f64 {
        self.total_rays().total() as f64 / self.wall().as_secs_f64().max(1e-9) / 1e6
    }
}

/// What a hybrid frame adds to a [`Frame`]: each processor's hybrid figures (CPU workers
/// first, in the order of the telemetry) and the devices' names.
#[derive(Clone, Debug, PartialEq)]
pub struct HybridFigures {
    /// Per processor, as the telemetry's workers.
    pub processors: Vec<ProcessorTelemetry>,
    /// The devices' names, in order.
    pub devices: Vec<String>,
}
