//! Every `raylb …` command line of the guide (README.md and docs/*.md, in code blocks) parses
//! with the command line's own definitions, so that a flag renamed, removed or given new
//! values fails here, naming the file and line of each command that no longer parses. The
//! commands that need only a CPU also run (cli/tests/docs.rs).

use clap::error::ErrorKind;

use crate::cli::Cli;

#[path = "../tests/common/doc_commands.rs"]
mod doc_commands;

#[test]
fn every_command_line_in_the_guide_parses() {
    let commands = doc_commands::commands();
    // README's first command, so that a guide whose commands went unseen cannot pass.
    assert!(
        commands
            .iter()
            .any(|c| c.file == "README.md" && c.args.first().is_some_and(|a| a == "render")),
        "no `raylb render` command found in README.md's code blocks"
    );
    let failures: Vec<String> = commands
        .iter()
        .filter_map(|command| {
            let argv = std::iter::once("raylb").chain(command.args.iter().map(String::as_str));
            match Cli::parse_args_from(argv) {
                Ok(_) => None,
                Err(e)
                    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) =>
                {
                    None
                }
                Err(e) => {
                    let message = e.render().to_string();
                    let reason = message.lines().next().unwrap_or("").trim();
                    Some(format!("{}: `{}`: {reason}", command.place(), command.text))
                }
            }
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of the guide's {} command lines do not parse:\n{}",
        failures.len(),
        commands.len(),
        failures.join("\n")
    );
}
