//! `hybrid`: one work-stealing scheduler over CPU worker threads and batch processors, such as
//! GPUs (Pinto and Maillard, "hybrid work stealing": a processor per core and one per GPU,
//! each with its own pool of work; idle processors steal from the others).
//!
//! Work is of two sorts. *Initial tasks* (a renderer's tiles) can run on any processor.
//! *Spawned tasks* (its rays) stay on CPU workers: a batch processor runs a batch of initial
//! tasks together with everything they spawn, inside itself, as a GPU's persistent kernel
//! does, and hands back nothing but their results.
//!
//! - Every processor owns a *pool* of initial tasks, dealt out before the run (see `deal`
//!   in this module). Its owner takes from the front of the pool; thieves take from the
//!   back, one task or half of the pool as the CPU side's steal amount says.
//! - A CPU worker works as in [`WorkStealing`]: it runs a task's newest child next and keeps
//!   the others in its deque of spawned tasks, where other CPU workers may steal them; with
//!   neither a child nor a spawned task of its own, it takes the next initial task of its
//!   pool; with none of those, it steals, from any processor: initial tasks from its pool
//!   first (the larger pieces), or spawned tasks from a CPU worker's deque.
//! - A batch processor takes a *batch* from the front of its pool and runs it to the end.
//!   With its pool short of a batch it steals half of another processor's pool (at most what
//!   the batch lacks), victims in turn from a random one. Its first batch is its own pool, as
//!   much of it as it can take at once ([`BatchRunner::max_batch`]): before a batch has been
//!   timed it cannot know how much of the others' work it should take. With
//!   [`FirstBatch::All`] its first batch is instead every initial task waiting in any pool, up
//!   to that much: one batch for nearly the whole run. Then batches shrink
//!   toward the end of the run: a batch is half of the processor's share of the initial
//!   tasks still waiting, its share being its speed over its own and the CPU workers'
//!   together (guided self-scheduling), so that no processor is left with a long batch when
//!   the others run dry; but never under an eighth of the largest batch, where a batch's
//!   fixed costs (a launch, the tail of its longest tasks, a synchronisation) would outweigh
//!   its work: the last tasks go to the batch processor in one batch, not to the CPU workers
//!   one by one.
//! - Nor does a CPU worker start an initial task that it would finish after the batch
//!   processors, at the speed their batches have shown, would have finished every initial
//!   task still waiting: the frame would wait for its last task. It leaves those to them and
//!   only steals spawned tasks. A CPU worker takes one initial task at a time from a batch processor's pool, never
//!   half of it: the batch processor is the faster, and what the CPU takes from it the batch
//!   processor would otherwise take back in small batches.
//! - The run ends as [`crate::termination`] decides, a batch processor's tasks counted
//!   finished when their batch returns. A batch processor leaves when every initial task has
//!   been started (a count taken as each is started, not as it moves between pools, so that
//!   tasks in a thief's hands between two pools are not missed); a CPU worker when every task
//!   has finished (spawned tasks can appear until then).

use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use crate::balancer::{Outcome, SpawnError, Stop, TaskRunner, run_workers};
use crate::deque::{self, Family, Steal};
use crate::order::Order;
use crate::stealing::{DequeKind, Job, Owner, Search, StealAmount, WorkStealing};
use crate::sync::{AtomicU64, Ordering};
use crate::telemetry::{Telemetry, WorkerTelemetry};
use crate::termination::Termination;
use crate::victim::{Prospect, VictimPolicy, VictimSelector, XorShift};

/// A processor that runs whole batches of initial tasks, with everything they spawn, at once:
/// a GPU, for a renderer. Driven by a host thread of its own.
///
/// ```
/// use std::num::NonZeroUsize;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
///
/// /// Task `n` is a chain of `n + 1` links: it spawns `n - 1`, down to 0.
/// struct Chains { ran: AtomicU64 }
///
/// impl TaskRunner<u32> for Chains {
///     type Local = ();
///     fn local(&self, _worker: usize) {}
///     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
///         self.ran.fetch_add(1, Ordering::Relaxed);
///         if n > 0 {
///             spawn.spawn(n - 1);
///         }
///     }
/// }
///
/// /// A batch processor that runs each chain whole, inside itself, as a GPU's kernel does.
/// struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
///
/// impl BatchRunner<u32> for Device<'_> {
///     type Error = String;
///     fn max_batch(&self) -> usize {
///         64
///     }
///     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
///         for &n in batch {
///             self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed);
///         }
///         self.batches.push(batch.len());
///         Ok(())
///     }
/// }
///
/// let chains = Chains { ran: AtomicU64::new(0) };
/// let tasks: Vec<u32> = (0..100).collect();
/// let device = Device { chains: &chains, batches: Vec::new() };
/// let outcome = HybridStealing::default()
///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
/// // Every link of every chain ran once, on a CPU worker or in a batch.
/// assert_eq!(chains.ran.load(Ordering::Relaxed), (1..=100).sum::<u64>());
/// assert!(outcome.batch_runners[0].batches.iter().all(|&b| (1..=64).contains(&b)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait BatchRunner<T>: Send {
    /// Why a batch could not be run (a device error).
    type Error: Send;

    /// The most initial tasks worth launching at once: a batch that fills the device.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use std::sync::atomic::{AtomicU64, Ordering};
    /// # use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
    /// # struct Chains { ran: AtomicU64 }
    /// # impl TaskRunner<u32> for Chains {
    /// #     type Local = ();
    /// #     fn local(&self, _worker: usize) {}
    /// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
    /// #         self.ran.fetch_add(1, Ordering::Relaxed);
    /// #         if n > 0 { spawn.spawn(n - 1); }
    /// #     }
    /// # }
    /// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
    /// # impl BatchRunner<u32> for Device<'_> {
    /// #     type Error = String;
    /// #     fn max_batch(&self) -> usize { 64 }
    /// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
    /// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
    /// #         self.batches.push(batch.len());
    /// #         Ok(())
    /// #     }
    /// # }
    /// # let chains = Chains { ran: AtomicU64::new(0) };
    /// # let tasks: Vec<u32> = (0..100).collect();
    /// # let device = Device { chains: &chains, batches: Vec::new() };
    /// let outcome = HybridStealing::default()
    ///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
    /// // No batch was larger than the device said it could take.
    /// assert!(outcome.batch_runners[0].batches.iter().all(|&b| b <= 64));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn max_batch(&self) -> usize;

    /// Runs `batch` and everything its tasks spawn to completion.
    ///
    /// # Errors
    /// When the batch could not be run: the run stops (its results are incomplete) and
    /// [`HybridStealing::run`] returns the error.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use std::sync::atomic::{AtomicU64, Ordering};
    /// # use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
    /// # struct Chains { ran: AtomicU64 }
    /// # impl TaskRunner<u32> for Chains {
    /// #     type Local = ();
    /// #     fn local(&self, _worker: usize) {}
    /// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
    /// #         self.ran.fetch_add(1, Ordering::Relaxed);
    /// #         if n > 0 { spawn.spawn(n - 1); }
    /// #     }
    /// # }
    /// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
    /// # impl BatchRunner<u32> for Device<'_> {
    /// #     type Error = String;
    /// #     fn max_batch(&self) -> usize { 64 }
    /// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
    /// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
    /// #         self.batches.push(batch.len());
    /// #         Ok(())
    /// #     }
    /// # }
    /// # let chains = Chains { ran: AtomicU64::new(0) };
    /// # let tasks: Vec<u32> = (0..100).collect();
    /// # let device = Device { chains: &chains, batches: Vec::new() };
    /// let outcome = HybridStealing::default()
    ///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
    /// // The batches' tasks are the device's initial tasks.
    /// let batched: usize = outcome.batch_runners[0].batches.iter().sum();
    /// assert_eq!(outcome.telemetry.workers[2].initial_tasks, batched as u64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn run_batch(&mut self, batch: &[T]) -> Result<(), Self::Error>;
}

