//! `raylb bench deque`: the deque micro-benchmark of Wende's section 3.4.3 (table 3.2).
//!
//! `n` threads each own a deque filled with `elements` elements at the start of an
//! iteration. Setup i: every thread pops its own deque until it is empty. Setup ii: as i, and a
//! thread whose deque is empty steals from random others until every deque is empty. Setup iii:
//! as ii, and each thread also pushes `elements` more during the iteration, choosing push or
//! pop at random with equal odds. Elements stand for unit tasks: taking one is the whole work.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use balancers::StealAmount;
use balancers::deque::{Steal, abp, locked};
use renderer::memory::{Budget, format_bytes};
use renderer::stats::counted;
use serde::Serialize;

use crate::report::{OutputFiles, Table, csv_text, rounded};
use crate::start_line::{StartLine, start_threads};

/// What `--out` receives.
const FILES: &[&str] = &["deque.csv"];

/// What `raylb bench deque` measures, and where it writes.
///
/// ```
/// use std::num::NonZeroUsize;
///
/// use balancers::StealAmount;
/// use experiments::deque::DequeOptions;
///
/// let out = std::env::temp_dir().join(format!("raylb-deque-{}", std::process::id()));
/// let options = DequeOptions {
///     threads: NonZeroUsize::new(2).unwrap(),
///     elements: NonZeroUsize::new(1000).unwrap(),
///     iterations: NonZeroUsize::MIN,
///     steal: StealAmount::Half,
///     max_memory: None,
///     out: out.clone(),
///     quiet: true,
/// };
/// experiments::deque::run(&options)?;
/// assert!(out.join("deque.csv").is_file());
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct DequeOptions {
    /// Threads, each owning one deque.
    pub threads: NonZeroUsize,
    /// Elements each deque is filled with at the start of an iteration (and, in setup iii,
    /// pushes during it).
    pub elements: NonZeroUsize,
    /// Iterations per setup; the mean is reported.
    pub iterations: NonZeroUsize,
    /// How much a steal takes.
    pub steal: StealAmount,
    /// The memory the deques may take, in bytes [default: what the machine has free].
    pub max_memory: Option<u64>,
    /// The folder for `deque.csv`.
    pub out: PathBuf,
    /// Print nothing.
    pub quiet: bool,
}

/// A row of `deque.csv`: one deque kind in one setup, over all iterations.
#[derive(Debug, Serialize)]
struct DequeRow {
    deque: &'static str,
    setup: &'static str,
    threads: usize,
    elements: usize,
    iterations: usize,
    /// Millions of elements taken per second per deque.
    throughput_per_deque_millions: f64,
    latency_us_per_element: f64,
    steal_attempts: u64,
    /// Share of steal attempts that took something; empty where nobody tried.
    steal_success_percent: Option<f64>,
    elements_stolen: u64,
}

/// The deque operations the benchmarks use (this one and `bench costs`), for both kinds.
pub(crate) trait BenchDeque: Send + Sync + 'static {
    type Worker: Send;
    type Stealer: Clone + Send + Sync;
    const NAME: &'static str;
    fn new(capacity: usize) -> (Self::Worker, Self::Stealer);
    fn try_new(
        capacity: usize,
    ) -> Result<(Self::Worker, Self::Stealer), std::collections::TryReserveError>;
    fn push(w: &Self::Worker, x: u64) -> bool;
    fn pop(w: &Self::Worker) -> Option<u64>;
    fn len(w: &Self::Worker) -> usize;
    fn steal(s: &Self::Stealer, dest: &mut Vec<u64>, max: usize) -> Steal<usize>;
    /// What a sampling thief reads: the length and the oldest task's tag.
    fn probe(s: &Self::Stealer) -> (usize, Option<u32>);
}

/// One [`BenchDeque`] implementation per deque module, which share their API.
macro_rules! bench_deque {
    ($kind:ident, $module:ident, $name:expr) => {
        pub(crate) struct $kind;
        impl BenchDeque for $kind {
            type Worker = $module::Worker<u64>;
            type Stealer = $module::Stealer<u64>;
            const NAME: &'static str = $name;
            fn new(capacity: usize) -> (Self::Worker, Self::Stealer) {
                $module::new(capacity)
            }
            fn try_new(
                capacity: usize,
            ) -> Result<(Self::Worker, Self::Stealer), std::collections::TryReserveError> {
                $module::try_new(capacity)
            }
            fn push(w: &Self::Worker, x: u64) -> bool {
                w.push(x, 0).is_ok()
            }
            fn pop(w: &Self::Worker) -> Option<u64> {
                w.pop()
            }
            fn len(w: &Self::Worker) -> usize {
                w.len()
            }
            fn steal(s: &Self::Stealer, dest: &mut Vec<u64>, max: usize) -> Steal<usize> {
                s.steal_into(dest, max)
            }
            fn probe(s: &Self::Stealer) -> (usize, Option<u32>) {
                (s.len(), s.oldest_tag())
            }
        }
    };
}

