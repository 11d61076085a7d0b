//! `raylb bench cluster`: one frame over MPI ranks against one process with as many workers.
//!
//! Every render is a `raylb render … --json` of its own (under the MPI launcher for the
//! jobs), so that the one process and the ranks start alike; the time compared is each run's
//! `wall_seconds` (rendering, and for a job the reduction of the films to rank 0; the scene's
//! loading is left out of both). Each round renders once with the one process and once with
//! every job, starting one further along the list each round, and a job's speed is the one
//! process's time over the job's in the same round: the slow drift of a shared machine's
//! speed touches both sides of each pair alike.

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;

use renderer::file_errors::io_reason;

use crate::progress::Progress;
use crate::report::{
    Axes, OutputFiles, Panel, Series, Table, csv_text, line_chart, quantiles, rounded,
};
use crate::scene::scene_file;

/// What `--out` receives.
const FILES: &[&str] = &["cluster.csv", "cluster-paired.csv", "cluster.svg"];

/// What `raylb bench cluster` renders, and where it writes. The renders are `raylb render`'s,
/// so the balancer and the modes are named as its command line names them.
///
/// ```no_run
/// use std::num::{NonZeroU32, NonZeroUsize};
///
/// use experiments::cluster::ClusterOptions;
///
/// // Eight workers: one process of 8 threads, 2 ranks of 4 and 4 ranks of 2.
/// let out = std::env::temp_dir().join(format!("raylb-cluster-{}", std::process::id()));
/// let options = ClusterOptions {
///     scene_file: Some("scenes/quick.toml".into()),
///     workers: NonZeroUsize::new(8).unwrap(),
///     ranks: vec![NonZeroUsize::new(2).unwrap(), NonZeroUsize::new(4).unwrap()],
///     modes: vec!["static".into(), "stealing".into()],
///     balancer: "counter".into(),
///     tile: NonZeroU32::new(32).unwrap(),
///     width: Some(256),
///     height: Some(256),
///     repeat: NonZeroUsize::new(3).unwrap(),
///     mpirun: "mpirun".into(),
///     mpirun_arg: Vec::new(),
///     out: out.clone(),
///     quiet: true,
/// };
/// // Needs an MPI launcher, and runs raylb's own executable under it.
/// experiments::cluster::run(&options)?;
/// assert!(out.join("cluster-paired.csv").is_file());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ClusterOptions {
    /// The scene file [default: scenes/treasure.toml].
    pub scene_file: Option<PathBuf>,
    /// Workers in all: the one process's threads, and ranks × threads of each job.
    pub workers: NonZeroUsize,
    /// Rank counts; each must divide `workers`.
    pub ranks: Vec<NonZeroUsize>,
    /// How the jobs split tiles between ranks: `render --cluster`'s modes.
    pub modes: Vec<String>,
    /// The balancer of the one process and of every rank: `render --balancer`'s name.
    pub balancer: String,
    /// Tile edge in pixels.
    pub tile: NonZeroU32,
    /// Image width in pixels, instead of the scene's.
    pub width: Option<u32>,
    /// Image height in pixels, instead of the scene's.
    pub height: Option<u32>,
    /// Rounds: each renders with the one process and with every job once.
    pub repeat: NonZeroUsize,
    /// The MPI launcher.
    pub mpirun: PathBuf,
    /// Arguments for the launcher, given before `-np`.
    pub mpirun_arg: Vec<String>,
    /// The folder for the CSV and the chart.
    pub out: PathBuf,
    /// Print nothing.
    pub quiet: bool,
}

/// One configuration: the one process (no mode) or a job of `ranks` ranks.
#[derive(Clone, Debug)]
struct Setup {
    mode: Option<String>,
    ranks: usize,
    threads: usize,
}

impl Setup {
    fn label(&self) -> String {
        match &self.mode {
            None => format!("one process × {}", self.threads),
            Some(mode) => format!("{mode} {} × {}", self.ranks, self.threads),
        }
    }
}

/// A row of `cluster.csv`: one render.
#[derive(Debug, Serialize)]
struct RunRow {
    scene: String,
    tile: u32,
    balancer: String,
    /// `one-process` or the cluster mode.
    setup: String,
    ranks: usize,
    threads: usize,
    round: usize,
    seconds: f64,
    /// Busiest rank's busy time over the mean (empty for the one process).
    rank_imbalance: Option<f64>,
}

/// A row of `cluster-paired.csv`: a job against the one process, paired by round.
#[derive(Debug, Serialize)]
struct PairedRow {
    scene: String,
    tile: u32,
    balancer: String,
    mode: String,
    ranks: usize,
    threads: usize,
    median_seconds: f64,
    /// The one process's time over the job's, median of the rounds.
    median_speed: f64,
    q1_speed: f64,
    q3_speed: f64,
    median_rank_imbalance: f64,
    rounds: usize,
    /// Every round's image was the one process's, byte for byte.
    identical: bool,
}

