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

/// Starts a thread in `scope` for each of `inputs`, thread `k` running `work(k, inputs[k])`;
/// `work` waits at `line` before it does anything timed, and returns at once when the wait
/// says the line is called off. If a thread cannot start, the line is called off, the threads
/// already started are joined, and the error says which thread failed and why.
pub(crate) fn start_threads<'scope, I, T, F>(
    scope: &'scope Scope<'scope, '_>,
    line: &StartLine,
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
        match thread::Builder::new().spawn_scoped(scope, move || work(k, input)) {
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
    /// than cores.
    #[test]
    fn the_line_lets_all_parties_go_each_round() {
        let line = StartLine::new(64);
        let passed = AtomicUsize::new(0);
        thread::scope(|scope| {
            for _ in 0..64 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        assert!(line.wait());
                        // Relaxed: a count read after the scope joins every thread.
                        passed.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(passed.into_inner(), 64 * 50);
    }

    /// Waiters that can never be joined by the missing party are let go, with `false`, when
    /// the line is called off, and so is any later waiter.
    #[test]
    fn calling_the_line_off_lets_the_waiters_go() {
        let line = StartLine::new(5);
        thread::scope(|scope| {
            let waiters: Vec<_> = (0..3).map(|_| scope.spawn(|| line.wait())).collect();
            line.call_off();
            for waiter in waiters {
                assert!(!waiter.join().unwrap());
            }
        });
        assert!(!line.wait());
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
