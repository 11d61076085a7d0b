//! raylb's renderer: scenes, the octree-built BVH, Whitted shading with secondary rays as
//! tasks, the fixed-point film, and the `raylb` command line.

pub mod bvh;
pub mod geometry;
pub mod math;