/// Renders the scene with the one process and with every job, round after round; prints the
/// jobs' speed paired by round unless quiet, and writes `cluster.csv`, `cluster-paired.csv`
/// and `cluster.svg`. Fails when a job's image differs from the one process's.
///
/// ```no_run
/// # use std::num::{NonZeroU32, NonZeroUsize};
/// #
/// # use experiments::cluster::ClusterOptions;
/// #
/// # // Eight workers: one process of 8 threads, 2 ranks of 4 and 4 ranks of 2.
/// # let out = std::env::temp_dir().join(format!("raylb-cluster-{}", std::process::id()));
/// # let options = ClusterOptions {
/// #     scene_file: Some("scenes/quick.toml".into()),
/// #     workers: NonZeroUsize::new(8).unwrap(),
/// #     ranks: vec![NonZeroUsize::new(2).unwrap(), NonZeroUsize::new(4).unwrap()],
/// #     modes: vec!["static".into(), "stealing".into()],
/// #     balancer: "counter".into(),
/// #     tile: NonZeroU32::new(32).unwrap(),
/// #     width: Some(256),
/// #     height: Some(256),
/// #     repeat: NonZeroUsize::new(3).unwrap(),
/// #     mpirun: "mpirun".into(),
/// #     mpirun_arg: Vec::new(),
/// #     out: out.clone(),
/// #     quiet: true,
/// # };
/// // Needs an MPI launcher, and runs raylb's own executable under it.
/// experiments::cluster::run(&options)?;
/// let files = ["cluster.csv", "cluster-paired.csv", "cluster.svg"];
/// assert!(files.iter().all(|f| out.join(f).is_file()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(options: &ClusterOptions) -> Result<()> {
    let quiet = options.quiet;
    let files = OutputFiles::check(&options.out, FILES)?;
    let scene = scene_file(options.scene_file.as_deref())?;
    files.check_inputs(std::slice::from_ref(&scene))?;
    let setups = setups(options)?;
    if setups.iter().any(|s| s.mode.is_some()) {
        check_launcher(&options.mpirun)?;
    }
    let scratch = Scratch::new()?;
    let mut runs = Vec::new();
    let count = options.repeat.get() * setups.len();
    let mut progress = Progress::new(count as u64, "renders", quiet);
    // times[setup][round], imbalance[setup][round], and whether each image matched.
    let mut times = vec![Vec::new(); setups.len()];
    let mut imbalance = vec![Vec::new(); setups.len()];
    let mut identical = vec![true; setups.len()];
    let mut scene_name = String::new();
    for round in 0..options.repeat.get() {
        let mut reference: Option<Vec<u8>> = None;
        for turn in 0..setups.len() {
            let s = (round + turn) % setups.len();
            let setup = &setups[s];
            let image = scratch.path(&format!("{s}.png"));
            let report = render(options, &scene, setup, &image)?;
            scene_name = report["scene"]["name"].as_str().unwrap_or("?").to_string();
            let seconds = report["render"]["wall_seconds"]
                .as_f64()
                .ok_or_else(|| anyhow!("{}: no wall_seconds in its report", setup.label()))?;
            let ranks_imbalance = report["cluster"]["rank_imbalance"].as_f64();
            progress.step(&format!(
                "round {}/{}: {}: {seconds:.3} s",
                round + 1,
                options.repeat,
                setup.label()
            ));
            times[s].push(seconds);
            imbalance[s].push(ranks_imbalance.unwrap_or(1.0));
            let bytes = std::fs::read(&image)
                .with_context(|| format!("cannot read {}", image.display()))?;
            match &reference {
                None => reference = Some(bytes),
                Some(r) => identical[s] &= *r == bytes,
            }
            runs.push(RunRow {
                scene: scene_name.clone(),
                tile: options.tile.get(),
                balancer: options.balancer.clone(),
                setup: setup.mode.clone().unwrap_or_else(|| "one-process".into()),
                ranks: setup.ranks,
                threads: setup.threads,
                round: round + 1,
                seconds: rounded(seconds, 6),
                rank_imbalance: ranks_imbalance.map(|x| rounded(x, 4)),
            });
        }
    }
    progress.finish();
    // The images of a round are all compared with the round's first; every setup is first in
    // some round, so one that differs shows in every other setup's flag too.
    let all_identical = identical.iter().all(|&same| same);
    let paired = paired_rows(
        options,
        &scene_name,
        &setups,
        &times,
        &imbalance,
        all_identical,
    );
    let chart = chart(&scene_name, options.tile.get(), &paired)?;
    files.write(&[&csv_text(&runs)?, &csv_text(&paired)?, &chart])?;
    say!(
        quiet,
        "{scene_name}, {}-pixel tiles, --balancer {}, {} rounds; speed = the one process's time over the job's in the same round (median, quartiles).",
        options.tile,
        options.balancer,
        options.repeat
    );
    say!(
        quiet,
        "{}",
        table(&setups, &times, &paired).render().trim_end()
    );
    say!(quiet, "{}", files.summary());
    if !all_identical {
        bail!("the jobs' images differ from the one process's; raylb compare shows where");
    }
    Ok(())
}

