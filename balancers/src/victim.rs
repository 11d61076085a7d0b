//! Which worker a thief tries to steal from (Faxén and Ardelius, "Manycore Work Stealing").

use crate::sync::{AtomicU64, Ordering};

/// How a thief picks its victims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VictimPolicy {
    /// A uniformly random other worker for every attempt.
    Random,
    /// At the start of a search for work, look at about √p random workers and steal from the
    /// one whose oldest task is nearest the root of the spawn tree (the shallowest: typically
    /// the most work), breaking ties by the longest deque; sampling stops early at an empty
    /// worker, and after a failed steal the search goes on at random (Wool).
    Sample,
    /// Wool's victim sets: walk a private random permutation of the others from a random start,
    /// covering only as many as the number of thieves requires, so that thieves spread over
    /// the workers instead of all polling the same ones. The walk's length is Wool's
    /// `max(W, m·p/t)`, with the number of thieves `t` read from a shared count rather than
    /// counted along the walk as Wool does.
    Set,
}

/// What a thief can see of a worker without taking anything: hints only. A balancer of one's
/// own implements it for whatever it keeps per worker (its deque's thief end, say).
pub trait Prospect {
    /// Tasks the worker seems to hold.
    fn len(&self) -> usize;
    /// Whether it seems to hold none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Depth of its oldest task, if it seems to have one.
    fn oldest_depth(&self) -> Option<u32>;
}

