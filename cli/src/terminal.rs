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

/// The first of `names` set in the environment, as a number.
fn env_number(names: &[&str]) -> Option<u32> {
    names
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// This process's rank, where an MPI launcher started it: Open MPI's `mpirun`
/// (`OMPI_COMM_WORLD_RANK`), a launcher speaking PMI such as MPICH's Hydra (`PMI_RANK`), or
/// PMIx (`PMIX_RANK`) tells each process its number.
pub(crate) fn mpi_rank() -> Option<u32> {
    env_number(&["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"])
}

/// How many processes the launcher that started this one started in all, where it says
/// (`OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`); `None` outside one.
pub(crate) fn mpi_world_size() -> Option<u32> {
    env_number(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"])
}

/// Whether this process is a rank other than 0 of an MPI job: such a rank leaves errors that
/// every rank meets, such as a mistyped flag, to rank 0, so that the job says each once.
pub(crate) fn quiet_rank() -> bool {
    mpi_rank().is_some_and(|rank| rank != 0)
}
