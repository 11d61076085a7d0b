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
///
/// ```
/// # use balancers::StealAmount;
/// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
/// # use balancers::sim::RecordedTask;
/// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
/// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
/// # /// `5 + 2t`, of a second each, at its end.
/// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
/// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
/// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
/// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
/// #     };
/// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
/// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
/// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
/// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
/// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
/// #     let tree = tree.unwrap();
/// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
/// # }
/// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
/// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
/// #     log.extend(next.map(Queued::task));
/// #     next.map_or(Next::Done, Next::Run)
/// # }
/// // `run` simulates four tiles of a second, each spawning two tasks of a second.
///
/// /// Worker 0 holds every tile; the others steal from the worker after them.
/// struct NextDoor;
///
/// impl Policy for NextDoor {
///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
///         if w == 0 {
///             sim.hold(0, 0..sim.initial_tasks());
///         }
///     }
///     fn children(&self) -> Children {
///         Children::Deque
///     }
///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
///         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Steal, Next::Run)
///     }
///     fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
///         Victim { worker: (w + 1) % sim.workers(), probes: 0 }
///     }
///     fn steal_amount(&self) -> StealAmount {
///         StealAmount::One
///     }
/// }
///
/// let result = run(&mut NextDoor, 2);
/// assert!(result.workers[1].tasks > 0, "worker 1 ran what it stole");
/// ```
pub trait Policy {
    /// Before the run: where worker `w`'s share of the initial tasks waits, held
    /// ([`Simulation::hold`]) or in its queue ([`Simulation::enqueue_initial`]); nothing, for
    /// a policy that hands them out as the run goes on.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct AllOnZero;
    /// impl Policy for AllOnZero {
    ///     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    ///         if w == 0 {
    ///             sim.hold(0, 0..sim.initial_tasks());
    ///         }
    ///     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// let result = run(&mut AllOnZero, 2);
    /// assert_eq!((result.workers[0].tasks, result.workers[1].tasks), (12, 0));
    /// ```
    fn deal(&mut self, sim: &mut Simulation<'_>, w: usize);

    /// Where the children of a running task go.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    /// // `ran` notes the task it is given, if any, and runs it.
    ///
    /// struct Log(Vec<usize>);
    /// impl Policy for Log {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    ///     fn children(&self) -> Children {
    ///         Children::NewestNext
    ///     }
    ///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    ///         let next = sim.take_next(w).or_else(|| sim.pop_newest(w));
    ///         ran(&mut self.0, next.or_else(|| sim.take_held(w)))
    ///     }
    /// }
    /// let mut log = Log(Vec::new());
    /// run(&mut log, 1);
    /// assert_eq!(log.0[..3], [0, 5, 4], "the newest child next, the other from the deque");
    /// ```
    fn children(&self) -> Children;

    /// What pushing a task on this policy's deque and popping it again costs beyond a local
    /// stack's, charged to the task that spawns it for each child that passes through the
    /// queue ([`Children::through_deque`]); nothing for a policy without a deque.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Deque;
    /// impl Policy for Deque {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    ///     fn children(&self) -> Children {
    ///         Children::Deque
    ///     }
    ///     fn push_pop(&self, costs: &Costs) -> f64 {
    ///         costs.abp_push_pop
    ///     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
    /// #     }
    /// }
    /// // Twelve seconds of tasks, and eight children through the deque.
    /// let busy = run(&mut Deque, 1).workers[0].busy;
    /// assert!((busy - (12.0 + 8.0 * Costs::default().abp_push_pop)).abs() < 1e-12);
    /// ```
    fn push_pop(&self, _costs: &Costs) -> f64 {
        0.0
    }

    /// Worker `w` is free at `now`: where its next task comes from.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Interleaved;
    /// impl Policy for Interleaved {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    ///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    ///         let next = sim.pop_newest(w).or_else(|| sim.take_held(w));
    ///         next.map_or(Next::Done, Next::Run)
    ///     }
    /// }
    /// let result = run(&mut Interleaved, 2);
    /// assert_eq!(result.makespan, 6.0, "each worker two tiles and their four children");
    /// ```
    fn next_task(&mut self, sim: &mut Simulation<'_>, now: f64, w: usize) -> Next;

    /// Worker `w` has just run dry and begins a search for work.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// #[derive(Default)]
    /// struct Counted { searches: usize }
    /// impl Policy for Counted {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         if w == 0 {
    /// #             sim.hold(0, 0..sim.initial_tasks());
    /// #         }
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Deque
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Steal, Next::Run)
    /// #     }
    /// #     fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
    /// #         Victim { worker: (w + 1) % sim.workers(), probes: 0 }
    /// #     }
    /// #     fn steal_amount(&self) -> StealAmount {
    /// #         StealAmount::One
    /// #     }
    ///     fn begin_search(&mut self, _w: usize) {
    ///         self.searches += 1;
    ///     }
    /// }
    /// let mut policy = Counted::default();
    /// run(&mut policy, 2);
    /// assert!(policy.searches >= 1, "worker 1 starts with nothing");
    /// ```
    fn begin_search(&mut self, _w: usize) {}

    /// The victim of worker `w`'s next steal attempt.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// #[derive(Default)]
    /// struct NextDoor;
    /// impl Policy for NextDoor {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         if w == 0 {
    /// #             sim.hold(0, 0..sim.initial_tasks());
    /// #         }
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Deque
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Steal, Next::Run)
    /// #     }
    /// #     fn steal_amount(&self) -> StealAmount {
    /// #         StealAmount::One
    /// #     }
    ///     fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
    ///         Victim { worker: (w + 1) % sim.workers(), probes: 0 }
    ///     }
    /// }
    /// let result = run(&mut NextDoor, 2);
    /// assert!(result.steal_successes() >= 1);
    /// ```
    fn choose_victim(&mut self, _sim: &Simulation<'_>, _w: usize) -> Victim {
        unreachable!("a policy that never answers Next::Steal chooses no victims")
    }

