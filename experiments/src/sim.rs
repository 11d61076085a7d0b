//! `raylb sim`: a recorded frame replayed under the balancers' policies on simulated workers,
//! or Faxén and Ardelius's `tree` model (`--wool-tree`).

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use balancers::sim::{Costs, Sampling, SimResult, TaskTree, simulate, simulate_policy, wool};
use balancers::{
    Assignment, Balancer, BalancerKind, Choice, DequeKind, Order, StealAmount, VictimPolicy,
    WorkStealing,
};
use renderer::device::{BalancerName, BalancerRequest};
use renderer::input::read_regular_file;
use renderer::render::CpuBalancer;
use renderer::user_balancer::UserBalancer;
use serde::Serialize;

use crate::progress::Progress;
use crate::report::{Axes, OutputFiles, Panel, Series, Table, csv_text, line_chart, rounded};

/// The largest task file read: `treasure` at 1024² records in about 40 MB, and reading takes
/// about five times a file's size in memory.
const MAX_TASK_BYTES: u64 = 1 << 30;

const FILES: &[&str] = &["sim.csv", "sim.svg"];
const WOOL_FILES: &[&str] = &["wool.csv", "wool-time.svg", "wool-steals.svg"];

/// What `sim` replays.
///
/// ```
/// use experiments::sim::SimInput;
///
/// // `raylb sim --wool-tree`, or a frame `raylb record` wrote.
/// let inputs = [SimInput::WoolTree, SimInput::Frame("quick.tasks".into())];
/// assert!(matches!(&inputs[1], SimInput::Frame(file) if file.ends_with("quick.tasks")));
/// ```
#[derive(Clone, Debug)]
pub enum SimInput {
    /// A recorded frame: the task file `raylb record` wrote.
    Frame(PathBuf),
    /// Faxén and Ardelius's `tree` model: a random tree, `--runs` of them a point.
    WoolTree,
}

/// The policies to simulate: the balancers, and the settings each runs in. An empty list
/// leaves a setting at its default.
///
/// ```
/// use balancers::{StealAmount, VictimPolicy};
/// use experiments::sim::Policies;
/// use renderer::device::BalancerName;
///
/// // Stealing alone, one task a steal, under both victim choices; the rest at their defaults.
/// let policies = Policies {
///     balancers: vec![BalancerName::Stealing],
///     victim: vec![VictimPolicy::Random, VictimPolicy::Sample],
///     steal: vec![StealAmount::One],
///     ..Policies::default()
/// };
/// assert!(policies.deque.is_empty() && policies.samples.is_none());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Policies {
    /// The balancers [default: static, counter, stealing and rayon; with Wool's tree,
    /// stealing].
    pub balancers: Vec<BalancerName>,
    /// How `static` and `stealing` deal tiles out [default: interleaved].
    pub assign: Vec<Assignment>,
    /// Tiles `counter` takes per visit [default: 1].
    pub chunk: Vec<NonZeroUsize>,
    /// The deque of `stealing` [default: abp].
    pub deque: Vec<DequeKind>,
    /// Victim selection of `stealing` [default: random; with Wool's tree, random and sample].
    pub victim: Vec<VictimPolicy>,
    /// Workers `sample` reads at the start of a search [default: √workers; with Wool's tree,
    /// 2, before every attempt].
    pub samples: Option<NonZeroUsize>,
    /// How much a steal takes [default: half; with Wool's tree, one].
    pub steal: Vec<StealAmount>,
    /// Which of its tasks a worker of `static`, `counter` or `stealing` runs first
    /// [default: depth-first].
    pub order: Vec<Order>,
}

/// Scheduling costs in nanoseconds, each instead of the simulator's default where given.
///
/// ```
/// use experiments::sim::CostOverrides;
///
/// // The steal costs `raylb bench costs` measured; the others stay the simulator's.
/// let costs = CostOverrides {
///     steal: Some(120.0),
///     failed_steal: Some(45.0),
///     ..Default::default()
/// };
/// assert_eq!(costs.counter, None);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CostOverrides {
    /// A steal that finds work.
    pub steal: Option<f64>,
    /// A steal attempt that finds nothing.
    pub failed_steal: Option<f64>,
    /// Each task a steal takes beyond the first.
    pub stolen_task: Option<f64>,
    /// Reading one worker's deque for `sample`'s choice.
    pub probe: Option<f64>,
    /// The counter's fetch-and-add.
    pub counter: Option<f64>,
    /// A push and pop on the `abp` deque beyond a local queue's.
    pub abp: Option<f64>,
    /// A push and pop on the `locked` deque beyond a local queue's.
    pub locked: Option<f64>,
    /// A rayon job beyond a deque's push and pop.
    pub rayon: Option<f64>,
}

