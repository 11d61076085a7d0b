//! A scene's acceleration structure, chosen per run (`--accel`): the wide BVH, fast on the
//! CPU and the default, or the octree-built BVH with skip pointers that Wende's thesis is
//! about and the GPU kernels traverse. Both answer the same queries with the same closest
//! hit (the smallest `t`, equal `t` broken by the smaller original index, from the same
//! triangle test with the same padding), so every pixel gets the same bytes from either.

use crate::bvh::{
    BuildThreadError, BvhHit, BvhSettings, BvhStats, NoCounters, OctreeBvh, TraversalCounters,
    WideBvh, on_own_threads, on_threads,
};
use crate::geometry::{Aabb, Ray, Triangle};

/// Which acceleration structure to build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AccelKind {
    /// [`WideBvh`]: four or eight children per node, binned SAH, front-to-back traversal.
    #[default]
    Wide,
    /// [`OctreeBvh`]: octant splits, eight pre-order arrays with skip pointers.
    Octree,
}

impl AccelKind {
    /// What a triangle costs at the peak of loading a scene into this structure: the
    /// triangle, its shading data, its share of the nodes, and the build's working arrays.
    /// Measured as the peak resident memory of `raylb render` on heightfields of 2,097,152 and
    /// 8,388,608 triangles, the difference over the difference in triangles (wide, four
    /// children a node: 606 and 2,147 MiB, 257 bytes a triangle; eight: 631 and 2,105 MiB,
    /// 246 bytes, with each pack's padded triangle boxes stored; octree: 800 and 3,138 MiB,
    /// 386 bytes), rounded up over both widths.
    pub fn bytes_per_triangle(self) -> u64 {
        match self {
            AccelKind::Wide => 260,
            AccelKind::Octree => 390,
        }
    }

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        balancers::Choice::keyword(self)
    }
}

balancers::choices!(AccelKind {
    Wide => "wide", "Eight (AVX2) or four (SSE) children per node tested at once, binned SAH, front-to-back traversal: the fast one.";
    Octree => "octree", "The octree-built BVH with skip pointers of Wende's thesis; the GPU's default.";
});

/// A built acceleration structure.
#[derive(Debug)]
pub enum Accel {
    /// See [`WideBvh`].
    Wide(WideBvh),
    /// See [`OctreeBvh`].
    Octree(OctreeBvh),
}

impl Accel {
    /// Builds the structure `kind` over `triangles` (indexed by their position, the
    /// tie-breaking index of the closest-hit rule), on threads started for the build and
    /// joined before it returns, never on rayon's global pool.
    ///
    /// # Errors
    /// When the operating system refuses to start one of the build's threads.
    pub fn build(
        kind: AccelKind,
        triangles: &[Triangle],
        settings: BvhSettings,
    ) -> Result<Self, BuildThreadError> {
        on_own_threads(|| Self::build_here(kind, triangles, settings))
    }

    /// [`build`](Self::build) on `threads` threads, whatever `RAYON_NUM_THREADS` says: for
    /// measuring how the build scales (`raylb bench build`).
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn build_on(
        kind: AccelKind,
        triangles: &[Triangle],
        settings: BvhSettings,
        threads: std::num::NonZeroUsize,
    ) -> Result<Self, BuildThreadError> {
        on_threads(threads, || Self::build_here(kind, triangles, settings))
    }

    /// The build itself, on the rayon pool it is called from.
    fn build_here(kind: AccelKind, triangles: &[Triangle], settings: BvhSettings) -> Self {
        match kind {
            AccelKind::Wide => Accel::Wide(WideBvh::build(triangles, settings)),
            AccelKind::Octree => Accel::Octree(OctreeBvh::build(triangles, settings)),
        }
    }

    /// Which structure this is.
    pub fn kind(&self) -> AccelKind {
        match self {
            Accel::Wide(_) => AccelKind::Wide,
            Accel::Octree(_) => AccelKind::Octree,
        }
    }

    /// The octree, where that is the structure built: what the GPU kernels traverse.
    pub fn octree(&self) -> Option<&OctreeBvh> {
        match self {
            Accel::Octree(b) => Some(b),
            Accel::Wide(_) => None,
        }
    }

    /// The wide BVH, where that is the structure built: what traces packets of rays.
    pub fn wide(&self) -> Option<&WideBvh> {
        match self {
            Accel::Wide(b) => Some(b),
            Accel::Octree(_) => None,
        }
    }

    /// The closest triangle the ray hits within `(t_min, t_max)`.
    #[inline]
    pub fn closest_hit(&self, ray: &Ray) -> Option<BvhHit> {
        self.closest_hit_counted(ray, &mut NoCounters)
    }

    /// [`closest_hit`](Self::closest_hit), reporting every test to `counters`.
    #[inline]
    pub fn closest_hit_counted<C: TraversalCounters>(
        &self,
        ray: &Ray,
        counters: &mut C,
    ) -> Option<BvhHit> {
        let hit = match self {
            Accel::Wide(b) => b.closest_hit_counted(ray, counters),
            Accel::Octree(b) => b.closest_hit_counted(ray, counters),
        };
        counters.closest_query(hit.is_some());
        hit
    }

    /// Whether any triangle blocks the ray within `(t_min, t_max)`.
    #[inline]
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.occluded_counted(ray, &mut NoCounters)
    }

    /// [`occluded`](Self::occluded), reporting every test to `counters`.
    #[inline]
    pub fn occluded_counted<C: TraversalCounters>(&self, ray: &Ray, counters: &mut C) -> bool {
        match self {
            Accel::Wide(b) => b.occluded_counted(ray, counters),
            Accel::Octree(b) => b.occluded_counted(ray, counters),
        }
    }

    /// The triangles in leaf order; [`BvhHit::index`] indexes this.
    pub fn triangles(&self) -> &[Triangle] {
        match self {
            Accel::Wide(b) => b.triangles(),
            Accel::Octree(b) => b.triangles(),
        }
    }

    /// For each triangle in leaf order, its index in the input of [`build`](Self::build).
    pub fn original_indices(&self) -> &[u32] {
        match self {
            Accel::Wide(b) => b.original_indices(),
            Accel::Octree(b) => b.original_indices(),
        }
    }

    /// The triangles in the order they were given to [`build`](Self::build), the order of
    /// the closest-hit rule's ties: what another structure over the same triangles is built
    /// from.
    pub fn input_triangles(&self) -> Vec<Triangle> {
        let mut triangles = vec![bytemuck::Zeroable::zeroed(); self.triangles().len()];
        for (k, &i) in self.original_indices().iter().enumerate() {
            triangles[i as usize] = self.triangles()[k];
        }
        triangles
    }

    /// How far every box is grown beyond its triangles: the same for both structures.
    pub fn padding(&self) -> f32 {
        match self {
            Accel::Wide(b) => b.padding(),
            Accel::Octree(b) => b.padding(),
        }
    }

    /// The box of all triangles.
    pub fn bounds(&self) -> Aabb {
        match self {
            Accel::Wide(b) => b.bounds(),
            Accel::Octree(b) => b.bounds(),
        }
    }

    /// Build figures.
    pub fn stats(&self) -> &BvhStats {
        match self {
            Accel::Wide(b) => b.stats(),
            Accel::Octree(b) => b.stats(),
        }
    }
}
