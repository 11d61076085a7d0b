//! raylb's data layout: everything the host and the GPU kernels share, defined once.
//!
//! - the scene as every device reads it: [`FlatNode`] (the octree's flattened nodes),
//!   [`Triangle`], [`TriangleShading`], [`Material`], [`Light`], [`Camera`],
//!   [`RenderSettings`], and the wide BVH's GPU form ([`wide`]);
//! - the unit of work the kernels queue and how tiles are cut ([`task`]);
//! - the kernels' launch sizes, balancer codes, figure slots, error bits, deque heads and ray
//!   counts ([`kernel`]);
//! - the kernels' parameter structs ([`params`]), whose addresses are typed ([`Ptr`],
//!   [`PtrMut`]) by what they point to.
//!
//! Each struct is `#[repr(C)]` and `bytemuck::Pod`, its size and every field's offset written
//! in its definition and asserted at compile time. The renderer's types *are* these types (it
//! adds its behaviour through extension traits), and the `kernels` crate uploads them as they
//! are.
//!
//! The CUDA side is generated, not written: the macros that define each struct, enum and
//! constant also record its C name, fields, offsets and documentation, and
//! [`header::generate`] writes them out as `kernels/cuda/raylb_layout.cuh`, with a
//! `static_assert` of every size, alignment and offset. That header is checked in, and a test
//! of the kernels fails when it differs from what these definitions generate (its message
//! says how to write it again: [`header::REGENERATE`]).

#![deny(missing_docs)]

#[macro_use]
mod macros;

mod c;
pub mod header;
pub mod kernel;
pub mod params;
mod ptr;
pub mod scene;
pub mod task;
pub mod wide;

pub use ptr::{Ptr, PtrMut};
pub use scene::{
    Camera, FlatNode, LEAF_COUNT_BITS, Light, MAX_LEAF_SIZE, MAX_TRIANGLES, Material,
    RenderSettings, Triangle, TriangleShading,
};
