//! Tiles between processes: one frame over several *ranks* (MPI processes, on one machine or
//! many), each running a [`Balancer`](crate::Balancer) on its own worker threads.
//!
//! The unit that moves between ranks is an initial task (a tile), named by its index; the
//! tasks a tile spawns stay on the rank that runs it. Three modes split the tiles:
//!
//! - [`ClusterMode::Static`]: tile `i` belongs to rank `i mod ranks` (interleaved, as
//!   [`Assignment::Interleaved`](crate::Assignment) deals tiles to threads); nothing moves.
//! - [`ClusterMode::Counter`]: rank 0 keeps one counter over the tiles; a rank whose tiles
//!   have all begun asks it for the next `chunk`. Rank 0's service loop answers (see
//!   [below](#why-a-service-loop)), and takes its own chunks from the counter directly.
//! - [`ClusterMode::Stealing`]: each rank starts with its static share; a rank whose tiles
//!   have all begun asks a random other rank, which hands over half of the tiles it has not
//!   begun (rounded up).
//!
//! # One rank: a render thread and a service loop
//!
//! A rank's tiles not yet begun wait in its *pool*. The rank's render thread takes a batch from
//! the front of the pool, runs the local balancer over it to completion, and takes the next:
//! under `static` and `counter` all the pool holds (the rank's share, or the chunk it was
//! given), under `stealing` at most an eighth of it, but at least one tile per worker thread,
//! so that most of what a rank holds stays where a thief can take it while the rank renders.
//! The rank's own thread runs the *service loop*: it answers other ranks' requests (from the
//! back of the pool), asks for tiles when the pool runs dry (before the render thread runs out,
//! so that the reply's latency hides behind the batch in hand) and, under `stealing`, reports
//! finished tiles. It alone talks to the [`Transport`], so MPI is only ever called from one
//! thread, the one that initialised it (`MPI_THREAD_FUNNELED`).
//!
//! # Why a service loop
//!
//! The counter could live in an MPI window (one-sided `MPI_Fetch_and_op`), but the `mpi`
//! crate's safe interface has no one-sided calls, and stealing needs a rank that answers
//! anyway (a thief cannot take half of another rank's pool with one atomic operation). One
//! loop that polls for messages, sleeping [`POLL`] when there are none, serves both, costs a
//! fraction of a core, and never spins inside MPI where a worker thread needs the core.
//!
//! # When the frame is over
//!
//! `static`: when every rank has rendered its share. `counter`: a rank is over once the counter
//! has answered it with nothing and its pool is rendered. `stealing` needs a protocol, because a
//! rank that holds no tile may still be sent some:
//!
//! Tiles are never created after the start: there are exactly `tiles` of them, and each is
//! held by exactly one rank at a time (in its pool, in the batch it renders, or in a steal's
//! reply on its way to the thief: a victim takes tiles out of its pool in the step that puts
//! them in the reply, and the thief puts them in its pool when it receives it). The rank that
//! renders a tile counts it finished once the batch returns and reports the count to rank 0,
//! which adds up the reports and, when the sum reaches `tiles`, tells every rank the frame is
//! over ([`Message::AllDone`]).
//!
//! - It cannot end early: a tile is rendered once, by the one rank that holds it, and counted
//!   once, so a sum of `tiles` means every tile is finished: none waits in a pool, a batch or a
//!   message.
//! - It cannot hang: while a tile is unfinished some rank holds it, or a message carrying it
//!   is on its way and will be delivered; a rank renders everything its pool receives, so the
//!   tile is finished in finite time and reported; rank 0's sum then reaches `tiles`. No rank
//!   waits for ever for an answer either: every request is answered, with tiles or
//!   [`Message::NoTiles`], also after the end, until the closing barrier.
//!
//! The closing barrier (every mode): a rank enters it once it is over, its render thread has
//! ended and it has no request unanswered, and it goes on answering requests (with nothing)
//! while it waits. When the barrier completes every rank has had the answer to each of its
//! requests, so no message is left in flight when the ranks go on to reduce their films.

mod message;
mod pool;
#[cfg(test)]
mod tests;

pub use message::Message;

use std::num::NonZeroUsize;
use std::thread;
use std::time::{Duration, Instant};

use crate::victim::XorShift;
use pool::Pool;

