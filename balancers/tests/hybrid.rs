//! Hybrid work stealing over CPU workers and batch processors: every task runs exactly once,
//! wherever it went; slow processors lose initial tasks to the others, fast ones take them;
//! batches shrink toward the end; a failing batch fails the run. The batch processors here
//! run on CPU threads, through the same interface a GPU's does.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use balancers::{
    BatchRunner, DequeKind, FirstBatch, HybridError, HybridOutcome, HybridStealing, ProcessorKind,
    ProcessorTelemetry, Spawn, StealAmount, TaskRunner, VictimPolicy,
};

/// A forest of uneven trees: node `n` has 0 to 2 children by a hash of `n`, to depth 8.
struct Forest {
    children: Vec<Vec<u32>>,
    ran: Vec<AtomicU32>,
    /// How long each task takes on a CPU worker.
    cpu_delay: Duration,
    /// What a CPU worker waits for before it runs a task (the tests that need one processor
    /// to be slower than another wait on a condition rather than on the clock, so that a
    /// loaded machine cannot change the outcome).
    cpu_gate: Option<Box<dyn Fn() + Sync>>,
}

impl Forest {
    fn new(roots: u32, cpu_delay: Duration) -> (Self, Vec<u32>) {
        let children = balancers::conformance::Forest::uneven(roots, 8).children;
        let ran = (0..children.len()).map(|_| AtomicU32::new(0)).collect();
        (
            Self {
                children,
                ran,
                cpu_delay,
                cpu_gate: None,
            },
            (0..roots).collect(),
        )
    }

    fn all_ran_once(&self) -> bool {
        self.ran.iter().all(|r| r.load(Ordering::Relaxed) == 1)
    }

    fn tasks_ran(&self) -> usize {
        self.ran
            .iter()
            .filter(|r| r.load(Ordering::Relaxed) > 0)
            .count()
    }

    /// Runs `node`'s whole subtree here, as a batch processor does.
    fn run_subtree(&self, node: u32) {
        self.ran[node as usize].fetch_add(1, Ordering::Relaxed);
        for &child in &self.children[node as usize] {
            self.run_subtree(child);
        }
    }
}

impl TaskRunner<u32> for Forest {
    type Local = u64;
    fn local(&self, _worker: usize) -> u64 {
        0
    }
    fn run<S: Spawn<u32>>(&self, node: u32, ran: &mut u64, spawn: &mut S) {
        if let Some(gate) = &self.cpu_gate {
            gate();
        }
        self.ran[node as usize].fetch_add(1, Ordering::Relaxed);
        *ran += 1;
        if !self.cpu_delay.is_zero() {
            std::thread::sleep(self.cpu_delay);
        }
        for &child in &self.children[node as usize] {
            spawn.spawn(child);
        }
    }
}

/// Waits until `done` holds, polling; panics after `limit` (a gate that never opens is a
/// scheduler that stopped moving work, and the test must fail rather than hang).
fn wait_until(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "gave up waiting: {what}");
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// A batch processor on a CPU thread: runs each initial task's subtree, taking `delay` a
/// batch (or, with `hold`, not returning from its first batch until every task of the forest
/// has run), and records its batches' sizes.
struct Device<'a> {
    forest: &'a Forest,
    max: usize,
    delay: Duration,
    hold: bool,
    sizes: Vec<usize>,
}

impl BatchRunner<u32> for Device<'_> {
    type Error = String;
    fn max_batch(&self) -> usize {
        self.max
    }
    fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
        self.sizes.push(batch.len());
        for &root in batch {
            self.forest.run_subtree(root);
        }
        std::thread::sleep(self.delay);
        if self.hold {
            let total = self.forest.ran.len();
            wait_until(
                "the CPU workers ran the rest",
                Duration::from_secs(60),
                || self.forest.tasks_ran() == total,
            );
        }
        Ok(())
    }
}

fn hybrid(deque: DequeKind, victim: VictimPolicy, amount: StealAmount) -> HybridStealing {
    HybridStealing {
        deque,
        victim,
        amount,
        ..HybridStealing::default()
    }
}

/// Runs `tasks` on two CPU workers (abp deques, random victims, steal half) and `device`.
fn two_cpus_and<B: BatchRunner<u32, Error = String>>(
    forest: &Forest,
    tasks: &[u32],
    device: B,
) -> HybridOutcome<u64, B> {
    hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half)
        .run(NonZeroUsize::new(2).unwrap(), tasks, forest, vec![device])
        .expect("threads start")
}

