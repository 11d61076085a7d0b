//! Balancers from outside raylb, registered by name so that the command line lists and runs
//! them beside its own.
//!
//! A [`Balancer`] is generic over its tasks and their runner, so it cannot be kept as a trait
//! object. A frame, though, runs only a few kinds of runner; [`FrameBalancer`] is a balancer
//! with those fixed, which every `Balancer` is (a blanket implementation), and which can be
//! kept behind a reference. The dispatch through it happens once per frame; inside, the
//! balancer's own `run` is compiled for the frame's runner, as the built-in balancers' is.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::OnceLock;

use balancers::sim::{DynSimulated, Simulated};
use balancers::{Balancer, Choice, Outcome, SpawnError};

use crate::device::BalancerName;
use crate::integrator::{RenderTask, Whitted, WorkerRays};
use crate::watch::{FrameWatch, Unwatched};

/// A balancer as a frame runs it: [`Balancer::run`] for the renderer's tasks and runners.
/// Every `Balancer + Send + Sync + Debug + 'static` is one.
pub trait FrameBalancer: Send + Sync + fmt::Debug + 'static {
    /// The balancer's [`name`](Balancer::name).
    fn name(&self) -> String;

    /// Runs a frame's tiles with `runner`, which nobody watches.
    ///
    /// # Errors
    /// When a worker thread cannot be started.
    fn run_frame(
        &self,
        workers: NonZeroUsize,
        tiles: &[RenderTask],
        runner: &Whitted<'_, Unwatched>,
    ) -> Result<Outcome<WorkerRays>, SpawnError>;

    /// Runs a frame's tiles with `runner`, which a window or a progress bar watches.
    ///
    /// # Errors
    /// When a worker thread cannot be started.
    fn run_watched(
        &self,
        workers: NonZeroUsize,
        tiles: &[RenderTask],
        runner: &Whitted<'_, FrameWatch>,
    ) -> Result<Outcome<WorkerRays>, SpawnError>;
}

impl<B: Balancer + Send + Sync + fmt::Debug + 'static> FrameBalancer for B {
    fn name(&self) -> String {
        Balancer::name(self)
    }

    fn run_frame(
        &self,
        workers: NonZeroUsize,
        tiles: &[RenderTask],
        runner: &Whitted<'_, Unwatched>,
    ) -> Result<Outcome<WorkerRays>, SpawnError> {
        self.run(workers, tiles, runner)
    }

    fn run_watched(
        &self,
        workers: NonZeroUsize,
        tiles: &[RenderTask],
        runner: &Whitted<'_, FrameWatch>,
    ) -> Result<Outcome<WorkerRays>, SpawnError> {
        self.run(workers, tiles, runner)
    }
}

/// A registered balancer: the keyword `--balancer` takes, its line of help, and the balancer.
/// Registered balancers live as long as the program, so this is a copyable handle.
#[derive(Clone, Copy)]
pub struct UserBalancer {
    keyword: &'static str,
    about: &'static str,
    balancer: &'static dyn FrameBalancer,
    simulated: Option<&'static (dyn DynSimulated + Send + Sync)>,
}

impl UserBalancer {
    /// The keyword `--balancer` takes.
    pub fn keyword(&self) -> &'static str {
        self.keyword
    }

    /// Its line of help.
    pub fn about(&self) -> &'static str {
        self.about
    }

    /// The balancer.
    pub fn balancer(&self) -> &'static dyn FrameBalancer {
        self.balancer
    }

    /// The balancer as the simulator replays it, where it has a simulated policy
    /// ([`Simulated`]).
    pub fn simulated(&self) -> Option<&'static (dyn DynSimulated + Send + Sync)> {
        self.simulated
    }
}

/// Keywords are unique among the registered and the built-in balancers, so one names one.
impl PartialEq for UserBalancer {
    fn eq(&self, other: &Self) -> bool {
        self.keyword == other.keyword
    }
}

impl Eq for UserBalancer {}

impl fmt::Debug for UserBalancer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UserBalancer({})", self.keyword)
    }
}

