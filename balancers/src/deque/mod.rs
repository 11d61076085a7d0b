//! Work-stealing deques of fixed capacity: the owner pushes and pops at one end, thieves take
//! the oldest tasks from the other. Two kinds, with the same small API:
//!
//! - [`abp`]: non-blocking, after Arora, Blumofe and Plaxton: the owner's push and pop use no
//!   read-modify-write while more than one task is left; thieves and the owner's last-task
//!   race use one compare-and-swap on a packed index/tag word.
//! - [`locked`]: blocking: a ring buffer under a spin lock; the owner waits for the lock, a
//!   thief tries it once and fails fast.
//!
//! Each is split into a [`Worker`](abp::Worker) handle, held by the one thread that owns the
//! deque (`Send`, not `Sync`), and cloneable [`Stealer`](abp::Stealer) handles for everyone
//! else. Every task carries a small *tag* (the balancer stores the task's depth in the spawn
//! tree) that thieves may read without taking the task, to choose a victim.
//!
//! See README.md beside this file for the algorithms, their invariants and the papers.
//!
//! ```
//! use balancers::deque::{abp, Steal};
//!
//! let (worker, stealer) = abp::new::<u32>(64);
//! worker.push(1, 0).unwrap();
//! worker.push(2, 1).unwrap();
//! assert_eq!(worker.pop(), Some(2)); // the owner takes the newest
//! let mut loot = Vec::new();
//! assert_eq!(stealer.steal_into(&mut loot, 1), Steal::Success(1)); // a thief the oldest
//! assert_eq!(loot, [1]);
//! assert_eq!(stealer.steal_into(&mut loot, 1), Steal::Empty);
//! ```

pub mod abp;
pub mod locked;

/// The outcome of a steal attempt. `#[must_use]`: a `Retry` ignored is work lost to a thief
/// that gave up too early.
///
/// ```
/// use balancers::deque::{locked, Steal};
///
/// let (worker, stealer) = locked::new(4);
/// let mut loot = Vec::new();
/// assert_eq!(stealer.steal_into(&mut loot, 1), Steal::Empty);
/// worker.push(1, 0).unwrap();
/// assert_eq!(stealer.steal_into(&mut loot, 1), Steal::Success(1));
/// ```
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steal<T> {
    /// The deque held nothing to take.
    Empty,
    /// Took this (for batch steals: this many tasks).
    Success(T),
    /// Lost a race (to the owner or another thief, or the lock was held); the deque may
    /// still hold tasks.
    Retry,
}

impl<T> Steal<T> {
    /// True for [`Steal::Success`].
    ///
    /// ```
    /// use balancers::deque::Steal;
    ///
    /// assert!(Steal::Success(3).is_success());
    /// assert!(!Steal::<usize>::Retry.is_success());
    /// assert!(!Steal::<usize>::Empty.is_success());
    /// ```
    pub fn is_success(&self) -> bool {
        matches!(self, Steal::Success(_))
    }
}

/// `len` elements made by `make`, in a slice allocated fallibly: the `try_new` of each deque
/// reports memory that runs out instead of aborting.
pub(crate) fn try_boxed<E>(
    len: usize,
    make: impl FnMut() -> E,
) -> Result<Box<[E]>, std::collections::TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)?;
    v.extend(std::iter::repeat_with(make).take(len));
    Ok(v.into_boxed_slice())
}

/// How many tasks a batch steal takes of the `available` it saw: half, rounded up, at most
/// `max`. Taking half leaves the victim as much as the thief gets, so neither has to come
/// back soon (tokio's and Cilk's rule).
pub(crate) fn half(available: u32, max: usize) -> u32 {
    let half = available - available / 2;
    half.min(u32::try_from(max).unwrap_or(u32::MAX))
}

/// The operations the `stealing` balancer needs of a deque kind, so that it is written once
/// for both (and compiled for each).
pub(crate) trait Family {
    type Worker<T: Send>: Send;
    type Stealer<T: Send>: Clone + Send + Sync;
    fn new<T: Send>(capacity: usize) -> (Self::Worker<T>, Self::Stealer<T>);
    fn push<T: Send>(worker: &Self::Worker<T>, task: T, tag: u32) -> Result<(), T>;
    fn pop<T: Send>(worker: &Self::Worker<T>) -> Option<T>;
    fn len<T: Send>(worker: &Self::Worker<T>) -> usize;
    fn steal_into<T: Send>(
        stealer: &Self::Stealer<T>,
        dest: &mut Vec<T>,
        max: usize,
    ) -> Steal<usize>;
    fn stealer_len<T: Send>(stealer: &Self::Stealer<T>) -> usize;
    fn oldest_tag<T: Send>(stealer: &Self::Stealer<T>) -> Option<u32>;
}

/// The [`abp`] deque as a [`Family`].
#[derive(Debug)]
pub(crate) struct Abp;

/// The [`locked`] deque as a [`Family`].
#[derive(Debug)]
pub(crate) struct Locked;

macro_rules! family {
    ($family:ident, $module:ident) => {
        impl Family for $family {
            type Worker<T: Send> = $module::Worker<T>;
            type Stealer<T: Send> = $module::Stealer<T>;
            fn new<T: Send>(capacity: usize) -> (Self::Worker<T>, Self::Stealer<T>) {
                $module::new(capacity)
            }
            #[inline]
            fn push<T: Send>(worker: &Self::Worker<T>, task: T, tag: u32) -> Result<(), T> {
                worker.push(task, tag)
            }
            #[inline]
            fn pop<T: Send>(worker: &Self::Worker<T>) -> Option<T> {
                worker.pop()
            }
            #[inline]
            fn len<T: Send>(worker: &Self::Worker<T>) -> usize {
                worker.len()
            }
            fn steal_into<T: Send>(
                stealer: &Self::Stealer<T>,
                dest: &mut Vec<T>,
                max: usize,
            ) -> Steal<usize> {
                stealer.steal_into(dest, max)
            }
            fn stealer_len<T: Send>(stealer: &Self::Stealer<T>) -> usize {
                stealer.len()
            }
            fn oldest_tag<T: Send>(stealer: &Self::Stealer<T>) -> Option<u32> {
                stealer.oldest_tag()
            }
        }
    };
}

family!(Abp, abp);
family!(Locked, locked);
