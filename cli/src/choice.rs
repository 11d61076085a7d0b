//! The library's named settings ([`balancers::Choice`]) as command-line values: listed with
//! their help in `--help`, the reference and the completions, and parsed, with clap's own
//! error for a value that is none of them.

use std::ffi::OsStr;
use std::marker::PhantomData;

use balancers::Choice;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// The value parser of a [`Choice`].
pub(crate) fn choice<C: Choice>() -> ChoiceParser<C> {
    ChoiceParser(PhantomData)
}

/// Parses a [`Choice`] by its keyword.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChoiceParser<C>(PhantomData<C>);

impl<C: Choice> ChoiceParser<C> {
    fn values() -> impl Iterator<Item = PossibleValue> {
        C::every()
            .into_iter()
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
        let keyword = PossibleValuesParser::new(Self::values()).parse_ref(cmd, arg, value)?;
        Ok(C::from_keyword(&keyword).expect("one of the possible values"))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Self::values()))
    }
}
