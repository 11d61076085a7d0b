//! The `raylb …` command lines of the guide (README.md and docs/*.md): every line of a fenced
//! code block that runs raylb — `raylb …`, `target/release/raylb …`, `cargo run --release --
//! …`, or raylb under `mpirun` — split into its arguments as a shell splits them (quotes,
//! backslash-continued lines, `#` comments; the arguments end at a pipe, a redirection or
//! `&&`). The generated reference, docs/cli.md, is left out: it is checked against the
//! definitions themselves, and its examples are the help's.
//!
//! Included by the parse check (cli/src/docs_parse.rs, which needs the private `Cli` type)
//! and by the run check (cli/tests/docs.rs, which needs the built binary).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The guide's page generated from the command line's definitions.
pub(crate) const GENERATED: &str = "docs/cli.md";

/// How a command line starts raylb.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Launcher {
    /// `raylb …` or a path to the binary.
    Direct,
    /// `cargo run … -- …`.
    CargoRun,
    /// `mpirun … raylb …`: one process per MPI rank.
    Mpi,
}

/// One command line of the guide.
#[derive(Clone, Debug)]
pub(crate) struct DocCommand {
    /// The Markdown file, from the repository's root.
    pub(crate) file: String,
    /// The line it starts on, from 1.
    pub(crate) line: usize,
    /// The line as written (continuations joined).
    pub(crate) text: String,
    pub(crate) launcher: Launcher,
    /// raylb's arguments, without the program's name.
    pub(crate) args: Vec<String>,
}

impl DocCommand {
    /// `docs/viewer.md:12`, for messages.
    pub(crate) fn place(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// The repository's root.
pub(crate) fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the cli crate sits in the repository")
        .to_path_buf()
}

/// README.md and every docs/*.md but the generated reference, from the repository's root.
pub(crate) fn guide_files() -> Vec<String> {
    let root = repository();
    let mut files: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is there")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.ends_with(".md").then(|| format!("docs/{name}"))
        })
        .filter(|file| file != GENERATED)
        .collect();
    files.sort();
    files.insert(0, "README.md".to_owned());
    files
}

/// Every command line of the guide, file by file, in order.
pub(crate) fn commands() -> Vec<DocCommand> {
    let root = repository();
    guide_files()
        .into_iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(root.join(&file))
                .unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
            in_markdown(&file, &text)
        })
        .collect()
}

/// The command lines in the fenced code blocks of one Markdown text.
pub(crate) fn in_markdown(file: &str, text: &str) -> Vec<DocCommand> {
    let mut found = Vec::new();
    // The fence that opened the block we are in (three or more ` or ~).
    let mut fence: Option<String> = None;
    // Whether that block is source code (```rust, ```toml), whose lines are not commands.
    let mut source = false;
    // A line ending in `\`, waiting for the rest: where it started and what it says so far.
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        match &fence {
            None => {
                let marker: String = trimmed
                    .chars()
                    .take_while(|&c| c == '`' || c == '~')
                    .collect();
                if marker.len() >= 3 {
                    let language = trimmed[marker.len()..].trim();
                    source = matches!(language, "rust" | "toml" | "c" | "cuda" | "python");
                    fence = Some(marker);
                }
            }
            Some(marker)
                if trimmed.starts_with(marker.as_str()) && trimmed.len() == marker.len() =>
            {
                fence = None;
                pending = None;
            }
            Some(_) if source => {}
            Some(_) => {
                let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
                match line.trim_end().strip_suffix('\\') {
                    Some(part) => {
                        joined.push_str(part);
                        pending = Some((start, joined));
                    }
                    None => {
                        joined.push_str(line);
                        found.extend(in_line(file, start, &joined));
                    }
                }
            }
        }
    }
    found
}

/// A word of a shell line: text, or an operator that ends a command's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Word {
    Text(String),
    /// `|`, `||`, `&&`, `;`, `&`: the next command starts after it.
    Separator,
    /// `>`, `>>`, `<`, `2>`: the arguments have ended.
    Redirect,
}

/// The commands that run raylb in one shell line.
fn in_line(file: &str, line: usize, text: &str) -> Vec<DocCommand> {
    let words = split(text);
    words
        .split(|w| *w == Word::Separator)
        .filter_map(|command| {
            let texts: Vec<String> = command
                .iter()
                .take_while(|w| **w != Word::Redirect)
                .map(|w| match w {
                    Word::Text(t) => t.clone(),
                    _ => unreachable!("separators split, redirections end the arguments"),
                })
                .collect();
            let (launcher, args) = raylb_arguments(&texts)?;
            Some(DocCommand {
                file: file.to_owned(),
                line,
                text: text.trim().to_owned(),
                launcher,
                args: args.to_vec(),
            })
        })
        .collect()
}

