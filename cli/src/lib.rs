//! `raylb`'s command line as a library: render scenes to images, view them in a window,
//! compare images, validate balancers, record and simulate frames, benchmark.
//!
//! The `raylb` binary is [`Raylb::new`]`().`[`main`](Raylb::main)`()`. A program of one's own
//! that adds balancers registers them first, and gets every command that renders on the
//! CPU's threads (`render`, `view`, `validate`, `bench sweep`, `bench scaling`) with them
//! listed beside the built-in ones, and, for those registered with their simulated policy
//! ([`Raylb::simulated_balancer`]), `sim` and `bench sim-sweep`:
//!
//! ```no_run
//! use std::process::ExitCode;
//! use balancers::BalancerKind;
//!
//! fn main() -> ExitCode {
//!     raylb::Raylb::new()
//!         .balancer(
//!             "counter-8",
//!             "The central counter, eight tiles a visit.",
//!             BalancerKind::counter(std::num::NonZeroUsize::new(8).unwrap()),
//!         )
//!         .main()
//! }
//! ```

#![deny(missing_docs)]

#[macro_use]
extern crate experiments;

mod bench;
mod choice;
mod cli;
mod cluster;
mod compare;
#[cfg(test)]
mod docs_parse;
mod export;
mod manual;
mod outputs;
mod record;
#[cfg(test)]
mod reference;
mod render;
mod scenes;
mod sim;
mod terminal;
mod validate;
mod view;

use std::process::ExitCode;

// The progress bars, which the commands here share with the experiments.
use experiments::progress;

use cli::{Cli, Command};
use terminal::{Reported, StdoutError, flush_stdout, mpi_world_size, quiet_rank};

/// The exit code when standard output was closed before raylb finished writing to it: what a
/// shell reports for a program ended by SIGPIPE (128 + 13), as `yes | head -1` ends `yes`.
const READER_GONE: u8 = 141;

/// Ends the process on SIGINT, SIGTERM or SIGHUP with the shell's code for it (128 + the
/// signal), after removing every staged output's temporary file; a commit under way is let
/// finish first, so the outputs are all old or all new ([`renderer::output::abandon_staged`]).
/// Where the handling thread cannot start, the signals keep their default action.
fn end_cleanly_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // Registered here, on the main thread: a thread's first allocation would reserve a malloc
    // arena of its own (64 MiB of address space, which counts under `ulimit -v`); the thread
    // below only waits.
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let handle = signals.handle();
    let handler = move || {
        if let Some(signal) = signals.forever().next() {
            let _held = renderer::output::abandon_staged();
            std::process::exit(128 + signal);
        }
    };
    // A small stack of its own: RUST_MIN_STACK, which sizes the threads started for workers,
    // does not apply.
    let started = std::thread::Builder::new()
        .name("signals".into())
        .stack_size(64 * 1024)
        .spawn(handler);
    if started.is_err() {
        // Nobody would read the signals, and the handlers signal-hook installed stay after
        // it lets go of them: their default action is put back by hand.
        handle.close();
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            // SAFETY: SIG_DFL is a valid disposition for these signals, set before any other
            // thread than this one runs (the signal thread did not start).
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
    }
}

/// The least address space (`ulimit -v`) raylb starts in. Below it the program, its libraries
/// and its first allocations do not all fit, and an allocation would abort it before it could
/// say why.
const LEAST_ADDRESS_SPACE: u64 = 32 << 20;

/// The soft `ulimit -v`, where one is set below [`LEAST_ADDRESS_SPACE`]. Read without
/// allocating: the heap may have no room left.
fn address_space_too_small() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes one `rlimit` through the pointer, which points to a live,
        // writable one, and reads nothing of ours.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 {
            return None;
        }
        let soft = limit.rlim_cur;
        (soft != libc::RLIM_INFINITY && soft < LEAST_ADDRESS_SPACE).then_some(soft)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The least stack `RUST_MIN_STACK` may give a worker's thread: room to spare over what the
/// deepest frame needs (under 256 KiB optimised, about 2.5 MiB unoptimised; BENCHMARKS.md).
/// Below it a worker's stack overflows and the process aborts.
const LEAST_WORKER_STACK: u64 = if cfg!(debug_assertions) {
    4 << 20
} else {
    512 << 10
};

/// Why `RUST_MIN_STACK`, which sizes the workers' stacks, cannot be used as set: a value too
/// small for a worker, or not a whole number of bytes (which the standard library would pass
/// over without a word).
fn worker_stack_refusal() -> Option<String> {
    let value = std::env::var_os("RUST_MIN_STACK")?;
    let text = value.to_string_lossy();
    match text.parse::<u64>() {
        Ok(bytes) if bytes >= LEAST_WORKER_STACK => None,
        Ok(bytes) => Some(format!(
            "RUST_MIN_STACK={bytes}: a worker's stack needs at least {} KiB (unset, it is 8 MiB)",
            LEAST_WORKER_STACK >> 10
        )),
        Err(_) => Some(format!(
            "RUST_MIN_STACK={text}: not a whole number of bytes for the workers' stacks"
        )),
    }
}

