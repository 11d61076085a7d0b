//! The library's named settings ([`balancers::Choice`]) as command-line values: listed with
//! their help in `--help`, the reference and the completions, and parsed, with clap's own
//! error for a value that is none of them.

use std::ffi::OsStr;

use balancers::Choice;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// The value parser of a [`Choice`].
pub(crate) fn choice<C: Choice>() -> ChoiceParser<C> {
    choice_where(|_| true)
}

/// The value parser of a [`Choice`] that offers only the values `keep` keeps: a command that
/// refuses some values of a setting neither lists nor parses them.
pub(crate) fn choice_where<C: Choice>(keep: fn(C) -> bool) -> ChoiceParser<C> {
    ChoiceParser { keep }
}

/// Parses a [`Choice`] by its keyword.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChoiceParser<C> {
    /// Whether the command takes this value.
    keep: fn(C) -> bool,
}

impl<C: Choice> ChoiceParser<C> {
    fn values(&self) -> impl Iterator<Item = PossibleValue> + '_ {
        C::every()
            .into_iter()
            .filter(|&c| (self.keep)(c))
            .map(|c| PossibleValue::new(c.keyword()).help(c.about()))
    }
}

impl<C: Choice> TypedValueParser for ChoiceParser<C> {
    type Value = C;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<C, clap::Error> {
        // clap's parser of possible values, for its error message (the values, a suggestion).
        let keyword = PossibleValuesParser::new(self.values()).parse_ref(cmd, arg, value)?;
        Ok(C::from_keyword(&keyword).expect("one of the possible values"))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.values()))
    }
}
