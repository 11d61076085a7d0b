//! The balancers' policies as the simulator runs them: one [`Policy`] per balancer, each
//! saying in one place where a worker's share of the initial tasks waits, where its next task
//! comes from, where the tasks it spawns go, what its deque costs and how it steals. The
//! engine ([`Sim`]) keeps time, runs tasks and carries steal attempts to their victims; it
//! asks the policy at each of those decisions and decides nothing by itself.
//!
//! What each policy does is what its balancer does, with the same code where it can be: the
//! initial tasks are dealt by [`Assignment::share`], victims are chosen by the balancers' own
//! victim selection ([`VictimSelector`]), seeded the same way per worker.

use std::num::NonZeroUsize;

use crate::order::Order;
use crate::static_tiles::{Assignment, StaticTiles};
use crate::stealing::{DequeKind, StealAmount, WorkStealing};
use crate::victim::{VictimSelector, XorShift};
use crate::{CentralCounter, RayonScope};

use super::{Costs, Queued, Sampling, Sim, Worker};

/// One balancer's decisions, asked by the engine as a run goes on (tokio's scheduler keeps
/// its `next_task` and `steal_work` in one place the same way).
///
/// A policy whose [`next_task`](Self::next_task) never answers [`Next::Steal`] never steals,
/// and need not say how it would: the stealing methods' defaults are for such a policy.
pub(super) trait Policy {
    /// Before the run: where worker `w`'s share of the `initial` initial tasks waits, of
    /// `workers` workers.
    fn deal(&self, w: usize, workers: usize, initial: usize, worker: &mut Worker);

    /// Where the children of a running task go.
    fn children(&self) -> Children;

    /// What pushing a task on this policy's deque and popping it again costs beyond a local
    /// stack's, charged to the task that spawns it; nothing for a policy without a deque.
    fn push_pop(&self, _costs: &Costs) -> f64 {
        0.0
    }

    /// Worker `w` is free at `now`: where its next task comes from.
    fn next_task(&mut self, sim: &mut Sim<'_>, now: f64, w: usize) -> Next;

    /// Worker `w` has just run dry and begins a search for work.
    fn begin_search(&mut self, _w: usize) {}

    /// The victim of worker `w`'s next steal attempt.
    fn choose_victim(&mut self, _sim: &Sim<'_>, _w: usize) -> Choice {
        unreachable!("a policy that never answers Next::Steal chooses no victims")
    }

    /// Worker `w`'s attempt failed: the victim had nothing, or another thief held it.
    fn failed_attempt(&mut self, _w: usize) {}

    /// How much a successful steal takes.
    fn steal_amount(&self) -> StealAmount {
        unreachable!("a policy that never answers Next::Steal takes nothing")
    }
}

/// Where a free worker's next task comes from.
#[derive(Clone, Copy, Debug)]
pub(super) enum Next {
    /// From its own tasks: it runs this one now.
    Run(Queued),
    /// From a shared source that serves it at this time, when it asks again.
    At(f64),
    /// From another worker: it has nothing of its own and steals.
    Steal,
    /// Nowhere: nothing more will come its way, and nothing more is scheduled for it.
    Done,
}

/// Where the children of a running task go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Children {
    /// To the worker's own queue when the task ends, in the order spawned, where no other
    /// worker sees them.
    Kept,
    /// Each, as it is spawned, becomes the worker's task to run next; the one it displaces
    /// enters the worker's deque.
    NewestNext,
    /// Each, as it is spawned, enters the worker's deque.
    Deque,
}

impl Children {
    /// How many of a task's `spawned` children pass through its worker's deque.
    pub(super) fn through_deque(self, spawned: usize) -> usize {
        match self {
            Children::Kept => 0,
            Children::NewestNext => spawned.saturating_sub(1),
            Children::Deque => spawned,
        }
    }
}

/// A thief's choice: its victim, and how many workers it read to choose (each read costs
/// [`Costs::probe`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Choice {
    pub(super) victim: usize,
    pub(super) probes: usize,
}

/// `static`: a worker runs its share in order, each task's spawned subtree depth-first
/// (newest first) before the next initial task; breadth-first, its whole share, then the
/// spawned tasks oldest first.
#[derive(Debug)]
pub(super) struct Static {
    assignment: Assignment,
    order: Order,
}

impl Static {
    pub(super) fn new(b: StaticTiles) -> Self {
        Self {
            assignment: b.assignment,
            order: b.order,
        }
    }
}

impl Policy for Static {
    fn deal(&self, w: usize, workers: usize, initial: usize, worker: &mut Worker) {
        worker.initial = share(self.assignment, w, workers, initial).collect();
    }

    fn children(&self) -> Children {
        Children::Kept
    }

