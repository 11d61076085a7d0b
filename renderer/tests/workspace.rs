//! The workspace's promise to a newcomer: `cargo run` and `cargo build` need nothing but a
//! Rust toolchain. The one crate that compiles C++ (the host build of the CUDA math, a test
//! dependency) must stay out of what a plain build compiles.

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
    let builds_c = table
        .get("build-dependencies")
        .and_then(|d| d.as_table())
        .is_some_and(|d| d.contains_key("cc"));
    builds_c
        || build_path_deps(&dir, &table)
            .iter()
            .any(|d| needs_a_c_compiler(d, seen))
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
