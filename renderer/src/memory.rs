//! How much memory a command may use: what the machine has free, sizes given on the command
//! line (`--max-memory 512M`) and sizes shown to people (`1.5 GiB`).
//!
//! Commands that decode user files whose size they cannot know in advance (`raylb compare`)
//! check what decoding would take against this before allocating, so that a small file
//! declaring an enormous image is refused in one line instead of exhausting the machine.
//! The largest buffers sized from input (decoded images, a scene's triangles and its
//! structure's arrays, a benchmark's deques) are allocated fallibly too, through
//! [`try_zeroed`] and [`try_reserve`]: an estimate can be short of what the allocator finds
//! (`ulimit -v` counts address space that a vector reserves ahead of its use), and what
//! would otherwise abort the process is then an [`AllocError`] naming the buffer.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// Memory the process can still allocate, and which limit that figure comes from.
///
/// ```
/// use renderer::memory::available;
///
/// // On Linux, at least /proc/meminfo says something.
/// if let Some(free) = available() {
///     assert!(free.bytes > 0);
///     assert!(!free.source.is_empty());
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Available {
    /// Bytes.
    pub bytes: u64,
    /// What limited it, in words: `MemAvailable in /proc/meminfo`, `cgroup memory.max` or
    /// `address-space limit`.
    pub source: &'static str,
}

/// The memory a command keeps to, and where that figure comes from.
///
/// ```
/// use renderer::memory::Budget;
///
/// let budget = Budget::of(Some(1 << 30)).unwrap();
/// assert_eq!((budget.bytes, budget.source.as_str()), (1 << 30, "--max-memory"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Bytes.
    pub bytes: u64,
    /// Where the figure comes from, for messages: `--max-memory`, or a limit of
    /// [`available`].
    pub source: String,
}

impl Budget {
    /// `--max-memory` when given, else what the machine has free; `None` when neither is
    /// known (no limit can be kept to).
    ///
    /// ```
    /// use renderer::memory::{Budget, available};
    ///
    /// assert_eq!(Budget::of(Some(4096)).unwrap().bytes, 4096);
    /// // Without --max-memory, the machine's own limit, where it reports one.
    /// assert_eq!(Budget::of(None).is_some(), available().is_some());
    /// ```
    pub fn of(max_memory: Option<u64>) -> Option<Self> {
        match max_memory {
            Some(bytes) => Some(Self {
                bytes,
                source: "--max-memory".into(),
            }),
            None => available().map(|a| Self {
                bytes: a.bytes,
                source: a.source.into(),
            }),
        }
    }

    /// Whether this budget is the address space left under `ulimit -v`, where what a thread
    /// reserves counts as much as what it fills ([`thread_address_space`]).
    ///
    /// ```
    /// use renderer::memory::Budget;
    ///
    /// assert!(!Budget::of(Some(1 << 30)).unwrap().counts_address_space());
    /// ```
    pub fn counts_address_space(&self) -> bool {
        self.source.starts_with(ADDRESS_SPACE)
    }

    /// What is left of this budget once `used` bytes are taken: for `--max-memory`, the
    /// figure less `used`; for the machine's own limits, what they say now (the use so far is
    /// already counted there).
    ///
    /// ```
    /// use renderer::memory::Budget;
    ///
    /// let left = Budget::of(Some(3 << 20)).unwrap().after(1 << 20).unwrap();
    /// assert_eq!(left.bytes, 2 << 20);
    /// assert_eq!(left.source, "--max-memory less 1.0 MiB for the scene");
    /// ```
    pub fn after(&self, used: u64) -> Option<Self> {
        if self.source == "--max-memory" {
            Some(Self {
                bytes: self.bytes.saturating_sub(used),
                source: format!("--max-memory less {} for the scene", format_bytes(used)),
            })
        } else {
            Budget::of(None)
        }
    }
}

const MEMINFO: &str = "MemAvailable in /proc/meminfo";
const CGROUP: &str = "cgroup memory.max";
const CGROUP_V1: &str = "cgroup memory.limit_in_bytes";
const ADDRESS_SPACE: &str = "address-space limit";

