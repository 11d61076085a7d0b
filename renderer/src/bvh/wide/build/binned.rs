//! The binary tree's splits by binned SAH (or by octant): every triangle as one record of its
//! box, centroid and index, which the binning and the partition stream through in order, and
//! the partition gathering, as it goes, what each side spans, so that no node takes a pass of
//! its own over its triangles to find its box.

use crate::bvh::MAX_TRIANGLES;
use crate::geometry::{Aabb, Triangle, TriangleExt};
use crate::math::Vec3;

use super::super::super::BvhSplit;
use super::super::LANES;
use super::{Arena, BinaryNode, NodeRef};

/// Bins per axis. 16 finds splits within a few percent of the full sweep's SAH cost on the
/// meshes we trace, at a small part of its build time (Wald, "On fast construction of
/// SAH-based bounding volume hierarchies", 2007, uses 16 to 32).
const BINS: usize = 16;

/// The cost of visiting a binary node against testing one pack of eight triangles, in the SAH
/// (a leaf costs one per pack it fills). Half and twice this traced the same to within 2%
/// on the meshes we measured (BENCHMARKS.md).
const TRAVERSAL_COST: f32 = 1.0;

/// Past this depth the binary tree is split at the median of the input order instead of by the
/// SAH (or by octant), so that its depth, and the traversal's stack, stay bounded (at most this
/// plus log2 of the triangle count, 67 for the most triangles a BVH can hold).
pub(super) const SPLIT_DEPTH: u32 = 40;

/// An axis-aligned box as two rows of four lanes (the fourth unused, zero in a record's box),
/// so that a union is one vector minimum and one maximum.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(16))]
pub(super) struct Box4 {
    lo: [f32; 4],
    hi: [f32; 4],
}

impl Box4 {
    /// Contains nothing; the identity of [`grow`](Self::grow).
    const EMPTY: Self = Self {
        lo: [f32::INFINITY; 4],
        hi: [f32::NEG_INFINITY; 4],
    };

    /// Grows this box to contain `other`. Written as comparisons, not `f32::min`, so that the
    /// four lanes compile to one `minps` and one `maxps` (the boxes hold no NaN: scenes refuse
    /// it).
    #[inline(always)]
    fn grow(&mut self, other: &Self) {
        for k in 0..4 {
            self.lo[k] = if other.lo[k] < self.lo[k] {
                other.lo[k]
            } else {
                self.lo[k]
            };
            self.hi[k] = if other.hi[k] > self.hi[k] {
                other.hi[k]
            } else {
                self.hi[k]
            };
        }
    }

    /// Half the surface area: the SAH's measure of how likely a ray is to hit the box.
    fn half_area(&self) -> f32 {
        let e = [
            self.hi[0] - self.lo[0],
            self.hi[1] - self.lo[1],
            self.hi[2] - self.lo[2],
        ];
        e[0] * e[1] + e[1] * e[2] + e[2] * e[0]
    }

    /// The box as the rest of the renderer spells it.
    /// A zero comes out positive: `grow` keeps whichever of `-0` and `+0` it met first, and
    /// the root's extent is merged from chunks in whatever order the workers finish them.
    pub(super) fn to_aabb(self) -> Aabb {
        Aabb {
            min: Vec3::new(self.lo[0], self.lo[1], self.lo[2]) + Vec3::ZERO,
            max: Vec3::new(self.hi[0], self.hi[1], self.hi[2]) + Vec3::ZERO,
        }
    }
}

/// A triangle as the build sees it: its box, the mean of its vertices (where it is binned) and
/// its index in the input. 48 bytes; the build sorts these records, not indices into arrays.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(16))]
pub(super) struct Record {
    bounds: Box4,
    /// The centroid's `x`, `y`, `z`, then the index's bits with [`INDEX_TAG`] set: one row of
    /// four lanes, so that [`bins`] finds the centroid's bin on all three axes at once (and a
    /// fourth bin, of the index, that nothing reads).
    centroid: [f32; 4],
}

/// Set in the bits of a record's fourth centroid lane beside the index, which is below
/// [`MAX_TRIANGLES`] (2^27): it makes the lane a normal float (a biased exponent of 128 to
/// 143).
/// Bare, an index's bits are a subnormal float, and the compiler may take that lane through
/// arithmetic on the way to the record (the sum of the vertices, times a third, with the index
/// inserted before the product); Intel processors take each subnormal operand through a
/// microcode assist of a hundred cycles or more, which made writing the records ten times
/// slower than the rest of a task's work.
const INDEX_TAG: u32 = 1 << 30;

