//! The vector operations of the box test, for nodes of four and of eight children, and of the
//! box and triangle tests of a packet of eight or sixteen rays (`packet`).
//!
//! Four lanes are SSE (glam's `Vec4`, which falls back to plain floats off x86). Eight are
//! AVX where the processor has AVX2 and FMA (detected at run time: the build never assumes it; that
//! implementation lives beside the traversals compiled for it, in `traverse`, the only code
//! that may make its values), and two SSE halves elsewhere, so that an eight-wide tree runs
//! on any machine. Sixteen (a packet's rays, never a node's children) are one AVX-512
//! register where the processor has it, and two of eight ([`Pair`]) elsewhere. Every operation is the IEEE one lane by lane, the same bits in each
//! implementation (no two are ever fused into one rounding), `min`/`max` give their second
//! operand when either is NaN (SSE's and AVX's rule, and glam's fallback's), and every
//! comparison is false where either operand is NaN. The box test of a single ray is the one
//! exception: AVX takes its distances to the planes in one fused operation, and their maxima,
//! minima and comparison on the bits as integers (`plane_distance`, `max_of_distances` and its
//! kin), which keep every box the floats' operations keep that could hold a hit (`WideRay`
//! in `traverse`).

use glam::Vec4;

/// `W` floats operated on at once.
pub(in crate::bvh) trait Lanes<const W: usize>: Copy {
    fn splat(x: f32) -> Self;
    fn load(a: &[f32; W]) -> Self;
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn div(self, other: Self) -> Self;
    /// The smaller per lane; `other` where either is NaN.
    fn min(self, other: Self) -> Self;
    /// The larger per lane; `other` where either is NaN.
    fn max(self, other: Self) -> Self;
    /// Bit `k` set where lane `k` of `self` is at most lane `k` of `other`.
    fn le_mask(self, other: Self) -> u32;
    /// Bit `k` set where lane `k` of `self` is below lane `k` of `other`.
    fn lt_mask(self, other: Self) -> u32;
    /// Bit `k` set where lane `k` of `self` is above lane `k` of `other`.
    fn gt_mask(self, other: Self) -> u32;
    /// Bit `k` set where lane `k` of `self` equals lane `k` of `other` (`+0` equals `−0`).
    fn eq_mask(self, other: Self) -> u32;
    /// Bit `k` set where lane `k` has its sign bit set (`−0` and negative NaNs included).
    fn sign_mask(self) -> u32;
    fn to_array(self) -> [f32; W];

    /// Whether [`plane_distance`](Self::plane_distance) takes the fused form, whose
    /// `offset` the box test must then work out.
    const FUSED_PLANE_DISTANCE: bool = false;

    /// The box test's distance along a ray to the planes in `self`: `(plane − origin) · inv`,
    /// the octree's arithmetic. AVX's implementation takes `plane · inv − offset` in one fused
    /// operation instead, `offset` being `origin · inv` moved a little towards the side that
    /// makes the test keep more boxes: see `WideRay` (in `traverse`).
    #[inline(always)]
    fn plane_distance(self, origin: Self, inv: Self, offset: Self) -> Self {
        let _ = offset;
        self.sub(origin).mul(inv)
    }

    /// The box test's maximum, for lanes that hold no NaN: the larger of the two where
    /// either has its sign bit clear (`+0` and above), and one of them where both are
    /// negative. Here [`max`](Self::max); AVX's implementation takes the maximum of the bits
    /// as signed integers, which orders floats of sign bit 0 as their values do, in one cycle
    /// rather than four. See `WideRay::boxes` (in `traverse`) for why that is all the
    /// box test needs.
    #[inline(always)]
    fn max_of_distances(self, other: Self) -> Self {
        self.max(other)
    }

    /// The box test's minimum, for lanes that hold no NaN: the smaller of the two where at
    /// most one is negative, and a negative one of them where both are. Here
    /// [`min`](Self::min); AVX's implementation, as [`max_of_distances`](Self::max_of_distances).
    #[inline(always)]
    fn min_of_distances(self, other: Self) -> Self {
        self.min(other)
    }

    /// The box test's comparison, for lanes that hold no NaN where `self` has its sign bit
    /// clear: bit `k` set where lane `k` of `self` is at most lane `k` of `other`, except
    /// that `+0 ≤ −0` may be left clear. Here [`le_mask`](Self::le_mask); AVX's
    /// implementation compares the bits as signed integers.
    #[inline(always)]
    fn le_mask_of_distances(self, other: Self) -> u32 {
        self.le_mask(other)
    }

    /// The [`sort_key`]s of the lanes in `mask` (two or more), `self` holding a distance
    /// along the ray for each (where it enters the child, or where it leaves it), in
    /// increasing order: the nearest first. Entries from the `mask.count_ones()`th on are
    /// unspecified. An insertion sort here; the AVX implementation sorts all eight lanes at
    /// once with a sorting network.
    #[inline(always)]
    fn sorted_keys(self, mask: u32) -> [u32; W] {
        insertion_sorted_keys(&self.to_array(), mask)
    }

    /// The [`sorted_keys`](Self::sorted_keys) of the lanes in `mask` (two or more), and the
    /// key at the end that `LARGEST` names (the last, else the first): the child visited next.
    /// Here taken from the sorted keys; the AVX implementation finds it apart, so that the
    /// next child's load waits for no sorting network.
    #[inline(always)]
    fn sorted_keys_and_next<const LARGEST: bool>(self, mask: u32) -> ([u32; W], u32) {
        let keys = self.sorted_keys(mask);
        let next = if LARGEST {
            keys[mask.count_ones() as usize - 1]
        } else {
            keys[0]
        };
        (keys, next)
    }
}

