//! `raylb bench costs`: the scheduling costs the simulator (`raylb sim`) charges, measured on
//! this machine with the balancers' own deques, the counter's atomic add and rayon's scope.
//!
//! Each cost is timed in a loop of the operation as the balancers do it, on threads that share
//! the data the way a run does (an owner busy on its deque while a thief steals from it, all
//! workers on the counter at once), and reported as the median over `--rounds` rounds with its
//! quartiles. The figures are what `sim`'s options take, in nanoseconds.

use std::hint::black_box;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use balancers::deque::Steal;
use balancers::sim::Costs;
use balancers::{Balancer, BalancerKind, RayonScope, Spawn, TaskRunner, WorkStealing};
use renderer::stats::counted;
use serde::Serialize;

use crate::deque::{Abp, BenchDeque, Locked};
use crate::report::{OutputFiles, Table, csv_text, rounded};
use crate::start_line::{StartLine, start_threads};

const FILES: &[&str] = &["costs.csv"];

/// What `raylb bench costs` measures, and where it writes.
///
/// ```
/// use std::num::NonZeroUsize;
///
/// use experiments::costs::CostsOptions;
///
/// let out = std::env::temp_dir().join(format!("raylb-costs-{}", std::process::id()));
/// let options = CostsOptions {
///     threads: NonZeroUsize::new(2).unwrap(),
///     rounds: NonZeroUsize::MIN,
///     out: out.clone(),
///     quiet: true,
/// };
/// experiments::costs::run(&options)?;
/// let csv = std::fs::read_to_string(out.join("costs.csv"))?;
/// // One row a cost the simulator charges, by the option that sets it.
/// for option in ["--abp-cost", "--steal-cost", "--counter-cost", "--rayon-cost"] {
///     assert!(csv.contains(option), "{option}");
/// }
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct CostsOptions {
    /// Threads at the counter at once; at least 2.
    pub threads: NonZeroUsize,
    /// Rounds per cost; the median and quartiles are reported.
    pub rounds: NonZeroUsize,
    /// The folder for `costs.csv`.
    pub out: PathBuf,
    /// Print nothing.
    pub quiet: bool,
}

/// Operations timed per round, for the single-thread costs.
const PAIRS: usize = 1 << 20;
/// Steals timed per round.
const STEALS: usize = 1 << 16;
/// Tasks the owner keeps in its deque while thieves steal (it tops it up to this).
const KEPT: usize = 4096;

/// A row of costs.csv: one cost over all rounds.
#[derive(Debug, Serialize)]
struct CostRow {
    cost: &'static str,
    option: &'static str,
    median_ns: f64,
    lower_quartile_ns: f64,
    upper_quartile_ns: f64,
    rounds: usize,
    threads: usize,
    default_ns: f64,
}

/// Seconds per push-and-pop pair on one thread's own deque, less the same on a plain
/// worker-local queue (what `static`'s tasks already pay, and so what the recorded task times
/// hold): the `abp_cost` and `locked_cost` of the simulator.
fn push_pop<D: BenchDeque>() -> f64 {
    let (worker, _stealer) = D::new(64);
    let deque = time_pairs(|| {
        D::push(&worker, black_box(7));
        black_box(D::pop(&worker));
    });
    let mut local = std::collections::VecDeque::with_capacity(64);
    let plain = time_pairs(|| {
        local.push_back(black_box(7u64));
        black_box(local.pop_back());
    });
    (deque - plain).max(0.0)
}

/// Seconds per call of `pair`, over `PAIRS` calls.
fn time_pairs(mut pair: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..PAIRS {
        pair();
    }
    start.elapsed().as_secs_f64() / PAIRS as f64
}

/// What a thief measures on a victim's deque while its owner works on it.
#[derive(Clone, Copy, Debug)]
enum Thief {
    /// Steals `max` tasks at a time until `STEALS` steals succeed; seconds per steal, and
    /// tasks taken per steal.
    Steal { max: usize },
    /// Reads the victim's length and oldest tag, as `sample` does, `STEALS` times.
    Probe,
}

