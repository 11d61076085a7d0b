//! Validated values of the scene format. Each rejects bad input while it is parsed, so the
//! parser reports the error at the value's own line and column.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

/// Defines a newtype over an `f32`, read as the `f64` a TOML float is and checked by `$check`
/// once narrowed, so that a finite number beyond `f32`'s range is reported as written, not as
/// the infinity it narrows to.
macro_rules! checked_float {
    ($(#[$doc:meta])* $name:ident, |$v:ident| $check:expr, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Deserialize)]
        #[serde(try_from = "f64")]
        pub(crate) struct $name(pub(crate) f32);

        impl TryFrom<f64> for $name {
            type Error = String;
            fn try_from(written: f64) -> Result<Self, String> {
                let $v = written as f32;
                if $check {
                    Ok(Self($v))
                } else if written.is_finite() && !$v.is_finite() {
                    Err(format!(
                        concat!("must be ", $what, ", got {:e}, beyond a 32-bit float's range"),
                        written
                    ))
                } else {
                    Err(format!(concat!("must be ", $what, ", got {}"), $v))
                }
            }
        }
    };
}

/// Defines a newtype over a number, parsed through `$raw` and checked by `$check`.
macro_rules! checked_number {
    ($(#[$doc:meta])* $name:ident($ty:ty) from $raw:literal, |$v:ident| $check:expr, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Deserialize)]
        #[serde(try_from = $raw)]
        pub(crate) struct $name(pub(crate) $ty);

        impl TryFrom<$ty> for $name {
            type Error = String;
            fn try_from($v: $ty) -> Result<Self, String> {
                if $check { Ok(Self($v)) } else { Err(format!(concat!("must be ", $what, ", got {}"), $v)) }
            }
        }
    };
}

checked_float!(
    /// A finite number.
    Finite, |v| v.is_finite(), "a finite number"
);
checked_float!(
    /// A finite number greater than zero.
    Positive, |v| v.is_finite() && v > 0.0, "a finite number greater than 0"
);
checked_float!(
    /// A finite number of at least zero.
    NonNegative, |v| v.is_finite() && v >= 0.0, "a finite number of at least 0"
);
checked_float!(
    /// The weight below which secondary rays are not spawned: 0.0001 to 1. Not 0: with
    /// materials that return at most all the light they receive, the rays of one generation
    /// carry at most weight 1 together, so a cutoff `c` bounds each generation to `1 / c`
    /// rays per pixel; without one, a pair of mirrors makes 2^depth.
    WeightCutoff, |v| (0.0001..=1.0).contains(&v), "between 0.0001 and 1"
);
checked_number!(
    /// An image width or height: 1 to 16384 pixels.
    ImageSide(u32) from "u32", |v| (1..=16384).contains(&v), "between 1 and 16384"
);
checked_number!(
    /// The deepest generation of secondary rays: 0 to 64.
    MaxDepth(u32) from "u32", |v| v <= 64, "between 0 and 64"
);
checked_float!(
    /// A vertical field of view in degrees, strictly between 0 and 180.
    FieldOfView, |v| v > 0.0 && v < 180.0, "strictly between 0 and 180 degrees"
);
checked_number!(
    /// A Phong exponent: a whole number from 0 to 10000 (whole, so that the highlight is
    /// computed by multiplication alone, the same on every device).
    Shininess(u32) from "u32", |v| v <= 10_000, "a whole number between 0 and 10000"
);
checked_float!(
    /// An index of refraction: a finite number from 0.1 to 10.
    Ior, |v| (0.1..=10.0).contains(&v), "between 0.1 and 10"
);

/// An array of exactly `N` values. serde's own fixed-size arrays let a TOML array carry
/// extra elements unnoticed; this rejects them, and too few, with the array's place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Exactly<T, const N: usize>(pub(crate) [T; N]);

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Exactly<T, N> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ArrayVisitor<T, const N: usize>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for ArrayVisitor<T, N> {
            type Value = Exactly<T, N>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of {N} elements")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(N);
                while items.len() < N {
                    match seq.next_element()? {
                        Some(item) => items.push(item),
                        None => return Err(de::Error::invalid_length(items.len(), &self)),
                    }
                }
                let mut length = N;
                while seq.next_element::<de::IgnoredAny>()?.is_some() {
                    length += 1;
                }
                if length != N {
                    return Err(de::Error::invalid_length(length, &self));
                }
                match items.try_into() {
                    Ok(array) => Ok(Exactly(array)),
                    Err(_) => Err(de::Error::invalid_length(length, &self)),
                }
            }
        }

        deserializer.deserialize_seq(ArrayVisitor(PhantomData))
    }
}

