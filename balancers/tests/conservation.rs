//! Every balancer runs every task exactly once, whatever the worker count, and reports it.
//!
//! One suite, stamped out for each balancer by `balancer_suite!`.

mod common;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use balancers::{
    Assignment, Balancer, BalancerKind, DequeKind, Order, RayonScope, Spawn, StealAmount,
    TaskRunner, VictimPolicy, WorkStealing,
};

/// A forest with a known, very uneven shape: node `n` has 0, 1 or 2 children depending on a
/// hash of `n`, down to depth 10, so the trees under different initial tasks differ in size by
/// orders of magnitude (like pixels that hit glass next to pixels that hit the sky). Nodes are
/// numbered in creation order and every run counts how often each one ran.
struct Forest {
    children: Vec<Vec<u32>>,
    ran: Vec<AtomicU32>,
}

impl Forest {
    fn new(roots: u32) -> (Self, Vec<u32>) {
        let children = common::uneven_forest(roots, 10);
        let tasks: Vec<u32> = (0..roots).collect();
        let ran = (0..children.len()).map(|_| AtomicU32::new(0)).collect();
        (Self { children, ran }, tasks)
    }
}

impl TaskRunner<u32> for Forest {
    type Local = (usize, u64);
    fn local(&self, worker: usize) -> (usize, u64) {
        (worker, 0)
    }
    fn run<S: Spawn<u32>>(&self, node: u32, local: &mut (usize, u64), spawn: &mut S) {
        self.ran[node as usize].fetch_add(1, Ordering::Relaxed);
        local.1 += 1;
        for &child in &self.children[node as usize] {
            spawn.spawn(child);
        }
    }
}

fn check(balancer: BalancerKind, workers: usize, roots: u32) {
    let (forest, tasks) = Forest::new(roots);
    let expected = forest.children.len() as u64;
    let outcome = balancer
        .run(NonZeroUsize::new(workers).unwrap(), &tasks, &forest)
        .expect("workers start");
    let t = &outcome.telemetry;
    assert_eq!(t.workers.len(), workers);
    assert_eq!(outcome.locals.len(), workers);
    for (w, local) in outcome.locals.iter().enumerate() {
        assert_eq!(local.0, w, "locals come back in worker order");
        assert_eq!(
            local.1, t.workers[w].tasks,
            "telemetry counts what worker {w} ran"
        );
    }
    assert_eq!(t.total_tasks(), expected);
    assert_eq!(
        t.workers.iter().map(|w| w.initial_tasks).sum::<u64>(),
        u64::from(roots)
    );
    assert_eq!(
        t.workers.iter().map(|w| w.spawned).sum::<u64>(),
        expected - u64::from(roots)
    );
    let ran: u64 = forest
        .ran
        .iter()
        .map(|c| u64::from(c.load(Ordering::Relaxed)))
        .sum();
    assert_eq!(ran, expected);
    assert!(
        forest.ran.iter().all(|c| c.load(Ordering::Relaxed) <= 1),
        "a task ran twice"
    );
    for w in &t.workers {
        assert!(w.busy + w.idle <= t.wall + std::time::Duration::from_millis(50));
    }
}

macro_rules! balancer_suite {
    ($($name:ident => $balancer:expr),* $(,)?) => {$(
        mod $name {
            use super::*;

            #[test]
            fn smoke() {
                check($balancer, 1, 1);
            }

            #[test]
            fn no_tasks() {
                check($balancer, 3, 0);
            }

            #[test]
            fn fewer_tasks_than_workers() {
                check($balancer, 8, 3);
            }

            #[test]
            fn many_workers_many_tasks() {
                for workers in [1, 2, 3, 8, 32] {
                    check($balancer, workers, 500);
                }
            }

            #[test]
            fn late_long_chain() {
                for workers in [1, 2, 8, 32] {
                    check_late_chain($balancer, workers);
                }
            }

            #[test]
            fn third_of_eight_workers_cannot_start() {
                check_refused_start($balancer, 2, 8);
            }

            #[test]
            fn first_of_four_workers_cannot_start() {
                check_refused_start($balancer, 0, 4);
            }
        }
    )*};
}