bench_deque!(Abp, abp, "abp (non-blocking)");
bench_deque!(Locked, locked, "locked (blocking)");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Setup {
    PopOnly,
    PopThenSteal,
    PushPopSteal,
}

impl Setup {
    fn label(self) -> &'static str {
        match self {
            Setup::PopOnly => "i) pop only",
            Setup::PopThenSteal => "ii) pop, then steal",
            Setup::PushPopSteal => "iii) push/pop at random, steal",
        }
    }
}

/// Totals over all iterations of one setup.
#[derive(Debug, Default)]
struct Totals {
    time: Duration,
    acquired: u64,
    attempts: u64,
    successes: u64,
    stolen: u64,
}

/// Elements each thread counts before it publishes them to the shared remainder: the count
/// that ends an iteration must not cost a contended add per element.
const PUBLISH_EVERY: usize = 64;

/// Slots of each thread's deque: its `elements`, and as many pushed during setup iii.
fn capacity(elements: usize) -> usize {
    2 * elements
}

/// The memory a run takes at its peak: every thread's deque of one kind (the two kinds are
/// measured one after the other), each slot a `u64` and its 32-bit tag; and, with `--steal
/// half`, each thread's loot of one steal, at most half a deque, in a vector that may have
/// doubled past it.
fn memory_needed(threads: usize, elements: usize, steal_max: usize) -> u64 {
    let slot = (size_of::<u64>() + size_of::<u32>()) as u64;
    let deque = capacity(elements) as u64 * slot;
    let loot = if steal_max > 1 {
        2 * elements as u64 * size_of::<u64>() as u64
    } else {
        0
    };
    threads as u64 * (deque + loot)
}

/// Refuses, before any deque is made, a run that needs more memory than `--max-memory` or,
/// without it, than the machine has free.
fn check_memory(options: &DequeOptions, threads: usize, steal_max: usize) -> Result<()> {
    let Some(budget) = Budget::of(options.max_memory) else {
        return Ok(());
    };
    let needed = memory_needed(threads, options.elements.get(), steal_max);
    if needed > budget.bytes {
        bail!(
            "--elements {} on {}: the deques need about {} ({} a thread), more than the {} available ({})",
            options.elements,
            counted(threads as u64, "thread"),
            format_bytes(needed),
            format_bytes(needed / threads as u64),
            format_bytes(budget.bytes),
            budget.source
        );
    }
    Ok(())
}

