//! The cluster modes over an in-process transport: ranks are threads, messages go through
//! channels and can be held back to arrive late. Each mode must render every tile exactly once
//! and end on every rank, and no rank may end before the last tile is rendered.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use super::*;

/// How long a message from one rank to another is held back.
type Delay = Arc<dyn Fn(usize, usize, &Message) -> Duration + Send + Sync>;

/// One rank's end of an in-process network.
struct Loopback {
    rank: usize,
    to: Vec<Sender<(usize, Message, Instant)>>,
    from: Receiver<(usize, Message, Instant)>,
    /// Messages that have arrived but are not yet due.
    held: Vec<(usize, Message, Instant)>,
    delay: Delay,
    /// Ranks that have entered the closing barrier.
    barrier: Arc<AtomicUsize>,
}

impl Transport for Loopback {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.to.len()
    }
    fn send(&mut self, to: usize, message: Message) {
        let due = Instant::now() + (self.delay)(self.rank, to, &message);
        // The wire's encoding, so that it is tested too.
        let (tag, words) = message.encode();
        let message = Message::decode(tag, words).expect("decodes");
        self.to[to]
            .send((self.rank, message, due))
            .expect("the receiver lives until the barrier");
    }
    fn receive(&mut self) -> Option<(usize, Message)> {
        self.held.extend(self.from.try_iter());
        let now = Instant::now();
        let due = self.held.iter().position(|(_, _, at)| *at <= now)?;
        let (from, message, _) = self.held.remove(due);
        Some((from, message))
    }
    fn enter_barrier(&mut self) {
        self.barrier.fetch_add(1, Ordering::SeqCst);
    }
    fn barrier_done(&mut self) -> bool {
        self.barrier.load(Ordering::SeqCst) == self.to.len()
    }
}

fn network(ranks: usize, delay: Delay) -> Vec<Loopback> {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..ranks).map(|_| mpsc::channel()).unzip();
    let barrier = Arc::new(AtomicUsize::new(0));
    receivers
        .into_iter()
        .enumerate()
        .map(|(rank, from)| Loopback {
            rank,
            to: senders.clone(),
            from,
            held: Vec::new(),
            delay: Arc::clone(&delay),
            barrier: Arc::clone(&barrier),
        })
        .collect()
}

/// What a frame did: each rank's telemetry and tiles, in the order it rendered them.
struct Frame {
    ranks: Vec<(RankTelemetry, Vec<u32>)>,
}

/// Renders `tiles` tiles over `ranks` in-process ranks, each tile taking `cost(tile)`, and
/// checks that no rank ends before every tile is rendered. Fails if the frame takes more than
/// 20 seconds (a hang).
fn frame(
    mode: ClusterMode,
    ranks: usize,
    tiles: u32,
    threads: usize,
    cost: impl Fn(u32) -> Duration + Send + Sync + 'static,
    delay: Delay,
) -> Frame {
    let (done_tx, done_rx) = mpsc::channel();
    let rendered = Arc::new(AtomicU64::new(0));
    let cost = Arc::new(cost);
    for mut transport in network(ranks, delay) {
        let (done_tx, rendered, cost) = (done_tx.clone(), Arc::clone(&rendered), cost.clone());
        std::thread::spawn(move || {
            let threads = NonZeroUsize::new(threads).unwrap();
            let mut order = Vec::new();
            let telemetry = run_rank(mode, &mut transport, tiles, threads, |batch| {
                for &tile in batch {
                    std::thread::sleep(cost(tile));
                    order.push(tile);
                    rendered.fetch_add(1, Ordering::SeqCst);
                }
                Ok::<(), ()>(())
            })
            .expect("renders");
            // Ended: every tile must be rendered by now, on some rank.
            let seen = rendered.load(Ordering::SeqCst);
            done_tx.send((telemetry, order, seen)).unwrap();
        });
    }
    let mut out = BTreeMap::new();
    for _ in 0..ranks {
        let (telemetry, order, seen) = done_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("every rank ends within 20 s");
        assert_eq!(
            seen,
            u64::from(tiles),
            "rank {} ended with {seen} of {tiles} tiles rendered",
            telemetry.rank
        );
        out.insert(telemetry.rank, (telemetry, order));
    }
    let frame = Frame {
        ranks: out.into_values().collect(),
    };
    frame.check_each_tile_once(tiles);
    frame
}

impl Frame {
    fn check_each_tile_once(&self, tiles: u32) {
        let mut all: Vec<u32> = self.ranks.iter().flat_map(|(_, t)| t.clone()).collect();
        all.sort_unstable();
        assert_eq!(
            all,
            (0..tiles).collect::<Vec<_>>(),
            "every tile exactly once"
        );
        for (telemetry, order) in &self.ranks {
            assert_eq!(telemetry.tiles, order.len() as u64);
        }
        let sent: u64 = self.ranks.iter().map(|(t, _)| t.tiles_sent).sum();
        let received: u64 = self.ranks.iter().map(|(t, _)| t.tiles_received).sum();
        assert_eq!(sent, received, "tiles sent are tiles received");
    }
}

fn no_delay() -> Delay {
    Arc::new(|_, _, _| Duration::ZERO)
}

fn chunk(n: usize) -> ClusterMode {
    ClusterMode::Counter {
        chunk: NonZeroUsize::new(n).unwrap(),
    }
}

/// Each mode at 1 to 4 ranks, one test per case.
macro_rules! every_tile_once {
    ($($name:ident: $mode:expr, $ranks:expr;)*) => {
        $(
            #[test]
            fn $name() {
                let cost = |tile: u32| Duration::from_micros(50 * u64::from(tile % 7));
                frame($mode, $ranks, 97, 2, cost, no_delay());
            }
        )*
    };
}