    /// Worker `w`'s attempt failed: the victim had nothing, or another thief held it.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// #[derive(Default)]
    /// struct Counted { failed: usize }
    /// impl Policy for Counted {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         if w == 0 {
    /// #             sim.hold(0, 0..sim.initial_tasks());
    /// #         }
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Deque
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Steal, Next::Run)
    /// #     }
    /// #     fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
    /// #         Victim { worker: (w + 1) % sim.workers(), probes: 0 }
    /// #     }
    /// #     fn steal_amount(&self) -> StealAmount {
    /// #         StealAmount::One
    /// #     }
    ///     fn failed_attempt(&mut self, _w: usize) {
    ///         self.failed += 1;
    ///     }
    /// }
    /// let mut policy = Counted::default();
    /// let result = run(&mut policy, 2);
    /// // At time 0 worker 0's deque is empty: worker 1's first attempt fails.
    /// assert!(policy.failed >= 1);
    /// assert!(result.steal_attempts() >= result.steal_successes() + policy.failed as u64);
    /// ```
    fn failed_attempt(&mut self, _w: usize) {}

    /// How much a successful steal takes.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// #[derive(Default)]
    /// struct Halves;
    /// impl Policy for Halves {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         if w == 0 {
    /// #             sim.hold(0, 0..sim.initial_tasks());
    /// #         }
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Deque
    /// #     }
    /// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    /// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Steal, Next::Run)
    /// #     }
    /// #     fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
    /// #         Victim { worker: (w + 1) % sim.workers(), probes: 0 }
    /// #     }
    ///     fn steal_amount(&self) -> StealAmount {
    ///         StealAmount::Half
    ///     }
    /// }
    /// let result = run(&mut Halves, 2);
    /// let stolen: u64 = result.workers.iter().map(|w| w.tasks_stolen).sum();
    /// assert!(stolen >= result.steal_successes() && stolen >= 1);
    /// ```
    fn steal_amount(&self) -> StealAmount {
        unreachable!("a policy that never answers Next::Steal takes nothing")
    }
}

