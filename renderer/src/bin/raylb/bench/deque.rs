//! `raylb bench deque`: the deque micro-benchmark of Wende's section 3.4.3 (table 3.2).
//!
//! `n` threads each own a deque filled with `elements` elements at the start of an
//! iteration. Setup i: every thread pops its own deque until it is empty. Setup ii: as i, and a
//! thread whose deque is empty steals from random others until every deque is empty. Setup iii:
//! as ii, and each thread also pushes `elements` more during the iteration, choosing push or
//! pop at random with equal odds. Elements stand for unit tasks: taking one is the whole work.

use std::process::ExitCode;
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Result;
use balancers::deque::{Steal, abp, locked};
use renderer::stats::counted;

use super::report::{Table, save};
use crate::cli::{DequeArgs, StealName, threads};

/// The deque operations the benchmark uses, for both kinds.
trait BenchDeque: Send + Sync + 'static {
    type Worker: Send;
    type Stealer: Clone + Send + Sync;
    const NAME: &'static str;
    fn new(capacity: usize) -> (Self::Worker, Self::Stealer);
    fn push(w: &Self::Worker, x: u64) -> bool;
    fn pop(w: &Self::Worker) -> Option<u64>;
    fn steal(s: &Self::Stealer, dest: &mut Vec<u64>, max: usize) -> Steal<usize>;
}

struct Abp;
impl BenchDeque for Abp {
    type Worker = abp::Worker<u64>;
    type Stealer = abp::Stealer<u64>;
    const NAME: &'static str = "abp (non-blocking)";
    fn new(capacity: usize) -> (Self::Worker, Self::Stealer) {
        abp::new(capacity)
    }
    fn push(w: &Self::Worker, x: u64) -> bool {
        w.push(x, 0).is_ok()
    }
    fn pop(w: &Self::Worker) -> Option<u64> {
        w.pop()
    }
    fn steal(s: &Self::Stealer, dest: &mut Vec<u64>, max: usize) -> Steal<usize> {
        s.steal_into(dest, max)
    }
}

struct Locked;
impl BenchDeque for Locked {
    type Worker = locked::Worker<u64>;
    type Stealer = locked::Stealer<u64>;
    const NAME: &'static str = "locked (blocking)";
    fn new(capacity: usize) -> (Self::Worker, Self::Stealer) {
        locked::new(capacity)
    }
    fn push(w: &Self::Worker, x: u64) -> bool {
        w.push(x, 0).is_ok()
    }
    fn pop(w: &Self::Worker) -> Option<u64> {
        w.pop()
    }
    fn steal(s: &Self::Stealer, dest: &mut Vec<u64>, max: usize) -> Steal<usize> {
        s.steal_into(dest, max)
    }
}

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

