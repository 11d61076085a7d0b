//! The conformance kit's check through the tracer: a balancer renders a scene to the same
//! bytes as `static`, whatever its worker count and tile size. The balancer-level properties
//! (every task once, telemetry, termination, panics) are `balancers::conformance`'s.
//!
//! ```
//! use std::num::NonZeroUsize;
//! use balancers::BalancerKind;
//! use renderer::scene::{Scene, SceneOverrides};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/cornell.toml");
//! let small = SceneOverrides { width: Some(48), height: Some(48), ..Default::default() };
//! let scene = Scene::load(path.as_ref(), small)?;
//! renderer::conformance::check_same_bytes(&BalancerKind::counter(NonZeroUsize::MIN), &scene)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::num::{NonZeroU32, NonZeroUsize};

use balancers::{Assignment, Balancer, BalancerKind};

use crate::render::{RenderError, render_with};
use crate::scene::Scene;

/// Worker counts and tile edges the balancer renders with: one worker, two, and more workers
/// than a test machine has cores; tiles of the usual edge (32) and smaller (8, 4).
pub const RENDERS: [(usize, u32); 4] = [(1, 32), (2, 8), (3, 32), (8, 4)];

/// A render that differs from `static`'s, or could not be made.
///
/// ```
/// use renderer::conformance::Mismatch;
///
/// let mismatch = Mismatch::Differs { balancer: "mine".into(), workers: 2, tile: 8, pixels: 3 };
/// assert_eq!(
///     mismatch.to_string(),
///     "mine: same bytes as static: 3 pixels differ (workers: 2, tile edge: 8)"
/// );
/// ```
#[derive(Debug)]
pub enum Mismatch {
    /// The frame's fixed-point sums (which decide every byte of its image) differ from
    /// `static`'s in `pixels` pixels.
    Differs {
        /// The balancer's name.
        balancer: String,
        /// Workers of the render.
        workers: usize,
        /// Tile edge of the render.
        tile: u32,
        /// Pixels that differ.
        pixels: usize,
    },
    /// A render failed.
    Render(RenderError),
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Differs {
                balancer,
                workers,
                tile,
                pixels,
            } => write!(
                f,
                "{balancer}: same bytes as static: {pixels} pixels differ (workers: {workers}, \
                 tile edge: {tile})"
            ),
            Self::Render(e) => write!(f, "same bytes as static: {e}"),
        }
    }
}

impl std::error::Error for Mismatch {}

impl From<RenderError> for Mismatch {
    fn from(e: RenderError) -> Self {
        Self::Render(e)
    }
}

/// Renders `scene` with `static` on one worker, then with `balancer` at each of [`RENDERS`],
/// and compares every pixel's sums.
///
/// ```
/// use balancers::{BalancerKind, WorkStealing};
/// use renderer::scene::{Scene, SceneOverrides};
///
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// let scene = Scene::load(path.as_ref(), overrides)?;
/// let stealing = BalancerKind::Stealing(WorkStealing::default());
/// assert!(renderer::conformance::check_same_bytes(&stealing, &scene).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The first render that differs, or that failed.
pub fn check_same_bytes<B: Balancer>(balancer: &B, scene: &Scene) -> Result<(), Mismatch> {
    let reference = render_with(
        scene,
        &BalancerKind::static_tiles(Assignment::Interleaved),
        NonZeroUsize::MIN,
        NonZeroU32::new(32).expect("32 is not 0"),
    )?;
    let want = reference.film.sums();
    for (workers, tile) in RENDERS {
        let frame = render_with(
            scene,
            balancer,
            NonZeroUsize::new(workers).expect("not 0"),
            NonZeroU32::new(tile).expect("not 0"),
        )?;
        let pixels = (0..want.len())
            .filter(|&i| frame.film.pixel_sums(i) != want[i])
            .count();
        if pixels != 0 {
            return Err(Mismatch::Differs {
                balancer: balancer.name(),
                workers,
                tile,
                pixels,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use balancers::{Outcome, SpawnError, TaskRunner};

    use super::*;
    use crate::scene::SceneOverrides;

    fn quick() -> Scene {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes/quick.toml");
        let overrides = SceneOverrides {
            width: Some(64),
            height: Some(48),
            ..Default::default()
        };
        Scene::load(&path, overrides).unwrap()
    }

    #[test]
    fn every_balancer_family_renders_the_bytes_of_static() {
        let scene = quick();
        for balancer in [
            BalancerKind::counter(NonZeroUsize::MIN),
            BalancerKind::Stealing(balancers::WorkStealing::default()),
            BalancerKind::Rayon(balancers::RayonScope),
        ] {
            check_same_bytes(&balancer, &scene).unwrap();
        }
    }

    /// A balancer that runs the initial tasks but drops every task they spawn: its frames
    /// lack reflections, and the check says by how many pixels.
    #[derive(Debug)]
    struct SkipsSpawns;

    impl Balancer for SkipsSpawns {
        fn name(&self) -> String {
            "skips-spawns".into()
        }
        fn run<T, R>(
            &self,
            workers: NonZeroUsize,
            tasks: &[T],
            runner: &R,
        ) -> Result<Outcome<R::Local>, SpawnError>
        where
            T: Clone + Send + Sync,
            R: TaskRunner<T>,
        {
            struct Nowhere;
            impl<T> balancers::Spawn<T> for Nowhere {
                fn spawn(&mut self, _task: T) {}
            }
            balancers::run_workers(self.name(), workers, |worker, telemetry, _stop| {
                let mut local = runner.local(worker);
                for task in tasks.iter().skip(worker).step_by(workers.get()) {
                    runner.run(task.clone(), &mut local, &mut Nowhere);
                    telemetry.tasks += 1;
                }
                local
            })
        }
    }

    #[test]
    fn a_balancer_that_loses_rays_is_caught() {
        let e = check_same_bytes(&SkipsSpawns, &quick()).unwrap_err();
        let message = e.to_string();
        assert!(
            message.starts_with("skips-spawns: same bytes as static: "),
            "{message}"
        );
        assert!(
            message.contains("pixels differ (workers: 1, tile edge: 32)"),
            "{message}"
        );
    }
}
