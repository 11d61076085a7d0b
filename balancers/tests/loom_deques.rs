//! Both deques under the loom model checker: every interleaving (and every weak-memory
//! behaviour loom models) of an owner against one or two thieves, on tiny deques so that the
//! edge cases (last task, reset, full) come up. Every task must come out exactly once. Then
//! the termination detection the stealing balancers end on, over a deque: no worker may see
//! the run over while a task is left, and once every task has finished, whoever asks hears
//! that it is over.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p balancers --test loom_deques --release`
//! (`.ci/run` does).
#![cfg(loom)]

use loom::thread;

use balancers::deque::Steal;

/// What a thief took in its attempts: one `steal_into` each, no retry loop (loom explores
/// the retries' interleavings anyway, and an unbounded loop would never end under it).
fn thief_attempts<F: FnMut(&mut Vec<u32>) -> Steal<usize>>(
    attempts: usize,
    mut steal: F,
) -> Vec<u32> {
    let mut loot = Vec::new();
    for _ in 0..attempts {
        match steal(&mut loot) {
            Steal::Success(n) => assert!(n > 0),
            Steal::Empty | Steal::Retry => {}
        }
    }
    loot
}

/// Runs `f` under loom with every interleaving of up to `preemptions` forced thread switches
/// (loom's bound; beyond two threads, an unbounded search of these scenarios takes hours, and
/// the bugs found so far needed two).
fn model_bounded<F: Fn() + Sync + Send + 'static>(preemptions: usize, f: F) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.check(f);
}

fn exactly_once(mut taken: Vec<u32>, pushed: &[u32]) {
    taken.sort_unstable();
    let mut want = pushed.to_vec();
    want.sort_unstable();
    assert_eq!(taken, want, "every task exactly once");
}

macro_rules! deque_models {
    ($name:ident, $kind:ident) => {
        mod $name {
            use super::*;
            use balancers::deque::$kind;

            #[test]
            fn owner_and_thief_race_for_the_last_task() {
                loom::model(|| {
                    let (w, s) = $kind::new::<u32>(2);
                    w.push(1, 0).unwrap();
                    let thief = thread::spawn(move || thief_attempts(1, |v| s.steal_into(v, 1)));
                    let mut taken: Vec<u32> = w.pop().into_iter().collect();
                    taken.extend(thief.join().unwrap());
                    exactly_once(taken, &[1]);
                });
            }

            #[test]
            fn pop_steal_and_pop_again() {
                loom::model(|| {
                    let (w, s) = $kind::new::<u32>(4);
                    w.push(1, 0).unwrap();
                    w.push(2, 0).unwrap();
                    let thief = thread::spawn(move || thief_attempts(2, |v| s.steal_into(v, 1)));
                    let mut taken = Vec::new();
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    taken.extend(thief.join().unwrap());
                    // The thief may have found the deque empty, or failed a race; anything it
                    // did not take, the owner took after the join.
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    exactly_once(taken, &[1, 2]);
                });
            }

            #[test]
            fn steal_half_against_pops() {
                loom::model(|| {
                    let (w, s) = $kind::new::<u32>(4);
                    for t in 1..=3 {
                        w.push(t, 0).unwrap();
                    }
                    let thief =
                        thread::spawn(move || thief_attempts(1, |v| s.steal_into(v, usize::MAX)));
                    let mut taken: Vec<u32> = w.pop().into_iter().collect();
                    taken.extend(w.pop());
                    taken.extend(thief.join().unwrap());
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    exactly_once(taken, &[1, 2, 3]);
                });
            }

            #[test]
            fn reset_and_reuse_while_a_thief_is_about() {
                loom::model(|| {
                    let (w, s) = $kind::new::<u32>(2);
                    w.push(1, 0).unwrap();
                    let thief = thread::spawn(move || thief_attempts(2, |v| s.steal_into(v, 1)));
                    let mut taken: Vec<u32> = w.pop().into_iter().collect();
                    // Empty now (or soon): pushes reuse the slots, after a reset where allowed.
                    w.push(2, 0).unwrap();
                    taken.extend(w.pop());
                    taken.extend(thief.join().unwrap());
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    exactly_once(taken, &[1, 2]);
                });
            }

            #[test]
            fn two_thieves() {
                loom::model(|| {
                    let (w, s) = $kind::new::<u32>(2);
                    w.push(1, 0).unwrap();
                    w.push(2, 0).unwrap();
                    let s2 = s.clone();
                    let a = thread::spawn(move || thief_attempts(1, |v| s.steal_into(v, 1)));
                    let b = thread::spawn(move || thief_attempts(1, |v| s2.steal_into(v, 1)));
                    let mut taken: Vec<u32> = w.pop().into_iter().collect();
                    taken.extend(a.join().unwrap());
                    taken.extend(b.join().unwrap());
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    exactly_once(taken, &[1, 2]);
                });
            }

            #[test]
            fn thief_running_while_the_owner_pushes() {
                // The thief starts before any push, so that it reads `bot` values the owner
                // publishes while it runs (and after a pop), not ones that `spawn` ordered.
                loom::model(|| {
                    let (w, s) = $kind::new::<u32>(4);
                    let thief =
                        thread::spawn(move || thief_attempts(1, |v| s.steal_into(v, usize::MAX)));
                    for t in 1..=3 {
                        w.push(t, 0).unwrap();
                    }
                    let mut taken: Vec<u32> = w.pop().into_iter().collect();
                    taken.extend(thief.join().unwrap());
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    exactly_once(taken, &[1, 2, 3]);
                });
            }

            #[test]
            fn two_batch_thieves_against_two_pops() {
                model_bounded(4, || {
                    let (w, s) = $kind::new::<u32>(4);
                    for t in 1..=3 {
                        w.push(t, 0).unwrap();
                    }
                    let s2 = s.clone();
                    let a =
                        thread::spawn(move || thief_attempts(1, |v| s.steal_into(v, usize::MAX)));
                    let b =
                        thread::spawn(move || thief_attempts(1, |v| s2.steal_into(v, usize::MAX)));
                    let mut taken: Vec<u32> = w.pop().into_iter().collect();
                    taken.extend(w.pop());
                    taken.extend(a.join().unwrap());
                    taken.extend(b.join().unwrap());
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    exactly_once(taken, &[1, 2, 3]);
                });
            }

            #[test]
            fn full_deque_gives_the_task_back() {
                loom::model(|| {
                    let (w, s) = $kind::new::<u32>(1);
                    w.push(1, 0).unwrap();
                    let thief = thread::spawn(move || thief_attempts(1, |v| s.steal_into(v, 1)));
                    // Either the slot is still taken (the task comes back) or the thief took it.
                    let mut pushed = vec![1];
                    if w.push(2, 0).is_ok() {
                        pushed.push(2);
                    }
                    let mut taken = thief.join().unwrap();
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    exactly_once(taken, &pushed);
                });
            }

            /// The breadth-first owner of `stealing`: it takes its own oldest task through a
            /// stealer of its own deque while a thief does the same, and, finding the deque
            /// empty, pops it (which returns an `abp` deque's indices to the start) before it
            /// pushes again.
            #[test]
            fn owner_takes_from_the_thieves_end_and_starts_over() {
                model_bounded(2, || {
                    let (w, s) = $kind::new::<u32>(2);
                    let own = s.clone();
                    w.push(1, 0).unwrap();
                    w.push(2, 0).unwrap();
                    let thief = thread::spawn(move || thief_attempts(2, |v| s.steal_into(v, 1)));
                    let mut taken = Vec::new();
                    for _ in 0..2 {
                        if let Steal::Success(_) = own.steal_into(&mut taken, 1) {}
                    }
                    // Empty now, as far as the owner can tell, or a thief holds the top.
                    let mut pushed = vec![1, 2];
                    if let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    if w.push(3, 0).is_ok() {
                        pushed.push(3);
                    }
                    taken.extend(thief.join().unwrap());
                    while let Some(t) = w.pop() {
                        taken.push(t);
                    }
                    exactly_once(taken, &pushed);
                });
            }
        }
    };
}