/// The smallest of the limits Linux reports: the memory the kernel thinks can be allocated
/// without swapping (`MemAvailable`), the room left under the cgroup v2 limit of this process's
/// group and of each group above it (`memory.max` less `memory.current`, where a limit is set),
/// the same under a cgroup v1 memory controller (`memory.limit_in_bytes` less
/// `memory.usage_in_bytes`), and the address space left under `ulimit -v` (the limit less what is mapped, where it is not
/// unlimited). `None` where none of these can be read (not Linux, or `/proc` not mounted).
///
/// ```
/// use renderer::memory::available;
///
/// match available() {
///     Some(free) => println!("{} free ({})", renderer::memory::format_bytes(free.bytes), free.source),
///     None => println!("this system does not say"),
/// }
/// # if cfg!(target_os = "linux") { assert!(available().is_some()); }
/// ```
pub fn available() -> Option<Available> {
    let meminfo = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| meminfo_available(&text))
        .map(|bytes| Available {
            bytes,
            source: MEMINFO,
        });
    let cgroup = cgroup_room().map(|bytes| Available {
        bytes,
        source: CGROUP,
    });
    let cgroup_v1 = fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|text| cgroup_v1_room(Path::new("/sys/fs/cgroup/memory"), &text))
        .map(|bytes| Available {
            bytes,
            source: CGROUP_V1,
        });
    let address_space = address_space_room().map(|bytes| Available {
        bytes,
        source: ADDRESS_SPACE,
    });
    least([meminfo, cgroup, cgroup_v1, address_space])
}

/// The smallest of the limits that could be read, with its source.
fn least(limits: [Option<Available>; 4]) -> Option<Available> {
    limits.into_iter().flatten().min_by_key(|a| a.bytes)
}

/// `MemAvailable` from the text of `/proc/meminfo` (given there in KiB).
fn meminfo_available(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix("MemAvailable:")?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// The least room left under `memory.max` in this process's cgroup and those above it.
fn cgroup_room() -> Option<u64> {
    let root = Path::new("/sys/fs/cgroup");
    let own = fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|text| cgroup_v2_path(&text));
    cgroup_levels(root, own.as_deref())
        .iter()
        .filter_map(|dir| {
            let max = fs::read_to_string(dir.join("memory.max")).ok()?;
            let current = fs::read_to_string(dir.join("memory.current")).ok()?;
            let stat = fs::read_to_string(dir.join("memory.stat")).unwrap_or_default();
            cgroup_limit_room(&max, &current, &stat)
        })
        .min()
}

/// The least room left under a cgroup v1 memory controller mounted at `root`, in this
/// process's group (named in `proc_cgroup`, the text of `/proc/self/cgroup`) and those above
/// it: `memory.limit_in_bytes` less `memory.usage_in_bytes` and less the reclaimable cache
/// (`total_inactive_file` of `memory.stat`), where a limit is set.
fn cgroup_v1_room(root: &Path, proc_cgroup: &str) -> Option<u64> {
    let own = cgroup_v1_memory_path(proc_cgroup)?;
    cgroup_levels(root, Some(&own))
        .iter()
        .filter_map(|dir| {
            let limit = fs::read_to_string(dir.join("memory.limit_in_bytes")).ok()?;
            // v1 writes "no limit" as the largest page-aligned count, about 2^63.
            if limit.trim().parse::<u64>().ok()? >= 1 << 62 {
                return None;
            }
            let usage = fs::read_to_string(dir.join("memory.usage_in_bytes")).ok()?;
            let stat = fs::read_to_string(dir.join("memory.stat")).unwrap_or_default();
            // The hierarchy's count where v1 gives one, else the group's own.
            let inactive = stat
                .lines()
                .find(|l| l.starts_with("total_inactive_file "))
                .or_else(|| stat.lines().find(|l| l.starts_with("inactive_file ")))
                .map_or(String::new(), |l| l.trim_start_matches("total_").to_owned());
            cgroup_limit_room(&limit, &usage, &inactive)
        })
        .min()
}

/// The path of this process's group under the cgroup v1 memory controller (the
/// `N:...memory...:/PATH` line of `/proc/self/cgroup`).
fn cgroup_v1_memory_path(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then(|| path.trim().to_owned())
    })
}

/// The cgroup v2 path of this process (the `0::/PATH` line of `/proc/self/cgroup`).
fn cgroup_v2_path(text: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(|path| path.trim().to_owned())
}

/// The directories of the cgroup at `own` (relative to `root`) and of every group above it,
/// up to and including `root` itself.
fn cgroup_levels(root: &Path, own: Option<&str>) -> Vec<PathBuf> {
    let mut levels = Vec::new();
    if let Some(own) = own {
        let mut path = Path::new(own.trim_start_matches('/'));
        while !path.as_os_str().is_empty() {
            levels.push(root.join(path));
            path = path.parent().unwrap_or(Path::new(""));
        }
    }
    levels.push(root.to_path_buf());
    levels
}

