//! Rays as files, so that any tracer can be put beside raylb on the very same rays: the rays
//! of a frame by kind (`raylb bench trace --dump`), read back by `raylb bench trace
//! --ray-file` and by benchmarks outside the project.
//!
//! The format, little-endian throughout:
//!
//! | bytes | what |
//! | --- | --- |
//! | 8 | `RAYLBRAY` |
//! | 4 | `u32` version, 1 |
//! | 4 | `u32` query: 0 closest hit, 1 occlusion (any hit within the interval) |
//! | 8 | `u64` count |
//! | 32 × count | per ray, eight `f32`: origin x y z, direction x y z, `t_min`, `t_max` |
//!
//! A ray is `origin + t · direction` for `t` in the open interval `(t_min, t_max)`; directions
//! need not be unit length. A file is refused, in one line, when it is anything else: another
//! magic, version or query, a length other than the count says, a coordinate that is not a
//! finite number, a zero direction, an interval that is not `0 ≤ t_min ≤ t_max` (`t_max`
//! may be infinite), or no rays at all. Nothing is allocated before the length is checked
//! against the count.
//!
//! ```
//! # use renderer::geometry::Ray;
//! # use renderer::math::Vec3;
//! # use renderer::ray_file::{Query, RayFile};
//! let file = RayFile {
//!     query: Query::Occlusion,
//!     rays: vec![Ray::new(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0))],
//! };
//! let mut bytes = Vec::new();
//! file.encode(&mut bytes).unwrap();
//! assert_eq!(bytes.len(), 24 + 32);
//! assert_eq!(RayFile::decode(&mut &bytes[..], bytes.len() as u64).unwrap(), file);
//! ```

use std::io::{self, Read, Write};
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::Path;

use balancers::{Assignment, Balancer, BalancerKind, Choice, Spawn, TaskRunner};

use crate::bvh::TraversalCounters;
use crate::file_errors::io_reason;
use crate::film::Film;
use crate::geometry::Ray;
use crate::input::open_regular_file;
use crate::integrator::{RayRole, RenderTask, TraceObserver, Whitted, WorkerRays, tiles};
use crate::math::Vec3;
use crate::scene::Scene;
use crate::watch::Unwatched;

/// The first eight bytes of a ray file.
pub const MAGIC: &[u8; 8] = b"RAYLBRAY";

/// The version this raylb reads and writes.
pub const VERSION: u32 = 1;

/// Bytes before the first ray.
pub const HEADER_BYTES: u64 = 24;

/// Bytes of one ray.
pub const RAY_BYTES: u64 = 32;

/// The largest ray file read: 2^26 rays (2 GiB), more than a `treasure` frame at 4096² traces
/// of any one kind.
pub const MAX_RAY_FILE_BYTES: u64 = HEADER_BYTES + RAY_BYTES * MAX_RAYS as u64;

/// The most rays a ray file read here holds, and so the most of a frame's rays recorded
/// ([`frame_rays`]): 2^26.
pub const MAX_RAYS: usize = 1 << 26;

/// What is asked of each ray of a file.
///
/// ```
/// use renderer::ray_file::{FrameRays, Query};
///
/// assert_eq!(FrameRays::Shadow.query(), Query::Occlusion);
/// assert_eq!(FrameRays::Camera.query(), Query::ClosestHit);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    /// The nearest hit within the interval (camera, reflection and refraction rays).
    ClosestHit,
    /// Whether anything is hit within the interval (shadow rays).
    Occlusion,
}

impl Query {
    /// The query's number in the file.
    fn code(self) -> u32 {
        match self {
            Self::ClosestHit => 0,
            Self::Occlusion => 1,
        }
    }
}

/// The rays of a file and what is asked of them.
///
/// ```
/// use renderer::geometry::Ray;
/// use renderer::math::Vec3;
/// use renderer::ray_file::{HEADER_BYTES, Query, RAY_BYTES, RayFile};
///
/// let file = RayFile { query: Query::ClosestHit, rays: vec![Ray::new(Vec3::ZERO, Vec3::X); 3] };
/// let mut bytes = Vec::new();
/// file.encode(&mut bytes)?;
/// assert_eq!(bytes.len() as u64, HEADER_BYTES + 3 * RAY_BYTES);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RayFile {
    /// What is asked of every ray.
    pub query: Query,
    /// The rays, in the file's order.
    pub rays: Vec<Ray>,
}

