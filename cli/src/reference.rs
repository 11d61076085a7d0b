//! The command-line reference in Markdown, `docs/cli.md`: every subcommand with its usage,
//! arguments, options, their values and defaults, and its examples, walked from the clap
//! definitions in `cli.rs` (the text `--help` prints). A test fails when the checked-in page is
//! not what the definitions generate; after changing a flag, write it again with
//! [`REGENERATE`].

use std::fmt::Write;
use std::path::PathBuf;

use clap::{Arg, ArgAction, CommandFactory};

use crate::cli::Cli;

/// The command that writes `docs/cli.md` again.
const REGENERATE: &str = "RAYLB_UPDATE_DOCS=1 cargo test -p raylb reference";

/// The checked-in reference, from the repository's root.
const PAGE: &str = "docs/cli.md";

/// The whole reference page.
fn markdown() -> String {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    // Gives every subcommand its full usage (`raylb bench sweep [OPTIONS] …`).
    cmd.build();
    let mut page = String::new();
    page.push_str("# Command-line reference\n\n");
    page.push_str(
        "Every subcommand of `raylb` and every option, as `raylb SUBCOMMAND --help` prints them. \
         Every command also takes `-h` (a summary) and `--help` (all of it), and `raylb \
         --version` prints the version. [Running raylb](running.md) says what the commands \
         have in common: defaults, outputs, limits, exit codes and errors, and how to install \
         the manual pages and shell completions.\n\n",
    );
    let _ = writeln!(
        page,
        "This page is generated from the command line's definitions (`cli/src/cli.rs`): \
         `cargo test -p raylb` fails when it differs from them, and `{REGENERATE}` writes it \
         again.\n"
    );
    page.push_str("## Contents\n\n");
    contents(&cmd, 0, &mut page);
    page.push('\n');
    section(&cmd, &mut page);
    // One newline at the end, whatever the last section ended with.
    let end = page.trim_end().len();
    page.truncate(end);
    page.push('\n');
    page
}

/// The full name of a (built) command: `raylb bench sweep`.
fn full_name(cmd: &clap::Command) -> String {
    cmd.get_bin_name().unwrap_or(cmd.get_name()).to_owned()
}

/// GitHub's anchor for a heading of `text` in backquotes: lower case, spaces to hyphens.
fn anchor(text: &str) -> String {
    text.to_lowercase().replace(' ', "-")
}

fn visible_subcommands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set())
}

/// A nested list of links to every command's section.
fn contents(cmd: &clap::Command, depth: usize, page: &mut String) {
    let name = full_name(cmd);
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    let _ = writeln!(
        page,
        "{}- [`{name}`](#{}): {}",
        "  ".repeat(depth),
        anchor(&name),
        first_sentence(&about)
    );
    for sub in visible_subcommands(cmd) {
        contents(sub, depth + 1, page);
    }
}

/// The text up to the first `: ` or `. ` that ends a clause, for the contents.
fn first_sentence(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = [". ", "; "]
        .iter()
        .filter_map(|stop| text.find(stop))
        .min()
        .unwrap_or(text.len());
    text[..end].trim_end_matches('.').to_owned()
}

/// A command's section, then its subcommands'.
fn section(cmd: &clap::Command, page: &mut String) {
    let name = full_name(cmd);
    let _ = writeln!(page, "## `{name}`\n");
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(page, "{}\n", sentence(about.to_string().trim_end()));
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    let _ = writeln!(page, "```text\n{usage}\n```\n");

    let subcommands: Vec<_> = visible_subcommands(cmd).collect();
    if !subcommands.is_empty() {
        page.push_str("Subcommands:\n\n");
        for sub in &subcommands {
            let sub_name = full_name(sub);
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let _ = writeln!(
                page,
                "- [`{}`](#{}): {}",
                sub.get_name(),
                anchor(&sub_name),
                sentence(&one_paragraph(&about))
            );
        }
        page.push('\n');
    }

    let arguments: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_positional() && !a.is_hide_set())
        .collect();
    if !arguments.is_empty() {
        page.push_str("Arguments:\n\n");
        for arg in arguments {
            item(arg, page);
        }
        page.push('\n');
    }
    let options: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set() && !is_help_or_version(a))
        .collect();
    if !options.is_empty() {
        page.push_str("Options:\n\n");
        for arg in options {
            item(arg, page);
        }
        page.push('\n');
    }
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        let after = after.to_string();
        // Prose before the examples, the examples (indented lines) as a block.
        let (prose, examples) = match after.find("Examples") {
            Some(at) => after.split_at(at),
            None => (after.as_str(), ""),
        };
        // Prose laid out for a terminal (the viewer's keys, in columns) stays as laid out.
        if prose.lines().any(|l| l.starts_with(' ')) {
            let _ = writeln!(page, "```text\n{}\n```\n", prose.trim_end());
        } else if !prose.trim().is_empty() {
            let _ = writeln!(page, "{}\n", prose.trim());
        }
        if !examples.is_empty() {
            let (heading, lines) = examples.split_once('\n').unwrap_or((examples, ""));
            let _ = writeln!(
                page,
                "{}\n\n```text\n{}\n```\n",
                heading.trim(),
                dedent(lines)
            );
        }
    }
    for sub in subcommands {
        section(sub, page);
    }
}

