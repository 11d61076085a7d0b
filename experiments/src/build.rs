//! `raylb bench build`: how fast the scene's acceleration structure is built, in triangles a
//! second, on a given number of threads (the build's own, started and joined for each build),
//! and, against a second number, how the build scales.

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use renderer::accel::{Accel, AccelKind};
use renderer::geometry::Triangle;
use renderer::memory::{address_space_left, format_bytes, thread_address_space};
use renderer::scene::Scene;
use renderer::stats::counted;

use crate::progress::Progress;
use crate::report::quantiles;

/// What `raylb bench build` builds.
///
/// ```
/// use std::num::NonZeroUsize;
///
/// use experiments::build::BuildOptions;
/// use renderer::scene::{Scene, SceneOverrides};
///
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let scene = Scene::load(file.as_ref(), SceneOverrides::default())?;
/// let threads = NonZeroUsize::MIN;
/// let options = BuildOptions { scene: &scene, threads, against: None, repeat: 2, quiet: true };
/// assert!(experiments::build::run(&options).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct BuildOptions<'a> {
    /// The scene, loaded: its triangles, structure and BVH settings are rebuilt.
    pub scene: &'a Scene,
    /// Threads of each build.
    pub threads: NonZeroUsize,
    /// Threads of a second series of builds, alternating with the first build by build, for
    /// the scaling from one to the other.
    pub against: Option<NonZeroUsize>,
    /// Timed builds (of each series); the best is reported.
    pub repeat: u32,
    /// Print nothing.
    pub quiet: bool,
}

/// Builds the scene's structure `repeat` times (on each thread count, alternating, where
/// `against` gives a second) and reports the best, and the scaling.
///
/// # Errors
/// When a build's thread cannot be started.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use experiments::build::BuildOptions;
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(file.as_ref(), SceneOverrides::default())?;
/// let two_threads = NonZeroUsize::new(2).unwrap();
/// let options = BuildOptions {
///     scene: &scene,
///     threads: two_threads,
///     against: Some(NonZeroUsize::MIN),
///     repeat: 1,
///     quiet: true,
/// };
/// experiments::build::run(&options)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &BuildOptions<'_>) -> Result<()> {
    anyhow::ensure!(options.repeat > 0, "--repeat: at least one build, not 0");
    let scene = options.scene;
    let kind = scene.accel.kind();
    // In the order the scene was built from, so that each build is the scene's own.
    let triangles = scene.accel.input_triangles();
    // Each series' builds run apart, so each count is checked alone, under the flag that
    // gave it.
    let series = std::iter::once(("--threads", options.threads))
        .chain(options.against.map(|n| ("--against", n)));
    for (flag, threads) in series {
        check_address_space(kind, triangles.len(), flag, threads)?;
    }
    let build = |threads: NonZeroUsize| -> Result<Duration> {
        let flag = if threads == options.threads {
            "--threads"
        } else {
            "--against"
        };
        let started = Instant::now();
        let built = Accel::build_on(kind, &triangles, scene.bvh_settings, threads).map_err(
            // The count is the user's flag, not the RAYON_NUM_THREADS the error suggests for
            // a frame's build.
            |e| {
                anyhow!(
                    "{flag} {threads}: cannot start the BVH build's thread {} of {threads}: {}",
                    e.thread + 1,
                    e.source
                )
            },
        )?;
        let took = started.elapsed();
        // Dropped outside the timing: freeing the tree is not the build.
        drop(built);
        Ok(took)
    };
    let series = 1 + u64::from(options.against.is_some());
    let mut progress = Progress::new(u64::from(options.repeat) * series, "builds", options.quiet);
    let mut times = Vec::with_capacity(options.repeat as usize);
    let mut against_times = Vec::with_capacity(options.repeat as usize);
    // One build of a series: timed, kept, and shown as `build k/n` and what tells the series
    // apart (`on N threads` for the second).
    let mut build_one = |threads: NonZeroUsize, times: &mut Vec<Duration>, round: u32, on: &str| {
        let took = build(threads)?;
        times.push(took);
        progress.step(&format!(
            "build {round}/{}{on}: {:.3} s",
            options.repeat,
            took.as_secs_f64()
        ));
        anyhow::Ok(())
    };
    let against_label = options
        .against
        .map(|n| format!(" on {}", counted(n.get() as u64, "thread")))
        .unwrap_or_default();
    for round in 1..=options.repeat {
        match options.against {
            None => build_one(options.threads, &mut times, round, "")?,
            // Each series goes first in every other round: the first build of a round follows
            // the other series' last, and neither always does.
            Some(against) => {
                let mut series = [
                    (options.threads, &mut times, ""),
                    (against, &mut against_times, against_label.as_str()),
                ];
                if round % 2 == 0 {
                    series.reverse();
                }
                for (threads, times, on) in series {
                    build_one(threads, times, round, on)?;
                }
            }
        }
    }
    progress.finish();
    say!(
        options.quiet,
        "{}: {} in the {} structure, {}",
        scene.name,
        counted(triangles.len() as u64, "triangle"),
        kind.name(),
        counted(options.threads.get() as u64, "thread")
    );
    say!(
        options.quiet,
        "time    {}",
        best_line(&times, &triangles, options.repeat)
    );
    if let Some(against) = options.against {
        say!(
            options.quiet,
            "against {}, {}",
            counted(against.get() as u64, "thread"),
            best_line(&against_times, &triangles, options.repeat)
        );
        let scaling = Scaling::of(&times, &against_times);
        say!(
            options.quiet,
            "scaling {} over {}: {:.3}x, best against best; {:.3}x ({:.3}-{:.3}), the median \
             and quartiles of the builds side by side",
            counted(options.threads.get() as u64, "thread"),
            against,
            scaling.best,
            scaling.median,
            scaling.quartiles.0,
            scaling.quartiles.1
        );
    }
    Ok(())
}

