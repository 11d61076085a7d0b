//! What the host must know of the kernels' shape: launch sizes, the balancers' codes, the
//! figures each worker writes back, the error bits, a deque's head and the ray counts.

use bytemuck::{Pod, Zeroable};

shared_constants! {
    KERNEL_CONSTANTS;
    /// Lanes of a warp.
    #[c(Int)]
    pub const WARP: u32 = 32;
    /// Warps in a block of the persistent kernel.
    #[c(Int)]
    pub const WARPS_PER_BLOCK: u32 = 4;
    /// Ray tasks a persistent warp's shared-memory buffer holds: two per lane, the most
    /// children one step can spawn.
    #[c(Int)]
    pub const BUFFER: u32 = 2 * WARP;
    /// Threads of a `cuda-managed` block.
    #[c(Int)]
    pub const MANAGED_THREADS: u32 = 128;
    /// Figures kept per worker ([`Stat`] indexes them), with room to spare.
    #[c(Int)]
    pub const STAT_SLOTS: usize = 16;
}

/// Threads of a persistent block.
pub const PERSISTENT_THREADS: u32 = WARPS_PER_BLOCK * WARP;

shared_enum! {
    /// The figures a persistent warp (or a `cuda-managed` block slot) writes back, by slot.
    #[c(RL_ST, Int)]
    ///
    /// ```
    /// use layout::kernel::{STAT_SLOTS, Stat};
    ///
    /// // One worker's figures as the host reads them back, a slot each.
    /// let mut figures = [0u64; STAT_SLOTS];
    /// figures[Stat::StealAttempts as usize] = 5;
    /// assert_eq!(figures[7], 5);
    /// assert!(Stat::ALL.len() <= STAT_SLOTS);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Stat {
        /// Tiles started.
        Tiles = 0,
        /// Camera rays traced.
        Camera = 1,
        /// Shadow rays traced.
        Shadow = 2,
        /// Reflection rays traced.
        Reflection = 3,
        /// Refraction rays traced.
        Refraction = 4,
        /// Warp steps.
        Steps = 5,
        /// Active lanes summed over steps.
        ActiveLanes = 6,
        /// Steal attempts.
        StealAttempts = 7,
        /// Successful steals.
        StealSuccesses = 8,
        /// Tasks brought back by steals.
        TasksStolen = 9,
        /// Clock cycles spent tracing and taking work.
        BusyCycles = 10,
        /// Clock cycles with nothing to trace.
        IdleCycles = 11,
        /// Most tasks in the warp's deque at once.
        PeakQueued = 12,
        /// Child tasks spawned.
        Spawned = 13,
    }
}

const _: () = assert!(Stat::ALL.len() <= STAT_SLOTS);

shared_enum! {
    /// Where a persistent warp's next tile comes from: the balancer.
    #[c(RL_MODE, Unsigned)]
    ///
    /// ```
    /// use layout::kernel::Mode;
    ///
    /// // The parameter structs carry the code; the position in `ALL` gives the balancer back.
    /// let code = Mode::Counter as u32;
    /// assert_eq!(Mode::ALL[code as usize], Mode::Counter);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Mode {
        /// An interleaved share of the tiles, fixed up front.
        Static = 0,
        /// A global counter.
        Counter = 1,
        /// The warp's own deque, then other warps' deques.
        Stealing = 2,
    }
}

shared_enum! {
    /// The warps' deques under `stealing`.
    #[c(RL_DEQUE, Unsigned)]
    ///
    /// ```
    /// use layout::kernel::WarpDeque;
    ///
    /// assert_eq!(WarpDeque::ALL, [WarpDeque::Locked, WarpDeque::NonBlocking]);
    /// assert_eq!(WarpDeque::NonBlocking as u32, 1);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum WarpDeque {
        /// A spin lock in the head: the owner takes it for every operation on its deque, a
        /// thief tries it once.
        Locked = 0,
        /// Non-blocking, as Arora, Blumofe and Plaxton's and Chase and Lev's: `top` and `bot`
        /// only grow, task `i` lies at `items[i % capacity]`; a thief claims the oldest task
        /// with a compare-and-swap on `top`, the owner only when it takes the last one.
        NonBlocking = 1,
    }
}

shared_enum! {
    /// The bits of the error word the kernels set and the host reads back.
    #[c(RL_ERROR, Unsigned)]
    ///
    /// ```
    /// use layout::kernel::ErrorBit;
    ///
    /// // The error word a launch wrote back, split into its bits.
    /// let word = ErrorBit::StackFull as u32;
    /// let set: Vec<ErrorBit> = ErrorBit::ALL
    ///     .iter()
    ///     .copied()
    ///     .filter(|&b| word & b as u32 != 0)
    ///     .collect();
    /// assert_eq!(set, [ErrorBit::StackFull]);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum ErrorBit {
        /// A warp's deque overflowed.
        DequeFull = 1,
        /// A `cuda-managed` block's task stack overflowed.
        StackFull = 2,
    }
}

shared_struct! {
    /// The head of one warp's deque. In the locked deque ([`WarpDeque::Locked`]) `lock` guards
    /// `top` and `bot`: every access to them happens between taking and releasing the lock.
    /// The owner alone pushes and pops at `bot` and alone resets the deque to empty; thieves
    /// only advance `top`. In the non-blocking deque `lock` is unused and `top` and `bot` only
    /// grow. The host allocates the heads zeroed.
    #[c(rl_deque_head, size = 16)]
    ///
    /// ```
    /// use layout::kernel::DequeHead;
    ///
    /// // The host allocates the heads zeroed: unlocked and empty.
    /// let heads = vec![<DequeHead as bytemuck::Zeroable>::zeroed(); 4];
    /// assert!(heads.iter().all(|h| h.lock == 0 && h.top == h.bot));
    /// assert_eq!(bytemuck::cast_slice::<DequeHead, u8>(&heads).len(), 4 * 16);
    /// ```
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
    #[repr(C)]
    pub struct DequeHead {
        /// 0 free, 1 held (the locked deque).
        #[offset(0)]
        pub lock: u32,
        /// The oldest task's index.
        #[offset(4)]
        pub top: u32,
        /// One past the newest task's index.
        #[offset(8)]
        pub bot: u32,
        /// Zero: rounds the head to 16 bytes.
        #[offset(12)]
        pub pad: u32,
    }
}

shared_struct! {
    /// Rays one worker traced, by kind (the renderer's `RayCounts`).
    #[c(rl_counts, size = 32)]
    ///
    /// ```
    /// use layout::kernel::Counts;
    ///
    /// // Two workers' counts, read back from the device as words, in the field order.
    /// let words: [u64; 8] = [10, 4, 2, 1, 6, 3, 0, 0];
    /// let counts: &[Counts] = bytemuck::cast_slice(&words);
    /// assert_eq!(counts[1], Counts { camera: 6, shadow: 3, ..Counts::default() });
    /// assert_eq!(counts.iter().map(|c| c.camera).sum::<u64>(), 16);
    /// ```
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
    #[repr(C)]
    pub struct Counts {
        /// Camera rays.
        #[offset(0)]
        pub camera: u64,
        /// Shadow rays.
        #[offset(8)]
        pub shadow: u64,
        /// Reflection rays.
        #[offset(16)]
        pub reflection: u64,
        /// Refraction rays.
        #[offset(24)]
        pub refraction: u64,
    }
}