/// Runs an owner that keeps its deque busy (popping and pushing, topping it up to `KEPT`)
/// beside a thief doing `thief`; returns the thief's seconds per operation and tasks per
/// operation.
fn against_busy_owner<D: BenchDeque>(thief: Thief) -> Result<(f64, f64)> {
    let (worker, stealer) = D::new(2 * KEPT);
    for x in 0..KEPT {
        D::push(&worker, x as u64);
    }
    let done = AtomicBool::new(false);
    let start = Barrier::new(2);
    thread::scope(|scope| {
        let (done, start) = (&done, &start);
        // The owner's thread is the only one the thief waits for: if it cannot start,
        // nothing waits at the barrier.
        thread::Builder::new()
            .spawn_scoped(scope, move || {
                start.wait();
                let mut x = 0u64;
                // Relaxed: a flag to stop; nothing is published through it.
                while !done.load(Ordering::Relaxed) {
                    if let Some(task) = D::pop(&worker) {
                        black_box(task);
                    }
                    while D::len(&worker) < KEPT {
                        x += 1;
                        if !D::push(&worker, x) {
                            // `abp`'s array is not a ring: once thieves have moved its front
                            // along, its end is reached; emptying it starts it over.
                            while D::pop(&worker).is_some() {}
                        }
                    }
                }
            })
            .context("cannot start the deque's owner thread")?;
        start.wait();
        let mut loot = Vec::with_capacity(64);
        let began = Instant::now();
        let (operations, taken) = match thief {
            Thief::Steal { max } => {
                let (mut steals, mut taken) = (0usize, 0usize);
                while steals < STEALS {
                    if let Steal::Success(n) = D::steal(&stealer, &mut loot, max) {
                        steals += 1;
                        taken += n;
                        loot.clear();
                    }
                }
                (steals, taken)
            }
            Thief::Probe => {
                for _ in 0..STEALS {
                    black_box(D::probe(&stealer));
                }
                (STEALS, 0)
            }
        };
        let seconds = began.elapsed().as_secs_f64() / operations as f64;
        done.store(true, Ordering::Relaxed);
        Ok((seconds, taken as f64 / operations as f64))
    })
}

/// Seconds per attempt of a thief that finds nothing, looping as `stealing` does (a spin hint
/// after each failure, the processor yielded every fourth): the pace of a search in vain.
fn failed_steal<D: BenchDeque>() -> f64 {
    let (_worker, stealer) = D::new(64);
    let mut loot = Vec::new();
    let attempts = STEALS;
    let start = Instant::now();
    for failures in 1..=attempts {
        let _ = black_box(D::steal(&stealer, &mut loot, 1));
        if failures.is_multiple_of(balancers::YIELD_EVERY as usize) {
            thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    start.elapsed().as_secs_f64() / attempts as f64
}

/// Seconds per fetch-and-add on one counter that `threads` threads add to at once: the
/// counter's service time when every worker comes for its next tile.
fn counter(threads: usize) -> Result<f64> {
    let counter = AtomicUsize::new(0);
    let start = StartLine::new(threads);
    let per_thread = PAIRS / threads;
    let add = |_: usize, ()| {
        if !start.wait() {
            return 0.0;
        }
        let began = Instant::now();
        for _ in 0..per_thread {
            // Relaxed, as the counter balancer's.
            black_box(counter.fetch_add(1, Ordering::Relaxed));
        }
        began.elapsed().as_secs_f64()
    };
    let times: Vec<f64> = thread::scope(|scope| {
        let handles = start_threads(scope, &start, vec![(); threads], &add)?;
        Ok::<_, anyhow::Error>(
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect(),
        )
    })?;
    // All threads' adds pass through the counter one at a time: the slowest thread's time
    // over every add made.
    Ok(times.iter().copied().fold(0.0, f64::max) / (per_thread * threads) as f64)
}

/// The deepest level of the binary tree of empty tasks that `rayon_job` runs (the root is
/// level 0): 2^18 − 1 tasks.
const TREE_LEVELS: u32 = 17;

/// A binary tree of empty tasks: task `level` spawns two of `level + 1` below
/// [`TREE_LEVELS`]. Nothing but scheduling: what a balancer costs a task.
struct EmptyTree;

impl TaskRunner<u32> for EmptyTree {
    type Local = ();

    fn local(&self, _worker: usize) {}

    fn run<S: Spawn<u32>>(&self, level: u32, _: &mut (), spawn: &mut S) {
        if level < TREE_LEVELS {
            spawn.spawn(level + 1);
            spawn.spawn(level + 1);
        }
    }
}

/// Seconds a spawned task costs `rayon` beyond what it costs `stealing` (whose deque costs
/// are charged apart), with `threads` workers on a tree of empty tasks: the difference of
/// their wall times over the tasks spawned, each the best of three runs. All workers spawn
/// and finish jobs at once, as in a frame; the simulator's `rayon_job`. It holds about half a
/// deque push and pop a task besides (rayon passes both children through its deque,
/// `stealing` runs one next), which the simulator also charges: 2 of the 32.6 ns measured.
fn rayon_job(threads: usize) -> Result<f64> {
    let workers = NonZeroUsize::new(threads).expect("a positive thread count");
    let best = |kind: BalancerKind| -> Result<Duration> {
        let mut best = Duration::MAX;
        for _ in 0..3 {
            best = best.min(kind.run(workers, &[0u32], &EmptyTree)?.telemetry.wall);
        }
        Ok(best)
    };
    let rayon = best(BalancerKind::Rayon(RayonScope))?;
    let stealing = best(BalancerKind::Stealing(WorkStealing::default()))?;
    let spawned = (1u64 << (TREE_LEVELS + 1)) - 2;
    Ok((rayon.as_secs_f64() - stealing.as_secs_f64()).max(0.0) / spawned as f64)
}

/// The median and quartiles of `xs` (sorted here).
fn quartiles(xs: &mut [f64]) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let i = q * (xs.len() - 1) as f64;
        let (lo, hi) = (i.floor() as usize, i.ceil() as usize);
        xs[lo] + (xs[hi] - xs[lo]) * (i - lo as f64)
    };
    (at(0.5), at(0.25), at(0.75))
}

