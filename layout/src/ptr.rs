//! Addresses in the kernels' parameter structs.

use std::fmt;
use std::marker::PhantomData;

/// The address of an array of `T` that the kernels only read: `const T*` in C.
///
/// An address in the device's memory, or, where the host build of the kernels' math runs the
/// same code, in the host's. Only a number on the Rust side, which never reads through it;
/// the type says what the address must hold, so that a buffer cannot be handed to the wrong
/// field.
#[repr(transparent)]
pub struct Ptr<T> {
    address: u64,
    /// `fn() -> T`: neither owns a `T` nor limits `Send` or `Sync`.
    _to: PhantomData<fn() -> T>,
}

/// The address of an array of `T` that the kernels write: `T*` in C. See [`Ptr`].
#[repr(transparent)]
pub struct PtrMut<T> {
    address: u64,
    _to: PhantomData<fn() -> T>,
}

/// The address and type of both kinds, written once.
macro_rules! address {
    ($name:ident) => {
        impl<T> $name<T> {
            /// The null address: an array the kernels are told is absent.
            pub const NULL: Self = Self::new(0);

            /// The array at `address`.
            pub const fn new(address: u64) -> Self {
                Self {
                    address,
                    _to: PhantomData,
                }
            }

            /// The address.
            pub const fn address(self) -> u64 {
                self.address
            }
        }

        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for $name<T> {}

        impl<T> PartialEq for $name<T> {
            fn eq(&self, other: &Self) -> bool {
                self.address == other.address
            }
        }

        impl<T> Eq for $name<T> {}

        impl<T> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:#x})", stringify!($name), self.address)
            }
        }

        // SAFETY: `#[repr(transparent)]` over a `u64` (the marker is a zero-sized type): every
        // bit pattern is a valid value, and all zeros is the null address.
        unsafe impl<T> bytemuck::Zeroable for $name<T> {}
        // SAFETY: as above; no padding, no pointer Rust dereferences, `Copy` for every `T`,
        // and `'static` wherever `T` is.
        unsafe impl<T: 'static> bytemuck::Pod for $name<T> {}
    };
}

address!(Ptr);
address!(PtrMut);

impl<T> Ptr<T> {
    /// The address of `slice` in the host's memory, for the host build of the kernels' math.
    pub fn host(slice: &[T]) -> Self {
        Self::new(slice.as_ptr() as u64)
    }
}

impl<T> PtrMut<T> {
    /// The address of `slice` in the host's memory, for the host build of the kernels' math.
    pub fn host(slice: &mut [T]) -> Self {
        Self::new(slice.as_mut_ptr() as u64)
    }
}