/// How tiles are split between ranks.
///
/// ```
/// # use std::sync::Arc;
/// # use std::sync::atomic::{AtomicUsize, Ordering};
/// # use std::sync::mpsc::{self, Receiver, Sender};
/// # use balancers::cluster::{Message, Transport};
/// #
/// # /// One rank's end of an in-process network: ranks are threads, messages go through
/// # /// channels.
/// # struct Loopback {
/// #     rank: usize,
/// #     to: Vec<Sender<(usize, Message)>>,
/// #     from: Receiver<(usize, Message)>,
/// #     /// Ranks that have entered the closing barrier.
/// #     barrier: Arc<AtomicUsize>,
/// # }
/// #
/// # impl Transport for Loopback {
/// #     fn rank(&self) -> usize {
/// #         self.rank
/// #     }
/// #     fn ranks(&self) -> usize {
/// #         self.to.len()
/// #     }
/// #     fn send(&mut self, to: usize, message: Message) {
/// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
/// #     }
/// #     fn receive(&mut self) -> Option<(usize, Message)> {
/// #         self.from.try_recv().ok()
/// #     }
/// #     fn enter_barrier(&mut self) {
/// #         self.barrier.fetch_add(1, Ordering::SeqCst);
/// #     }
/// #     fn barrier_done(&mut self) -> bool {
/// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
/// #     }
/// # }
/// #
/// # /// The ends of a network of `ranks` ranks, rank 0 first.
/// # fn network(ranks: usize) -> Vec<Loopback> {
/// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
/// #     let barrier = Arc::new(AtomicUsize::new(0));
/// #     let end = |(rank, from)| {
/// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
/// #         Loopback { rank, to, from, barrier }
/// #     };
/// #     from.into_iter().enumerate().map(end).collect()
/// # }
/// # use std::convert::Infallible;
/// # use std::num::NonZeroUsize;
/// # use std::thread;
/// # use balancers::cluster::{ClusterMode, RankTelemetry, run_rank};
/// #
/// # /// A frame of `tiles` tiles on `ranks` ranks, each a thread: each rank's account, and the
/// # /// tiles it rendered.
/// # fn frame(mode: ClusterMode, ranks: usize, tiles: u32) -> Vec<(RankTelemetry, Vec<u32>)> {
/// #     let rank = move |mut transport: Loopback| {
/// #         let mut rendered = Vec::new();
/// #         let render = |batch: &[u32]| Ok::<(), Infallible>(rendered.extend_from_slice(batch));
/// #         let telemetry = run_rank(mode, &mut transport, tiles, NonZeroUsize::MIN, render);
/// #         (telemetry.unwrap(), rendered)
/// #     };
/// #     let threads: Vec<_> = network(ranks)
/// #         .into_iter()
/// #         .map(|t| thread::spawn(move || rank(t)))
/// #         .collect();
/// #     threads.into_iter().map(|t| t.join().unwrap()).collect()
/// # }
/// // `frame` runs a frame on ranks that are threads, and gives each rank's tiles.
/// let chunk = NonZeroUsize::new(4).unwrap();
/// for mode in [ClusterMode::Static, ClusterMode::Counter { chunk }, ClusterMode::Stealing] {
///     let mut tiles: Vec<u32> = frame(mode, 3, 50).into_iter().flat_map(|(_, t)| t).collect();
///     tiles.sort();
///     assert_eq!(tiles, (0..50).collect::<Vec<_>>(), "{}: every tile once", mode.name());
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterMode {
    /// Tile `i` to rank `i mod ranks`, dealt before the start; nothing moves.
    Static,
    /// Rank 0 hands out `chunk` tiles at a time to whichever rank asks.
    Counter {
        /// Tiles per request (at least 1).
        chunk: NonZeroUsize,
    },
    /// Each rank starts with its static share; a rank that runs dry steals half of a random
    /// other rank's tiles not yet begun.
    Stealing,
}

impl ClusterMode {
    /// A short name for reports: `static`, `counter/chunk=N` or `stealing/half`.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use balancers::cluster::ClusterMode;
    ///
    /// assert_eq!(ClusterMode::Static.name(), "static");
    /// let chunk = NonZeroUsize::new(4).unwrap();
    /// assert_eq!(ClusterMode::Counter { chunk }.name(), "counter/chunk=4");
    /// assert_eq!(ClusterMode::Stealing.name(), "stealing/half");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Self::Static => "static".into(),
            Self::Counter { chunk } => format!("counter/chunk={chunk}"),
            Self::Stealing => "stealing/half".into(),
        }
    }
}