/// What `raylb sim` simulates, and where it writes.
///
/// ```
/// use std::num::NonZeroUsize;
///
/// use experiments::sim::{SimInput, SimOptions};
///
/// // Wool's tree on 4 workers, averaged over 2 runs, the table and plots written to `out`.
/// let out = std::env::temp_dir().join(format!("raylb-sim-options-{}", std::process::id()));
/// let options = SimOptions {
///     input: SimInput::WoolTree,
///     runs: NonZeroUsize::new(2),
///     seed: Some(7),
///     workers: vec![NonZeroUsize::new(4).unwrap()],
///     policies: Default::default(),
///     model_from: None,
///     task_cost: None,
///     unit_cost: Vec::new(),
///     costs: Default::default(),
///     out: Some(out.clone()),
///     quiet: true,
/// };
/// experiments::sim::run(&options)?;
/// assert!(out.join("wool.csv").is_file());
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// The recorded frame, or Wool's tree.
    pub input: SimInput,
    /// With Wool's tree: runs (seeds) averaged per point [default: 100].
    pub runs: Option<NonZeroUsize>,
    /// With Wool's tree: the first run's seed [default: 1].
    pub seed: Option<u64>,
    /// Simulated worker counts.
    pub workers: Vec<NonZeroUsize>,
    /// The policies simulated.
    pub policies: Policies,
    /// A recording of the same scene whose cost model replaces the frame's own.
    pub model_from: Option<PathBuf>,
    /// Nanoseconds any task costs besides its work, instead of the model's.
    pub task_cost: Option<f64>,
    /// The cost of one unit of a work count, `NAME=NS`, instead of the model's.
    pub unit_cost: Vec<String>,
    /// The scheduling costs given.
    pub costs: CostOverrides,
    /// The folder for the CSV and plots; none are written without it.
    pub out: Option<PathBuf>,
    /// Print nothing.
    pub quiet: bool,
}

/// Simulates what `options` asks for, printing a table unless quiet and writing the files.
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use experiments::sim::{SimInput, SimOptions};
/// # let out = std::env::temp_dir().join(format!("raylb-sim-{}", std::process::id()));
/// # let options = SimOptions {
/// #     input: SimInput::WoolTree,
/// #     runs: NonZeroUsize::new(2),
/// #     seed: None,
/// #     workers: vec![NonZeroUsize::new(4).unwrap()],
/// #     policies: Default::default(),
/// #     model_from: None,
/// #     task_cost: None,
/// #     unit_cost: Vec::new(),
/// #     costs: Default::default(),
/// #     out: Some(out.clone()),
/// #     quiet: true,
/// # };
/// experiments::sim::run(&options)?;
/// let files = ["wool.csv", "wool-time.svg", "wool-steals.svg"];
/// assert!(files.iter().all(|f| out.join(f).is_file()));
/// # std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &SimOptions) -> Result<()> {
    match &options.input {
        SimInput::Frame(tasks) => frame(tasks, options),
        SimInput::WoolTree => wool_tree(options),
    }
}

