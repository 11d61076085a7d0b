//! A scene's acceleration structure, chosen per run (`--accel`): the wide BVH, fast on the
//! CPU and the default, or the octree-built BVH with skip pointers that Wende's thesis is
//! about and the GPU kernels traverse. Both answer the same queries with the same closest
//! hit (the smallest `t`, equal `t` broken by the smaller original index, from the same
//! triangle test with the same padding), so every pixel gets the same bytes from either.

use std::num::NonZeroUsize;

use crate::bvh::wide::RayPacket;
use crate::bvh::{
    Blockers, BuildThreadError, BvhHit, BvhSettings, BvhStats, NoCounters, OctreeBvh,
    TraversalCounters, WideBvh, build_thread_count, on_threads,
};
use crate::geometry::{Aabb, Ray, Triangle};

/// Which acceleration structure to build.
///
/// ```
/// use balancers::Choice;
/// use renderer::accel::AccelKind;
///
/// assert_eq!(AccelKind::default(), AccelKind::Wide);
/// assert_eq!(AccelKind::from_keyword("octree"), Some(AccelKind::Octree));
/// ```
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
    /// 246 bytes, with each pack's padded triangle boxes stored, 635 and 2,232 MiB, 266 bytes,
    /// measured again later, and 523 and 2,083 MiB, 260 bytes, with leaves of one pack of
    /// eight triangles; octree: 800 and 3,138 MiB, 386 bytes), rounded up over both widths.
    ///
    /// ```
    /// use renderer::accel::AccelKind;
    ///
    /// // What a million-triangle scene needs, at most, while it loads into the octree.
    /// assert_eq!(AccelKind::Octree.bytes_per_triangle() * 1_000_000, 390_000_000);
    /// assert!(AccelKind::Wide.bytes_per_triangle() < AccelKind::Octree.bytes_per_triangle());
    /// ```
    pub fn bytes_per_triangle(self) -> u64 {
        match self {
            AccelKind::Wide => 260,
            AccelKind::Octree => 390,
        }
    }

    /// The leaf size a scene gets where neither it nor the command line gives one: the wide
    /// BVH's is one pack of its triangle test ([`LANES`](crate::bvh::wide::LANES), eight), whose
    /// lanes cost about what four cost; the octree keeps the four of Wende's thesis.
    ///
    /// ```
    /// use renderer::accel::AccelKind;
    ///
    /// assert_eq!(AccelKind::Wide.default_leaf_size(), 8);
    /// assert_eq!(AccelKind::Octree.default_leaf_size(), 4);
    /// ```
    pub fn default_leaf_size(self) -> u32 {
        match self {
            AccelKind::Wide => crate::bvh::wide::LANES as u32,
            AccelKind::Octree => 4,
        }
    }

    /// The name on the command line and in reports.
    ///
    /// ```
    /// use renderer::accel::AccelKind;
    ///
    /// assert_eq!(AccelKind::Wide.name(), "wide");
    /// assert_eq!(AccelKind::Octree.name(), "octree");
    /// ```
    pub fn name(self) -> &'static str {
        balancers::Choice::keyword(self)
    }
}

balancers::choices!(AccelKind {
    Wide => "wide", "Eight children per node tested at once (AVX-512 or AVX2; four with SSE alone), binned SAH, front-to-back traversal: the fast one.";
    Octree => "octree", "The octree-built BVH with skip pointers of Wende's thesis; the GPU's default.";
});

/// Whether a tile's camera rays, and the shadow rays of their hits, are traced in packets of
/// up to [`PACKET_LANES`] rays (`--packets`): one traversal for the packet where the
/// structure has one (the wide BVH's), the same hits, bit for bit, as one ray at a time.
///
/// ```
/// use balancers::Choice;
/// use renderer::accel::{AccelKind, Packets};
///
/// assert_eq!(Packets::from_keyword("off"), Some(Packets::Off));
/// assert_eq!(Packets::default_for(AccelKind::Wide), Packets::On);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packets {
    /// In packets.
    On,
    /// One ray at a time.
    Off,
}