// Every tagged index below the exponent of infinities and NaNs (255): its bits are
// `INDEX_TAG + index`, whose exponent is `128 + index / 2^23`.
const _: () = assert!(MAX_TRIANGLES as u64 <= 127 << 23);

impl Record {
    /// The triangle's index in the build's input.
    pub(super) fn index(&self) -> u32 {
        self.centroid[3].to_bits() & !INDEX_TAG
    }

    /// The record of `triangle`, input index `index`.
    pub(super) fn new(triangle: &Triangle, index: u32) -> Self {
        debug_assert!((index as usize) < MAX_TRIANGLES);
        let b = triangle.bounds();
        let c = triangle.centroid();
        Self {
            bounds: Box4 {
                lo: [b.min.x, b.min.y, b.min.z, 0.0],
                hi: [b.max.x, b.max.y, b.max.z, 0.0],
            },
            centroid: [c.x, c.y, c.z, f32::from_bits(index | INDEX_TAG)],
        }
    }
}

/// What a set of records spans: the union of their boxes, and the box of their centroids (its
/// fourth lanes hold no number of use: the records' index bits).
#[derive(Clone, Copy, Debug)]
pub(super) struct Extent {
    pub(super) bounds: Box4,
    centroids: Box4,
}

impl Extent {
    /// Of no records.
    pub(super) const EMPTY: Self = Self {
        bounds: Box4::EMPTY,
        centroids: Box4::EMPTY,
    };

    /// Grows the extent by one record.
    #[inline(always)]
    pub(super) fn add(&mut self, record: &Record) {
        self.bounds.grow(&record.bounds);
        self.centroids.grow(&Box4 {
            lo: record.centroid,
            hi: record.centroid,
        });
    }

    /// Grows the extent by another.
    pub(super) fn merge(&mut self, other: &Self) {
        self.bounds.grow(&other.bounds);
        self.centroids.grow(&other.centroids);
    }

    /// What `records` span.
    pub(super) fn of(records: &[Record]) -> Self {
        let mut extent = Self::EMPTY;
        for r in records {
            extent.add(r);
        }
        extent
    }
}

/// The packs `n` triangles fill: what a leaf of them costs to test, in units of one pack test.
pub(super) fn packs(n: usize) -> f32 {
    n.div_ceil(LANES) as f32
}

/// How a node's records were divided.
pub(super) enum Cut {
    /// Not: the node is a leaf.
    Leaf,
    /// Records `..mid` (spanning `left`) went to the first child, the rest (`right`) to the
    /// second; `next`: where an octant split goes on in both.
    Split {
        mid: usize,
        next: Option<OctantStep>,
        left: Extent,
        right: Extent,
    },
}

/// How the build splits nodes, the same for every node.
#[derive(Clone, Copy, Debug)]
pub(super) struct Splitter {
    pub(super) leaf_size: usize,
    pub(super) split: BvhSplit,
    /// Children per node of the wide tree, for the sizes of the subtrees ([`BinaryNode::inner`]).
    pub(super) width: usize,
}

impl Splitter {
    /// Builds the binary subtree over `records` (spanning `extent`), which start at `offset`
    /// in the whole record list, at depth `depth`, into `arena`; returns its root. `octant`:
    /// where a node split by octant is in its three steps (see [`OctantStep`]).
    pub(super) fn subtree(
        &self,
        records: &mut [Record],
        offset: usize,
        depth: u32,
        octant: Option<OctantStep>,
        extent: &Extent,
        arena: &mut Arena,
    ) -> NodeRef {
        let bounds = extent.bounds.to_aabb();
        let range = offset..offset + records.len();
        let node = match self.cut(records, depth, octant, extent) {
            Cut::Leaf => BinaryNode::leaf(bounds, range),
            Cut::Split {
                mid,
                next,
                left,
                right,
            } => {
                let (l, r) = records.split_at_mut(mid);
                let l = self.subtree(l, offset, depth + 1, next, &left, arena);
                let r = self.subtree(r, offset + mid, depth + 1, next, &right, arena);
                BinaryNode::inner(bounds, range, [l, r], self.width, |n| arena.get(n))
            }
        };
        arena.push(node)
    }

    /// Divides the records of one node (spanning `extent`, at depth `depth`) between its two
    /// children, or decides that it is a leaf.
    pub(super) fn cut(
        &self,
        records: &mut [Record],
        depth: u32,
        octant: Option<OctantStep>,
        extent: &Extent,
    ) -> Cut {
        let n = records.len();
        match self.split {
            BvhSplit::Sah => {
                let best = if self.is_binned(n, depth) {
                    best_split(records, extent)
                } else {
                    None
                };
                self.cut_by(records, best)
            }
            // Leaves hold at least one triangle (`leaf_size` is 1 or more).
            BvhSplit::Octant if n <= self.leaf_size => Cut::Leaf,
            BvhSplit::Octant => {
                let split = if depth < SPLIT_DEPTH {
                    octant_split(records, octant, extent)
                } else {
                    None
                };
                split_or_median(records, split)
            }
        }
    }

