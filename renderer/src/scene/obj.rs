//! OBJ meshes and their MTL materials, read through `tobj`.
//!
//! `tobj` reports malformed input without a line number, so each file is first checked line
//! by line here: numbers that do not parse, NaN or infinite coordinates, faces with too few
//! corners or indices out of range, and statements that are not OBJ. A file that passes is
//! then read by `tobj`.

use std::fs;
use std::io::{BufReader, Cursor};
use std::path::Path;

use crate::math::Vec3;

use super::error::SceneError;
use super::material::Material;
use super::mesh::Mesh;

/// One part of an OBJ file: its triangles and the material its MTL gives it, if any.
#[derive(Debug)]
pub(crate) struct ObjPart {
    pub(crate) mesh: Mesh,
    pub(crate) material: Option<Material>,
}

/// Statements of the OBJ format that carry no triangles and are skipped.
const OTHER_STATEMENTS: &[&str] = &[
    "vt",
    "vp",
    "l",
    "p",
    "g",
    "o",
    "s",
    "mtllib",
    "usemtl",
    "cstype",
    "deg",
    "bmat",
    "step",
    "curv",
    "curv2",
    "surf",
    "parm",
    "trim",
    "hole",
    "scrv",
    "sp",
    "end",
    "con",
    "mg",
    "bevel",
    "c_interp",
    "d_interp",
    "lod",
    "shadow_obj",
    "trace_obj",
    "ctech",
    "stech",
    "maplib",
    "usemap",
];

/// Reads `path` (an OBJ) and the MTL files it names.
pub(crate) fn load(path: &Path) -> Result<Vec<ObjPart>, SceneError> {
    let source = read_text(path)?;
    validate_obj(path, &source)?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ignore_points: true,
        ignore_lines: true,
    };
    let mtl_error = std::cell::RefCell::new(None);
    let (models, materials) =
        tobj::load_obj_buf(&mut BufReader::new(Cursor::new(&source)), &options, |mtl| {
            let mtl_path = dir.join(mtl);
            let loaded = checked_mtl(&mtl_path).and_then(|source| {
                tobj::load_mtl_buf(&mut BufReader::new(Cursor::new(&source)))
                    .map_err(|e| SceneError::file(&mtl_path, format!("not a valid MTL file: {e}")))
            });
            loaded.map_err(|e| {
                mtl_error.borrow_mut().get_or_insert(e);
                tobj::LoadError::OpenFileFailed
            })
        })
        .map_err(|e| SceneError::file(path, format!("not a valid OBJ file: {e}")))?;
    if let Some(e) = mtl_error.into_inner() {
        return Err(e);
    }
    let materials = materials.unwrap_or_default();
    Ok(models
        .into_iter()
        .map(|model| {
            let m = model.mesh;
            let v3 = |s: &[f32]| {
                s.chunks_exact(3)
                    .map(|c| Vec3::new(c[0], c[1], c[2]))
                    .collect::<Vec<_>>()
            };
            let positions = v3(&m.positions);
            let mut normals = v3(&m.normals);
            if normals.len() != positions.len() || normals.iter().any(|n| !n.is_finite()) {
                normals.clear();
            }
            normals.iter_mut().for_each(|n| *n = n.normalize_or_zero());
            let faces = m
                .indices
                .chunks_exact(3)
                .map(|f| [f[0], f[1], f[2]])
                .collect();
            ObjPart {
                mesh: Mesh {
                    positions,
                    normals,
                    faces,
                },
                material: m
                    .material_id
                    .and_then(|i| materials.get(i))
                    .map(Material::from_mtl),
            }
        })
        .collect())
}

fn read_text(path: &Path) -> Result<String, SceneError> {
    let bytes = fs::read(path)
        .map_err(|e| SceneError::file(path, format!("cannot read: {}", io_reason(&e))))?;
    String::from_utf8(bytes).map_err(|e| {
        let line = e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        SceneError::at_line(path, line, "not UTF-8 text")
    })
}

/// The OS's reason, without the "(os error N)" suffix.
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_lowercase(),
        None => text,
    }
}