/// Runs the command line of the process's arguments.
fn run_command_line() -> ExitCode {
    if let Some(bytes) = address_space_too_small() {
        // Formatted straight to the unbuffered standard error: no allocation.
        eprintln!(
            "raylb: error: ulimit -v allows {} KiB of address space; raylb needs at least {} KiB",
            bytes >> 10,
            LEAST_ADDRESS_SPACE >> 10
        );
        return ExitCode::from(2);
    }
    if let Some(refusal) = worker_stack_refusal() {
        errln!("raylb: error: {refusal}");
        return ExitCode::from(2);
    }
    end_cleanly_on_signals();
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(e) => return cli::usage_error(e),
    };
    // Under `mpirun -n 2` every rank would run the whole command and write the same files;
    // only `render --cluster` shares a job between ranks.
    if let Some(ranks @ 2..) = mpi_world_size()
        && !matches!(&cli.command, Command::Render(args) if args.cluster.is_some())
    {
        if quiet_rank() {
            // Rank 0 says why; the launcher ends the job when the first rank fails, and this
            // one failing first could cut rank 0's line off.
            std::thread::sleep(std::time::Duration::from_millis(200));
        } else {
            errln!(
                "raylb: error: started by an MPI launcher as one of {ranks} processes, but only `raylb render --cluster MODE` shares its work between them: each would run the whole command and write the same files; run one process, or render with --cluster"
            );
        }
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Render(args) => match args.cluster {
            Some(mode) => cluster::run(&args, mode),
            None => render::run(&args),
        },
        Command::Compare(args) => compare::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::View(args) => view::run(&args),
        Command::Scenes(args) => scenes::run(&args),
        Command::Record(args) => record::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Sim(args) => sim::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Completions(args) => manual::completions(&args),
        Command::Man(args) => manual::man(&args),
    };
    let result = result.and_then(|code| {
        flush_stdout()?;
        Ok(code)
    });
    result.unwrap_or_else(|e| match e.downcast_ref::<StdoutError>() {
        Some(stdout) if stdout.reader_gone() => ExitCode::from(READER_GONE),
        _ if e.is::<Reported>() || quiet_rank() => ExitCode::from(2),
        _ => {
            errln!("raylb: error: {e:#}");
            ExitCode::from(2)
        }
    })
}

/// The command line, with the balancers a program adds to it.
///
/// A program of one's own, `raylb` with a balancer more:
///
/// ```no_run
/// use std::num::NonZeroUsize;
/// use std::process::ExitCode;
/// use balancers::BalancerKind;
///
/// fn main() -> ExitCode {
///     let fours = BalancerKind::counter(NonZeroUsize::new(4).unwrap());
///     raylb::Raylb::new()
///         .simulated_balancer("fours", "A counter that hands out four tiles at a time.", fours)
///         .main()
/// }
/// ```
#[derive(Debug, Default)]
pub struct Raylb {
    balancers: Vec<renderer::user_balancer::Registration>,
}

impl Raylb {
    /// The command line with the built-in balancers alone.
    ///
    /// ```
    /// assert_eq!(format!("{:?}", raylb::Raylb::new()), "Raylb { balancers: [] }");
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `balancer` to the CPU's balancers, as `--balancer KEYWORD` (lowercase letters,
    /// digits and `-`, not a built-in balancer's keyword), with `about` as its line of help.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use balancers::BalancerKind;
    ///
    /// let fours = BalancerKind::counter(NonZeroUsize::new(4).unwrap());
    /// let raylb = raylb::Raylb::new().balancer("fours", "Four tiles at a time.", fours);
    /// assert!(format!("{raylb:?}").contains("Registration(fours)"));
    /// ```
    pub fn balancer<B>(mut self, keyword: &'static str, about: &'static str, balancer: B) -> Self
    where
        B: balancers::Balancer + Send + Sync + std::fmt::Debug + 'static,
    {
        let registration = renderer::user_balancer::Registration::new(keyword, about, balancer);
        self.balancers.push(registration);
        self
    }

    /// Adds `balancer` as [`balancer`](Self::balancer) does, and to the simulator too
    /// (`raylb sim`, `raylb bench sim-sweep`), which replays its simulated policy.
    ///
    /// ```
    /// use balancers::{BalancerKind, WorkStealing};
    ///
    /// let thief = BalancerKind::Stealing(WorkStealing::default());
    /// let raylb = raylb::Raylb::new().simulated_balancer("thief", "Work stealing.", thief);
    /// assert!(format!("{raylb:?}").contains("Registration(thief)"));
    /// ```
    pub fn simulated_balancer<B>(
        mut self,
        keyword: &'static str,
        about: &'static str,
        balancer: B,
    ) -> Self
    where
        B: balancers::sim::Simulated + Send + Sync + std::fmt::Debug + 'static,
    {
        let registration =
            renderer::user_balancer::Registration::simulated(keyword, about, balancer);
        self.balancers.push(registration);
        self
    }

    /// Runs the command line of the process's arguments, and gives the exit code: 0 when the
    /// command succeeded, 2 for an error (one line on standard error). A keyword that cannot
    /// be registered is such an error.
    ///
    /// ```no_run
    /// // The whole of a program that is raylb with nothing added.
    /// fn main() -> std::process::ExitCode {
    ///     raylb::Raylb::new().main()
    /// }
    /// ```
    pub fn main(self) -> ExitCode {
        if let Err(e) = renderer::user_balancer::register(self.balancers) {
            errln!("raylb: error: {e}");
            return ExitCode::from(2);
        }
        run_command_line()
    }
}