/// Why a hybrid run did not finish.
///
/// ```
/// use std::num::NonZeroUsize;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use balancers::{BatchRunner, HybridError, HybridStealing, Spawn, TaskRunner};
///
/// /// Leaves that wait until the device has been handed a batch (`launched`), so that the
/// /// CPU workers cannot run every task, the device's pool too, before it is asked for any.
/// struct Leaves<'a> {
///     launched: &'a AtomicBool,
/// }
/// impl TaskRunner<u32> for Leaves<'_> {
///     type Local = ();
///     fn local(&self, _worker: usize) {}
///     fn run<S: Spawn<u32>>(&self, _task: u32, _: &mut (), _spawn: &mut S) {
///         while !self.launched.load(Ordering::Acquire) {
///             std::thread::yield_now();
///         }
///     }
/// }
///
/// /// A device whose every batch fails.
/// #[derive(Debug)]
/// struct Broken<'a> {
///     launched: &'a AtomicBool,
/// }
/// impl BatchRunner<u32> for Broken<'_> {
///     type Error = String;
///     fn max_batch(&self) -> usize {
///         8
///     }
///     fn run_batch(&mut self, _batch: &[u32]) -> Result<(), String> {
///         self.launched.store(true, Ordering::Release);
///         Err("the device fell off the bus".into())
///     }
/// }
///
/// let launched = AtomicBool::new(false);
/// let tasks: Vec<u32> = (0..100).collect();
/// let leaves = Leaves { launched: &launched };
/// let failed = HybridStealing::default()
///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &leaves, vec![Broken { launched: &launched }])
///     .unwrap_err();
/// // Processors are numbered CPU workers first: the device is processor 2.
/// assert!(matches!(failed, HybridError::Batch { processor: 2, .. }));
/// assert_eq!(failed.to_string(), "the device fell off the bus");
/// ```
#[derive(Debug)]
pub enum HybridError<E> {
    /// A thread could not be started.
    Spawn(SpawnError),
    /// Batch processor `processor` (numbered after the CPU workers) failed a batch.
    Batch {
        /// Its number among all processors.
        processor: usize,
        /// What it said.
        error: E,
    },
}

impl<E: std::fmt::Display> std::fmt::Display for HybridError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Spawn(e) => e.fmt(f),
            Self::Batch { error, .. } => error.fmt(f),
        }
    }
}

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for HybridError<E> {}

/// Hybrid work stealing over CPU workers and batch processors (see the module's overview).
/// The CPU workers work depth-first; the initial tasks are dealt as the overview says.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use std::sync::atomic::{AtomicU64, Ordering};
/// # use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
/// # struct Chains { ran: AtomicU64 }
/// # impl TaskRunner<u32> for Chains {
/// #     type Local = ();
/// #     fn local(&self, _worker: usize) {}
/// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
/// #         self.ran.fetch_add(1, Ordering::Relaxed);
/// #         if n > 0 { spawn.spawn(n - 1); }
/// #     }
/// # }
/// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
/// # impl BatchRunner<u32> for Device<'_> {
/// #     type Error = String;
/// #     fn max_batch(&self) -> usize { 64 }
/// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
/// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
/// #         self.batches.push(batch.len());
/// #         Ok(())
/// #     }
/// # }
/// # let chains = Chains { ran: AtomicU64::new(0) };
/// # let tasks: Vec<u32> = (0..100).collect();
/// # let device = Device { chains: &chains, batches: Vec::new() };
/// let outcome = HybridStealing::default()
///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
/// // Two CPU workers and one batch processor.
/// assert_eq!(outcome.telemetry.workers.len(), 3);
/// assert_eq!(outcome.processors[2].batches.len(), outcome.batch_runners[0].batches.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HybridStealing {
    /// The CPU workers' deque of spawned tasks.
    pub deque: DequeKind,
    /// How a CPU worker picks its victims (among all processors).
    pub victim: VictimPolicy,
    /// How much a CPU worker takes from a CPU worker's pool or deque.
    pub amount: StealAmount,
    /// What a batch processor's first batch holds.
    pub first_batch: FirstBatch,
}

impl Default for HybridStealing {
    /// As [`WorkStealing`]'s defaults: the non-blocking deque, random victims, steal half;
    /// a first batch of the batch processor's own pool.
    fn default() -> Self {
        let w = WorkStealing::default();
        Self {
            deque: w.deque,
            victim: w.victim,
            amount: w.amount,
            first_batch: FirstBatch::default(),
        }
    }
}