/// Where a free worker's next task comes from.
///
/// ```
/// # use balancers::StealAmount;
/// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
/// # use balancers::sim::RecordedTask;
/// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
/// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
/// # /// `5 + 2t`, of a second each, at its end.
/// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
/// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
/// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
/// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
/// #     };
/// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
/// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
/// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
/// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
/// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
/// #     let tree = tree.unwrap();
/// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
/// # }
/// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
/// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
/// #     log.extend(next.map(Queued::task));
/// #     next.map_or(Next::Done, Next::Run)
/// # }
/// // `run` simulates four tiles of a second, each spawning two tasks of a second.
///
/// /// Worker 1 takes its share only from time 5.
/// struct Late;
/// impl Policy for Late {
/// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
/// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
/// #         sim.hold(w, (w..initial).step_by(workers));
/// #     }
/// #     fn children(&self) -> Children {
/// #         Children::Kept
/// #     }
///     fn next_task(&mut self, sim: &mut Simulation<'_>, now: f64, w: usize) -> Next {
///         if w == 1 && now < 5.0 {
///             return Next::At(5.0);
///         }
///         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Done, Next::Run)
///     }
/// }
/// // Each worker has six seconds of tasks; worker 1 starts at 5.
/// assert_eq!(run(&mut Late, 2).makespan, 11.0);
/// ```
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
///
/// ```
/// use balancers::WorkStealing;
/// use balancers::sim::{Children, Costs, Simulated};
///
/// // Depth-first work stealing runs a task's newest child next, and queues the rest.
/// let policy = WorkStealing::default().policy(4, &Costs::default());
/// assert_eq!(policy.children(), Children::NewestNext);
/// ```
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
    ///
    /// ```
    /// use balancers::sim::Children;
    ///
    /// assert_eq!(Children::Kept.through_deque(3), 0);
    /// assert_eq!(Children::NewestNext.through_deque(3), 2, "one runs next");
    /// assert_eq!(Children::Deque.through_deque(3), 3);
    /// ```
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
///
/// ```
/// # use balancers::StealAmount;
/// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
/// # use balancers::sim::RecordedTask;
/// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
/// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
/// # /// `5 + 2t`, of a second each, at its end.
/// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
/// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
/// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
/// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
/// #     };
/// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
/// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
/// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
/// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
/// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
/// #     let tree = tree.unwrap();
/// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
/// # }
/// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
/// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
/// #     log.extend(next.map(Queued::task));
/// #     next.map_or(Next::Done, Next::Run)
/// # }
/// // `run` simulates four tiles of a second, each spawning two tasks of a second.
///
/// struct Log(Vec<Queued>);
/// impl Policy for Log {
/// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
/// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
/// #         sim.hold(w, (w..initial).step_by(workers));
/// #     }
/// #     fn children(&self) -> Children {
/// #         Children::Kept
/// #     }
///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
///         let next = sim.pop_newest(w).or_else(|| sim.take_held(w));
///         self.0.extend(next);
///         next.map_or(Next::Done, Next::Run)
///     }
/// }
/// let mut log = Log(Vec::new());
/// run(&mut log, 1);
/// let first: Vec<_> = log.0[..3].iter().map(|q| (q.task(), q.depth())).collect();
/// assert_eq!(first, [(0, 0), (5, 1), (4, 1)]);
/// ```
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
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Log(Vec<Queued>);
    /// impl Policy for Log {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    ///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    ///         let next = sim.pop_newest(w).or_else(|| sim.take_held(w));
    ///         self.0.extend(next);
    ///         next.map_or(Next::Done, Next::Run)
    ///     }
    /// }
    /// let mut log = Log(Vec::new());
    /// run(&mut log, 1);
    /// let tasks: Vec<usize> = log.0.iter().map(|q| q.task()).collect();
    /// assert_eq!(tasks[..4], [0, 5, 4, 1]);
    /// ```
    pub fn task(self) -> usize {
        self.task as usize
    }

    /// Its depth in the spawn tree: 0 for an initial task.
    ///
    /// ```
    /// # use balancers::StealAmount;
    /// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
    /// # use balancers::sim::RecordedTask;
    /// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
    /// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
    /// # /// `5 + 2t`, of a second each, at its end.
    /// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
    /// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
    /// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
    /// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
    /// #     };
    /// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
    /// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
    /// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
    /// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
    /// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
    /// #     let tree = tree.unwrap();
    /// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
    /// # }
    /// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
    /// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
    /// #     log.extend(next.map(Queued::task));
    /// #     next.map_or(Next::Done, Next::Run)
    /// # }
    /// // `run` simulates four tiles of a second, each spawning two tasks of a second.
    ///
    /// struct Log(Vec<Queued>);
    /// impl Policy for Log {
    /// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
    /// #         let (workers, initial) = (sim.workers(), sim.initial_tasks());
    /// #         sim.hold(w, (w..initial).step_by(workers));
    /// #     }
    /// #     fn children(&self) -> Children {
    /// #         Children::Kept
    /// #     }
    ///     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
    ///         let next = sim.pop_newest(w).or_else(|| sim.take_held(w));
    ///         self.0.extend(next);
    ///         next.map_or(Next::Done, Next::Run)
    ///     }
    /// }
    /// let mut log = Log(Vec::new());
    /// run(&mut log, 1);
    /// let depths: Vec<u32> = log.0.iter().map(|q| q.depth()).collect();
    /// assert_eq!(depths[..4], [0, 1, 1, 0]);
    /// ```
    pub fn depth(self) -> u32 {
        self.depth
    }
}