/// Times every cost `sim` charges; prints them beside the simulator's defaults unless quiet,
/// and writes `costs.csv`.
///
/// ```
/// # use std::num::NonZeroUsize;
/// #
/// # use experiments::costs::CostsOptions;
/// #
/// # let out = std::env::temp_dir().join(format!("raylb-costs-{}", std::process::id()));
/// # let options = CostsOptions {
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     rounds: NonZeroUsize::MIN,
/// #     out: out.clone(),
/// #     quiet: true,
/// # };
/// // A steal needs a thief beside the owner: one thread is refused.
/// let alone = CostsOptions { threads: NonZeroUsize::MIN, ..options };
/// assert!(experiments::costs::run(&alone).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &CostsOptions) -> Result<()> {
    let quiet = options.quiet;
    let files = OutputFiles::check(&options.out, FILES)?;
    let threads = options.threads.get();
    if threads < 2 {
        bail!("--threads 1: a steal and a contended counter need two threads at least");
    }
    let rounds = options.rounds.get();
    let defaults = Costs::default();
    type Measure = fn(usize) -> Result<f64>;
    let measures: [(&str, &str, f64, Measure); 8] = [
        (
            "abp push and pop, beyond a local queue's",
            "--abp-cost",
            defaults.abp_push_pop,
            |_| Ok(push_pop::<Abp>()),
        ),
        (
            "locked push and pop, beyond a local queue's",
            "--locked-cost",
            defaults.locked_push_pop,
            |_| Ok(push_pop::<Locked>()),
        ),
        (
            "a steal that finds work (abp)",
            "--steal-cost",
            defaults.steal,
            |_| Ok(against_busy_owner::<Abp>(Thief::Steal { max: 1 })?.0),
        ),
        (
            "each further task of a steal-half (abp)",
            "--stolen-task-cost",
            defaults.per_stolen_task,
            |_| {
                let (one, _) = against_busy_owner::<Abp>(Thief::Steal { max: 1 })?;
                let (half, tasks) = against_busy_owner::<Abp>(Thief::Steal { max: 64 })?;
                Ok(((half - one) / (tasks - 1.0).max(1.0)).max(0.0))
            },
        ),
        (
            "a steal attempt that finds nothing",
            "--failed-steal-cost",
            defaults.failed_steal,
            |_| Ok(failed_steal::<Abp>()),
        ),
        (
            "reading a worker's deque for sample",
            "--probe-cost",
            defaults.probe,
            |_| Ok(against_busy_owner::<Abp>(Thief::Probe)?.0),
        ),
        (
            "the counter's fetch-and-add, all threads at it",
            "--counter-cost",
            defaults.counter,
            counter,
        ),
        (
            "a rayon job beyond stealing's task, all threads spawning",
            "--rayon-cost",
            defaults.rayon_job,
            rayon_job,
        ),
    ];
    let mut rows = Vec::new();
    for (cost, option, default, measure) in measures {
        let mut samples = (0..rounds)
            .map(|_| Ok(measure(threads)? * 1e9))
            .collect::<Result<Vec<f64>>>()
            .with_context(|| format!("--threads {threads}"))?;
        let (median, lower, upper) = quartiles(&mut samples);
        rows.push(CostRow {
            cost,
            option,
            median_ns: rounded(median, 2),
            lower_quartile_ns: rounded(lower, 2),
            upper_quartile_ns: rounded(upper, 2),
            rounds,
            threads,
            default_ns: rounded(default * 1e9, 2),
        });
    }
    files.write(&[&csv_text(&rows)?])?;
    let mut table = Table::new(&["cost", "sim option", "median ns", "quartiles", "default ns"]);
    for r in &rows {
        table.row(vec![
            r.cost.to_string(),
            r.option.to_string(),
            format!("{:.1}", r.median_ns),
            format!("{:.1}–{:.1}", r.lower_quartile_ns, r.upper_quartile_ns),
            format!("{:.1}", r.default_ns),
        ]);
    }
    say!(
        quiet,
        "scheduling costs on {}, median of {}:",
        counted(threads as u64, "thread"),
        counted(rounds as u64, "round")
    );
    say!(quiet, "{}", table.render().trim_end());
    say!(quiet, "{}", files.summary());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate_between_samples() {
        let mut xs = [4.0, 1.0, 3.0, 2.0, 5.0];
        assert_eq!(quartiles(&mut xs), (3.0, 2.0, 4.0));
        let mut xs = [1.0, 2.0];
        assert_eq!(quartiles(&mut xs), (1.5, 1.25, 1.75));
    }

    #[test]
    fn a_steal_takes_what_it_asks_for_from_a_busy_owner() {
        let (seconds, tasks) = against_busy_owner::<Abp>(Thief::Steal { max: 1 }).unwrap();
        assert!(seconds > 0.0);
        assert_eq!(tasks, 1.0);
        let (_, tasks) = against_busy_owner::<Locked>(Thief::Steal { max: 64 }).unwrap();
        assert!(
            tasks > 1.0,
            "steal half takes several from a deque kept full"
        );
    }
}