/// Runs `roots` trees on `cpus` CPU workers and `devices` batch processors; checks that every
/// task ran once and that the telemetry accounts for them.
fn check(h: HybridStealing, cpus: usize, devices: usize, roots: u32) {
    let (forest, tasks) = Forest::new(roots, Duration::ZERO);
    let runners: Vec<Device> = (0..devices)
        .map(|_| Device {
            forest: &forest,
            max: 16,
            delay: Duration::ZERO,
            hold: false,
            sizes: Vec::new(),
        })
        .collect();
    let outcome = h
        .run(NonZeroUsize::new(cpus).unwrap(), &tasks, &forest, runners)
        .expect("threads start");
    assert!(forest.all_ran_once(), "{h:?} on {cpus} + {devices}");
    assert_eq!(outcome.locals.len(), cpus);
    assert_eq!(outcome.batch_runners.len(), devices);
    assert_eq!(outcome.processors.len(), cpus + devices);
    let initial: u64 = outcome
        .telemetry
        .workers
        .iter()
        .map(|w| w.initial_tasks)
        .sum();
    assert_eq!(initial, u64::from(roots), "every initial task counted once");
    let on_cpus: u64 = outcome.locals.iter().sum();
    let in_batches: usize = outcome
        .batch_runners
        .iter()
        .flat_map(|d| d.sizes.iter())
        .sum();
    let cpu_initial: u64 = outcome.telemetry.workers[..cpus]
        .iter()
        .map(|w| w.initial_tasks)
        .sum();
    assert_eq!(cpu_initial + in_batches as u64, u64::from(roots));
    assert_eq!(
        outcome.telemetry.workers[..cpus]
            .iter()
            .map(|w| w.tasks)
            .sum::<u64>(),
        on_cpus
    );
    let dealt: u64 = outcome.processors.iter().map(|p| p.dealt).sum();
    assert_eq!(dealt, u64::from(roots));
    let given: u64 = outcome.processors.iter().map(|p| p.given).sum();
    let taken: u64 = outcome.processors.iter().map(|p| p.taken).sum();
    assert_eq!(given, taken, "every initial task stolen went somewhere");
    for (k, p) in outcome.processors.iter().enumerate() {
        let kind = if k < cpus {
            ProcessorKind::Cpu
        } else {
            ProcessorKind::Batch
        };
        assert_eq!(p.kind, kind);
    }
}

macro_rules! cases {
    ($($name:ident => ($h:expr, $cpus:expr, $devices:expr, $roots:expr)),* $(,)?) => {$(
        #[test]
        fn $name() {
            check($h, $cpus, $devices, $roots);
        }
    )*};
}

cases! {
    one_cpu_one_device => (hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half), 1, 1, 200),
    two_cpus_one_device => (hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half), 2, 1, 300),
    three_cpus_two_devices => (hybrid(DequeKind::Locked, VictimPolicy::Sample, StealAmount::One), 3, 2, 300),
    eight_cpus_one_device_sets => (hybrid(DequeKind::Abp, VictimPolicy::Set, StealAmount::Half), 8, 1, 500),
    many_more_threads_than_cores => (hybrid(DequeKind::Locked, VictimPolicy::Random, StealAmount::Half), 32, 2, 1000),
    cpus_alone => (hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::One), 4, 0, 300),
    no_tasks => (hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half), 3, 1, 0),
    fewer_tasks_than_processors => (hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half), 4, 2, 3),
    first_batch_of_all => (HybridStealing { first_batch: FirstBatch::All, ..hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half) }, 3, 2, 500),
}

#[test]
fn cpu_workers_take_initial_tasks_from_a_slow_device() {
    // A device that does not finish its first batch until the CPU workers have run
    // everything else: they must take all of its share but that batch.
    let (forest, tasks) = Forest::new(400, Duration::ZERO);
    let device = Device {
        forest: &forest,
        max: 4,
        delay: Duration::ZERO,
        hold: true,
        sizes: Vec::new(),
    };
    let outcome = two_cpus_and(&forest, &tasks, device);
    assert!(forest.all_ran_once());
    let sizes = &outcome.batch_runners[0].sizes;
    assert!(sizes.len() <= 1, "one batch at most: {sizes:?}");
    let device = &outcome.processors[2];
    assert_eq!(device.dealt, 200, "half the tiles to the device");
    assert!(device.given >= 196, "CPU workers took the rest: {device:?}");
    assert_eq!(device.given + sizes.iter().sum::<usize>() as u64, 200);
    assert_eq!(device.taken, 0, "{device:?}");
}