    /// Whether [`cut`](Self::cut) bins a node of `n` records at depth `depth` (its SAH
    /// split found by [`Bins`], which may then be filled in parts and merged, and the cut
    /// finished by [`cut_by`](Self::cut_by)).
    pub(super) fn is_binned(&self, n: usize, depth: u32) -> bool {
        self.split == BvhSplit::Sah && !self.within_one_pack(n) && depth < SPLIT_DEPTH
    }

    /// Whether a node of `n` records is an SAH leaf whatever its bins say: a leaf of one pack
    /// costs 1, and a split at least that (one node visit and two children's non-negative
    /// shares), so no split beats it.
    fn within_one_pack(&self, n: usize) -> bool {
        n <= 1 || n <= self.leaf_size.min(LANES)
    }

    /// The SAH's cut of a node's `records`, of which `best` is the cheapest split (`None`
    /// where no boundary has records on both sides, all centroids coinciding, or past
    /// [`SPLIT_DEPTH`]): a leaf where it is small enough and no split is cheaper than testing
    /// it, else the split, else the median.
    pub(super) fn cut_by(&self, records: &mut [Record], best: Option<Split>) -> Cut {
        let n = records.len();
        if self.within_one_pack(n) {
            return Cut::Leaf;
        }
        let split = match best {
            Some(s) if n <= self.leaf_size && s.cost >= packs(n) => return Cut::Leaf,
            Some(s) => Some((partition(records, |r| s.bin_of(r) < s.bin), None)),
            None if n <= self.leaf_size => return Cut::Leaf,
            None => None,
        };
        split_or_median(records, split)
    }
}

/// The cut of `records` by `split`, where it puts records on both sides; otherwise (no split
/// found, or one that leaves a side empty: all centroids in one bin after all) at the median
/// of the input order.
fn split_or_median(records: &mut [Record], split: Option<(Parted, Option<OctantStep>)>) -> Cut {
    let n = records.len();
    match split {
        Some(((mid, left, right), next)) if mid != 0 && mid != n => Cut::Split {
            mid,
            next,
            left,
            right,
        },
        _ => {
            let mid = n / 2;
            Cut::Split {
                mid,
                next: None,
                left: Extent::of(&records[..mid]),
                right: Extent::of(&records[mid..]),
            }
        }
    }
}

/// Where a node split by octant is: the centre of its centroid bounds, and the axis of the
/// halving to come (after `x`, `y`; after `z` a fresh split starts).
#[derive(Clone, Copy, Debug)]
pub(super) struct OctantStep {
    center: [f32; 3],
    axis: usize,
}

/// A partition's result: where the records were cut, and what each side spans.
type Parted = (usize, Extent, Extent);

/// The octree's split as binary steps: the records go to the octants of their centroids
/// around the centre of the centroid bounds, taken as three halvings at that centre (by `x`,
/// then `y`, then `z`). The collapse to eight children mostly joins them into one node again
/// (where that is the collapse of least cost, `Slots` in the parent module: a large
/// grandchild may be opened instead of a small octant). An axis along which every centroid
/// lies on one side is passed over; `None` when every axis is (the centroids coincide).
/// Returns the cut and the step its two halves take next. Past [`SPLIT_DEPTH`] binary levels
/// (about 13 octant levels, where the octree goes to its `max_depth`, 24 by default) nodes are
/// split by index, to keep the traversal's stack fixed.
fn octant_split(
    records: &mut [Record],
    step: Option<OctantStep>,
    extent: &Extent,
) -> Option<(Parted, Option<OctantStep>)> {
    // The rest of this octant split's halvings, then those of a fresh one.
    if let Some(step) = step
        && let Some(cut) = halve(records, step)
    {
        return Some(cut);
    }
    let fresh = OctantStep {
        center: std::array::from_fn(|k| (extent.centroids.lo[k] + extent.centroids.hi[k]) * 0.5),
        axis: 0,
    };
    halve(records, fresh)
}

/// The first of the halvings of `step` onwards (at its centre, along its axis and those after
/// it) that puts records on both sides.
fn halve(records: &mut [Record], step: OctantStep) -> Option<(Parted, Option<OctantStep>)> {
    for axis in step.axis..3 {
        let at = step.center[axis];
        let parted = partition(records, |r| r.centroid[axis] < at);
        if parted.0 != 0 && parted.0 != records.len() {
            let next = (axis < 2).then_some(OctantStep {
                center: step.center,
                axis: axis + 1,
            });
            return Some((parted, next));
        }
    }
    None
}