fn is_help_or_version(arg: &Arg) -> bool {
    matches!(
        arg.get_action(),
        ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
    )
}

/// One argument or option as a list item: its spelling, its help, what it takes (a list, a
/// default, one of some values), and then each value with its help.
fn item(arg: &Arg, page: &mut String) {
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let mut text = vec![sentence(help.trim())];
    if let Some(delimiter) = arg.get_value_delimiter() {
        text.push(format!(
            "A list, separated by `{delimiter}`, each value once."
        ));
    } else if matches!(arg.get_action(), ArgAction::Append) && !arg.is_positional() {
        text.push("May be given more than once.".to_owned());
    }
    if arg.is_required_set() {
        text.push("Required.".to_owned());
    }
    let takes_values = arg.get_action().takes_values();
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if takes_values && !defaults.is_empty() {
        let joined = defaults.join(&arg.get_value_delimiter().unwrap_or(',').to_string());
        text.push(format!("Default: `{joined}`."));
    }
    let values: Vec<_> = arg
        .get_possible_values()
        .into_iter()
        .filter(|v| takes_values && !v.is_hide_set())
        .collect();
    let described = values.iter().any(|v| v.get_help().is_some());
    if described {
        text.push("One of:".to_owned());
    } else if !values.is_empty() {
        let names: Vec<String> = values
            .iter()
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        text.push(format!("One of {}.", names.join(", ")));
    }
    let _ = writeln!(page, "- `{}`: {}", spelling(arg), indent(&text.join(" ")));
    if described {
        for value in &values {
            let help = value.get_help().map(|h| h.to_string()).unwrap_or_default();
            let _ = writeln!(
                page,
                "  - `{}`: {}",
                value.get_name(),
                indent(&sentence(help.trim()))
            );
        }
    }
}

/// Help text as a sentence: clap drops the full stop of a one-line help; it is put back.
fn sentence(text: &str) -> String {
    match text.chars().last() {
        None => String::new(),
        Some('.' | ':' | '!' | '?') => text.to_owned(),
        Some(_) => format!("{text}."),
    }
}

/// How an argument is written: `<SCENE>`, `-o, --output <FILE.png|.exr|.pfm>`, `--quiet`.
fn spelling(arg: &Arg) -> String {
    let value = if arg.get_action().takes_values() {
        let names: Vec<String> = match arg.get_value_names() {
            Some(names) => names.iter().map(|n| format!("<{n}>")).collect(),
            None => vec![format!("<{}>", arg.get_id().as_str().to_uppercase())],
        };
        let many = arg.get_num_args().is_some_and(|n| n.max_values() > 1)
            || (arg.is_positional() && matches!(arg.get_action(), ArgAction::Append));
        let mut value = names.join(" ");
        if many {
            value.push_str("...");
        }
        value
    } else {
        String::new()
    };
    if arg.is_positional() {
        return value;
    }
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    let mut spelled = names.join(", ");
    if !value.is_empty() {
        spelled.push(' ');
        spelled.push_str(&value);
    }
    spelled
}

/// Help text continued under a list item: its later lines indented to the item's text.
fn indent(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!("  {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim_start()
        .to_owned()
}

/// A paragraph of help text on one line, for a list of subcommands.
fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lines without the indentation they share.
fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(common..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_checked_in_reference_is_what_the_command_line_generates() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(PAGE);
    let generated = markdown();
    if std::env::var_os("RAYLB_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        eprintln!("wrote {}", path.display());
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; write it with `{REGENERATE}`",
            path.display()
        )
    });
    if checked_in != generated {
        let line = checked_in
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| checked_in.lines().count().min(generated.lines().count()));
        panic!(
            "{PAGE} is not what the command line's definitions generate (first difference at \
             line {}: {:?} checked in, {:?} generated); write it again with `{REGENERATE}`",
            line + 1,
            checked_in.lines().nth(line).unwrap_or("(end of file)"),
            generated.lines().nth(line).unwrap_or("(end of file)"),
        );
    }
}

#[test]
fn the_reference_names_every_subcommand_and_option() {
    let page = markdown();
    for part in [
        "## `raylb render`",
        "## `raylb bench sweep`",
        "## `raylb completions`",
        "## `raylb man`",
        "- `--balancer <BALANCER>`",
        "- `-o, --output <FILE.png|.exr|.pfm>`",
        "  - `cuda-managed`: GPU only",
        "Default: `8,64,512`.",
        "(#raylb-bench-sim-sweep)",
    ] {
        assert!(page.contains(part), "`{part}` missing from the reference");
    }
    assert!(!page.contains("## `raylb help`"));
}
