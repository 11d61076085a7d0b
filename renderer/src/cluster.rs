//! One frame over MPI ranks (`raylb render --cluster`), through the `mpi` crate: every rank
//! loads the scene, renders the tiles [`balancers::cluster`] gives it into a film of its own,
//! and the films' fixed-point sums (and ray counts) are reduced to rank 0 with MPI's integer
//! sum. Integer addition is associative, so rank 0's film holds the same sums, bit for bit, as
//! one process rendering the whole frame.
//!
//! Only the thread that initialised MPI calls it: the rank's service loop, while the render
//! thread and its workers trace (`MPI_THREAD_FUNNELED`, checked against what the library
//! grants).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::thread;
use std::time::{Duration, Instant};

use balancers::cluster::{self, ClusterMode, Message, RankTelemetry, Transport};
use balancers::{SpawnError, WorkerTelemetry};
use mpi::Threading;
use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::film::Film;
use crate::integrator::{RayCounts, RenderTask, Whitted, tiles};
use crate::render::{RenderError, RenderOptions};
use crate::scene::Scene;
use crate::watch::Unwatched;

/// Tags of the messages on the world communicator (the tile protocol has a communicator of
/// its own, so that its probes never see these).
const TAG_READY: i32 = 1;
const TAG_FAILED: i32 = 2;
const TAG_VERDICT: i32 = 3;
const TAG_FIGURES: i32 = 4;
const TAG_HOST: i32 = 5;

/// This process's place in an MPI job.
pub struct Cluster {
    world: SimpleCommunicator,
    /// Dropped last: finalises MPI.
    _universe: Universe,
    rank: usize,
    ranks: usize,
}

/// Why a rank cannot go on with the frame.
#[derive(Debug)]
pub enum Refused {
    /// Rank 0's one line for the whole job: which rank failed and why.
    Because(String),
    /// Another rank failed or differs; rank 0 reports it.
    Elsewhere,
}

/// What one rank rendered.
#[derive(Debug)]
pub struct RankPart {
    /// The rank's film: the sums of the tiles it rendered.
    pub film: Film,
    /// The rank's own figures.
    pub rank: RankFigures,
}

/// One rank's figures.
#[derive(Clone, Debug)]
pub struct RankFigures {
    /// The processor name MPI gives the rank's host.
    pub host: String,
    /// What the service loop counted.
    pub cluster: RankTelemetry,
    /// Each worker's account, summed over the batches.
    pub workers: Vec<WorkerTelemetry>,
    /// Each worker's rays, summed over the batches.
    pub rays: Vec<RayCounts>,
}

/// The frame as rank 0 has it once every rank's part is in.
#[derive(Debug)]
pub struct Whole {
    /// The reduced film.
    pub film: Film,
    /// Every rank's figures, by rank.
    pub ranks: Vec<RankFigures>,
    /// From the start of rank 0's part to the end of the reduction.
    pub wall: Duration,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Cluster {{ rank: {}, ranks: {} }}",
            self.rank, self.ranks
        )
    }
}

impl Cluster {
    /// Initialises MPI for a rank whose one thread calls MPI while others render.
    ///
    /// # Errors
    /// When the library does not grant `MPI_THREAD_FUNNELED`, or MPI was initialised already.
    pub fn init() -> Result<Self, String> {
        let (universe, granted) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or("MPI was initialised twice")?;
        if granted < Threading::Funneled {
            return Err(format!(
                "the MPI library grants only {granted:?} threading; raylb calls MPI from one thread while its workers render, which needs MPI_THREAD_FUNNELED"
            ));
        }
        let world = universe.world();
        let (rank, ranks) = (world.rank() as usize, world.size() as usize);
        Ok(Self {
            world,
            _universe: universe,
            rank,
            ranks,
        })
    }

