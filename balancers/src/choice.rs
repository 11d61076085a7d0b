//! Settings chosen by name: each value's keyword, as the command line, the names of runs and
//! the report files spell it, and a line saying what it is, kept beside the type so that a
//! front end lists and parses the values without restating them.
//!
//! ```
//! use balancers::{Choice, DequeKind};
//! assert_eq!(DequeKind::from_keyword("locked"), Some(DequeKind::Locked));
//! assert_eq!(DequeKind::Abp.keyword(), "abp");
//! assert!(DequeKind::ALL.iter().all(|d| !d.about().is_empty()));
//! ```

use std::fmt;

use crate::{Assignment, DequeKind, FirstBatch, Order, StealAmount, VictimPolicy};

/// A setting with a set of named values: fixed ([`ALL`](Self::ALL)), or grown at run time
/// ([`every`](Self::every)).
pub trait Choice: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// Every value known when the program was built, in the order they are listed.
    const ALL: &'static [Self];

    /// Every value: [`ALL`](Self::ALL), and those a choice that grows at run time (the
    /// balancers a program registers beside the built-in ones) has gained since.
    fn every() -> Vec<Self> {
        Self::ALL.to_vec()
    }

    /// The value's name: lowercase, words joined by `-`.
    fn keyword(self) -> &'static str;

    /// What the value is, in a sentence.
    fn about(self) -> &'static str;

    /// The value named `keyword`, if there is one.
    fn from_keyword(keyword: &str) -> Option<Self> {
        Self::every().into_iter().find(|c| c.keyword() == keyword)
    }
}

/// Implements [`Choice`] for a field-less enum: `choices!(Type { Variant => "keyword",
/// "what it is"; … })`, the variants in the order they are listed.
///
/// ```
/// use balancers::{Choice, choices};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// enum Shading {
///     Flat,
///     Smooth,
/// }
/// choices!(Shading {
///     Flat => "flat", "One normal per triangle.";
///     Smooth => "smooth", "Normals interpolated across each triangle.";
/// });
///
/// assert_eq!(Shading::ALL, &[Shading::Flat, Shading::Smooth]);
/// assert_eq!(Shading::from_keyword("smooth"), Some(Shading::Smooth));
/// assert_eq!(Shading::Flat.keyword(), "flat");
/// ```
#[macro_export]
macro_rules! choices {
    ($ty:ty { $($variant:ident => $keyword:literal, $about:literal;)+ }) => {
        impl $crate::Choice for $ty {
            const ALL: &'static [Self] = &[$(Self::$variant),+];

            fn keyword(self) -> &'static str {
                match self {
                    $(Self::$variant => $keyword),+
                }
            }

            fn about(self) -> &'static str {
                match self {
                    $(Self::$variant => $about),+
                }
            }
        }
    };
}

choices!(Assignment {
    Interleaved => "interleaved", "Tile i to worker i mod p.";
    Blocked => "blocked", "Each worker a contiguous band of tiles.";
});

choices!(DequeKind {
    Abp => "abp", "Non-blocking (Arora, Blumofe, Plaxton): compare-and-swap on a packed index and tag.";
    Locked => "locked", "Blocking: a spin lock; thieves try it once.";
});

choices!(VictimPolicy {
    Random => "random", "A random other worker each time.";
    Sample => "sample", "Look at about √p workers, steal from the one with the shallowest oldest task (Wool).";
    Set => "set", "Wool's victim sets: walk a private permutation, as far as the number of thieves needs.";
});

choices!(StealAmount {
    One => "one", "The oldest task.";
    Half => "half", "Half of the victim's tasks, oldest first.";
});

choices!(FirstBatch {
    Own => "own", "Its own pool, dealt before the run: as many tiles as all CPU threads'; later batches sized by the speed the first showed (for a GPU about as fast as the CPU's threads, or of unknown speed).";
    All => "all", "Every tile waiting when it starts: nearly the whole frame in one launch, the CPU's threads keeping the tiles they began (for a GPU many times faster than the CPU's threads, where a launch beyond the first costs more than they add).";
});

choices!(Order {
    DepthFirst => "depth-first", "The newest: each ray's reflections and refractions to their end before the next ray (a LIFO; few tasks wait at once).";
    BreadthFirst => "breadth-first", "The oldest: every tile of the worker's share, then their rays generation by generation (a FIFO; a whole generation waits at once).";
});

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<C: Choice>() {
        for &c in C::ALL {
            assert_eq!(C::from_keyword(c.keyword()), Some(c));
            assert!(
                !c.keyword()
                    .contains(|ch: char| ch.is_uppercase() || ch == ' ')
            );
        }
        assert_eq!(C::from_keyword("no such value"), None);
    }

    #[test]
    fn every_keyword_names_its_value() {
        round_trips::<Assignment>();
        round_trips::<DequeKind>();
        round_trips::<VictimPolicy>();
        round_trips::<StealAmount>();
        round_trips::<Order>();
    }
}
