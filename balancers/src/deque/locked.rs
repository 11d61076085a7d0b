//! The blocking deque of Wende's listing 3.3: a ring buffer behind a spin lock. The owner
//! waits for the lock; a thief tries it once and fails fast. README.md beside this file says
//! why a thief never holds two locks.

use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use super::{Steal, half, try_boxed};
use crate::sync::{Arc, AtomicBool, AtomicU32, CachePadded, Ordering, UnsafeCell, spin_wait};

/// The tasks, guarded by the lock.
struct Ring<T> {
    slots: Box<[MaybeUninit<T>]>,
    tags: Box<[u32]>,
    /// Index of the oldest task.
    head: usize,
    /// Tasks held.
    len: usize,
}

impl<T> Ring<T> {
    fn index(&self, offset: usize) -> usize {
        (self.head + offset) % self.slots.len()
    }
}

struct Inner<T> {
    lock: CachePadded<AtomicBool>,
    ring: UnsafeCell<Ring<T>>,
    /// Copies of `len` and of the oldest task's tag, kept up to date under the lock, so that
    /// thieves choosing a victim can read them without it.
    len_hint: AtomicU32,
    oldest_tag_hint: AtomicU32,
}

// SAFETY: the ring is only touched between a successful acquisition of `lock` (Acquire) and
// its release (Release), so accesses never overlap and each sees the previous one's writes;
// tasks move between threads, hence `T: Send`.
unsafe impl<T: Send> Sync for Inner<T> {}
// SAFETY: as for `Sync`.
unsafe impl<T: Send> Send for Inner<T> {}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        self.ring.with_mut(|ring| {
            // SAFETY: `drop` has the only reference to the deque.
            let ring = unsafe { &mut *ring };
            for offset in 0..ring.len {
                let i = ring.index(offset);
                // SAFETY: the `len` slots from `head` hold tasks nobody has taken.
                unsafe { ring.slots[i].assume_init_drop() };
            }
        });
    }
}

/// The owner's handle. `Send` but not `Sync`: exactly one thread uses it.
///
/// ```
/// use balancers::deque::locked;
///
/// let (worker, _stealer) = locked::new(4);
/// worker.push("tile 0", 0).unwrap();
/// worker.push("tile 1", 0).unwrap();
/// assert_eq!(worker.pop(), Some("tile 1"));
/// assert_eq!(worker.len(), 1);
/// ```
pub struct Worker<T> {
    inner: Arc<Inner<T>>,
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief's handle. Cheap to clone.
///
/// ```
/// use balancers::deque::{locked, Steal};
///
/// let (worker, stealer) = locked::new(4);
/// worker.push(10, 0).unwrap();
/// let thief = stealer.clone(); // a handle for another thread
/// let handle = std::thread::spawn(move || {
///     let mut loot = Vec::new();
///     assert_eq!(thief.steal_into(&mut loot, 1), Steal::Success(1));
///     loot
/// });
/// assert_eq!(handle.join().unwrap(), [10]);
/// ```
pub struct Stealer<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> std::fmt::Debug for Worker<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("locked::Worker")
            .field("len", &self.len())
            .finish()
    }
}

impl<T> std::fmt::Debug for Stealer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("locked::Stealer")
            .field("len", &self.len())
            .finish()
    }
}

/// A deque for `capacity` tasks (at least 1): the owner's handle and a thief's.
///
/// ```
/// use balancers::deque::{locked, Steal};
///
/// let (worker, stealer) = locked::new(8);
/// worker.push('a', 0).unwrap();
/// worker.push('b', 1).unwrap();
/// let mut loot = Vec::new();
/// assert_eq!(stealer.steal_into(&mut loot, 1), Steal::Success(1));
/// assert_eq!(loot, ['a']);
/// assert_eq!(worker.pop(), Some('b'));
/// ```
///
/// # Panics
/// If `capacity` is 0 or does not fit in 32 bits.
pub fn new<T>(capacity: usize) -> (Worker<T>, Stealer<T>) {
    check_capacity(capacity);
    with_slots(
        (0..capacity).map(|_| MaybeUninit::uninit()).collect(),
        vec![0; capacity].into_boxed_slice(),
    )
}

/// [`new`], or an error where the memory for `capacity` tasks cannot be had (where `new`
/// would abort the process).
///
/// ```
/// use balancers::deque::locked;
///
/// let (worker, _stealer) = locked::try_new::<u64>(1024).expect("8 KiB of slots");
/// assert!(worker.push(7, 0).is_ok());
/// assert!(locked::try_new::<[u64; 1 << 20]>(1 << 30).is_err());
/// ```
///
/// # Panics
/// If `capacity` is 0 or does not fit in 32 bits.
pub fn try_new<T>(
    capacity: usize,
) -> Result<(Worker<T>, Stealer<T>), std::collections::TryReserveError> {
    check_capacity(capacity);
    let slots = try_boxed(capacity, MaybeUninit::uninit)?;
    let tags = try_boxed(capacity, || 0)?;
    Ok(with_slots(slots, tags))
}