/// `memory.max` less what the group uses and cannot give back, from the files' texts: its
/// `memory.current` counts the page cache too, which the kernel reclaims before it refuses an
/// allocation, so the inactive file cache (`inactive_file` of `memory.stat`) is not counted as
/// used (the "working set" of container runtimes). `None` where there is no limit (`max`) or a
/// file does not hold a number.
fn cgroup_limit_room(max: &str, current: &str, stat: &str) -> Option<u64> {
    let max: u64 = max.trim().parse().ok()?;
    let current: u64 = current.trim().parse().ok()?;
    let reclaimable = stat
        .lines()
        .find_map(|line| line.strip_prefix("inactive_file "))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current.saturating_sub(reclaimable)))
}

/// The address space left under `ulimit -v`, where one is set: see [`thread_address_space`].
///
/// ```
/// use renderer::memory::{address_space_left, available};
///
/// // Where `ulimit -v` is set, what is left of it bounds what is available.
/// if let (Some(left), Some(free)) = (address_space_left(), available()) {
///     assert!(free.bytes <= left);
/// }
/// ```
pub fn address_space_left() -> Option<u64> {
    address_space_room()
}

/// The address space `threads` new threads take, used or not: each its stack
/// ([`balancers::worker_stack_size`]) and the malloc arena glibc reserves for a thread that
/// allocates, 64 MiB of address space on a 64-bit system. Under `ulimit -v` these fill the
/// limit long before the memory is used, and a frame that fits its data can still fail to
/// allocate a few bytes.
///
/// ```
/// use renderer::memory::thread_address_space;
///
/// // At least a 64 MiB malloc arena a thread.
/// assert!(thread_address_space(4) >= 4 * (64 << 20));
/// assert_eq!(thread_address_space(0), 0);
/// ```
pub fn thread_address_space(threads: usize) -> u64 {
    const ARENA: u64 = 64 << 20;
    let stack = balancers::worker_stack_size() as u64;
    (threads as u64).saturating_mul(ARENA.saturating_add(stack))
}

/// The address space left under the soft `ulimit -v`: the limit less the process's `VmSize`.
fn address_space_room() -> Option<u64> {
    let limit = address_space_limit(&fs::read_to_string("/proc/self/limits").ok()?)?;
    let mapped = fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|text| status_vm_size(&text))
        .unwrap_or(0);
    Some(limit.saturating_sub(mapped))
}

/// The soft limit of `Max address space` from the text of `/proc/self/limits`; `None` when it
/// is unlimited.
fn address_space_limit(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    let soft = line
        .strip_prefix("Max address space")?
        .split_whitespace()
        .next()?;
    soft.parse().ok()
}

/// `VmSize` from the text of `/proc/self/status` (given there in KiB).
fn status_vm_size(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix("VmSize:")?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// A buffer that could not be allocated: its size and what it was for.
///
/// ```
/// use renderer::memory::try_zeroed;
///
/// // More than any machine has: an error naming the buffer, not an abort.
/// let failed = try_zeroed::<u64>(usize::MAX / 16, "the film").unwrap_err();
/// assert_eq!(failed.what, "the film");
/// assert!(failed.to_string().starts_with("cannot allocate"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocError {
    /// Bytes asked for; `None` where their count overflows the address space.
    pub bytes: Option<u64>,
    /// What the buffer holds, as a message names it: `the decoded samples`.
    pub what: &'static str,
}

impl fmt::Display for AllocError {
    /// `cannot allocate 4.0 GiB for the decoded samples: out of memory`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bytes {
            Some(bytes) => write!(
                f,
                "cannot allocate {} for {}: out of memory",
                format_bytes(bytes),
                self.what
            ),
            None => write!(
                f,
                "cannot allocate {}: more bytes than can be addressed",
                self.what
            ),
        }
    }
}

impl std::error::Error for AllocError {}

impl AllocError {
    /// The error of asking for `count` elements of `T` for `what`.
    fn of<T>(count: usize, what: &'static str) -> Self {
        Self {
            bytes: (count as u64).checked_mul(size_of::<T>() as u64),
            what,
        }
    }
}