/// How a rank talks to the others. Implemented over MPI by the renderer; in-process for this
/// crate's tests.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::mpsc::{self, Receiver, Sender};
/// use balancers::cluster::{Message, Transport};
///
/// /// One rank's end of an in-process network: ranks are threads, messages go through
/// /// channels.
/// struct Loopback {
///     rank: usize,
///     to: Vec<Sender<(usize, Message)>>,
///     from: Receiver<(usize, Message)>,
///     /// Ranks that have entered the closing barrier.
///     barrier: Arc<AtomicUsize>,
/// }
///
/// impl Transport for Loopback {
///     fn rank(&self) -> usize {
///         self.rank
///     }
///     fn ranks(&self) -> usize {
///         self.to.len()
///     }
///     fn send(&mut self, to: usize, message: Message) {
///         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
///     }
///     fn receive(&mut self) -> Option<(usize, Message)> {
///         self.from.try_recv().ok()
///     }
///     fn enter_barrier(&mut self) {
///         self.barrier.fetch_add(1, Ordering::SeqCst);
///     }
///     fn barrier_done(&mut self) -> bool {
///         self.barrier.load(Ordering::SeqCst) == self.to.len()
///     }
/// }
///
/// /// The ends of a network of `ranks` ranks, rank 0 first.
/// fn network(ranks: usize) -> Vec<Loopback> {
///     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
///     let barrier = Arc::new(AtomicUsize::new(0));
///     let end = |(rank, from)| {
///         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
///         Loopback { rank, to, from, barrier }
///     };
///     from.into_iter().enumerate().map(end).collect()
/// }
///
/// let mut ranks = network(2);
/// ranks[0].send(1, Message::Request);
/// assert_eq!(ranks[1].receive(), Some((0, Message::Request)));
/// ```
pub trait Transport {
    /// This rank's number, from 0.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::sync::atomic::{AtomicUsize, Ordering};
    /// # use std::sync::mpsc::{self, Receiver, Sender};
    /// # use balancers::cluster::{Message, Transport};
    /// #
    /// # /// One rank's end of an in-process network: ranks are threads, messages go through
    /// # /// channels.
    /// # struct Loopback {
    /// #     rank: usize,
    /// #     to: Vec<Sender<(usize, Message)>>,
    /// #     from: Receiver<(usize, Message)>,
    /// #     /// Ranks that have entered the closing barrier.
    /// #     barrier: Arc<AtomicUsize>,
    /// # }
    /// #
    /// # impl Transport for Loopback {
    /// #     fn rank(&self) -> usize {
    /// #         self.rank
    /// #     }
    /// #     fn ranks(&self) -> usize {
    /// #         self.to.len()
    /// #     }
    /// #     fn send(&mut self, to: usize, message: Message) {
    /// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
    /// #     }
    /// #     fn receive(&mut self) -> Option<(usize, Message)> {
    /// #         self.from.try_recv().ok()
    /// #     }
    /// #     fn enter_barrier(&mut self) {
    /// #         self.barrier.fetch_add(1, Ordering::SeqCst);
    /// #     }
    /// #     fn barrier_done(&mut self) -> bool {
    /// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
    /// #     }
    /// # }
    /// #
    /// # /// The ends of a network of `ranks` ranks, rank 0 first.
    /// # fn network(ranks: usize) -> Vec<Loopback> {
    /// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
    /// #     let barrier = Arc::new(AtomicUsize::new(0));
    /// #     let end = |(rank, from)| {
    /// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
    /// #         Loopback { rank, to, from, barrier }
    /// #     };
    /// #     from.into_iter().enumerate().map(end).collect()
    /// # }
    /// let ranks = network(3);
    /// assert_eq!(ranks[2].rank(), 2);
    /// ```
    fn rank(&self) -> usize;
    /// How many ranks there are.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::sync::atomic::{AtomicUsize, Ordering};
    /// # use std::sync::mpsc::{self, Receiver, Sender};
    /// # use balancers::cluster::{Message, Transport};
    /// #
    /// # /// One rank's end of an in-process network: ranks are threads, messages go through
    /// # /// channels.
    /// # struct Loopback {
    /// #     rank: usize,
    /// #     to: Vec<Sender<(usize, Message)>>,
    /// #     from: Receiver<(usize, Message)>,
    /// #     /// Ranks that have entered the closing barrier.
    /// #     barrier: Arc<AtomicUsize>,
    /// # }
    /// #
    /// # impl Transport for Loopback {
    /// #     fn rank(&self) -> usize {
    /// #         self.rank
    /// #     }
    /// #     fn ranks(&self) -> usize {
    /// #         self.to.len()
    /// #     }
    /// #     fn send(&mut self, to: usize, message: Message) {
    /// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
    /// #     }
    /// #     fn receive(&mut self) -> Option<(usize, Message)> {
    /// #         self.from.try_recv().ok()
    /// #     }
    /// #     fn enter_barrier(&mut self) {
    /// #         self.barrier.fetch_add(1, Ordering::SeqCst);
    /// #     }
    /// #     fn barrier_done(&mut self) -> bool {
    /// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
    /// #     }
    /// # }
    /// #
    /// # /// The ends of a network of `ranks` ranks, rank 0 first.
    /// # fn network(ranks: usize) -> Vec<Loopback> {
    /// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
    /// #     let barrier = Arc::new(AtomicUsize::new(0));
    /// #     let end = |(rank, from)| {
    /// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
    /// #         Loopback { rank, to, from, barrier }
    /// #     };
    /// #     from.into_iter().enumerate().map(end).collect()
    /// # }
    /// let ranks = network(3);
    /// assert!(ranks.iter().all(|r| r.ranks() == 3));
    /// ```
    fn ranks(&self) -> usize;
    /// Sends `message` to rank `to` without waiting for it to be received.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::sync::atomic::{AtomicUsize, Ordering};
    /// # use std::sync::mpsc::{self, Receiver, Sender};
    /// # use balancers::cluster::{Message, Transport};
    /// #
    /// # /// One rank's end of an in-process network: ranks are threads, messages go through
    /// # /// channels.
    /// # struct Loopback {
    /// #     rank: usize,
    /// #     to: Vec<Sender<(usize, Message)>>,
    /// #     from: Receiver<(usize, Message)>,
    /// #     /// Ranks that have entered the closing barrier.
    /// #     barrier: Arc<AtomicUsize>,
    /// # }
    /// #
    /// # impl Transport for Loopback {
    /// #     fn rank(&self) -> usize {
    /// #         self.rank
    /// #     }
    /// #     fn ranks(&self) -> usize {
    /// #         self.to.len()
    /// #     }
    /// #     fn send(&mut self, to: usize, message: Message) {
    /// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
    /// #     }
    /// #     fn receive(&mut self) -> Option<(usize, Message)> {
    /// #         self.from.try_recv().ok()
    /// #     }
    /// #     fn enter_barrier(&mut self) {
    /// #         self.barrier.fetch_add(1, Ordering::SeqCst);
    /// #     }
    /// #     fn barrier_done(&mut self) -> bool {
    /// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
    /// #     }
    /// # }
    /// #
    /// # /// The ends of a network of `ranks` ranks, rank 0 first.
    /// # fn network(ranks: usize) -> Vec<Loopback> {
    /// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
    /// #     let barrier = Arc::new(AtomicUsize::new(0));
    /// #     let end = |(rank, from)| {
    /// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
    /// #         Loopback { rank, to, from, barrier }
    /// #     };
    /// #     from.into_iter().enumerate().map(end).collect()
    /// # }
    /// let mut ranks = network(2);
    /// ranks[1].send(0, Message::Finished(3));
    /// assert_eq!(ranks[0].receive(), Some((1, Message::Finished(3))));
    /// ```
    fn send(&mut self, to: usize, message: Message);
    /// A message that has arrived, with its sender, if there is one; never waits.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::sync::atomic::{AtomicUsize, Ordering};
    /// # use std::sync::mpsc::{self, Receiver, Sender};
    /// # use balancers::cluster::{Message, Transport};
    /// #
    /// # /// One rank's end of an in-process network: ranks are threads, messages go through
    /// # /// channels.
    /// # struct Loopback {
    /// #     rank: usize,
    /// #     to: Vec<Sender<(usize, Message)>>,
    /// #     from: Receiver<(usize, Message)>,
    /// #     /// Ranks that have entered the closing barrier.
    /// #     barrier: Arc<AtomicUsize>,
    /// # }
    /// #
    /// # impl Transport for Loopback {
    /// #     fn rank(&self) -> usize {
    /// #         self.rank
    /// #     }
    /// #     fn ranks(&self) -> usize {
    /// #         self.to.len()
    /// #     }
    /// #     fn send(&mut self, to: usize, message: Message) {
    /// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
    /// #     }
    /// #     fn receive(&mut self) -> Option<(usize, Message)> {
    /// #         self.from.try_recv().ok()
    /// #     }
    /// #     fn enter_barrier(&mut self) {
    /// #         self.barrier.fetch_add(1, Ordering::SeqCst);
    /// #     }
    /// #     fn barrier_done(&mut self) -> bool {
    /// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
    /// #     }
    /// # }
    /// #
    /// # /// The ends of a network of `ranks` ranks, rank 0 first.
    /// # fn network(ranks: usize) -> Vec<Loopback> {
    /// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
    /// #     let barrier = Arc::new(AtomicUsize::new(0));
    /// #     let end = |(rank, from)| {
    /// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
    /// #         Loopback { rank, to, from, barrier }
    /// #     };
    /// #     from.into_iter().enumerate().map(end).collect()
    /// # }
    /// let mut ranks = network(2);
    /// assert_eq!(ranks[1].receive(), None, "nothing has been sent");
    /// ranks[0].send(1, Message::NoTiles);
    /// assert_eq!(ranks[1].receive(), Some((0, Message::NoTiles)));
    /// ```
    fn receive(&mut self) -> Option<(usize, Message)>;
    /// Enters the closing barrier, which completes once every rank has entered it.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::sync::atomic::{AtomicUsize, Ordering};
    /// # use std::sync::mpsc::{self, Receiver, Sender};
    /// # use balancers::cluster::{Message, Transport};
    /// #
    /// # /// One rank's end of an in-process network: ranks are threads, messages go through
    /// # /// channels.
    /// # struct Loopback {
    /// #     rank: usize,
    /// #     to: Vec<Sender<(usize, Message)>>,
    /// #     from: Receiver<(usize, Message)>,
    /// #     /// Ranks that have entered the closing barrier.
    /// #     barrier: Arc<AtomicUsize>,
    /// # }
    /// #
    /// # impl Transport for Loopback {
    /// #     fn rank(&self) -> usize {
    /// #         self.rank
    /// #     }
    /// #     fn ranks(&self) -> usize {
    /// #         self.to.len()
    /// #     }
    /// #     fn send(&mut self, to: usize, message: Message) {
    /// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
    /// #     }
    /// #     fn receive(&mut self) -> Option<(usize, Message)> {
    /// #         self.from.try_recv().ok()
    /// #     }
    /// #     fn enter_barrier(&mut self) {
    /// #         self.barrier.fetch_add(1, Ordering::SeqCst);
    /// #     }
    /// #     fn barrier_done(&mut self) -> bool {
    /// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
    /// #     }
    /// # }
    /// #
    /// # /// The ends of a network of `ranks` ranks, rank 0 first.
    /// # fn network(ranks: usize) -> Vec<Loopback> {
    /// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
    /// #     let barrier = Arc::new(AtomicUsize::new(0));
    /// #     let end = |(rank, from)| {
    /// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
    /// #         Loopback { rank, to, from, barrier }
    /// #     };
    /// #     from.into_iter().enumerate().map(end).collect()
    /// # }
    /// let mut ranks = network(2);
    /// ranks[0].enter_barrier();
    /// assert!(!ranks[0].barrier_done(), "rank 1 has not entered it");
    /// ranks[1].enter_barrier();
    /// assert!(ranks[0].barrier_done());
    /// ```
    fn enter_barrier(&mut self);
    /// Whether the closing barrier has completed; never waits.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::sync::atomic::{AtomicUsize, Ordering};
    /// # use std::sync::mpsc::{self, Receiver, Sender};
    /// # use balancers::cluster::{Message, Transport};
    /// #
    /// # /// One rank's end of an in-process network: ranks are threads, messages go through
    /// # /// channels.
    /// # struct Loopback {
    /// #     rank: usize,
    /// #     to: Vec<Sender<(usize, Message)>>,
    /// #     from: Receiver<(usize, Message)>,
    /// #     /// Ranks that have entered the closing barrier.
    /// #     barrier: Arc<AtomicUsize>,
    /// # }
    /// #
    /// # impl Transport for Loopback {
    /// #     fn rank(&self) -> usize {
    /// #         self.rank
    /// #     }
    /// #     fn ranks(&self) -> usize {
    /// #         self.to.len()
    /// #     }
    /// #     fn send(&mut self, to: usize, message: Message) {
    /// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
    /// #     }
    /// #     fn receive(&mut self) -> Option<(usize, Message)> {
    /// #         self.from.try_recv().ok()
    /// #     }
    /// #     fn enter_barrier(&mut self) {
    /// #         self.barrier.fetch_add(1, Ordering::SeqCst);
    /// #     }
    /// #     fn barrier_done(&mut self) -> bool {
    /// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
    /// #     }
    /// # }
    /// #
    /// # /// The ends of a network of `ranks` ranks, rank 0 first.
    /// # fn network(ranks: usize) -> Vec<Loopback> {
    /// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
    /// #     let barrier = Arc::new(AtomicUsize::new(0));
    /// #     let end = |(rank, from)| {
    /// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
    /// #         Loopback { rank, to, from, barrier }
    /// #     };
    /// #     from.into_iter().enumerate().map(end).collect()
    /// # }
    /// let mut ranks = network(1);
    /// assert!(!ranks[0].barrier_done());
    /// ranks[0].enter_barrier();
    /// assert!(ranks[0].barrier_done(), "a rank alone completes it");
    /// ```
    fn barrier_done(&mut self) -> bool;
}

