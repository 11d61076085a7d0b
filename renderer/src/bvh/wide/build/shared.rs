//! An array lent to the tasks of one balancer run, each of which takes parts of it that no other
//! task touches while it runs: the build's records, then the wide tree's nodes, packs and
//! triangles, each written in place by the task that owns that part.

use std::marker::PhantomData;
use std::ops::Range;

/// A `&mut [T]` whose disjoint parts are handed to tasks on other threads.
pub(super) struct Shared<'a, T> {
    start: *mut T,
    len: usize,
    slice: PhantomData<&'a mut [T]>,
}

// SAFETY: a `Shared` stands for the `&mut [T]` it was made from, which may be sent to another
// thread when `T: Send`.
unsafe impl<T: Send> Send for Shared<'_, T> {}
// SAFETY: sharing it hands out `&mut` parts to other threads (hence `T: Send`), and only through
// `part`, whose callers guarantee that no two parts in use at once overlap, as with disjoint
// halves of one `&mut` slice.
unsafe impl<T: Send> Sync for Shared<'_, T> {}

impl<'a, T> Shared<'a, T> {
    /// Lends `slice` out for as long as the `Shared` lives.
    pub(super) fn new(slice: &'a mut [T]) -> Self {
        Self {
            start: slice.as_mut_ptr(),
            len: slice.len(),
            slice: PhantomData,
        }
    }

    /// Lends out the `len` elements from `start`, for as long as the caller says.
    ///
    /// # Safety
    /// Those elements must be one allocation's, initialised, and stay where they are, neither
    /// freed nor used otherwise than through this `Shared`, for all of `'a`.
    pub(super) unsafe fn from_raw_parts(start: *mut T, len: usize) -> Self {
        Self {
            start,
            len,
            slice: PhantomData,
        }
    }

    /// The elements `range`.
    ///
    /// # Panics
    /// When `range` is not within the slice.
    ///
    /// # Safety
    /// No other reference to any element of `range` may be in use while the part lives.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn part(&self, range: Range<usize>) -> &mut [T] {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "part {range:?} of {} elements",
            self.len
        );
        // SAFETY: within the slice (checked), which lives for 'a; not aliased (the caller's
        // guarantee).
        unsafe { std::slice::from_raw_parts_mut(self.start.add(range.start), range.len()) }
    }
}
