//! Indexed triangle meshes, as shapes and OBJ files produce them, before they join a scene.

use glam::{Mat3, Mat4};

use crate::math::{Vec3, cross};

/// Vertices, optional per-vertex normals, and triangles by vertex index.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Mesh {
    pub(crate) positions: Vec<Vec3>,
    /// Empty, or one unit normal per position.
    pub(crate) normals: Vec<Vec3>,
    pub(crate) faces: Vec<[u32; 3]>,
}

impl Mesh {
    /// Adds a vertex; returns its index.
    pub(crate) fn vertex(&mut self, p: Vec3) -> u32 {
        self.positions.push(p);
        self.positions.len() as u32 - 1
    }

    /// Adds a triangle.
    pub(crate) fn face(&mut self, a: u32, b: u32, c: u32) {
        self.faces.push([a, b, c]);
    }

    /// Appends `other`, renumbering its indices.
    pub(crate) fn append(&mut self, other: &Mesh) {
        let base = self.positions.len() as u32;
        self.positions.extend_from_slice(&other.positions);
        self.normals.extend_from_slice(&other.normals);
        self.faces
            .extend(other.faces.iter().map(|f| f.map(|i| i + base)));
    }

    /// Gives every vertex the area-weighted mean of the normals of the faces around it.
    pub(crate) fn smooth_normals(&mut self) {
        let mut sums = vec![Vec3::ZERO; self.positions.len()];
        for f in &self.faces {
            let [a, b, c] = f.map(|i| self.positions[i as usize]);
            let n = cross(b - a, c - a);
            for &i in f {
                sums[i as usize] += n;
            }
        }
        self.normals = sums.into_iter().map(|n| n.normalize_or_zero()).collect();
    }

    /// The mesh moved by `transform`; normals by its inverse transpose. `None` when a
    /// coordinate leaves the finite numbers.
    pub(crate) fn transformed(&self, transform: &Mat4) -> Option<Mesh> {
        if *transform == Mat4::IDENTITY {
            return Some(self.clone());
        }
        let positions: Vec<Vec3> = self
            .positions
            .iter()
            .map(|&p| transform.transform_point3(p))
            .collect();
        if positions.iter().any(|p| !p.is_finite()) {
            return None;
        }
        let normal_matrix = Mat3::from_mat4(*transform).inverse().transpose();
        let normals = self
            .normals
            .iter()
            .map(|&n| (normal_matrix * n).normalize_or_zero())
            .collect();
        Some(Mesh {
            positions,
            normals,
            faces: self.faces.clone(),
        })
    }
}