/// A batch processor on a CPU thread, taking up to `max` initial tasks a batch, that counts
/// the initial tasks it ran (its batches' roots) and keeps its first batch's size.
struct Counting<'a> {
    forest: &'a Forest,
    max: usize,
    roots: Arc<AtomicUsize>,
    first_batch: Arc<AtomicUsize>,
}

impl<'a> Counting<'a> {
    fn new(forest: &'a Forest, max: usize) -> Self {
        Self {
            forest,
            max,
            roots: Arc::default(),
            first_batch: Arc::default(),
        }
    }
}

impl BatchRunner<u32> for Counting<'_> {
    type Error = String;
    fn max_batch(&self) -> usize {
        self.max
    }
    fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
        for &root in batch {
            self.forest.run_subtree(root);
        }
        self.roots.fetch_add(batch.len(), Ordering::Relaxed);
        let _ =
            self.first_batch
                .compare_exchange(0, batch.len(), Ordering::Relaxed, Ordering::Relaxed);
        Ok(())
    }
}

/// Holds every CPU worker's task until `count` reaches `at_least`.
fn gate_cpus(forest: &mut Forest, what: &'static str, count: &Arc<AtomicUsize>, at_least: usize) {
    let count = Arc::clone(count);
    forest.cpu_gate = Some(Box::new(move || {
        wait_until(what, Duration::from_secs(60), || {
            count.load(Ordering::Relaxed) >= at_least
        });
    }));
}

#[test]
fn a_fast_device_takes_initial_tasks_from_slow_cpu_workers() {
    // CPU workers that cannot finish a task until the device has run 200 initial tasks, more
    // than its share of 150: it must steal them from the CPU workers' deques.
    let (mut forest, tasks) = Forest::new(300, Duration::ZERO);
    let roots = Arc::new(AtomicUsize::new(0));
    gate_cpus(&mut forest, "the device took 200 tiles", &roots, 200);
    let device = Counting {
        roots,
        ..Counting::new(&forest, 32)
    };
    let outcome = two_cpus_and(&forest, &tasks, device);
    assert!(forest.all_ran_once());
    let device = &outcome.processors[2];
    assert_eq!(device.dealt, 150, "{device:?}");
    assert!(device.taken >= 50, "{device:?}");
    assert!(
        outcome.telemetry.workers[2].initial_tasks >= 200,
        "more than its share: {:?}",
        outcome.telemetry.workers[2]
    );
    assert!(outcome.telemetry.workers[2].steal_successes > 0);
}

/// Runs 100 initial tasks on two CPU workers and a device that could take all of them at
/// once, with the device's first batch as `first` says; the CPU workers are held in the first
/// task each begins until the device has taken that batch. Gives the device's figures, the
/// first batch's size and the initial tasks the CPU workers began.
fn first_batch_of(first: FirstBatch) -> (ProcessorTelemetry, u64, u64) {
    let (mut forest, tasks) = Forest::new(100, Duration::ZERO);
    let first_batch = Arc::new(AtomicUsize::new(0));
    gate_cpus(&mut forest, "the device's first batch", &first_batch, 1);
    let device = Counting {
        first_batch: Arc::clone(&first_batch),
        ..Counting::new(&forest, 100)
    };
    let h = HybridStealing {
        first_batch: first,
        ..hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half)
    };
    let outcome = h
        .run(NonZeroUsize::new(2).unwrap(), &tasks, &forest, vec![device])
        .expect("threads start");
    assert!(forest.all_ran_once());
    assert_eq!(
        outcome.processors[2].dealt, 50,
        "half the tasks to the device"
    );
    let begun: u64 = outcome.telemetry.workers[..2]
        .iter()
        .map(|w| w.initial_tasks)
        .sum();
    let first = first_batch.load(Ordering::Relaxed) as u64;
    (outcome.processors[2].clone(), first, begun)
}

#[test]
fn the_first_batch_is_the_devices_own_pool() {
    // Until the device has timed a batch it cannot know how many of the CPU workers' tasks
    // it should take, so its first batch is its own 50.
    let (_, first, _) = first_batch_of(FirstBatch::Own);
    assert_eq!(first, 50, "its own pool, no more");
}