impl RayFile {
    /// Reads the ray file `path`.
    ///
    /// # Errors
    /// What is wrong, in one line without the path (the caller names it): the file cannot
    /// be read, is not a regular file, is larger than [`MAX_RAY_FILE_BYTES`], or is not a ray
    /// file (see the module documentation).
    ///
    /// ```
    /// use renderer::geometry::Ray;
    /// use renderer::math::Vec3;
    /// use renderer::ray_file::{Query, RayFile};
    ///
    /// let file = RayFile { query: Query::Occlusion, rays: vec![Ray::new(Vec3::ZERO, Vec3::Y)] };
    /// let path = std::env::temp_dir().join(format!("raylb-doc-{}.rays", std::process::id()));
    /// file.encode(&mut std::fs::File::create(&path)?)?;
    /// let read = RayFile::read(&path);
    /// std::fs::remove_file(&path)?;
    /// assert_eq!(read?, file);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(path: &Path) -> Result<Self, String> {
        let file = open_regular_file(path, MAX_RAY_FILE_BYTES)?;
        let length = file
            .metadata()
            .map_err(|e| format!("cannot read: {}", io_reason(&e)))?
            .len();
        Self::decode(&mut io::BufReader::new(file), length)
    }

    /// Reads a ray file of `length` bytes from `input`.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    ///
    /// ```
    /// use renderer::ray_file::RayFile;
    ///
    /// let bytes = b"RAYLBRAX and more bytes to make a header";
    /// let e = RayFile::decode(&mut &bytes[..], bytes.len() as u64).unwrap_err();
    /// assert_eq!(e, "not a ray file: it does not begin with RAYLBRAY");
    /// ```
    pub fn decode(input: &mut dyn Read, length: u64) -> Result<Self, String> {
        let mut header = [0u8; HEADER_BYTES as usize];
        read_exact(input, &mut header, length)?;
        if &header[..8] != MAGIC {
            return Err("not a ray file: it does not begin with RAYLBRAY".into());
        }
        let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        let version = word(8);
        if version != VERSION {
            return Err(format!(
                "ray file version {version}; this raylb reads version {VERSION}"
            ));
        }
        let query = match word(12) {
            0 => Query::ClosestHit,
            1 => Query::Occlusion,
            other => {
                return Err(format!(
                    "query {other}: a ray file asks for 0 (closest hit) or 1 (occlusion)"
                ));
            }
        };
        let count = u64::from_le_bytes(header[16..24].try_into().expect("8 bytes"));
        let expected = count
            .checked_mul(RAY_BYTES)
            .and_then(|b| b.checked_add(HEADER_BYTES));
        if expected != Some(length) {
            return Err(format!(
                "{length} bytes, where a ray file of {count} rays has {}",
                expected.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string())
            ));
        }
        if count == 0 {
            return Err("no rays: a ray file holds at least one".into());
        }
        let mut rays = Vec::new();
        rays.try_reserve_exact(count as usize)
            .map_err(|_| format!("no memory for its {count} rays"))?;
        let mut record = [0u8; RAY_BYTES as usize];
        for index in 0..count {
            read_exact(input, &mut record, length)?;
            let f = |k: usize| f32::from_le_bytes(record[4 * k..4 * k + 4].try_into().expect("4"));
            let ray = Ray {
                origin: Vec3::new(f(0), f(1), f(2)),
                dir: Vec3::new(f(3), f(4), f(5)),
                t_min: f(6),
                t_max: f(7),
            };
            check_ray(&ray).map_err(|e| format!("ray {index}: {e}"))?;
            rays.push(ray);
        }
        Ok(Self { query, rays })
    }

    /// Writes the file's bytes to `out`.
    ///
    /// # Errors
    /// When `out` fails.
    ///
    /// ```
    /// use renderer::ray_file::{MAGIC, Query, RayFile};
    ///
    /// let empty = RayFile { query: Query::ClosestHit, rays: Vec::new() };
    /// let mut bytes = Vec::new();
    /// empty.encode(&mut bytes)?;
    /// assert_eq!(&bytes[..8], MAGIC);
    /// assert_eq!(bytes.len(), 24);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encode(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        out.write_all(&self.query.code().to_le_bytes())?;
        out.write_all(&(self.rays.len() as u64).to_le_bytes())?;
        for ray in &self.rays {
            let o = ray.origin;
            let d = ray.dir;
            for x in [o.x, o.y, o.z, d.x, d.y, d.z, ray.t_min, ray.t_max] {
                out.write_all(&x.to_le_bytes())?;
            }
        }
        Ok(())
    }
}

