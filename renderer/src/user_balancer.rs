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
///
/// ```
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// # use balancers::BalancerKind;
/// # use renderer::film::Film;
/// # use renderer::integrator::{RenderTask, Whitted, tiles};
/// # use renderer::scene::{Scene, SceneOverrides};
/// # use renderer::user_balancer::FrameBalancer;
/// # use renderer::watch::Unwatched;
/// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let scene = Scene::load(path.as_ref(), overrides)?;
/// # let film = Film::new(scene.width, scene.height, false);
/// # let tasks: Vec<RenderTask> =
/// #     tiles(32, 32, NonZeroU32::new(8).unwrap()).into_iter().map(RenderTask::Tile).collect();
/// // Any balancer, kept behind a reference as the command line keeps registered ones.
/// let balancer: &dyn FrameBalancer = &BalancerKind::counter(NonZeroUsize::MIN);
/// let runner = Whitted::new(&scene, &film, &Unwatched);
/// let outcome = balancer.run_frame(NonZeroUsize::new(2).unwrap(), &tasks, &runner)?;
/// let initial: u64 = outcome.telemetry.workers.iter().map(|w| w.initial_tasks).sum();
/// assert_eq!(initial, 16);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait FrameBalancer: Send + Sync + fmt::Debug + 'static {
    /// The balancer's [`name`](Balancer::name).
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::film::Film;
    /// # use renderer::integrator::{RenderTask, Whitted, tiles};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::user_balancer::FrameBalancer;
    /// # use renderer::watch::Unwatched;
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let film = Film::new(scene.width, scene.height, false);
    /// # let tasks: Vec<RenderTask> =
    /// #     tiles(32, 32, NonZeroU32::new(8).unwrap()).into_iter().map(RenderTask::Tile).collect();
    /// let balancer: &dyn FrameBalancer = &BalancerKind::counter(NonZeroUsize::MIN);
    /// assert_eq!(balancer.name(), "counter/chunk=1");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn name(&self) -> String;

    /// Runs a frame's tiles with `runner`, which nobody watches.
    ///
    /// # Errors
    /// When a worker thread cannot be started.
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::film::Film;
    /// # use renderer::integrator::{RenderTask, Whitted, tiles};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::user_balancer::FrameBalancer;
    /// # use renderer::watch::Unwatched;
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let film = Film::new(scene.width, scene.height, false);
    /// # let tasks: Vec<RenderTask> =
    /// #     tiles(32, 32, NonZeroU32::new(8).unwrap()).into_iter().map(RenderTask::Tile).collect();
    /// let balancer: &dyn FrameBalancer = &BalancerKind::counter(NonZeroUsize::MIN);
    /// let runner = Whitted::new(&scene, &film, &Unwatched);
    /// let outcome = balancer.run_frame(NonZeroUsize::new(2).unwrap(), &tasks, &runner)?;
    /// // One worker's rays for each worker; every camera ray traced.
    /// assert_eq!(outcome.locals.len(), 2);
    /// let camera: u64 = outcome.locals.iter().map(|w| w.rays.camera).sum();
    /// assert_eq!(camera, 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    ///
    /// ```
    /// # use std::num::{NonZeroU32, NonZeroUsize};
    /// # use balancers::BalancerKind;
    /// # use renderer::film::Film;
    /// # use renderer::integrator::{RenderTask, Whitted, tiles};
    /// # use renderer::scene::{Scene, SceneOverrides};
    /// # use renderer::user_balancer::FrameBalancer;
    /// # use renderer::watch::Unwatched;
    /// # let overrides = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
    /// # let scene = Scene::load(path.as_ref(), overrides)?;
    /// # let film = Film::new(scene.width, scene.height, false);
    /// # let tasks: Vec<RenderTask> =
    /// #     tiles(32, 32, NonZeroU32::new(8).unwrap()).into_iter().map(RenderTask::Tile).collect();
    /// use renderer::watch::FrameWatch;
    ///
    /// let watch = FrameWatch::new(scene.width, scene.height);
    /// let balancer: &dyn FrameBalancer = &BalancerKind::counter(NonZeroUsize::MIN);
    /// let runner = Whitted::new(&scene, &film, &watch);
    /// balancer.run_watched(NonZeroUsize::new(2).unwrap(), &tasks, &runner)?;
    /// // The watch saw every pixel done.
    /// assert_eq!(watch.pixels_done(), 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
///
/// ```
/// # use std::num::NonZeroUsize;
/// # use balancers::BalancerKind;
/// # use renderer::user_balancer::{Registration, register, registered};
/// # let counter = BalancerKind::counter(NonZeroUsize::MIN);
/// # register(vec![Registration::simulated("mine", "A counter of my own.", counter)])?;
/// # let mine = registered()[0];
/// assert_eq!(mine.keyword(), "mine");
/// assert!(mine.simulated().is_some());
/// assert_eq!(format!("{mine:?}"), "UserBalancer(mine)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct UserBalancer {
    keyword: &'static str,
    about: &'static str,
    balancer: &'static dyn FrameBalancer,
    simulated: Option<&'static (dyn DynSimulated + Send + Sync)>,
}