    /// This rank's number.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The job's ranks.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// Agrees on going ahead: each rank gives what its preparation came to, a fingerprint of
    /// its scene and settings or the one-line reason it failed. Every rank goes ahead when all
    /// succeeded with the same fingerprint; otherwise rank 0 gets the first failing rank's
    /// reason (so that an error every rank shares is said once) and the others
    /// [`Refused::Elsewhere`].
    ///
    /// # Errors
    /// As above.
    pub fn agree(&self, prepared: Result<u64, String>) -> Result<(), Refused> {
        let encoded = match &prepared {
            Ok(fingerprint) => fingerprint.to_le_bytes().to_vec(),
            Err(reason) => reason.as_bytes().to_vec(),
        };
        if self.rank != 0 {
            let tag = if prepared.is_ok() {
                TAG_READY
            } else {
                TAG_FAILED
            };
            self.world
                .process_at_rank(0)
                .send_with_tag(&encoded[..], tag);
            let verdict: Vec<u8> = self.wait_for(0, TAG_VERDICT);
            return if verdict == [0] {
                Ok(())
            } else {
                Err(Refused::Elsewhere)
            };
        }
        let mut failure = prepared.as_ref().err().map(|e| format!("rank 0: {e}"));
        for rank in 1..self.ranks {
            let (words, tag) = self.wait_for_either(rank, TAG_READY, TAG_FAILED);
            if failure.is_some() {
                continue;
            }
            failure = match (tag == TAG_READY, &prepared) {
                (false, _) => Some(format!("rank {rank}: {}", String::from_utf8_lossy(&words))),
                (true, Ok(mine)) if words != mine.to_le_bytes() => Some(format!(
                    "rank {rank}: its scene or settings differ from rank 0's (every rank must load the same scene file with the same options)"
                )),
                _ => None,
            };
        }
        let verdict = [u8::from(failure.is_some())];
        for rank in 1..self.ranks {
            self.world
                .process_at_rank(rank as i32)
                .send_with_tag(&verdict[..], TAG_VERDICT);
        }
        failure.map_or(Ok(()), |line| Err(Refused::Because(line)))
    }

    /// Renders this rank's part of the frame as `mode` splits it, each batch with the local
    /// balancer of `options`.
    ///
    /// # Errors
    /// When a worker thread cannot be started, or the film's memory cannot be had. The other
    /// ranks are not told: end the job ([`abort`](Self::abort)).
    pub fn render_part(
        &self,
        scene: &Scene,
        options: &RenderOptions,
        mode: ClusterMode,
    ) -> Result<RankPart, RenderError> {
        let film = Film::try_new(scene.width, scene.height, options.work_map)
            .map_err(RenderError::Memory)?;
        let tasks: Vec<RenderTask> = tiles(scene.width, scene.height, options.tile)
            .into_iter()
            .map(RenderTask::Tile)
            .collect();
        let count = u32::try_from(tasks.len()).map_err(|_| {
            RenderError::Memory(format!("{} tiles: at most 2^32 in a cluster", tasks.len()))
        })?;
        let threads = options.threads.get();
        let mut workers = vec![WorkerTelemetry::default(); threads];
        let mut rays = vec![RayCounts::default(); threads];
        let runner = Whitted::new(scene, &film, &Unwatched);
        let mut transport = MpiTransport::new(self.world.duplicate());
        let outcome = cluster::run_rank(mode, &mut transport, count, options.threads, |batch| {
            let batch: Vec<RenderTask> = batch.iter().map(|&i| tasks[i as usize]).collect();
            let outcome = options
                .balancer
                .run_frame(options.threads, &batch, &runner)?;
            for (w, t) in workers.iter_mut().zip(&outcome.telemetry.workers) {
                add_worker(w, t);
            }
            for (r, local) in rays.iter_mut().zip(&outcome.locals) {
                r.merge(&local.rays);
            }
            Ok::<(), SpawnError>(())
        });
        drop(transport);
        let telemetry = outcome?;
        // Time between batches is idle for every worker.
        for w in &mut workers {
            w.idle = telemetry.wall.saturating_sub(w.busy);
        }
        Ok(RankPart {
            film,
            rank: RankFigures {
                host: mpi::environment::processor_name().unwrap_or_else(|_| "?".into()),
                cluster: telemetry,
                workers,
                rays,
            },
        })
    }

    /// Reduces every rank's film to rank 0 and gathers their figures there: `Some` on rank
    /// 0, `None` on the others. `started` is when rank 0's part began.
    pub fn gather(&self, part: RankPart, started: Instant) -> Option<Whole> {
        let (width, height) = (part.film.width(), part.film.height());
        let sums = part.film.sums();
        let counts = part.film.ray_counts();
        // The film's atomics are no longer needed: its plain copy is what is sent.
        drop(part.film);
        let flat: &[u64] = bytemuck::cast_slice(&sums);
        let root = self.world.process_at_rank(0);
        if self.rank != 0 {
            root.reduce_into(flat, SystemOperation::sum());
            if let Some(counts) = &counts {
                root.reduce_into(&counts[..], SystemOperation::sum());
            }
            root.send_with_tag(&encode_figures(&part.rank)[..], TAG_FIGURES);
            root.send_with_tag(part.rank.host.as_bytes(), TAG_HOST);
            return None;
        }
        let mut total = vec![[0u64; 3]; sums.len()];
        root.reduce_into_root(
            flat,
            bytemuck::cast_slice_mut::<[u64; 3], u64>(&mut total),
            SystemOperation::sum(),
        );
        drop(sums);
        let total_counts = counts.map(|counts| {
            let mut total = vec![0u32; counts.len()];
            root.reduce_into_root(&counts[..], &mut total[..], SystemOperation::sum());
            total
        });
        let wall = started.elapsed();
        let film = Film::from_sums(width, height, &total, total_counts.as_deref());
        let mut ranks = vec![part.rank];
        for rank in 1..self.ranks {
            let words: Vec<u64> = self.wait_for(rank, TAG_FIGURES);
            let host: Vec<u8> = self.wait_for(rank, TAG_HOST);
            let host = String::from_utf8_lossy(&host).into_owned();
            ranks.push(decode_figures(&words, host).expect("a rank's figures, as it encoded them"));
        }
        Some(Whole { film, ranks, wall })
    }