/// What a batch processor's first batch holds, before any batch has shown its speed.
///
/// ```
/// use std::num::NonZeroUsize;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use balancers::{BatchRunner, FirstBatch, HybridStealing, Spawn, TaskRunner};
/// # struct Chains { ran: AtomicU64 }
/// # impl TaskRunner<u32> for Chains {
/// #     type Local = ();
/// #     fn local(&self, _worker: usize) {}
/// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
/// #         self.ran.fetch_add(1, Ordering::Relaxed);
/// #         if n > 0 { spawn.spawn(n - 1); }
/// #     }
/// # }
/// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
/// # impl BatchRunner<u32> for Device<'_> {
/// #     type Error = String;
/// #     fn max_batch(&self) -> usize { 1000 }
/// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
/// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
/// #         self.batches.push(batch.len());
/// #         Ok(())
/// #     }
/// # }
/// # let chains = Chains { ran: AtomicU64::new(0) };
/// # let tasks: Vec<u32> = (0..100).collect();
/// # let device = Device { chains: &chains, batches: Vec::new() };
/// let all = HybridStealing { first_batch: FirstBatch::All, ..HybridStealing::default() };
/// let outcome = all.run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
/// // Whatever the device's first batch took from the CPU workers' pools, and they from its,
/// // every link of every chain ran once.
/// assert_eq!(chains.ran.load(Ordering::Relaxed), (1..=100).sum::<u64>());
/// let given: u64 = outcome.processors.iter().map(|p| p.given).sum();
/// let taken: u64 = outcome.processors.iter().map(|p| p.taken).sum();
/// assert_eq!(given, taken);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FirstBatch {
    /// Its own pool, dealt before the run: as many initial tasks as all CPU workers'.
    #[default]
    Own,
    /// Every initial task waiting in any pool, as much as a batch holds: one launch for nearly
    /// the whole run, the CPU workers keeping the tasks they started.
    All,
}

/// What kind of processor a telemetry entry is.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use std::sync::atomic::{AtomicU64, Ordering};
/// # use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
/// # struct Chains { ran: AtomicU64 }
/// # impl TaskRunner<u32> for Chains {
/// #     type Local = ();
/// #     fn local(&self, _worker: usize) {}
/// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
/// #         self.ran.fetch_add(1, Ordering::Relaxed);
/// #         if n > 0 { spawn.spawn(n - 1); }
/// #     }
/// # }
/// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
/// # impl BatchRunner<u32> for Device<'_> {
/// #     type Error = String;
/// #     fn max_batch(&self) -> usize { 64 }
/// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
/// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
/// #         self.batches.push(batch.len());
/// #         Ok(())
/// #     }
/// # }
/// # let chains = Chains { ran: AtomicU64::new(0) };
/// # let tasks: Vec<u32> = (0..100).collect();
/// # let device = Device { chains: &chains, batches: Vec::new() };
/// use balancers::ProcessorKind;
/// let outcome = HybridStealing::default()
///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
/// let kinds: Vec<ProcessorKind> = outcome.processors.iter().map(|p| p.kind).collect();
/// assert_eq!(kinds, [ProcessorKind::Cpu, ProcessorKind::Cpu, ProcessorKind::Batch]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessorKind {
    /// A CPU worker thread.
    Cpu,
    /// A batch processor (a GPU) and its host thread.
    Batch,
}

/// What a hybrid run measures of each processor beyond [`WorkerTelemetry`].
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use std::sync::atomic::{AtomicU64, Ordering};
/// # use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
/// # struct Chains { ran: AtomicU64 }
/// # impl TaskRunner<u32> for Chains {
/// #     type Local = ();
/// #     fn local(&self, _worker: usize) {}
/// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
/// #         self.ran.fetch_add(1, Ordering::Relaxed);
/// #         if n > 0 { spawn.spawn(n - 1); }
/// #     }
/// # }
/// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
/// # impl BatchRunner<u32> for Device<'_> {
/// #     type Error = String;
/// #     fn max_batch(&self) -> usize { 64 }
/// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
/// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
/// #         self.batches.push(batch.len());
/// #         Ok(())
/// #     }
/// # }
/// # let chains = Chains { ran: AtomicU64::new(0) };
/// # let tasks: Vec<u32> = (0..100).collect();
/// # let device = Device { chains: &chains, batches: Vec::new() };
/// let outcome = HybridStealing::default()
///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
/// // Each processor was dealt its pool and finished in time; what it gave away and took
/// // evens out over the processors.
/// let dealt: u64 = outcome.processors.iter().map(|p| p.dealt).sum();
/// assert_eq!(dealt, 100);
/// let given: u64 = outcome.processors.iter().map(|p| p.given).sum();
/// let taken: u64 = outcome.processors.iter().map(|p| p.taken).sum();
/// assert_eq!(given, taken);
/// assert!(outcome.processors.iter().all(|p| p.last_task_end <= outcome.telemetry.wall));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessorTelemetry {
    /// What the processor is.
    pub kind: ProcessorKind,
    /// The batches it ran, in order (batch processors; empty for CPU workers).
    pub batches: Vec<BatchRecord>,
    /// Initial tasks it was dealt before the run.
    pub dealt: u64,
    /// Initial tasks taken from its pool by other processors.
    pub given: u64,
    /// Initial tasks it took from other processors' pools.
    pub taken: u64,
    /// When it finished its last task, from the start of the run: how long before the end of
    /// the run it had nothing left to do is the wall time less this.
    pub last_task_end: Duration,
}

impl ProcessorTelemetry {
    /// A processor of `kind` before the run: nothing done, dealt, given or taken.
    fn new(kind: ProcessorKind) -> Self {
        Self {
            kind,
            batches: Vec::new(),
            dealt: 0,
            given: 0,
            taken: 0,
            last_task_end: Duration::ZERO,
        }
    }
}

/// One batch of a batch processor: its initial tasks, when it began, from the start of the run,
/// and how long the batch runner took over it, from the call to its return (a GPU's launch,
/// its tail and the host's part: the upload, the wait, the figures read back).
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use std::sync::atomic::{AtomicU64, Ordering};
/// # use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
/// # struct Chains { ran: AtomicU64 }
/// # impl TaskRunner<u32> for Chains {
/// #     type Local = ();
/// #     fn local(&self, _worker: usize) {}
/// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
/// #         self.ran.fetch_add(1, Ordering::Relaxed);
/// #         if n > 0 { spawn.spawn(n - 1); }
/// #     }
/// # }
/// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
/// # impl BatchRunner<u32> for Device<'_> {
/// #     type Error = String;
/// #     fn max_batch(&self) -> usize { 64 }
/// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
/// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
/// #         self.batches.push(batch.len());
/// #         Ok(())
/// #     }
/// # }
/// # let chains = Chains { ran: AtomicU64::new(0) };
/// # let tasks: Vec<u32> = (0..100).collect();
/// # let device = Device { chains: &chains, batches: Vec::new() };
/// let outcome = HybridStealing::default()
///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
/// let records = &outcome.processors[2].batches;
/// // One record a batch the runner saw, of the same sizes, one after the other.
/// let sizes: Vec<usize> = records.iter().map(|b| b.tasks as usize).collect();
/// assert_eq!(sizes, outcome.batch_runners[0].batches);
/// assert!(records.windows(2).all(|w| w[0].began + w[0].took <= w[1].began));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchRecord {
    /// Initial tasks in the batch.
    pub tasks: u64,
    /// When the batch runner was called, from the start of the run.
    pub began: Duration,
    /// From the call to its return.
    pub took: Duration,
}