impl UserBalancer {
    /// The keyword `--balancer` takes.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use balancers::BalancerKind;
    /// # use renderer::user_balancer::{Registration, register, registered};
    /// # let counter = BalancerKind::counter(NonZeroUsize::MIN);
    /// # register(vec![Registration::simulated("mine", "A counter of my own.", counter)])?;
    /// # let mine = registered()[0];
    /// assert_eq!(mine.keyword(), "mine");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keyword(&self) -> &'static str {
        self.keyword
    }

    /// Its line of help.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use balancers::BalancerKind;
    /// # use renderer::user_balancer::{Registration, register, registered};
    /// # let counter = BalancerKind::counter(NonZeroUsize::MIN);
    /// # register(vec![Registration::simulated("mine", "A counter of my own.", counter)])?;
    /// # let mine = registered()[0];
    /// assert_eq!(mine.about(), "A counter of my own.");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn about(&self) -> &'static str {
        self.about
    }

    /// The balancer.
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use balancers::BalancerKind;
    /// # use renderer::user_balancer::{Registration, register, registered};
    /// # let counter = BalancerKind::counter(NonZeroUsize::MIN);
    /// # register(vec![Registration::simulated("mine", "A counter of my own.", counter)])?;
    /// # let mine = registered()[0];
    /// assert_eq!(mine.balancer().name(), "counter/chunk=1");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn balancer(&self) -> &'static dyn FrameBalancer {
        self.balancer
    }

    /// The balancer as the simulator replays it, where it has a simulated policy
    /// ([`Simulated`]).
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use balancers::BalancerKind;
    /// # use renderer::user_balancer::{Registration, register, registered};
    /// # let counter = BalancerKind::counter(NonZeroUsize::MIN);
    /// # register(vec![Registration::simulated("mine", "A counter of my own.", counter)])?;
    /// # let mine = registered()[0];
    /// // Registered with `Registration::simulated`: the simulator can replay it.
    /// assert!(mine.simulated().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::BalancerKind;
/// use renderer::user_balancer::{Registration, register, registered};
///
/// let counter = BalancerKind::counter(NonZeroUsize::new(4).unwrap());
/// let stealing = BalancerKind::Stealing(balancers::WorkStealing::default());
/// register(vec![
///     Registration::new("fours", "A counter handing out four tiles at a time.", counter),
///     Registration::simulated("thief", "Work stealing, replayable.", stealing),
/// ])?;
/// let keywords: Vec<&str> = registered().iter().map(|b| b.keyword()).collect();
/// assert_eq!(keywords, ["fours", "thief"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Registration(UserBalancer);

impl Registration {
    /// `balancer`, for the commands that render.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use balancers::BalancerKind;
    /// use renderer::user_balancer::{Registration, register, registered};
    ///
    /// let counter = BalancerKind::counter(NonZeroUsize::new(4).unwrap());
    /// register(vec![Registration::new("fours", "Four tiles at a time.", counter)])?;
    /// // Not for the simulator: no simulated policy was given.
    /// assert!(registered()[0].simulated().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new<B>(keyword: &'static str, about: &'static str, balancer: B) -> Self
    where
        B: Balancer + Send + Sync + fmt::Debug + 'static,
    {
        Self(UserBalancer {
            keyword,
            about,
            balancer: Box::leak(Box::new(balancer)),
            simulated: None,
        })
    }

    /// `balancer`, for the commands that render and for the simulator, which replays its
    /// [`Simulated::policy`].
    ///
    /// ```
    /// # use std::num::NonZeroUsize;
    /// # use balancers::BalancerKind;
    /// # use renderer::user_balancer::{Registration, register, registered};
    /// # let counter = BalancerKind::counter(NonZeroUsize::MIN);
    /// # register(vec![Registration::simulated("mine", "A counter of my own.", counter)])?;
    /// # let mine = registered()[0];
    /// assert!(mine.simulated().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn simulated<B>(keyword: &'static str, about: &'static str, balancer: B) -> Self
    where
        B: Simulated + Send + Sync + fmt::Debug + 'static,
    {
        let balancer: &'static B = Box::leak(Box::new(balancer));
        Self(UserBalancer {
            keyword,
            about,
            balancer,
            simulated: Some(balancer),
        })
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Registration({})", self.0.keyword)
    }
}

/// Registers `balancers` for the command line, once per process, before it is parsed.
///
/// # Errors
/// When balancers were registered already, or a keyword is empty, has characters other than
/// lowercase letters, digits and `-`, or names a built-in or another registered balancer.
///
/// ```
/// use std::num::NonZeroUsize;
/// use balancers::BalancerKind;
/// use renderer::user_balancer::{Registration, register};
///
/// let counter = || BalancerKind::counter(NonZeroUsize::MIN);
/// // A built-in's keyword, or one with capitals, is refused, and nothing is registered.
/// assert!(register(vec![Registration::new("stealing", "Mine.", counter())]).is_err());
/// assert!(register(vec![Registration::new("Mine", "Mine.", counter())]).is_err());
/// register(vec![Registration::new("mine", "Mine.", counter())])?;
/// // Once per process.
/// assert!(register(vec![Registration::new("other", "Another.", counter())]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn register(balancers: Vec<Registration>) -> Result<(), String> {
    let list = handles(balancers)?;
    REGISTERED
        .set(list)
        .map_err(|_| "balancers are registered once per process".to_string())
}

/// The handles of `balancers`, their keywords checked.
fn handles(balancers: Vec<Registration>) -> Result<Vec<UserBalancer>, String> {
    let mut list: Vec<UserBalancer> = Vec::with_capacity(balancers.len());
    for Registration(handle) in balancers {
        let keyword = handle.keyword;
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
        list.push(handle);
    }
    Ok(list)
}

/// The balancers registered, in the order given; none where nothing was registered.
///
/// ```
/// use renderer::user_balancer::registered;
///
/// // Nothing registered in this process.
/// assert!(registered().is_empty());
/// ```
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