fn iterations<D: BenchDeque>(
    setup: Setup,
    n: usize,
    elements: usize,
    iterations: usize,
    steal_max: usize,
) -> Result<Totals> {
    let deques = (0..n)
        .map(|_| D::try_new(capacity(elements)))
        .collect::<Result<Vec<(D::Worker, D::Stealer)>, _>>()
        .map_err(|_| {
            anyhow!(
                "--elements {elements}: cannot allocate {} deques of {} slots: out of memory",
                n,
                capacity(elements)
            )
        })?;
    let stealers: Vec<D::Stealer> = deques.iter().map(|(_, s)| s.clone()).collect();
    let per_iteration = if setup == Setup::PushPopSteal {
        2 * elements
    } else {
        elements
    };
    let race = Race {
        setup,
        elements,
        iterations,
        steal_max,
        stealers: &stealers,
        remaining: AtomicUsize::new(0),
        line: StartLine::new(n + 1),
    };
    let mut totals = Totals::default();
    let workers: Vec<D::Worker> = deques.into_iter().map(|(worker, _)| worker).collect();
    let run = |me: usize, worker: D::Worker| race.run::<D>(me, &worker);
    thread::scope(|scope| {
        let race = &race;
        let handles = start_threads(scope, &race.line, workers, &run)?;
        for _ in 0..iterations {
            race.remaining.store(n * per_iteration, Ordering::Relaxed);
            // A line called off (a thread panicked) ends the measurement; the join below
            // passes the panic on.
            if !race.line.wait() {
                break;
            }
            let started = Instant::now();
            if !race.line.wait() {
                break;
            }
            totals.time += started.elapsed();
        }
        for h in handles {
            let tally = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            totals.acquired += tally.acquired;
            totals.attempts += tally.attempts;
            totals.successes += tally.successes;
            totals.stolen += tally.stolen;
        }
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(totals)
}

/// What the threads of one measurement share: the setup, every deque's stealer, the count of
/// elements not yet taken, and the line passed at the start and at the end of each iteration
/// (the main thread times between them).
struct Race<'a, S> {
    setup: Setup,
    elements: usize,
    iterations: usize,
    steal_max: usize,
    stealers: &'a [S],
    remaining: AtomicUsize,
    /// Passed twice an iteration, at its start and at its end; called off when a thread
    /// cannot start or panics.
    line: StartLine,
}

/// One thread's counts over every iteration.
#[derive(Default)]
struct Tally {
    acquired: u64,
    attempts: u64,
    successes: u64,
    stolen: u64,
}

impl<S> Race<'_, S> {
    /// Thread `me`'s part, owning `worker`: each iteration it fills its deque, waits at the
    /// start line, then pops (pushing too, under push-pop-steal) and steals from random
    /// victims until no element is left anywhere, pausing between failed steals as
    /// `stealing`'s thieves do.
    fn run<D: BenchDeque<Stealer = S>>(&self, me: usize, worker: &D::Worker) -> Tally {
        let n = self.stealers.len();
        let mut rng = 0x2545_F491_4F6C_DD1Du64 ^ (me as u64 + 1);
        let mut next_random = move || {
            // Each thread its own linear congruential generator, as in the thesis.
            rng = rng
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            rng >> 33
        };
        let mut tally = Tally::default();
        let mut loot = Vec::new();
        for _ in 0..self.iterations {
            for x in 0..self.elements {
                let _ = D::push(worker, x as u64);
            }
            if !self.line.wait() {
                // A thread of the measurement could not start: no iteration runs.
                break;
            }
            let mut unpublished = 0usize;
            let mut failures = 0u32;
            let mut to_push = if self.setup == Setup::PushPopSteal {
                self.elements
            } else {
                0
            };
            loop {
                if to_push > 0 && next_random() % 2 == 0 {
                    if D::push(worker, to_push as u64) {
                        to_push -= 1;
                    }
                    continue;
                }
                if D::pop(worker).is_some() {
                    tally.acquired += 1;
                    unpublished += 1;
                    if unpublished == PUBLISH_EVERY {
                        self.remaining.fetch_sub(unpublished, Ordering::Relaxed);
                        unpublished = 0;
                    }
                    continue;
                }
                if to_push > 0 {
                    continue;
                }
                self.remaining
                    .fetch_sub(std::mem::take(&mut unpublished), Ordering::Relaxed);
                if self.setup == Setup::PopOnly
                    || self.remaining.load(Ordering::Relaxed) == 0
                    || n == 1
                {
                    break;
                }
                let victim = (next_random() % (n as u64 - 1)) as usize;
                let victim = if victim >= me { victim + 1 } else { victim };
                tally.attempts += 1;
                if let Steal::Success(k) =
                    D::steal(&self.stealers[victim], &mut loot, self.steal_max)
                {
                    tally.successes += 1;
                    tally.stolen += k as u64;
                    tally.acquired += k as u64;
                    unpublished += k;
                    loot.clear();
                    failures = 0;
                } else {
                    // Between failures, as `stealing`'s thieves: a spin hint, and every
                    // `YIELD_EVERY`th the processor yielded. With more threads than cores, a
                    // thief that never yields keeps the owners of the last elements off the
                    // processor, and an iteration of 256 threads on two cores took minutes.
                    failures += 1;
                    if failures.is_multiple_of(balancers::YIELD_EVERY) {
                        thread::yield_now();
                    } else {
                        std::hint::spin_loop();
                    }
                }
            }
            if !self.line.wait() {
                break;
            }
        }
        tally
    }
}

fn measure<D: BenchDeque>(
    rows: &mut Vec<DequeRow>,
    n: usize,
    options: &DequeOptions,
    steal_max: usize,
) -> Result<()> {
    for setup in [Setup::PopOnly, Setup::PopThenSteal, Setup::PushPopSteal] {
        let totals = iterations::<D>(
            setup,
            n,
            options.elements.get(),
            options.iterations.get(),
            steal_max,
        )
        .with_context(|| format!("--threads {n}"))?;
        rows.push(row(D::NAME, setup, n, options, &totals));
    }
    Ok(())
}

/// The row of one deque kind and setup from its totals over `n` threads.
fn row(
    deque: &'static str,
    setup: Setup,
    n: usize,
    options: &DequeOptions,
    t: &Totals,
) -> DequeRow {
    let per_deque = t.acquired as f64 / n as f64 / t.time.as_secs_f64();
    DequeRow {
        deque,
        setup: setup.label(),
        threads: n,
        elements: options.elements.get(),
        iterations: options.iterations.get(),
        throughput_per_deque_millions: rounded(per_deque / 1e6, 4),
        latency_us_per_element: rounded(1e6 / per_deque, 6),
        steal_attempts: t.attempts,
        steal_success_percent: (t.attempts > 0)
            .then(|| rounded(100.0 * t.successes as f64 / t.attempts as f64, 3)),
        elements_stolen: t.stolen,
    }
}

