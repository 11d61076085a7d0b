//! The checked-in CUDA header of the shared layout (`cuda/raylb_layout.cuh`) is exactly what
//! the `layout` crate's definitions generate, so the kernels declare every shared struct,
//! code and constant as the host does. After changing a definition, write the header again
//! with `RAYLB_UPDATE_LAYOUT=1 cargo test -p raylb-kernels --test layout_header`.

use std::path::PathBuf;

#[test]
fn the_checked_in_layout_header_is_what_the_definitions_generate() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cuda/raylb_layout.cuh");
    let generated = layout::header::generate();
    if std::env::var_os("RAYLB_UPDATE_LAYOUT").is_some() {
        std::fs::write(&path, &generated)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        eprintln!("wrote {}", path.display());
        return;
    }
    let checked_in = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    if checked_in != generated {
        let line = checked_in
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| checked_in.lines().count().min(generated.lines().count()));
        panic!(
            "{} is not what the layout crate's definitions generate (first difference at line \
             {}: {:?} checked in, {:?} generated); write it again with `{}`",
            path.display(),
            line + 1,
            checked_in.lines().nth(line).unwrap_or("(end of file)"),
            generated.lines().nth(line).unwrap_or("(end of file)"),
            layout::header::REGENERATE,
        );
    }
    // The kernels compile what they were built with: the same text.
    assert_eq!(kernels::source::LAYOUT_HEADER, generated);
}
