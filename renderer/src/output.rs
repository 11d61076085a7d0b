//! Files written: images (PNG, OpenEXR, PFM) and JSON reports, written so that a failure never
//! leaves a half-written file or clobbers an existing one.
//!
//! ```
//! use renderer::output::StagedFiles;
//!
//! # let dir = std::env::temp_dir().join(format!("raylb-doc-output-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let mut staged = StagedFiles::new();
//! staged.png(&dir.join("frame.png"), 1, 1, &[255, 128, 0])?;
//! staged.text(&dir.join("report.json"), "{}")?;
//! staged.commit()?;
//! assert!(dir.join("frame.png").exists() && dir.join("report.json").exists());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{self, File};
use std::io::{self, BufWriter, Cursor, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageEncoder};

pub use crate::image_io::{ExrPrecision, ImageFormat};

use crate::file_errors::io_reason;
use crate::film::Film;
use crate::image_io::{encode_exr, encode_pfm};

/// Where an output's bytes go, once the links its path names are followed
/// ([`resolve_output`]).
///
/// ```
/// use std::path::Path;
/// use renderer::output::{OutputTarget, resolve_output};
///
/// assert_eq!(resolve_output(Path::new("/dev/stderr")), Ok(OutputTarget::Stderr));
/// let file = Path::new("frame.png");
/// assert_eq!(resolve_output(file), Ok(OutputTarget::File(file.into())));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// A regular file (or none yet), replaced whole: the path with every symbolic link
    /// followed, so that a link stays a link and its target gets the new contents.
    File(PathBuf),
    /// The process's standard output (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`).
    Stdout,
    /// The process's standard error (`/dev/stderr`, `/dev/fd/2`, `/proc/self/fd/2`).
    Stderr,
}

/// The open descriptor `path` names by its spelling: `/dev/stdout` 1, `/dev/stderr` 2,
/// `/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N` and `/proc/PID/fd/N` with this
/// process's PID N.
fn descriptor_named(path: &Path) -> Option<u32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdin" => return Some(0),
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let own = format!("/proc/{}/fd/", std::process::id());
    [
        "/dev/fd/",
        "/proc/self/fd/",
        "/proc/thread-self/fd/",
        own.as_str(),
    ]
    .iter()
    .find_map(|prefix| text.strip_prefix(prefix))
    .and_then(|n| n.parse().ok())
}

/// Where `path` writes: through any symbolic links to the file they end at, or to standard
/// output or standard error where the path (or a link on the way) names one of those
/// descriptors, as a shell's redirection would. A link that ends at nothing is refused (as
/// `cp` refuses to write through a dangling link), and so is another descriptor.
///
/// # Errors
/// Says why, without the path: a dangling link, a loop of links, a descriptor other than 1
/// and 2, or the system's reason a link cannot be read.
///
/// ```
/// use std::path::Path;
/// use renderer::output::{OutputTarget, resolve_output};
///
/// assert_eq!(resolve_output(Path::new("/dev/fd/1")), Ok(OutputTarget::Stdout));
/// assert!(resolve_output(Path::new("/dev/fd/0")).is_err());
/// ```
pub fn resolve_output(path: &Path) -> Result<OutputTarget, String> {
    // Linux's own bound on the links one lookup follows.
    const MOST_LINKS: usize = 40;
    let mut current = path.to_path_buf();
    for hops in 0..=MOST_LINKS {
        match descriptor_named(&current) {
            Some(1) => return Ok(OutputTarget::Stdout),
            Some(2) => return Ok(OutputTarget::Stderr),
            Some(n) => {
                return Err(format!(
                    "names file descriptor {n}; raylb writes to standard output and standard error (/dev/stdout, /dev/stderr) or to files"
                ));
            }
            None => {}
        }
        match fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&current).map_err(|e| io_reason(&e))?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(OutputTarget::File(current)),
            Err(e) if e.kind() == io::ErrorKind::NotFound && hops > 0 => {
                return Err(format!(
                    "is a symbolic link to {}, which does not exist; raylb writes through a link only to an existing file",
                    current.display()
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(OutputTarget::File(current));
            }
            Err(e) => return Err(io_reason(&e)),
        }
    }
    Err("too many levels of symbolic links".into())
}