/// `len` zeroed elements, or an error where the memory cannot be had. Zeroed pages come
/// from the allocator as such (`calloc`), so a buffer the caller then fills is not written
/// twice.
///
/// ```
/// use renderer::memory::try_zeroed;
///
/// let sums: Vec<[u64; 3]> = try_zeroed(1024, "the sums")?;
/// assert!(sums.iter().all(|s| *s == [0; 3]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn try_zeroed<T: bytemuck::Zeroable>(
    len: usize,
    what: &'static str,
) -> Result<Vec<T>, AllocError> {
    bytemuck::allocation::try_zeroed_vec(len).map_err(|()| AllocError::of::<T>(len, what))
}

/// Room in `v` for `additional` more elements (amortised, as `push` grows it), or an error
/// where the memory cannot be had.
///
/// ```
/// use renderer::memory::try_reserve;
///
/// let mut rays: Vec<u32> = Vec::new();
/// try_reserve(&mut rays, 100, "the rays")?;
/// assert!(rays.capacity() >= 100);
/// assert!(try_reserve(&mut rays, usize::MAX, "the rays").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn try_reserve<T>(
    v: &mut Vec<T>,
    additional: usize,
    what: &'static str,
) -> Result<(), AllocError> {
    v.try_reserve(additional)
        .map_err(|_| AllocError::of::<T>(v.len().saturating_add(additional), what))
}

/// Room in `v` for exactly `additional` more elements, or an error where the memory cannot
/// be had.
///
/// ```
/// use renderer::memory::try_reserve_exact;
///
/// let mut pixels: Vec<u8> = Vec::new();
/// try_reserve_exact(&mut pixels, 300, "the image")?;
/// assert!(pixels.capacity() >= 300);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn try_reserve_exact<T>(
    v: &mut Vec<T>,
    additional: usize,
    what: &'static str,
) -> Result<(), AllocError> {
    v.try_reserve_exact(additional)
        .map_err(|_| AllocError::of::<T>(v.len().saturating_add(additional), what))
}

/// An empty vector with room for exactly `capacity` elements, or an error where the memory
/// cannot be had.
///
/// ```
/// use renderer::memory::try_with_capacity;
///
/// let tiles: Vec<u32> = try_with_capacity(64, "the tiles")?;
/// assert!(tiles.is_empty() && tiles.capacity() >= 64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn try_with_capacity<T>(capacity: usize, what: &'static str) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    try_reserve_exact(&mut v, capacity, what)?;
    Ok(v)
}

/// Binary units, smallest first, as `format_bytes` writes them and `byte_size` reads them.
const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// A size from the command line: a whole number of bytes (`2000000`), or a number with a binary
/// unit (`512K`, `4G`, `1.5GiB`, `64 MiB`; `K`, `M`, `G`, `T`, `P` or `E`, with or without `iB`,
/// any case). Decimal units (`MB`) are refused rather than guessed at; zero, negative and
/// non-numbers, and sizes beyond 2⁶⁴ − 1 bytes are refused too.
///
/// Our own rather than a crate's (`bytesize`, `parse-size`): they take decimal units as
/// powers of ten, where raylb refuses them, and their errors do not say which units it takes.
///
/// ```
/// use renderer::memory::byte_size;
///
/// assert_eq!(byte_size("512K"), Ok(512 << 10));
/// assert_eq!(byte_size("1.5GiB"), Ok(3 << 29));
/// assert_eq!(byte_size("2000000"), Ok(2_000_000));
/// assert!(byte_size("4MB").is_err());
/// assert!(byte_size("0").is_err());
/// ```
pub fn byte_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = (&text[..split], text[split..].trim());
    if number.is_empty() {
        return Err(if text.starts_with('-') {
            format!("`{text}`: a size must be more than 0 bytes")
        } else {
            format!("`{text}` is not a size; write e.g. 512M, 4G, 1.5GiB or 2000000 (bytes)")
        });
    }
    let shift = unit_shift(unit).ok_or_else(|| {
        format!("`{text}`: unknown unit `{unit}`; use K, M, G, T, P or E (binary: 1K = 1024 bytes), or none for bytes")
    })?;
    let bytes = if let Ok(whole) = number.parse::<u64>() {
        whole
            .checked_mul(1 << shift)
            .ok_or_else(|| format!("`{text}` is more than 2^64 − 1 bytes"))?
    } else {
        let value: f64 = number
            .parse()
            .map_err(|_| format!("`{text}`: `{number}` is not a number"))?;
        let bytes = (value * (1u64 << shift) as f64).floor();
        // 2^64 is the first f64 that `as u64` would saturate.
        if bytes >= 18_446_744_073_709_551_616.0 {
            return Err(format!("`{text}` is more than 2^64 − 1 bytes"));
        }
        bytes as u64
    };
    if bytes == 0 {
        return Err(format!("`{text}`: a size must be at least 1 byte"));
    }
    Ok(bytes)
}