/// A recorded frame under every policy and worker count asked for.
fn frame(tasks: &Path, options: &SimOptions) -> Result<()> {
    if options.runs.is_some() || options.seed.is_some() {
        bail!(
            "--runs and --seed apply to --wool-tree, whose tree is random; a recorded frame is replayed as it is"
        );
    }
    let files = frame_outputs(tasks, options)?;
    let policies = policies(&options.policies, &FRAME_DEFAULTS)?;
    refuse_unused_costs(&options.costs, &policies)?;
    let tree = frame_tree(tasks, options)?;
    let seconds = tree.costs(&tree.model);
    let costs = costs(options, Costs::default());
    let quiet = options.quiet;
    if !quiet {
        print_tree(&tree, &seconds)?;
    }
    let mut table = Table::new(&[
        "balancer",
        "workers",
        "makespan ms",
        "speedup",
        "efficiency",
        "steals",
        "success",
        "idle",
        "peak outstanding",
        "Σ worker peaks",
    ]);
    let mut rows = Vec::new();
    let mut series = Vec::new();
    for policy in &policies {
        let mut points = Vec::new();
        for &workers in &options.workers {
            let r = policy.simulate(&tree, &seconds, workers.get(), &costs);
            table.row(cells(policy, workers, &r));
            points.push((workers.get() as f64, r.speedup()));
            rows.push(Row::new(&tree, policy, workers, &r));
        }
        series.push(Series {
            label: policy.name(),
            points,
        });
    }
    if !quiet {
        out!("{}", table.render());
    }
    if let Some(files) = files {
        let axes = Axes {
            x: "workers",
            y: "speedup",
            log_x: true,
            y_from_zero: true,
        };
        let panel = Panel {
            title: tree.description.clone(),
            series,
        };
        files.write(&[
            &csv_text(&rows)?,
            &line_chart("Simulated speedup against workers", &axes, &[panel])?,
        ])?;
        if !quiet {
            outln!("{}", files.summary());
        }
    }
    Ok(())
}

/// The files of `--out`, checked before any work: writable, and none of them an input.
fn frame_outputs(tasks: &Path, options: &SimOptions) -> Result<Option<OutputFiles>> {
    let Some(dir) = &options.out else {
        return Ok(None);
    };
    let files = OutputFiles::check(dir, FILES)?;
    let inputs: Vec<_> = std::iter::once(tasks)
        .chain(options.model_from.as_deref())
        .map(Path::to_path_buf)
        .collect();
    files.check_inputs(&inputs)?;
    Ok(Some(files))
}

/// The recorded frame's task tree, with its cost model taken from `--model-from` and the
/// command line's overrides.
fn frame_tree(tasks: &Path, options: &SimOptions) -> Result<TaskTree> {
    let mut tree = read_tree(tasks)?;
    if let Some(other) = &options.model_from {
        if renderer::output::is_same_file(tasks, other) {
            bail!(
                "--model-from {}: the task file itself, whose model is used without it",
                other.display()
            );
        }
        let source = read_tree(other)?;
        if source.features != tree.features {
            bail!(
                "--model-from {}: its work counts ({}) are not this file's ({})",
                other.display(),
                source.features.join(", "),
                tree.features.join(", ")
            );
        }
        tree.model = source.model;
    }
    override_model(&mut tree, options)?;
    // Every task free leaves nothing to schedule: speedups of scheduling costs alone.
    if tree
        .costs(&tree.model)
        .iter()
        .all(|&seconds| seconds == 0.0)
    {
        bail!(
            "{}: the cost model gives every task 0 ns, so there is no work to schedule; give --task-cost, or a --unit-cost, above 0",
            tasks.display()
        );
    }
    Ok(tree)
}

/// The tree's size and work, and its cost model.
fn print_tree(tree: &TaskTree, seconds: &[f64]) -> Result<()> {
    let work: f64 = seconds.iter().sum();
    outln!(
        "tasks   {}: {} tasks ({} initial), {:.1} ms of work on one worker",
        tree.description,
        tree.len(),
        tree.initial(),
        work * 1e3
    );
    let units: Vec<String> = tree
        .features
        .iter()
        .zip(&tree.model.per_unit)
        .map(|(name, c)| format!("{name} {:.2}", c * 1e9))
        .collect();
    outln!(
        "model   ns per task {:.1}; per unit of {}",
        tree.model.per_task * 1e9,
        units.join(", ")
    );
    Ok(())
}