/// A candidate split: centroids in bins below `bin` along `axis` go left.
#[derive(Clone, Copy, Debug)]
pub(super) struct Split {
    axis: usize,
    /// The centroid bounds' lower end along `axis`.
    origin: f32,
    /// Bins per unit of length along `axis`.
    scale: f32,
    bin: usize,
    /// The SAH cost, in units of one triangle test.
    cost: f32,
}

impl Split {
    /// The bin of `record` along the split's axis.
    #[inline(always)]
    fn bin_of(&self, record: &Record) -> usize {
        bin(record.centroid[self.axis], self.origin, self.scale) as usize
    }
}

/// The highest bin, as a float.
const LAST: f32 = (BINS - 1) as f32;

/// The bin of a centroid coordinate `c`, given its axis's `origin` and bins per unit `scale`:
/// `(c - origin) * scale` rounded down, clamped to the bins (a NaN to bin 0).
#[inline(always)]
fn bin(c: f32, origin: f32, scale: f32) -> i32 {
    let x = (c - origin) * scale;
    let x = if x > 0.0 { x } else { 0.0 };
    let x = if x < LAST { x } else { LAST };
    // SAFETY: `x` is a number (a NaN fails `x > 0.0` and became 0) in `0..=LAST`, which an
    // `i32` holds.
    unsafe { x.to_int_unchecked::<i32>() }
}

/// [`bin`] of four lanes at once: on x86-64 the same operations as one instruction each (its
/// `maxps` and `minps` pick as `bin`'s comparisons do, NaN included).
#[inline(always)]
fn bins(c: &[f32; 4], origin: &[f32; 4], scale: &[f32; 4]) -> [i32; 4] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128, _mm_cvttps_epi32, _mm_max_ps, _mm_min_ps, _mm_mul_ps, _mm_set1_ps,
            _mm_setzero_ps, _mm_sub_ps,
        };
        let lanes = |a: &[f32; 4]| bytemuck::cast::<[f32; 4], __m128>(*a);
        // The fourth lane (a record's index bits) is cleared first: it is no coordinate.
        let xyz = lanes(&[c[0], c[1], c[2], 0.0]);
        // SAFETY: SSE and SSE2, all these need, are part of every x86-64 processor, and of
        // the target's baseline features.
        let bins = unsafe {
            let x = _mm_mul_ps(_mm_sub_ps(xyz, lanes(origin)), lanes(scale));
            let x = _mm_min_ps(_mm_max_ps(x, _mm_setzero_ps()), _mm_set1_ps(LAST));
            _mm_cvttps_epi32(x)
        };
        bytemuck::cast(bins)
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::array::from_fn(|k| bin(c[k], origin[k], scale[k]))
}

/// The cheapest SAH split of `records` (spanning `extent`) over the bins of every axis along
/// which the centroids spread, with its cost in units of one triangle test; `None` when all
/// centroids coincide. The three axes are binned in one pass over the records.
fn best_split(records: &[Record], extent: &Extent) -> Option<Split> {
    let binning = Binning::of(extent);
    let mut bins = Bins::EMPTY;
    bins.add(records, &binning);
    bins.best_split(&binning, extent)
}

/// Where a node's centroids are binned: the lower corner of their box, its size, and bins per
/// unit of length along each axis (0 along an axis without spread, which bins everything at 0,
/// as it does the fourth lane, the index).
#[derive(Clone, Copy, Debug)]
pub(super) struct Binning {
    lo: [f32; 4],
    size: [f32; 3],
    scale: [f32; 4],
}

impl Binning {
    /// The binning of the records that span `extent`.
    pub(super) fn of(extent: &Extent) -> Self {
        let mut lo = extent.centroids.lo;
        lo[3] = 0.0;
        let size: [f32; 3] = std::array::from_fn(|k| extent.centroids.hi[k] - lo[k]);
        let scale: [f32; 4] = std::array::from_fn(|k| {
            if k < 3 && size[k] > 0.0 {
                BINS as f32 / size[k]
            } else {
                0.0
            }
        });
        Self { lo, size, scale }
    }
}

/// Records binned along every axis: per bin, how many centroids fell in it and the box of
/// their triangles. Binned in parts and merged, they are what one pass over all the records
/// gives (counts add up, boxes grow, in any order).
#[derive(Clone, Copy, Debug)]
pub(super) struct Bins {
    counts: [[usize; BINS]; 3],
    boxes: [[Box4; BINS]; 3],
}

