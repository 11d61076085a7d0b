//! The unit of work the kernels queue, and how tiles are cut.
//!
//! A [`Task`] is a ray task (the renderer's `RayTask`: a ray, its pixel, depth, kind and
//! weight, everything it needs to be traced anywhere) or, with kind [`TaskKind::Tile`], a tile
//! of camera rays. Its kind and depth share one word: `depth | kind << KIND_SHIFT`.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

shared_enum! {
    /// What a task is: why its ray was traced, or a tile.
    #[c(RL_KIND, Unsigned)]
    ///
    /// ```
    /// use layout::task::{KIND_SHIFT, TaskKind};
    ///
    /// // A refraction ray of generation 2, as a task's `depth_kind` word holds it.
    /// let depth_kind = 2 | (TaskKind::Refraction as u32) << KIND_SHIFT;
    /// assert_eq!(TaskKind::ALL[(depth_kind >> KIND_SHIFT) as usize], TaskKind::Refraction);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum TaskKind {
        /// From the eye through a pixel.
        Camera = 0,
        /// A mirror reflection, or a refraction turned back by total internal reflection.
        Reflection = 1,
        /// Through a refracting surface.
        Refraction = 2,
        /// Not a ray: a tile of camera rays, its corners packed in `pixel` (`x0 | y0 <<
        /// TILE_CORNER_BITS`) and `tile_end` (`x1 | y1 << TILE_CORNER_BITS`).
        Tile = 3,
    }
}

shared_constants! {
    TASK_CONSTANTS;
    /// Where a task's kind starts in its `depth_kind` word; the depth takes the bits below.
    #[c(Unsigned)]
    pub const KIND_SHIFT: u32 = 8;
    /// The depth's bits of a `depth_kind` word.
    #[c(Unsigned)]
    pub const DEPTH_MASK: u32 = (1 << KIND_SHIFT) - 1;
    /// Bits of each coordinate of a tile task's packed corners: images are at most
    /// `2^TILE_CORNER_BITS − 1` pixels a side on the GPU.
    #[c(Unsigned)]
    pub const TILE_CORNER_BITS: u32 = 16;
    /// The edge of the pieces a large tile is cut into.
    #[c(Unsigned)]
    pub const PIECE: u32 = 32;
    /// Tiles above this many pixels (a 32×32 tile) cut themselves into pieces while they
    /// run: small enough that stolen pieces of a large tile balance well, large enough that
    /// cutting costs nothing next to tracing (one task per thousand camera rays).
    #[c(Unsigned)]
    pub const SPLIT_ABOVE: u32 = PIECE * PIECE;
}

shared_struct! {
    /// A ray task or a tile, 48 bytes; 16-byte aligned, so that the kernels move tasks with
    /// 16-byte loads and stores.
    #[c(rl_task, size = 48)]
    ///
    /// ```
    /// use glam::Vec3;
    /// use layout::task::{KIND_SHIFT, Task, TaskKind};
    ///
    /// let task = Task {
    ///     origin: Vec3::ZERO,
    ///     dir: Vec3::NEG_Z,
    ///     weight: Vec3::splat(0.9),
    ///     pixel: 5,
    ///     depth_kind: 1 | (TaskKind::Reflection as u32) << KIND_SHIFT,
    ///     tile_end: 0,
    /// };
    /// assert_eq!((task.kind(), task.depth()), (TaskKind::Reflection as u32, 1));
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    #[repr(C, align(16))]
    pub struct Task {
        /// Where the ray starts.
        #[offset(0)]
        pub origin: Vec3,
        /// Unit direction.
        #[offset(12)]
        pub dir: Vec3,
        /// What this ray's radiance is worth in its pixel.
        #[offset(24)]
        pub weight: Vec3,
        /// Row-major pixel index; a tile's first corner.
        #[offset(36)]
        pub pixel: u32,
        /// `depth | kind << KIND_SHIFT`.
        #[offset(40)]
        pub depth_kind: u32,
        /// A tile's second corner; 0 for a ray.
        #[offset(44)]
        pub tile_end: u32,
    }
}

impl Task {
    /// The kind's code (a [`TaskKind`] value).
    ///
    /// ```
    /// # use bytemuck::Zeroable;
    /// # use layout::task::{KIND_SHIFT, Task, TaskKind};
    /// let tile = Task { depth_kind: (TaskKind::Tile as u32) << KIND_SHIFT, ..Task::zeroed() };
    /// assert_eq!(tile.kind(), TaskKind::Tile as u32);
    /// ```
    pub fn kind(&self) -> u32 {
        self.depth_kind >> KIND_SHIFT
    }

    /// The generation: 0 for camera rays, the parent's plus one for the rays a hit spawns.
    ///
    /// ```
    /// # use bytemuck::Zeroable;
    /// # use layout::task::{KIND_SHIFT, Task, TaskKind};
    /// let depth_kind = 3 | (TaskKind::Reflection as u32) << KIND_SHIFT;
    /// let ray = Task { depth_kind, ..Task::zeroed() };
    /// assert_eq!(ray.depth(), 3);
    /// ```
    pub fn depth(&self) -> u32 {
        self.depth_kind & DEPTH_MASK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_and_depth_share_a_word() {
        let task = Task {
            depth_kind: 5 | (TaskKind::Refraction as u32) << KIND_SHIFT,
            ..Zeroable::zeroed()
        };
        assert_eq!(
            (task.kind(), task.depth()),
            (TaskKind::Refraction as u32, 5)
        );
        assert_eq!(SPLIT_ABOVE, 1024);
    }
}