/// The task tree in `path`.
fn read_tree(path: &Path) -> Result<TaskTree> {
    let bytes = read_regular_file(path, MAX_TASK_BYTES)
        .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    TaskTree::read(&bytes).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// What `sim` runs when the options leave it open.
struct Defaults {
    balancers: &'static [BalancerName],
    victims: &'static [VictimPolicy],
    steal: StealAmount,
}

const FRAME_DEFAULTS: Defaults = Defaults {
    balancers: &[
        BalancerName::Static,
        BalancerName::Counter,
        BalancerName::Stealing,
        BalancerName::Rayon,
    ],
    victims: &[VictimPolicy::Random],
    steal: StealAmount::Half,
};

/// Wool's model compares victim selections of a stealer of one task at a time.
const WOOL_DEFAULTS: Defaults = Defaults {
    balancers: &[BalancerName::Stealing],
    victims: &[VictimPolicy::Random, VictimPolicy::Sample],
    steal: StealAmount::One,
};

/// Refuses a setting given for none of `balancers`.
fn refuse_unused_settings(p: &Policies, balancers: &[BalancerName]) -> Result<()> {
    let chosen = |b: BalancerName| balancers.contains(&b);
    let stealing = chosen(BalancerName::Stealing);
    let settings = [
        (
            "--assign",
            !p.assign.is_empty(),
            chosen(BalancerName::Static) || stealing,
            "static and stealing",
        ),
        (
            "--chunk",
            !p.chunk.is_empty(),
            chosen(BalancerName::Counter),
            "counter",
        ),
        ("--deque", !p.deque.is_empty(), stealing, "stealing"),
        ("--victim", !p.victim.is_empty(), stealing, "stealing"),
        ("--steal", !p.steal.is_empty(), stealing, "stealing"),
        (
            "--order",
            !p.order.is_empty(),
            chosen(BalancerName::Static) || chosen(BalancerName::Counter) || stealing,
            "static, counter and stealing",
        ),
    ];
    for (flag, given, applies, to) in settings {
        if given && !applies {
            bail!("{flag} applies to {to}, which is not among --balancers");
        }
    }
    Ok(())
}

/// A policy the simulator replays: a built-in balancer's, or the simulated policy of one the
/// program registered.
///
/// ```
/// use std::num::NonZeroUsize;
///
/// use balancers::BalancerKind;
/// use balancers::sim::{Costs, wool};
/// use experiments::sim::Replayed;
///
/// // The counter's policy over Wool's tree for 4 workers.
/// let (tree, seconds) = wool::tree(4, 1);
/// let counter = Replayed::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
/// let result = counter.simulate(&tree, &seconds, 4, &Costs::default());
/// assert_eq!(result.workers.len(), 4);
/// assert!(result.makespan >= result.work / 4.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Replayed {
    /// A built-in balancer, in its settings.
    Builtin(BalancerKind),
    /// A registered balancer that has a simulated policy.
    User(UserBalancer),
}

impl Replayed {
    /// The policy of the CPU balancer `b`.
    ///
    /// # Errors
    /// When `b` is a registered balancer without a simulated policy.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use balancers::BalancerKind;
    /// # use experiments::sim::Replayed;
    /// use renderer::render::CpuBalancer;
    ///
    /// let counter = CpuBalancer::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
    /// assert!(matches!(Replayed::of(counter)?, Replayed::Builtin(_)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of(b: CpuBalancer) -> Result<Self> {
        match b {
            CpuBalancer::Builtin(b) => Ok(Self::Builtin(b)),
            CpuBalancer::User(u) if u.simulated().is_some() => Ok(Self::User(u)),
            CpuBalancer::User(u) => bail!(
                "--balancers {}: it has no simulated policy (register it with Raylb::simulated_balancer)",
                u.keyword()
            ),
        }
    }

    /// The balancer's name, as its real runs report it.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use balancers::BalancerKind;
    /// # use experiments::sim::Replayed;
    /// let counter = Replayed::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
    /// assert_eq!(counter.name(), "counter/chunk=1");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Self::Builtin(b) => b.name(),
            Self::User(u) => u.balancer().name(),
        }
    }

    /// Replays `tree`, whose tasks take `seconds`, on `workers` simulated workers.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use balancers::BalancerKind;
    /// # use balancers::sim::{Costs, wool};
    /// # use experiments::sim::Replayed;
    /// # let (tree, seconds) = wool::tree(4, 1);
    /// # let counter = Replayed::Builtin(BalancerKind::counter(NonZeroUsize::MIN));
    /// // One worker does all the work, and the scheduling besides.
    /// let alone = counter.simulate(&tree, &seconds, 1, &Costs::default());
    /// assert!(alone.makespan >= alone.work);
    /// ```
    pub fn simulate(
        &self,
        tree: &TaskTree,
        seconds: &[f64],
        workers: usize,
        costs: &Costs,
    ) -> SimResult {
        match self {
            Self::Builtin(b) => simulate(tree, seconds, *b, workers, costs),
            Self::User(u) => {
                let simulated = u.simulated().expect("checked by Replayed::of");
                let mut policy = simulated.simulated_policy(workers, costs);
                simulate_policy(tree, seconds, workers, costs, &mut *policy)
            }
        }
    }
}

