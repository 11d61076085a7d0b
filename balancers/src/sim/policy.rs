//! The interface the simulator replays a balancer through: a [`Policy`] makes a balancer's
//! decisions, the engine keeps time, runs the tasks and charges the costs; a [`Simulated`]
//! balancer makes its own policy, so one value runs on real threads and on simulated workers.
//!
//! # What the engine asks, and when
//!
//! A policy is made for one run on a given number of workers ([`Simulated::policy`]). The
//! engine then asks it, in this order:
//!
//! 1. **[`deal`](Policy::deal)**, for each worker in turn, before time starts: where its share
//!    of the initial tasks waits. A share can be *held* (private to the worker, taken in order
//!    by [`Simulation::take_held`]) or *enqueued* (in the worker's queue, where thieves look).
//! 2. **[`next_task`](Policy::next_task)**, each time a worker is free: at time 0, and then
//!    whenever its task ends, a shared source it waited for serves it, or a steal it made
//!    arrives. The answer ([`Next`]) runs a task now, waits for a shared source until a given
//!    time (a counter that serves one worker at a time charges its cost this way, with
//!    [`Simulation::draw`]), steals, or stops the worker for good.
//! 3. **[`children`](Policy::children)**, as a task starts, spawns children and ends: where its
//!    children go ([`Children`]), and **[`push_pop`](Policy::push_pop)**, what passing one
//!    through the deque costs the task that spawns it.
//! 4. Only for a worker that steals: **[`begin_search`](Policy::begin_search)** when it runs
//!    dry, **[`choose_victim`](Policy::choose_victim)** for each attempt,
//!    **[`failed_attempt`](Policy::failed_attempt)** when one finds nothing or meets another
//!    thief, and **[`steal_amount`](Policy::steal_amount)** when one succeeds.
//!
//! The engine does the rest the same way for every policy: each worker's queue (newest at the
//! owner's end, oldest at the thieves'), the task held to run next, steals and what they cost
//! ([`Costs`]: a successful steal runs the oldest task it took as soon as it arrives, and the
//! rest enter the thief's queue), thieves that wait while no queue holds work, and the count
//! of every task that runs. A policy that runs a task twice, or answers [`Next::Done`]
//! everywhere while tasks are left, stops the run with a panic that says so.
//!
//! The built-in balancers' policies go through this same interface:
//! [`BalancerKind`](crate::BalancerKind) is [`Simulated`], as are
//! [`StaticTiles`](crate::StaticTiles), [`CentralCounter`](crate::CentralCounter),
//! [`WorkStealing`](crate::WorkStealing) and [`RayonScope`](crate::RayonScope).
//!
//! # A policy of one's own
//!
//! The smallest useful policy keeps spawned tasks on their worker and shares nothing: each
//! worker runs its interleaved share of the initial tasks, each task's subtree depth-first
//! before the next, as `static` does.
//!
//! ```
//! use balancers::sim::{Children, Next, Policy, Simulation};
//!
//! #[derive(Debug)]
//! struct Interleaved;
//!
//! impl Policy for Interleaved {
//!     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
//!         let (workers, initial) = (sim.workers(), sim.initial_tasks());
//!         sim.hold(w, (w..initial).step_by(workers));
//!     }
//!
//!     fn children(&self) -> Children {
//!         Children::Kept
//!     }
//!
//!     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
//!         let next = sim.pop_newest(w).or_else(|| sim.take_held(w));
//!         next.map_or(Next::Done, Next::Run)
//!     }
//! }
//! ```
//!
//! [`simulate_policy`](super::simulate_policy) runs it over a recorded tree.

use crate::StealAmount;
use crate::balancer::Balancer;

use super::engine::{Costs, Simulation};