    /// Waits until every rank has called this.
    pub fn barrier(&self) {
        self.world.barrier();
    }

    /// Ends the whole job at once with exit code `code` (after this rank has said why).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// The message with `tag` from `rank`, polling (a blocking receive would spin a core that
    /// another rank's workers may need while this one waits for them).
    fn wait_for<T: Equivalence>(&self, rank: usize, tag: i32) -> Vec<T> {
        self.wait_for_either(rank, tag, tag).0
    }

    /// The message from `rank` with tag `a` or `b`, and its tag.
    fn wait_for_either<T: Equivalence>(&self, rank: usize, a: i32, b: i32) -> (Vec<T>, i32) {
        let process = self.world.process_at_rank(rank as i32);
        loop {
            for tag in [a, b] {
                if let Some(probed) = process.immediate_matched_probe_with_tag(tag) {
                    return (probed.matched_receive_vec().0, tag);
                }
            }
            thread::sleep(cluster::POLL);
        }
    }
}

/// A fingerprint of what a rank is about to render: the scene as loaded and the command line.
/// Ranks that load different files, or run with different options, differ in it.
pub fn fingerprint(scene: &Scene, arguments: &[String]) -> u64 {
    // SipHash with fixed keys: the same value in every process of the same build.
    let mut hasher = DefaultHasher::new();
    (scene.width, scene.height, scene.samples.count()).hash(&mut hasher);
    (
        scene.stats.triangles,
        scene.stats.objects,
        scene.lights.len(),
    )
        .hash(&mut hasher);
    (scene.materials.len(), scene.settings.max_depth).hash(&mut hasher);
    (scene.accel.stats().nodes, scene.accel.stats().leaves).hash(&mut hasher);
    arguments.hash(&mut hasher);
    hasher.finish()
}

/// Adds one batch's account of a worker to its running total.
fn add_worker(total: &mut WorkerTelemetry, batch: &WorkerTelemetry) {
    total.tasks += batch.tasks;
    total.initial_tasks += batch.initial_tasks;
    total.spawned += batch.spawned;
    total.busy += batch.busy;
    total.idle += batch.idle;
    total.steal_attempts += batch.steal_attempts;
    total.steal_successes += batch.steal_successes;
    total.tasks_stolen += batch.tasks_stolen;
    total.peak_queued = match (total.peak_queued, batch.peak_queued) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
}

/// Words of a rank's telemetry.
const RANK_WORDS: usize = 11;
/// Words of a worker's telemetry and rays.
const WORKER_WORDS: usize = 13;

/// A rank's figures as words, for rank 0.
fn encode_figures(figures: &RankFigures) -> Vec<u64> {
    let c = &figures.cluster;
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let mut words = vec![
        c.rank as u64,
        c.tiles,
        c.batches,
        c.tiles_sent,
        c.tiles_received,
        c.bytes_sent,
        c.bytes_received,
        c.requests,
        c.requests_granted,
        nanos(c.waited),
        nanos(c.wall),
    ];
    for (w, r) in figures.workers.iter().zip(&figures.rays) {
        words.extend([
            w.tasks,
            w.initial_tasks,
            w.spawned,
            nanos(w.busy),
            nanos(w.idle),
            w.steal_attempts,
            w.steal_successes,
            w.tasks_stolen,
            // Absent as 0, present as the peak plus one.
            w.peak_queued.map_or(0, |p| p + 1),
            r.camera,
            r.shadow,
            r.reflection,
            r.refraction,
        ]);
    }
    words
}