/// Checks every line of an OBJ file; the first fault is reported with its line.
fn validate_obj(path: &Path, source: &str) -> Result<(), SceneError> {
    let (mut positions, mut normals, mut texcoords) = (0i64, 0i64, 0i64);
    let mut faces = 0;
    for (n, raw) in source.lines().enumerate() {
        let line = n + 1;
        let fail = |msg: String| Err(SceneError::at_line(path, line, msg));
        let text = raw.split('#').next().unwrap_or("").trim();
        let mut words = text.split_whitespace();
        let Some(keyword) = words.next() else {
            continue;
        };
        let args: Vec<&str> = words.collect();
        match keyword {
            "v" | "vn" => {
                if args.len() < 3 {
                    return fail(format!(
                        "`{keyword}` needs 3 coordinates, found {}",
                        args.len()
                    ));
                }
                for a in &args {
                    match a.parse::<f32>() {
                        Ok(x) if x.is_finite() => {}
                        Ok(x) => {
                            return fail(format!(
                                "coordinate `{a}` is {}; coordinates must be finite",
                                describe(x)
                            ));
                        }
                        Err(_) => return fail(format!("coordinate `{a}` is not a number")),
                    }
                }
                if keyword == "v" {
                    positions += 1
                } else {
                    normals += 1
                }
            }
            "vt" => texcoords += 1,
            "f" => {
                if args.len() < 3 {
                    return fail(format!(
                        "a face needs at least 3 corners, found {}",
                        args.len()
                    ));
                }
                for corner in &args {
                    let refs: Vec<&str> = corner.split('/').collect();
                    let lists = [
                        ("vertex", positions),
                        ("texture coordinate", texcoords),
                        ("normal", normals),
                    ];
                    if refs.len() > 3 || refs[0].is_empty() {
                        return fail(format!(
                            "face corner `{corner}` is not `v`, `v/vt`, `v//vn` or `v/vt/vn`"
                        ));
                    }
                    for (r, (what, count)) in refs.iter().zip(lists) {
                        if r.is_empty() {
                            continue;
                        }
                        let Ok(index) = r.parse::<i64>() else {
                            return fail(format!("face corner `{corner}`: `{r}` is not an index"));
                        };
                        let resolved = if index < 0 { count + 1 + index } else { index };
                        if index == 0 || resolved < 1 || resolved > count {
                            return fail(format!(
                                "face corner `{corner}` refers to {what} {index}, but {count} are defined so far"
                            ));
                        }
                    }
                }
                faces += 1;
            }
            k if OTHER_STATEMENTS.contains(&k) => {}
            k => return fail(format!("unknown statement `{k}`")),
        }
    }
    if faces == 0 {
        return Err(SceneError::file(path, "the OBJ file has no faces"));
    }
    Ok(())
}

fn describe(x: f32) -> &'static str {
    if x.is_nan() { "NaN" } else { "infinite" }
}

/// Reads an MTL file and checks that its numeric statements hold finite numbers.
fn checked_mtl(path: &Path) -> Result<String, SceneError> {
    let source = read_text(path)?;
    for (n, raw) in source.lines().enumerate() {
        let text = raw.split('#').next().unwrap_or("").trim();
        let mut words = text.split_whitespace();
        let Some(keyword) = words.next() else {
            continue;
        };
        let arity = match keyword {
            "Ka" | "Kd" | "Ks" | "Ke" | "Tf" => 1..=3,
            "Ns" | "Ni" | "d" | "Tr" | "illum" | "sharpness" => 1..=1,
            _ => continue,
        };
        let args: Vec<&str> = words.collect();
        let numbers: Vec<Option<f32>> = args.iter().map(|a| a.parse::<f32>().ok()).collect();
        if !arity.contains(&args.len()) || numbers.iter().any(|x| !x.is_some_and(f32::is_finite)) {
            return Err(SceneError::at_line(
                path,
                n + 1,
                format!(
                    "`{keyword}` needs {} finite number(s), found `{}`",
                    arity.end(),
                    args.join(" ")
                ),
            ));
        }
    }
    Ok(source)
}
