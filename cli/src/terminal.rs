//! Standard output and standard error, written without panicking: the writers and macros are
//! `experiments`' ([`experiments::terminal`]), shared with the benchmarks; here, what an MPI
//! job's ranks add to them.

use std::fmt;

pub(crate) use experiments::terminal::{StdoutError, flush_stdout};

/// An error already said, by rank 0 of an MPI job (which says a job's errors once): the
/// process ends with the error's exit code and says nothing more.
#[derive(Debug)]
pub(crate) struct Reported;

impl fmt::Display for Reported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("said by rank 0")
    }
}

impl std::error::Error for Reported {}

/// Whether this process is a rank other than 0 of an MPI job (Open MPI's `mpirun` tells each
/// rank its number): such a rank leaves errors that every rank meets, such as a mistyped
/// flag, to rank 0, so that the job says each once.
pub(crate) fn quiet_rank() -> bool {
    std::env::var("OMPI_COMM_WORLD_RANK").is_ok_and(|rank| rank != "0")
}

/// How many processes the MPI launcher that started this one started in all, where it says
/// (Open MPI's `mpirun`, or a launcher speaking PMI); `None` outside one.
pub(crate) fn mpi_world_size() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}
