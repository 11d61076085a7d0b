//! `raylb man` and `raylb completions`: the manual pages and the shell completion scripts,
//! generated from the command line's definitions (`cli.rs`) as `--help` is, so that neither
//! can fall behind a flag.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use clap::CommandFactory;
use renderer::output::StagedFiles;

use crate::cli::{Cli, CompletionsArgs, ManArgs};

/// The name a shell completes and a manual page is titled by.
const PROGRAM: &str = "raylb";

pub(crate) fn completions(args: &CompletionsArgs) -> Result<ExitCode> {
    out!("{}", completion_script(args.shell));
    Ok(ExitCode::SUCCESS)
}

/// The completion script of `shell` for every subcommand, flag and value of the command line.
fn completion_script(shell: clap_complete::Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), PROGRAM, &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

pub(crate) fn man(args: &ManArgs) -> Result<ExitCode> {
    let pages = pages()?;
    if let Some(dir) = &args.out {
        write_all(&pages, dir)?;
        return Ok(ExitCode::SUCCESS);
    }
    let name = std::iter::once(PROGRAM)
        .chain(args.command.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-");
    let page = pages.iter().find(|page| page.name == name).ok_or_else(|| {
        anyhow!(
            "`{}` is not a subcommand of raylb (`raylb --help` lists them)",
            args.command.join(" ")
        )
    })?;
    out!("{}", page.roff);
    Ok(ExitCode::SUCCESS)
}

/// One manual page: `raylb` or a subcommand's (`raylb-render`, `raylb-bench-sweep`), as git
/// names its own.
#[derive(Debug)]
struct Page {
    name: String,
    roff: String,
}

/// Every manual page, raylb's first, then each subcommand's depth first; raylb(1) lists the
/// subcommands' pages and each of those lists its own.
fn pages() -> Result<Vec<Page>> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    // Gives every subcommand its display name (`raylb-bench-sweep`) and full usage.
    cmd.build();
    let mut pages = Vec::new();
    add_pages(&cmd, &mut pages)?;
    Ok(pages)
}

fn add_pages(cmd: &clap::Command, pages: &mut Vec<Page>) -> Result<()> {
    // Every page, a subcommand's too, from this version of raylb.
    let man = clap_mangen::Man::new(cmd.clone())
        .source(format!("{PROGRAM} {}", env!("CARGO_PKG_VERSION")));
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    pages.push(Page {
        name: cmd.get_display_name().unwrap_or(cmd.get_name()).to_owned(),
        roff: String::from_utf8(roff).context("a manual page is not UTF-8")?,
    });
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        add_pages(sub, pages)?;
    }
    Ok(())
}

/// Writes every page as `NAME.1` into `dir`, all put in place together once all are written.
fn write_all(pages: &[Page], dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        anyhow!(
            "cannot make {}: {}",
            dir.display(),
            renderer::file_errors::io_reason(&e)
        )
    })?;
    let mut staged = StagedFiles::new();
    for page in pages {
        let path: PathBuf = dir.join(format!("{}.1", page.name));
        // Said of the page before any is written: the renames at the end name no file.
        renderer::output::check_writable(&path)
            .map_err(|reason| anyhow!("cannot write {}: {reason}", path.display()))?;
        staged
            .text(&path, &page.roff)
            .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    }
    staged.commit()?;
    outln!(
        "wrote   {} manual pages into {} (raylb.1, {}.1, …)",
        pages.len(),
        dir.display(),
        pages.get(1).map_or("", |p| p.name.as_str())
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_that_completes_the_subcommands() {
        use clap::ValueEnum;
        for shell in clap_complete::Shell::value_variants() {
            let script = completion_script(*shell);
            for word in ["raylb", "render", "validate", "--balancer", "stealing"] {
                assert!(script.contains(word), "{shell}'s completions lack `{word}`");
            }
        }
    }

    #[test]
    fn there_is_a_manual_page_per_subcommand() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|p| p.name.as_str()).collect();
        for name in [
            "raylb",
            "raylb-render",
            "raylb-view",
            "raylb-bench",
            "raylb-bench-sweep",
            "raylb-completions",
            "raylb-man",
        ] {
            assert!(names.contains(&name), "no page {name} among {names:?}");
        }
        assert!(!names.contains(&"raylb-help"), "a page for `help`");
        let render = &pages[names.iter().position(|n| *n == "raylb-render").unwrap()];
        assert!(
            render.roff.contains(".TH raylb-render 1"),
            "{}",
            render.roff
        );
        for flag in ["balancer", "workmap", "max\\-memory"] {
            assert!(
                render.roff.contains(flag),
                "`{flag}` missing from raylb-render(1)"
            );
        }
        // raylb(1) points at the others, as git's pages do.
        assert!(pages[0].roff.contains("raylb\\-render(1)"));
    }
}