fn iterations<D: BenchDeque>(
    setup: Setup,
    n: usize,
    elements: usize,
    iterations: usize,
    steal_max: usize,
) -> Totals {
    let deques: Vec<(D::Worker, D::Stealer)> = (0..n).map(|_| D::new(2 * elements)).collect();
    let stealers: Vec<D::Stealer> = deques.iter().map(|(_, s)| s.clone()).collect();
    let per_iteration = if setup == Setup::PushPopSteal {
        2 * elements
    } else {
        elements
    };
    let remaining = AtomicUsize::new(0);
    let start_line = Barrier::new(n + 1);
    let finish_line = Barrier::new(n + 1);
    let mut totals = Totals::default();
    thread::scope(|scope| {
        let mut handles = Vec::new();
        for (me, (worker, _)) in deques.into_iter().enumerate() {
            let (stealers, remaining, start_line, finish_line) =
                (&stealers, &remaining, &start_line, &finish_line);
            handles.push(scope.spawn(move || {
                let mut rng = 0x2545_F491_4F6C_DD1Du64 ^ (me as u64 + 1);
                let mut next_random = move || {
                    // Each thread its own linear congruential generator, as in the thesis.
                    rng = rng
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    rng >> 33
                };
                let (mut acquired, mut attempts, mut successes, mut stolen) =
                    (0u64, 0u64, 0u64, 0u64);
                let mut loot = Vec::new();
                for _ in 0..iterations {
                    for x in 0..elements {
                        let _ = D::push(&worker, x as u64);
                    }
                    start_line.wait();
                    let mut unpublished = 0usize;
                    let mut to_push = if setup == Setup::PushPopSteal {
                        elements
                    } else {
                        0
                    };
                    loop {
                        if to_push > 0 && next_random() % 2 == 0 {
                            if D::push(&worker, to_push as u64) {
                                to_push -= 1;
                            }
                            continue;
                        }
                        if D::pop(&worker).is_some() {
                            acquired += 1;
                            unpublished += 1;
                            if unpublished == PUBLISH_EVERY {
                                remaining.fetch_sub(unpublished, Ordering::Relaxed);
                                unpublished = 0;
                            }
                            continue;
                        }
                        if to_push > 0 {
                            continue;
                        }
                        remaining.fetch_sub(std::mem::take(&mut unpublished), Ordering::Relaxed);
                        if setup == Setup::PopOnly
                            || remaining.load(Ordering::Relaxed) == 0
                            || n == 1
                        {
                            break;
                        }
                        let victim = (next_random() % (n as u64 - 1)) as usize;
                        let victim = if victim >= me { victim + 1 } else { victim };
                        attempts += 1;
                        if let Steal::Success(k) = D::steal(&stealers[victim], &mut loot, steal_max)
                        {
                            successes += 1;
                            stolen += k as u64;
                            acquired += k as u64;
                            unpublished += k;
                            loot.clear();
                        }
                    }
                    finish_line.wait();
                }
                (acquired, attempts, successes, stolen)
            }));
        }
        for _ in 0..iterations {
            remaining.store(n * per_iteration, Ordering::Relaxed);
            start_line.wait();
            let started = Instant::now();
            finish_line.wait();
            totals.time += started.elapsed();
        }
        for h in handles {
            let (a, t, s, k) = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            totals.acquired += a;
            totals.attempts += t;
            totals.successes += s;
            totals.stolen += k;
        }
    });
    totals
}

fn measure<D: BenchDeque>(table: &mut Table, n: usize, args: &DequeArgs, steal_max: usize) {
    for setup in [Setup::PopOnly, Setup::PopThenSteal, Setup::PushPopSteal] {
        let t = iterations::<D>(
            setup,
            n,
            args.elements.get(),
            args.iterations.get(),
            steal_max,
        );
        let per_deque = t.acquired as f64 / n as f64 / t.time.as_secs_f64();
        let success = if t.attempts > 0 {
            format!("{:.1}%", 100.0 * t.successes as f64 / t.attempts as f64)
        } else {
            "-".into()
        };
        table.row(vec![
            D::NAME.to_string(),
            setup.label().to_string(),
            format!("{:.2}", per_deque / 1e6),
            format!("{:.4}", 1e6 / per_deque),
            t.attempts.to_string(),
            success,
            t.stolen.to_string(),
        ]);
    }
}

pub(crate) fn run(args: &DequeArgs, quiet: bool) -> Result<ExitCode> {
    let n = threads(args.threads).get();
    let steal_max = match args.steal {
        StealName::One => 1,
        StealName::Half => usize::MAX,
    };
    let mut table = Table::new(&[
        "deque",
        "setup",
        "throughput per deque (10^6 elements/s)",
        "latency (µs/element)",
        "steal attempts",
        "steal success",
        "elements stolen",
    ]);
    measure::<Abp>(&mut table, n, args, steal_max);
    measure::<Locked>(&mut table, n, args, steal_max);
    say!(
        quiet,
        "{}, {} elements per deque, mean of {} (Wende, table 3.2):",
        counted(n as u64, "thread"),
        args.elements,
        counted(args.iterations.get() as u64, "iteration")
    );
    say!(quiet, "{}", table.render().trim_end());
    save(&args.out, "deque.csv", &table.csv())?;
    say!(quiet, "wrote   {}/deque.csv", args.out.display());
    Ok(ExitCode::SUCCESS)
}
