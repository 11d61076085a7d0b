//! Standard output and standard error, written without panicking.
//!
//! `println!` panics when standard output is closed (`raylb scenes | head -1`) or full
//! (`> /dev/full`). raylb writes through [`outln!`](crate::outln) and [`out!`](crate::out)
//! instead, which hand the failure back as a [`StdoutError`]: raylb's `main` ends quietly when
//! the reader went away, as other command-line tools do, and reports a full disk in one line. Notes on standard error
//! ([`errln!`](crate::errln)) are dropped if standard error cannot take them: there is nowhere left to say
//! so.

use std::fmt;
use std::io::{self, Write};

/// Writes a line to standard output; on failure, returns a
/// [`StdoutError`](crate::terminal::StdoutError) from the enclosing function (through `?`, so
/// that function returns an `anyhow::Result` or a `Result<_, StdoutError>`).
///
/// ```
/// use experiments::outln;
/// use experiments::terminal::StdoutError;
///
/// fn report(rays: u64) -> Result<(), StdoutError> {
///     outln!("{rays} rays");
///     Ok(())
/// }
/// assert!(report(42).is_ok());
/// ```
#[macro_export]
macro_rules! outln {
    () => {
        $crate::terminal::write_stdout(format_args!("\n"))?
    };
    ($($arg:tt)*) => {
        $crate::terminal::write_stdout(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// [`outln!`] without the newline.
///
/// ```
/// use experiments::out;
///
/// fn progress(done: u32, total: u32) -> anyhow::Result<()> {
///     out!("{done}/{total} ");
///     out!("done\n");
///     Ok(())
/// }
/// assert!(progress(3, 3).is_ok());
/// ```
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::terminal::write_stdout(format_args!($($arg)*))?
    };
}

/// Writes a line to standard error, ignoring failure.
///
/// ```
/// use experiments::errln;
///
/// // Nothing comes back to handle, even where standard error is closed.
/// let nothing: () = errln!("{} scenes skipped", 2);
/// assert_eq!(nothing, ());
/// ```
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::terminal::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// [`outln!`] unless `quiet`.
///
/// ```
/// use experiments::say;
///
/// fn summary(quiet: bool) -> anyhow::Result<()> {
///     say!(quiet, "best of {} renders", 3);
///     Ok(())
/// }
/// assert!(summary(true).is_ok() && summary(false).is_ok());
/// ```
#[macro_export]
macro_rules! say {
    ($quiet:expr, $($arg:tt)*) => {
        if !$quiet {
            $crate::outln!($($arg)*);
        }
    };
}

/// Standard output could not be written.
///
/// ```
/// use std::io;
/// use experiments::terminal::StdoutError;
///
/// let full = StdoutError(io::Error::other("no space left on device"));
/// assert!(full.to_string().starts_with("cannot write to standard output: "));
/// assert!(!full.reader_gone());
/// ```
#[derive(Debug)]
pub struct StdoutError(pub io::Error);

impl StdoutError {
    /// The reader went away (a closed pipe): not worth a message.
    ///
    /// ```
    /// # use std::io;
    /// # use experiments::terminal::StdoutError;
    /// let closed = StdoutError(io::Error::from(io::ErrorKind::BrokenPipe));
    /// assert!(closed.reader_gone());
    /// ```
    pub fn reader_gone(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write to standard output: {}",
            renderer::file_errors::io_reason(&self.0)
        )
    }
}

impl std::error::Error for StdoutError {}

/// What [`outln!`](crate::outln) and [`out!`](crate::out) call.
///
/// ```
/// use experiments::terminal::write_stdout;
///
/// assert!(write_stdout(format_args!("{} rays\n", 42)).is_ok());
/// ```
pub fn write_stdout(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    io::stdout().lock().write_fmt(args).map_err(StdoutError)
}

/// What [`errln!`](crate::errln) calls.
///
/// ```
/// use experiments::terminal::write_stderr;
///
/// // Whole lines at once; a failure is dropped, so nothing comes back.
/// let nothing: () = write_stderr(format_args!("{} scenes skipped\n", 2));
/// assert_eq!(nothing, ());
/// ```
pub fn write_stderr(args: fmt::Arguments<'_>) {
    // Formatted first and written at once: standard error is unbuffered, and a line written
    // in pieces can reach a pipe read by another program (mpirun forwarding a rank's lines
    // between its own) with that program's text in the middle.
    let line = args.to_string();
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// Flushes standard output: the last buffered text may fail to go out only now.
///
/// ```
/// use experiments::outln;
/// use experiments::terminal::{StdoutError, flush_stdout};
///
/// fn finish() -> Result<(), StdoutError> {
///     outln!("done");
///     flush_stdout()
/// }
/// assert!(finish().is_ok());
/// ```
pub fn flush_stdout() -> Result<(), StdoutError> {
    io::stdout().lock().flush().map_err(StdoutError)
}