/// The power of two of a unit as `byte_size` accepts it: `""`/`B` → 0, `K`/`KiB` → 10, …
fn unit_shift(unit: &str) -> Option<u32> {
    let unit = unit.to_ascii_uppercase();
    if unit.is_empty() || unit == "B" {
        return Some(0);
    }
    let letter = unit.strip_suffix("IB").unwrap_or(&unit);
    let index = UNITS[1..]
        .iter()
        .position(|u| u[..1].eq_ignore_ascii_case(letter))?;
    Some(10 * (index as u32 + 1))
}

/// `512 B`, `64.0 KiB`, `1.5 GiB`: one decimal in the largest binary unit that keeps the figure
/// at least 1.
///
/// ```
/// use renderer::memory::format_bytes;
///
/// assert_eq!(format_bytes(512), "512 B");
/// assert_eq!(format_bytes(64 << 10), "64.0 KiB");
/// assert_eq!(format_bytes(3 << 29), "1.5 GiB");
/// ```
pub fn format_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = 0;
    // Stop where one decimal would round up to 1024.0 of a unit: show the next unit instead.
    while value >= 1023.95 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_and_without_units() {
        assert_eq!(byte_size("2000000"), Ok(2_000_000));
        assert_eq!(byte_size("512M"), Ok(512 << 20));
        assert_eq!(byte_size("512m"), Ok(512 << 20));
        assert_eq!(byte_size("4G"), Ok(4 << 30));
        assert_eq!(byte_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(byte_size("64 KiB"), Ok(64 << 10));
        assert_eq!(byte_size("100B"), Ok(100));
        assert_eq!(byte_size("0.5K"), Ok(512));
        assert_eq!(byte_size("15E"), Ok(15 << 60));
    }

    #[test]
    fn sizes_refused() {
        for (text, why) in [
            ("0", "at least 1 byte"),
            ("0.0001", "at least 1 byte"),
            ("0G", "at least 1 byte"),
            ("-1G", "more than 0"),
            ("NaN", "not a size"),
            ("inf", "not a size"),
            ("", "not a size"),
            ("G", "not a size"),
            ("1.2.3M", "not a number"),
            ("512MB", "unknown unit"),
            ("4 gigs", "unknown unit"),
            ("16E", "2^64"),
            ("18446744073709551616", "2^64"),
            ("99999999999999999999999T", "2^64"),
        ] {
            let error = byte_size(text).expect_err(text);
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn bytes_formatted() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1024), "1.0 KiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
        assert_eq!(format_bytes(2 << 30), "2.0 GiB");
        assert_eq!(format_bytes((1 << 30) - 1), "1.0 GiB");
        assert_eq!(format_bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn allocations_beyond_the_address_space_are_errors() {
        let error = try_zeroed::<u64>(usize::MAX / 4, "a test's samples").unwrap_err();
        assert_eq!(error.bytes, None);
        assert_eq!(
            error.to_string(),
            "cannot allocate a test's samples: more bytes than can be addressed"
        );
        // Addressable in size, but more than any machine has.
        let error = try_with_capacity::<u8>(isize::MAX as usize, "a test's array").unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot allocate 8.0 EiB for a test's array: out of memory"
        );
        let mut v = vec![1u32; 3];
        assert!(try_reserve(&mut v, usize::MAX / 2, "more").is_err());
        assert_eq!(
            v,
            [1, 1, 1],
            "a failed reservation leaves the vector as it was"
        );
        assert_eq!(try_zeroed::<u16>(4, "four").unwrap(), [0; 4]);
    }

    #[test]
    fn meminfo_and_limits_parsed() {
        let meminfo =
            "MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   12288000 kB\n";
        assert_eq!(meminfo_available(meminfo), Some(12_288_000 * 1024));
        assert_eq!(meminfo_available("MemTotal: 5 kB\n"), None);

        assert_eq!(cgroup_limit_room("max\n", "1000\n", ""), None);
        assert_eq!(cgroup_limit_room("4096\n", "1000\n", ""), Some(3096));
        assert_eq!(cgroup_limit_room("4096\n", "5000\n", ""), Some(0));
        // Page cache the kernel can reclaim is room.
        let stat = "anon 1000\nfile 3000\ninactive_file 2500\nactive_file 500\n";
        assert_eq!(cgroup_limit_room("4096\n", "4000\n", stat), Some(2596));

        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max address space         unlimited            unlimited            bytes     \n";
        assert_eq!(address_space_limit(limits), None);
        let limited = limits.replace(
            "Max address space         unlimited",
            "Max address space         1073741824",
        );
        assert_eq!(address_space_limit(&limited), Some(1 << 30));
        assert_eq!(
            status_vm_size("Name:\traylb\nVmSize:\t  2048 kB\n"),
            Some(2 << 20)
        );
    }

    #[test]
    fn a_cgroup_v1_memory_limit_is_read_at_every_level() {
        let root = tempfile::tempdir().unwrap();
        let group = root.path().join("docker/abc");
        fs::create_dir_all(&group).unwrap();
        let write = |dir: &Path, limit: u64, usage: u64, inactive: u64| {
            fs::write(dir.join("memory.limit_in_bytes"), format!("{limit}\n")).unwrap();
            fs::write(dir.join("memory.usage_in_bytes"), format!("{usage}\n")).unwrap();
            let stat = format!("cache 5\ninactive_file 1\ntotal_inactive_file {inactive}\n");
            fs::write(dir.join("memory.stat"), stat).unwrap();
        };
        let proc = "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n";
        assert_eq!(cgroup_v1_memory_path(proc).as_deref(), Some("/docker/abc"));
        // No limit anywhere: the root's "unlimited" figure.
        write(root.path(), 9_223_372_036_854_771_712, 1 << 30, 0);
        assert_eq!(cgroup_v1_room(root.path(), proc), None);
        // The group's limit, less what it uses and cannot give back.
        write(&group, 512 << 20, 300 << 20, 100 << 20);
        assert_eq!(cgroup_v1_room(root.path(), proc), Some(312 << 20));
        // A tighter limit on the level above.
        write(&root.path().join("docker"), 256 << 20, 200 << 20, 0);
        assert_eq!(cgroup_v1_room(root.path(), proc), Some(56 << 20));
        // No memory controller named: nothing to read.
        assert_eq!(cgroup_v1_room(root.path(), "0::/\n"), None);
    }

    #[test]
    fn cgroup_levels_walk_up_to_the_root() {
        assert_eq!(
            cgroup_v2_path("0::/user.slice/a.scope\n"),
            Some("/user.slice/a.scope".into())
        );
        assert_eq!(cgroup_v2_path("1:memory:/x\n"), None);
        let root = Path::new("/sys/fs/cgroup");
        assert_eq!(
            cgroup_levels(root, Some("/user.slice/a.scope")),
            [
                root.join("user.slice/a.scope"),
                root.join("user.slice"),
                root.to_path_buf()
            ]
        );
        assert_eq!(cgroup_levels(root, Some("/")), [root.to_path_buf()]);
        assert_eq!(cgroup_levels(root, None), [root.to_path_buf()]);
    }

    #[test]
    fn available_is_the_smallest_limit_that_could_be_read() {
        let limit = |bytes, source| Some(Available { bytes, source });
        let found = least([
            limit(8 << 30, MEMINFO),
            None,
            limit(3 << 30, CGROUP_V1),
            limit(5 << 30, ADDRESS_SPACE),
        ])
        .unwrap();
        assert_eq!((found.bytes, found.source), (3 << 30, CGROUP_V1));
        let found = least([limit(8 << 30, MEMINFO), limit(9 << 30, CGROUP), None, None]);
        assert_eq!(found.map(|a| a.source), Some(MEMINFO));
        assert!(least([None, None, None, None]).is_none());
    }

    /// This machine's figure, read live. `MemAvailable` moves as the other tests allocate, so
    /// it is not compared with a second reading; the choice itself is tested above.
    #[test]
    fn available_names_one_of_its_sources_on_linux() {
        let Some(found) = available() else {
            assert!(
                fs::read_to_string("/proc/meminfo").is_err(),
                "/proc/meminfo is readable but gave no figure"
            );
            return;
        };
        assert!(found.bytes > 0);
        assert!(
            [MEMINFO, CGROUP, CGROUP_V1, ADDRESS_SPACE].contains(&found.source),
            "{}",
            found.source
        );
    }
}