/// Work that never ends: every task spawns one more. A run of it ends only when its workers
/// are told to stop.
struct Endless;

impl TaskRunner<u32> for Endless {
    type Local = ();
    fn local(&self, _worker: usize) {}
    fn run<S: Spawn<u32>>(&self, task: u32, _local: &mut (), spawn: &mut S) {
        spawn.spawn(task);
    }
}

/// How long a run whose worker cannot start may take to fail: its started workers stop at
/// their next task, microseconds away; the bound leaves room for a loaded machine.
const REFUSED_RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The start of worker `refused` of `workers` fails: the run must end promptly with the
/// `SpawnError` naming that worker, although the workers started before it have work that
/// never ends (and, under stealing, the refused worker's initial tasks can never finish).
fn check_refused_start(balancer: BalancerKind, refused: usize, workers: usize) {
    let (sender, receiver) = std::sync::mpsc::channel();
    // The run goes on a thread of its own, so that a hang fails the test instead of hanging it.
    std::thread::spawn(move || {
        let tasks: Vec<u32> = (0..64).collect();
        let result = balancers::fault::refuse_start(refused, || {
            balancer.run(NonZeroUsize::new(workers).unwrap(), &tasks, &Endless)
        });
        sender.send(result.map(|_| ())).ok();
    });
    let result = receiver
        .recv_timeout(REFUSED_RUN_LIMIT)
        .unwrap_or_else(|_| panic!("the run did not end within {REFUSED_RUN_LIMIT:?}"));
    let error = result.expect_err("a worker could not start");
    assert_eq!((error.worker, error.workers), (refused, workers));
    assert_eq!(
        error.to_string(),
        format!(
            "cannot start worker thread {} of {workers}: start refused by fault injection",
            refused + 1
        )
    );
}

/// Many trivial initial tasks and, last in line, one that starts a chain of 3,000 tasks, each
/// spawning the next, whose last spawns 20,000 leaves: work appears anew long after every
/// other worker has run dry. Every task must run exactly once and the run must end.
struct LateChain {
    ran: Vec<AtomicU32>,
}

const TRIVIAL: u32 = 64;
const CHAIN: u32 = 3_000;
const LEAVES: u32 = 20_000;

impl TaskRunner<u32> for LateChain {
    type Local = u64;
    fn local(&self, _worker: usize) -> u64 {
        0
    }
    fn run<S: Spawn<u32>>(&self, id: u32, ran: &mut u64, spawn: &mut S) {
        *ran += 1;
        assert_eq!(
            self.ran[id as usize].fetch_add(1, Ordering::Relaxed),
            0,
            "task {id} ran twice"
        );
        // Ids: trivial 0..TRIVIAL, the chain TRIVIAL..TRIVIAL+CHAIN, then the leaves.
        let chain_end = TRIVIAL + CHAIN;
        if (TRIVIAL..chain_end - 1).contains(&id) {
            spawn.spawn(id + 1);
        } else if id == chain_end - 1 {
            for leaf in 0..LEAVES {
                spawn.spawn(chain_end + leaf);
            }
        }
    }
}

fn check_late_chain(balancer: BalancerKind, workers: usize) {
    let total = (TRIVIAL + CHAIN + LEAVES) as usize;
    let runner = LateChain {
        ran: (0..total).map(|_| AtomicU32::new(0)).collect(),
    };
    let tasks: Vec<u32> = (0..=TRIVIAL).collect(); // the last initial task starts the chain
    let outcome = balancer
        .run(NonZeroUsize::new(workers).unwrap(), &tasks, &runner)
        .expect("workers start");
    assert!(
        runner.ran.iter().all(|r| r.load(Ordering::Relaxed) == 1),
        "every task exactly once"
    );
    assert_eq!(outcome.locals.iter().sum::<u64>(), total as u64);
    assert_eq!(outcome.telemetry.total_tasks(), total as u64);
}

