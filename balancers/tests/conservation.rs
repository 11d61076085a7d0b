//! Every balancer passes the conformance kit (`balancers::conformance`), and the checks
//! only this crate can make: a worker whose start is refused (fault injection), and the
//! stealing balancers' own guarantees.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use balancers::conformance::{self, Forest};
use balancers::{
    Assignment, Balancer, BalancerKind, DequeKind, LocalQueue, Order, Outcome, RayonScope, Spawn,
    SpawnError, StealAmount, TaskRunner, VictimPolicy, WorkStealing, run_workers,
};

macro_rules! balancer_suite {
    ($($name:ident => $balancer:expr),* $(,)?) => {$(
        mod $name {
            use super::*;

            #[test]
            fn passes_the_conformance_kit() {
                if let Err(violation) = conformance::check(&$balancer) {
                    panic!("{violation}");
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

/// Trivial initial tasks before a late chain (see `LateShared`).
const TRIVIAL: u32 = 64;

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

/// A copy of `counter/chunk=1`, built from the public blocks ([`run_workers`], [`LocalQueue`]),
/// with one bug: each worker loses the 100th task it spawns, as a balancer that drops a task
/// on its way between queues would.
#[derive(Clone, Debug)]
struct LosesATask;

/// Where a [`LosesATask`] worker's tasks spawn: its queue, but for the 100th.
struct Leaky<'a, T> {
    queue: &'a mut LocalQueue<T>,
    spawned: &'a mut u64,
}

impl<T> Spawn<T> for Leaky<'_, T> {
    fn spawn(&mut self, task: T) {
        *self.spawned += 1;
        if *self.spawned != 100 {
            self.queue.spawn(task);
        }
    }
}

impl Balancer for LosesATask {
    fn name(&self) -> String {
        "counter-that-loses-a-task".into()
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
        let next = AtomicUsize::new(0);
        run_workers(self.name(), workers, |worker, telemetry, stop| {
            let mut local = runner.local(worker);
            let mut queue = LocalQueue::new(Order::DepthFirst);
            let mut spawned = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= tasks.len() || stop.requested() {
                    break;
                }
                telemetry.initial_tasks += 1;
                let mut task = Some(tasks[i].clone());
                while let Some(t) = task {
                    let mut leaky = Leaky {
                        queue: &mut queue,
                        spawned: &mut spawned,
                    };
                    runner.run(t, &mut local, &mut leaky);
                    telemetry.tasks += 1;
                    task = queue.pop();
                }
            }
            telemetry.spawned = spawned;
            local
        })
    }
}

#[test]
fn a_balancer_that_loses_a_task_fails_the_kit_and_is_told_why() {
    let violation = conformance::check(&LosesATask).expect_err("a task is lost");
    assert_eq!(violation.property, conformance::Property::ExactlyOnce);
    let message = violation.to_string();
    println!("{message}");
    assert!(
        message.starts_with("counter-that-loses-a-task: exactly once: "),
        "{message}"
    );
    assert!(message.contains("ran 0 times"), "{message}");
}

#[test]
fn the_kit_runs_the_forests_it_names() {
    let forests = Forest::all();
    assert_eq!(forests.len(), 7);
    let huge = forests
        .iter()
        .find(|f| f.name.starts_with("one huge"))
        .unwrap();
    assert_eq!(huge.tasks(), 64 + (1 << 16) - 1);
    assert_eq!(
        Forest::chain(3, "three").children,
        vec![vec![1], vec![2], vec![]]
    );
    assert_eq!(Forest::empty().tasks(), 0);
}

#[test]
fn stealing_that_loses_a_stolen_task_fails_the_kit_and_is_told_why() {
    for deque in [DequeKind::Abp, DequeKind::Locked] {
        let broken = balancers::fault::LosesAStolenTask(WorkStealing {
            deque,
            ..WorkStealing::default()
        });
        let violation = conformance::check(&broken).expect_err("a stolen task is lost");
        let message = violation.to_string();
        println!("{message}");
        assert_eq!(
            violation.property,
            conformance::Property::ExactlyOnce,
            "{message}"
        );
        assert!(
            message.contains("/loses-a-stolen-task: exactly once: "),
            "{message}"
        );
        assert!(message.contains("ran 0 times"), "{message}");
    }
}
