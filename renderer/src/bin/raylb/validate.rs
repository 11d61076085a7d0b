//! `raylb validate`: the byte-compare matrix of the determinism contract, at full size.

use std::process::ExitCode;

use anyhow::{Result, anyhow};
use balancers::{Balancer, BalancerKind};
use clap::ValueEnum;
use renderer::output::{check_writable, io_reason, write_png};
use renderer::render::{RenderOptions, render};

use crate::cli::{ValidateArgs, threads};

pub(crate) fn run(args: &ValidateArgs) -> Result<ExitCode> {
    if let Some(path) = &args.output {
        check_writable(path).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    }
    let scene = args.scene.load(&args.source)?;
    let wanted: Vec<String> = args
        .balancers
        .iter()
        .map(|b| {
            b.to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        })
        .collect();
    let variants: Vec<BalancerKind> = BalancerKind::every_variant()
        .into_iter()
        .filter(|b| wanted.iter().any(|w| w == b.family()))
        .collect();
    println!(
        "{}: {}×{}, {} triangles",
        scene.name, scene.width, scene.height, scene.stats.triangles
    );
    let mut reference: Option<(String, Vec<u8>)> = None;
    let (mut runs, mut differing) = (0, 0);
    for b in &variants {
        for &t in &args.threads {
            for &tile in &args.tiles {
                let options = RenderOptions {
                    balancer: *b,
                    threads: threads(Some(t)),
                    tile,
                    work_map: false,
                };
                let frame = render(&scene, &options)?;
                let image = frame.film.resolve();
                let label = format!("{} threads={t} tile={tile}", b.name());
                runs += 1;
                let verdict = match &reference {
                    None => {
                        if let Some(path) = &args.output {
                            write_png(path, scene.width, scene.height, &image).map_err(|e| {
                                anyhow!("cannot write {}: {}", path.display(), io_reason(&e))
                            })?;
                        }
                        reference = Some((label.clone(), image));
                        "reference".to_string()
                    }
                    Some((_, want)) if *want == image => "identical".to_string(),
                    Some((first, want)) => {
                        differing += 1;
                        let pixels = want
                            .chunks(3)
                            .zip(image.chunks(3))
                            .filter(|(a, b)| a != b)
                            .count();
                        format!("DIFFERS from {first} in {pixels} pixels")
                    }
                };
                println!(
                    "{label:<40} {:>8.3} s  {verdict}",
                    frame.wall().as_secs_f64()
                );
            }
        }
    }
    if differing == 0 {
        println!("all {runs} renders identical");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{differing} of {runs} renders differ");
        Ok(ExitCode::from(1))
    }
}