/// Which of a frame's rays: those of one role, or the reflection and refraction rays
/// together (the incoherent rays a frame spawns).
///
/// ```
/// use balancers::Choice;
/// use renderer::ray_file::FrameRays;
///
/// assert_eq!(FrameRays::from_keyword("secondary"), Some(FrameRays::Secondary));
/// assert_eq!(FrameRays::Camera.keyword(), "camera");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameRays {
    /// From the eye, one per pixel and sample.
    Camera,
    /// From each hit towards each light it faces.
    Shadow,
    /// Mirror reflections.
    Reflection,
    /// Refractions.
    Refraction,
    /// Reflections and refractions, in the order they are traced.
    Secondary,
}

balancers::choices!(FrameRays {
    Camera => "camera", "One per pixel and sample, from the camera (coherent).";
    Shadow => "shadow", "From each hit towards each light it faces: occlusion queries.";
    Reflection => "reflection", "The mirror reflections a frame spawns.";
    Refraction => "refraction", "The refractions a frame spawns.";
    Secondary => "secondary", "Every reflection and refraction ray of a frame (incoherent).";
});

impl FrameRays {
    /// Whether a ray of `role` is one of these.
    ///
    /// ```
    /// use renderer::integrator::RayRole;
    /// use renderer::ray_file::FrameRays;
    ///
    /// assert!(FrameRays::Secondary.includes(RayRole::Refraction));
    /// assert!(!FrameRays::Secondary.includes(RayRole::Shadow));
    /// ```
    pub fn includes(self, role: RayRole) -> bool {
        match self {
            Self::Camera => role == RayRole::Camera,
            Self::Shadow => role == RayRole::Shadow,
            Self::Reflection => role == RayRole::Reflection,
            Self::Refraction => role == RayRole::Refraction,
            Self::Secondary => matches!(role, RayRole::Reflection | RayRole::Refraction),
        }
    }

    /// What is asked of these rays: occlusion of shadow rays, the closest hit of the others.
    ///
    /// ```
    /// use renderer::ray_file::{FrameRays, Query};
    ///
    /// assert_eq!(FrameRays::Reflection.query(), Query::ClosestHit);
    /// assert_eq!(FrameRays::Shadow.query(), Query::Occlusion);
    /// ```
    pub fn query(self) -> Query {
        match self {
            Self::Shadow => Query::Occlusion,
            _ => Query::ClosestHit,
        }
    }
}

/// The rays a frame of `scene` traces that `which` names, in the order one worker traces
/// them going through tiles of edge `tile` (each tile's camera rays, each followed by what
/// it spawns, depth first; with the scene's `packets` on, a block's camera rays, then their
/// shadow rays light by light, then their children), as a ray file.
///
/// At most `limit` rays are kept: once the frame traces more of the kind, its remaining tiles
/// are skipped and [`FrameRaysError::MoreThan`] is returned, so that what a frame's rays take
/// stays within what the caller has room for.
///
/// # Errors
/// When the frame traces more than `limit` such rays, when its film cannot be had, or when
/// its one worker cannot be started.
///
/// ```
/// # use renderer::scene::{Scene, SceneOverrides};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/quick.toml");
/// # let small = SceneOverrides { width: Some(32), height: Some(32), ..Default::default() };
/// # let scene = Scene::load(path.as_ref(), small)?;
/// use renderer::ray_file::{FrameRays, MAX_RAYS, Query, frame_rays};
/// use std::num::NonZeroU32;
///
/// let tile = NonZeroU32::new(16).unwrap();
/// let camera = frame_rays(&scene, FrameRays::Camera, tile, MAX_RAYS)?;
/// assert_eq!(camera.query, Query::ClosestHit);
/// assert_eq!(camera.rays.len(), 32 * 32 * scene.samples.offsets().len());
/// // Fewer kept than the frame traces: refused, not cut short.
/// let e = frame_rays(&scene, FrameRays::Camera, tile, 1000).unwrap_err();
/// assert_eq!(e.to_string(), "it traces more than 1000 camera rays");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn frame_rays(
    scene: &Scene,
    which: FrameRays,
    tile: NonZeroU32,
    limit: usize,
) -> Result<RayFile, FrameRaysError> {
    let film = Film::try_new(scene.width, scene.height, false).map_err(FrameRaysError::Frame)?;
    let tasks: Vec<RenderTask> = tiles(scene.width, scene.height, tile)
        .into_iter()
        .map(RenderTask::Tile)
        .collect();
    let recorder = Recorder {
        whitted: Whitted::new(scene, &film, &Unwatched),
        which,
        limit,
    };
    let outcome = BalancerKind::static_tiles(Assignment::Interleaved)
        .run(NonZeroUsize::MIN, &tasks, &recorder)
        .map_err(|e| FrameRaysError::Frame(e.to_string()))?;
    let kept = outcome.locals.into_iter().next().map(|(_, kept)| kept);
    match kept {
        Some(kept) if kept.over => Err(FrameRaysError::MoreThan { limit, which }),
        kept => Ok(RayFile {
            query: which.query(),
            rays: kept.map(|k| k.rays).unwrap_or_default(),
        }),
    }
}