/// What an output is written to while staged: a temporary file, or memory for a standard
/// stream. Seekable, as OpenEXR's writer needs.
///
/// ```
/// use std::io::{Cursor, Write};
/// use renderer::output::StagedWrite;
///
/// let mut memory = Cursor::new(Vec::new());
/// let out: &mut dyn StagedWrite = &mut memory;
/// out.write_all(b"raylb")?;
/// assert_eq!(memory.into_inner(), b"raylb");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait StagedWrite: Write + Seek {}

impl<T: Write + Seek> StagedWrite for T {}

/// The temporary files of every [`StagedFiles`] in the process, for [`abandon_staged`]: a
/// commit holds the lock while it renames, so that a signal's handler, which takes it too,
/// either finds every output as it was or waits for all of them to be in place.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the lock was held leaves a list that is still a list of paths.
    TEMPORARIES.lock().unwrap_or_else(PoisonError::into_inner)
}

fn forget_temporary(list: &mut Vec<PathBuf>, path: &Path) {
    if let Some(i) = list.iter().position(|p| p == path) {
        list.swap_remove(i);
    }
}

/// For a handler of SIGINT or SIGTERM, which then ends the process: removes every staged
/// temporary file not yet committed, and returns the lock that commits take, to be held until
/// the process ends. A commit under way finishes first (the lock waits for it), so a signal
/// never leaves some outputs new and others old, nor a hidden temporary file.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("raylb-doc-abandon-{}", std::process::id()));
/// use renderer::output::{StagedFiles, abandon_staged};
///
/// # std::fs::create_dir_all(&dir)?;
/// let mut staged = StagedFiles::new();
/// staged.text(&dir.join("report.json"), "{}")?;
/// let list = abandon_staged();
/// assert!(list.is_empty());
/// assert_eq!(std::fs::read_dir(&dir)?.count(), 0, "the temporary file is gone");
/// drop(list);
/// # drop(staged);
/// # std::fs::remove_dir(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn abandon_staged() -> MutexGuard<'static, Vec<PathBuf>> {
    let mut list = temporaries();
    for path in list.drain(..) {
        let _ = fs::remove_file(path);
    }
    list
}

/// An output staged and not yet put in place.
#[derive(Debug)]
enum Staged {
    /// Written to `temporary` beside `target`, to be renamed over it (removed when dropped).
    File {
        temporary: tempfile::TempPath,
        target: PathBuf,
    },
    /// Held in memory, to be written to a standard stream.
    Stream { stderr: bool, bytes: Vec<u8> },
}

/// Output files written to temporary names beside their targets and put in place together by
/// [`commit`](Self::commit), so that a run that fails part-way leaves every target as it was.
/// A path through a symbolic link writes the link's target and leaves the link; one that
/// names standard output or standard error ([`resolve_output`]) is held until the commit and
/// written there. Temporary files not committed are removed when this is dropped.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("raylb-doc-staged-{}", std::process::id()));
/// use renderer::output::StagedFiles;
///
/// # std::fs::create_dir_all(&dir)?;
/// let mut staged = StagedFiles::new();
/// staged.text(&dir.join("a.txt"), "a")?;
/// staged.text(&dir.join("b.txt"), "b")?;
/// assert!(!dir.join("a.txt").exists(), "nothing is in place before the commit");
/// staged.commit()?;
/// assert_eq!(std::fs::read_to_string(dir.join("b.txt"))?, "b");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct StagedFiles {
    /// Outputs written and not yet put in place.
    pending: Vec<Staged>,
}

