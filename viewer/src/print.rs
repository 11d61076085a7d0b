//! What the viewer says: its lines (each frame's figures, the screenshots it wrote, the keys,
//! a camera asked for with P) through the caller's [`Lines`], and notes on standard error.

use std::fmt;
use std::io::{self, Write};

use anyhow::Result;

/// Where the viewer's lines go. The caller decides what a failure means (raylb's command line
/// ends quietly, with a shell's code for SIGPIPE, when the reader of its standard output went
/// away) and says it in the error it returns.
pub trait Lines {
    /// Writes `line` and a newline. An error ends the session and comes back from
    /// [`crate::run`] as it was returned; only the line after an interactive frame is, like
    /// any failed frame, reported on standard error while the window goes on.
    fn line(&mut self, line: fmt::Arguments<'_>) -> Result<()>;
}

/// Writes `line` and a newline to standard error, ignoring failure: there is nowhere left to
/// say so. Formatted first and written at once, so that another program reading the same
/// pipe never finds its own text in the middle of the line.
pub(crate) fn note(line: fmt::Arguments<'_>) {
    let line = format!("{line}\n");
    let _ = io::stderr().lock().write_all(line.as_bytes());
}
