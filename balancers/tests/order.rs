//! The order in which a worker runs the tasks it holds: newest first (depth-first) walks each
//! subtree to its end before the next initial task; oldest first (breadth-first) runs every
//! initial task, then each generation, before the next. Checked on one worker, where the
//! order is the balancer's alone, for each balancer that lets it be chosen.

use std::num::NonZeroUsize;
use std::sync::Mutex;

use balancers::{
    Assignment, Balancer, BalancerKind, DequeKind, Order, Spawn, TaskRunner, WorkStealing,
};

/// Complete binary trees of depth `DEPTH` under each initial task; every run is logged as
/// (root, depth).
struct Trees {
    log: Mutex<Vec<(u32, u32)>>,
}

const DEPTH: u32 = 3;
const ROOTS: u32 = 3;
/// Tasks in one tree: 2^(DEPTH+1) - 1.
const TREE: usize = (1 << (DEPTH + 1)) - 1;

impl TaskRunner<(u32, u32)> for Trees {
    type Local = ();
    fn local(&self, _worker: usize) {}
    fn run<S: Spawn<(u32, u32)>>(&self, (root, depth): (u32, u32), _: &mut (), spawn: &mut S) {
        self.log.lock().unwrap().push((root, depth));
        if depth < DEPTH {
            spawn.spawn((root, depth + 1));
            spawn.spawn((root, depth + 1));
        }
    }
}

/// The order one worker ran the trees in, and its peak of queued tasks.
fn run(balancer: BalancerKind) -> (Vec<(u32, u32)>, u64) {
    let trees = Trees {
        log: Mutex::new(Vec::new()),
    };
    let roots: Vec<(u32, u32)> = (0..ROOTS).map(|r| (r, 0)).collect();
    let outcome = balancer
        .run(NonZeroUsize::MIN, &roots, &trees)
        .expect("the worker starts");
    let log = trees.log.into_inner().unwrap();
    assert_eq!(log.len(), ROOTS as usize * TREE, "{balancer:?}");
    let peak = outcome.telemetry.peak_outstanding().expect("counted");
    (log, peak)
}

fn choosable() -> Vec<BalancerKind> {
    vec![
        BalancerKind::static_tiles(Assignment::Interleaved),
        BalancerKind::counter(NonZeroUsize::new(2).unwrap()),
        BalancerKind::Stealing(WorkStealing::default()),
        BalancerKind::Stealing(WorkStealing {
            deque: DequeKind::Locked,
            ..WorkStealing::default()
        }),
    ]
}

#[test]
fn depth_first_finishes_each_tree_before_the_next() {
    for balancer in choosable() {
        let (log, peak) = run(balancer);
        for (k, tree) in log.chunks(TREE).enumerate() {
            assert!(
                tree.iter().all(|&(root, _)| root == k as u32),
                "{balancer:?}: {log:?}"
            );
            assert_eq!(tree[0].1, 0, "{balancer:?}: the root first");
        }
        // A level's waiting sibling each and the last level's two, and (`stealing`, whose
        // deque holds its share) the initial tasks not yet begun.
        assert!(
            peak <= u64::from(DEPTH) + u64::from(ROOTS),
            "{balancer:?}: peak {peak}"
        );
    }
}

#[test]
fn breadth_first_runs_generation_by_generation() {
    for balancer in choosable() {
        let balancer = balancer.with_order(Order::BreadthFirst).unwrap();
        let (log, peak) = run(balancer);
        assert!(
            log.windows(2).all(|w| w[0].1 <= w[1].1),
            "{balancer:?}: {log:?}"
        );
        let roots: Vec<u32> = log[..ROOTS as usize].iter().map(|&(r, _)| r).collect();
        assert_eq!(roots, [0, 1, 2], "{balancer:?}: initial tasks in order");
        // The last generation waits whole: 2^DEPTH leaves per tree.
        assert!(
            peak >= u64::from(ROOTS) << DEPTH,
            "{balancer:?}: peak {peak}"
        );
    }
}

#[test]
fn rayon_has_no_order_to_choose() {
    assert_eq!(
        BalancerKind::Rayon(balancers::RayonScope).with_order(Order::BreadthFirst),
        None
    );
}