/// The balancers `p` names: each in every setting given for it.
fn policies(p: &Policies, defaults: &Defaults) -> Result<Vec<Replayed>> {
    let balancers = if p.balancers.is_empty() {
        defaults.balancers
    } else {
        &p.balancers[..]
    };
    refuse_unused_settings(p, balancers)?;
    let assigns = or(&p.assign, Assignment::Interleaved);
    let chunks = or(&p.chunk, NonZeroUsize::MIN);
    let orders = or(&p.order, Order::DepthFirst);
    let victims = if p.victim.is_empty() {
        defaults.victims.to_vec()
    } else {
        p.victim.clone()
    };
    if p.samples.is_some()
        && !(balancers.contains(&BalancerName::Stealing) && victims.contains(&VictimPolicy::Sample))
    {
        bail!("--samples applies to stealing with --victim sample");
    }
    let mut choices = Vec::new();
    for deque in or(&p.deque, DequeKind::Abp) {
        for &victim in &victims {
            for amount in or(&p.steal, defaults.steal) {
                choices.push(WorkStealing {
                    deque,
                    victim,
                    amount,
                    assignment: Assignment::Interleaved,
                    order: Order::DepthFirst,
                });
            }
        }
    }
    let mut out = Vec::new();
    for &b in balancers {
        if let BalancerName::User(user) = b {
            // A registered balancer takes none of the settings: once.
            out.push(Replayed::of(CpuBalancer::User(user))?);
            continue;
        }
        // Only the settings of this balancer vary; the others stay at their first value.
        let (assigns, chunks, choices) = match b {
            BalancerName::Static => (&assigns[..], &chunks[..1], &choices[..1]),
            BalancerName::Counter => (&assigns[..1], &chunks[..], &choices[..1]),
            BalancerName::Stealing => (&assigns[..], &chunks[..1], &choices[..]),
            _ => (&assigns[..1], &chunks[..1], &choices[..1]),
        };
        for &choice in choices {
            for &assign in assigns {
                for &chunk in chunks {
                    let request = BalancerRequest {
                        name: Some(b),
                        assign: Some(assign),
                        chunk: Some(chunk),
                        deque: Some(choice.deque),
                        victim: Some(choice.victim),
                        steal: Some(choice.amount),
                        ..BalancerRequest::default()
                    };
                    let policy = match request.cpu_balancer() {
                        Some(CpuBalancer::Builtin(policy)) => policy,
                        Some(CpuBalancer::User(_)) => unreachable!("taken above"),
                        None => bail!(
                            "cuda-managed: the simulator runs the CPU's balancers: static, counter, stealing and rayon"
                        ),
                    };
                    // rayon runs in its own order, once.
                    let orders = if policy.order().is_some() {
                        &orders[..]
                    } else {
                        &orders[..1]
                    };
                    for &order in orders {
                        out.push(Replayed::Builtin(
                            policy.with_order(order).unwrap_or(policy),
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Refuses a cost option that none of `policies` pays; a registered balancer's policy may pay
/// any.
fn refuse_unused_costs(costs: &CostOverrides, policies: &[Replayed]) -> Result<()> {
    if policies.iter().any(|p| matches!(p, Replayed::User(_))) {
        return Ok(());
    }
    let policies: Vec<BalancerKind> = policies
        .iter()
        .filter_map(|p| match p {
            Replayed::Builtin(b) => Some(*b),
            Replayed::User(_) => None,
        })
        .collect();
    let any = |f: &dyn Fn(&BalancerKind) -> bool| policies.iter().any(f);
    let steals = any(&|p| matches!(p, BalancerKind::Stealing(_) | BalancerKind::Rayon(_)));
    let deque = |d: DequeKind| {
        move |p: &BalancerKind| {
            matches!(p, BalancerKind::Stealing(w) if w.deque == d)
                || (d == DequeKind::Abp && matches!(p, BalancerKind::Rayon(_)))
        }
    };
    let checks = [
        (
            "--counter-cost",
            costs.counter.is_some(),
            any(&|p| matches!(p, BalancerKind::Counter(_))),
            "counter",
        ),
        (
            "--abp-cost",
            costs.abp.is_some(),
            any(&deque(DequeKind::Abp)),
            "stealing with the abp deque, and rayon",
        ),
        (
            "--rayon-cost",
            costs.rayon.is_some(),
            any(&|p| matches!(p, BalancerKind::Rayon(_))),
            "rayon",
        ),
        (
            "--locked-cost",
            costs.locked.is_some(),
            any(&deque(DequeKind::Locked)),
            "stealing with the locked deque",
        ),
        (
            "--probe-cost",
            costs.probe.is_some(),
            any(
                &|p| matches!(p, BalancerKind::Stealing(w) if w.victim == balancers::VictimPolicy::Sample),
            ),
            "stealing with --victim sample",
        ),
        (
            "--steal-cost",
            costs.steal.is_some(),
            steals,
            "stealing and rayon",
        ),
        (
            "--failed-steal-cost",
            costs.failed_steal.is_some(),
            steals,
            "stealing and rayon",
        ),
        (
            "--stolen-task-cost",
            costs.stolen_task.is_some(),
            steals,
            "stealing and rayon",
        ),
    ];
    for (flag, given, applies, to) in checks {
        if given && !applies {
            bail!("{flag} applies to {to}, which is not among the policies simulated");
        }
    }
    Ok(())
}

/// `list`, or `default` alone when it is empty.
fn or<T: Copy>(list: &[T], default: T) -> Vec<T> {
    if list.is_empty() {
        vec![default]
    } else {
        list.to_vec()
    }
}

/// Applies `--task-cost` and `--unit-cost` to the file's model.
fn override_model(tree: &mut TaskTree, options: &SimOptions) -> Result<()> {
    if let Some(ns) = options.task_cost {
        tree.model.per_task = ns * 1e-9;
    }
    // The option that set each work count's cost: a second one for the same count is refused
    // rather than left to override the first.
    let mut set_by: Vec<Option<&str>> = vec![None; tree.features.len()];
    for given in &options.unit_cost {
        let Some((name, ns)) = given.rsplit_once('=') else {
            bail!("--unit-cost {given}: expected NAME=NS, e.g. \"box tests=2.5\"");
        };
        let name = name.trim();
        let Some(k) = tree.features.iter().position(|f| f == name) else {
            bail!(
                "--unit-cost {given}: this file's work counts are {}",
                tree.features
                    .iter()
                    .map(|f| format!("\"{f}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        if let Some(earlier) = set_by[k].replace(given) {
            bail!(
                "--unit-cost {given}: the cost of \"{name}\" is given twice (--unit-cost {earlier})"
            );
        }
        let ns: f64 = ns
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x >= 0.0 && *x <= 1e12)
            .ok_or_else(|| {
                anyhow!(
                    "--unit-cost {given}: the cost must be a number of nanoseconds from 0 to 10^12"
                )
            })?;
        tree.model.per_unit[k] = ns * 1e-9;
    }
    if options.task_cost.is_some() || !options.unit_cost.is_empty() {
        tree.model.fit = None;
    }
    Ok(())
}

/// The scheduling costs: `d`, each replaced by its option where given.
fn costs(options: &SimOptions, d: Costs) -> Costs {
    let o = &options.costs;
    let ns = |given: Option<f64>, default: f64| given.map_or(default, |x| x * 1e-9);
    Costs {
        abp_push_pop: ns(o.abp, d.abp_push_pop),
        locked_push_pop: ns(o.locked, d.locked_push_pop),
        steal: ns(o.steal, d.steal),
        failed_steal: ns(o.failed_steal, d.failed_steal),
        per_stolen_task: ns(o.stolen_task, d.per_stolen_task),
        probe: ns(o.probe, d.probe),
        counter: ns(o.counter, d.counter),
        rayon_job: ns(o.rayon, d.rayon_job),
        timing: d.timing,
        sampling: Sampling {
            size: options
                .policies
                .samples
                .map(NonZeroUsize::get)
                .or(d.sampling.size),
            ..d.sampling
        },
    }
}

fn cells(policy: &Replayed, workers: NonZeroUsize, r: &SimResult) -> Vec<String> {
    let attempts = r.steal_attempts();
    vec![
        policy.name(),
        workers.to_string(),
        format!("{:.3}", r.makespan * 1e3),
        format!("{:.2}", r.speedup()),
        format!("{:.3}", r.efficiency()),
        attempts.to_string(),
        if attempts == 0 {
            "-".into()
        } else {
            format!(
                "{:.1}%",
                100.0 * r.steal_successes() as f64 / attempts as f64
            )
        },
        format!("{:.1}%", 100.0 * r.idle_share()),
        r.peak_outstanding.to_string(),
        r.worker_peaks().to_string(),
    ]
}

/// One simulated run, a row of sim.csv.
#[derive(Serialize)]
struct Row {
    frame: String,
    balancer: String,
    workers: usize,
    makespan_seconds: f64,
    speedup: f64,
    efficiency: f64,
    steal_attempts: u64,
    steal_successes: u64,
    idle_share: f64,
    peak_outstanding: u64,
    worker_peaks: u64,
}

impl Row {
    fn new(tree: &TaskTree, policy: &Replayed, workers: NonZeroUsize, r: &SimResult) -> Self {
        Self {
            frame: tree.description.clone(),
            balancer: policy.name(),
            workers: workers.get(),
            makespan_seconds: r.makespan,
            speedup: rounded(r.speedup(), 4),
            efficiency: rounded(r.efficiency(), 4),
            steal_attempts: r.steal_attempts(),
            steal_successes: r.steal_successes(),
            idle_share: rounded(r.idle_share(), 4),
            peak_outstanding: r.peak_outstanding,
            worker_peaks: r.worker_peaks(),
        }
    }
}

/// `--wool-tree`: the model of Faxén and Ardelius's figure 4, each point the mean of
/// `--runs` seeds.
fn wool_tree(options: &SimOptions) -> Result<()> {
    let files = match &options.out {
        Some(dir) => Some(OutputFiles::check(dir, WOOL_FILES)?),
        None => None,
    };
    if options
        .policies
        .balancers
        .iter()
        .any(|&b| b != BalancerName::Stealing)
    {
        bail!("--wool-tree runs stealing alone: the model's tree starts as one task on one worker");
    }
    if !options.policies.assign.is_empty() {
        bail!("--assign does not apply to --wool-tree: its tree starts as one task, on worker 0");
    }
    // The model charges a deque's push and pop nothing: a deque named without a cost of its
    // own would run as any other does, under its name.
    for &deque in &options.policies.deque {
        let (flag, given) = match deque {
            DequeKind::Abp => ("--abp-cost", options.costs.abp.is_some()),
            DequeKind::Locked => ("--locked-cost", options.costs.locked.is_some()),
        };
        if !given {
            bail!(
                "--deque {}: --wool-tree charges a deque's push and pop nothing, so every deque \
                 runs alike; give {flag} to set what this one costs",
                deque.keyword()
            );
        }
    }
    let policies = policies(&options.policies, &WOOL_DEFAULTS)?;
    refuse_unused_costs(&options.costs, &policies)?;
    let runs = options.runs.map_or(100, NonZeroUsize::get);
    let seed = options.seed.unwrap_or(1);
    let mut table = Table::new(&[
        "balancer",
        "workers",
        "leaves",
        "time (leaf times)",
        "steal attempts",
        "steals",
        "success",
        "idle",
    ]);
    let mut rows = Vec::new();
    let (mut times, mut attempts) = (Vec::new(), Vec::new());
    let points = policies.len() * options.workers.len();
    let mut progress = Progress::new(points as u64, "points", options.quiet);
    for policy in &policies {
        let (mut time_points, mut attempt_points) = (Vec::new(), Vec::new());
        for &workers in &options.workers {
            let mean = wool_mean(options, policy, workers.get(), runs, seed);
            progress.step(&format!(
                "{} on {workers} workers: {:.2} leaf times",
                policy.name(),
                mean.time
            ));
            let leaves = 1u64 << wool::depth(workers.get());
            table.row(vec![
                policy.name(),
                workers.to_string(),
                leaves.to_string(),
                format!("{:.2}", mean.time),
                format!("{:.1}", mean.attempts),
                format!("{:.1}", mean.steals),
                format!("{:.1}%", 100.0 * mean.steals / mean.attempts.max(1e-9)),
                format!("{:.1}%", 100.0 * mean.idle),
            ]);
            time_points.push((workers.get() as f64, mean.time));
            attempt_points.push((workers.get() as f64, mean.attempts));
            rows.push(WoolRow {
                balancer: policy.name(),
                workers: workers.get(),
                leaves,
                runs,
                time_leaf_times: rounded(mean.time, 4),
                steal_attempts: rounded(mean.attempts, 2),
                steals: rounded(mean.steals, 2),
                idle_share: rounded(mean.idle, 4),
            });
        }
        times.push(Series {
            label: policy.name(),
            points: time_points,
        });
        attempts.push(Series {
            label: policy.name(),
            points: attempt_points,
        });
    }
    progress.finish();
    if !options.quiet {
        outln!(
            "model   Wool's tree: depth log2(workers) + 2, leaves of one leaf time on average; \
             {runs} runs a point from seed {seed}"
        );
        out!("{}", table.render());
    }
    if let Some(files) = files {
        write_wool_files(&files, &rows, times, attempts)?;
        if !options.quiet {
            outln!("{}", files.summary());
        }
    }
    Ok(())
}

/// The mean of `runs` simulations of Wool's tree on `workers` workers under `policy`, the
/// k-th run's tree and costs drawn from seed `seed + k`.
fn wool_mean(
    options: &SimOptions,
    policy: &Replayed,
    workers: usize,
    runs: usize,
    seed: u64,
) -> WoolPoint {
    let mut mean = WoolPoint::default();
    for k in 0..runs as u64 {
        let run_seed = seed.wrapping_add(k);
        let (tree, seconds) = wool::tree(workers, run_seed);
        let costs = costs(options, wool::costs(run_seed));
        let r = policy.simulate(&tree, &seconds, workers, &costs);
        mean.add(&r, runs as f64);
    }
    mean
}

/// The Wool model's table and its two charts, time and steal attempts against workers.
fn write_wool_files(
    files: &OutputFiles,
    rows: &[WoolRow],
    times: Vec<Series>,
    attempts: Vec<Series>,
) -> Result<()> {
    let axes = |y| Axes {
        x: "workers",
        y,
        log_x: true,
        y_from_zero: true,
    };
    let panel = |series| Panel {
        title: "Wool's tree model".into(),
        series,
    };
    files.write(&[
        &csv_text(rows)?,
        &line_chart("Time against workers", &axes("leaf times"), &[panel(times)])?,
        &line_chart(
            "Steal attempts against workers",
            &axes("steal attempts"),
            &[panel(attempts)],
        )?,
    ])
}

/// Means over a point's runs.
#[derive(Default)]
struct WoolPoint {
    time: f64,
    attempts: f64,
    steals: f64,
    idle: f64,
}

impl WoolPoint {
    fn add(&mut self, r: &SimResult, runs: f64) {
        self.time += r.makespan / wool::LEAF / runs;
        self.attempts += r.steal_attempts() as f64 / runs;
        self.steals += r.steal_successes() as f64 / runs;
        self.idle += r.idle_share() / runs;
    }
}

/// One point of the model, a row of wool.csv.
#[derive(Serialize)]
struct WoolRow {
    balancer: String,
    workers: usize,
    leaves: u64,
    runs: usize,
    time_leaf_times: f64,
    steal_attempts: f64,
    steals: f64,
    idle_share: f64,
}