impl StagedFiles {
    /// Nothing staged yet.
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("raylb-doc-new-{}", std::process::id()));
    /// # use renderer::output::StagedFiles;
    /// let mut staged = StagedFiles::new();
    /// staged.text(&path, "draft")?;
    /// drop(staged);
    /// assert!(!path.exists(), "what is not committed never appears");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the future contents of `path` to a temporary file beside the file it names (or
    /// to memory, for a standard stream).
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("raylb-doc-write-{}", std::process::id()));
    /// # use std::io::Write;
    /// # use renderer::output::StagedFiles;
    /// let mut staged = StagedFiles::new();
    /// staged.write(&path, |out| out.write_all(b"raw bytes"))?;
    /// staged.commit()?;
    /// assert_eq!(std::fs::read(&path)?, b"raw bytes");
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut dyn StagedWrite) -> io::Result<()>,
    ) -> io::Result<()> {
        let target = match resolve_output(path).map_err(io::Error::other)? {
            OutputTarget::File(target) => target,
            stream => {
                let mut bytes = Cursor::new(Vec::new());
                write(&mut bytes)?;
                self.pending.push(Staged::Stream {
                    stderr: stream == OutputTarget::Stderr,
                    bytes: bytes.into_inner(),
                });
                return Ok(());
            }
        };
        let (file, temporary) = create_temporary(&target)?;
        let result = (|| {
            let mut out = BufWriter::new(file);
            write(&mut out)?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()
        })();
        match result {
            Ok(()) => {
                self.pending.push(Staged::File { temporary, target });
                Ok(())
            }
            Err(e) => {
                // The write's error is the one to report.
                let _ = remove_temporary(&mut temporaries(), temporary);
                Err(e)
            }
        }
    }

    /// Stages an 8-bit RGB image (row-major triples) as PNG.
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("raylb-doc-png-{}", std::process::id()));
    /// # let path = path.with_extension("png");
    /// # use renderer::output::StagedFiles;
    /// let mut staged = StagedFiles::new();
    /// staged.png(&path, 2, 1, &[255, 0, 0, 0, 0, 255])?;
    /// staged.commit()?;
    /// let image = renderer::image_io::read_image(&path, u64::MAX)?;
    /// assert_eq!((image.width(), image.height()), (2, 1));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn png(&mut self, path: &Path, width: u32, height: u32, rgb: &[u8]) -> io::Result<()> {
        self.write(path, |out| {
            PngEncoder::new(out)
                .write_image(rgb, width, height, ExtendedColorType::Rgb8)
                .map_err(io::Error::other)
        })
    }

    /// Stages linear RGB (row-major float triples from the top row) as OpenEXR: channels R, G
    /// and B at `precision`, the same bytes for the same pixels every time.
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("raylb-doc-exr-{}", std::process::id()));
    /// # let path = path.with_extension("exr");
    /// use renderer::output::{ExrPrecision, StagedFiles};
    ///
    /// let mut staged = StagedFiles::new();
    /// staged.exr(&path, 1, 1, &[0.25, 0.5, 2.0], ExrPrecision::Float)?;
    /// staged.commit()?;
    /// assert!(std::fs::read(&path)?.starts_with(&[0x76, 0x2f, 0x31, 0x01]));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn exr(
        &mut self,
        path: &Path,
        width: u32,
        height: u32,
        linear_rgb: &[f32],
        precision: ExrPrecision,
    ) -> io::Result<()> {
        self.write(path, |out| {
            encode_exr(&mut { out }, width, height, linear_rgb, precision)
        })
    }

    /// Stages linear RGB (row-major float triples from the top row) as a Portable Float Map:
    /// `PF`, little-endian, bottom row first, as the format has it.
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("raylb-doc-pfm-{}", std::process::id()));
    /// # let path = path.with_extension("pfm");
    /// # use renderer::output::StagedFiles;
    /// let mut staged = StagedFiles::new();
    /// staged.pfm(&path, 2, 1, &[0.25, 0.5, 2.0, 0.0, 0.0, 1.0])?;
    /// staged.commit()?;
    /// assert!(std::fs::read(&path)?.starts_with(b"PF"));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pfm(
        &mut self,
        path: &Path,
        width: u32,
        height: u32,
        linear_rgb: &[f32],
    ) -> io::Result<()> {
        self.write(path, |out| {
            encode_pfm(&mut { out }, width, height, linear_rgb)
        })
    }

    /// Stages the image in `film` in the format `path`'s extension names: 8-bit sRGB PNG, or
    /// linear float OpenEXR (at `precision`) or PFM, all resolved from the same fixed-point
    /// sums.
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("raylb-doc-frame-{}", std::process::id()));
    /// # let path = path.with_extension("png");
    /// use renderer::film::Film;
    /// use renderer::output::{ExrPrecision, StagedFiles};
    ///
    /// let film = Film::new(4, 3, false);
    /// let mut staged = StagedFiles::new();
    /// assert!(staged.frame("frame.bmp".as_ref(), &film, ExrPrecision::Half).is_err());
    /// staged.frame(&path, &film, ExrPrecision::Half)?;
    /// staged.commit()?;
    /// let image = renderer::image_io::read_image(&path, u64::MAX)?;
    /// assert_eq!((image.width(), image.height()), (4, 3));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn frame(&mut self, path: &Path, film: &Film, precision: ExrPrecision) -> io::Result<()> {
        let (w, h) = (film.width(), film.height());
        match ImageFormat::of(path).map_err(io::Error::other)? {
            ImageFormat::Png => self.png(path, w, h, &film.resolve()),
            ImageFormat::Exr => self.exr(path, w, h, &film.linear_rgb(), precision),
            ImageFormat::Pfm => self.pfm(path, w, h, &film.linear_rgb()),
        }
    }

    /// Stages `text`.
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("raylb-doc-text-{}", std::process::id()));
    /// # use renderer::output::StagedFiles;
    /// let mut staged = StagedFiles::new();
    /// staged.text(&path, "{\"frames\": 1}\n")?;
    /// staged.commit()?;
    /// assert_eq!(std::fs::read_to_string(&path)?, "{\"frames\": 1}\n");
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text(&mut self, path: &Path, text: &str) -> io::Result<()> {
        self.write(path, |out| out.write_all(text.as_bytes()))
    }

    /// Renames every staged file over its target, then writes what goes to a standard
    /// stream.
    ///
    /// # Errors
    /// The first file that could not be put in place (the rest are left as they were), or
    /// the standard stream that could not take its bytes (every file is then in place).
    ///
    /// ```
    /// # let path = std::env::temp_dir().join(format!("raylb-doc-commit-{}", std::process::id()));
    /// # use renderer::output::StagedFiles;
    /// # std::fs::write(&path, "old")?;
    /// let mut staged = StagedFiles::new();
    /// staged.text(&path, "new")?;
    /// assert_eq!(std::fs::read_to_string(&path)?, "old");
    /// staged.commit()?;
    /// assert_eq!(std::fs::read_to_string(&path)?, "new");
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn commit(mut self) -> Result<(), CommitError> {
        let pending = std::mem::take(&mut self.pending);
        let (files, streams): (Vec<_>, Vec<_>) = pending
            .into_iter()
            .partition(|s| matches!(s, Staged::File { .. }));
        // Files first: a rename cannot be half done, a stream's write can. The lock is held
        // over all the renames: a signal's handler waits for the set to be complete.
        let mut list = temporaries();
        let mut files = files.into_iter();
        while let Some(Staged::File { temporary, target }) = files.next() {
            forget_temporary(&mut list, &temporary);
            // On failure the temporary file comes back with the error, and is removed with it.
            if let Err(e) = temporary.persist(&target) {
                for rest in files {
                    if let Staged::File { temporary, .. } = rest {
                        forget_temporary(&mut list, &temporary);
                    }
                }
                return Err(CommitError::Place {
                    target,
                    error: e.error,
                });
            }
        }
        drop(list);
        for stream in streams {
            if let Staged::Stream { stderr, bytes } = stream {
                let written = if stderr {
                    let mut err = io::stderr().lock();
                    err.write_all(&bytes).and_then(|()| err.flush())
                } else {
                    let mut out = io::stdout().lock();
                    out.write_all(&bytes).and_then(|()| out.flush())
                };
                written.map_err(|error| CommitError::Stream { stderr, error })?;
            }
        }
        Ok(())
    }
}