/// What [`encode_figures`] made, or `None` if `words` are not that.
fn decode_figures(words: &[u64], host: String) -> Option<RankFigures> {
    if words.len() < RANK_WORDS || !(words.len() - RANK_WORDS).is_multiple_of(WORKER_WORDS) {
        return None;
    }
    let (head, rest) = words.split_at(RANK_WORDS);
    let cluster = RankTelemetry {
        rank: usize::try_from(head[0]).ok()?,
        tiles: head[1],
        batches: head[2],
        tiles_sent: head[3],
        tiles_received: head[4],
        bytes_sent: head[5],
        bytes_received: head[6],
        requests: head[7],
        requests_granted: head[8],
        waited: Duration::from_nanos(head[9]),
        wall: Duration::from_nanos(head[10]),
    };
    let (workers, rays) = rest
        .chunks_exact(WORKER_WORDS)
        .map(|w| {
            let worker = WorkerTelemetry {
                tasks: w[0],
                initial_tasks: w[1],
                spawned: w[2],
                busy: Duration::from_nanos(w[3]),
                idle: Duration::from_nanos(w[4]),
                steal_attempts: w[5],
                steal_successes: w[6],
                tasks_stolen: w[7],
                peak_queued: w[8].checked_sub(1),
            };
            let rays = RayCounts {
                camera: w[9],
                shadow: w[10],
                reflection: w[11],
                refraction: w[12],
            };
            (worker, rays)
        })
        .unzip();
    Some(RankFigures {
        host,
        cluster,
        workers,
        rays,
    })
}

/// The tile protocol's [`Transport`] over an MPI communicator of its own. Sends never wait:
/// each is an `MPI_Isend` whose buffer lives until the send completes, so two ranks that send
/// each other large messages at once cannot deadlock.
struct MpiTransport {
    comm: SimpleCommunicator,
    /// Sends not yet complete, with their buffers.
    sending: Vec<Outgoing>,
    barrier: Option<Request<'static, ()>>,
    barrier_done: bool,
}

/// A send in flight and the buffer MPI reads it from.
struct Outgoing {
    request: Request<'static, [u32], StaticScope>,
    /// From `Box::leak`; freed once `request` completes.
    words: *mut [u32],
}

impl MpiTransport {
    fn new(comm: SimpleCommunicator) -> Self {
        Self {
            comm,
            sending: Vec::new(),
            barrier: None,
            barrier_done: false,
        }
    }

    /// Frees the buffers of the sends that have completed.
    fn reap(&mut self) {
        let mut still = Vec::with_capacity(self.sending.len());
        for outgoing in self.sending.drain(..) {
            match outgoing.request.test() {
                // SAFETY: [1] `words` came from `Box::leak` in `send` and is freed only here,
                // once; [2] its send has completed, so MPI no longer reads it, and the shared
                // reference the request held went with the request.
                Ok(_) => drop(unsafe { Box::from_raw(outgoing.words) }),
                Err(request) => still.push(Outgoing {
                    request,
                    words: outgoing.words,
                }),
            }
        }
        self.sending = still;
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    fn ranks(&self) -> usize {
        self.comm.size() as usize
    }

    fn send(&mut self, to: usize, message: Message) {
        self.reap();
        let (tag, words) = message.encode();
        let words: &'static mut [u32] = Box::leak(words.into_boxed_slice());
        let pointer: *mut [u32] = words;
        let request = self
            .comm
            .process_at_rank(to as i32)
            .immediate_send_with_tag(StaticScope, &*words, i32::from(tag));
        self.sending.push(Outgoing {
            request,
            words: pointer,
        });
    }

    fn receive(&mut self) -> Option<(usize, Message)> {
        self.reap();
        let (words, status) = self
            .comm
            .any_process()
            .immediate_matched_probe()?
            .matched_receive_vec::<u32>();
        let tag = u16::try_from(status.tag()).ok();
        let decoded = tag.and_then(|tag| Message::decode(tag, words));
        let from = status.source_rank() as usize;
        Some((
            from,
            decoded.unwrap_or_else(|| {
                panic!("rank {from} sent a message of unknown tag {}", status.tag())
            }),
        ))
    }

    fn enter_barrier(&mut self) {
        self.barrier = Some(self.comm.immediate_barrier());
    }

    fn barrier_done(&mut self) -> bool {
        if let Some(request) = self.barrier.take() {
            match request.test() {
                Ok(_) => self.barrier_done = true,
                Err(request) => self.barrier = Some(request),
            }
        }
        self.barrier_done
    }
}

impl Drop for MpiTransport {
    /// Waits for the sends still in flight (every receiver has taken its messages by the end
    /// of the closing barrier, so this does not wait long), then frees their buffers.
    fn drop(&mut self) {
        while !self.sending.is_empty() {
            self.reap();
            if !self.sending.is_empty() {
                thread::sleep(cluster::POLL);
            }
        }
        if let Some(request) = self.barrier.take() {
            request.wait();
        }
    }
}