/// A rank's account of a frame, besides what its local balancer measured.
///
/// ```
/// # use std::sync::Arc;
/// # use std::sync::atomic::{AtomicUsize, Ordering};
/// # use std::sync::mpsc::{self, Receiver, Sender};
/// # use balancers::cluster::{Message, Transport};
/// #
/// # /// One rank's end of an in-process network: ranks are threads, messages go through
/// # /// channels.
/// # struct Loopback {
/// #     rank: usize,
/// #     to: Vec<Sender<(usize, Message)>>,
/// #     from: Receiver<(usize, Message)>,
/// #     /// Ranks that have entered the closing barrier.
/// #     barrier: Arc<AtomicUsize>,
/// # }
/// #
/// # impl Transport for Loopback {
/// #     fn rank(&self) -> usize {
/// #         self.rank
/// #     }
/// #     fn ranks(&self) -> usize {
/// #         self.to.len()
/// #     }
/// #     fn send(&mut self, to: usize, message: Message) {
/// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
/// #     }
/// #     fn receive(&mut self) -> Option<(usize, Message)> {
/// #         self.from.try_recv().ok()
/// #     }
/// #     fn enter_barrier(&mut self) {
/// #         self.barrier.fetch_add(1, Ordering::SeqCst);
/// #     }
/// #     fn barrier_done(&mut self) -> bool {
/// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
/// #     }
/// # }
/// #
/// # /// The ends of a network of `ranks` ranks, rank 0 first.
/// # fn network(ranks: usize) -> Vec<Loopback> {
/// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
/// #     let barrier = Arc::new(AtomicUsize::new(0));
/// #     let end = |(rank, from)| {
/// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
/// #         Loopback { rank, to, from, barrier }
/// #     };
/// #     from.into_iter().enumerate().map(end).collect()
/// # }
/// # use std::convert::Infallible;
/// # use std::num::NonZeroUsize;
/// # use std::thread;
/// # use balancers::cluster::{ClusterMode, RankTelemetry, run_rank};
/// #
/// # /// A frame of `tiles` tiles on `ranks` ranks, each a thread: each rank's account, and the
/// # /// tiles it rendered.
/// # fn frame(mode: ClusterMode, ranks: usize, tiles: u32) -> Vec<(RankTelemetry, Vec<u32>)> {
/// #     let rank = move |mut transport: Loopback| {
/// #         let mut rendered = Vec::new();
/// #         let render = |batch: &[u32]| Ok::<(), Infallible>(rendered.extend_from_slice(batch));
/// #         let telemetry = run_rank(mode, &mut transport, tiles, NonZeroUsize::MIN, render);
/// #         (telemetry.unwrap(), rendered)
/// #     };
/// #     let threads: Vec<_> = network(ranks)
/// #         .into_iter()
/// #         .map(|t| thread::spawn(move || rank(t)))
/// #         .collect();
/// #     threads.into_iter().map(|t| t.join().unwrap()).collect()
/// # }
/// // Under `static` each of two ranks renders its half, and nothing moves.
/// let ranks = frame(ClusterMode::Static, 2, 64);
/// for (rank, (telemetry, _)) in ranks.iter().enumerate() {
///     assert_eq!((telemetry.rank, telemetry.tiles), (rank, 32));
///     assert_eq!((telemetry.tiles_sent, telemetry.requests), (0, 0));
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankTelemetry {
    /// This rank's number.
    pub rank: usize,
    /// Tiles rendered here.
    pub tiles: u64,
    /// Batches the local balancer ran.
    pub batches: u64,
    /// Tiles handed to other ranks (steals answered, or the counter's chunks from rank 0).
    pub tiles_sent: u64,
    /// Tiles received from other ranks.
    pub tiles_received: u64,
    /// Bytes of messages sent (payload; the transport's envelopes aside).
    pub bytes_sent: u64,
    /// Bytes of messages received.
    pub bytes_received: u64,
    /// Requests for tiles sent (steal attempts, or visits to the counter on rank 0).
    pub requests: u64,
    /// Requests answered with tiles.
    pub requests_granted: u64,
    /// Time the render thread waited for tiles between batches (its last wait, for the frame's
    /// end, included).
    pub waited: Duration,
    /// From the start of the rank's run to the end of the closing barrier.
    pub wall: Duration,
}