/// A hybrid run's results: the usual telemetry (CPU workers first, then batch processors,
/// whose `tasks` and `initial_tasks` count the initial tasks of their batches), each
/// processor's extras in the same order, the CPU workers' states and the batch runners.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use std::sync::atomic::{AtomicU64, Ordering};
/// # use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
/// # struct Chains { ran: AtomicU64 }
/// # impl TaskRunner<u32> for Chains {
/// #     type Local = ();
/// #     fn local(&self, _worker: usize) {}
/// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
/// #         self.ran.fetch_add(1, Ordering::Relaxed);
/// #         if n > 0 { spawn.spawn(n - 1); }
/// #     }
/// # }
/// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
/// # impl BatchRunner<u32> for Device<'_> {
/// #     type Error = String;
/// #     fn max_batch(&self) -> usize { 64 }
/// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
/// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
/// #         self.batches.push(batch.len());
/// #         Ok(())
/// #     }
/// # }
/// # let chains = Chains { ran: AtomicU64::new(0) };
/// # let tasks: Vec<u32> = (0..100).collect();
/// # let device = Device { chains: &chains, batches: Vec::new() };
/// let outcome = HybridStealing::default()
///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
/// // One entry a processor in the telemetry and the hybrid figures, one runner handed back.
/// assert_eq!(outcome.telemetry.workers.len(), outcome.processors.len());
/// assert_eq!(outcome.locals.len(), 2);
/// assert_eq!(outcome.batch_runners.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct HybridOutcome<L, B> {
    /// Timings and counts, CPU workers then batch processors.
    pub telemetry: Telemetry,
    /// The same processors' hybrid figures.
    pub processors: Vec<ProcessorTelemetry>,
    /// The CPU workers' [`TaskRunner::Local`]s.
    pub locals: Vec<L>,
    /// The batch runners, handed back.
    pub batch_runners: Vec<B>,
}

/// The processor that initial task `i` is dealt to, of `cpus` CPU workers and `batches`
/// batch processors: interleaved over `cpus · (1 + batches)` slots, each batch processor
/// taking `cpus` of them, so that each starts with as many initial tasks as all CPU workers
/// together. A GPU traces tens of times faster than a core; stealing evens out what this deal
/// gets wrong, so it only has to start each processor with enough to do. Processors are
/// numbered CPU workers first.
pub(crate) fn deal(i: usize, cpus: usize, batches: usize) -> usize {
    let slots = cpus * (1 + batches);
    let slot = i % slots;
    if slot < cpus {
        slot
    } else {
        cpus + (slot - cpus) / cpus
    }
}

/// `tasks` dealt to the pools of `cpus` CPU workers and `batches` batch processors, as
/// [`deal`] says, each pool in the order of `tasks`.
fn deal_pools<T: Clone>(tasks: &[T], cpus: usize, batches: usize) -> Vec<VecDeque<T>> {
    let mut pools: Vec<VecDeque<T>> = (0..cpus + batches).map(|_| VecDeque::new()).collect();
    for (i, task) in tasks.iter().enumerate() {
        pools[deal(i, cpus, batches)].push_back(task.clone());
    }
    pools
}

/// What thieves see of each processor: its pool, and for each CPU worker (the first
/// processors, one for each of `stealers`) the thieves' end of its deque of spawned tasks.
fn victims<D: Family, T: Send>(
    pools: Vec<VecDeque<T>>,
    stealers: Vec<D::Stealer<Job<T>>>,
) -> Vec<Victim<D, T>> {
    let mut stealers = stealers.into_iter();
    pools
        .into_iter()
        .map(|pool| Victim {
            pool: Pool::new(pool),
            spawned: stealers.next(),
        })
        .collect()
}

/// What `slot` holds, taken by the one thread it is for (`what` says which).
fn take_once<X>(slot: &Mutex<Option<X>>, what: &str) -> X {
    slot.lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .take()
        .expect(what)
}

/// The run's results from what each processor's thread handed back (CPU workers first), the
/// tasks `dealt` to each and what `victims` gave away; the first batch that failed, if any.
fn gather<D: Family, T: Send, L, B, E>(
    outcome: Outcome<Done<L, B, E>>,
    dealt: &[u64],
    victims: &[Victim<D, T>],
) -> Result<HybridOutcome<L, B>, HybridError<E>> {
    let Outcome { telemetry, locals } = outcome;
    let mut cpu_locals = Vec::new();
    let mut runners = Vec::new();
    let mut processors = Vec::with_capacity(locals.len());
    let mut failed = None;
    for (k, done) in locals.into_iter().enumerate() {
        let mut extra = match done {
            Done::Cpu(local, extra) => {
                cpu_locals.push(local);
                extra
            }
            Done::Batch(runner, extra, error) => {
                runners.push(runner);
                if let Some(error) = error {
                    failed.get_or_insert(HybridError::Batch {
                        processor: k,
                        error,
                    });
                }
                extra
            }
        };
        extra.dealt = dealt[k];
        // Relaxed: the workers that added to it have returned, and the run's end orders their
        // writes before this.
        extra.given = victims[k].pool.given.load(Ordering::Relaxed);
        processors.push(extra);
    }
    if let Some(failed) = failed {
        return Err(failed);
    }
    Ok(HybridOutcome {
        telemetry,
        processors,
        locals: cpu_locals,
        batch_runners: runners,
    })
}

/// A processor's pool of initial tasks: its own front, thieves' back. Initial tasks are few
/// (a frame's tiles) and each is a large piece of work, so a lock is no cost here.
struct Pool<T> {
    tasks: Mutex<VecDeque<T>>,
    /// How many it holds, for thieves choosing a victim and batch processors sizing a batch:
    /// a hint, written under the lock.
    len: AtomicU64,
    /// Initial tasks taken from it by other processors.
    given: AtomicU64,
}