every_tile_once! {
    static_1_rank: ClusterMode::Static, 1;
    static_2_ranks: ClusterMode::Static, 2;
    static_3_ranks: ClusterMode::Static, 3;
    static_4_ranks: ClusterMode::Static, 4;
    counter_1_rank: chunk(4), 1;
    counter_2_ranks: chunk(4), 2;
    counter_3_ranks: chunk(1), 3;
    counter_4_ranks: chunk(5), 4;
    stealing_1_rank: ClusterMode::Stealing, 1;
    stealing_2_ranks: ClusterMode::Stealing, 2;
    stealing_3_ranks: ClusterMode::Stealing, 3;
    stealing_4_ranks: ClusterMode::Stealing, 4;
}

#[test]
fn static_deals_interleaved_and_moves_nothing() {
    let frame = frame(
        ClusterMode::Static,
        3,
        10,
        1,
        |_| Duration::ZERO,
        no_delay(),
    );
    assert_eq!(frame.ranks[0].1, vec![0, 3, 6, 9]);
    assert_eq!(frame.ranks[1].1, vec![1, 4, 7]);
    assert_eq!(frame.ranks[2].1, vec![2, 5, 8]);
    assert!(
        frame
            .ranks
            .iter()
            .all(|(t, _)| t.bytes_sent == 0 && t.batches == 1)
    );
}

#[test]
fn more_ranks_than_tiles() {
    for mode in [ClusterMode::Static, chunk(2), ClusterMode::Stealing] {
        frame(mode, 4, 2, 1, |_| Duration::from_millis(1), no_delay());
    }
}

#[test]
fn counter_hands_out_chunks_in_order() {
    let frame = frame(
        chunk(3),
        2,
        20,
        1,
        |_| Duration::from_micros(300),
        no_delay(),
    );
    for (_, order) in &frame.ranks {
        // Each rank's chunks are whole runs of three from the counter, in rising order.
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    }
    let requests: u64 = frame.ranks.iter().map(|(t, _)| t.requests_granted).sum();
    assert_eq!(requests, 7, "20 tiles in chunks of 3");
}

#[test]
fn a_rank_with_all_the_costly_tiles_is_robbed() {
    // Rank 0's share (even tiles) is costly, rank 1's free: rank 1 runs dry at once and steals.
    let cost = |tile: u32| Duration::from_millis(if tile.is_multiple_of(2) { 4 } else { 0 });
    let frame = frame(ClusterMode::Stealing, 2, 64, 1, cost, no_delay());
    let (thief, order) = &frame.ranks[1];
    let stolen = order.iter().filter(|&&t| t % 2 == 0).count() as u64;
    assert!(
        stolen >= 8,
        "rank 1 rendered only {stolen} of rank 0's tiles"
    );
    // (Rank 0 may steal some back once its own pool runs dry.)
    assert!(thief.tiles_received >= stolen);
    assert!(thief.requests_granted > 0 && thief.bytes_received >= 4 * stolen);
}

#[test]
fn stealing_waits_for_tiles_that_arrive_late() {
    // Every steal's loot takes 30 ms to arrive: thieves hold their last work while nobody
    // holds any tile in a pool. The frame must neither end before they render it nor hang.
    let delay: Delay = Arc::new(|_, _, message| match message {
        Message::Tiles(_) => Duration::from_millis(30),
        _ => Duration::ZERO,
    });
    let cost = |tile: u32| Duration::from_millis(if tile.is_multiple_of(3) { 3 } else { 0 });
    let frame = frame(ClusterMode::Stealing, 3, 48, 1, cost, delay);
    let received: u64 = frame.ranks.iter().map(|(t, _)| t.tiles_received).sum();
    assert!(received > 0, "no steal succeeded, so nothing arrived late");
}

#[test]
fn stealing_ends_when_reports_arrive_late() {
    // The reports of finished tiles, and the end, take 40 ms: ranks idle in between must keep
    // stealing (and failing) without ending.
    let delay: Delay = Arc::new(|_, _, message| match message {
        Message::Finished(_) | Message::AllDone => Duration::from_millis(40),
        _ => Duration::ZERO,
    });
    frame(
        ClusterMode::Stealing,
        4,
        40,
        2,
        |_| Duration::from_micros(200),
        delay,
    );
}

#[test]
fn counter_answers_that_arrive_late() {
    let delay: Delay = Arc::new(|from, _, _| Duration::from_millis(if from == 0 { 15 } else { 0 }));
    frame(chunk(2), 3, 30, 1, |_| Duration::from_micros(100), delay);
}

#[test]
fn a_batch_is_an_eighth_of_the_pool_but_a_tile_per_worker_at_least() {
    let two = NonZeroUsize::new(2).unwrap();
    assert_eq!(batch_size(ClusterMode::Stealing, 800, two), 100);
    assert_eq!(batch_size(ClusterMode::Stealing, 9, two), 2);
    assert_eq!(
        batch_size(ClusterMode::Stealing, 1, two),
        2,
        "clamped by the pool"
    );
    assert_eq!(batch_size(ClusterMode::Static, 800, two), 800);
    assert_eq!(batch_size(chunk(4), 4, two), 4);
}

#[test]
fn a_failing_render_ends_its_rank_at_once() {
    let mut transports = network(2, no_delay()).into_iter();
    let mut first = transports.next().unwrap();
    let threads = NonZeroUsize::MIN;
    let mut batches = 0;
    let outcome = run_rank(ClusterMode::Stealing, &mut first, 40, threads, |_| {
        batches += 1;
        Err("no worker thread")
    });
    assert_eq!(outcome, Err("no worker thread"));
    assert_eq!(batches, 1, "no batch after the failure");
}