/// A thief's choice: its victim, and how many workers it read to choose (each read costs
/// [`Costs::probe`] before the attempt sets off).
///
/// ```
/// # use balancers::StealAmount;
/// # use balancers::sim::{Children, CostModel, Costs, NO_PARENT, Next, Policy, Queued};
/// # use balancers::sim::RecordedTask;
/// # use balancers::sim::{SimResult, Simulation, TaskTree, Victim, simulate_policy};
/// # /// Four initial tasks (0 to 3) of a second each; task `t` spawns tasks `4 + 2t` and
/// # /// `5 + 2t`, of a second each, at its end.
/// # fn run(policy: &mut dyn Policy, workers: usize) -> SimResult {
/// #     let task = |id: u64, parent: u64, index: u64| RecordedTask {
/// #         id, parent, index: index as u32, kind: 0, depth: u16::from(parent != NO_PARENT),
/// #         place: 0, work: [1, 0, 0, 0, 0, 0, 0, 0], progress_at_spawn: 1, progress: 1,
/// #     };
/// #     let mut tasks: Vec<_> = (0..4).map(|t| task(t, NO_PARENT, t)).collect();
/// #     tasks.extend((0..8).map(|c| task(4 + c, c / 2, c % 2)));
/// #     let model = CostModel { per_task: 0.0, per_unit: vec![1.0], fit: None };
/// #     let (kinds, features) = (vec!["tile".into()], vec!["work".into()]);
/// #     let tree = TaskTree::from_recorded(String::new(), kinds, features, model, &tasks);
/// #     let tree = tree.unwrap();
/// #     simulate_policy(&tree, &tree.costs(&tree.model), workers, &Costs::default(), policy)
/// # }
/// # /// Runs `next`, if there is one, and notes it in `log`; else the worker is done.
/// # fn ran(log: &mut Vec<usize>, next: Option<Queued>) -> Next {
/// #     log.extend(next.map(Queued::task));
/// #     next.map_or(Next::Done, Next::Run)
/// # }
/// // `run` simulates four tiles of a second, each spawning two tasks of a second.
///
/// struct Longest;
/// impl Policy for Longest {
/// #     fn deal(&mut self, sim: &mut Simulation<'_>, w: usize) {
/// #         if w == 0 {
/// #             sim.hold(0, 0..sim.initial_tasks());
/// #         }
/// #     }
/// #     fn children(&self) -> Children {
/// #         Children::Deque
/// #     }
/// #     fn next_task(&mut self, sim: &mut Simulation<'_>, _now: f64, w: usize) -> Next {
/// #         sim.pop_newest(w).or_else(|| sim.take_held(w)).map_or(Next::Steal, Next::Run)
/// #     }
///     /// The worker with the most tasks queued, found by reading every other one.
///     fn choose_victim(&mut self, sim: &Simulation<'_>, w: usize) -> Victim {
///         let others = (0..sim.workers()).filter(|&v| v != w);
///         let longest = others.max_by_key(|&v| sim.queued(v)).unwrap_or(w);
///         Victim { worker: longest, probes: sim.workers() - 1 }
///     }
/// #     fn steal_amount(&self) -> StealAmount {
/// #         StealAmount::One
/// #     }
/// }
/// assert!(run(&mut Longest, 3).steal_successes() >= 1);
/// ```
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
///
/// ```
/// use balancers::{Assignment, BalancerKind, WorkStealing};
/// use balancers::sim::{Simulated, simulate_policy, wool};
///
/// fn makespan(balancer: &impl Simulated, workers: usize) -> f64 {
///     let (tree, seconds) = wool::tree(workers, 1);
///     let costs = wool::costs(1);
///     let mut policy = balancer.policy(workers, &costs);
///     simulate_policy(&tree, &seconds, workers, &costs, &mut *policy).makespan
/// }
/// let alone = BalancerKind::static_tiles(Assignment::Interleaved);
/// assert!(makespan(&WorkStealing::default(), 8) < makespan(&alone, 8));
/// ```
pub trait Simulated: Balancer {
    /// A fresh policy for one run on `workers` workers whose scheduling costs are `costs`.
    ///
    /// ```
    /// use balancers::WorkStealing;
    /// use balancers::sim::{Simulated, simulate_policy, wool};
    ///
    /// let (tree, seconds) = wool::tree(4, 1);
    /// let costs = wool::costs(1);
    /// let mut policy = WorkStealing::default().policy(4, &costs);
    /// let result = simulate_policy(&tree, &seconds, 4, &costs, &mut *policy);
    /// assert_eq!(result.workers.iter().map(|w| w.tasks).sum::<u64>(), tree.len() as u64);
    /// ```
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
    ///
    /// ```
    /// use balancers::RayonScope;
    /// use balancers::sim::DynSimulated;
    ///
    /// let balancer: Box<dyn DynSimulated> = Box::new(RayonScope);
    /// assert_eq!(balancer.balancer_name(), "rayon");
    /// ```
    fn balancer_name(&self) -> String;

    /// A fresh policy for one run ([`Simulated::policy`]).
    ///
    /// ```
    /// use balancers::RayonScope;
    /// use balancers::sim::{DynSimulated, simulate_policy, wool};
    ///
    /// let balancer: Box<dyn DynSimulated> = Box::new(RayonScope);
    /// let (tree, seconds) = wool::tree(2, 1);
    /// let costs = wool::costs(1);
    /// let mut policy = balancer.simulated_policy(2, &costs);
    /// assert!(simulate_policy(&tree, &seconds, 2, &costs, &mut *policy).makespan > 0.0);
    /// ```
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