#[test]
fn a_first_batch_of_all_takes_every_waiting_task() {
    // Asked to hold every waiting task, the first batch holds all but the one task each CPU
    // worker began: its own 50 and the rest of the CPU workers' pools, in one batch.
    let (device, first, begun) = first_batch_of(FirstBatch::All);
    assert!(begun <= 2, "one task a CPU worker at most: {begun}");
    assert_eq!(first, 100 - begun, "{device:?}");
    assert_eq!(device.taken, first - 50, "{device:?}");
    assert_eq!(device.batches.len(), 1, "one batch for the whole run");
}

#[test]
fn batches_shrink_toward_the_end() {
    // CPU workers as fast as the device: the device's share is about a third of what is left
    // (two CPU workers), and its batches follow what is left down.
    let (forest, tasks) = Forest::new(2000, Duration::from_micros(20));
    let device = Device {
        forest: &forest,
        max: 200,
        delay: Duration::from_millis(2),
        hold: false,
        sizes: Vec::new(),
    };
    let outcome = two_cpus_and(&forest, &tasks, device);
    assert!(forest.all_ran_once());
    let sizes = &outcome.batch_runners[0].sizes;
    assert_eq!(sizes[0], 200, "the first batch is the largest: {sizes:?}");
    assert!(sizes.len() > 2, "{sizes:?}");
    assert!(
        *sizes.last().unwrap() < 200,
        "the last batch is smaller: {sizes:?}"
    );
    let recorded: Vec<usize> = outcome.processors[2]
        .batches
        .iter()
        .map(|b| b.tasks as usize)
        .collect();
    assert_eq!(&recorded, sizes, "one record a batch, in order");
}

/// A device that fails its first batch (saying so in `failed` first), or panics in it.
struct Failing<'a> {
    panics: bool,
    failed: &'a AtomicBool,
}

impl BatchRunner<u32> for Failing<'_> {
    type Error = String;
    fn max_batch(&self) -> usize {
        4
    }
    fn run_batch(&mut self, _batch: &[u32]) -> Result<(), String> {
        self.failed.store(true, Ordering::Relaxed);
        assert!(!self.panics, "the device panicked");
        Err("the device failed".into())
    }
}

#[test]
fn a_failing_batch_stops_the_run_and_says_why() {
    // CPU workers that wait for the device to fail before each task: once it has, each may
    // finish the task in hand and must then stop, leaving almost all of the frame unrun. The
    // run is watched from another thread, so that a run that does not stop fails the test
    // instead of hanging it.
    static FAILED: AtomicBool = AtomicBool::new(false);
    let (mut forest, tasks) = Forest::new(2000, Duration::ZERO);
    forest.cpu_gate = Some(Box::new(|| {
        wait_until("the device failed", Duration::from_secs(60), || {
            FAILED.load(Ordering::Relaxed)
        });
        std::thread::sleep(Duration::from_millis(1));
    }));
    let forest: &'static Forest = Box::leak(Box::new(forest));
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let h = hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half);
        let result = h.run(
            NonZeroUsize::new(2).unwrap(),
            &tasks,
            forest,
            vec![Failing {
                panics: false,
                failed: &FAILED,
            }],
        );
        let _ = sender.send(result.map(|o| o.telemetry));
    });
    let result = receiver
        .recv_timeout(Duration::from_secs(60))
        .expect("the run ends after a failed batch");
    match result {
        Err(HybridError::Batch { processor, error }) => {
            assert_eq!(processor, 2);
            assert_eq!(error, "the device failed");
        }
        other => panic!("{other:?}"),
    }
    // Between the device's saying it failed and its stop request, the CPU workers run a task
    // a millisecond: a quarter of the frame would take them over a second.
    let ran = forest.tasks_ran();
    assert!(
        ran < forest.ran.len() / 4,
        "the others stopped: {ran} of {} tasks ran",
        forest.ran.len()
    );
}

#[test]
fn a_panicking_batch_fails_the_run_instead_of_hanging_it() {
    let (forest, tasks) = Forest::new(100, Duration::from_millis(1));
    let failed = AtomicBool::new(false);
    let h = hybrid(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        h.run(
            NonZeroUsize::new(2).unwrap(),
            &tasks,
            &forest,
            vec![Failing {
                panics: true,
                failed: &failed,
            }],
        )
    }));
    assert!(result.is_err(), "the panic must reach the caller");
}

#[test]
fn the_name_says_hybrid_and_the_cpu_settings() {
    let h = hybrid(DequeKind::Locked, VictimPolicy::Sample, StealAmount::One);
    assert_eq!(h.name(), "hybrid/locked/sample/one");
}