impl<T> Pool<T> {
    fn new(tasks: VecDeque<T>) -> Self {
        Self {
            len: AtomicU64::new(tasks.len() as u64),
            tasks: Mutex::new(tasks),
            given: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<T>> {
        // A panic while holding it cannot leave the queue half-changed (each operation is one
        // VecDeque call), and the run is being stopped then anyway.
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Up to `n` tasks from the owner's end, into `out`.
    fn take_front(&self, n: usize, out: &mut Vec<T>) {
        let mut tasks = self.lock();
        let n = n.min(tasks.len());
        out.extend(tasks.drain(..n));
        // Relaxed: a hint (see `len`).
        self.len.store(tasks.len() as u64, Ordering::Relaxed);
    }

    /// A thief's take from the back: one task, or half of them (rounded up) and at most
    /// `max`, into `out`, oldest of the taken first.
    fn steal_back(&self, amount: StealAmount, max: usize, out: &mut Vec<T>) -> usize {
        self.take_back(
            |len| match amount {
                StealAmount::One => 1,
                StealAmount::Half => len.div_ceil(2),
            },
            max,
            out,
        )
    }

    /// A thief's take of the whole pool, at most `max` tasks from the back, into `out`.
    fn steal_all(&self, max: usize, out: &mut Vec<T>) -> usize {
        self.take_back(|len| len, max, out)
    }

    /// Takes `count(len)` tasks from the back, at most `max`, into `out`, oldest first.
    fn take_back(&self, count: impl FnOnce(usize) -> usize, max: usize, out: &mut Vec<T>) -> usize {
        let mut tasks = self.lock();
        let n = count(tasks.len()).min(max).min(tasks.len());
        let from = tasks.len() - n;
        out.extend(tasks.drain(from..));
        self.len.store(tasks.len() as u64, Ordering::Relaxed);
        drop(tasks);
        if n > 0 {
            // Relaxed: a count read once the run is over (after every worker has returned).
            self.given.fetch_add(n as u64, Ordering::Relaxed);
        }
        n
    }

    /// Puts stolen tasks in, at the owner's end, in order.
    fn put_front(&self, stolen: impl DoubleEndedIterator<Item = T>) {
        let mut tasks = self.lock();
        for task in stolen.rev() {
            tasks.push_front(task);
        }
        self.len.store(tasks.len() as u64, Ordering::Relaxed);
    }

    fn len(&self) -> usize {
        // Relaxed: a hint.
        self.len.load(Ordering::Relaxed) as usize
    }
}

/// What thieves see of a processor: its pool, and for a CPU worker its deque of spawned tasks.
struct Victim<D: Family, T: Send> {
    pool: Pool<T>,
    spawned: Option<D::Stealer<Job<T>>>,
}

impl<D: Family, T: Send> Prospect for Victim<D, T> {
    fn len(&self) -> usize {
        self.pool.len() + self.spawned.as_ref().map_or(0, |s| D::stealer_len(s))
    }
    fn oldest_depth(&self) -> Option<u32> {
        if self.pool.len() > 0 {
            Some(0)
        } else {
            self.spawned.as_ref().and_then(|s| D::oldest_tag(s))
        }
    }
}

/// What all processors of a run share.
struct Shared<'a, D: Family, T: Send, R> {
    runner: &'a R,
    /// Every processor's pool, and each CPU worker's deque of spawned tasks.
    victims: Vec<Victim<D, T>>,
    termination: Termination,
    /// Processors looking for work now (for victim sets' walk lengths).
    thieves: AtomicU64,
    /// Initial tasks not yet started anywhere: a batch processor leaves at 0.
    unstarted: AtomicU64,
    /// CPU workers: the first processors.
    cpus: usize,
    /// Initial tasks CPU workers have started: their speed, for batch sizes.
    cpu_initial: AtomicU64,
    /// Each batch processor's speed in its batches so far, initial tasks a second (`f64`
    /// bits; 0 until a batch is timed): when the CPU workers leave the last tasks to them.
    batch_rates: Vec<AtomicU64>,
    /// What a batch processor's first batch holds.
    first_batch: FirstBatch,
    start: Instant,
}

impl<'a, D: Family, T: Send, R> Shared<'a, D, T, R> {
    /// The start of a run of `tasks` initial tasks on `victims`, the first `cpus` of them CPU
    /// workers: nothing started, nobody searching.
    fn new(
        runner: &'a R,
        victims: Vec<Victim<D, T>>,
        cpus: usize,
        tasks: usize,
        first_batch: FirstBatch,
    ) -> Self {
        let batch_processors = victims.len() - cpus;
        Self {
            first_batch,
            runner,
            termination: Termination::new(victims.len(), tasks as u64),
            victims,
            thieves: AtomicU64::new(0),
            unstarted: AtomicU64::new(tasks as u64),
            cpus,
            cpu_initial: AtomicU64::new(0),
            batch_rates: (0..batch_processors).map(|_| AtomicU64::new(0)).collect(),
            start: Instant::now(),
        }
    }

    /// Initial tasks waiting in the pools (a hint: each pool's length as last written).
    fn waiting(&self) -> usize {
        self.victims.iter().map(|v| v.pool.len()).sum()
    }

    /// Whether a CPU worker that takes `per_task` for an initial task should start another
    /// (see the overview); yes while it has not timed one, or no batch has been timed.
    fn cpu_may_start_initial(&self, per_task: Option<Duration>) -> bool {
        let Some(per_task) = per_task else {
            return true;
        };
        // Relaxed: rates and lengths are hints; a stale one moves the moment the CPU workers
        // stop taking initial tasks, never whether a task runs.
        let rate: f64 = self
            .batch_rates
            .iter()
            .map(|r| f64::from_bits(r.load(Ordering::Relaxed)))
            .sum();
        !batch_processors_finish_first(self.waiting(), rate, per_task)
    }
}

/// Whether batch processors tracing `rate` initial tasks a second in all would finish the
/// `waiting` ones sooner than a CPU worker finishes one that takes it `per_task`; never when no
/// batch has been timed (`rate` 0).
fn batch_processors_finish_first(waiting: usize, rate: f64, per_task: Duration) -> bool {
    rate > 0.0 && (waiting as f64) < rate * per_task.as_secs_f64()
}

/// A CPU worker's own state while it runs: what it owns and what its searches use.
struct CpuWorker<'a, D: Family, T: Send> {
    /// Its deque of spawned tasks and the task it runs next.
    state: Owner<'a, D, T>,
    selector: VictimSelector,
    /// Spawned tasks taken by one steal.
    loot: Vec<Job<T>>,
    /// Its hybrid figures.
    extra: ProcessorTelemetry,
}

/// What a processor's thread hands back.
enum Done<L, B, E> {
    Cpu(L, ProcessorTelemetry),
    Batch(B, ProcessorTelemetry, Option<E>),
}

impl HybridStealing {
    /// The balancer's name for reports, e.g. `hybrid/abp/random/half`; a first batch of
    /// every waiting task adds `first=all`.
    ///
    /// ```
    /// use balancers::{FirstBatch, HybridStealing};
    ///
    /// assert_eq!(HybridStealing::default().name(), "hybrid/abp/random/half");
    /// let all = HybridStealing { first_batch: FirstBatch::All, ..HybridStealing::default() };
    /// assert_eq!(all.name(), "hybrid/abp/random/half/first=all");
    /// ```
    pub fn name(&self) -> String {
        let cpu = crate::Balancer::name(&self.cpu());
        let name = cpu.replacen("stealing", "hybrid", 1);
        match self.first_batch {
            FirstBatch::Own => name,
            FirstBatch::All => format!("{name}/first=all"),
        }
    }

