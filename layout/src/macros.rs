//! The macros that define what the kernels share with the host: each writes the Rust
//! definition and, beside it, the description the CUDA header is generated from (C name,
//! fields, offsets, documentation), so that the two cannot be written apart.

/// A `#[repr(C)]` struct shared with the kernels.
///
/// ```text
/// shared_struct! {
///     /// Documentation (copied into the header).
///     #[c(rl_name, size = 32)]
///     #[derive(...)]
///     #[repr(C)]
///     pub struct Name {
///         /// Documentation.
///         #[offset(0)]
///         pub field: Type,
///     }
/// }
/// ```
///
/// The size and every offset written in the definition are asserted at compile time, so a
/// change of layout is a change of the definition's text, never a side effect; the header
/// asserts the same numbers on the C side.
///
/// Documentation before `#[c(...)]` is copied into the header; documentation after it (the
/// struct's examples, as `#[doc]` attributes among the others) reaches rustdoc alone.
macro_rules! shared_struct {
    (
        $(#[doc = $doc:literal])*
        #[c($c_name:ident, size = $size:literal)]
        $(#[$attr:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $field_doc:literal])*
                #[offset($offset:literal)]
                pub $field:ident: $ty:ty,
            )*
        }
    ) => {
        $(#[doc = $doc])*
        $(#[$attr])*
        pub struct $name {
            $(
                $(#[doc = $field_doc])*
                pub $field: $ty,
            )*
        }

        const _: () = {
            assert!(
                ::core::mem::size_of::<$name>() == $size,
                concat!(stringify!($name), " must be ", stringify!($size), " bytes")
            );
            $(
                assert!(
                    ::core::mem::offset_of!($name, $field) == $offset,
                    concat!(
                        stringify!($name), ".", stringify!($field),
                        " must be at byte ", stringify!($offset)
                    )
                );
            )*
        };

        impl $crate::c::CName for $name {
            const C_NAME: &'static str = stringify!($c_name);
        }

        impl $crate::c::CType for $name {
            fn declare(field: &str) -> ::std::string::String {
                format!("{} {field}", stringify!($c_name))
            }
        }

        impl $crate::c::CStruct for $name {
            const RUST_NAME: &'static str = concat!(module_path!(), "::", stringify!($name));
            const DOC: &'static [&'static str] = &[$($doc),*];
            fn fields() -> ::std::vec::Vec<$crate::c::Field> {
                ::std::vec![$(
                    $crate::c::Field {
                        declaration: <$ty as $crate::c::CType>::declare(stringify!($field)),
                        name: stringify!($field),
                        offset: ::core::mem::offset_of!($name, $field),
                        align: ::core::mem::align_of::<$ty>(),
                        doc: &[$($field_doc),*],
                    }
                ),*]
            }
        }
    };
}

/// A `#[repr(u32)]` enum whose values the kernels use, each written to the header as
/// `#define PREFIX_VARIANT value` (the variant's name in upper snake case), as a plain `int`
/// or an `unsigned` literal.
///
/// ```text
/// shared_enum! {
///     /// Documentation.
///     #[c(RL_PREFIX, Int)]
///     #[derive(...)]
///     pub enum Name {
///         /// Documentation.
///         Variant = 0,
///     }
/// }
/// ```
///
/// As with [`shared_struct!`], documentation before `#[c(...)]` goes into the header, and
/// documentation after it (the enum's examples) to rustdoc alone.
macro_rules! shared_enum {
    (
        $(#[doc = $doc:literal])*
        #[c($prefix:ident, $literal:ident)]
        $(#[$attr:meta])*
        pub enum $name:ident {
            $(
                $(#[doc = $variant_doc:literal])*
                $variant:ident = $value:literal,
            )*
        }
    ) => {
        $(#[doc = $doc])*
        $(#[$attr])*
        #[repr(u32)]
        pub enum $name {
            $(
                $(#[doc = $variant_doc])*
                $variant = $value,
            )*
        }

        impl $name {
            /// Every value, in the order of the definition.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];
        }

        impl $crate::c::CEnum for $name {
            const RUST_NAME: &'static str = concat!(module_path!(), "::", stringify!($name));
            const PREFIX: &'static str = stringify!($prefix);
            const LITERAL: $crate::c::Literal = $crate::c::Literal::$literal;
            const DOC: &'static [&'static str] = &[$($doc),*];
            const VARIANTS: &'static [$crate::c::Variant] = &[$(
                $crate::c::Variant {
                    name: stringify!($variant),
                    value: $value,
                    doc: &[$($variant_doc),*],
                }
            ),*];
        }
    };
}

/// Constants the kernels use, each written to the header as `#define RL_NAME value`, as a
/// plain `int` or an `unsigned` literal; `$list` names the list the generator reads.
///
/// ```text
/// shared_constants! {
///     LIST_NAME;
///     /// Documentation.
///     #[c(Unsigned)]
///     pub const NAME: u32 = 5;
/// }
/// ```
macro_rules! shared_constants {
    (
        $list:ident;
        $(
            $(#[doc = $doc:literal])*
            #[c($literal:ident)]
            pub const $name:ident: $ty:ty = $value:expr;
        )*
    ) => {
        $(
            $(#[doc = $doc])*
            pub const $name: $ty = $value;
        )*

        /// This module's constants, for the header.
        pub(crate) const $list: &[$crate::c::Constant] = &[$(
            $crate::c::Constant {
                name: stringify!($name),
                value: $name as u64,
                literal: $crate::c::Literal::$literal,
                doc: &[$($doc),*],
            }
        ),*];
    };
}