/// What [`StagedFiles::commit`] could not do, in a line that names the file or stream.
///
/// ```
/// use renderer::output::CommitError;
/// use std::io;
///
/// let full = CommitError::Stream { stderr: false, error: io::Error::from_raw_os_error(28) };
/// assert_eq!(full.to_string(), "cannot write to standard output: no space left on device");
/// let e: io::Error = full.into();
/// assert_eq!(e.raw_os_error(), Some(28));
/// ```
#[derive(Debug)]
pub enum CommitError {
    /// A file could not be renamed over its target; it and the files after it are not in
    /// place.
    Place {
        /// The file that is not in place.
        target: PathBuf,
        /// Why the rename failed.
        error: io::Error,
    },
    /// Standard output (or error) could not take its bytes; every file is in place.
    Stream {
        /// Whether the stream is standard error, not standard output.
        stderr: bool,
        /// Why the write failed.
        error: io::Error,
    },
}

impl std::fmt::Display for CommitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Place { target, error } => write!(
                f,
                "cannot put {} in place: {}",
                target.display(),
                io_reason(error)
            ),
            Self::Stream { stderr, error } => {
                let stream = if *stderr { "error" } else { "output" };
                write!(f, "cannot write to standard {stream}: {}", io_reason(error))
            }
        }
    }
}

