//! Mesh files, told apart by their extension: `.obj` (with the MTL materials it names) or
//! `.ply`, in any case of letters.

use std::path::Path;

use super::Reads;
use super::error::SceneError;
use super::mesh::Mesh;
use super::obj::{self, MtlFiles, ObjPart};
use super::ply;

/// The mesh formats raylb reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Obj,
    Ply,
}

impl Format {
    /// The format `path`'s extension names, or a fault naming the extension.
    fn of(path: &Path) -> Result<Self, SceneError> {
        let extension = path.extension().map(|e| e.to_string_lossy());
        match extension.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("obj") => Ok(Format::Obj),
            Some("ply") => Ok(Format::Ply),
            Some(_) => Err(SceneError::file(
                path,
                format!(
                    "`.{}` is not a mesh format raylb reads; it reads `.obj` and `.ply`",
                    extension.unwrap_or_default()
                ),
            )),
            None => Err(SceneError::file(
                path,
                "no extension to tell the mesh format by; raylb reads `.obj` and `.ply`",
            )),
        }
    }
}

/// What a scene has room for of one mesh file: its triangles, and the memory reading it may
/// take (`None`: no bound was given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MeshBudget {
    pub(crate) triangles: usize,
    pub(crate) bytes: Option<u64>,
}

/// Reads the mesh file at `path` in the format its extension names; fails if it has more
/// triangles than `budget` allows, or (an OBJ) its reading would take more memory. An OBJ
/// gives one part per object and material; a PLY one part without a material. What an OBJ's
/// MTL files become is `mtl`'s to say; the files read, and the warnings, go to `reads`.
pub(crate) fn load(
    path: &Path,
    budget: MeshBudget,
    mtl: MtlFiles,
    reads: &mut Reads,
) -> Result<Vec<ObjPart>, SceneError> {
    match Format::of(path)? {
        Format::Obj => obj::load(path, budget, mtl, reads),
        Format::Ply => {
            let mesh = ply::load(path, budget.triangles)?;
            reads.file(path);
            Ok(vec![ObjPart {
                mesh,
                material: None,
            }])
        }
    }
}

/// What a mesh file held, once read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshSummary {
    /// Vertices kept (an OBJ's are those its faces use).
    pub vertices: usize,
    /// Triangles, after polygons are split into fans.
    pub triangles: usize,
    /// Whether every vertex has a normal.
    pub normals: bool,
}

impl MeshSummary {
    fn of<'a>(meshes: impl IntoIterator<Item = &'a Mesh>) -> Self {
        let mut summary = MeshSummary {
            vertices: 0,
            triangles: 0,
            normals: true,
        };
        for m in meshes {
            summary.vertices += m.positions.len();
            summary.triangles += m.faces.len();
            summary.normals &= m.normals.len() == m.positions.len();
        }
        summary
    }
}

/// Reads a PLY file from memory exactly as `raylb` reads one from disk (`name` is what errors
/// call it), for fuzzers and tests. Whatever the bytes, it returns: it does not panic, and it
/// allocates in proportion to the bytes given, never to the counts a header declares.
pub fn parse_ply(
    bytes: &[u8],
    name: &Path,
    max_triangles: usize,
) -> Result<MeshSummary, SceneError> {
    ply::parse(bytes, name, max_triangles).map(|mesh| MeshSummary::of([&mesh]))
}

/// Reads an OBJ file from memory as `raylb` reads one from disk (`name` is what errors call
/// it), except that the MTL files it names are not read; for fuzzers and tests. Its reading
/// may take the memory `max_triangles` take in the wide BVH.
pub fn parse_obj(
    bytes: &[u8],
    name: &Path,
    max_triangles: usize,
) -> Result<MeshSummary, SceneError> {
    let bytes_per_triangle = crate::accel::AccelKind::Wide.bytes_per_triangle();
    let budget = MeshBudget {
        triangles: max_triangles,
        bytes: Some((max_triangles as u64).saturating_mul(bytes_per_triangle)),
    };
    let parts = obj::parse(bytes, name, budget, MtlFiles::Skip, &mut Reads::default())?;
    Ok(MeshSummary::of(parts.iter().map(|p| &p.mesh)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_formats_by_extension_in_any_case() {
        for (name, format) in [
            ("a.obj", Format::Obj),
            ("dir.x/b.OBJ", Format::Obj),
            ("c.ply", Format::Ply),
            ("d.Ply", Format::Ply),
        ] {
            assert_eq!(Format::of(Path::new(name)), Ok(format), "{name}");
        }
    }

    #[test]
    fn refuses_other_extensions_naming_them() {
        let load = |p: &str| {
            load(
                Path::new(p),
                MeshBudget {
                    triangles: 10,
                    bytes: None,
                },
                MtlFiles::Needed,
                &mut Reads::default(),
            )
        };
        let e = load("bunny.STL").unwrap_err();
        assert_eq!(
            e.to_string(),
            "bunny.STL: `.STL` is not a mesh format raylb reads; it reads `.obj` and `.ply`"
        );
        let e = load("meshes/bunny").unwrap_err();
        assert_eq!(
            e.to_string(),
            "meshes/bunny: no extension to tell the mesh format by; raylb reads `.obj` and `.ply`"
        );
    }

    #[test]
    fn a_comment_after_a_statement_ends_it() {
        let text = b"v 0 0 0 # origin\nv 1 0 0\nv 0 1 0\nf 1 2 3 # the only face\n";
        let summary = parse_obj(text, Path::new("c.obj"), 10).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((summary.vertices, summary.triangles), (3, 1));
    }

    #[test]
    fn reads_obj_text_without_following_its_materials() {
        let obj =
            b"mtllib missing.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nusemtl gold\nf 1 2 4 3\n";
        let summary = parse_obj(obj, Path::new("quad.obj"), 10).unwrap();
        assert_eq!(
            summary,
            MeshSummary {
                vertices: 4,
                triangles: 2,
                normals: false
            }
        );
        let e = parse_obj(b"v 0 0 0\nf 1 1 2\n", Path::new("x.obj"), 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.obj:2:1: face corner `2` refers to vertex 2, but 1 are defined so far"
        );
    }

    #[test]
    fn summarises_a_ply() {
        let ply = b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0 0 0 1\n1 0 0 0 0 1\n0 1 0 0 0 1\n3 0 1 2\n";
        assert_eq!(
            parse_ply(ply, Path::new("t.ply"), 10),
            Ok(MeshSummary {
                vertices: 3,
                triangles: 1,
                normals: true
            })
        );
    }
}
