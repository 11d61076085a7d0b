//! The non-blocking deque of Arora, Blumofe and Plaxton, as in Wende's listing 3.4, with
//! thieves that claim a task before they copy it out. README.md beside this file gives the
//! protocol and the argument for every ordering used here.

use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use super::{Steal, half, try_boxed};
use crate::sync::{Arc, AtomicU32, AtomicU64, CachePadded, Ordering, UnsafeCell, fence};

/// The `busy` bit of the `age` word: a thief owns claimed slots it has not finished copying.
const BUSY: u64 = 1 << 63;
/// The tag takes the 31 bits between `top` and `busy`.
const TAG_MASK: u32 = (1 << 31) - 1;

/// The decoded `age` word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Age {
    /// Index of the oldest task.
    top: u32,
    /// Bumped on every reset, so that a thief holding an old `age` cannot succeed (ABA).
    tag: u32,
    /// A thief is copying claimed tasks out.
    busy: bool,
}

impl Age {
    fn pack(self) -> u64 {
        u64::from(self.top)
            | u64::from(self.tag & TAG_MASK) << 32
            | if self.busy { BUSY } else { 0 }
    }

    fn unpack(word: u64) -> Self {
        Self {
            top: word as u32,
            tag: (word >> 32) as u32 & TAG_MASK,
            busy: word & BUSY != 0,
        }
    }
}

struct Inner<T> {
    age: CachePadded<AtomicU64>,
    /// One past the newest task. Stored only by the owner.
    bot: CachePadded<AtomicU32>,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// Each slot's tag, readable by thieves choosing a victim (a hint, never a decision).
    tags: Box<[AtomicU32]>,
}

// SAFETY: [1] every slot is written only by the owner (`push`) and read by exactly one
// thread, the owner (`pop`) or the thief whose compare-and-swap claimed it; the protocol in
// README.md orders every write of a slot before its read and every read before its next
// write. [2] Tasks move between threads, hence `T: Send`.
unsafe impl<T: Send> Sync for Inner<T> {}
// SAFETY: as for `Sync`; the tasks themselves are `Send`.
unsafe impl<T: Send> Send for Inner<T> {}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        if !std::mem::needs_drop::<T>() {
            return;
        }
        // Relaxed: `drop` has the only reference; no other thread can touch the deque.
        let top = Age::unpack(self.age.load(Ordering::Relaxed)).top;
        let bot = self.bot.load(Ordering::Relaxed);
        for i in top..bot.max(top) {
            // SAFETY: slots in [top, bot) hold tasks nobody has taken; each is dropped once.
            self.slots[i as usize].with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}

/// The owner's handle: push and pop at the newest end. `Send` but not `Sync`: exactly one
/// thread uses it.
///
/// ```
/// use balancers::deque::abp;
///
/// let (worker, _stealer) = abp::new(4);
/// worker.push("tile 0", 0).unwrap();
/// worker.push("tile 1", 0).unwrap();
/// assert_eq!(worker.pop(), Some("tile 1"));
/// assert_eq!(worker.len(), 1);
/// ```
pub struct Worker<T> {
    inner: Arc<Inner<T>>,
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief's handle: takes the oldest tasks. Cheap to clone; any number of threads may hold
/// one.
///
/// ```
/// use balancers::deque::{abp, Steal};
///
/// let (worker, stealer) = abp::new(4);
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
        f.debug_struct("abp::Worker")
            .field("len", &self.len())
            .finish()
    }
}

impl<T> std::fmt::Debug for Stealer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("abp::Stealer")
            .field("len", &self.len())
            .finish()
    }
}

