//! The tiles a rank holds and has not yet begun: filled and robbed by the rank's service loop,
//! drained in batches by its render thread.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A rank's tiles not yet begun, shared by its two threads.
#[derive(Debug)]
pub(crate) struct Pool {
    state: Mutex<State>,
    /// Signalled when tiles arrive or the pool closes.
    ready: Condvar,
}

#[derive(Debug)]
struct State {
    /// Tiles not yet begun; the render thread takes from the front, thieves from the back.
    tiles: VecDeque<u32>,
    /// No tile will arrive any more: once empty, the render thread ends.
    closed: bool,
    /// Tiles finished by the render thread and not yet reported.
    finished: u64,
    /// The render thread has ended (`Some(true)` if it failed).
    render_ended: Option<bool>,
}

impl Pool {
    pub(crate) fn new(tiles: impl IntoIterator<Item = u32>, closed: bool) -> Self {
        Self {
            state: Mutex::new(State {
                tiles: tiles.into_iter().collect(),
                closed,
                finished: 0,
                render_ended: None,
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock is held leaves the tiles as they were: nothing is half-done.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The render thread's next batch: `size(held)` tiles from the front, waiting while the
    /// pool is empty and open; `None` once it is empty and closed. Also returns the time spent
    /// waiting.
    pub(crate) fn next_batch(&self, size: impl Fn(usize) -> usize) -> (Option<Vec<u32>>, Duration) {
        let mut state = self.lock();
        let began = Instant::now();
        while state.tiles.is_empty() && !state.closed {
            state = self.ready.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        let held = state.tiles.len();
        let batch = (held > 0).then(|| state.tiles.drain(..size(held).clamp(1, held)).collect());
        (batch, began.elapsed())
    }

    /// The render thread has finished `n` more tiles.
    pub(crate) fn finished(&self, n: usize) {
        self.lock().finished += n as u64;
    }

    /// The render thread has ended, failed or not.
    pub(crate) fn render_ended(&self, failed: bool) {
        self.lock().render_ended = Some(failed);
    }

    /// Whether the render thread has ended, and whether it failed.
    pub(crate) fn render_state(&self) -> Option<bool> {
        self.lock().render_ended
    }

    /// Tiles finished since the last call.
    pub(crate) fn take_finished(&self) -> u64 {
        std::mem::take(&mut self.lock().finished)
    }

    /// Tiles held and not yet begun.
    pub(crate) fn len(&self) -> usize {
        self.lock().tiles.len()
    }

    /// Adds tiles for the render thread.
    pub(crate) fn push(&self, tiles: &[u32]) {
        self.lock().tiles.extend(tiles);
        self.ready.notify_one();
    }

    /// Takes `n` tiles (or all there are) from the back, the end the render thread reaches
    /// last.
    pub(crate) fn take_back(&self, n: usize) -> Vec<u32> {
        let mut state = self.lock();
        let keep = state.tiles.len().saturating_sub(n);
        state.tiles.drain(keep..).collect()
    }

    /// No tile will arrive any more.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_come_from_the_front_and_thieves_take_the_back() {
        let pool = Pool::new(0..10, false);
        assert_eq!(pool.next_batch(|_| 3).0, Some(vec![0, 1, 2]));
        assert_eq!(pool.take_back(4), vec![6, 7, 8, 9]);
        assert_eq!(pool.take_back(9), vec![3, 4, 5]);
        assert!(pool.take_back(1).is_empty());
        pool.push(&[42]);
        pool.close();
        // A batch size of 0 still takes one tile; more than are held takes them all.
        assert_eq!(pool.next_batch(|_| 0).0, Some(vec![42]));
        assert_eq!(pool.next_batch(|_| 5).0, None);
    }

    #[test]
    fn the_render_thread_waits_for_tiles_and_for_the_close() {
        let pool = Pool::new([], false);
        std::thread::scope(|s| {
            let taker = s.spawn(|| {
                let mut got = Vec::new();
                while let (Some(batch), _) = pool.next_batch(|held| held) {
                    got.extend(batch);
                }
                got
            });
            std::thread::sleep(Duration::from_millis(20));
            pool.push(&[1, 2]);
            std::thread::sleep(Duration::from_millis(20));
            pool.push(&[3]);
            pool.close();
            assert_eq!(taker.join().unwrap(), vec![1, 2, 3]);
        });
    }
}