fn check_capacity(capacity: usize) {
    assert!(
        (1..=u32::MAX as usize).contains(&capacity),
        "deque capacity out of range"
    );
}

/// An empty deque over `slots` and their `tags` (as many of each).
fn with_slots<T>(slots: Box<[MaybeUninit<T>]>, tags: Box<[u32]>) -> (Worker<T>, Stealer<T>) {
    let inner = Arc::new(Inner {
        lock: CachePadded(AtomicBool::new(false)),
        ring: UnsafeCell::new(Ring {
            slots,
            tags,
            head: 0,
            len: 0,
        }),
        len_hint: AtomicU32::new(0),
        oldest_tag_hint: AtomicU32::new(0),
    });
    let stealer = Stealer {
        inner: Arc::clone(&inner),
    };
    (
        Worker {
            inner,
            _not_sync: PhantomData,
        },
        stealer,
    )
}

impl<T> Inner<T> {
    /// Takes the lock, waiting as long as it takes.
    fn lock(&self) {
        // Acquire: what the previous holder did to the ring happens before what we do.
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Wait with plain loads, so that waiting does not bounce the cache line.
            while self.lock.load(Ordering::Relaxed) {
                spin_wait();
            }
        }
    }

    /// Takes the lock if it is free; never waits.
    fn try_lock(&self) -> bool {
        // A plain load first: a thief that finds the lock held leaves without writing to its
        // cache line, so failed attempts do not slow the owner. Relaxed: only a hint; the
        // compare-and-swap decides, with Acquire as in `lock`.
        !self.lock.load(Ordering::Relaxed)
            && self
                .lock
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// Runs `f` on the ring; the lock must be held.
    fn with_ring<R>(&self, f: impl FnOnce(&mut Ring<T>) -> R) -> R {
        self.ring.with_mut(|ring| {
            // SAFETY: the caller holds the lock, so this is the only access to the ring.
            let ring = unsafe { &mut *ring };
            let result = f(ring);
            // Relaxed: hints for victim selection, read without the lock.
            self.len_hint.store(ring.len as u32, Ordering::Relaxed);
            if ring.len > 0 {
                self.oldest_tag_hint
                    .store(ring.tags[ring.head], Ordering::Relaxed);
            }
            result
        })
    }

    fn unlock(&self) {
        // Release: publishes what we did to the ring to the next holder.
        self.lock.store(false, Ordering::Release);
    }
}

impl<T> Worker<T> {
    /// Adds a task at the newest end, with its tag. Gives the task back if the deque is full.
    ///
    /// ```
    /// # use balancers::deque::locked;
    /// let (worker, _stealer) = locked::new(1);
    /// assert_eq!(worker.push('a', 0), Ok(()));
    /// assert_eq!(worker.push('b', 0), Err('b'), "full: the task comes back");
    /// ```
    pub fn push(&self, task: T, tag: u32) -> Result<(), T> {
        let inner = &*self.inner;
        inner.lock();
        let result = inner.with_ring(|ring| {
            if ring.len == ring.slots.len() {
                return Err(task);
            }
            let i = ring.index(ring.len);
            ring.slots[i].write(task);
            ring.tags[i] = tag;
            ring.len += 1;
            Ok(())
        });
        inner.unlock();
        result
    }

    /// Takes the newest task.
    ///
    /// ```
    /// # use balancers::deque::locked;
    /// let (worker, _stealer) = locked::new(4);
    /// worker.push(1, 0).unwrap();
    /// worker.push(2, 1).unwrap();
    /// assert_eq!(worker.pop(), Some(2));
    /// assert_eq!(worker.pop(), Some(1));
    /// assert_eq!(worker.pop(), None);
    /// ```
    pub fn pop(&self) -> Option<T> {
        let inner = &*self.inner;
        inner.lock();
        let task = inner.with_ring(|ring| {
            if ring.len == 0 {
                return None;
            }
            ring.len -= 1;
            let i = ring.index(ring.len);
            // SAFETY: slot `i` held the newest task, now removed from the ring.
            Some(unsafe { ring.slots[i].assume_init_read() })
        });
        inner.unlock();
        task
    }

