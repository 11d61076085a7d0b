//! `raylb render`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use renderer::output::{write_png, write_text};
use renderer::render::{RenderOptions, render};
use renderer::stats::{RenderReport, WorkMapReport};
use renderer::workmap::work_map;

use crate::cli::RenderArgs;

pub(crate) fn run(args: &RenderArgs) -> Result<ExitCode> {
    let scene = args.scene.load(&args.source)?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.png", scene.name)));
    let options = RenderOptions {
        balancer: args.run.balancer(),
        threads: args.run.threads(),
        tile: args.run.tile,
        work_map: args.workmap.is_some(),
    };
    let frame = render(&scene, &options)?;
    let mut report = RenderReport::new(&scene, &options, &frame);

    write_png(&output, scene.width, scene.height, &frame.film.resolve())
        .with_context(|| format!("cannot write {}", output.display()))?;
    if let (Some(path), Some(counts)) = (&args.workmap, frame.film.ray_counts()) {
        let map = work_map(&counts, scene.width, scene.height);
        write_png(path, map.width, map.height, &map.rgb)
            .with_context(|| format!("cannot write {}", path.display()))?;
        report.work_map = Some(WorkMapReport {
            min_rays_per_pixel: map.min,
            max_rays_per_pixel: map.max,
        });
    }
    if let Some(path) = &args.stats {
        write_text(path, &report.to_json())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !args.quiet {
        print!("{report}");
        println!("wrote   {}", output.display());
    }
    Ok(ExitCode::SUCCESS)
}