/// Why a frame's rays were not had ([`frame_rays`]).
///
/// ```
/// use renderer::ray_file::{FrameRays, FrameRaysError};
///
/// let e = FrameRaysError::MoreThan { limit: 10, which: FrameRays::Shadow };
/// assert_eq!(e.to_string(), "it traces more than 10 shadow rays");
/// ```
#[derive(Debug, PartialEq, Eq)]
pub enum FrameRaysError {
    /// The frame traces more rays of the kind than were to be kept.
    MoreThan {
        /// The most rays that were to be kept.
        limit: usize,
        /// Their kind.
        which: FrameRays,
    },
    /// The frame could not be rendered: its film, or its worker.
    Frame(String),
}

impl std::fmt::Display for FrameRaysError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MoreThan { limit, which } => {
                write!(f, "it traces more than {limit} {} rays", which.keyword())
            }
            Self::Frame(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for FrameRaysError {}

/// Runs a frame's tasks, keeping up to `limit` of the rays `which` names.
struct Recorder<'a> {
    whitted: Whitted<'a, Unwatched>,
    which: FrameRays,
    limit: usize,
}

/// The rays a worker has traced that `which` names, up to `limit`; `over` once it has traced
/// more.
#[derive(Debug)]
struct KeptRays {
    which: FrameRays,
    rays: Vec<Ray>,
    limit: usize,
    over: bool,
}

impl TraversalCounters for KeptRays {
    #[inline(always)]
    fn box_test(&mut self) {}
    #[inline(always)]
    fn triangle_test(&mut self) {}
}

impl TraceObserver for KeptRays {
    fn ray(&mut self, role: RayRole, ray: &Ray) {
        if self.which.includes(role) {
            if self.rays.len() < self.limit {
                self.rays.push(*ray);
            } else {
                self.over = true;
            }
        }
    }
}

impl TaskRunner<RenderTask> for Recorder<'_> {
    type Local = (WorkerRays, KeptRays);

    fn local(&self, worker: usize) -> Self::Local {
        let kept = KeptRays {
            which: self.which,
            rays: Vec::new(),
            limit: self.limit,
            over: false,
        };
        (self.whitted.local(worker), kept)
    }

    fn run<S: Spawn<RenderTask>>(&self, task: RenderTask, local: &mut Self::Local, spawn: &mut S) {
        let (rays, kept) = local;
        // Past the limit the recording has failed: the frame's other tasks are skipped.
        if !kept.over {
            self.whitted.run_counted(task, rays, kept, spawn);
        }
    }
}

/// Fills `buffer` from `input`; a file that ends early was shorter than its `length` said
/// (it changed while read).
fn read_exact(input: &mut dyn Read, buffer: &mut [u8], length: u64) -> Result<(), String> {
    input.read_exact(buffer).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => {
            format!("{length} bytes, which end before its header and rays do")
        }
        _ => format!("cannot read: {}", io_reason(&e)),
    })
}

