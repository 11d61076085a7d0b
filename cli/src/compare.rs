//! `raylb compare`.
//!
//! Everything that can be refused is refused before any pixel is decoded: the difference
//! image's path, the inputs' kinds and headers, and the memory the two images and the
//! difference image would take together.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use renderer::compare::{Comparison, compare, difference_image};
use renderer::file_errors::io_reason;
use renderer::image_io::{Depth, ImageInfo, read_image, read_info};
use renderer::memory::{self, format_bytes};
use renderer::output::StagedFiles;

use crate::cli::CompareArgs;
use crate::outputs::{Outputs, png_only};

pub(crate) fn run(args: &CompareArgs) -> Result<ExitCode> {
    if let Some(diff) = &args.diff {
        check_diff_path(diff, &args.a, &args.b)?;
    }
    let limit = args
        .max_memory
        .or_else(|| memory::available().map(|a| a.bytes))
        .unwrap_or(u64::MAX);
    // Headers only: images of different sizes differ, however large, and nothing of theirs
    // is decoded. A header that cannot be true (a file too short for the pixels it declares,
    // an inverted OpenEXR data window) is an error here, not a difference.
    let info_a = read_info(&args.a, u64::MAX).map_err(|e| at(&args.a, e))?;
    let info_b = read_info(&args.b, u64::MAX).map_err(|e| at(&args.b, e))?;
    if (info_a.width, info_a.height) != (info_b.width, info_b.height) {
        let sizes = Comparison::Sizes {
            a: (info_a.width, info_a.height),
            b: (info_b.width, info_b.height),
        };
        outln!("{sizes}");
        if let Some(diff) = &args.diff {
            errln!(
                "raylb: no difference image written to {}: the images have different sizes",
                diff.display()
            );
        }
        return Ok(ExitCode::from(1));
    }
    check_budget(args, &info_a, &info_b, limit)?;

    let a = read_image(&args.a, limit).map_err(|e| at(&args.a, e))?;
    let b = read_image(&args.b, limit.saturating_sub(a.bytes())).map_err(|e| at(&args.b, e))?;
    let comparison = compare(&a, &b);
    if let Some(diff) = &args.diff {
        let rgb = difference_image(&a, &b)
            .map_err(|e| anyhow::anyhow!("--diff {}: {e}", diff.display()))?
            .context("the sizes were checked")?;
        let mut staged = StagedFiles::new();
        staged.png(diff, a.width(), a.height(), &rgb).map_err(|e| {
            anyhow::anyhow!("--diff {}: cannot write: {}", diff.display(), io_reason(&e))
        })?;
        staged
            .commit()
            .map_err(|e| anyhow::anyhow!("--diff: {e}"))?;
    }
    outln!("{comparison}");
    if let Comparison::Pixels(report) = &comparison
        && !report.is_identical()
        && (info_a.depth == Depth::F32) != (info_b.depth == Depth::F32)
    {
        let (codes, values) = if info_a.depth == Depth::F32 {
            (&args.b, &args.a)
        } else {
            (&args.a, &args.b)
        };
        errln!(
            "raylb: warning: {} holds integer codes and {} float values, compared as code over full scale against value; raylb writes sRGB-encoded codes to a PNG and linear values to OpenEXR and PFM, so one render in both differs: compare files of one kind",
            codes.display(),
            values.display()
        );
    }
    Ok(match comparison {
        Comparison::Pixels(report) if report.is_identical() => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// Refuses a difference image that would not be a PNG, cannot be written, or would overwrite
/// an input: the same file under another name or through a link counts (file identity, not
/// path text, decides).
fn check_diff_path(diff: &Path, a: &Path, b: &Path) -> Result<()> {
    png_only("--diff", Some(diff))?;
    let mut outputs = Outputs::new();
    outputs
        .add("--diff", Some(diff))
        .writes_to_stdout("the comparison's report", true);
    outputs.check_writable()?;
    outputs.check_inputs(&[a.to_path_buf(), b.to_path_buf()])
}

/// Refuses, before decoding, what would take more than `limit` together: the first image, the
/// second, and the difference image.
fn check_budget(args: &CompareArgs, a: &ImageInfo, b: &ImageInfo, limit: u64) -> Result<()> {
    let diff_bytes = u64::from(a.width) * u64::from(a.height) * 3;
    let mut parts = vec![
        (
            args.a.display().to_string(),
            "decoding",
            a.decoded_bytes(),
            a.to_string(),
        ),
        (
            args.b.display().to_string(),
            "decoding",
            b.decoded_bytes(),
            b.to_string(),
        ),
    ];
    if let Some(diff) = &args.diff {
        parts.push((
            format!("--diff {}", diff.display()),
            "drawing",
            diff_bytes,
            format!("{}×{}, 8-bit RGB", a.width, a.height),
        ));
    }
    let mut used = 0u64;
    let mut before: Vec<&str> = Vec::new();
    for (name, verb, bytes, what) in &parts {
        let left = limit.saturating_sub(used);
        if *bytes > left && before.is_empty() {
            bail!(
                "{name}: {verb} needs {} ({what}), more than the {} allowed",
                format_bytes(*bytes),
                format_bytes(limit)
            );
        }
        if *bytes > left {
            bail!(
                "{name}: {verb} needs {} ({what}), more than the {} left of the {} allowed once {} {} in memory",
                format_bytes(*bytes),
                format_bytes(left),
                format_bytes(limit),
                before.join(" and "),
                if before.len() == 1 { "is" } else { "are" }
            );
        }
        used += bytes;
        before.push(name);
    }
    Ok(())
}

fn at(path: &Path, error: String) -> anyhow::Error {
    anyhow::anyhow!("{}: {error}", path.display())
}