/// A xorshift64 generator: each worker its own, seeded from its index, so victim choices are
/// reproducible and cost a few instructions.
#[derive(Clone, Debug)]
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> Self {
        // Spread small seeds over the state; zero is the one state xorshift cannot leave.
        Self((seed.wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

/// The victim set's floor: Wool polls at least this many workers (12 fitted the TILEPro64's
/// 16-entry data TLB; the paper found the choice insensitive).
const SET_FLOOR: usize = 12;
/// Wool's multiplicity: how many thieves should poll each worker (the paper's default, 4).
const SET_MULTIPLICITY: usize = 4;
/// Failed attempts after which a set walker starts from a new random point, so that a group
/// of thieves cannot isolate itself (the paper's 1000).
const SET_RESTART: u32 = 1000;

/// One thief's victim choice, by a [`VictimPolicy`]: `stealing`'s, and a building block for a
/// balancer of one's own. Each worker keeps its own, seeded from its number, so the choices
/// of a run are reproducible.
///
/// ```
/// use std::sync::atomic::AtomicU64;
/// use balancers::{Prospect, VictimPolicy, VictimSelector};
///
/// /// What a thief sees of a worker here: how many tasks it holds.
/// struct Held(usize);
/// impl Prospect for Held {
///     fn len(&self) -> usize { self.0 }
///     fn oldest_depth(&self) -> Option<u32> { (self.0 > 0).then_some(0) }
/// }
///
/// let workers = [Held(0), Held(3), Held(0), Held(5)];
/// let thieves = AtomicU64::new(1);
/// let mut selector = VictimSelector::new(VictimPolicy::Random, 0, workers.len());
/// selector.begin();
/// let victim = selector.choose(&workers, &thieves);
/// assert!((1..4).contains(&victim), "never the thief itself");
/// selector.failed();
/// ```
#[derive(Debug)]
pub struct VictimSelector {
    policy: VictimPolicy,
    me: usize,
    workers: usize,
    rng: XorShift,
    /// `Set`: the other workers in a private random order.
    permutation: Vec<usize>,
    /// `Set`: where the current walk started, how far it has gone, and failures since the
    /// start point was drawn.
    start: usize,
    step: usize,
    failures: u32,
    /// `Sample`: the current search has taken its sample.
    sampled: bool,
    /// `Sample`: how many workers a sample reads, and whether every attempt samples (the
    /// Wool paper's simulation model) or only a search's first (its implementation).
    sample_size: usize,
    sample_every_attempt: bool,
    /// How many workers the last choice read (`Sample`'s sample; 0 for the others).
    probes: usize,
}

impl VictimSelector {
    /// The selector of worker `me` (numbered from 0) of `workers` (at least 2 for
    /// [`choose`](Self::choose) to have anyone to choose).
    pub fn new(policy: VictimPolicy, me: usize, workers: usize) -> Self {
        let mut rng = XorShift::new(me as u64);
        let mut permutation: Vec<usize> = (0..workers).filter(|&w| w != me).collect();
        for i in (1..permutation.len()).rev() {
            permutation.swap(i, rng.below(i + 1));
        }
        let start = if permutation.is_empty() {
            0
        } else {
            rng.below(permutation.len())
        };
        Self {
            policy,
            me,
            workers,
            rng,
            permutation,
            start,
            step: 0,
            failures: 0,
            sampled: false,
            // About √p, as Wool's SAMP reads.
            sample_size: ((workers.saturating_sub(1)) as f64).sqrt().ceil().max(1.0) as usize,
            sample_every_attempt: false,
            probes: 0,
        }
    }

    /// How many workers `Sample` reads.
    pub fn sample_size(&self) -> usize {
        self.sample_size
    }

    /// Makes `Sample` read `size` workers (at least one) instead of about √p, before every
    /// attempt if `every_attempt`, or only before a search's first.
    pub fn set_sampling(&mut self, size: usize, every_attempt: bool) {
        self.sample_size = size.max(1);
        self.sample_every_attempt = every_attempt;
    }

    /// Starts a new search for work (the worker has just run dry).
    pub fn begin(&mut self) {
        self.sampled = false;
        if self.policy == VictimPolicy::Set && !self.permutation.is_empty() {
            self.start = self.rng.below(self.permutation.len());
            self.step = 0;
            self.failures = 0;
        }
    }

    /// The next victim to try, never the thief itself: `prospects` has one entry per worker,
    /// and `thieves` counts the workers searching for work now (`Set` walks further when
    /// fewer are).
    pub fn choose<P: Prospect>(&mut self, prospects: &[P], thieves: &AtomicU64) -> usize {
        let others = self.workers - 1;
        self.probes = 0;
        match self.policy {
            VictimPolicy::Random => self.random_other(),
            VictimPolicy::Sample if self.sampled && !self.sample_every_attempt => {
                self.random_other()
            }
            VictimPolicy::Sample => {
                self.sampled = true;
                let mut best: Option<(usize, u32, usize)> = None;
                for _ in 0..self.sample_size {
                    let v = self.random_other();
                    self.probes += 1;
                    let Some(depth) = prospects[v].oldest_depth() else {
                        // An empty worker: the samples tell little now, steal what we have.
                        break;
                    };
                    let len = prospects[v].len();
                    if best.is_none_or(|(_, d, l)| depth < d || (depth == d && len > l)) {
                        best = Some((v, depth, len));
                    }
                }
                best.map_or_else(|| self.random_other(), |(v, _, _)| v)
            }
            VictimPolicy::Set => {
                // Relaxed: a hint for the walk's length.
                let thieves = thieves.load(Ordering::Relaxed).max(1) as usize;
                let length = SET_FLOOR
                    .max(SET_MULTIPLICITY * self.workers / thieves)
                    .clamp(1, others);
                if self.step >= length {
                    self.step = 0;
                }
                let v = self.permutation[(self.start + self.step) % others];
                self.step += 1;
                v
            }
        }
    }

    /// How many workers the last [`choose`](Self::choose) read to decide.
    pub fn last_probes(&self) -> usize {
        self.probes
    }

    /// Reports a failed attempt (for `Set`'s restarts).
    pub fn failed(&mut self) {
        if self.policy == VictimPolicy::Set {
            self.failures += 1;
            if self.failures >= SET_RESTART {
                self.begin();
            }
        }
    }

    fn random_other(&mut self) -> usize {
        let v = self.rng.below(self.workers - 1);
        if v >= self.me { v + 1 } else { v }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    struct Fake(usize, Option<u32>);
    impl Prospect for Fake {
        fn len(&self) -> usize {
            self.0
        }
        fn oldest_depth(&self) -> Option<u32> {
            self.1
        }
    }

    fn fakes() -> Vec<Fake> {
        (0..16)
            .map(|i| Fake(i, Some(if i == 11 { 0 } else { 5 })))
            .collect()
    }

    #[test]
    fn random_never_picks_itself_and_covers_everyone() {
        let mut s = VictimSelector::new(VictimPolicy::Random, 3, 8);
        let mut seen = [false; 8];
        for _ in 0..1000 {
            let v = s.choose(&fakes(), &AtomicU64::new(1));
            assert_ne!(v, 3);
            seen[v] = true;
        }
        assert_eq!(seen.iter().filter(|&&s| s).count(), 7);
    }

    #[test]
    fn sampling_prefers_the_shallowest_oldest_task() {
        let mut s = VictimSelector::new(VictimPolicy::Sample, 0, 16);
        let thieves = AtomicU64::new(1);
        let picks = (0..400)
            .filter(|_| {
                s.begin();
                s.choose(&fakes(), &thieves) == 11
            })
            .count();
        // Uniform choice would pick worker 11 one time in 15; four samples find it far more.
        assert!(picks > 400 / 15 * 2, "{picks}");
        // After the first attempt of a search the choice is random again.
        s.begin();
        let _ = s.choose(&fakes(), &thieves);
        let later = (0..1500)
            .filter(|_| s.choose(&fakes(), &thieves) == 11)
            .count();
        assert!(later < 1500 / 15 * 2, "{later}");
    }

    #[test]
    fn sets_walk_a_permutation_and_grow_with_fewer_thieves() {
        let mut s = VictimSelector::new(VictimPolicy::Set, 0, 64);
        s.begin();
        let many_thieves = AtomicU64::new(60);
        let walk: Vec<usize> = (0..40)
            .map(|_| s.choose(&fakes_n(64), &many_thieves))
            .collect();
        let distinct: std::collections::HashSet<_> = walk.iter().collect();
        assert_eq!(
            distinct.len(),
            SET_FLOOR,
            "60 thieves: each polls the floor of 12"
        );
        assert!(!walk.contains(&0));
        let lone_thief = AtomicU64::new(1);
        s.begin();
        let walk: std::collections::HashSet<_> = (0..63)
            .map(|_| s.choose(&fakes_n(64), &lone_thief))
            .collect();
        assert_eq!(walk.len(), 63, "the last thief polls everyone");
    }

    fn fakes_n(n: usize) -> Vec<Fake> {
        (0..n).map(|i| Fake(i, Some(1))).collect()
    }
}