    /// The CPU workers' side as the `stealing` balancer it works like.
    ///
    /// ```
    /// use balancers::{Balancer, HybridStealing};
    ///
    /// let cpu = HybridStealing::default().cpu();
    /// assert_eq!(cpu.name(), "stealing/abp/random/half");
    /// ```
    pub fn cpu(&self) -> WorkStealing {
        WorkStealing {
            deque: self.deque,
            victim: self.victim,
            amount: self.amount,
            ..WorkStealing::default()
        }
    }

    /// Runs `tasks` and all their descendants on `cpus` CPU worker threads and the batch
    /// processors `batch_runners` (each with a host thread of its own).
    ///
    /// # Errors
    /// When the operating system refuses to start a thread, as [`crate::Balancer::run`], or a
    /// batch fails: the other processors stop as they would for a thread that did not start,
    /// and the first failure is returned.
    ///
    /// # Panics
    /// When a task or a batch panics: the others stop, and the panic resumes here once every
    /// worker has returned.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use std::sync::atomic::{AtomicU64, Ordering};
    /// # use balancers::{BatchRunner, HybridStealing, Spawn, TaskRunner};
    /// # struct Chains { ran: AtomicU64 }
    /// # impl TaskRunner<u32> for Chains {
    /// #     type Local = ();
    /// #     fn local(&self, _worker: usize) {}
    /// #     fn run<S: Spawn<u32>>(&self, n: u32, _: &mut (), spawn: &mut S) {
    /// #         self.ran.fetch_add(1, Ordering::Relaxed);
    /// #         if n > 0 { spawn.spawn(n - 1); }
    /// #     }
    /// # }
    /// # struct Device<'a> { chains: &'a Chains, batches: Vec<usize> }
    /// # impl BatchRunner<u32> for Device<'_> {
    /// #     type Error = String;
    /// #     fn max_batch(&self) -> usize { 64 }
    /// #     fn run_batch(&mut self, batch: &[u32]) -> Result<(), String> {
    /// #         for &n in batch { self.chains.ran.fetch_add(u64::from(n) + 1, Ordering::Relaxed); }
    /// #         self.batches.push(batch.len());
    /// #         Ok(())
    /// #     }
    /// # }
    /// # let chains = Chains { ran: AtomicU64::new(0) };
    /// # let tasks: Vec<u32> = (0..100).collect();
    /// # let device = Device { chains: &chains, batches: Vec::new() };
    /// let outcome = HybridStealing::default()
    ///     .run(NonZeroUsize::new(2).unwrap(), &tasks, &chains, vec![device])?;
    /// assert_eq!(chains.ran.load(Ordering::Relaxed), (1..=100).sum::<u64>());
    /// // Initial tasks started on CPU workers and in batches add up to all of them.
    /// let initial: u64 = outcome.telemetry.workers.iter().map(|w| w.initial_tasks).sum();
    /// assert_eq!(initial, 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run<T, R, B>(
        &self,
        cpus: NonZeroUsize,
        tasks: &[T],
        runner: &R,
        batch_runners: Vec<B>,
    ) -> Result<HybridOutcome<R::Local, B>, HybridError<B::Error>>
    where
        T: Clone + Send + Sync,
        R: TaskRunner<T>,
        B: BatchRunner<T>,
    {
        match self.deque {
            DequeKind::Abp => {
                self.run_with::<deque::Abp, T, R, B>(cpus, tasks, runner, batch_runners)
            }
            DequeKind::Locked => {
                self.run_with::<deque::Locked, T, R, B>(cpus, tasks, runner, batch_runners)
            }
        }
    }

    /// [`run`](Self::run) with CPU workers' deques of the family `D`: the tasks dealt, every
    /// processor's thread run, and what they hand back gathered.
    fn run_with<D: Family, T, R, B>(
        &self,
        cpus: NonZeroUsize,
        tasks: &[T],
        runner: &R,
        batch_runners: Vec<B>,
    ) -> Result<HybridOutcome<R::Local, B>, HybridError<B::Error>>
    where
        T: Clone + Send + Sync,
        R: TaskRunner<T>,
        B: BatchRunner<T>,
    {
        let p = cpus.get();
        let g = batch_runners.len();
        let pools = deal_pools(tasks, p, g);
        let dealt: Vec<u64> = pools.iter().map(|q| q.len() as u64).collect();
        // Each CPU worker's deque: the owner's end for its thread to take, the thieves' end
        // in what all processors see.
        let (owners, stealers): (Vec<_>, Vec<_>) = (0..p)
            .map(|_| {
                let (owner, stealer) = D::new::<Job<T>>(crate::stealing::CAPACITY);
                (Mutex::new(Some(owner)), stealer)
            })
            .unzip();
        let victims = victims::<D, T>(pools, stealers);
        let shared = Shared::new(runner, victims, p, tasks.len(), self.first_batch);
        let batch_runners: Vec<Mutex<Option<B>>> = batch_runners
            .into_iter()
            .map(|b| Mutex::new(Some(b)))
            .collect();
        let processors = NonZeroUsize::new(p + g).expect("at least one CPU worker");
        let outcome = run_workers(self.name(), processors, |me, telemetry, stop| {
            if me < p {
                let owner = take_once(&owners[me], "each CPU worker takes its own deque once");
                let (local, extra) = self.cpu_worker(me, owner, &shared, stop, telemetry);
                Done::Cpu(local, extra)
            } else {
                let mut batch = take_once(
                    &batch_runners[me - p],
                    "each batch processor takes its runner once",
                );
                let (extra, error) = batch_processor(me, &mut batch, &shared, stop, telemetry);
                Done::Batch(batch, extra, error)
            }
        })
        .map_err(HybridError::Spawn)?;
        gather(outcome, &dealt, &shared.victims)
    }