/// A finite 3-vector, read as the `f64`s a TOML array holds and narrowed to `f32`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "Exactly<f64, 3>")]
pub(crate) struct Vector(pub(crate) [f32; 3]);

impl TryFrom<Exactly<f64, 3>> for Vector {
    type Error = String;
    fn try_from(Exactly(written): Exactly<f64, 3>) -> Result<Self, String> {
        let v = written.map(|c| c as f32);
        if v.iter().all(|c| c.is_finite()) {
            return Ok(Self(v));
        }
        // As written: a finite number past `f32`'s range is not the infinity it narrows to.
        let shown = |k: usize| match (written[k].is_finite(), v[k].is_finite()) {
            (true, false) => format!("{:e}", written[k]),
            _ => v[k].to_string(),
        };
        let beyond = written
            .iter()
            .zip(&v)
            .any(|(w, n)| w.is_finite() && !n.is_finite());
        Err(format!(
            "coordinates must be finite numbers{}, got [{}, {}, {}]",
            if beyond {
                " within a 32-bit float's range"
            } else {
                ""
            },
            shown(0),
            shown(1),
            shown(2)
        ))
    }
}

/// One number, standing for three equal ones, or an array of exactly three.
struct Triple([f64; 3]);

impl<'de> Deserialize<'de> for Triple {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TripleVisitor;

        impl<'de> Visitor<'de> for TripleVisitor {
            type Value = Triple;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or an array of 3 numbers")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Triple, E> {
                Ok(Triple([v; 3]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Triple, E> {
                Ok(Triple([v as f64; 3]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Triple, E> {
                Ok(Triple([v as f64; 3]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Triple, A::Error> {
                let Exactly(v) =
                    Exactly::<f64, 3>::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                Ok(Triple(v))
            }
        }

        deserializer.deserialize_any(TripleVisitor)
    }
}

/// An RGB colour or coefficient: `[r, g, b]`, or one number for a grey. Finite, at least 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rgb(pub(crate) [f32; 3]);

impl<'de> Deserialize<'de> for Rgb {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Triple(v) = Triple::deserialize(deserializer)?;
        if v.iter()
            .all(|c| c.is_finite() && *c >= 0.0 && *c <= f64::from(f32::MAX))
        {
            Ok(Rgb(v.map(|c| c as f32)))
        } else {
            Err(de::Error::custom(format!(
                "colour components must be finite and at least 0, got [{}, {}, {}]",
                v[0], v[1], v[2]
            )))
        }
    }
}

/// A scale: one number for all axes, or `[x, y, z]`. Finite and non-zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scale(pub(crate) [f32; 3]);

impl<'de> Deserialize<'de> for Scale {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Triple(v) = Triple::deserialize(deserializer)?;
        let v = v.map(|c| c as f32);
        if v.iter().all(|c| c.is_finite() && *c != 0.0) {
            Ok(Self(v))
        } else {
            Err(de::Error::custom(format!(
                "scale factors must be finite and non-zero, got [{}, {}, {}]",
                v[0], v[1], v[2]
            )))
        }
    }
}

/// A whole number within `MIN..=MAX`, for counts and resolutions whose absurd values would
/// exhaust memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounded<const MIN: u32, const MAX: u32>(pub(crate) u32);

impl<'de, const MIN: u32, const MAX: u32> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(deserializer)?;
        if (i64::from(MIN)..=i64::from(MAX)).contains(&v) {
            Ok(Self(v as u32))
        } else {
            Err(de::Error::custom(format!(
                "must be a whole number between {MIN} and {MAX}, got {v}"
            )))
        }
    }
}
