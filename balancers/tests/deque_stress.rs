//! Many more threads than cores hammering both deques: 32 threads, 1.6 million tasks per run,
//! nearly all of them stolen at least once.
//! Every task must be taken exactly once, and many must have been stolen.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use balancers::deque::{Steal, abp, locked};

const THREADS: usize = 32;
const TASKS_PER_THREAD: usize = 100_000;
/// A run that takes longer than this has lost a task (or hangs): fail instead of waiting.
const DEADLINE: Duration = Duration::from_secs(120);

/// A small xorshift generator: each thread its own, seeded by its index.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The operations of a deque kind, so that one stress routine serves both.
trait Kind: Send + Sync + 'static {
    type Worker: Send;
    type Stealer: Clone + Send + Sync;
    fn new(capacity: usize) -> (Self::Worker, Self::Stealer);
    fn push(w: &Self::Worker, task: u32) -> Result<(), u32>;
    fn pop(w: &Self::Worker) -> Option<u32>;
    fn steal(s: &Self::Stealer, dest: &mut Vec<u32>, max: usize) -> Steal<usize>;
}

struct Abp;
impl Kind for Abp {
    type Worker = abp::Worker<u32>;
    type Stealer = abp::Stealer<u32>;
    fn new(capacity: usize) -> (Self::Worker, Self::Stealer) {
        abp::new(capacity)
    }
    fn push(w: &Self::Worker, task: u32) -> Result<(), u32> {
        w.push(task, 0)
    }
    fn pop(w: &Self::Worker) -> Option<u32> {
        w.pop()
    }
    fn steal(s: &Self::Stealer, dest: &mut Vec<u32>, max: usize) -> Steal<usize> {
        s.steal_into(dest, max)
    }
}

struct Locked;
impl Kind for Locked {
    type Worker = locked::Worker<u32>;
    type Stealer = locked::Stealer<u32>;
    fn new(capacity: usize) -> (Self::Worker, Self::Stealer) {
        locked::new(capacity)
    }
    fn push(w: &Self::Worker, task: u32) -> Result<(), u32> {
        w.push(task, 0)
    }
    fn pop(w: &Self::Worker) -> Option<u32> {
        w.pop()
    }
    fn steal(s: &Self::Stealer, dest: &mut Vec<u32>, max: usize) -> Steal<usize> {
        s.steal_into(dest, max)
    }
}

/// Half the threads produce: they push all their tasks, waiting when their deque is full,
/// and only then pop what is left. The other half start empty and live by stealing (from
/// anyone, thieves included): what they steal goes into their own deque and is popped from
/// there, so every thread is both owner and victim, and nearly every task is stolen.
fn stress<K: Kind>(steal_max: usize) {
    let producers = THREADS / 2;
    let total = producers * TASKS_PER_THREAD;
    let seen: Vec<AtomicU8> = (0..total).map(|_| AtomicU8::new(0)).collect();
    let taken = AtomicUsize::new(0);
    let stolen = AtomicUsize::new(0);
    // Set when a thread fails: the others stop instead of waiting for tasks that will not come.
    let failed = AtomicBool::new(false);
    let started = Instant::now();
    let deques: Vec<(K::Worker, K::Stealer)> = (0..THREADS).map(|_| K::new(256)).collect();
    let stealers: Vec<K::Stealer> = deques.iter().map(|(_, s)| s.clone()).collect();
    thread::scope(|scope| {
        for (me, (worker, _)) in deques.into_iter().enumerate() {
            let (seen, taken, stolen, stealers) = (&seen, &taken, &stolen, &stealers);
            let failed = &failed;
            scope.spawn(move || {
                // Whatever fails in here, the other threads must hear of it.
                struct Alarm<'a>(&'a AtomicBool);
                impl Drop for Alarm<'_> {
                    fn drop(&mut self) {
                        if std::thread::panicking() {
                            self.0.store(true, Ordering::Relaxed);
                        }
                    }
                }
                let _alarm = Alarm(failed);
                let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ (me as u64 + 1));
                let record = |task: u32| {
                    let before = seen[task as usize].fetch_add(1, Ordering::Relaxed);
                    assert_eq!(before, 0, "task {task} taken twice");
                    taken.fetch_add(1, Ordering::Relaxed);
                };
                let quota = if me < producers { TASKS_PER_THREAD } else { 0 };
                let mut next = 0;
                let mut loot = Vec::new();
                while taken.load(Ordering::Relaxed) < total {
                    if failed.load(Ordering::Relaxed) {
                        return;
                    }
                    assert!(
                        started.elapsed() < DEADLINE,
                        "not done after {DEADLINE:?}: a task was lost"
                    );
                    if next < quota {
                        // Producers hand everything to thieves: a full deque waits for them.
                        let task = (me * TASKS_PER_THREAD + next) as u32;
                        match K::push(&worker, task) {
                            Ok(()) => next += 1,
                            Err(_) => thread::yield_now(),
                        }
                        continue;
                    }
                    if let Some(task) = K::pop(&worker) {
                        record(task);
                        continue;
                    }
                    let victim = (rng.next() % THREADS as u64) as usize;
                    if victim != me
                        && K::steal(&stealers[victim], &mut loot, steal_max).is_success()
                    {
                        stolen.fetch_add(loot.len(), Ordering::Relaxed);
                        for task in loot.drain(..) {
                            if let Err(task) = K::push(&worker, task) {
                                record(task);
                            }
                        }
                    } else {
                        thread::yield_now();
                    }
                }
            });
        }
    });
    assert_eq!(taken.load(Ordering::Relaxed), total);
    assert!(
        seen.iter().all(|s| s.load(Ordering::Relaxed) == 1),
        "every task exactly once"
    );
    let stolen = stolen.load(Ordering::Relaxed);
    // All but what was left in the producers' deques at the end went through a steal.
    assert!(
        stolen >= total - producers * 256,
        "only {stolen} of {total} tasks were stolen"
    );
}

#[test]
fn abp_steal_one() {
    stress::<Abp>(1);
}

#[test]
fn abp_steal_half() {
    stress::<Abp>(usize::MAX);
}

#[test]
fn locked_steal_one() {
    stress::<Locked>(1);
}

#[test]
fn locked_steal_half() {
    stress::<Locked>(usize::MAX);
}