    fn next_task(&mut self, sim: &mut Sim<'_>, _now: f64, w: usize) -> Next {
        let worker = &mut sim.workers[w];
        let next = match self.order {
            Order::BreadthFirst => {
                let initial = worker.initial.pop_front();
                initial
                    .map(Queued::initial)
                    .or_else(|| worker.queue.pop_front())
            }
            Order::DepthFirst => {
                let spawned = worker.queue.pop_back();
                spawned.or_else(|| worker.initial.pop_front().map(Queued::initial))
            }
        };
        // When its share and its queue are done, it stops.
        next.map_or(Next::Done, Next::Run)
    }
}

/// `counter`: a worker takes the next `chunk` initial tasks from one counter, which serves
/// one worker at a time; spawned tasks stay with their worker, depth-first (breadth-first:
/// after the counter is spent, oldest first).
#[derive(Debug)]
pub(super) struct Counter {
    chunk: NonZeroUsize,
    order: Order,
    /// The next initial task to hand out.
    next_initial: usize,
    /// When the counter is free to serve the next worker.
    free_at: f64,
}

impl Counter {
    pub(super) fn new(b: CentralCounter) -> Self {
        Self {
            chunk: b.chunk,
            order: b.order,
            next_initial: 0,
            free_at: 0.0,
        }
    }
}

impl Policy for Counter {
    /// Nothing: every initial task waits at the counter.
    fn deal(&self, _w: usize, _workers: usize, _initial: usize, _worker: &mut Worker) {}

    fn children(&self) -> Children {
        Children::Kept
    }

    fn next_task(&mut self, sim: &mut Sim<'_>, now: f64, w: usize) -> Next {
        let worker = &mut sim.workers[w];
        if self.order == Order::DepthFirst
            && let Some(q) = worker.queue.pop_back()
        {
            return Next::Run(q);
        }
        if let Some(task) = worker.initial.pop_front() {
            return Next::Run(Queued::initial(task));
        }
        let initial = sim.tree.initial();
        if self.next_initial >= initial {
            // The counter is spent: breadth-first, the spawned tasks run now, oldest first;
            // then it stops.
            return worker.queue.pop_front().map_or(Next::Done, Next::Run);
        }
        // The counter serves one worker at a time.
        let served = now.max(self.free_at) + sim.draw(w, sim.costs.counter);
        self.free_at = served;
        let end = (self.next_initial + self.chunk.get()).min(initial);
        sim.workers[w].initial = (self.next_initial as u32..end as u32).collect();
        self.next_initial = end;
        Next::At(served)
    }
}

/// `stealing`: a worker's share waits in its deque; each task's newest child runs next, the
/// older ones wait in the deque where thieves take the oldest (one, or half of them up to
/// 64); a worker whose deque is empty steals from victims chosen as the balancer chooses
/// them until it finds work or every task has finished.
///
/// A deque serves one thief at a time: an attempt that meets another thief's steal in
/// progress fails, as a lost compare-and-swap (`abp`) or a lock tried once (`locked`) does.
/// A thief that finds no deque holding any work waits until a task enters one, its attempts
/// meanwhile counted as failed ones at one per failed-steal time (so that a long tail costs
/// no events).
///
/// Unlike the balancer, whose deque holds 16,384 tasks (a share beyond half of that waits
/// in a private backlog, spawns beyond all of it in a private overflow), the simulated deque
/// has no bound: the two differ only for shares of more than 8,192 tiles a worker, or (in
/// depth-first order) more than 16,384 tasks waiting on one worker.
///
/// Breadth-first, the owner takes its tasks from the thieves' end, and every spawned task
/// enters the deque; the owner's own take is charged as a pop (the deque's push-and-pop
/// cost), though the balancer's is a steal's claim, and it does not wait for a thief holding
/// that end.
#[derive(Debug)]
pub(super) struct Stealing {
    deque: DequeKind,
    amount: StealAmount,
    assignment: Assignment,
    order: Order,
    /// Each worker's victim selection.
    selectors: Vec<VictimSelector>,
}

impl Stealing {
    /// The policy on `workers` workers, `sample` victim selection sampling as `sampling`
    /// says.
    pub(super) fn new(b: WorkStealing, workers: usize, sampling: Sampling) -> Self {
        let selectors = (0..workers)
            .map(|w| {
                let mut selector = VictimSelector::new(b.victim, w, workers);
                if sampling != Sampling::default() {
                    let size = sampling.size.unwrap_or_else(|| selector.sample_size());
                    selector.set_sampling(size, sampling.every_attempt);
                }
                selector
            })
            .collect();
        Self {
            deque: b.deque,
            amount: b.amount,
            assignment: b.assignment,
            order: b.order,
            selectors,
        }
    }
}