/// [`Lanes::sorted_keys`] by an insertion sort, of `distances` in an array.
#[inline(always)]
fn insertion_sorted_keys<const W: usize>(distances: &[f32; W], mask: u32) -> [u32; W] {
    let mut keys = [0u32; W];
    let mut len = 0;
    let mut lanes = mask;
    while lanes != 0 {
        let lane = lanes.trailing_zeros() as usize;
        lanes &= lanes - 1;
        let key = sort_key(distances[lane], lane);
        let mut k = len;
        while k > 0 && keys[k - 1] > key {
            keys[k] = keys[k - 1];
            k -= 1;
        }
        keys[k] = key;
        len += 1;
    }
    keys
}

/// A key that orders children by a distance `t` along the ray (where it enters them, or where
/// it leaves them): the bits of `t` with the lane in the three lowest. Keys compare as the distances do where these are of
/// one sign, and ties go to the lower lane; the order only decides how soon a child is
/// visited, never whether it is, and the distance kept with it is its own.
#[inline(always)]
pub(super) fn sort_key(t: f32, lane: usize) -> u32 {
    // A key holds the lane in three bits.
    debug_assert!(lane < 8);
    t.to_bits() & !7 | lane as u32
}

/// The lane of a [`sort_key`].
#[inline(always)]
pub(super) fn key_lane(key: u32) -> usize {
    (key & 7) as usize
}

impl Lanes<4> for Vec4 {
    #[inline(always)]
    fn splat(x: f32) -> Self {
        Vec4::splat(x)
    }
    #[inline(always)]
    fn load(a: &[f32; 4]) -> Self {
        Vec4::from_array(*a)
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
    #[inline(always)]
    fn sub(self, other: Self) -> Self {
        self - other
    }
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        self * other
    }
    #[inline(always)]
    fn div(self, other: Self) -> Self {
        self / other
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        Vec4::min(self, other)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        Vec4::max(self, other)
    }
    #[inline(always)]
    fn le_mask(self, other: Self) -> u32 {
        self.cmple(other).bitmask()
    }
    #[inline(always)]
    fn lt_mask(self, other: Self) -> u32 {
        self.cmplt(other).bitmask()
    }
    #[inline(always)]
    fn gt_mask(self, other: Self) -> u32 {
        self.cmpgt(other).bitmask()
    }
    #[inline(always)]
    fn eq_mask(self, other: Self) -> u32 {
        self.cmpeq(other).bitmask()
    }
    #[inline(always)]
    fn sign_mask(self) -> u32 {
        self.is_negative_bitmask()
    }
    #[inline(always)]
    fn to_array(self) -> [f32; 4] {
        Vec4::to_array(&self)
    }
}

/// Twice the lanes of `V`, as two of it: eight as two SSE halves of four (`Halves`, the
/// portable eight-wide), and sixteen (a packet's rays, where the processor has no sixteen-lane
/// registers) as two of eight. The first half holds the low lanes.
#[derive(Clone, Copy, Debug)]
pub(in crate::bvh) struct Pair<V>([V; 2]);

/// Eight lanes as two halves of four: the portable eight-wide.
pub(in crate::bvh) type Halves = Pair<Vec4>;

/// `Pair<V>` as `$wide` lanes for any `V` of `$half`: each operation on both halves, and the
/// second half's mask bits above the first's.
macro_rules! pair_of {
    ($half:literal, $wide:literal) => {
        impl<V: Lanes<$half>> Lanes<$wide> for Pair<V> {
            #[inline(always)]
            fn splat(x: f32) -> Self {
                Self([V::splat(x); 2])
            }
            #[inline(always)]
            fn load(a: &[f32; $wide]) -> Self {
                // Written out: a closure is compiled without the traversal's target features.
                let (low, high) = a.split_first_chunk::<$half>().expect("two halves");
                let high: &[f32; $half] = high.try_into().expect("two halves");
                Self([V::load(low), V::load(high)])
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                Self([self.0[0].add(o.0[0]), self.0[1].add(o.0[1])])
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                Self([self.0[0].sub(o.0[0]), self.0[1].sub(o.0[1])])
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                Self([self.0[0].mul(o.0[0]), self.0[1].mul(o.0[1])])
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                Self([self.0[0].div(o.0[0]), self.0[1].div(o.0[1])])
            }
            #[inline(always)]
            fn min(self, o: Self) -> Self {
                Self([self.0[0].min(o.0[0]), self.0[1].min(o.0[1])])
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                Self([self.0[0].max(o.0[0]), self.0[1].max(o.0[1])])
            }
            #[inline(always)]
            fn le_mask(self, o: Self) -> u32 {
                self.0[0].le_mask(o.0[0]) | self.0[1].le_mask(o.0[1]) << $half
            }
            #[inline(always)]
            fn lt_mask(self, o: Self) -> u32 {
                self.0[0].lt_mask(o.0[0]) | self.0[1].lt_mask(o.0[1]) << $half
            }
            #[inline(always)]
            fn gt_mask(self, o: Self) -> u32 {
                self.0[0].gt_mask(o.0[0]) | self.0[1].gt_mask(o.0[1]) << $half
            }
            #[inline(always)]
            fn eq_mask(self, o: Self) -> u32 {
                self.0[0].eq_mask(o.0[0]) | self.0[1].eq_mask(o.0[1]) << $half
            }
            #[inline(always)]
            fn sign_mask(self) -> u32 {
                self.0[0].sign_mask() | self.0[1].sign_mask() << $half
            }
            #[inline(always)]
            fn to_array(self) -> [f32; $wide] {
                let mut out = [0.0; $wide];
                out[..$half].copy_from_slice(&self.0[0].to_array());
                out[$half..].copy_from_slice(&self.0[1].to_array());
                out
            }
        }
    };
}

pair_of!(4, 8);
pair_of!(8, 16);
