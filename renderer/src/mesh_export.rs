//! A scene's triangles in world space as a mesh file (`raylb export`), so that another tracer
//! loads the very geometry raylb traces: Wavefront OBJ, each coordinate written as the
//! shortest decimal that reads back as the same `f32`, or binary little-endian PLY, the float
//! bits themselves. Triangles keep the scene's order (the order that breaks ties between equal
//! hits), and vertices with the same bits are written once.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use crate::geometry::Triangle;
use crate::math::Vec3;

/// The mesh formats raylb writes.
///
/// ```
/// use renderer::mesh_export::MeshFormat;
/// use std::path::Path;
///
/// assert_eq!(MeshFormat::of(Path::new("bunny.OBJ")), Ok(MeshFormat::Obj));
/// assert_eq!(MeshFormat::of(Path::new("bunny.ply")), Ok(MeshFormat::Ply));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    /// Wavefront OBJ: `v` and `f` lines.
    Obj,
    /// The Stanford format, binary little-endian: float x, y, z per vertex, faces of three
    /// `int` indices.
    Ply,
}

impl MeshFormat {
    /// The format `path`'s extension names.
    ///
    /// # Errors
    /// When the extension is neither `.obj` nor `.ply`.
    ///
    /// ```
    /// use renderer::mesh_export::MeshFormat;
    /// use std::path::Path;
    ///
    /// let e = MeshFormat::of(Path::new("bunny.stl")).unwrap_err();
    /// assert_eq!(e, "bunny.stl: a mesh is written as .obj or .ply");
    /// ```
    pub fn of(path: &Path) -> Result<Self, String> {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("obj") => Ok(Self::Obj),
            Some("ply") => Ok(Self::Ply),
            _ => Err(format!(
                "{}: a mesh is written as .obj or .ply",
                path.display()
            )),
        }
    }
}

/// `triangles` as a mesh: each vertex once (the first time its bits appear), and each
/// triangle its three indices into them.
#[derive(Debug)]
struct IndexedMesh {
    vertices: Vec<Vec3>,
    faces: Vec<[u32; 3]>,
}

impl IndexedMesh {
    fn new(triangles: &[Triangle]) -> Self {
        let mut index: HashMap<[u32; 3], u32> = HashMap::with_capacity(triangles.len());
        let mut vertices = Vec::with_capacity(triangles.len());
        let faces = triangles
            .iter()
            .map(|t| {
                t.v.map(|v| {
                    *index
                        .entry(v.to_array().map(f32::to_bits))
                        .or_insert_with(|| {
                            vertices.push(v);
                            (vertices.len() - 1) as u32
                        })
                })
            })
            .collect();
        Self { vertices, faces }
    }
}

/// Writes `triangles` to `out` in `format`.
///
/// # Errors
/// When `out` fails.
///
/// ```
/// use renderer::geometry::Triangle;
/// use renderer::math::Vec3;
/// use renderer::mesh_export::{MeshFormat, write_mesh};
///
/// // Two triangles sharing an edge: four vertices, each written once.
/// let a = Triangle { v: [Vec3::ZERO, Vec3::X, Vec3::Y] };
/// let b = Triangle { v: [Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y] };
/// let mut obj = Vec::new();
/// write_mesh(&[a, b], MeshFormat::Obj, &mut obj)?;
/// let obj = String::from_utf8(obj)?;
/// assert_eq!(obj.lines().filter(|l| l.starts_with("v ")).count(), 4);
/// assert!(obj.ends_with("f 1 2 3\nf 2 4 3\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_mesh(
    triangles: &[Triangle],
    format: MeshFormat,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mesh = IndexedMesh::new(triangles);
    match format {
        MeshFormat::Obj => write_obj(&mesh, out),
        MeshFormat::Ply => write_ply(&mesh, out),
    }
}

fn write_obj(mesh: &IndexedMesh, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "# raylb export: {} vertices, {} triangles, world space",
        mesh.vertices.len(),
        mesh.faces.len()
    )?;
    // Rust prints a float as the shortest decimal that parses back to the same bits.
    for v in &mesh.vertices {
        writeln!(out, "v {} {} {}", v.x, v.y, v.z)?;
    }
    for [a, b, c] in &mesh.faces {
        writeln!(out, "f {} {} {}", a + 1, b + 1, c + 1)?;
    }
    Ok(())
}

fn write_ply(mesh: &IndexedMesh, out: &mut dyn Write) -> io::Result<()> {
    write!(
        out,
        "ply\nformat binary_little_endian 1.0\ncomment raylb export, world space\n\
         element vertex {}\nproperty float x\nproperty float y\nproperty float z\n\
         element face {}\nproperty list uchar int vertex_indices\nend_header\n",
        mesh.vertices.len(),
        mesh.faces.len()
    )?;
    for v in &mesh.vertices {
        for x in [v.x, v.y, v.z] {
            out.write_all(&x.to_le_bytes())?;
        }
    }
    for face in &mesh.faces {
        out.write_all(&[3])?;
        for &i in face {
            out.write_all(&(i as i32).to_le_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> Triangle {
        Triangle {
            v: [Vec3::from(a), Vec3::from(b), Vec3::from(c)],
        }
    }

    #[test]
    fn vertices_with_the_same_bits_are_written_once() {
        let triangles = [
            tri([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
            tri([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-0.0, 0.1, 1e-7]),
        ];
        let mut obj = Vec::new();
        write_mesh(&triangles, MeshFormat::Obj, &mut obj).unwrap();
        let text = String::from_utf8(obj).unwrap();
        assert!(text.contains("v -0 0.1 0.0000001\n"), "{text}");
        assert!(text.ends_with("f 1 2 3\nf 2 3 4\n"), "{text}");
        let mut ply = Vec::new();
        write_mesh(&triangles, MeshFormat::Ply, &mut ply).unwrap();
        let header_end = ply.windows(11).position(|w| w == b"end_header\n").unwrap() + 11;
        assert_eq!(ply.len() - header_end, 4 * 12 + 2 * 13);
    }

    #[test]
    fn the_format_is_the_extension() {
        assert_eq!(MeshFormat::of(Path::new("a.OBJ")), Ok(MeshFormat::Obj));
        assert_eq!(MeshFormat::of(Path::new("a.ply")), Ok(MeshFormat::Ply));
        assert!(MeshFormat::of(Path::new("a.stl")).is_err());
    }
}