deque_models!(abp_deque, abp);
deque_models!(locked_deque, locked);

/// The double collect of `balancers::termination` over an `abp` deque, as a stealing run
/// uses them: worker 0 runs the one initial task, which spawns two (each counted created
/// before it is pushed), then pops what is left; worker 1 steals. Whenever either asks and
/// hears the run is over, all three tasks must have run; once both are through, the run
/// must be over for anyone who asks.
mod termination {
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicU32, Ordering};
    use loom::thread;

    use balancers::deque::{Steal, abp};
    use balancers::termination::Termination;

    /// Runs a task: one more ran (Relaxed: what orders it before a reader is the finishing
    /// worker's Release store of its count, which the model checks).
    fn run(ran: &AtomicU32) {
        ran.fetch_add(1, Ordering::Relaxed);
    }

    fn over_only_when_all_ran(termination: &Termination, ran: &AtomicU32) {
        if termination.all_done() {
            assert_eq!(ran.load(Ordering::Relaxed), 3, "the run ended early");
        }
    }

    #[test]
    fn no_worker_sees_the_end_while_a_task_is_left() {
        super::model_bounded(4, || {
            let termination = Arc::new(Termination::new(2, 1));
            let ran = Arc::new(AtomicU32::new(0));
            let (w, s) = abp::new::<u32>(4);
            let thief = {
                let (termination, ran) = (termination.clone(), ran.clone());
                thread::spawn(move || {
                    let mut finished = 0;
                    for _ in 0..2 {
                        let mut loot = Vec::new();
                        if let Steal::Success(_) = s.steal_into(&mut loot, 1) {
                            for _ in loot {
                                run(&ran);
                                finished += 1;
                                termination.finished(1, finished);
                            }
                        }
                        over_only_when_all_ran(&termination, &ran);
                    }
                })
            };
            // The initial task: its two children are counted before anyone can see them.
            for (created, child) in [(1, 1), (2, 2)] {
                termination.created(0, created);
                w.push(child, 0).unwrap();
            }
            run(&ran);
            let mut finished = 1;
            termination.finished(0, finished);
            while w.pop().is_some() {
                run(&ran);
                finished += 1;
                termination.finished(0, finished);
            }
            over_only_when_all_ran(&termination, &ran);
            thief.join().unwrap();
            assert!(
                termination.all_done(),
                "every task finished: the run is over"
            );
        });
    }
}
