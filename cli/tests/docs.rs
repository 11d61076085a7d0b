//! The guide's commands run. Every `raylb …` command line in the code blocks of README.md and
//! docs/*.md that needs nothing but this machine's CPU — a render, record or validation of a
//! shipped scene, the scene list, the manual pages, the completions — runs at 32×32 pixels in
//! a temporary folder holding copies of scenes/ and assets/ (so that every output lands there
//! and nothing is written in the repository), and must succeed. Those that need a GPU, MPI, a
//! display, a file the repository does not ship, or a benchmark's minutes are parsed only
//! (cli/src/docs_parse.rs parses every one).

mod common;
#[path = "common/doc_commands.rs"]
mod doc_commands;

use std::fs;
use std::path::Path;

use common::raylb;
use doc_commands::{DocCommand, Launcher};

/// The subcommands cheap enough to run here.
const RUN: &[&str] = &[
    "render",
    "record",
    "validate",
    "scenes",
    "completions",
    "man",
];

/// The subcommands whose frame is shrunk to [`EDGE`]² pixels.
const SIZED: &[&str] = &["render", "record", "validate"];

/// The width and height every frame runs at.
const EDGE: &str = "32";

/// The extensions of the files a command reads; each must be in the repository.
const INPUTS: &[&str] = &["toml", "obj", "ply", "mtl", "tasks"];

/// Why a command is parsed only, or `None` when it runs here.
fn parsed_only(command: &DocCommand, root: &Path) -> Option<String> {
    let args = &command.args;
    if command.launcher == Launcher::Mpi {
        return Some("needs MPI".into());
    }
    let subcommand = args.first()?.as_str();
    if !RUN.contains(&subcommand) {
        return Some(format!("`{subcommand}` is not run here"));
    }
    for (i, arg) in args.iter().enumerate() {
        let next = args.get(i + 1).map(String::as_str);
        let device = match arg.strip_prefix("--device") {
            Some("") => next,
            Some(value) => value.strip_prefix('='),
            None => None,
        };
        if device.is_some_and(|d| d != "cpu")
            || ["--gpu", "--hybrid", "--gpu-emulator", "--gpu-balancers"].contains(&arg.as_str())
        {
            return Some("needs a GPU".into());
        }
        if arg.starts_with("--cluster") {
            return Some("needs MPI".into());
        }
        if arg.starts_with('/') || arg.starts_with('~') || arg.split('/').any(|p| p == "..") {
            return Some(format!("{arg} is outside the temporary folder"));
        }
        let input = Path::new(arg)
            .extension()
            .is_some_and(|e| INPUTS.iter().any(|i| e == *i));
        if input && !root.join(arg).is_file() {
            return Some(format!("reads {arg}, which the repository does not ship"));
        }
    }
    None
}

/// The arguments with the frame's size set to [`EDGE`]².
fn small(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--width" | "--height" => {
                args.next();
            }
            a if a.starts_with("--width=") || a.starts_with("--height=") => {}
            _ => out.push(arg.clone()),
        }
    }
    if SIZED.contains(&out[0].as_str()) {
        out.extend(["--width", EDGE, "--height", EDGE].map(String::from));
    }
    out
}

/// Copies the files of `from` (one level, as scenes/ and assets/ are) into `to`.
fn copy_folder(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn the_guides_commands_that_need_only_a_cpu_run() {
    let root = doc_commands::repository();
    let commands = doc_commands::commands();
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    for command in &commands {
        if let Some(reason) = parsed_only(command, &root) {
            eprintln!(
                "parsed only ({reason}): {}: {}",
                command.place(),
                command.text
            );
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        for folder in ["scenes", "assets"] {
            copy_folder(&root.join(folder), &dir.path().join(folder));
        }
        let args = small(&command.args);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = raylb(dir.path(), &args);
        eprintln!("ran: {}: raylb {}", command.place(), args.join(" "));
        if !out.status.success() {
            failures.push(format!(
                "{}: `raylb {}` exited with {}: {}",
                command.place(),
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        ran.push(command.place());
    }
    assert!(
        ran.iter().any(|place| place.starts_with("README.md")),
        "none of README.md's commands ran"
    );
    assert!(
        failures.is_empty(),
        "{} of the {} commands run failed:\n{}",
        failures.len(),
        ran.len(),
        failures.join("\n")
    );
}
