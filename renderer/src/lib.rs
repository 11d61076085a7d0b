//! raylb's renderer: scenes, the octree-built BVH, Whitted shading with secondary rays as
//! tasks, the fixed-point film, frames watched while they render, image files in and out and
//! their comparison, and the `raylb` command line.

#![deny(missing_docs)]

pub mod accel;
pub mod bvh;
#[cfg(feature = "mpi")]
pub mod cluster;
pub mod compare;
pub mod conformance;
pub mod device;
pub mod file_errors;
pub mod film;
pub mod frame;
pub mod geometry;
pub mod gpu;
pub mod hybrid;
pub mod image_io;
pub mod input;
pub mod integrator;
pub mod live;
pub mod math;
pub mod memory;
pub mod mesh_export;
pub mod output;
pub mod preview;
pub mod ray_file;
pub mod record;
pub mod render;
pub mod scene;
pub mod stats;
pub mod user_balancer;
pub mod validate;
pub mod watch;
pub mod workmap;
