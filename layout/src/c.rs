//! How the Rust definitions describe themselves to the header's generator: the C spelling of
//! each type, and the fields, values and documentation the macros record.

use crate::{Ptr, PtrMut};

/// A type with a name in C: a scalar, `rl_vec3`, or a shared struct.
pub(crate) trait CName {
    /// The name in the header.
    const C_NAME: &'static str;
}

/// A type a shared struct's field can have: it says how C declares a field of it.
pub(crate) trait CType {
    /// The C declaration of a field called `field` of this type, e.g. `float near_skip[4]`.
    fn declare(field: &str) -> String;
}

/// Scalars and `glam::Vec3` by their names in the header.
macro_rules! named {
    ($($rust:ty => $c:literal),* $(,)?) => {$(
        impl CName for $rust {
            const C_NAME: &'static str = $c;
        }
        impl CType for $rust {
            fn declare(field: &str) -> String {
                format!("{} {field}", $c)
            }
        }
    )*};
}

named! {
    f32 => "float",
    i32 => "int",
    u8 => "rl_u8",
    u32 => "rl_u32",
    u64 => "rl_u64",
    glam::Vec3 => "rl_vec3",
}

/// An array field: C writes the lengths after the name, outermost first.
impl<T: CType, const N: usize> CType for [T; N] {
    fn declare(field: &str) -> String {
        T::declare(&format!("{field}[{N}]"))
    }
}

impl<T: CName> CType for Ptr<T> {
    fn declare(field: &str) -> String {
        format!("const {}* {field}", T::C_NAME)
    }
}

impl<T: CName> CType for PtrMut<T> {
    fn declare(field: &str) -> String {
        format!("{}* {field}", T::C_NAME)
    }
}

/// One field of a shared struct, as [`shared_struct!`] records it.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    /// Its C declaration, without the semicolon.
    pub(crate) declaration: String,
    /// Its name (the same in Rust and C).
    pub(crate) name: &'static str,
    /// Its offset in bytes (Rust's, asserted equal to the definition's).
    pub(crate) offset: usize,
    /// Its type's alignment.
    pub(crate) align: usize,
    /// Its documentation, one entry per line.
    pub(crate) doc: &'static [&'static str],
}

/// A struct defined by [`shared_struct!`].
pub(crate) trait CStruct: CName + Sized {
    /// The path in Rust.
    const RUST_NAME: &'static str;
    /// The documentation, one entry per line.
    const DOC: &'static [&'static str];
    /// The fields, in order.
    fn fields() -> Vec<Field>;
}

/// How a value is written in C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Literal {
    /// A plain literal, of type `int`: for counts and indices that the kernels mix with `int`
    /// arithmetic.
    Int,
    /// With the `u` suffix, of type `unsigned int`: for codes and bits.
    Unsigned,
}

impl Literal {
    /// `value` as this kind of literal.
    ///
    /// # Panics
    /// When `value` does not fit in the C type (a definition to fix, caught by the header
    /// check).
    pub(crate) fn write(self, value: u64) -> String {
        match self {
            Literal::Int => {
                assert!(i32::try_from(value).is_ok(), "{value} is not an int");
                format!("{value}")
            }
            Literal::Unsigned => {
                assert!(
                    u32::try_from(value).is_ok(),
                    "{value} is not an unsigned int"
                );
                format!("{value}u")
            }
        }
    }
}

/// One value of a shared enum.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Variant {
    /// The variant's name in Rust (upper camel case).
    pub(crate) name: &'static str,
    /// Its value.
    pub(crate) value: u32,
    /// Its documentation, one entry per line.
    pub(crate) doc: &'static [&'static str],
}

/// An enum defined by [`shared_enum!`].
pub(crate) trait CEnum {
    /// The path in Rust.
    const RUST_NAME: &'static str;
    /// The prefix of its `#define`s.
    const PREFIX: &'static str;
    /// How its values are written.
    const LITERAL: Literal;
    /// The documentation, one entry per line.
    const DOC: &'static [&'static str];
    /// Its values.
    const VARIANTS: &'static [Variant];
}

/// A constant defined by [`shared_constants!`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Constant {
    /// Its name in Rust; `RL_` and this in C.
    pub(crate) name: &'static str,
    /// Its value.
    pub(crate) value: u64,
    /// How it is written.
    pub(crate) literal: Literal,
    /// Its documentation, one entry per line.
    pub(crate) doc: &'static [&'static str],
}