balancers::choices!(Packets {
    On => "on", "A tile's camera rays in packets of 4x4 pixels (4x2 without AVX-512), and their shadow rays towards each light in packets: one traversal of the wide BVH for up to sixteen coherent rays.";
    Off => "off", "Every ray on its own traversal.";
});

impl Packets {
    /// What a frame over `kind` does unless told: packets where the structure traces them.
    ///
    /// ```
    /// use renderer::accel::{AccelKind, Packets};
    ///
    /// // The octree traces one ray at a time.
    /// assert_eq!(Packets::default_for(AccelKind::Octree), Packets::Off);
    /// ```
    pub fn default_for(kind: AccelKind) -> Self {
        if kind.traces_packets() {
            Packets::On
        } else {
            Packets::Off
        }
    }
}

impl AccelKind {
    /// Whether the structure has a traversal for packets of rays (the octree has not: its
    /// stackless walk follows one ray's skip pointers).
    ///
    /// ```
    /// use renderer::accel::AccelKind;
    ///
    /// assert!(AccelKind::Wide.traces_packets());
    /// assert!(!AccelKind::Octree.traces_packets());
    /// ```
    pub fn traces_packets(self) -> bool {
        matches!(self, AccelKind::Wide)
    }
}

/// The most rays [`Accel::closest_hits`] and [`Accel::occluded_rays`] trace together.
pub use crate::bvh::wide::{PACKET_LANES, PixelBlock};