/// The balancers registered for this process.
static REGISTERED: OnceLock<Vec<UserBalancer>> = OnceLock::new();

/// A balancer to register: its keyword, its line of help, and the balancer, with its
/// simulated policy where it has one. The balancer lives as long as the process from here on.
pub struct Registration {
    keyword: &'static str,
    about: &'static str,
    balancer: &'static dyn FrameBalancer,
    simulated: Option<&'static (dyn DynSimulated + Send + Sync)>,
}

impl Registration {
    /// `balancer`, for the commands that render.
    pub fn new<B>(keyword: &'static str, about: &'static str, balancer: B) -> Self
    where
        B: Balancer + Send + Sync + fmt::Debug + 'static,
    {
        Self {
            keyword,
            about,
            balancer: Box::leak(Box::new(balancer)),
            simulated: None,
        }
    }

    /// `balancer`, for the commands that render and for the simulator, which replays its
    /// [`Simulated::policy`].
    pub fn simulated<B>(keyword: &'static str, about: &'static str, balancer: B) -> Self
    where
        B: Simulated + Send + Sync + fmt::Debug + 'static,
    {
        let balancer: &'static B = Box::leak(Box::new(balancer));
        Self {
            keyword,
            about,
            balancer,
            simulated: Some(balancer),
        }
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Registration({})", self.keyword)
    }
}

/// Registers `balancers` for the command line, once per process, before it is parsed.
///
/// # Errors
/// When balancers were registered already, or a keyword is empty, has characters other than
/// lowercase letters, digits and `-`, or names a built-in or another registered balancer.
pub fn register(balancers: Vec<Registration>) -> Result<(), String> {
    let list = handles(balancers)?;
    REGISTERED
        .set(list)
        .map_err(|_| "balancers are registered once per process".to_string())
}

/// The handles of `balancers`, their keywords checked.
fn handles(balancers: Vec<Registration>) -> Result<Vec<UserBalancer>, String> {
    let mut list: Vec<UserBalancer> = Vec::with_capacity(balancers.len());
    for registration in balancers {
        let keyword = registration.keyword;
        let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        if keyword.is_empty() || !keyword.chars().all(allowed) {
            return Err(format!(
                "balancer keyword {keyword:?}: lowercase letters, digits and '-' only"
            ));
        }
        if BalancerName::ALL.iter().any(|b| b.keyword() == keyword) {
            return Err(format!(
                "balancer keyword {keyword:?} is a built-in balancer's"
            ));
        }
        if list.iter().any(|b| b.keyword == keyword) {
            return Err(format!("balancer keyword {keyword:?} is registered twice"));
        }
        list.push(UserBalancer {
            keyword,
            about: registration.about,
            balancer: registration.balancer,
            simulated: registration.simulated,
        });
    }
    Ok(list)
}

/// The balancers registered, in the order given; none where nothing was registered.
pub fn registered() -> &'static [UserBalancer] {
    REGISTERED.get().map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use balancers::BalancerKind;

    use super::*;

    fn one(keyword: &'static str) -> Registration {
        let counter = BalancerKind::counter(NonZeroUsize::MIN);
        Registration::simulated(keyword, "A counter.", counter)
    }

    #[test]
    fn keywords_are_checked_before_anything_is_registered() {
        let list = handles(vec![one("mine"), one("mine-2")]).unwrap();
        assert_eq!(list[1].keyword(), "mine-2");
        assert_eq!(list[0].balancer().name(), "counter/chunk=1");
        assert_eq!(
            list[0].simulated().map(|s| s.balancer_name()),
            Some("counter/chunk=1".into())
        );
        for (balancers, says) in [
            (vec![one("")], "lowercase letters"),
            (vec![one("Mine")], "lowercase letters"),
            (vec![one("my balancer")], "lowercase letters"),
            (vec![one("stealing")], "a built-in balancer's"),
            (vec![one("cuda-managed")], "a built-in balancer's"),
            (vec![one("mine"), one("mine")], "registered twice"),
        ] {
            let e = handles(balancers).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }
}
