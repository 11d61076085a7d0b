//! Every balancer runs every task exactly once, whatever the worker count, and reports it.
//!
//! One suite, stamped out for each balancer by `balancer_suite!`.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU32, Ordering};

use balancers::{Assignment, Balancer, BalancerKind, Spawn, TaskRunner};

/// A forest with a known, very uneven shape: node `n` has 0, 1 or 2 children depending on a
/// hash of `n`, down to depth 10, so the trees under different initial tasks differ in size by
/// orders of magnitude (like pixels that hit glass next to pixels that hit the sky). Nodes are
/// numbered in creation order and every run counts how often each one ran.
struct Forest {
    children: Vec<Vec<u32>>,
    ran: Vec<AtomicU32>,
}

impl Forest {
    fn new(roots: u32) -> (Self, Vec<u32>) {
        let mut children: Vec<Vec<u32>> = Vec::new();
        let mut depth: Vec<u32> = Vec::new();
        let tasks: Vec<u32> = (0..roots).collect();
        for _ in 0..roots {
            children.push(Vec::new());
            depth.push(0);
        }
        let mut next = 0;
        while next < children.len() {
            let fan_out = if depth[next] >= 10 {
                0
            } else {
                (next as u32).wrapping_mul(2_654_435_761) >> 30
            };
            for _ in 0..fan_out.min(2) {
                let id = children.len() as u32;
                children.push(Vec::new());
                depth.push(depth[next] + 1);
                children[next].push(id);
            }
            next += 1;
        }
        let ran = (0..children.len()).map(|_| AtomicU32::new(0)).collect();
        (Self { children, ran }, tasks)
    }
}

impl TaskRunner<u32> for Forest {
    type Local = (usize, u64);
    fn local(&self, worker: usize) -> (usize, u64) {
        (worker, 0)
    }
    fn run<S: Spawn<u32>>(&self, node: u32, local: &mut (usize, u64), spawn: &mut S) {
        self.ran[node as usize].fetch_add(1, Ordering::Relaxed);
        local.1 += 1;
        for &child in &self.children[node as usize] {
            spawn.spawn(child);
        }
    }
}

fn check(balancer: BalancerKind, workers: usize, roots: u32) {
    let (forest, tasks) = Forest::new(roots);
    let expected = forest.children.len() as u64;
    let outcome = balancer
        .run(NonZeroUsize::new(workers).unwrap(), &tasks, &forest)
        .expect("workers start");
    let t = &outcome.telemetry;
    assert_eq!(t.workers.len(), workers);
    assert_eq!(outcome.locals.len(), workers);
    for (w, local) in outcome.locals.iter().enumerate() {
        assert_eq!(local.0, w, "locals come back in worker order");
        assert_eq!(
            local.1, t.workers[w].tasks,
            "telemetry counts what worker {w} ran"
        );
    }
    assert_eq!(t.total_tasks(), expected);
    assert_eq!(
        t.workers.iter().map(|w| w.initial_tasks).sum::<u64>(),
        u64::from(roots)
    );
    assert_eq!(
        t.workers.iter().map(|w| w.spawned).sum::<u64>(),
        expected - u64::from(roots)
    );
    let ran: u64 = forest
        .ran
        .iter()
        .map(|c| u64::from(c.load(Ordering::Relaxed)))
        .sum();
    assert_eq!(ran, expected);
    assert!(
        forest.ran.iter().all(|c| c.load(Ordering::Relaxed) <= 1),
        "a task ran twice"
    );
    for w in &t.workers {
        assert!(w.busy + w.idle <= t.wall + std::time::Duration::from_millis(50));
    }
}

macro_rules! balancer_suite {
    ($($name:ident => $balancer:expr),* $(,)?) => {$(
        mod $name {
            use super::*;

            #[test]
            fn smoke() {
                check($balancer, 1, 1);
            }

            #[test]
            fn no_tasks() {
                check($balancer, 3, 0);
            }

            #[test]
            fn fewer_tasks_than_workers() {
                check($balancer, 8, 3);
            }

            #[test]
            fn many_workers_many_tasks() {
                for workers in [1, 2, 3, 8, 32] {
                    check($balancer, workers, 500);
                }
            }
        }
    )*};
}

balancer_suite! {
    static_interleaved => BalancerKind::static_tiles(Assignment::Interleaved),
    static_blocked => BalancerKind::static_tiles(Assignment::Blocked),
    counter_1 => BalancerKind::counter(NonZeroUsize::MIN),
    counter_7 => BalancerKind::counter(NonZeroUsize::new(7).unwrap()),
}
