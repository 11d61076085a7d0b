//! Rays, boxes and triangles: the primitives the acceleration structure and the shading use.

mod aabb;
mod ray;
mod triangle;

pub use aabb::Aabb;
pub use ray::{BoxRay, PreparedRay, Ray};
pub use triangle::{Triangle, TriangleExt, TriangleHit};
pub(crate) use triangle::{barycentrics, intersect_unnormalised};
