//! Progress of long commands on stderr: a bar on a terminal, once the work has taken a
//! second; otherwise (a pipe, a log file) a line per finished step, or nothing with --quiet.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use renderer::scene::LoadObserver;
use renderer::scene::{BvhReport, SceneReport};
use renderer::stats::counted;

use crate::terminal::{StdoutError, write_stdout};

/// Work shorter than this shows no bar.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// How far a command has got, out of a known total of steps (pixels, renders).
///
/// ```
/// use experiments::progress::Progress;
///
/// let mut progress = Progress::new(3, "renders", true);
/// for round in 1..=3 {
///     progress.step(&format!("render {round}/3"));
/// }
/// progress.finish();
/// // With --quiet there is no bar, and no lines either.
/// assert!(!Progress::can_show(true));
/// ```
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    shown: bool,
    terminal: bool,
    quiet: bool,
}

impl Progress {
    /// Progress over `total` steps of `what` (e.g. "pixels", "renders").
    ///
    /// ```
    /// # use experiments::progress::Progress;
    /// let progress = Progress::new(96 * 64, "pixels", true);
    /// progress.finish();
    /// ```
    pub fn new(total: u64, what: &str, quiet: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{elapsed_precise}} [{{bar:32}}] {{pos}}/{{len}} {what} (eta {{eta}}) {{msg}}"
            ))
            .expect("a valid template")
            .progress_chars("=> "),
        );
        Self {
            bar,
            start: Instant::now(),
            shown: false,
            terminal: std::io::stderr().is_terminal(),
            quiet,
        }
    }

    /// Whether a bar can appear at all: stderr is a terminal and --quiet was not given.
    ///
    /// ```
    /// # use experiments::progress::Progress;
    /// assert!(!Progress::can_show(true));
    /// ```
    pub fn can_show(quiet: bool) -> bool {
        !quiet && std::io::stderr().is_terminal()
    }

    /// Sets the steps done so far.
    ///
    /// ```
    /// # use experiments::progress::Progress;
    /// let mut progress = Progress::new(96 * 64, "pixels", true);
    /// progress.set(48 * 64);
    /// progress.finish();
    /// ```
    pub fn set(&mut self, done: u64) {
        self.bar.set_position(done);
        self.reveal();
    }

    /// One step done, described by `note`: the bar's message on a terminal, a line of its
    /// own elsewhere.
    ///
    /// ```
    /// # use experiments::progress::Progress;
    /// let mut progress = Progress::new(3, "builds", true);
    /// progress.step("build 1/3: 0.012 s");
    /// progress.finish();
    /// ```
    pub fn step(&mut self, note: &str) {
        self.bar.inc(1);
        if self.terminal {
            self.bar.set_message(note.to_string());
        } else if !self.quiet {
            errln!("{note}");
        }
        self.reveal();
    }

    /// Shows the bar once the work has taken long enough, on a terminal and without --quiet.
    fn reveal(&mut self) {
        if !self.shown && self.terminal && !self.quiet && self.start.elapsed() >= SHOW_AFTER {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }

    /// Removes the bar.
    ///
    /// ```
    /// # use experiments::progress::Progress;
    /// Progress::new(3, "renders", true).finish();
    /// ```
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// Loading a scene, for `raylb render`: the `scene` and `bvh` lines printed as each stage
/// ends, and on a terminal a spinner while a stage runs (a scene of millions of triangles
/// takes seconds to read and to build).
///
/// ```
/// use experiments::progress::LoadProgress;
/// use renderer::scene::{Scene, SceneOverrides};
///
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// let mut progress = LoadProgress::start(file, true);
/// let scene = Scene::load_observed(file.as_ref(), SceneOverrides::default(), &mut progress)?;
/// progress.finish()?;
/// assert_eq!((scene.width, scene.height), (96, 64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LoadProgress {
    spinner: Option<ProgressBar>,
    quiet: bool,
    /// The first failure to print, handed back by [`finish`](Self::finish).
    failed: Option<StdoutError>,
}

impl LoadProgress {
    /// Progress of loading `what` (a path, for the spinner).
    ///
    /// ```
    /// # use experiments::progress::LoadProgress;
    /// let progress = LoadProgress::start("scenes/quick.toml", true);
    /// assert!(progress.finish().is_ok());
    /// ```
    pub fn start(what: &str, quiet: bool) -> Self {
        let spinner = Progress::can_show(quiet).then(|| {
            let spinner = ProgressBar::new_spinner();
            spinner.set_message(format!("loading {what}"));
            spinner.enable_steady_tick(Duration::from_millis(100));
            spinner
        });
        Self {
            spinner,
            quiet,
            failed: None,
        }
    }

    fn line(&mut self, line: &dyn std::fmt::Display) {
        if self.quiet || self.failed.is_some() {
            return;
        }
        let print = || write_stdout(format_args!("{line}\n"));
        let result = match &self.spinner {
            Some(spinner) => spinner.suspend(print),
            None => print(),
        };
        self.failed = result.err();
    }

    /// Removes the spinner; fails if a line could not be printed.
    ///
    /// ```
    /// # use experiments::progress::LoadProgress;
    /// // Quiet: nothing was printed, so nothing failed.
    /// assert!(LoadProgress::start("scenes/quick.toml", true).finish().is_ok());
    /// ```
    pub fn finish(self) -> Result<(), StdoutError> {
        if let Some(spinner) = &self.spinner {
            spinner.finish_and_clear();
        }
        self.failed.map_or(Ok(()), Err)
    }
}

impl LoadObserver for LoadProgress {
    fn geometry_read(&mut self, scene: &SceneReport) {
        self.line(scene);
        if let Some(spinner) = &self.spinner {
            spinner.set_message(format!(
                "building the BVH over {}",
                counted(scene.triangles as u64, "triangle")
            ));
        }
    }

    fn bvh_built(&mut self, bvh: &BvhReport) {
        self.line(bvh);
        if let Some(spinner) = &self.spinner {
            spinner.finish_and_clear();
        }
    }
}