    /// One CPU worker's whole run.
    fn cpu_worker<D: Family, T, R>(
        &self,
        me: usize,
        owner: D::Worker<Job<T>>,
        shared: &Shared<'_, D, T, R>,
        stop: &Stop,
        telemetry: &mut WorkerTelemetry,
    ) -> (R::Local, ProcessorTelemetry)
    where
        T: Clone + Send + Sync,
        R: TaskRunner<T>,
    {
        let mut local = shared.runner.local(me);
        let mut worker = CpuWorker {
            // The initial tasks wait in the shared pool, not in a backlog of the worker's own.
            state: Owner::new(
                me,
                Order::DepthFirst,
                owner,
                Vec::new(),
                &shared.termination,
            ),
            selector: VictimSelector::new(self.victim, me, shared.victims.len()),
            loot: Vec::new(),
            extra: ProcessorTelemetry::new(ProcessorKind::Cpu),
        };
        let mut finished = 0u64;
        let mut initial = Vec::with_capacity(1);
        // When it started its first initial task: its time per initial task, with what they
        // spawned, is the time since over the number started.
        let mut first_initial: Option<Instant> = None;
        while !stop.requested() {
            // Whether it may start an initial task now (see the overview), or only spawned
            // ones: asked only where it would take one, since a spawned task always runs.
            let mut take_initial = true;
            let job = worker.state.newest().or_else(|| {
                let started = u32::try_from(telemetry.initial_tasks.max(1)).unwrap_or(u32::MAX);
                let per_task = first_initial.map(|t| t.elapsed() / started);
                take_initial = shared.cpu_may_start_initial(per_task);
                if !take_initial {
                    return None;
                }
                shared.victims[me].pool.take_front(1, &mut initial);
                initial.pop().map(|task| Job { task, depth: 0 })
            });
            let job = match job {
                Some(job) => job,
                None => {
                    // The last task ended when the search began.
                    worker.extra.last_task_end = shared.start.elapsed();
                    match self.steal(&mut worker, take_initial, shared, stop, telemetry) {
                        Some(job) => job,
                        None => break,
                    }
                }
            };
            if job.depth == 0 {
                first_initial.get_or_insert_with(Instant::now);
                telemetry.initial_tasks += 1;
                // Relaxed: counts for batch processors, which decide nothing on them but
                // their batch sizes and when to leave; a late read only delays either.
                shared.cpu_initial.fetch_add(1, Ordering::Relaxed);
                shared.unstarted.fetch_sub(1, Ordering::Relaxed);
            }
            telemetry.tasks += 1;
            worker.state.depth = job.depth + 1;
            shared.runner.run(job.task, &mut local, &mut worker.state);
            finished += 1;
            shared.termination.finished(me, finished);
        }
        telemetry.spawned = worker.state.created;
        telemetry.peak_queued = Some(worker.state.peak);
        (local, worker.extra)
    }

    /// A CPU worker looks for work: initial tasks from any processor's pool (where
    /// `take_initial`), or spawned tasks from a CPU worker's deque; returns the task to run
    /// next, or `None` when the run is over or `stop` is requested.
    fn steal<D: Family, T, R>(
        &self,
        worker: &mut CpuWorker<'_, D, T>,
        take_initial: bool,
        shared: &Shared<'_, D, T, R>,
        stop: &Stop,
        telemetry: &mut WorkerTelemetry,
    ) -> Option<Job<T>>
    where
        T: Send,
    {
        let CpuWorker {
            state,
            selector,
            loot,
            extra,
        } = worker;
        let max = self.amount.at_most();
        let mut initial = Vec::new();
        let search = Search {
            workers: shared.victims.len(),
            thieves: &shared.thieves,
            termination: &shared.termination,
            stop,
        };
        search.run(selector, telemetry, |selector, telemetry| {
            let victim = selector.choose(&shared.victims, &shared.thieves);
            let v = &shared.victims[victim];
            telemetry.steal_attempts += 1;
            // One initial task at a time from a batch processor (see the overview).
            let amount = if victim < shared.cpus {
                self.amount
            } else {
                StealAmount::One
            };
            let n = if take_initial {
                v.pool.steal_back(amount, max, &mut initial)
            } else {
                0
            };
            if n > 0 {
                telemetry.steal_successes += 1;
                telemetry.tasks_stolen += n as u64;
                extra.taken += n as u64;
                let mut stolen = initial.drain(..);
                let found = stolen.next().map(|task| Job { task, depth: 0 });
                shared.victims[state.me].pool.put_front(stolen);
                return found;
            }
            let attempt = v
                .spawned
                .as_ref()
                .map_or(Steal::Empty, |s| D::steal_into(s, loot, max));
            state.take_loot(attempt, loot, selector, telemetry)
        })
    }
}