    /// Tasks in the deque.
    ///
    /// ```
    /// # use balancers::deque::locked;
    /// let (worker, _stealer) = locked::new(4);
    /// worker.push((), 0).unwrap();
    /// worker.push((), 0).unwrap();
    /// assert_eq!(worker.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        // Relaxed: a hint, as for thieves.
        self.inner.len_hint.load(Ordering::Relaxed) as usize
    }

    /// True when the deque holds no task.
    ///
    /// ```
    /// # use balancers::deque::locked;
    /// let (worker, _stealer) = locked::new(4);
    /// assert!(worker.is_empty());
    /// worker.push((), 0).unwrap();
    /// assert!(!worker.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A thief's handle on this deque.
    ///
    /// ```
    /// # use balancers::deque::locked;
    /// let (worker, _stealer) = locked::new(4);
    /// worker.push(5, 0).unwrap();
    /// let stealer = worker.stealer();
    /// assert_eq!(stealer.len(), 1);
    /// ```
    pub fn stealer(&self) -> Stealer<T> {
        Stealer {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> Stealer<T> {
    /// Takes up to half of the tasks (rounded up), at most `max`, oldest first, appending them
    /// to `dest`; `Success` says how many. Tries the lock once: `Retry` if it is held.
    ///
    /// ```
    /// use balancers::deque::{locked, Steal};
    ///
    /// let (worker, stealer) = locked::new(8);
    /// for task in 0..3 {
    ///     worker.push(task, 0).unwrap();
    /// }
    /// let mut loot = Vec::new();
    /// assert_eq!(stealer.steal_into(&mut loot, 8), Steal::Success(2));
    /// assert_eq!(loot, [0, 1]);
    /// assert_eq!(stealer.steal_into(&mut loot, 8), Steal::Success(1));
    /// assert_eq!(stealer.steal_into(&mut loot, 8), Steal::Empty);
    /// ```
    pub fn steal_into(&self, dest: &mut Vec<T>, max: usize) -> Steal<usize> {
        let inner = &*self.inner;
        if max == 0 {
            return Steal::Success(0);
        }
        if !inner.try_lock() {
            return Steal::Retry;
        }
        let taken = inner.with_ring(|ring| {
            let n = half(ring.len as u32, max) as usize;
            for _ in 0..n {
                // SAFETY: slot `head` holds the oldest task, removed from the ring here.
                dest.push(unsafe { ring.slots[ring.head].assume_init_read() });
                ring.head = (ring.head + 1) % ring.slots.len();
                ring.len -= 1;
            }
            n
        });
        inner.unlock();
        if taken == 0 {
            Steal::Empty
        } else {
            Steal::Success(taken)
        }
    }

    /// Tasks in the deque, as far as a reader without the lock can tell.
    ///
    /// ```
    /// # use balancers::deque::locked;
    /// let (worker, stealer) = locked::new(4);
    /// worker.push('x', 0).unwrap();
    /// assert_eq!(stealer.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        // Relaxed: a hint for victim selection.
        self.inner.len_hint.load(Ordering::Relaxed) as usize
    }

    /// True when the deque seems empty.
    ///
    /// ```
    /// # use balancers::deque::locked;
    /// let (worker, stealer) = locked::new(4);
    /// assert!(stealer.is_empty());
    /// worker.push('x', 0).unwrap();
    /// assert!(!stealer.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tag of the oldest task, if the deque seems to hold one. A hint.
    ///
    /// ```
    /// # use balancers::deque::locked;
    /// let (worker, stealer) = locked::new(4);
    /// assert_eq!(stealer.oldest_tag(), None);
    /// worker.push("root", 0).unwrap();
    /// worker.push("child", 1).unwrap();
    /// assert_eq!(stealer.oldest_tag(), Some(0));
    /// ```
    pub fn oldest_tag(&self) -> Option<u32> {
        // Relaxed: hints.
        (!self.is_empty()).then(|| self.inner.oldest_tag_hint.load(Ordering::Relaxed))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ring_wraps_around() {
        let (w, s) = new(3);
        let mut loot = Vec::new();
        for round in 0..5 {
            w.push(round * 10, 0).unwrap();
            w.push(round * 10 + 1, 0).unwrap();
            assert_eq!(s.steal_into(&mut loot, 1), Steal::Success(1));
            assert_eq!(w.pop(), Some(round * 10 + 1));
        }
        assert_eq!(loot, [0, 10, 20, 30, 40]);
        assert_eq!(s.steal_into(&mut loot, 1), Steal::Empty);
        for i in 0..3 {
            w.push(i, i as u32).unwrap();
        }
        assert_eq!(w.push(3, 0), Err(3));
        assert_eq!(s.oldest_tag(), Some(0));
    }

    #[test]
    fn a_held_lock_makes_thieves_retry() {
        let (w, s) = new::<u8>(4);
        w.push(1, 0).unwrap();
        s.inner.lock();
        assert_eq!(s.steal_into(&mut Vec::new(), 1), Steal::Retry);
        s.inner.unlock();
        assert_eq!(s.steal_into(&mut Vec::new(), 1), Steal::Success(1));
    }
}