/// Whether a program's name is raylb's: `raylb`, `target/release/raylb`.
fn is_raylb(word: &str) -> bool {
    word == "raylb" || word.ends_with("/raylb")
}

/// `NAME=value`, a variable set for the command that follows.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// How a command's words start raylb, and raylb's arguments; `None` for any other program.
fn raylb_arguments(words: &[String]) -> Option<(Launcher, &[String])> {
    let start = words.iter().position(|w| w != "$" && !is_assignment(w))?;
    let words = &words[start..];
    match words[0].as_str() {
        program if is_raylb(program) => Some((Launcher::Direct, &words[1..])),
        "cargo" if words.get(1).is_some_and(|w| w == "run") => {
            let end = words.iter().position(|w| w == "--");
            let cargo_args = &words[..end.unwrap_or(words.len())];
            // Another package's or binary's command line (`-p guided --bin raylb-guided`) is
            // that program's: its own tests run it.
            let names_another = cargo_args.windows(2).any(|pair| {
                matches!(pair[0].as_str(), "-p" | "--package" | "--bin") && pair[1] != "raylb"
            });
            if names_another {
                return None;
            }
            let after = end.map_or(words.len(), |i| i + 1);
            Some((Launcher::CargoRun, &words[after..]))
        }
        "mpirun" | "mpiexec" => {
            let at = words.iter().position(|w| is_raylb(w))?;
            Some((Launcher::Mpi, &words[at + 1..]))
        }
        _ => None,
    }
}

/// Splits a line into words as a POSIX shell does, for the quoting the guide uses: single and
/// double quotes, backslash escapes, `#` comments, and the operators that end a command.
fn split(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut word = String::new();
    // Whether a word has started (a quoted empty string is a word).
    let mut started = false;
    let mut chars = text.chars().peekable();
    let finish = |words: &mut Vec<Word>, word: &mut String, started: &mut bool| {
        if *started {
            words.push(Word::Text(std::mem::take(word)));
            *started = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                started = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                started = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.push(chars.next().expect("peeked"));
                        }
                        _ => word.push(c),
                    }
                }
            }
            '\\' => {
                started = true;
                if let Some(c) = chars.next() {
                    word.push(c);
                }
            }
            '#' if !started => break,
            c if c.is_whitespace() => finish(&mut words, &mut word, &mut started),
            '|' | '&' | ';' => {
                finish(&mut words, &mut word, &mut started);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                words.push(Word::Separator);
            }
            '<' | '>' => {
                // `2>`: the descriptor is part of the redirection.
                if started && word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    started = false;
                }
                finish(&mut words, &mut word, &mut started);
                words.push(Word::Redirect);
            }
            c => {
                started = true;
                word.push(c);
            }
        }
    }
    finish(&mut words, &mut word, &mut started);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(found: &DocCommand) -> Vec<&str> {
        found.args.iter().map(String::as_str).collect()
    }

    #[test]
    fn finds_what_a_shell_would_run_in_code_blocks_only() {
        let text = "\
Prose naming `raylb render SCENE` is not a command.

```sh
cargo run --release -- render scenes/cornell.toml -o cornell.png   # render a scene
cargo test                                                         # run the tests
raylb view scenes/treasure.toml --width 512 \\
    --layer work-map --frames 1
mpirun -np 4 --host a,b target/release/raylb render q.toml --cluster stealing
RUSTFLAGS=\"--cfg loom\" raylb sim t.tasks --unit-cost \"box tests=2.5\" > out.txt
raylb render q.toml --stats /dev/stdout | jq .render && raylb scenes
```

```text
raylb: error: scenes/x.toml:13:13: `max_depth`: must be between 0 and 64, got 65
render  static/interleaved, 2 threads
```
";
        let found = in_markdown("x.md", text);
        let lines: Vec<(usize, Launcher, Vec<&str>)> = found
            .iter()
            .map(|c| (c.line, c.launcher, args(c)))
            .collect();
        assert_eq!(
            lines,
            [
                (
                    4,
                    Launcher::CargoRun,
                    vec!["render", "scenes/cornell.toml", "-o", "cornell.png"]
                ),
                (
                    6,
                    Launcher::Direct,
                    vec![
                        "view",
                        "scenes/treasure.toml",
                        "--width",
                        "512",
                        "--layer",
                        "work-map",
                        "--frames",
                        "1"
                    ]
                ),
                (
                    8,
                    Launcher::Mpi,
                    vec!["render", "q.toml", "--cluster", "stealing"]
                ),
                (
                    9,
                    Launcher::Direct,
                    vec!["sim", "t.tasks", "--unit-cost", "box tests=2.5"]
                ),
                (
                    10,
                    Launcher::Direct,
                    vec!["render", "q.toml", "--stats", "/dev/stdout"]
                ),
                (10, Launcher::Direct, vec!["scenes"]),
            ]
        );
    }
}
