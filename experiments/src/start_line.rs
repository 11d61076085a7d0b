//! Starting the threads of a timed measurement together, and giving up cleanly when one of
//! them cannot start (`ulimit -u`, `ulimit -v`, the kernel's thread limit).
//!
//! A measurement's threads wait at a [`StartLine`] so that the clock starts with all of them
//! running. `std::sync::Barrier` waits for every party it was made for, so a thread that failed
//! to start would leave the others waiting forever; a start line can be called off, and then
//! lets every waiter go without the work. [`start_threads`] starts the threads, calls the line
//! off where one fails, and says which one it was.

use std::sync::{Condvar, Mutex, PoisonError};
use std::thread::{self, Scope, ScopedJoinHandle};

use anyhow::{Result, anyhow};

/// A reusable barrier for `parties` threads that can be called off.
#[derive(Debug)]
pub(crate) struct StartLine {
    parties: usize,
    state: Mutex<LineState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct LineState {
    /// Threads waiting for the current round.
    waiting: usize,
    /// Rounds completed: a waiter is let go when this moves on.
    round: u64,
    /// No round will start again.
    called_off: bool,
}

impl StartLine {
    /// A line that lets its waiters go each time `parties` of them have arrived.
    pub(crate) fn new(parties: usize) -> Self {
        assert!(parties > 0, "a start line waits for one party at least");
        Self {
            parties,
            state: Mutex::new(LineState::default()),
            changed: Condvar::new(),
        }
    }

    /// Waits for the other parties: `true` once all have arrived, `false` if the line is
    /// called off first (or was already), when the caller should give up the work.
    pub(crate) fn wait(&self) -> bool {
        // A panic elsewhere cannot leave the state half-changed: every change below is made
        // whole under the lock before anything that could panic.
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.called_off {
            return false;
        }
        state.waiting += 1;
        if state.waiting == self.parties {
            state.waiting = 0;
            state.round += 1;
            self.changed.notify_all();
            return true;
        }
        let round = state.round;
        while state.round == round && !state.called_off {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.round != round
    }

    /// Lets every waiter, now and later, go without the work.
    pub(crate) fn call_off(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.called_off = true;
        self.changed.notify_all();
    }
}

/// Calls its line off if dropped while its thread panics: the other parties are let go
/// rather than left waiting for it, and the panic reaches whoever joins the thread.
struct CallOffOnPanic<'a>(&'a StartLine);

impl Drop for CallOffOnPanic<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            self.0.call_off();
        }
    }
}

/// Starts a thread in `scope` for each of `inputs`, thread `k` running `work(k, inputs[k])`;
/// `work` waits at `line` before it does anything timed, and returns at once when the wait
/// says the line is called off. If a thread cannot start, the line is called off, the threads
/// already started are joined, and the error says which thread failed and why; if one
/// panics, the line is called off too.
pub(crate) fn start_threads<'scope, I, T, F>(
    scope: &'scope Scope<'scope, '_>,
    line: &'scope StartLine,
    inputs: Vec<I>,
    work: &'scope F,
) -> Result<Vec<ScopedJoinHandle<'scope, T>>>
where
    I: Send + 'scope,
    T: Send + 'scope,
    F: Fn(usize, I) -> T + Sync,
{
    let count = inputs.len();
    let mut handles = Vec::with_capacity(count);
    for (k, input) in inputs.into_iter().enumerate() {
        let run = move || {
            let _guard = CallOffOnPanic(line);
            work(k, input)
        };
        match thread::Builder::new().spawn_scoped(scope, run) {
            Ok(handle) => handles.push(handle),
            Err(e) => {
                line.call_off();
                for handle in handles {
                    // Each returns at the called-off line; a panic is the thread's own.
                    if let Err(panic) = handle.join() {
                        std::panic::resume_unwind(panic);
                    }
                }
                return Err(anyhow!("cannot start thread {} of {count}: {e}", k + 1));
            }
        }
    }
    Ok(handles)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Every party passes each round together, round after round, with many more parties
    /// than cores: none leaves round `r` before all have arrived at it.
    #[test]
    fn the_line_lets_all_parties_go_each_round() {
        const PARTIES: usize = 64;
        const ROUNDS: usize = 50;
        let line = StartLine::new(PARTIES);
        let arrived = AtomicUsize::new(0);
        thread::scope(|scope| {
            for _ in 0..PARTIES {
                scope.spawn(|| {
                    for round in 0..ROUNDS {
                        // Relaxed: the line's lock orders each arrival before every release
                        // of its round.
                        arrived.fetch_add(1, Ordering::Relaxed);
                        assert!(line.wait());
                        assert!(arrived.load(Ordering::Relaxed) >= (round + 1) * PARTIES);
                    }
                });
            }
        });
        assert_eq!(arrived.into_inner(), PARTIES * ROUNDS);
    }

    /// Waiters that can never be joined by the missing party are let go, with `false`, when
    /// the line is called off, and so is any later waiter.
    #[test]
    fn calling_the_line_off_lets_the_waiters_go() {
        let line = StartLine::new(5);
        thread::scope(|scope| {
            let waiters: Vec<_> = (0..3).map(|_| scope.spawn(|| line.wait())).collect();
            // Called off once all three wait, not before they arrive.
            while line.state.lock().unwrap().waiting < 3 {
                thread::yield_now();
            }
            line.call_off();
            for waiter in waiters {
                assert!(!waiter.join().unwrap());
            }
        });
        assert!(!line.wait());
    }

    /// A thread that panics calls the line off: the others are let go, and the panic reaches
    /// the join.
    #[test]
    fn a_panicking_thread_lets_the_others_go() {
        let line = StartLine::new(4);
        let work = |k: usize, (): ()| {
            if k == 0 {
                panic!("thread 0 fails before the start");
            }
            line.wait()
        };
        thread::scope(|scope| {
            let handles = start_threads(scope, &line, vec![(); 4], &work).expect("4 threads start");
            let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
            assert!(joined[0].is_err());
            assert!(joined[1..].iter().all(|j| matches!(j, Ok(false))));
        });
    }

    /// Many more threads than cores, on a line of their own count, all start and finish.
    #[test]
    fn all_threads_start_and_are_joined() {
        let line = StartLine::new(64);
        let work = |k: usize, input: usize| if line.wait() { k + input } else { usize::MAX };
        let sum: usize = thread::scope(|scope| {
            let handles =
                start_threads(scope, &line, vec![1; 64], &work).expect("64 threads start");
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(sum, (1..=64).sum::<usize>());
    }
}