/// Refuses, in one line, builds on `threads` threads (given by `flag`) that the address space
/// left under `ulimit -v` cannot hold: each thread reserves its stack and a malloc arena as it
/// starts, and an allocation of the build that then fails aborts the process instead of
/// reporting.
fn check_address_space(
    kind: AccelKind,
    triangles: usize,
    flag: &str,
    threads: NonZeroUsize,
) -> Result<()> {
    let Some(left) = address_space_left() else {
        return Ok(());
    };
    let reserved = thread_address_space(threads.get());
    let arrays = kind.bytes_per_triangle().saturating_mul(triangles as u64);
    if reserved.saturating_add(arrays) > left {
        bail!(
            "{flag} {threads}: the build's threads reserve {} of address space (their stacks \
             and malloc arenas) beside about {} for its arrays, more than the {} left under \
             ulimit -v",
            format_bytes(reserved),
            format_bytes(arrays),
            format_bytes(left)
        );
    }
    Ok(())
}

/// The best of `times`, as `best of N builds: S s, M Mtriangles/s`.
fn best_line(times: &[Duration], triangles: &[Triangle], repeat: u32) -> String {
    let best = times.iter().min().copied().unwrap_or(Duration::MAX);
    format!(
        "best of {}: {:.4} s, {:.2} Mtriangles/s",
        counted(u64::from(repeat), "build"),
        best.as_secs_f64(),
        triangles.len() as f64 / best.as_secs_f64() / 1e6
    )
}

/// How much faster one series of builds ran than another built alongside it.
#[derive(Debug, PartialEq)]
struct Scaling {
    /// The other series' best time over this one's.
    best: f64,
    /// The median of the ratios of the builds side by side (the other's time over this
    /// one's, round by round).
    median: f64,
    /// Their first and third quartiles (interpolated between ratios, as every report's).
    quartiles: (f64, f64),
}

impl Scaling {
    /// `times` against `against`, round by round (both of at least one build, and as many).
    fn of(times: &[Duration], against: &[Duration]) -> Self {
        let best = |t: &[Duration]| t.iter().min().copied().unwrap_or(Duration::MAX);
        let ratio = |mine: Duration, theirs: Duration| theirs.as_secs_f64() / mine.as_secs_f64();
        let ratios: Vec<f64> = times
            .iter()
            .zip(against)
            .map(|(&mine, &theirs)| ratio(mine, theirs))
            .collect();
        let [low, median, high] = quantiles(&ratios);
        Self {
            best: ratio(best(times), best(against)),
            median,
            quartiles: (low, high),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaling_is_the_other_series_time_over_this_ones() {
        let ms = Duration::from_millis;
        // Rounds of 2 ms against 4, 1 against 3, 2 against 5, 1 against 2, 2 against 2.
        let scaling = Scaling::of(
            &[ms(2), ms(1), ms(2), ms(1), ms(2)],
            &[ms(4), ms(3), ms(5), ms(2), ms(2)],
        );
        // Best against best: 2 over 1; the ratios sorted: 1, 2, 2, 2.5, 3.
        assert_eq!(
            scaling,
            Scaling {
                best: 2.0,
                median: 2.0,
                quartiles: (2.0, 2.5)
            }
        );
        let alone = Scaling::of(&[ms(3)], &[ms(6)]);
        assert_eq!(
            (alone.best, alone.median, alone.quartiles),
            (2.0, 2.0, (2.0, 2.0))
        );
        // Two rounds: the median halfway between their ratios, 2 and 3.
        let two = Scaling::of(&[ms(1), ms(1)], &[ms(2), ms(3)]);
        assert_eq!((two.median, two.quartiles), (2.5, (2.25, 2.75)));
    }
}
