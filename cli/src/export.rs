//! `raylb export`: a scene's triangles in world space as a mesh file.

use std::process::ExitCode;

use anyhow::{Result, anyhow};
use experiments::outputs::Outputs;
use renderer::file_errors::io_reason;
use renderer::mesh_export::{MeshFormat, write_mesh};
use renderer::output::StagedFiles;
use renderer::stats::counted;

use crate::cli::{ExportArgs, SceneArgs, SceneSource};

pub(crate) fn run(args: &ExportArgs) -> Result<ExitCode> {
    let path = &args.output;
    let format = MeshFormat::of(path).map_err(|e| anyhow!("-o {e}"))?;
    let mut outputs = Outputs::new();
    outputs
        .add("-o", Some(path))
        .writes_to_stdout("the summary (leave it out with -q)", !args.quiet);
    outputs.check_writable()?;
    let source = SceneSource::unframed(args.input.clone());
    outputs.check_inputs(&source.paths())?;
    let settings = SceneArgs {
        max_memory: args.max_memory,
        ..SceneArgs::default()
    };
    // The triangles alone: a structure over them would cost the memory and the time of a
    // render's load for nothing.
    let scene = settings.load_triangles(&source, args.quiet)?;
    outputs.check_inputs(&scene.inputs)?;
    let triangles = &scene.triangles;
    let cannot = |e: std::io::Error| anyhow!("cannot write {}: {}", path.display(), io_reason(&e));
    let mut staged = StagedFiles::new();
    staged
        .write(path, |out| write_mesh(triangles, format, out))
        .map_err(cannot)?;
    staged.commit()?;
    if !args.quiet {
        outln!(
            "wrote   {} of {} to {}",
            counted(triangles.len() as u64, "triangle"),
            scene.name,
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