/// One batch processor's whole run: batches from its own pool, then from other processors'
/// pools, until every pool is empty, `stop` is requested or a batch fails (which stops the
/// others, and is handed back).
fn batch_processor<D: Family, T, R, B>(
    me: usize,
    runner: &mut B,
    shared: &Shared<'_, D, T, R>,
    stop: &Stop,
    telemetry: &mut WorkerTelemetry,
) -> (ProcessorTelemetry, Option<B::Error>)
where
    T: Clone + Send + Sync,
    B: BatchRunner<T>,
{
    let mut extra = ProcessorTelemetry::new(ProcessorKind::Batch);
    let mut rng = XorShift::new(me as u64);
    let mut batch = Vec::new();
    let mut finished = 0u64;
    let mut sizer = BatchSizer::new(runner.max_batch());
    while !stop.requested() {
        let size = sizer.size(
            shared.waiting(),
            &shared.cpu_initial,
            shared.start.elapsed(),
        );
        batch.clear();
        shared.victims[me].pool.take_front(size, &mut batch);
        // The first batch is this processor's own pool (see the overview), unless it is empty
        // or the first batch is to hold every waiting task.
        let take_all = !sizer.timed() && shared.first_batch == FirstBatch::All;
        if batch.len() < size && (sizer.timed() || batch.is_empty() || take_all) {
            let searching = Instant::now();
            // The other processors' pools, in turn from a random one, half of each (all of
            // each for a first batch of all; for a CPU worker's, what it has not begun), until
            // the batch is full.
            let others = shared.victims.len();
            let start = rng.below(others);
            for k in 0..others {
                let v = (start + k) % others;
                if v == me || batch.len() >= size {
                    continue;
                }
                telemetry.steal_attempts += 1;
                let want = size - batch.len();
                let n = if take_all {
                    shared.victims[v].pool.steal_all(want, &mut batch)
                } else {
                    shared.victims[v]
                        .pool
                        .steal_back(StealAmount::Half, want, &mut batch)
                };
                if n > 0 {
                    telemetry.steal_successes += 1;
                    telemetry.tasks_stolen += n as u64;
                    extra.taken += n as u64;
                }
            }
            telemetry.idle += searching.elapsed();
        }
        if batch.is_empty() {
            // Relaxed: see the CPU workers' decrement; initial tasks are never created, so
            // once all have been started nothing more can come this processor's way.
            if shared.unstarted.load(Ordering::Relaxed) == 0 {
                break;
            }
            // Some are in a thief's hands between two pools, or in a pool that filled
            // behind the search: look again shortly.
            let waiting = Instant::now();
            thread::yield_now();
            telemetry.idle += waiting.elapsed();
            continue;
        }
        // Relaxed: as above.
        shared
            .unstarted
            .fetch_sub(batch.len() as u64, Ordering::Relaxed);
        let began = shared.start.elapsed();
        if let Err(error) = runner.run_batch(&batch) {
            stop.request();
            return (extra, Some(error));
        }
        let took = shared.start.elapsed().saturating_sub(began);
        sizer.ran(batch.len(), took);
        extra.batches.push(BatchRecord {
            tasks: batch.len() as u64,
            began,
            took,
        });
        // Relaxed: a hint (see `Shared::cpu_may_start_initial`).
        shared.batch_rates[me - shared.cpus].store(sizer.rate().to_bits(), Ordering::Relaxed);
        telemetry.tasks += batch.len() as u64;
        telemetry.initial_tasks += batch.len() as u64;
        finished += batch.len() as u64;
        shared.termination.finished(me, finished);
        extra.last_task_end = shared.start.elapsed();
    }
    (extra, None)
}

/// The smallest batch, as a part of the largest (see the module's overview).
const SMALLEST_BATCH_PART: usize = 8;

/// How many initial tasks a batch processor takes next (see the module's overview).
#[derive(Debug)]
pub(crate) struct BatchSizer {
    max: usize,
    /// Initial tasks run in batches so far, and the time they took.
    tasks: u64,
    time: Duration,
}

impl BatchSizer {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            tasks: 0,
            time: Duration::ZERO,
        }
    }

    /// Initial tasks a second in its batches so far; 0 before one has been timed.
    pub(crate) fn rate(&self) -> f64 {
        if self.timed() {
            self.tasks as f64 / self.time.as_secs_f64()
        } else {
            0.0
        }
    }

    /// Whether a batch has been timed.
    pub(crate) fn timed(&self) -> bool {
        self.tasks > 0 && !self.time.is_zero()
    }

    /// A batch of `tasks` took `time`.
    pub(crate) fn ran(&mut self, tasks: usize, time: Duration) {
        self.tasks += tasks as u64;
        self.time += time;
    }

    /// The next batch: the largest until one has been timed; then half of this processor's
    /// share of the `remaining` initial tasks, its share being its speed (tasks a second in
    /// its batches) over its speed and the CPU workers' (`cpu_initial` initial tasks started
    /// in `elapsed`), at least an eighth of the largest (and one) and at most the largest.
    pub(crate) fn size(
        &self,
        remaining: usize,
        cpu_initial: &AtomicU64,
        elapsed: Duration,
    ) -> usize {
        if !self.timed() {
            return self.max;
        }
        let own = self.rate();
        // Relaxed: a rate, a hint.
        let cpu = cpu_initial.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64().max(1e-9);
        let share = own / (own + cpu);
        let guided = (remaining as f64 * share / 2.0).ceil() as usize;
        guided.clamp((self.max / SMALLEST_BATCH_PART).max(1), self.max)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn each_batch_processor_is_dealt_as_much_as_all_cpu_workers() {
        let owners: Vec<usize> = (0..12).map(|i| deal(i, 2, 2)).collect();
        assert_eq!(owners, [0, 1, 2, 2, 3, 3, 0, 1, 2, 2, 3, 3]);
        assert!((0..10).all(|i| deal(i, 3, 0) == i % 3));
    }

    #[test]
    fn cpu_workers_leave_the_last_tasks_to_faster_batch_processors() {
        let ms = Duration::from_millis;
        // 1,000 tasks a second: 9 waiting take 9 ms, so a 10 ms task would end last.
        assert!(batch_processors_finish_first(9, 1000.0, ms(10)));
        assert!(!batch_processors_finish_first(11, 1000.0, ms(10)));
        // No batch timed yet: the CPU workers go on.
        assert!(!batch_processors_finish_first(0, 0.0, ms(10)));
    }

    #[test]
    fn batches_shrink_with_what_is_left() {
        let mut sizer = BatchSizer::new(100);
        let cpu = AtomicU64::new(0);
        assert_eq!(
            sizer.size(1000, &cpu, Duration::from_secs(1)),
            100,
            "untimed: the largest"
        );
        // 100 tasks in 1 s, against CPU workers that started 100 in 1 s: half the speed.
        sizer.ran(100, Duration::from_secs(1));
        cpu.store(100, Ordering::Relaxed);
        assert_eq!(sizer.size(1000, &cpu, Duration::from_secs(1)), 100);
        assert_eq!(sizer.size(120, &cpu, Duration::from_secs(1)), 30);
        // Never under an eighth of the largest: the last tasks in one batch.
        assert_eq!(sizer.size(40, &cpu, Duration::from_secs(1)), 12);
        assert_eq!(sizer.size(1, &cpu, Duration::from_secs(1)), 12);
        assert_eq!(sizer.size(0, &cpu, Duration::from_secs(1)), 12);
        let mut small = BatchSizer::new(3);
        small.ran(3, Duration::from_secs(1));
        assert_eq!(small.size(0, &cpu, Duration::from_secs(1)), 1);
    }
}