impl Bins {
    /// Of no records.
    pub(super) const EMPTY: Self = Self {
        counts: [[0; BINS]; 3],
        boxes: [[Box4::EMPTY; BINS]; 3],
    };

    /// Adds `records`, binned by `binning`.
    pub(super) fn add(&mut self, records: &[Record], binning: &Binning) {
        for r in records {
            let b = bins(&r.centroid, &binning.lo, &binning.scale);
            for axis in 0..3 {
                let b = b[axis] as usize;
                self.counts[axis][b] += 1;
                self.boxes[axis][b].grow(&r.bounds);
            }
        }
    }

    /// Adds the records binned in `other` (by the same binning).
    pub(super) fn merge(&mut self, other: &Self) {
        for axis in 0..3 {
            for b in 0..BINS {
                self.counts[axis][b] += other.counts[axis][b];
                self.boxes[axis][b].grow(&other.boxes[axis][b]);
            }
        }
    }

    /// The cheapest SAH split of the records binned here by `binning`, which span `extent`,
    /// with its cost in units of one triangle test; `None` where no boundary has records on
    /// both sides.
    pub(super) fn best_split(&self, binning: &Binning, extent: &Extent) -> Option<Split> {
        let area = extent.bounds.half_area().max(f32::MIN_POSITIVE);
        let mut best: Option<Split> = None;
        for axis in 0..3 {
            if binning.size[axis] <= 0.0 {
                continue;
            }
            let split = cheapest_boundary(
                &self.counts[axis],
                &self.boxes[axis],
                area,
                Split {
                    axis,
                    origin: binning.lo[axis],
                    scale: binning.scale[axis],
                    bin: 0,
                    cost: f32::INFINITY,
                },
            );
            if best.as_ref().is_none_or(|s| split.cost < s.cost) && split.cost.is_finite() {
                best = Some(split);
            }
        }
        best
    }
}

/// `split` at the cheapest boundary between its axis's bins (of `counts` records spanning
/// `boxes`), in a node of half area `area`; its cost stays infinite when no boundary has
/// records on both sides.
///
/// Only the boundaries just right of an occupied bin are weighed: moving a boundary across an
/// empty bin changes neither side, so its cost stays the same, and the first of equal costs is
/// the one kept. A small node occupies few of the bins, and this is most of its build.
fn cheapest_boundary(
    counts: &[usize; BINS],
    boxes: &[Box4; BINS],
    area: f32,
    mut split: Split,
) -> Split {
    let mut occupied = [0usize; BINS];
    let mut m = 0;
    for (b, &count) in counts.iter().enumerate() {
        if count > 0 {
            occupied[m] = b;
            m += 1;
        }
    }
    // Areas and counts of the occupied bins from the `j`th on, swept from the right.
    let mut right_area = [0.0f32; BINS];
    let mut right_count = [0usize; BINS];
    let (mut acc, mut count) = (Box4::EMPTY, 0);
    for j in (1..m).rev() {
        acc.grow(&boxes[occupied[j]]);
        count += counts[occupied[j]];
        right_area[j] = acc.half_area();
        right_count[j] = count;
    }
    let (mut acc, mut count) = (Box4::EMPTY, 0);
    for j in 0..m.saturating_sub(1) {
        acc.grow(&boxes[occupied[j]]);
        count += counts[occupied[j]];
        let cost = TRAVERSAL_COST
            + (acc.half_area() * packs(count) + right_area[j + 1] * packs(right_count[j + 1]))
                / area;
        if cost < split.cost {
            split.cost = cost;
            split.bin = occupied[j] + 1;
        }
    }
    split
}

/// Reorders `records` so that those for which `left` holds come first; returns how many, and
/// what each side spans. From both ends at once, swapping only the records on the wrong side
/// of each other; the order depends only on the input, so the tree does too.
fn partition(records: &mut [Record], left: impl Fn(&Record) -> bool) -> Parted {
    let (mut l, mut r) = (Extent::EMPTY, Extent::EMPTY);
    let (mut i, mut j) = (0, records.len());
    loop {
        while i < j && left(&records[i]) {
            l.add(&records[i]);
            i += 1;
        }
        while i < j && !left(&records[j - 1]) {
            r.add(&records[j - 1]);
            j -= 1;
        }
        if i == j {
            return (i, l, r);
        }
        // `records[i]` belongs right and `records[j - 1]` left.
        r.add(&records[i]);
        l.add(&records[j - 1]);
        records.swap(i, j - 1);
        i += 1;
        j -= 1;
    }
}
