//! Where the shipped scenes are, for the tests of the library and of the command line.

use std::path::PathBuf;

/// The path of shipped scene `name` (`scenes/NAME.toml`): from the folder of the crate under
/// test that `cargo test` names at run time, or else the one it was built in (a test binary
/// carried to another machine, as `scripts/gpu-check.sh` runs it, is given the folder there).
pub(crate) fn scene_path(name: &str) -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../scenes")
        .join(format!("{name}.toml"))
}