/// How long the service loop sleeps when it found nothing to do: short enough that a request
/// is answered well within a batch's time (a 32-pixel tile takes milliseconds), long enough that
/// polling costs about 1% of a core (a poll is a few microseconds).
pub const POLL: Duration = Duration::from_micros(200);

/// The longest a thief waits after a failed steal before the next: failed attempts back off
/// from [`POLL`] by doubling to this, so that idle ranks at the end of a frame do not flood
/// the one that still works.
const BACKOFF_MAX: Duration = Duration::from_millis(2);

/// Under `stealing`, a batch is at most this fraction of the tiles a rank holds (at least one
/// per worker): the rest stay where thieves can take them. Eight keeps seven eighths of a
/// rank's share stealable at any time, at about `ln(tiles) / ln(8/7)` batches a frame (47 for
/// 512 tiles), each a few tens of microseconds of thread start-up.
const BATCH_FRACTION: usize = 8;

/// Runs this rank's part of a frame of `tiles` tiles split as `mode` says: `render` is called
/// on a thread of its own with each batch of tile indices and returns once it has rendered
/// them (with the local balancer on `threads` workers). Returns when every rank is done (the
/// closing barrier has completed).
///
/// ```
/// # use std::sync::Arc;
/// # use std::sync::atomic::{AtomicUsize, Ordering};
/// # use std::sync::mpsc::{self, Receiver, Sender};
/// # use balancers::cluster::{Message, Transport};
/// #
/// # /// One rank's end of an in-process network: ranks are threads, messages go through
/// # /// channels.
/// # struct Loopback {
/// #     rank: usize,
/// #     to: Vec<Sender<(usize, Message)>>,
/// #     from: Receiver<(usize, Message)>,
/// #     /// Ranks that have entered the closing barrier.
/// #     barrier: Arc<AtomicUsize>,
/// # }
/// #
/// # impl Transport for Loopback {
/// #     fn rank(&self) -> usize {
/// #         self.rank
/// #     }
/// #     fn ranks(&self) -> usize {
/// #         self.to.len()
/// #     }
/// #     fn send(&mut self, to: usize, message: Message) {
/// #         self.to[to].send((self.rank, message)).expect("ranks live until the barrier");
/// #     }
/// #     fn receive(&mut self) -> Option<(usize, Message)> {
/// #         self.from.try_recv().ok()
/// #     }
/// #     fn enter_barrier(&mut self) {
/// #         self.barrier.fetch_add(1, Ordering::SeqCst);
/// #     }
/// #     fn barrier_done(&mut self) -> bool {
/// #         self.barrier.load(Ordering::SeqCst) == self.to.len()
/// #     }
/// # }
/// #
/// # /// The ends of a network of `ranks` ranks, rank 0 first.
/// # fn network(ranks: usize) -> Vec<Loopback> {
/// #     let (to, from): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
/// #     let barrier = Arc::new(AtomicUsize::new(0));
/// #     let end = |(rank, from)| {
/// #         let (to, barrier) = (to.clone(), Arc::clone(&barrier));
/// #         Loopback { rank, to, from, barrier }
/// #     };
/// #     from.into_iter().enumerate().map(end).collect()
/// # }
/// use std::{convert::Infallible, num::NonZeroUsize, thread};
/// use balancers::cluster::{ClusterMode, run_rank};
///
/// // Two ranks, each a thread of its own, share 64 tiles by stealing.
/// let rank = |mut transport: Loopback| {
///     let mut rendered = Vec::new();
///     let render = |batch: &[u32]| {
///         rendered.extend_from_slice(batch);
///         Ok::<(), Infallible>(())
///     };
///     let workers = NonZeroUsize::MIN; // the local balancer's threads
///     let telemetry = run_rank(ClusterMode::Stealing, &mut transport, 64, workers, render);
///     (telemetry.unwrap(), rendered)
/// };
/// let threads: Vec<_> = network(2).into_iter().map(|t| thread::spawn(move || rank(t))).collect();
/// let ranks: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
/// assert!(ranks.iter().all(|(telemetry, tiles)| telemetry.tiles == tiles.len() as u64));
/// assert_eq!(ranks.iter().map(|(_, tiles)| tiles.len()).sum::<usize>(), 64);
/// ```
///
/// # Errors
/// The first error of `render`, at once: the rank stops taking tiles and tells nobody (its
/// tiles will never be finished, so the job must end; the caller ends it).
///
/// # Panics
/// When `render` panics (likewise telling nobody), or when a message breaks the protocol.
pub fn run_rank<X, F, E>(
    mode: ClusterMode,
    transport: &mut X,
    tiles: u32,
    threads: NonZeroUsize,
    render: F,
) -> Result<RankTelemetry, E>
where
    X: Transport,
    F: FnMut(&[u32]) -> Result<(), E> + Send,
    E: Send,
{
    let started = Instant::now();
    let (rank, ranks) = (transport.rank(), transport.ranks());
    let share = (rank as u32..tiles).step_by(ranks);
    let pool = match mode {
        ClusterMode::Static => Pool::new(share, true),
        ClusterMode::Counter { .. } => Pool::new([], false),
        ClusterMode::Stealing => Pool::new(share, false),
    };
    let mut service = Service {
        mode,
        rank,
        ranks,
        tiles,
        pool: &pool,
        over: mode == ClusterMode::Static,
        asking: false,
        counter: 0,
        finished: 0,
        retry_at: started,
        backoff: Duration::ZERO,
        victims: XorShift::new(rank as u64),
        telemetry: RankTelemetry {
            rank,
            ..RankTelemetry::default()
        },
    };
    let rendered = thread::scope(|scope| {
        let render_thread = thread::Builder::new()
            .name(format!("raylb-rank-{rank}-render"))
            // Worker 0 of the rank's frame runs here.
            .stack_size(crate::worker_stack_size())
            .spawn_scoped(scope, || render_batches(&pool, mode, threads, render))
            .expect("the render thread starts");
        service.serve(transport);
        render_thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    service.close(transport);
    let mut telemetry = service.telemetry;
    (telemetry.batches, telemetry.tiles, telemetry.waited) = rendered;
    telemetry.wall = started.elapsed();
    Ok(telemetry)
}

/// The render thread: batches from `pool` until it is closed and empty, or `render` fails.
/// Returns the batches, the tiles and the time spent waiting for tiles.
fn render_batches<F, E>(
    pool: &Pool,
    mode: ClusterMode,
    threads: NonZeroUsize,
    mut render: F,
) -> Result<(u64, u64, Duration), E>
where
    F: FnMut(&[u32]) -> Result<(), E>,
{
    /// Tells the service loop that the render thread has ended, and whether it failed (by an
    /// error, or a panic).
    struct Ended<'a>(&'a Pool, bool);
    impl Drop for Ended<'_> {
        fn drop(&mut self) {
            self.0.render_ended(self.1 || thread::panicking());
        }
    }
    let mut ended = Ended(pool, true);
    let (mut batches, mut tiles, mut waited) = (0, 0, Duration::ZERO);
    loop {
        let (batch, wait) = pool.next_batch(|held| batch_size(mode, held, threads));
        waited += wait;
        let Some(batch) = batch else { break };
        render(&batch)?;
        pool.finished(batch.len());
        batches += 1;
        tiles += batch.len() as u64;
    }
    ended.1 = false;
    Ok((batches, tiles, waited))
}