/// A built acceleration structure.
///
/// ```
/// # use renderer::geometry::Triangle;
/// # use renderer::math::Vec3;
/// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
/// # let triangles: Vec<Triangle> = (0..16)
/// #     .map(|i| {
/// #         let x = i as f32;
/// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
/// #     })
/// #     .collect();
/// use renderer::accel::{Accel, AccelKind};
/// use renderer::bvh::BvhSettings;
/// use renderer::geometry::Ray;
///
/// let accel = Accel::build(AccelKind::Octree, &triangles, BvhSettings::default())?;
/// let hit = accel.closest_hit(&Ray::new(Vec3::new(2.25, 0.25, 1.0), -Vec3::Z)).unwrap();
/// assert_eq!(hit.original, 2);
/// assert!(accel.octree().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// joined before it returns (as many as `RAYON_NUM_THREADS` says, else one per core): the
    /// wide BVH's on raylb's work-stealing balancer, the octree's on a rayon pool of its own,
    /// never on rayon's global pool.
    ///
    /// # Errors
    /// When the operating system refuses to start one of the build's threads.
    ///
    /// ```
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// use renderer::accel::{Accel, AccelKind};
    /// use renderer::bvh::BvhSettings;
    ///
    /// let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// assert_eq!(accel.kind(), AccelKind::Wide);
    /// assert_eq!(accel.triangles().len(), 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(
        kind: AccelKind,
        triangles: &[Triangle],
        settings: BvhSettings,
    ) -> Result<Self, BuildThreadError> {
        Self::build_on(kind, triangles, settings, build_thread_count())
    }

    /// [`build`](Self::build) on `threads` threads, whatever `RAYON_NUM_THREADS` says: for
    /// measuring how the build scales (`raylb bench build`).
    ///
    /// # Errors
    /// As [`build`](Self::build).
    ///
    /// ```
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// use renderer::accel::{Accel, AccelKind};
    /// use renderer::bvh::BvhSettings;
    /// use std::num::NonZeroUsize;
    ///
    /// let two = NonZeroUsize::new(2).unwrap();
    /// let accel = Accel::build_on(AccelKind::Wide, &triangles, BvhSettings::default(), two)?;
    /// // The same tree whatever the number of threads.
    /// let one = Accel::build_on(AccelKind::Wide, &triangles, BvhSettings::default(), NonZeroUsize::MIN)?;
    /// assert_eq!(accel.original_indices(), one.original_indices());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build_on(
        kind: AccelKind,
        triangles: &[Triangle],
        settings: BvhSettings,
        threads: NonZeroUsize,
    ) -> Result<Self, BuildThreadError> {
        match kind {
            AccelKind::Wide => WideBvh::build_on(triangles, settings, threads).map(Accel::Wide),
            AccelKind::Octree => on_threads(threads, || {
                Accel::Octree(OctreeBvh::build(triangles, settings))
            }),
        }
    }

    /// Which structure this is.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// assert_eq!(accel.kind(), AccelKind::Wide);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self) -> AccelKind {
        match self {
            Accel::Wide(_) => AccelKind::Wide,
            Accel::Octree(_) => AccelKind::Octree,
        }
    }

    /// The octree, where that is the structure built: what the GPU kernels traverse.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// let accel = Accel::build(AccelKind::Octree, &triangles, BvhSettings::default())?;
    /// assert_eq!(accel.octree().unwrap().triangles().len(), 16);
    /// assert!(accel.wide().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn octree(&self) -> Option<&OctreeBvh> {
        match self {
            Accel::Octree(b) => Some(b),
            Accel::Wide(_) => None,
        }
    }

    /// The wide BVH, where that is the structure built: what traces packets of rays.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// assert_eq!(accel.wide().unwrap().triangles().len(), 16);
    /// assert!(accel.octree().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wide(&self) -> Option<&WideBvh> {
        match self {
            Accel::Wide(b) => Some(b),
            Accel::Octree(_) => None,
        }
    }

    /// How many rays [`closest_hits`](Self::closest_hits) and
    /// [`occluded_rays`](Self::occluded_rays) are best given at once: the wide BVH's
    /// [`WideBvh::packet_lanes`] (16 where its traversal runs on AVX-512, else 8), and 8 for the
    /// octree, which traces them one by one.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # let triangles = [Triangle { v: [Vec3::ZERO, Vec3::X, Vec3::Y] }];
    /// let accel = Accel::build(AccelKind::Octree, &triangles, BvhSettings::default())?;
    /// assert_eq!(accel.packet_lanes(), 8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn packet_lanes(&self) -> usize {
        match self {
            Accel::Wide(b) => b.packet_lanes(),
            Accel::Octree(_) => 8,
        }
    }

    /// The block of pixels whose camera rays fill a packet of
    /// [`packet_lanes`](Self::packet_lanes), one ray a pixel: 4×4 where the wide BVH's
    /// traversal runs on AVX-512, else 4×2 ([`WideBvh::packet_block`]).
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind, PixelBlock};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # let triangles = [Triangle { v: [Vec3::ZERO, Vec3::X, Vec3::Y] }];
    /// let accel = Accel::build(AccelKind::Octree, &triangles, BvhSettings::default())?;
    /// assert_eq!(accel.packet_block(), PixelBlock { columns: 4, rows: 2 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn packet_block(&self) -> PixelBlock {
        PixelBlock::of(self.packet_lanes())
    }

    /// The closest triangle the ray hits within `(t_min, t_max)`.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// let hit = accel.closest_hit(&down).expect("triangle 2 is under the ray");
    /// assert_eq!(hit.original, 2);
    /// assert!((hit.t - 1.0).abs() < 1e-6);
    /// assert!(accel.closest_hit(&up).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn closest_hit(&self, ray: &Ray) -> Option<BvhHit> {
        self.closest_hit_counted(ray, &mut NoCounters)
    }

    /// [`closest_hit`](Self::closest_hit), reporting every test to `counters`.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::TestCounts;
    ///
    /// let mut counts = TestCounts::default();
    /// assert!(accel.closest_hit_counted(&down, &mut counts).is_some());
    /// assert!(counts.boxes > 0 && counts.triangles > 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// assert!(accel.occluded(&down));
    /// assert!(!accel.occluded(&up));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.occluded_counted(ray, &mut NoCounters)
    }

    /// [`occluded`](Self::occluded), reporting every test to `counters`.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::TestCounts;
    ///
    /// let mut counts = TestCounts::default();
    /// assert!(!accel.occluded_counted(&up, &mut counts));
    /// assert!(counts.boxes > 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn occluded_counted<C: TraversalCounters>(&self, ray: &Ray, counters: &mut C) -> bool {
        match self {
            Accel::Wide(b) => b.occluded_counted(ray, counters),
            Accel::Octree(b) => b.occluded_counted(ray, counters),
        }
    }

    /// [`occluded_counted`](Self::occluded_counted), testing first what blocked the latest
    /// rays asked with `recent` (see [`Blockers`]), and remembering there what blocks this
    /// ray. The answer is the same with any `recent`; the integrator keeps one a light for
    /// each worker.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::{Blockers, NoCounters};
    ///
    /// let mut recent = Blockers::default();
    /// assert!(accel.occluded_remembering(&down, &mut recent, &mut NoCounters));
    /// assert_eq!(recent.len(), 1, "what blocked it is remembered");
    /// assert!(!accel.occluded_remembering(&up, &mut recent, &mut NoCounters));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn occluded_remembering<C: TraversalCounters>(
        &self,
        ray: &Ray,
        recent: &mut Blockers,
        counters: &mut C,
    ) -> bool {
        match self {
            Accel::Wide(b) => b.occluded_remembering(ray, recent, counters),
            Accel::Octree(b) => b.occluded_remembering(ray, recent, counters),
        }
    }

    /// The closest hit of each of `rays` (at most [`PACKET_LANES`]) into `hits`, traced
    /// together where the structure can (the wide BVH's packet traversal, which takes the
    /// single-ray one for rays that do not travel together): the same hits as
    /// [`closest_hit_counted`] of each ray. Tests are counted for each ray that makes them.
    ///
    /// [`closest_hit_counted`]: Self::closest_hit_counted
    ///
    /// # Panics
    /// When `hits` is not as long as `rays`, or they are longer than [`PACKET_LANES`].
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::NoCounters;
    ///
    /// let mut hits = [None; 2];
    /// accel.closest_hits(&[down, up], &mut hits, &mut NoCounters);
    /// assert_eq!(hits[0], accel.closest_hit(&down));
    /// assert_eq!(hits[1], None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn closest_hits<C: TraversalCounters>(
        &self,
        rays: &[Ray],
        hits: &mut [Option<BvhHit>],
        counters: &mut C,
    ) {
        assert!(rays.len() == hits.len() && rays.len() <= PACKET_LANES);
        match self {
            Accel::Wide(b) => {
                let found = b.closest_hit_packet_counted(&RayPacket::new(rays), counters);
                for (hit, found) in hits.iter_mut().zip(found) {
                    counters.closest_query(found.is_some());
                    *hit = found;
                }
            }
            Accel::Octree(_) => {
                for (ray, hit) in rays.iter().zip(hits) {
                    *hit = self.closest_hit_counted(ray, counters);
                }
            }
        }
    }

    /// Whether each of `rays` (at most [`PACKET_LANES`]) is blocked, into `blocked`, traced
    /// together where the structure can: the answers of [`occluded_counted`] of each ray.
    ///
    /// [`occluded_counted`]: Self::occluded_counted
    ///
    /// # Panics
    /// As [`closest_hits`](Self::closest_hits).
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// use renderer::bvh::NoCounters;
    ///
    /// let mut blocked = [false; 2];
    /// accel.occluded_rays(&[down, up], &mut blocked, &mut NoCounters);
    /// assert_eq!(blocked, [true, false]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn occluded_rays<C: TraversalCounters>(
        &self,
        rays: &[Ray],
        blocked: &mut [bool],
        counters: &mut C,
    ) {
        assert!(rays.len() == blocked.len() && rays.len() <= PACKET_LANES);
        match self {
            Accel::Wide(b) => {
                let found = b.occluded_packet_counted(&RayPacket::new(rays), counters);
                for (lane, blocked) in blocked.iter_mut().enumerate() {
                    *blocked = found.contains(lane);
                }
            }
            Accel::Octree(_) => {
                for (ray, blocked) in rays.iter().zip(blocked) {
                    *blocked = self.occluded_counted(ray, counters);
                }
            }
        }
    }

    /// The triangles in leaf order; [`BvhHit::index`] indexes this.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// # use renderer::geometry::Ray;
    /// # let down = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, -1.0));
    /// # let up = Ray::new(Vec3::new(2.25, 0.25, 1.0), Vec3::new(0.0, 0.0, 1.0));
    /// let hit = accel.closest_hit(&down).unwrap();
    /// assert_eq!(accel.triangles()[hit.index as usize], triangles[2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn triangles(&self) -> &[Triangle] {
        match self {
            Accel::Wide(b) => b.triangles(),
            Accel::Octree(b) => b.triangles(),
        }
    }

    /// For each triangle in leaf order, its index in the input of [`build`](Self::build).
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// let ids = accel.original_indices();
    /// assert_eq!(accel.triangles()[0], triangles[ids[0] as usize]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn original_indices(&self) -> &[u32] {
        match self {
            Accel::Wide(b) => b.original_indices(),
            Accel::Octree(b) => b.original_indices(),
        }
    }

    /// The triangles in the order they were given to [`build`](Self::build), the order of
    /// the closest-hit rule's ties: what another structure over the same triangles is built
    /// from.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// assert_eq!(accel.input_triangles(), triangles);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn input_triangles(&self) -> Vec<Triangle> {
        let mut triangles = vec![bytemuck::Zeroable::zeroed(); self.triangles().len()];
        for (k, &i) in self.original_indices().iter().enumerate() {
            triangles[i as usize] = self.triangles()[k];
        }
        triangles
    }

    /// How far every box is grown beyond its triangles: the same for both structures.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// let octree = Accel::build(AccelKind::Octree, &triangles, BvhSettings::default())?;
    /// assert!(accel.padding() > 0.0);
    /// assert_eq!(accel.padding(), octree.padding());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn padding(&self) -> f32 {
        match self {
            Accel::Wide(b) => b.padding(),
            Accel::Octree(b) => b.padding(),
        }
    }

    /// The box of all triangles.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// let bounds = accel.bounds();
    /// assert_eq!((bounds.min, bounds.max), (Vec3::ZERO, Vec3::new(16.0, 1.0, 0.0)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bounds(&self) -> Aabb {
        match self {
            Accel::Wide(b) => b.bounds(),
            Accel::Octree(b) => b.bounds(),
        }
    }

    /// Build figures.
    ///
    /// ```
    /// # use renderer::accel::{Accel, AccelKind};
    /// # use renderer::bvh::BvhSettings;
    /// # use renderer::geometry::Triangle;
    /// # use renderer::math::Vec3;
    /// # // A row of sixteen triangles in the plane z = 0, triangle i over x in [i, i + 1].
    /// # let triangles: Vec<Triangle> = (0..16)
    /// #     .map(|i| {
    /// #         let x = i as f32;
    /// #         Triangle { v: [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x, 1.0, 0.0)] }
    /// #     })
    /// #     .collect();
    /// # let accel = Accel::build(AccelKind::Wide, &triangles, BvhSettings::default())?;
    /// assert_eq!(accel.stats().structure, "wide");
    /// assert_eq!(accel.stats().triangles, 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> &BvhStats {
        match self {
            Accel::Wide(b) => b.stats(),
            Accel::Octree(b) => b.stats(),
        }
    }
}
