//! The `tree` benchmark of Faxén and Ardelius's simulation ("Manycore Work Stealing",
//! section 4, figure 4), as a task tree this simulator runs: a balanced binary tree of
//! depth ⌈log2 p⌉ + 2, so that each of `p` workers runs four leaves on average; inner tasks
//! take no time, leaves an exponentially distributed time of mean [`LEAF`]; steal attempts
//! and samples are Poisson processes with λ_steal = λ_work and λ_sample = 2·λ_steal
//! ([`costs`]). Only the root is there at the start, on worker 0.
//!
//! Wool's `tree` task spawns one child, calls the other and joins them; here a task spawns
//! both children at its end and never joins, which puts the same tasks in the same places (the
//! first child in the deque, the second run next) and differs only in what a worker does
//! when a child it spawned was stolen: Wool's worker waits for the thief (leapfrogging),
//! this one looks for other work, as a renderer's does.

use super::engine::{Costs, Sampling, Timing};
use super::model::CostModel;
use super::tree::{MAX_FEATURES, NO_PARENT, RecordedTask, TaskTree};
use crate::victim::XorShift;

/// A leaf's mean time, in seconds: the unit the model's other times are given in (one
/// microsecond, so that the simulator's nanosecond options read as thousandths of it).
pub const LEAF: f64 = 1e-6;

/// The tree for `workers` workers, and each task's seconds (leaves drawn with `seed`).
///
/// ```
/// use balancers::sim::wool;
///
/// let (tree, seconds) = wool::tree(4, 1);
/// assert_eq!(tree.len(), 31, "depth 4: 16 leaves");
/// assert_eq!(tree.initial(), 1, "only the root at the start");
/// assert!(seconds[..15].iter().all(|&s| s == 0.0), "inner tasks take no time");
/// assert!(seconds[15..].iter().all(|&s| s > 0.0));
/// ```
pub fn tree(workers: usize, seed: u64) -> (TaskTree, Vec<f64>) {
    let depth = depth(workers);
    let n = (1usize << (depth + 1)) - 1;
    let mut rng = XorShift::new(seed);
    // Heap order: task i's children are 2i + 1 and 2i + 2, which is also the canonical
    // (breadth-first) numbering of the tree.
    let tasks: Vec<RecordedTask> = (0..n)
        .map(|i| {
            let parent = if i == 0 {
                NO_PARENT
            } else {
                (i as u64 - 1) / 2
            };
            RecordedTask {
                id: i as u64,
                parent,
                index: if i == 0 { 0 } else { ((i - 1) % 2) as u32 },
                kind: 0,
                depth: (usize::BITS - 1 - (i + 1).leading_zeros()) as u16,
                place: 0,
                work: [0; MAX_FEATURES],
                // Both children at the parent's end.
                progress_at_spawn: 1,
                progress: 1,
            }
        })
        .collect();
    let model = CostModel {
        per_task: 0.0,
        per_unit: vec![0.0],
        fit: None,
    };
    let tree = TaskTree::from_recorded(
        format!("Wool's tree of depth {depth} ({} leaves)", 1usize << depth),
        vec!["node".into()],
        vec!["none".into()],
        model,
        &tasks,
    )
    .expect("a complete binary tree is a tree");
    let first_leaf = (1usize << depth) - 1;
    let seconds = (0..n)
        .map(|i| {
            if i >= first_leaf {
                LEAF * super::engine::exponential(&mut rng)
            } else {
                0.0
            }
        })
        .collect();
    (tree, seconds)
}

/// The tree's depth for `workers` workers: ⌈log2 p⌉ + 2.
///
/// ```
/// use balancers::sim::wool;
///
/// assert_eq!(wool::depth(1), 2);
/// assert_eq!(wool::depth(64), 8);
/// assert_eq!(wool::depth(65), 9);
/// ```
pub fn depth(workers: usize) -> u32 {
    workers.max(1).next_power_of_two().trailing_zeros() + 2
}

/// The model's scheduling costs, in seconds: a steal attempt, successful or not, takes a
/// leaf's mean time (λ_steal = λ_work); reading a worker for a sample half of it (λ_sample =
/// 2·λ_steal); each drawn from an exponential distribution; the deque's push and pop free,
/// as the model has them; two workers sampled before every attempt, the size the paper found
/// best.
///
/// ```
/// use balancers::sim::wool;
///
/// let costs = wool::costs(7);
/// assert_eq!(costs.steal, wool::LEAF);
/// assert_eq!(costs.probe, wool::LEAF / 2.0);
/// assert_eq!(costs.sampling.size, Some(2));
/// ```
pub fn costs(seed: u64) -> Costs {
    Costs {
        abp_push_pop: 0.0,
        locked_push_pop: 0.0,
        steal: LEAF,
        failed_steal: LEAF,
        per_stolen_task: 0.0,
        probe: LEAF / 2.0,
        counter: 0.0,
        rayon_job: 0.0,
        timing: Timing::Exponential { seed },
        sampling: Sampling {
            size: Some(2),
            every_attempt: true,
        },
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sim::simulate;
    use crate::{BalancerKind, StealAmount, VictimPolicy, WorkStealing};

    #[test]
    fn the_tree_has_four_leaves_a_worker_and_only_leaves_take_time() {
        for (workers, depth_) in [(1, 2), (2, 3), (3, 4), (64, 8), (1000, 12), (1024, 12)] {
            assert_eq!(depth(workers), depth_, "{workers}");
        }
        let (t, s) = tree(64, 1);
        assert_eq!(t.len(), 511);
        assert_eq!(t.initial(), 1);
        assert_eq!(t.children(0), 1..3);
        assert_eq!(t.children(255), 511..511, "a leaf");
        assert_eq!(t.depth(255), 8);
        assert!(s[..255].iter().all(|&x| x == 0.0));
        assert!(s[255..].iter().all(|&x| x > 0.0));
        let mean = s[255..].iter().sum::<f64>() / 256.0 / LEAF;
        assert!((0.8..1.2).contains(&mean), "{mean}");
        assert_eq!(tree(64, 1), (t, s), "the same seed, the same tree");
    }

    #[test]
    fn exponential_draws_have_mean_one() {
        let mut rng = XorShift::new(9);
        let n = 100_000;
        let mean = (0..n)
            .map(|_| super::super::engine::exponential(&mut rng))
            .sum::<f64>()
            / n as f64;
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
    }

    #[test]
    fn one_worker_runs_every_leaf_in_a_row() {
        let (t, s) = tree(1, 3);
        let policy = BalancerKind::Stealing(WorkStealing {
            amount: StealAmount::One,
            ..WorkStealing::default()
        });
        let r = simulate(&t, &s, policy, 1, &costs(3));
        let work: f64 = s.iter().sum();
        assert!(
            (r.makespan - work).abs() <= work * 1e-12,
            "{} {work}",
            r.makespan
        );
        assert_eq!(r.steal_attempts(), 0);
        let sampled = BalancerKind::Stealing(WorkStealing {
            amount: StealAmount::One,
            victim: VictimPolicy::Sample,
            ..WorkStealing::default()
        });
        let r = simulate(&t, &s, sampled, 16, &costs(3));
        assert!(r.steal_successes() > 0);
    }
}