/// How many of the `held` tiles the render thread takes at once (see the module's
/// documentation).
fn batch_size(mode: ClusterMode, held: usize, threads: NonZeroUsize) -> usize {
    match mode {
        ClusterMode::Static | ClusterMode::Counter { .. } => held,
        ClusterMode::Stealing => held.div_ceil(BATCH_FRACTION).max(threads.get()),
    }
}

/// The service loop's state.
struct Service<'a> {
    mode: ClusterMode,
    rank: usize,
    ranks: usize,
    tiles: u32,
    pool: &'a Pool,
    /// No tile will come to this rank any more.
    over: bool,
    /// A request of ours is unanswered.
    asking: bool,
    /// Rank 0 under `counter`: the next tile the counter hands out.
    counter: u32,
    /// Rank 0 under `stealing`: tiles reported finished.
    finished: u64,
    /// Under `stealing`: no steal before this instant (backing off after a failed one).
    retry_at: Instant,
    backoff: Duration,
    victims: XorShift,
    telemetry: RankTelemetry,
}

impl Service<'_> {
    /// Answers, asks and reports until this rank is over and its render thread has ended.
    fn serve<X: Transport>(&mut self, transport: &mut X) {
        loop {
            let mut busy = false;
            while let Some((from, message)) = self.receive(transport) {
                self.handle(transport, from, message);
                busy = true;
            }
            if self.mode == ClusterMode::Stealing {
                let finished = self.pool.take_finished();
                if finished > 0 {
                    self.report_finished(transport, finished);
                    busy = true;
                }
            }
            if !self.over && !self.asking && self.pool.len() == 0 {
                busy |= self.ask(transport);
            }
            match self.pool.render_state() {
                // The render thread's error (or panic) reaches the caller once it is joined.
                Some(true) => return,
                Some(false) if self.over && !self.asking => return,
                _ => {}
            }
            if !busy {
                thread::sleep(POLL);
            }
        }
    }

    /// The closing barrier, answering requests while it waits.
    fn close<X: Transport>(&mut self, transport: &mut X) {
        transport.enter_barrier();
        while !transport.barrier_done() {
            let mut busy = false;
            while let Some((from, message)) = self.receive(transport) {
                self.handle(transport, from, message);
                busy = true;
            }
            if !busy {
                thread::sleep(POLL);
            }
        }
    }

    fn receive<X: Transport>(&mut self, transport: &mut X) -> Option<(usize, Message)> {
        let (from, message) = transport.receive()?;
        self.telemetry.bytes_received += message.bytes();
        Some((from, message))
    }

    fn send<X: Transport>(&mut self, transport: &mut X, to: usize, message: Message) {
        self.telemetry.bytes_sent += message.bytes();
        if let Message::Tiles(tiles) = &message {
            self.telemetry.tiles_sent += tiles.len() as u64;
        }
        transport.send(to, message);
    }

    fn handle<X: Transport>(&mut self, transport: &mut X, from: usize, message: Message) {
        match message {
            Message::Request => {
                let tiles = match self.mode {
                    ClusterMode::Counter { chunk } if self.rank == 0 => self.take_chunk(chunk),
                    ClusterMode::Stealing => self.pool.take_back(self.pool.len().div_ceil(2)),
                    _ => panic!(
                        "rank {}: a request for tiles under {:?}",
                        self.rank, self.mode
                    ),
                };
                let answer = if tiles.is_empty() {
                    Message::NoTiles
                } else {
                    Message::Tiles(tiles)
                };
                self.send(transport, from, answer);
            }
            Message::Tiles(tiles) => {
                assert!(self.asking, "rank {}: tiles it did not ask for", self.rank);
                self.asking = false;
                self.backoff = Duration::ZERO;
                self.telemetry.requests_granted += 1;
                self.telemetry.tiles_received += tiles.len() as u64;
                self.pool.push(&tiles);
            }
            Message::NoTiles => {
                assert!(
                    self.asking,
                    "rank {}: an answer it did not ask for",
                    self.rank
                );
                self.asking = false;
                match self.mode {
                    // The counter has run out: nothing more will come.
                    ClusterMode::Counter { .. } => self.finish(),
                    _ => {
                        self.backoff = (self.backoff * 2).clamp(POLL, BACKOFF_MAX);
                        self.retry_at = Instant::now() + self.backoff;
                    }
                }
            }
            Message::Finished(n) => {
                assert_eq!(self.rank, 0, "finished tiles are reported to rank 0");
                self.add_finished(transport, n);
            }
            Message::AllDone => self.finish(),
        }
    }

    /// Asks for tiles, if this mode asks and it is time; whether anything was done.
    fn ask<X: Transport>(&mut self, transport: &mut X) -> bool {
        match self.mode {
            ClusterMode::Static => false,
            ClusterMode::Counter { chunk } if self.rank == 0 => {
                let tiles = self.take_chunk(chunk);
                self.telemetry.requests += 1;
                if tiles.is_empty() {
                    self.finish();
                } else {
                    self.telemetry.requests_granted += 1;
                    self.pool.push(&tiles);
                }
                true
            }
            ClusterMode::Counter { .. } => {
                self.request(transport, 0);
                true
            }
            ClusterMode::Stealing if self.ranks > 1 && Instant::now() >= self.retry_at => {
                // A random rank other than this one.
                let pick = self.victims.below(self.ranks - 1);
                let victim = if pick >= self.rank { pick + 1 } else { pick };
                self.request(transport, victim);
                true
            }
            ClusterMode::Stealing => false,
        }
    }

    fn request<X: Transport>(&mut self, transport: &mut X, to: usize) {
        self.asking = true;
        self.telemetry.requests += 1;
        self.send(transport, to, Message::Request);
    }

    /// Rank 0 under `counter`: the counter's next chunk, empty once every tile is handed out.
    fn take_chunk(&mut self, chunk: NonZeroUsize) -> Vec<u32> {
        let start = self.counter;
        let chunk = u32::try_from(chunk.get()).unwrap_or(u32::MAX);
        self.counter = start.saturating_add(chunk).min(self.tiles);
        (start..self.counter).collect()
    }

    fn report_finished<X: Transport>(&mut self, transport: &mut X, n: u64) {
        if self.rank == 0 {
            self.add_finished(transport, n);
        } else {
            self.send(transport, 0, Message::Finished(n));
        }
    }

    /// Rank 0 under `stealing`: `n` more tiles are finished; when that makes all of them,
    /// every rank is told.
    fn add_finished<X: Transport>(&mut self, transport: &mut X, n: u64) {
        self.finished += n;
        assert!(
            self.finished <= u64::from(self.tiles),
            "{} tiles reported finished of {}",
            self.finished,
            self.tiles
        );
        if self.finished == u64::from(self.tiles) {
            for other in 1..self.ranks {
                self.send(transport, other, Message::AllDone);
            }
            self.finish();
        }
    }

    /// No tile will come to this rank any more.
    fn finish(&mut self) {
        self.over = true;
        self.pool.close();
    }
}