/// Refuses a ray no tracer can take.
fn check_ray(ray: &Ray) -> Result<(), &'static str> {
    let finite = |v: Vec3| v.x.is_finite() && v.y.is_finite() && v.z.is_finite();
    if !finite(ray.origin) {
        return Err("its origin is not a finite point");
    }
    if !finite(ray.dir) {
        return Err("its direction is not finite");
    }
    if ray.dir == Vec3::ZERO {
        return Err("its direction is zero");
    }
    if ray.t_min.is_nan() || ray.t_max.is_nan() {
        return Err("its interval has a NaN end");
    }
    if !(ray.t_min >= 0.0 && ray.t_min.is_finite() && ray.t_min <= ray.t_max) {
        return Err("its interval is not 0 ≤ t_min ≤ t_max with a finite t_min");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RayFile {
        RayFile {
            query: Query::ClosestHit,
            rays: vec![
                Ray::new(Vec3::new(1.0, -2.5, 3.25), Vec3::new(0.0, 0.5, -4.0)),
                Ray {
                    origin: Vec3::new(-0.0, f32::MIN_POSITIVE, 1e30),
                    dir: Vec3::new(1e-30, 0.0, 0.0),
                    t_min: 0.25,
                    t_max: 7.5,
                },
            ],
        }
    }

    fn encoded(file: &RayFile) -> Vec<u8> {
        let mut bytes = Vec::new();
        file.encode(&mut bytes).unwrap();
        bytes
    }

    fn decode(bytes: &[u8]) -> Result<RayFile, String> {
        RayFile::decode(&mut &bytes[..], bytes.len() as u64)
    }

    #[test]
    fn round_trips_bit_for_bit() {
        let file = sample();
        let bytes = encoded(&file);
        assert_eq!(bytes.len() as u64, HEADER_BYTES + 2 * RAY_BYTES);
        assert_eq!(&bytes[..8], b"RAYLBRAY");
        assert_eq!(
            bytes[8..24],
            [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]
        );
        let back = decode(&bytes).unwrap();
        assert_eq!(back, file);
        assert!(
            back.rays[1].origin.x.is_sign_negative(),
            "-0 keeps its sign"
        );
        let occlusion = RayFile {
            query: Query::Occlusion,
            ..file
        };
        assert_eq!(encoded(&occlusion)[12], 1);
        assert_eq!(decode(&encoded(&occlusion)).unwrap(), occlusion);
    }

    #[test]
    fn refuses_what_is_not_a_ray_file() {
        let good = encoded(&sample());
        let with = |at: usize, new: &[u8]| {
            let mut b = good.clone();
            b[at..at + new.len()].copy_from_slice(new);
            decode(&b).unwrap_err()
        };
        assert!(with(0, b"RAYLBRAX").starts_with("not a ray file"));
        assert!(with(8, &2u32.to_le_bytes()).starts_with("ray file version 2"));
        assert!(with(12, &2u32.to_le_bytes()).starts_with("query 2"));
        assert!(with(16, &3u64.to_le_bytes()).starts_with("88 bytes, where a ray file of 3 rays"));
        assert!(with(16, &u64::MAX.to_le_bytes()).contains("more than 2^64"));
        let nan = f32::NAN.to_le_bytes();
        assert_eq!(with(24, &nan), "ray 0: its origin is not a finite point");
        assert_eq!(
            with(56 + 16, &f32::INFINITY.to_le_bytes()),
            "ray 1: its direction is not finite"
        );
        let mut zero = good.clone();
        zero[24 + 12..24 + 24].fill(0);
        assert_eq!(decode(&zero).unwrap_err(), "ray 0: its direction is zero");
        assert!(with(24 + 24, &(-1.0f32).to_le_bytes()).starts_with("ray 0: its interval"));
        assert!(with(24 + 28, &nan).starts_with("ray 0: its interval has a NaN"));
        assert!(with(56 + 24, &8.0f32.to_le_bytes()).starts_with("ray 1: its interval"));
        assert!(decode(&good[..20]).unwrap_err().contains("end before"));
        assert!(decode(&[]).unwrap_err().contains("end before"));
        let empty = RayFile {
            query: Query::Occlusion,
            rays: Vec::new(),
        };
        assert_eq!(
            decode(&encoded(&empty)).unwrap_err(),
            "no rays: a ray file holds at least one"
        );
    }

    #[test]
    fn reads_files_and_refuses_others() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rays.bin");
        std::fs::write(&path, encoded(&sample())).unwrap();
        assert_eq!(RayFile::read(&path).unwrap(), sample());
        assert!(
            RayFile::read(dir.path())
                .unwrap_err()
                .starts_with("not a regular file")
        );
    }
}