impl Policy for Stealing {
    fn deal(&self, w: usize, workers: usize, initial: usize, worker: &mut Worker) {
        // Depth-first, thieves take the oldest end, the share's last tasks, and the owner
        // pops its first task first; breadth-first, the owner takes from the same end as
        // thieves, so the share's first tasks are there.
        let mut share: Vec<u32> = share(self.assignment, w, workers, initial).collect();
        if self.order == Order::DepthFirst {
            share.reverse();
        }
        worker.queue = share.into_iter().map(Queued::initial).collect();
    }

    fn children(&self) -> Children {
        match self.order {
            Order::DepthFirst => Children::NewestNext,
            Order::BreadthFirst => Children::Deque,
        }
    }

    fn push_pop(&self, costs: &Costs) -> f64 {
        match self.deque {
            DequeKind::Abp => costs.abp_push_pop,
            DequeKind::Locked => costs.locked_push_pop,
        }
    }

    fn next_task(&mut self, sim: &mut Sim<'_>, _now: f64, w: usize) -> Next {
        own_next_or_deque(sim, w, self.order)
    }

    fn begin_search(&mut self, w: usize) {
        self.selectors[w].begin();
    }

    fn choose_victim(&mut self, sim: &Sim<'_>, w: usize) -> Choice {
        let selector = &mut self.selectors[w];
        let victim = selector.choose(&sim.workers, &sim.thieves);
        Choice {
            victim,
            probes: selector.last_probes(),
        }
    }

    fn failed_attempt(&mut self, w: usize) {
        self.selectors[w].failed();
    }

    fn steal_amount(&self) -> StealAmount {
        self.amount
    }
}

/// `rayon`: the scope's body runs on one pool thread, so every initial task starts in that
/// worker's deque (its owner runs the last first, thieves take the first); a task's children
/// all go to its worker's deque as they are spawned (rayon has no slot for the next task),
/// and a thief takes one task from victims tried in turn from a random start, as rayon's
/// workers do; deque costs are `abp`'s (rayon's deque is also lock-free).
#[derive(Debug)]
pub(super) struct Rayon {
    /// Each worker's round of victims.
    rounds: Vec<Round>,
}

/// Where a `rayon` thief's round of victims started, how many it has tried, and the
/// generator of its starts.
#[derive(Debug)]
struct Round {
    start: usize,
    tried: usize,
    rng: XorShift,
}

impl Rayon {
    pub(super) fn new(_: RayonScope, workers: usize) -> Self {
        let rounds = (0..workers)
            .map(|w| Round {
                start: 0,
                tried: 0,
                rng: XorShift::new(w as u64),
            })
            .collect();
        Self { rounds }
    }
}

impl Policy for Rayon {
    fn deal(&self, w: usize, _workers: usize, initial: usize, worker: &mut Worker) {
        if w == 0 {
            worker.queue = (0..initial as u32).map(Queued::initial).collect();
        }
    }

    fn children(&self) -> Children {
        Children::Deque
    }

    fn push_pop(&self, costs: &Costs) -> f64 {
        costs.abp_push_pop
    }

    fn next_task(&mut self, sim: &mut Sim<'_>, _now: f64, w: usize) -> Next {
        // The owner pops its newest task, as depth-first.
        own_next_or_deque(sim, w, Order::DepthFirst)
    }

    /// The others in turn from a random start, a new start each round.
    fn choose_victim(&mut self, sim: &Sim<'_>, me: usize) -> Choice {
        let p = sim.workers.len();
        let round = &mut self.rounds[me];
        if round.tried == 0 || round.tried >= p - 1 {
            round.start = round.rng.below(p);
            round.tried = 0;
        }
        let mut victim = (round.start + round.tried) % p;
        round.tried += 1;
        if victim == me {
            victim = (victim + 1) % p;
            round.start += 1;
        }
        Choice { victim, probes: 0 }
    }

    /// rayon's deque gives one task a steal.
    fn steal_amount(&self) -> StealAmount {
        StealAmount::One
    }
}

/// The initial tasks dealt to worker `w` of `workers`, of `initial`.
fn share(
    assignment: Assignment,
    w: usize,
    workers: usize,
    initial: usize,
) -> impl Iterator<Item = u32> {
    assignment.share(w, workers, initial).map(|i| i as u32)
}

/// A deque policy's next task for worker `w`: the task held to run next, else one from its
/// own deque, the newest (depth-first) or the oldest (breadth-first); with neither, it
/// steals.
fn own_next_or_deque(sim: &mut Sim<'_>, w: usize, order: Order) -> Next {
    let worker = &mut sim.workers[w];
    if let Some(q) = worker.next.take() {
        return Next::Run(q);
    }
    let own = match order {
        Order::DepthFirst => worker.queue.pop_back(),
        Order::BreadthFirst => worker.queue.pop_front(),
    };
    match own {
        Some(q) => {
            sim.stealable -= 1;
            Next::Run(q)
        }
        None => Next::Steal,
    }
}