/// One balancer's decisions, asked by the simulator as a run goes on (see the
/// [module documentation](self) for when each is asked).
///
/// A policy belongs to one run: it may keep state (a counter's position, each worker's victim
/// selection) and is made afresh for the next run, on as many workers as that run has.
///
/// A policy whose [`next_task`](Self::next_task) never answers [`Next::Steal`] never steals,
/// and need not say how it would: the stealing methods' defaults are for such a policy.
///
/// The trait is dyn-compatible: the simulator runs a `Box<dyn Policy>` as well as a concrete
/// type.
pub trait Policy {
    /// Before the run: where worker `w`'s share of the initial tasks waits, held
    /// ([`Simulation::hold`]) or in its queue ([`Simulation::enqueue_initial`]); nothing, for
    /// a policy that hands them out as the run goes on.
    fn deal(&mut self, sim: &mut Simulation<'_>, w: usize);

    /// Where the children of a running task go.
    fn children(&self) -> Children;

    /// What pushing a task on this policy's deque and popping it again costs beyond a local
    /// stack's, charged to the task that spawns it for each child that passes through the
    /// queue ([`Children::through_deque`]); nothing for a policy without a deque.
    fn push_pop(&self, _costs: &Costs) -> f64 {
        0.0
    }

    /// Worker `w` is free at `now`: where its next task comes from.
    fn next_task(&mut self, sim: &mut Simulation<'_>, now: f64, w: usize) -> Next;

    /// Worker `w` has just run dry and begins a search for work.
    fn begin_search(&mut self, _w: usize) {}

    /// The victim of worker `w`'s next steal attempt.
    fn choose_victim(&mut self, _sim: &Simulation<'_>, _w: usize) -> Victim {
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
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// From its own tasks: it runs this one now.
    Run(Queued),
    /// From a shared source that serves it at this time (not before now), when it asks
    /// again.
    At(f64),
    /// From another worker: it has nothing of its own and steals.
    Steal,
    /// Nowhere: nothing more will come its way, and nothing more is scheduled for it.
    Done,
}

/// Where the children of a running task go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Children {
    /// To the worker's own queue when the task ends, in the order spawned (a local queue,
    /// which no other balancer's worker sees).
    Kept,
    /// Each, as it is spawned, becomes the worker's task to run next
    /// ([`Simulation::take_next`]); the one it displaces enters the worker's deque.
    NewestNext,
    /// Each, as it is spawned, enters the worker's deque.
    Deque,
}

impl Children {
    /// How many of a task's `spawned` children pass through its worker's deque.
    pub fn through_deque(self, spawned: usize) -> usize {
        match self {
            Children::Kept => 0,
            Children::NewestNext => spawned.saturating_sub(1),
            Children::Deque => spawned,
        }
    }
}

/// A task waiting to run, with its depth in the spawn tree (initial tasks 0). Only the
/// simulation makes them: a policy passes on the ones it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    task: u32,
    depth: u32,
}

impl Queued {
    /// `task` at `depth`.
    pub(super) fn new(task: u32, depth: u32) -> Self {
        Self { task, depth }
    }

    /// Initial task `task`, at depth 0.
    pub(super) fn initial(task: u32) -> Self {
        Self::new(task, 0)
    }

    /// The task's number in the tree (initial tasks first).
    pub fn task(self) -> usize {
        self.task as usize
    }

    /// Its depth in the spawn tree: 0 for an initial task.
    pub fn depth(self) -> u32 {
        self.depth
    }
}

/// A thief's choice: its victim, and how many workers it read to choose (each read costs
/// [`Costs::probe`] before the attempt sets off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Victim {
    /// The worker to steal from.
    pub worker: usize,
    /// Workers read to choose it.
    pub probes: usize,
}
/// A balancer whose decisions the simulator can replay: the link between the balancer that
/// runs on threads and the policy that runs on simulated workers, so that one value (say
/// `Guided { k: 2, .. }`) names both.
///
/// [`Balancer::run`] has type parameters, so neither trait can be a trait object; a list of
/// simulated balancers of different types is a list of `Box<dyn` [`DynSimulated`]`>`, which
/// every `Simulated` balancer is.
pub trait Simulated: Balancer {
    /// A fresh policy for one run on `workers` workers whose scheduling costs are `costs`.
    fn policy(&self, workers: usize, costs: &Costs) -> Box<dyn Policy>;
}

/// What the simulator needs of a [`Simulated`] balancer, as a trait object: its name and its
/// policies. Implemented for every `Simulated` balancer.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::sim::DynSimulated;
/// use balancers::{BalancerKind, WorkStealing};
///
/// let balancers: Vec<Box<dyn DynSimulated>> = vec![
///     Box::new(BalancerKind::counter(NonZeroUsize::MIN)),
///     Box::new(WorkStealing::default()),
/// ];
/// assert_eq!(balancers[0].balancer_name(), "counter/chunk=1");
/// ```
pub trait DynSimulated {
    /// Its name in reports ([`Balancer::name`]).
    fn balancer_name(&self) -> String;

    /// A fresh policy for one run ([`Simulated::policy`]).
    fn simulated_policy(&self, workers: usize, costs: &Costs) -> Box<dyn Policy>;
}

impl<B: Simulated + ?Sized> DynSimulated for B {
    fn balancer_name(&self) -> String {
        self.name()
    }

    fn simulated_policy(&self, workers: usize, costs: &Costs) -> Box<dyn Policy> {
        self.policy(workers, costs)
    }
}
