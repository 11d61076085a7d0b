//! Validated values of the scene format. Each rejects bad input while it is parsed, so the
//! parser reports the error at the value's own line and column.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

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

checked_number!(
    /// A finite number.
    Finite(f32) from "f32", |v| v.is_finite(), "a finite number"
);
checked_number!(
    /// A finite number greater than zero.
    Positive(f32) from "f32", |v| v.is_finite() && v > 0.0, "a finite number greater than 0"
);
checked_number!(
    /// A finite number of at least zero.
    NonNegative(f32) from "f32", |v| v.is_finite() && v >= 0.0, "a finite number of at least 0"
);
checked_number!(
    /// An image width or height: 1 to 16384 pixels.
    ImageSide(u32) from "u32", |v| (1..=16384).contains(&v), "between 1 and 16384"
);
checked_number!(
    /// The deepest generation of secondary rays: 0 to 64.
    MaxDepth(u32) from "u32", |v| v <= 64, "between 0 and 64"
);
checked_number!(
    /// A vertical field of view in degrees, strictly between 0 and 180.
    FieldOfView(f32) from "f32", |v| v > 0.0 && v < 180.0, "strictly between 0 and 180 degrees"
);
checked_number!(
    /// A Phong exponent: a whole number from 0 to 10000 (whole, so that the highlight is
    /// computed by multiplication alone, the same on every device).
    Shininess(u32) from "u32", |v| v <= 10_000, "a whole number between 0 and 10000"
);
checked_number!(
    /// An index of refraction: a finite number from 0.1 to 10.
    Ior(f32) from "f32", |v| (0.1..=10.0).contains(&v), "between 0.1 and 10"
);

/// A finite 3-vector.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "[f32; 3]")]
pub(crate) struct Vector(pub(crate) [f32; 3]);

impl TryFrom<[f32; 3]> for Vector {
    type Error = String;
    fn try_from(v: [f32; 3]) -> Result<Self, String> {
        if v.iter().all(|c| c.is_finite()) {
            Ok(Self(v))
        } else {
            Err(format!(
                "coordinates must be finite numbers, got [{}, {}, {}]",
                v[0], v[1], v[2]
            ))
        }
    }
}

/// An RGB colour or coefficient: `[r, g, b]`, or one number for a grey. Finite, at least 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rgb(pub(crate) [f32; 3]);

impl<'de> Deserialize<'de> for Rgb {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RgbVisitor;

        fn check<E: de::Error>(v: [f64; 3]) -> Result<Rgb, E> {
            if v.iter().all(|c| c.is_finite() && *c >= 0.0) {
                Ok(Rgb(v.map(|c| c as f32)))
            } else {
                Err(E::custom(format!(
                    "colour components must be finite and at least 0, got [{}, {}, {}]",
                    v[0], v[1], v[2]
                )))
            }
        }

        impl<'de> Visitor<'de> for RgbVisitor {
            type Value = Rgb;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or an array [r, g, b]")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Rgb, E> {
                check([v; 3])
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rgb, E> {
                check([v as f64; 3])
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rgb, E> {
                check([v as f64; 3])
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Rgb, A::Error> {
                let mut v = [0.0; 3];
                for (i, c) in v.iter_mut().enumerate() {
                    *c = seq
                        .next_element()?
                        .ok_or_else(|| de::Error::invalid_length(i, &self))?;
                }
                if seq.next_element::<f64>()?.is_some() {
                    return Err(de::Error::invalid_length(4, &self));
                }
                check(v)
            }
        }

        deserializer.deserialize_any(RgbVisitor)
    }
}

/// A scale: one number for all axes, or `[x, y, z]`. Finite and non-zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scale(pub(crate) [f32; 3]);

impl<'de> Deserialize<'de> for Scale {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Uniform(f32),
            Axes([f32; 3]),
        }
        let v = match Raw::deserialize(deserializer)
            .map_err(|_| de::Error::custom("expected a number or an array [x, y, z]"))?
        {
            Raw::Uniform(s) => [s; 3],
            Raw::Axes(a) => a,
        };
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
