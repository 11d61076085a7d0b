//! What the viewer's keys switch between: every balancer, on the CPU and (where one is
//! present) the GPU and both together, thread counts and tile edges.

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;

use balancers::{BalancerKind, HybridStealing};
use renderer::device::{FrameJob, Schedule};
use renderer::gpu::{Gpu, GpuBalancer};
use renderer::render::CpuBalancer;
use renderer::stats::counted;
use renderer::user_balancer;

/// The tile edges the viewer steps through are powers of two in this range (`--tile`'s).
const TILE_RANGE: (u32, u32) = (1, 16384);
/// The most worker threads the viewer steps up to.
const MAX_THREADS: usize = 4096;

/// The balancer, thread count and tile edge the next frame uses, and what they can become.
#[derive(Debug)]
pub struct Lineup {
    engines: Vec<Schedule>,
    current: usize,
    /// CPU worker threads.
    pub(crate) threads: NonZeroUsize,
    /// Tile edge in pixels.
    pub(crate) tile: NonZeroU32,
    gpu: Option<Arc<Gpu>>,
}

impl Lineup {
    /// Every CPU balancer variant, then, if `gpu` is given, every GPU balancer and the
    /// hybrid scheduler with its default CPU settings; starting at
    /// `first` (put at the front when it is a variant outside the list, such as a counter
    /// with another chunk).
    pub fn new(
        first: Schedule,
        threads: NonZeroUsize,
        tile: NonZeroU32,
        gpu: Option<Arc<Gpu>>,
    ) -> Self {
        let registered = user_balancer::registered().iter().copied();
        let mut engines: Vec<Schedule> = BalancerKind::every_variant()
            .into_iter()
            .map(|b| Schedule::Cpu(b.into()))
            .chain(registered.map(|b| Schedule::Cpu(CpuBalancer::User(b))))
            .collect();
        if gpu.is_some() {
            engines.extend(GpuBalancer::EVERY.into_iter().map(Schedule::Gpu));
            engines.push(Schedule::Hybrid(HybridStealing::default()));
        }
        let current = engines.iter().position(|e| *e == first).unwrap_or_else(|| {
            engines.insert(0, first);
            0
        });
        Self {
            engines,
            current,
            threads,
            tile,
            gpu,
        }
    }

    /// The balancer of the next frame.
    pub(crate) fn engine(&self) -> Schedule {
        self.engines[self.current]
    }

    /// Switches `by` balancers on (negative: back), wrapping around.
    pub(crate) fn step_engine(&mut self, by: isize) {
        let n = self.engines.len() as isize;
        self.current = (self.current as isize + by).rem_euclid(n) as usize;
    }

    /// One thread more or less (`by` = ±1), from 1 to 4096.
    pub(crate) fn step_threads(&mut self, by: isize) {
        let t = (self.threads.get() as isize + by).clamp(1, MAX_THREADS as isize);
        self.threads = NonZeroUsize::new(t as usize).expect("at least 1");
    }

    /// Steps the tile edge to the next power of two above (`up`) or below it, from 1 to
    /// 16384: doubling and halving, or for an edge that is no power of two, the nearest one
    /// on that side.
    pub(crate) fn step_tile(&mut self, up: bool) {
        let edge = self.tile.get();
        let next = if up {
            // The smallest power of two above `edge`.
            (edge + 1).next_power_of_two()
        } else if edge > 1 {
            // The largest power of two below `edge`.
            1 << (31 - (edge - 1).leading_zeros())
        } else {
            1
        };
        let next = next.clamp(TILE_RANGE.0, TILE_RANGE.1);
        self.tile = NonZeroU32::new(next).expect("at least 1");
    }

    /// What a frame with the current settings runs; `work_map`: count rays per pixel (an
    /// atomic add per ray, paid only while the work map is shown).
    pub fn job(&self, work_map: bool) -> FrameJob {
        self.engine().job(self.threads, self.tile, work_map)
    }

    /// The GPU of the GPU and hybrid frames, if there is one.
    pub(crate) fn gpu(&self) -> Option<Arc<Gpu>> {
        self.gpu.clone()
    }

    /// The settings in a few words: balancer, threads (on the CPU) and tile edge.
    pub(crate) fn describe(&self) -> String {
        match self.engine() {
            Schedule::Cpu(b) => format!(
                "{} ×{}, tile {}",
                b.name(),
                counted(self.threads.get() as u64, "thread"),
                self.tile
            ),
            Schedule::Gpu(b) => format!("GPU {}, tile {}", b.name(), self.tile),
            Schedule::Hybrid(b) => format!(
                "{} ×{} + GPU, tile {}",
                b.name(),
                counted(self.threads.get() as u64, "thread"),
                self.tile
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lineup(first: Schedule) -> Lineup {
        Lineup::new(
            first,
            NonZeroUsize::new(2).unwrap(),
            NonZeroU32::new(32).unwrap(),
            None,
        )
    }

    #[test]
    fn every_cpu_balancer_is_reachable_and_the_list_wraps() {
        let every = BalancerKind::every_variant();
        let mut l = lineup(Schedule::Cpu(every[0].into()));
        let mut seen = vec![];
        for _ in 0..every.len() {
            seen.push(l.engine());
            l.step_engine(1);
        }
        assert_eq!(
            seen,
            every
                .iter()
                .map(|&b| Schedule::Cpu(b.into()))
                .collect::<Vec<_>>()
        );
        assert_eq!(l.engine(), Schedule::Cpu(every[0].into()), "wrapped");
        l.step_engine(-1);
        assert_eq!(l.engine(), Schedule::Cpu((*every.last().unwrap()).into()));
    }

    #[test]
    fn a_variant_outside_the_list_comes_first() {
        let odd = Schedule::Cpu(BalancerKind::counter(NonZeroUsize::new(7).unwrap()).into());
        let l = lineup(odd);
        assert_eq!(l.engine(), odd);
        assert_eq!(l.engines.len(), BalancerKind::every_variant().len() + 1);
    }

    #[test]
    fn threads_and_tiles_step_within_their_ranges() {
        let mut l = lineup(Schedule::Cpu(BalancerKind::every_variant()[0].into()));
        l.step_threads(-1);
        l.step_threads(-1);
        assert_eq!(l.threads.get(), 1);
        l.step_tile(true);
        assert_eq!(l.tile.get(), 64);
        for _ in 0..20 {
            l.step_tile(false);
        }
        assert_eq!(l.tile.get(), 1);
        for _ in 0..20 {
            l.step_tile(true);
        }
        assert_eq!(l.tile.get(), 16384, "as far as --tile goes");
        for (edge, down, up) in [
            (24, 16, 32),
            (33, 32, 64),
            (3, 2, 4),
            (2, 1, 4),
            (16384, 8192, 16384),
        ] {
            l.tile = NonZeroU32::new(edge).unwrap();
            l.step_tile(false);
            assert_eq!(l.tile.get(), down, "below {edge}");
            l.tile = NonZeroU32::new(edge).unwrap();
            l.step_tile(true);
            assert_eq!(l.tile.get(), up, "above {edge}");
        }
    }
}