impl std::error::Error for CommitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Place { error, .. } | Self::Stream { error, .. } => Some(error),
        }
    }
}

/// The operating system's error alone, for callers that name the file themselves.
impl From<CommitError> for io::Error {
    fn from(e: CommitError) -> Self {
        match e {
            CommitError::Place { error, .. } | CommitError::Stream { error, .. } => error,
        }
    }
}

impl Drop for StagedFiles {
    fn drop(&mut self) {
        let mut list = temporaries();
        for staged in std::mem::take(&mut self.pending) {
            if let Staged::File { temporary, .. } = staged {
                let _ = remove_temporary(&mut list, temporary);
            }
        }
    }
}

/// Creates the temporary file `target`'s contents are written to: `.NAME.XXXXXX.tmp` in the
/// same directory (hidden, and on the same file system, so that the rename is atomic), under
/// a name no one can guess and only if no file has it (`tempfile` opens it with `O_EXCL`), so
/// a link planted in a shared directory is never written through. It is created and listed
/// under the lock [`abandon_staged`] takes, so that a signal from here on removes it.
fn create_temporary(target: &Path) -> io::Result<(File, tempfile::TempPath)> {
    let name = target
        .file_name()
        .map_or("output".into(), |n| n.to_string_lossy().into_owned());
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // What `File::create` gives an output (0666 less the umask), not `tempfile`'s private
    // 0600: the file put in place is an ordinary output, readable as any other.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut list = temporaries();
    let (file, temporary) = builder.tempfile_in(dir)?.into_parts();
    list.push(temporary.to_path_buf());
    Ok((file, temporary))
}

/// Removes a temporary file, then takes it off `list` (the lock [`abandon_staged`] takes):
/// in that order, so that a signal in between finds it listed rather than left behind.
fn remove_temporary(list: &mut Vec<PathBuf>, temporary: tempfile::TempPath) -> io::Result<()> {
    let path = temporary.to_path_buf();
    let removed = temporary.close();
    forget_temporary(list, &path);
    removed
}

/// Checks, before any work is done, that `path` can be written the way [`StagedFiles`] will
/// write it, at the file its links end at ([`resolve_output`]; a standard stream always
/// can): the target is not a directory, its directory exists, and a file can be created
/// there. The last is not guessed from permission bits (which say nothing of read-only mounts,
/// access control lists or a privileged user) but tried: the temporary file a write would use
/// is created and removed again. The error says what is wrong, without the path: `is a
/// directory`, `no such directory: DIR`, `not a directory: DIR`, or the system's reason, such
/// as `permission denied`.
///
/// ```
/// use renderer::output::check_writable;
///
/// let dir = std::env::temp_dir();
/// assert_eq!(check_writable(&dir), Err("is a directory".into()));
/// assert_eq!(check_writable(&dir.join("raylb-frame.png")), Ok(()));
/// assert!(check_writable(&dir.join("no-such-dir/frame.png")).is_err());
/// ```
pub fn check_writable(path: &Path) -> Result<(), String> {
    let path = match resolve_output(path)? {
        OutputTarget::File(target) => target,
        OutputTarget::Stdout | OutputTarget::Stderr => return Ok(()),
    };
    let path = path.as_path();
    if path.is_dir() {
        return Err("is a directory".into());
    }
    // An output takes the place of what is there: a device (`/dev/null`), a FIFO or a
    // socket would be replaced by a regular file, which is never what was meant.
    if let Ok(metadata) = fs::metadata(path)
        && !metadata.is_file()
    {
        return Err(format!(
            "{} is there, not a regular file; raylb writes a whole new file in an output's place and replaces only regular files",
            crate::file_errors::file_kind(&metadata)
        ));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(if dir.exists() {
            format!("not a directory: {}", dir.display())
        } else {
            format!("no such directory: {}", dir.display())
        });
    }
    let (_, probe) = create_temporary(path).map_err(|e| io_reason(&e))?;
    remove_temporary(&mut temporaries(), probe).map_err(|e| io_reason(&e))
}