const fn stealing(deque: DequeKind, victim: VictimPolicy, amount: StealAmount) -> BalancerKind {
    BalancerKind::Stealing(WorkStealing {
        deque,
        victim,
        amount,
        assignment: Assignment::Interleaved,
        order: Order::DepthFirst,
    })
}

fn breadth_first(balancer: BalancerKind) -> BalancerKind {
    balancer.with_order(Order::BreadthFirst).unwrap()
}

balancer_suite! {
    static_interleaved => BalancerKind::static_tiles(Assignment::Interleaved),
    static_blocked => BalancerKind::static_tiles(Assignment::Blocked),
    counter_1 => BalancerKind::counter(NonZeroUsize::MIN),
    counter_7 => BalancerKind::counter(NonZeroUsize::new(7).unwrap()),
    stealing_abp_random_half => stealing(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half),
    stealing_abp_random_one => stealing(DequeKind::Abp, VictimPolicy::Random, StealAmount::One),
    stealing_abp_sample_half => stealing(DequeKind::Abp, VictimPolicy::Sample, StealAmount::Half),
    stealing_abp_set_one => stealing(DequeKind::Abp, VictimPolicy::Set, StealAmount::One),
    stealing_locked_random_half => stealing(DequeKind::Locked, VictimPolicy::Random, StealAmount::Half),
    stealing_locked_sample_one => stealing(DequeKind::Locked, VictimPolicy::Sample, StealAmount::One),
    stealing_locked_set_half => stealing(DequeKind::Locked, VictimPolicy::Set, StealAmount::Half),
    stealing_blocked_shares => BalancerKind::Stealing(WorkStealing {
        assignment: Assignment::Blocked,
        ..WorkStealing::default()
    }),
    rayon => BalancerKind::Rayon(RayonScope),
    static_breadth_first => breadth_first(BalancerKind::static_tiles(Assignment::Interleaved)),
    counter_breadth_first => breadth_first(BalancerKind::counter(NonZeroUsize::new(3).unwrap())),
    stealing_abp_breadth_first => breadth_first(stealing(DequeKind::Abp, VictimPolicy::Random, StealAmount::Half)),
    stealing_locked_breadth_first => breadth_first(stealing(DequeKind::Locked, VictimPolicy::Sample, StealAmount::One)),
}

/// One initial task that spawns leaves into its worker's deque and then refuses to finish
/// until some other worker has run one of them: only a thief can get at them, so the test
/// passes only if stealing works (and fails by timeout, not by hanging, if it does not).
struct Hostage {
    /// Set by the first leaf that runs anywhere but on the hostage's worker.
    freed: AtomicU32,
    /// The worker running the initial task, once it runs: worker 0, whose share it is, or a
    /// thief that took it before worker 0 got to it.
    hostage_worker: AtomicUsize,
}

impl Hostage {
    fn new() -> Self {
        Self {
            freed: AtomicU32::new(0),
            hostage_worker: AtomicUsize::new(usize::MAX),
        }
    }
}

const LEAVES_HELD: u32 = 10_000;

impl TaskRunner<u32> for Hostage {
    type Local = (usize, u64);
    fn local(&self, worker: usize) -> (usize, u64) {
        (worker, 0)
    }
    fn run<S: Spawn<u32>>(&self, task: u32, local: &mut (usize, u64), spawn: &mut S) {
        local.1 += 1;
        if task > 0 {
            // Acquire: pairs with the hostage's Release store, which comes before its spawns.
            if local.0 != self.hostage_worker.load(Ordering::Acquire) {
                self.freed.store(1, Ordering::Release);
            }
            return;
        }
        self.hostage_worker.store(local.0, Ordering::Release);
        for leaf in 1..=LEAVES_HELD {
            spawn.spawn(leaf);
        }
        let start = std::time::Instant::now();
        while self.freed.load(Ordering::Acquire) == 0 {
            assert!(
                start.elapsed().as_secs() < 20,
                "no other worker took a task in 20 s"
            );
            std::thread::yield_now();
        }
    }
}

