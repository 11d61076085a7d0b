//! `raylb compare`.

use std::process::ExitCode;

use anyhow::{Result, bail};
use renderer::compare::difference;
use renderer::output::read_image;

use crate::cli::CompareArgs;

pub(crate) fn run(args: &CompareArgs) -> Result<ExitCode> {
    let read = |path: &std::path::Path| {
        read_image(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    };
    let (a, b) = (read(&args.a)?, read(&args.b)?);
    if (a.width, a.height) != (b.width, b.height) {
        bail!(
            "{} is {}×{} but {} is {}×{}: images of different sizes cannot be compared",
            args.a.display(),
            a.width,
            a.height,
            args.b.display(),
            b.width,
            b.height
        );
    }
    match difference(&a, &b) {
        None => {
            println!("identical: {}×{}", a.width, a.height);
            Ok(ExitCode::SUCCESS)
        }
        Some(d) => {
            let (x, y, pa, pb) = d.first;
            println!(
                "differ: {} of {} pixels, largest channel difference {}, first at ({x}, {y}): {:?} vs {:?}",
                d.pixels,
                u64::from(a.width) * u64::from(a.height),
                d.largest,
                pa,
                pb
            );
            Ok(ExitCode::from(1))
        }
    }
}