/// A deque for `capacity` tasks (1 to 2^31 − 1): the owner's handle and a thief's.
///
/// ```
/// use balancers::deque::{abp, Steal};
///
/// let (worker, stealer) = abp::new(8);
/// for task in 0..5 {
///     worker.push(task, 0).unwrap();
/// }
/// let mut loot = Vec::new();
/// // Half of the five, rounded up, oldest first.
/// assert_eq!(stealer.steal_into(&mut loot, usize::MAX), Steal::Success(3));
/// assert_eq!(loot, [0, 1, 2]);
/// assert_eq!(worker.pop(), Some(4));
/// ```
///
/// # Panics
/// If `capacity` is 0 or above 2^31 − 1.
pub fn new<T>(capacity: usize) -> (Worker<T>, Stealer<T>) {
    check_capacity(capacity);
    with_slots(
        (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect(),
        (0..capacity).map(|_| AtomicU32::new(0)).collect(),
    )
}

/// [`new`], or an error where the memory for `capacity` tasks cannot be had (where `new`
/// would abort the process).
///
/// ```
/// use balancers::deque::abp;
///
/// let (worker, _stealer) = abp::try_new::<u64>(1024).expect("8 KiB of slots");
/// assert!(worker.push(7, 0).is_ok());
/// assert!(abp::try_new::<[u64; 1 << 20]>(1 << 30).is_err());
/// ```
///
/// # Panics
/// If `capacity` is 0 or above 2^31 − 1.
pub fn try_new<T>(
    capacity: usize,
) -> Result<(Worker<T>, Stealer<T>), std::collections::TryReserveError> {
    check_capacity(capacity);
    let slots = try_boxed(capacity, || UnsafeCell::new(MaybeUninit::uninit()))?;
    let tags = try_boxed(capacity, || AtomicU32::new(0))?;
    Ok(with_slots(slots, tags))
}

fn check_capacity(capacity: usize) {
    assert!(
        (1..=TAG_MASK as usize).contains(&capacity),
        "deque capacity out of range"
    );
}

/// An empty deque over `slots` and their `tags` (as many of each).
fn with_slots<T>(
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    tags: Box<[AtomicU32]>,
) -> (Worker<T>, Stealer<T>) {
    let inner = Arc::new(Inner {
        age: CachePadded(AtomicU64::new(
            Age {
                top: 0,
                tag: 0,
                busy: false,
            }
            .pack(),
        )),
        bot: CachePadded(AtomicU32::new(0)),
        slots,
        tags,
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
    /// Moves the task out of slot `index`.
    ///
    /// # Safety
    /// The caller owns the task in `index` (it pushed it and saw it untouched, or claimed it
    /// by compare-and-swap) and nobody else will read it.
    unsafe fn take(&self, index: u32) -> T {
        // SAFETY: the slot holds an initialised task that the caller alone owns.
        self.slots[index as usize].with(|p| unsafe { (*p).assume_init_read() })
    }

    /// Tasks in the deque, as far as a racing reader can tell.
    fn len(&self) -> usize {
        // Relaxed: a hint for victim selection and reports; nothing is decided on it.
        let top = Age::unpack(self.age.load(Ordering::Relaxed)).top;
        self.bot.load(Ordering::Relaxed).saturating_sub(top) as usize
    }
}

impl<T> Worker<T> {
    /// Adds a task at the newest end, with its tag. Gives the task back if the deque is full.
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, _stealer) = abp::new(1);
    /// assert_eq!(worker.push('a', 0), Ok(()));
    /// assert_eq!(worker.push('b', 0), Err('b'), "full: the task comes back");
    /// ```
    pub fn push(&self, task: T, tag: u32) -> Result<(), T> {
        let inner = &*self.inner;
        // Relaxed: only this thread stores `bot`; this reads its own last store.
        let mut bot = inner.bot.load(Ordering::Relaxed);
        if bot as usize == inner.slots.len() {
            // The array is not a ring: its end is reached even when thieves have emptied the
            // front. If they have taken everything, reset and start over; otherwise it is full.
            // Acquire: as for the reset in `pop`.
            let age = Age::unpack(inner.age.load(Ordering::Acquire));
            if age.top < bot || age.busy {
                return Err(task);
            }
            self.reset(age);
            bot = inner.bot.load(Ordering::Relaxed);
            if bot as usize == inner.slots.len() {
                return Err(task);
            }
        }
        // SAFETY: slot `bot` is outside [top, bot): no thief may claim it until `bot` passes
        // it below, and no thief is still copying it (a thief copies only slots below `top`,
        // and the owner moves `bot` back over such slots only by a reset, which waits until
        // `busy` is clear).
        inner.slots[bot as usize].with_mut(|p| unsafe { (*p).write(task) });
        // Relaxed: published by the `Release` store of `bot` below.
        inner.tags[bot as usize].store(tag, Ordering::Relaxed);
        // Release: a thief that loads this `bot` with `Acquire` sees the slot written.
        inner.bot.store(bot + 1, Ordering::Release);
        Ok(())
    }

    /// Takes the newest task.
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, _stealer) = abp::new(4);
    /// worker.push(1, 0).unwrap();
    /// worker.push(2, 1).unwrap();
    /// assert_eq!(worker.pop(), Some(2));
    /// assert_eq!(worker.pop(), Some(1));
    /// assert_eq!(worker.pop(), None);
    /// ```
    pub fn pop(&self) -> Option<T> {
        let inner = &*self.inner;
        // Relaxed: only this thread stores `bot`.
        let bot = inner.bot.load(Ordering::Relaxed);
        if bot == 0 {
            return None;
        }
        let b = bot - 1;
        // Release, though only this thread's later loads need the value: a thief may read this
        // `bot` and then copy out a slot below it, and only a Release store carries the
        // earlier writes of those slots to a thief that reads it (a Relaxed store by the same
        // thread does not continue the release sequence of the push that wrote them).
        inner.bot.store(b, Ordering::Release);
        // The store→load fence: orders the store of `bot` above before the load of `age`
        // below against a thief's load of `age` and then `bot` (README, invariant 1). Without
        // it owner and thief can both take the last task.
        fence(Ordering::SeqCst);
        // Relaxed: the fence above orders it; the slots the owner reads are its own writes.
        let mut age = Age::unpack(inner.age.load(Ordering::Relaxed));
        if b > age.top {
            // SAFETY: more than one task was left: no thief can claim `b` (invariant 1).
            return Some(unsafe { inner.take(b) });
        }
        while b == age.top {
            // The last task; thieves may be claiming it. Win it with the compare-and-swap,
            // resetting the deque at the same time unless a thief is still copying out.
            let next = if age.busy {
                Age {
                    top: age.top + 1,
                    ..age
                }
            } else {
                Age {
                    top: 0,
                    tag: age.tag.wrapping_add(1) & TAG_MASK,
                    busy: false,
                }
            };
            // `bot` first: a thief that sees the new `age` (by the Release of the
            // compare-and-swap) must see the matching `bot`, or after a reset it would take
            // `top = 0` for a task while the old `bot` still stands (ABP stores `bot` first
            // for the same reason). If the compare-and-swap fails, the loop stores it again.
            inner.bot.store(next.top, Ordering::Relaxed);
            // AcqRel: Release publishes the store of `bot` above with the new `age`; Acquire
            // pairs with the Release that cleared `busy`, ordering a thief's copy before this
            // thread reuses the slots after a reset.
            match inner.age.compare_exchange(
                age.pack(),
                next.pack(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                // SAFETY: the compare-and-swap made the last task the owner's.
                Ok(_) => return Some(unsafe { inner.take(b) }),
                // A thief claimed it (`top` moved past `b`) or `busy` changed: look again.
                Err(actual) => age = Age::unpack(actual),
            }
        }
        // A thief took the last task: the deque is empty.
        self.reset(age);
        None
    }

    /// Resets an empty deque to the start of the array with a new tag, unless a thief is
    /// still copying out, in which case it only marks it empty where it is.
    fn reset(&self, mut age: Age) {
        let inner = &*self.inner;
        loop {
            if age.busy {
                inner.bot.store(age.top, Ordering::Relaxed);
                return;
            }
            // `bot` first, so that a thief that sees the reset `age` sees `bot = 0` with it.
            inner.bot.store(0, Ordering::Relaxed);
            let reset = Age {
                top: 0,
                tag: age.tag.wrapping_add(1) & TAG_MASK,
                busy: false,
            };
            // AcqRel: Release publishes `bot = 0` with the reset; Acquire as in `pop`.
            match inner.age.compare_exchange(
                age.pack(),
                reset.pack(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => age = Age::unpack(actual),
            }
        }
    }

    /// Tasks in the deque now (exact for the owner up to thieves' concurrent claims).
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, _stealer) = abp::new(4);
    /// worker.push((), 0).unwrap();
    /// worker.push((), 0).unwrap();
    /// assert_eq!(worker.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True when the deque holds no task.
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, _stealer) = abp::new(4);
    /// assert!(worker.is_empty());
    /// worker.push((), 0).unwrap();
    /// assert!(!worker.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The most tasks the deque can hold.
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, _stealer) = abp::new::<u8>(16);
    /// assert_eq!(worker.capacity(), 16);
    /// ```
    pub fn capacity(&self) -> usize {
        self.inner.slots.len()
    }

    /// A thief's handle on this deque.
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, _stealer) = abp::new(4);
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
    /// to `dest`; `Success` says how many. `max = 1` steals one task.
    ///
    /// Returns `Retry` at once when another thief is copying out of this deque or a race is
    /// lost: the caller should try elsewhere rather than wait.
    ///
    /// ```
    /// use balancers::deque::{abp, Steal};
    ///
    /// let (worker, stealer) = abp::new(8);
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
        // Acquire: pairs with the Release that cleared `busy`, so this thief starts after the
        // previous one has finished (README, invariant 1).
        let age = Age::unpack(inner.age.load(Ordering::Acquire));
        if age.busy {
            return Steal::Retry;
        }
        // Orders the load of `age` above before the load of `bot` below against the owner's
        // store of `bot` and load of `age` in `pop` (README, invariant 1).
        fence(Ordering::SeqCst);
        // Acquire: pairs with `push`'s Release, so the slots below `bot` are written.
        let bot = inner.bot.load(Ordering::Acquire);
        if bot <= age.top {
            return Steal::Empty;
        }
        let want = half(bot - age.top, max) as usize;
        let claimed = Age {
            top: age.top + 1,
            busy: true,
            ..age
        };
        // AcqRel: Acquire keeps the copy below after the claim; Release is needed by nobody
        // (the owner's decisions use the fences) but costs nothing on a read-modify-write.
        if inner
            .age
            .compare_exchange(
                age.pack(),
                claimed.pack(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return Steal::Retry;
        }
        // After the claim and before the copy: the owner's `pop` that comes after this fence
        // sees the claim (README, invariant 1).
        fence(Ordering::SeqCst);
        // SAFETY: the compare-and-swap claimed slot `age.top`; `busy` keeps the owner from
        // reusing it until the Release below.
        dest.push(unsafe { inner.take(age.top) });
        let mut taken = 1;
        while taken < want {
            // Further claims while holding `busy`: only the owner's last-task pop can change
            // `age` now, and then the deque is empty.
            let current = Age::unpack(inner.age.load(Ordering::Acquire));
            fence(Ordering::SeqCst);
            let bot = inner.bot.load(Ordering::Acquire);
            if bot <= current.top {
                break;
            }
            let next = Age {
                top: current.top + 1,
                ..current
            };
            if inner
                .age
                .compare_exchange(
                    current.pack(),
                    next.pack(),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_err()
            {
                break;
            }
            fence(Ordering::SeqCst);
            // SAFETY: as for the first claim.
            dest.push(unsafe { inner.take(current.top) });
            taken += 1;
        }
        // Release: orders the copies above before the owner's reuse of the slots (its
        // Acquire on the compare-and-swap of a reset).
        let mut current = inner.age.load(Ordering::Relaxed);
        while let Err(actual) = inner.age.compare_exchange_weak(
            current,
            current & !BUSY,
            Ordering::Release,
            Ordering::Relaxed,
        ) {
            current = actual;
        }
        Steal::Success(taken)
    }

    /// Tasks in the deque, as far as a racing reader can tell.
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, stealer) = abp::new(4);
    /// worker.push('x', 0).unwrap();
    /// assert_eq!(stealer.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True when the deque seems empty.
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, stealer) = abp::new(4);
    /// assert!(stealer.is_empty());
    /// worker.push('x', 0).unwrap();
    /// assert!(!stealer.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tag of the oldest task, if the deque seems to hold one. A hint: the task may be
    /// gone by the time the caller acts on it.
    ///
    /// ```
    /// # use balancers::deque::abp;
    /// let (worker, stealer) = abp::new(4);
    /// assert_eq!(stealer.oldest_tag(), None);
    /// worker.push("root", 0).unwrap();
    /// worker.push("child", 1).unwrap();
    /// assert_eq!(stealer.oldest_tag(), Some(0));
    /// ```
    pub fn oldest_tag(&self) -> Option<u32> {
        let inner = &*self.inner;
        // Relaxed throughout: a hint for choosing a victim.
        let top = Age::unpack(inner.age.load(Ordering::Relaxed)).top;
        let bot = inner.bot.load(Ordering::Relaxed);
        (top < bot).then(|| inner.tags[top as usize].load(Ordering::Relaxed))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn age_packs_and_unpacks() {
        for age in [
            Age {
                top: 0,
                tag: 0,
                busy: false,
            },
            Age {
                top: u32::MAX,
                tag: TAG_MASK,
                busy: true,
            },
            Age {
                top: 7,
                tag: 12345,
                busy: false,
            },
        ] {
            assert_eq!(Age::unpack(age.pack()), age);
        }
    }

    #[test]
    fn lifo_for_the_owner_fifo_for_thieves_and_overflow() {
        let (w, s) = new(4);
        for i in 0..4 {
            w.push(i, i).unwrap();
        }
        assert_eq!(w.push(9, 0), Err(9), "full");
        assert_eq!(s.oldest_tag(), Some(0));
        let mut loot = Vec::new();
        assert_eq!(s.steal_into(&mut loot, 1), Steal::Success(1));
        assert_eq!(loot, [0]);
        assert_eq!(w.pop(), Some(3));
        assert_eq!(w.pop(), Some(2));
        assert_eq!(w.pop(), Some(1));
        assert_eq!(w.pop(), None);
        // Emptied and reset: the whole capacity is back.
        for i in 0..4 {
            w.push(i, 0).unwrap();
        }
        assert_eq!(w.len(), 4);
    }

    #[test]
    fn dropping_drops_what_is_left() {
        let token = std::sync::Arc::new(());
        let (w, s) = new(8);
        for _ in 0..5 {
            w.push(std::sync::Arc::clone(&token), 0).unwrap();
        }
        let mut loot = Vec::new();
        let _ = s.steal_into(&mut loot, 2);
        drop(w.pop());
        assert_eq!(std::sync::Arc::strong_count(&token), 1 + 2 + 2);
        drop((w, s));
        drop(loot);
        assert_eq!(std::sync::Arc::strong_count(&token), 1);
    }
}
