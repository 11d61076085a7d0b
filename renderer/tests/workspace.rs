//! The workspace's promise to a newcomer: `cargo run` and `cargo build` need nothing but a
//! Rust toolchain. What compiles C++ (the host build of the CUDA math, a test dependency; the
//! kernels' warp emulator, a feature off by default) must stay out of what a plain build
//! compiles.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn manifest(dir: &Path) -> toml::Table {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).expect("read Cargo.toml");
    toml::from_str(&text).expect("Cargo.toml parses")
}

/// The workspace path dependencies a crate needs to build (not its dev-dependencies).
fn build_path_deps(dir: &Path, table: &toml::Table) -> Vec<PathBuf> {
    let workspace = manifest(&root());
    let shared = workspace["workspace"]["dependencies"]
        .as_table()
        .unwrap()
        .clone();
    let mut out = Vec::new();
    for section in ["dependencies", "build-dependencies"] {
        let Some(deps) = table.get(section).and_then(|d| d.as_table()) else {
            continue;
        };
        for (name, dep) in deps {
            let path = if dep.get("workspace").and_then(|w| w.as_bool()) == Some(true) {
                shared
                    .get(name)
                    .and_then(|d| d.get("path"))
                    .map(|p| root().join(p.as_str().unwrap()))
            } else {
                dep.get("path").map(|p| dir.join(p.as_str().unwrap()))
            };
            out.extend(path);
        }
    }
    out
}

fn needs_a_c_compiler(dir: &Path, seen: &mut Vec<PathBuf>) -> bool {
    let dir = dir.canonicalize().expect("member exists");
    if seen.contains(&dir) {
        return false;
    }
    seen.push(dir.clone());
    let table = manifest(&dir);
    // A C compiler is needed for a `cc` build dependency, unless it is optional and no default
    // feature turns it on (the kernels' warp emulator is such a feature).
    let builds_c = table
        .get("build-dependencies")
        .and_then(|d| d.as_table())
        .and_then(|d| d.get("cc"))
        .is_some_and(|cc| {
            cc.get("optional").and_then(|o| o.as_bool()) != Some(true)
                || default_features_enable(&table, "cc")
        });
    builds_c
        || build_path_deps(&dir, &table)
            .iter()
            .any(|d| needs_a_c_compiler(d, seen))
}

/// Whether the crate's default features, followed through the features they turn on, turn on
/// its optional dependency `dep`.
fn default_features_enable(table: &toml::Table, dep: &str) -> bool {
    let Some(features) = table.get("features").and_then(|f| f.as_table()) else {
        return false;
    };
    let mut pending = vec!["default".to_string()];
    let mut seen = Vec::new();
    while let Some(feature) = pending.pop() {
        if seen.contains(&feature) {
            continue;
        }
        seen.push(feature.clone());
        if feature == dep || feature == format!("dep:{dep}") {
            return true;
        }
        if let Some(list) = features.get(&feature).and_then(|l| l.as_array()) {
            pending.extend(list.iter().filter_map(|v| v.as_str()).map(str::to_string));
        }
    }
    false
}

#[test]
fn an_optional_c_compiler_counts_only_when_a_default_feature_wants_it() {
    let table: toml::Table = toml::from_str(
        r#"
        [features]
        default = ["fast"]
        fast = ["dep:cc"]
        "#,
    )
    .unwrap();
    assert!(default_features_enable(&table, "cc"));
    let off: toml::Table = toml::from_str(
        r#"
        [features]
        emulator = ["dep:cc"]
        "#,
    )
    .unwrap();
    assert!(!default_features_enable(&off, "cc"));
}

#[test]
fn a_plain_build_needs_only_rust() {
    let workspace = manifest(&root());
    let defaults = workspace["workspace"]
        .get("default-members")
        .and_then(|d| d.as_array())
        .expect(
            "the workspace names its default members: without them `cargo run` builds every member",
        );
    assert!(!defaults.is_empty());
    for member in defaults {
        let dir = root().join(member.as_str().unwrap());
        assert!(
            !needs_a_c_compiler(&dir, &mut Vec::new()),
            "default member {} needs a C compiler to build",
            dir.display()
        );
    }
}

/// The external crates a crate needs to build, with those of the workspace crates it needs.
fn build_deps_through_path_deps(dir: &Path, seen: &mut Vec<PathBuf>) -> Vec<String> {
    let dir = dir.canonicalize().expect("member exists");
    if seen.contains(&dir) {
        return Vec::new();
    }
    seen.push(dir.clone());
    let table = manifest(&dir);
    let mut names: Vec<String> = ["dependencies", "build-dependencies"]
        .iter()
        .filter_map(|section| table.get(*section).and_then(|d| d.as_table()))
        .flat_map(|deps| deps.keys().cloned())
        .collect();
    for path in build_path_deps(&dir, &table) {
        names.extend(build_deps_through_path_deps(&path, seen));
    }
    names
}

#[test]
fn the_library_builds_without_what_only_the_command_line_needs() {
    // The tracer and the crates under it: what the fuzz targets and a user's own program link.
    let deps = build_deps_through_path_deps(&root().join("renderer"), &mut Vec::new());
    assert!(deps.iter().any(|d| d == "balancers"), "{deps:?}");
    for command_line_only in ["clap", "csv", "indicatif", "minifb", "plotters", "x11-dl"] {
        assert!(
            !deps.iter().any(|d| d == command_line_only),
            "the tracer's build needs {command_line_only}: it belongs to the `raylb` binary's crate (cli/), the viewer's (viewer/) or the experiments' (experiments/)"
        );
    }
}

#[test]
fn the_viewer_builds_without_the_command_line() {
    // The window and what it shows, under the command line: it never sees the flags, the
    // plots, the CSV or the progress bars.
    let deps = build_deps_through_path_deps(&root().join("viewer"), &mut Vec::new());
    assert!(deps.iter().any(|d| d == "minifb"), "{deps:?}");
    for command_line_only in ["clap", "csv", "indicatif", "plotters"] {
        assert!(
            !deps.iter().any(|d| d == command_line_only),
            "the viewer's build needs {command_line_only}: it belongs to the `raylb` binary's crate (cli/)"
        );
    }
}

#[test]
fn the_experiments_build_without_the_command_line_or_the_window() {
    // The benchmark and simulator drivers: tables, CSV and plots, but no parser and no window.
    let deps = build_deps_through_path_deps(&root().join("experiments"), &mut Vec::new());
    assert!(deps.iter().any(|d| d == "renderer"), "{deps:?}");
    for command_line_only in ["clap", "minifb", "x11-dl"] {
        assert!(
            !deps.iter().any(|d| d == command_line_only),
            "the experiments' build needs {command_line_only}: it belongs to the `raylb` binary's crate (cli/)"
        );
    }
}
