//! The built-in balancers' policies as the simulator runs them: one [`Policy`] per balancer,
//! each saying in one place where a worker's share of the initial tasks waits, where its next
//! task comes from, where the tasks it spawns go, what its deque costs and how it steals
//! (tokio's scheduler keeps its `next_task` and `steal_work` in one place the same way). The
//! engine keeps time, runs tasks and carries steal attempts to their victims; it asks the
//! policy at each of those decisions and decides nothing by itself.
//!
//! They see the run only through [`Simulation`]'s public methods, as a policy of one's own
//! does; the one exception, `Simulation::prospects`, hands the balancers' victim selection
//! what [`Simulation::queued`], [`Simulation::oldest_depth`] and [`Simulation::searching`]
//! say, in the form it reads.
//!
//! What each policy does is what its balancer does, with the same code where it can be: the
//! initial tasks are dealt by [`Assignment::share`], victims are chosen by the balancers' own
//! victim selection ([`VictimSelector`]), seeded the same way per worker.

use std::num::NonZeroUsize;

use crate::order::Order;
use crate::static_tiles::{Assignment, StaticTiles};
use crate::stealing::{DequeKind, StealAmount, WorkStealing};
use crate::victim::{VictimSelector, XorShift};
use crate::{BalancerKind, CentralCounter, RayonScope};

use super::engine::{Costs, Sampling, Simulation};
use super::policy::{Children, Next, Policy, Simulated, Victim};

impl Simulated for BalancerKind {
    fn policy(&self, workers: usize, costs: &Costs) -> Box<dyn Policy> {
        match self {
            BalancerKind::Static(b) => b.policy(workers, costs),
            BalancerKind::Counter(b) => b.policy(workers, costs),
            BalancerKind::Stealing(b) => b.policy(workers, costs),
            BalancerKind::Rayon(b) => b.policy(workers, costs),
        }
    }
}

impl Simulated for StaticTiles {
    fn policy(&self, _workers: usize, _costs: &Costs) -> Box<dyn Policy> {
        Box::new(Static::new(*self))
    }
}

impl Simulated for CentralCounter {
    fn policy(&self, _workers: usize, _costs: &Costs) -> Box<dyn Policy> {
        Box::new(Counter::new(*self))
    }
}

impl Simulated for WorkStealing {
    /// Victims sampled as `costs.sampling` says.
    fn policy(&self, workers: usize, costs: &Costs) -> Box<dyn Policy> {
        Box::new(Stealing::new(*self, workers, costs.sampling))
    }
}

impl Simulated for RayonScope {
    fn policy(&self, workers: usize, _costs: &Costs) -> Box<dyn Policy> {
        Box::new(Rayon::new(*self, workers))
    }
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
    fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
        let share = self.assignment.share(w, sim.workers(), sim.initial_tasks());
        sim.hold(w, share);
    }

    fn children(&self) -> Children {
        Children::Kept
    }

    fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
        let next = match self.order {
            Order::BreadthFirst => sim.take_held(w).or_else(|| sim.pop_oldest(w)),
            Order::DepthFirst => sim.pop_newest(w).or_else(|| sim.take_held(w)),
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
    fn deal(&mut self, _sim: &mut Simulation<'_>, _w: usize) {}

    fn children(&self) -> Children {
        Children::Kept
    }

    fn next_task(&mut self, sim: &mut Simulation<'_>, now: f64, w: usize) -> Next {
        if self.order == Order::DepthFirst
            && let Some(q) = sim.pop_newest(w)
        {
            return Next::Run(q);
        }
        if let Some(q) = sim.take_held(w) {
            return Next::Run(q);
        }
        let initial = sim.initial_tasks();
        if self.next_initial >= initial {
            // The counter is spent: breadth-first, the spawned tasks run now, oldest first;
            // then it stops.
            return sim.pop_oldest(w).map_or(Next::Done, Next::Run);
        }
        // The counter serves one worker at a time.
        let served = now.max(self.free_at) + sim.draw(w, sim.costs().counter);
        self.free_at = served;
        let end = (self.next_initial + self.chunk.get()).min(initial);
        sim.hold(w, self.next_initial..end);
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
    fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
        // Depth-first, thieves take the oldest end, the share's last tasks, and the owner
        // pops its first task first; breadth-first, the owner takes from the same end as
        // thieves, so the share's first tasks are there.
        let mut share: Vec<usize> = self
            .assignment
            .share(w, sim.workers(), sim.initial_tasks())
            .collect();
        if self.order == Order::DepthFirst {
            share.reverse();
        }
        for task in share {
            sim.enqueue_initial(w, task);
        }
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

    fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
        own_next_or_deque(sim, w, self.order)
    }

    fn begin_search(&mut self, w: usize) {
        self.selectors[w].begin();
    }

    fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
        let selector = &mut self.selectors[w];
        let (workers, thieves) = sim.prospects();
        Victim {
            worker: selector.choose(workers, thieves),
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
/// workers do; deque costs are `abp`'s (rayon's deque is also lock-free), and each child
/// costs its spawner [`Costs::rayon_job`] once for each worker, itself included.
#[derive(Debug)]
pub(super) struct Rayon {
    /// Each worker's round of victims.
    rounds: Vec<Round>,
    /// The workers.
    workers: usize,
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
        Self { rounds, workers }
    }
}

impl Policy for Rayon {
    fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
        if w == 0 {
            for task in 0..sim.initial_tasks() {
                sim.enqueue_initial(w, task);
            }
        }
    }

    fn children(&self) -> Children {
        Children::Deque
    }

    fn push_pop(&self, costs: &Costs) -> f64 {
        costs.abp_push_pop + costs.rayon_job * self.workers as f64
    }

    fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
        // The owner pops its newest task, as depth-first.
        own_next_or_deque(sim, w, Order::DepthFirst)
    }

    /// The others in turn from a random start, a new start each round.
    fn choose_victim(&mut self, sim: &Simulation<'_>, me: usize) -> Victim {
        let p = sim.workers();
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
        Victim {
            worker: victim,
            probes: 0,
        }
    }

    /// rayon's deque gives one task a steal.
    fn steal_amount(&self) -> StealAmount {
        StealAmount::One
    }
}

/// A deque policy's next task for worker `w`: the task held to run next, else one from its
/// own deque, the newest (depth-first) or the oldest (breadth-first); with neither, it
/// steals.
fn own_next_or_deque(sim: &mut Simulation<'_>, w: usize, order: Order) -> Next {
    if let Some(q) = sim.take_next(w) {
        return Next::Run(q);
    }
    let own = match order {
        Order::DepthFirst => sim.pop_newest(w),
        Order::BreadthFirst => sim.pop_oldest(w),
    };
    own.map_or(Next::Steal, Next::Run)
}