/// The one process, then a job per mode and rank count.
fn setups(options: &ClusterOptions) -> Result<Vec<Setup>> {
    let workers = options.workers.get();
    let mut setups = vec![Setup {
        mode: None,
        ranks: 1,
        threads: workers,
    }];
    for &ranks in &options.ranks {
        let ranks = ranks.get();
        if !workers.is_multiple_of(ranks) {
            bail!(
                "--ranks {ranks}: does not divide --workers {workers}, so the jobs would not have as many workers as the one process"
            );
        }
        for mode in &options.modes {
            setups.push(Setup {
                mode: Some(mode.clone()),
                ranks,
                threads: workers / ranks,
            });
        }
    }
    Ok(setups)
}

/// Checks before any render that `--mpirun` names a program: a path to an executable file,
/// or a name found on `PATH`.
fn check_launcher(mpirun: &Path) -> Result<()> {
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| {
            #[cfg(unix)]
            let runnable = {
                use std::os::unix::fs::PermissionsExt;
                m.permissions().mode() & 0o111 != 0
            };
            #[cfg(not(unix))]
            let runnable = true;
            m.is_file() && runnable
        })
    };
    if mpirun.components().count() > 1 {
        return match std::fs::metadata(mpirun) {
            Err(e) => bail!("--mpirun {}: {}", mpirun.display(), io_reason(&e)),
            Ok(_) if !executable(mpirun) => {
                bail!("--mpirun {}: not an executable file", mpirun.display())
            }
            Ok(_) => Ok(()),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| executable(&dir.join(mpirun))) {
        return Ok(());
    }
    bail!(
        "--mpirun {}: no such program on PATH (Open MPI's mpirun: apt install openmpi-bin)",
        mpirun.display()
    )
}