/// The table for the terminal, as Wende's table 3.2 lays it out.
fn table(rows: &[DequeRow]) -> Table {
    let mut table = Table::new(&[
        "deque",
        "setup",
        "throughput per deque (10^6 elements/s)",
        "latency (µs/element)",
        "steal attempts (total)",
        "steal success",
        "elements stolen (total)",
    ]);
    for r in rows {
        table.row(vec![
            r.deque.to_string(),
            r.setup.to_string(),
            format!("{:.2}", r.throughput_per_deque_millions),
            format!("{:.4}", r.latency_us_per_element),
            r.steal_attempts.to_string(),
            r.steal_success_percent
                .map_or_else(|| "-".into(), |s| format!("{s:.1}%")),
            r.elements_stolen.to_string(),
        ]);
    }
    table
}

/// Runs the three setups on both deques; prints Wende's table unless quiet, and writes
/// `deque.csv`.
///
/// ```
/// # use std::num::NonZeroUsize;
/// #
/// # use balancers::StealAmount;
/// # use experiments::deque::DequeOptions;
/// #
/// # let out = std::env::temp_dir().join(format!("raylb-deque-{}", std::process::id()));
/// # let options = DequeOptions {
/// #     threads: NonZeroUsize::new(2).unwrap(),
/// #     elements: NonZeroUsize::new(1000).unwrap(),
/// #     iterations: NonZeroUsize::MIN,
/// #     steal: StealAmount::Half,
/// #     max_memory: None,
/// #     out: out.clone(),
/// #     quiet: true,
/// # };
/// experiments::deque::run(&DequeOptions { steal: StealAmount::One, ..options })?;
/// // A row per deque kind and setup.
/// let csv = std::fs::read_to_string(out.join("deque.csv"))?;
/// assert_eq!(csv.lines().count(), 1 + 2 * 3);
/// # std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &DequeOptions) -> Result<()> {
    let quiet = options.quiet;
    let files = OutputFiles::check(&options.out, FILES)?;
    let n = options.threads.get();
    let steal_max = match options.steal {
        StealAmount::One => 1,
        StealAmount::Half => usize::MAX,
    };
    check_memory(options, n, steal_max)?;
    let mut rows = Vec::new();
    measure::<Abp>(&mut rows, n, options, steal_max)?;
    measure::<Locked>(&mut rows, n, options, steal_max)?;
    // The file first: a reader that closes our output early must not cost the results.
    files.write(&[&csv_text(&rows)?])?;
    say!(
        quiet,
        "{}, {} elements per deque, {} (Wende, table 3.2): throughput and latency over all of them, steals counted together:",
        counted(n as u64, "thread"),
        options.elements,
        counted(options.iterations.get() as u64, "iteration")
    );
    say!(quiet, "{}", table(&rows).render().trim_end());
    say!(quiet, "{}", files.summary());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed record's fields.
    fn fields(record: &csv::StringRecord) -> Vec<&str> {
        record.iter().collect()
    }

    #[test]
    fn rows_quote_the_setup_and_hold_numbers_in_their_own_columns() {
        let options = DequeOptions {
            threads: NonZeroUsize::new(2).unwrap(),
            elements: NonZeroUsize::new(1000).unwrap(),
            iterations: NonZeroUsize::new(2).unwrap(),
            steal: StealAmount::One,
            max_memory: None,
            out: "unused".into(),
            quiet: true,
        };
        let stealing = Totals {
            time: Duration::from_millis(1),
            acquired: 4000,
            attempts: 8,
            successes: 2,
            stolen: 2,
        };
        let popping = Totals {
            time: Duration::from_millis(2),
            acquired: 4000,
            ..Totals::default()
        };
        let rows = [
            row(Abp::NAME, Setup::PushPopSteal, 2, &options, &stealing),
            row(Locked::NAME, Setup::PopOnly, 2, &options, &popping),
        ];
        let text = csv_text(&rows).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            reader.headers().unwrap(),
            vec![
                "deque",
                "setup",
                "threads",
                "elements",
                "iterations",
                "throughput_per_deque_millions",
                "latency_us_per_element",
                "steal_attempts",
                "steal_success_percent",
                "elements_stolen"
            ]
        );
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        // 2,000 elements per deque in 1 ms: 2 million per second, 0.5 µs each.
        assert_eq!(
            fields(&records[0]),
            [
                "abp (non-blocking)",
                "iii) push/pop at random, steal",
                "2",
                "1000",
                "2",
                "2.0",
                "0.5",
                "8",
                "25.0",
                "2"
            ]
        );
        assert_eq!(&records[1][8], "", "no steal attempts: no success rate");
        let table = table(&rows).render();
        assert!(table.contains("25.0%") && table.contains("1.00"), "{table}");
    }
}
