//! `raylb scenes`: the shipped scene files, one line each.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use renderer::file_errors::io_reason;
use renderer::input::{MAX_SCENE_BYTES, read_regular_file};
use renderer::scene::{Position, check_scene_text};

use crate::cli::ScenesArgs;

pub(crate) fn run(args: &ScenesArgs) -> Result<ExitCode> {
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => default_dir()?,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| anyhow!("cannot list {}: {}", dir.display(), io_reason(&e)))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    if files.is_empty() {
        bail!("{} holds no scene files (*.toml)", dir.display());
    }
    files.sort();
    // A file that cannot be read gets a row saying why, and the rest are still listed.
    let rows: Vec<(String, Result<Described, String>)> = files
        .iter()
        .map(|path| (path.display().to_string(), describe(path)))
        .collect();
    let width = rows.iter().map(|(path, _)| path.chars().count()).max();
    let width = width.unwrap_or(0);
    let mut unread = 0;
    for (path, row) in &rows {
        match row {
            Ok(Described { size, summary }) => outln!("{path:<width$} {size:>9}  {summary}"),
            Err(reason) => {
                unread += 1;
                outln!("{path:<width$} {:>9}  {reason}", "?");
            }
        }
    }
    if unread > 0 {
        bail!(
            "{unread} of {} scene files in {} cannot be read or are malformed; each one's row says why",
            files.len(),
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `./scenes` when there is one, else the folder the binary was built with.
fn default_dir() -> Result<PathBuf> {
    let here = PathBuf::from("scenes");
    if here.is_dir() {
        return Ok(here);
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
    if built.is_dir() {
        // Shown as the folder it is, not as the crate's folder and a step up.
        return Ok(built.canonicalize().unwrap_or(built));
    }
    bail!("no scenes folder here or where raylb was built; name one: raylb scenes DIR")
}

/// A scene file's row, but for its path.
struct Described {
    /// `WIDTH×HEIGHT`.
    size: String,
    /// The first sentence of the file's opening comment.
    summary: String,
}

/// The scene's `WIDTH×HEIGHT` and what the file's opening comment says of it, read without
/// building the scene; or why the file cannot be read, or its first fault (and where) as
/// [`check_scene_text`] finds it: its tables, keys and values, not its meshes and objects. It
/// is read as [`Scene::load`] reads it: only a regular file, and only up to
/// [`MAX_SCENE_BYTES`] (a FIFO would block the listing, and `/dev/zero` fill memory).
///
/// [`Scene::load`]: renderer::scene::Scene::load
fn describe(path: &Path) -> Result<Described, String> {
    let bytes = read_regular_file(path, MAX_SCENE_BYTES)?;
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
    check_scene_text(path, &text).map_err(|e| match e.position {
        Some(Position::Text { line, .. }) => format!("line {line}: {}", e.message),
        _ => e.message,
    })?;
    let table = toml::from_str::<toml::Table>(&text).map_err(|e| e.message().to_string())?;
    let side = |key: &str| {
        table
            .get("image")
            .and_then(|image| image.get(key))
            .and_then(toml::Value::as_integer)
            .ok_or_else(|| format!("[image] {key}: a whole number of pixels is needed"))
    };
    let size = format!("{}×{}", side("width")?, side("height")?);
    Ok(Described {
        size,
        summary: summary(&text, &stem(path)),
    })
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The first sentence of the file's opening comment, without a leading `NAME:`.
fn summary(text: &str, name: &str) -> String {
    let comment: Vec<&str> = text
        .lines()
        .map_while(|l| l.trim_start().strip_prefix('#'))
        .map(str::trim)
        .collect();
    let joined = comment.join(" ");
    let joined = joined
        .strip_prefix(&format!("{name}:"))
        .unwrap_or(&joined)
        .trim();
    match joined.find(". ") {
        Some(end) => joined[..=end].to_string(),
        None => joined.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn the_summary_is_the_first_sentence_of_the_opening_comment() {
        let text = "# quick: a tiny scene. More\n# words.\n[image]\n# not this\n";
        assert_eq!(summary(text, "quick"), "a tiny scene.");
        assert_eq!(summary("# one line only\n", "x"), "one line only");
        assert_eq!(summary("[image]\n", "x"), "");
    }
}