/// Renders `scene` as `setup` says, the image to `image`; returns the `--json` report.
fn render(
    options: &ClusterOptions,
    scene: &Path,
    setup: &Setup,
    image: &Path,
) -> Result<serde_json::Value> {
    let raylb = std::env::current_exe().context("cannot find raylb's own executable")?;
    let mut command = match &setup.mode {
        None => Command::new(&raylb),
        Some(_) => {
            let mut c = Command::new(&options.mpirun);
            c.args(&options.mpirun_arg)
                .args(["-np", &setup.ranks.to_string()])
                .arg(&raylb);
            c
        }
    };
    command
        .arg("render")
        .arg(scene)
        .args(["--threads", &setup.threads.to_string()])
        .args(["--tile", &options.tile.to_string()])
        .args(["--balancer", &options.balancer, "--json", "-o"])
        .arg(image);
    for (flag, value) in [("--width", options.width), ("--height", options.height)] {
        if let Some(v) = value {
            command.args([flag, &v.to_string()]);
        }
    }
    if let Some(mode) = &setup.mode {
        command.args(["--cluster", mode]);
    }
    let out = command.output().map_err(|e| {
        anyhow!(
            "cannot run {}: {}",
            command.get_program().to_string_lossy(),
            io_reason(&e)
        )
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let reason = stderr
            .lines()
            .find(|l| l.starts_with("raylb"))
            .or_else(|| {
                stderr
                    .lines()
                    .find(|l| !l.trim().is_empty() && !l.starts_with("---"))
            })
            .unwrap_or("no message");
        bail!("{} failed ({}): {reason}", setup.label(), out.status);
    }
    serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{}: its --json report does not parse", setup.label()))
}

/// Each job against the one process (`setups[0]`), paired by round.
fn paired_rows(
    options: &ClusterOptions,
    scene: &str,
    setups: &[Setup],
    times: &[Vec<f64>],
    imbalance: &[Vec<f64>],
    identical: bool,
) -> Vec<PairedRow> {
    setups
        .iter()
        .enumerate()
        .skip(1)
        .map(|(s, setup)| {
            let speeds: Vec<f64> = times[0]
                .iter()
                .zip(&times[s])
                .map(|(one, job)| one / job)
                .collect();
            let [q1, median, q3] = quantiles(&speeds);
            PairedRow {
                scene: scene.to_string(),
                tile: options.tile.get(),
                balancer: options.balancer.clone(),
                mode: setup.mode.clone().unwrap_or_default(),
                ranks: setup.ranks,
                threads: setup.threads,
                median_seconds: rounded(quantiles(&times[s])[1], 6),
                median_speed: rounded(median, 4),
                q1_speed: rounded(q1, 4),
                q3_speed: rounded(q3, 4),
                median_rank_imbalance: rounded(quantiles(&imbalance[s])[1], 4),
                rounds: speeds.len(),
                identical,
            }
        })
        .collect()
}

/// The table for the terminal.
fn table(setups: &[Setup], times: &[Vec<f64>], paired: &[PairedRow]) -> Table {
    let mut table = Table::new(&[
        "setup",
        "median s",
        "speed",
        "q1",
        "q3",
        "rank imbalance",
        "identical",
    ]);
    table.row(vec![
        setups[0].label(),
        format!("{:.3}", quantiles(&times[0])[1]),
        "1.000".into(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]);
    for (setup, row) in setups[1..].iter().zip(paired) {
        table.row(vec![
            setup.label(),
            format!("{:.3}", row.median_seconds),
            format!("{:.3}", row.median_speed),
            format!("{:.3}", row.q1_speed),
            format!("{:.3}", row.q3_speed),
            format!("{:.3}", row.median_rank_imbalance),
            if row.identical { "yes" } else { "NO" }.into(),
        ]);
    }
    table
}

/// Speed against ranks, a line per mode.
fn chart(scene: &str, tile: u32, paired: &[PairedRow]) -> Result<String> {
    let mut modes: Vec<&str> = paired.iter().map(|r| r.mode.as_str()).collect();
    modes.dedup();
    let series = modes
        .iter()
        .map(|mode| Series {
            label: format!("--cluster {mode}"),
            points: paired
                .iter()
                .filter(|r| r.mode == *mode)
                .map(|r| (r.ranks as f64, r.median_speed))
                .collect(),
        })
        .collect();
    let axes = Axes {
        x: "ranks (same workers in all)",
        y: "speed over one process",
        log_x: false,
        y_from_zero: true,
    };
    let panel = Panel {
        title: format!("{scene} ({tile}-pixel tiles)"),
        series,
    };
    line_chart("MPI ranks against one process", &axes, &[panel])
}

/// A folder for the images of a round, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("raylb-bench-cluster-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Self(dir))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `workers` in all, jobs of `ranks` ranks, in the modes `static` and `stealing`.
    fn options(workers: usize, ranks: &[usize]) -> ClusterOptions {
        let positive = |n: usize| NonZeroUsize::new(n).unwrap();
        ClusterOptions {
            scene_file: None,
            workers: positive(workers),
            ranks: ranks.iter().map(|&r| positive(r)).collect(),
            modes: vec!["static".into(), "stealing".into()],
            balancer: "stealing".into(),
            tile: NonZeroU32::new(32).unwrap(),
            width: None,
            height: None,
            repeat: positive(5),
            mpirun: "mpirun".into(),
            mpirun_arg: Vec::new(),
            out: "bench-out".into(),
            quiet: false,
        }
    }

    #[test]
    fn jobs_have_as_many_workers_as_the_one_process() {
        let labels: Vec<String> = setups(&options(4, &[1, 2, 4]))
            .unwrap()
            .iter()
            .map(Setup::label)
            .collect();
        assert_eq!(
            labels,
            [
                "one process × 4",
                "static 1 × 4",
                "stealing 1 × 4",
                "static 2 × 2",
                "stealing 2 × 2",
                "static 4 × 1",
                "stealing 4 × 1"
            ]
        );
        let e = setups(&options(4, &[3])).unwrap_err().to_string();
        assert!(
            e.starts_with("--ranks 3: does not divide --workers 4"),
            "{e}"
        );
    }

    #[test]
    fn jobs_are_paired_with_the_one_process_round_by_round() {
        let a = options(2, &[2]);
        let all = setups(&a).unwrap();
        // The machine slows down in round 2: both sides of the pair alike.
        let times = vec![
            vec![1.0, 2.0, 1.0],
            vec![1.0, 2.0, 1.0],
            vec![2.0, 4.0, 2.5],
        ];
        let imbalance = vec![vec![1.0; 3], vec![1.2, 1.1, 1.3], vec![1.5; 3]];
        let rows = paired_rows(&a, "quick", &all, &times, &imbalance, true);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].median_speed, rows[0].median_rank_imbalance),
            (1.0, 1.2)
        );
        assert_eq!(rows[1].median_speed, 0.5);
        assert_eq!(rows[1].q1_speed, 0.45);
        let csv = csv_text(&rows).unwrap();
        assert!(csv.starts_with("scene,tile,balancer,mode,ranks,threads,median_seconds,median_speed,q1_speed,q3_speed,median_rank_imbalance,rounds,identical\n"), "{csv}");
        let table = table(&all, &times, &rows).render();
        assert!(table.contains("stealing 2 × 1"), "{table}");
    }
}