#[test]
fn idle_workers_steal_the_work_of_the_busy_one() {
    for deque in [DequeKind::Abp, DequeKind::Locked] {
        for victim in [
            VictimPolicy::Random,
            VictimPolicy::Sample,
            VictimPolicy::Set,
        ] {
            for amount in [StealAmount::One, StealAmount::Half] {
                let balancer = stealing(deque, victim, amount);
                let runner = Hostage::new();
                let outcome = balancer
                    .run(NonZeroUsize::new(4).unwrap(), &[0], &runner)
                    .expect("workers start");
                let t = &outcome.telemetry;
                assert_eq!(t.total_tasks(), u64::from(LEAVES_HELD) + 1);
                assert!(
                    t.total_steals() > 0,
                    "{deque:?}/{victim:?}/{amount:?}: nobody stole"
                );
                for w in &t.workers {
                    assert!(w.steal_successes <= w.steal_attempts);
                    assert!(w.tasks_stolen >= w.steal_successes);
                }
            }
        }
    }
}

/// Work that appears after every other worker has run dry must still be shared: the last task
/// of a late chain spawns leaves and waits until a worker other than its own has run one. A
/// worker that had wrongly decided the run was over would never come back for them.
struct LateShared {
    chain_worker: AtomicU32,
    shared: AtomicU32,
}

const LATE_CHAIN: u32 = 2_000;

impl TaskRunner<u32> for LateShared {
    type Local = usize;
    fn local(&self, worker: usize) -> usize {
        worker
    }
    fn run<S: Spawn<u32>>(&self, id: u32, me: &mut usize, spawn: &mut S) {
        match id {
            // Trivial initial tasks, then the chain's links, then its leaves.
            0..TRIVIAL => {}
            _ if id < TRIVIAL + LATE_CHAIN - 1 => spawn.spawn(id + 1),
            _ if id == TRIVIAL + LATE_CHAIN - 1 => {
                self.chain_worker.store(*me as u32, Ordering::Relaxed);
                for leaf in 0..64 {
                    spawn.spawn(TRIVIAL + LATE_CHAIN + leaf);
                }
                let start = std::time::Instant::now();
                while self.shared.load(Ordering::Acquire) == 0 {
                    assert!(
                        start.elapsed().as_secs() < 20,
                        "late work not shared in 20 s"
                    );
                    std::thread::yield_now();
                }
            }
            _ => {
                if *me as u32 != self.chain_worker.load(Ordering::Relaxed) {
                    self.shared.store(1, Ordering::Release);
                }
            }
        }
    }
}

#[test]
fn work_that_appears_late_is_still_stolen() {
    for balancer in BalancerKind::every_variant()
        .into_iter()
        .filter(|b| b.family() == "stealing")
    {
        let runner = LateShared {
            chain_worker: AtomicU32::new(u32::MAX),
            shared: AtomicU32::new(0),
        };
        let tasks: Vec<u32> = (0..=TRIVIAL).collect();
        let outcome = balancer
            .run(NonZeroUsize::new(4).unwrap(), &tasks, &runner)
            .expect("workers start");
        assert_eq!(
            outcome.telemetry.total_tasks(),
            u64::from(TRIVIAL + LATE_CHAIN + 64)
        );
    }
}

#[test]
fn a_panicking_task_fails_the_run_instead_of_hanging_it() {
    struct Faulty;
    impl TaskRunner<u32> for Faulty {
        type Local = ();
        fn local(&self, _worker: usize) {}
        fn run<S: Spawn<u32>>(&self, task: u32, _local: &mut (), _spawn: &mut S) {
            assert_ne!(task, 7, "task 7 fails");
        }
    }
    for balancer in BalancerKind::every_variant() {
        let tasks: Vec<u32> = (0..64).collect();
        let result = std::panic::catch_unwind(|| {
            balancer.run(NonZeroUsize::new(4).unwrap(), &tasks, &Faulty)
        });
        assert!(
            result.is_err(),
            "{balancer:?}: the panic must reach the caller"
        );
    }
}
