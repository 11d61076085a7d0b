//! The files a command will write, checked before any work ([`Outputs`], `experiments`', which
//! its benchmarks share), and the image formats the flags that name images ask for.

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use renderer::output::ImageFormat;

pub(crate) use experiments::outputs::Outputs;

/// The image format `path` (named by `flag`) asks for by its extension.
pub(crate) fn image_format(flag: &str, path: &Path) -> Result<ImageFormat> {
    ImageFormat::of(path).map_err(|e| anyhow!("{flag} {}: {e}", path.display()))
}

/// Refuses `path` (named by `flag`) unless it names a PNG: the images only PNG can hold
/// (work maps, window screenshots).
pub(crate) fn png_only(flag: &str, path: Option<&Path>) -> Result<()> {
    match path.map(|p| (p, image_format(flag, p))) {
        None | Some((_, Ok(ImageFormat::Png))) => Ok(()),
        Some((p, Ok(other))) => bail!(
            "{flag} {}: this image is 8-bit colour, written as PNG, not {}; name it .png",
            p.display(),
            other.name()
        ),
        // Not an image name at all: the one format this image takes, rather than the three
        // of the general message.
        Some((p, Err(_))) => bail!(
            "{flag} {}: this image is 8-bit colour, written as PNG; name it .png",
            p.display()
        ),
    }
}

/// Refuses `path` (named by `flag`) unless its extension is `extension`: a file of raylb's
/// own format (a task file, a ray file), whose name would otherwise pass for another format's.
pub(crate) fn named_with(
    flag: &str,
    path: Option<&Path>,
    extension: &str,
    what: &str,
) -> Result<()> {
    match path {
        Some(p)
            if !p
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case(extension)) =>
        {
            bail!("{flag} {}: {what} is named .{extension}", p.display())
        }
        _ => Ok(()),
    }
}