/// The input that `output` would replace, if any: the same file under another name, through
/// a symbolic link or a hard link included. An output that does not exist yet replaces
/// nothing.
///
/// ```
/// # let path = std::env::temp_dir().join(format!("raylb-doc-replaces-{}.toml", std::process::id()));
/// use renderer::output::replaces_input;
///
/// # std::fs::write(&path, "")?;
/// let inputs = [path.clone()];
/// assert_eq!(replaces_input(&path, &inputs), Some(path.as_path()));
/// assert_eq!(replaces_input("not-there.png".as_ref(), &inputs), None);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn replaces_input<'a>(output: &Path, inputs: &'a [PathBuf]) -> Option<&'a Path> {
    inputs
        .iter()
        .find(|input| is_same_file(output, input))
        .map(PathBuf::as_path)
}

/// Whether `a` and `b` name one file that exists, through links included. Told from what
/// `stat` says of each (device and inode) on Unix, so that neither is opened: opening a FIFO
/// waits for a writer, and a check made before any work must not wait on anything.
///
/// ```
/// # let path = std::env::temp_dir().join(format!("raylb-doc-same-{}.toml", std::process::id()));
/// use renderer::output::is_same_file;
///
/// # std::fs::write(&path, "")?;
/// let dir = path.parent().unwrap();
/// assert!(is_same_file(&path, &dir.join(".").join(path.file_name().unwrap())));
/// assert!(!is_same_file(&path, "not-there.toml".as_ref()));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn is_same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let identity = |path: &Path| fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
        identity(a).is_some_and(|a| identity(b) == Some(a))
    }
    #[cfg(not(unix))]
    {
        same_file::is_same_file(a, b).unwrap_or(false)
    }
}

/// Writes `text` to `path`, atomically.
///
/// ```
/// # let path = std::env::temp_dir().join(format!("raylb-doc-write-text-{}", std::process::id()));
/// renderer::output::write_text(&path, "done\n")?;
/// assert_eq!(std::fs::read_to_string(&path)?, "done\n");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_text(path: &Path, text: &str) -> io::Result<()> {
    let mut staged = StagedFiles::new();
    staged.text(path, text)?;
    Ok(staged.commit()?)
}

/// Writes an 8-bit RGB image (row-major triples) as PNG, atomically.
///
/// ```
/// # let path = std::env::temp_dir().join(format!("raylb-doc-write-png-{}.png", std::process::id()));
/// renderer::output::write_png(&path, 1, 2, &[0, 0, 0, 255, 255, 255])?;
/// let image = renderer::image_io::read_image(&path, u64::MAX)?;
/// assert_eq!((image.width(), image.height()), (1, 2));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> io::Result<()> {
    let mut staged = StagedFiles::new();
    staged.png(path, width, height, rgb)?;
    Ok(staged.commit()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_output_is_left_in_place_with_an_outputs_permissions_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.txt");
        File::create(&plain).unwrap();
        let staged = dir.path().join("staged.txt");
        let mut files = StagedFiles::new();
        files.text(&staged, "new").unwrap();
        assert!(!staged.exists(), "nothing is in place before the commit");
        files.commit().unwrap();
        assert_eq!(fs::read_to_string(&staged).unwrap(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(
                mode(&staged),
                mode(&plain),
                "as File::create makes an output"
            );
        }
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["plain.txt", "staged.txt"],
            "no temporary file is left"
        );
        assert!(temporaries().iter().all(|p| !p.starts_with(dir.path())));
    }

    #[test]
    fn a_dropped_stage_removes_its_temporary_files_and_forgets_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = StagedFiles::new();
        files.text(&dir.path().join("a.txt"), "a").unwrap();
        files.text(&dir.path().join("b.txt"), "b").unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2, "two staged");
        drop(files);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(temporaries().iter().all(|p| !p.starts_with(dir.path())));
    }
}
