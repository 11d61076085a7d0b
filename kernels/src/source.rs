//! The CUDA C source of the kernels and its compilation with NVRTC.
//!
//! The kernels (`cuda/raylb_kernels.cu`) include the traced arithmetic shared with the host
//! check (`cuda/raylb_math.cuh`), which includes the data layout shared with the host
//! (`cuda/raylb_layout.cuh`, generated from the `layout` crate); NVRTC is given the three as
//! one translation unit. They are
//! compiled at start-up for the device found, with the options the determinism contract asks
//! for: no fused multiply-add, IEEE division and square root, no flush to zero, no fast math.
//! Compiling needs NVRTC alone, no GPU: `.ci/run` compiles every kernel this way on a machine
//! without one, and any warning fails it.

use cudarc::nvrtc::result as nvrtc;

use crate::GpuError;

/// The shared layout header, generated from the `layout` crate (`tests/layout_header.rs`
/// checks that it is up to date).
pub const LAYOUT_HEADER: &str = include_str!("../cuda/raylb_layout.cuh");
/// The shared math header.
pub const MATH_HEADER: &str = include_str!("../cuda/raylb_math.cuh");
/// The kernels.
pub const KERNELS: &str = include_str!("../cuda/raylb_kernels.cu");

/// Kernels that check the device's own arithmetic and traversals against the host's
/// ([`crate::check`]), compiled after [`KERNELS`] in one translation unit.
pub const CHECKS: &str = include_str!("../cuda/raylb_checks.cu");

/// The kernels' entry points, all of which must be in the compiled module.
pub const ENTRY_POINTS: [&str; 5] = [
    "rl_persistent",
    "rl_persistent_wide",
    "rl_fill_deques",
    "rl_block_per_tile",
    "rl_block_per_tile_wide",
];

/// The options every compilation uses, before the architecture.
pub const OPTIONS: [&str; 5] = [
    "--fmad=false",
    "--prec-div=true",
    "--prec-sqrt=true",
    "--ftz=false",
    "--std=c++17",
];

/// The whole program as NVRTC sees it: each header in place of its `#include`.
///
/// ```
/// use kernels::source::{KERNELS, LAYOUT_HEADER, program_source};
///
/// let program = program_source();
/// // One translation unit: no #include left, the shared layout inside.
/// assert!(!program.contains("#include \"raylb_"));
/// assert!(program.contains(LAYOUT_HEADER.trim()));
/// assert!(program.len() > KERNELS.len());
/// ```
pub fn program_source() -> String {
    let math = MATH_HEADER.replace("#include \"raylb_layout.cuh\"", LAYOUT_HEADER);
    KERNELS.replace("#include \"raylb_math.cuh\"", &math)
}

/// PTX for compute capability `major.minor`, and NVRTC's log (empty when it had nothing to
/// say).
///
/// ```
/// use kernels::GpuError;
/// use kernels::source::compile_source;
///
/// // Where NVRTC can be loaded (CI puts it on LD_LIBRARY_PATH); elsewhere it says so.
/// match compile_source(r#"extern "C" __global__ void twice(float* x) { x[0] *= 2.0f; }"#, 9, 0) {
///     Ok(compiled) => {
///         assert!(compiled.ptx.contains(".entry twice"));
///         assert!(compiled.log.is_empty());
///     }
///     Err(GpuError::NoNvrtc) => {}
///     Err(e) => panic!("{e}"),
/// }
/// ```
#[derive(Clone, Debug)]
pub struct CompiledKernels {
    /// The PTX text.
    pub ptx: String,
    /// What NVRTC printed: empty from [`compile`] (which fails on a warning); from
    /// [`compile_cached`], the warnings an NVRTC other than CI's may give, reported rather
    /// than fatal.
    pub log: String,
}

/// Whether NVRTC's library can be loaded on this machine.
///
/// ```
/// use kernels::source::{nvrtc_available, nvrtc_version};
///
/// // The version can be read exactly where the library can be loaded.
/// assert_eq!(nvrtc_available(), nvrtc_version().is_some());
/// ```
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to open the library (dlopen) under its known names.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Compiles the kernels to PTX for compute capability `major.minor` (e.g. `(9, 0)`).
///
/// # Errors
/// [`GpuError::NoNvrtc`] when NVRTC cannot be loaded; [`GpuError::Compile`] with NVRTC's log
/// on any error or warning.
///
/// ```
/// use kernels::GpuError;
/// use kernels::source::{ENTRY_POINTS, compile};
///
/// match compile(9, 0) {
///     // Every entry point the host launches is in the PTX.
///     Ok(kernels) => assert!(ENTRY_POINTS.iter().all(|e| kernels.ptx.contains(e))),
///     Err(GpuError::NoNvrtc) => {}
///     Err(e) => panic!("{e}"),
/// }
/// ```
pub fn compile(major: i32, minor: i32) -> Result<CompiledKernels, GpuError> {
    compile_source(&program_source(), major, minor)
}

/// Compiles `source` as [`compile`] compiles the kernels: the same options, warnings as
/// errors.
///
/// # Errors
/// As [`compile`].
///
/// ```
/// use kernels::GpuError;
/// use kernels::source::compile_source;
///
/// // An unused variable is a warning, and a warning is an error here.
/// let warns = r#"extern "C" __global__ void k(int* x) { int unused = 1; x[0] = 0; }"#;
/// match compile_source(warns, 9, 0) {
///     Err(GpuError::Compile(log)) => assert!(log.contains("unused")),
///     Err(GpuError::NoNvrtc) => {}
///     other => panic!("{other:?}"),
/// }
/// ```
pub fn compile_source(source: &str, major: i32, minor: i32) -> Result<CompiledKernels, GpuError> {
    let compiled = compile_reporting(source, major, minor)?;
    if compiled.log.is_empty() {
        Ok(compiled)
    } else {
        Err(GpuError::Compile(format!("warnings:\n{}", compiled.log)))
    }
}

/// Compiles `source` as [`compile`] does, but keeps NVRTC's warnings in the log rather than
/// failing on them: what a GPU machine runs, whose NVRTC may warn where CI's (which fails on
/// any warning, `tests/nvrtc_compile.rs`) did not.
///
/// # Errors
/// [`GpuError::NoNvrtc`] when NVRTC cannot be loaded; [`GpuError::Compile`] with NVRTC's log
/// on an error.
fn compile_reporting(source: &str, major: i32, minor: i32) -> Result<CompiledKernels, GpuError> {
    let (ptx, log) = run_nvrtc(source, &format!("compute_{major}{minor}"), Output::Ptx)?;
    let ptx = String::from_utf8_lossy(&ptx).into_owned();
    Ok(CompiledKernels { ptx, log })
}

/// What NVRTC is asked for: PTX for a virtual architecture, or a CUBIN for a real one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    Ptx,
    Cubin,
}

/// Compiles `source` for `arch` (`compute_90`, `sm_90`) with the kernels' options, and returns
/// what `output` asks for with NVRTC's log (warnings kept, not fatal).
///
/// # Errors
/// [`GpuError::NoNvrtc`] when NVRTC cannot be loaded; [`GpuError::Compile`] with NVRTC's log
/// on an error.
fn run_nvrtc(source: &str, arch: &str, output: Output) -> Result<(Vec<u8>, String), GpuError> {
    if !nvrtc_available() {
        return Err(GpuError::NoNvrtc);
    }
    let source = std::ffi::CString::new(source)
        .map_err(|_| GpuError::Compile("the source contains a NUL byte".into()))?;
    let name = c"raylb_kernels.cu";
    let program = nvrtc::create_program(&source, Some(name))
        .map_err(|e| GpuError::Compile(format!("NVRTC could not create the program: {e:?}")))?;
    let mut options: Vec<String> = OPTIONS.iter().map(|o| o.to_string()).collect();
    // A tuning knob for measurements: asking for more resident blocks per SM caps the
    // registers per thread, trading spills for warps.
    if let Some(n) = std::env::var("RAYLB_MIN_BLOCKS")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        options.push(format!("-DRL_MIN_BLOCKS={n}"));
    }
    options.push(format!("--gpu-architecture={arch}"));
    // SAFETY: `program` was just created and is destroyed once below, after its last use.
    let compiled = unsafe { nvrtc::compile_program(program, &options) };
    // SAFETY: as above; the log exists whether or not compilation succeeded.
    let log = unsafe { nvrtc::get_program_log(program) }
        .map(|chars| c_chars_to_string(&chars))
        .unwrap_or_default();
    let code = match (compiled, output) {
        (Err(e), _) => Err(format!("{e:?}")),
        // SAFETY: as above; the program compiled, so it has PTX.
        (Ok(()), Output::Ptx) => unsafe { nvrtc::get_ptx(program) }
            .map(|chars| {
                chars
                    .iter()
                    .take_while(|&&c| c != 0)
                    .map(|&c| c as u8)
                    .collect()
            })
            .map_err(|e| format!("{e:?}")),
        // SAFETY: as above; compiled for a real architecture, the program has a CUBIN.
        (Ok(()), Output::Cubin) => unsafe { cubin(program) },
    };
    // SAFETY: `program` is not used after this.
    let _ = unsafe { nvrtc::destroy_program(program) };
    let log = log.trim().to_string();
    code.map(|code| (code, log.clone()))
        .map_err(|e| GpuError::Compile(format!("{e}:\n{log}")))
}

/// The CUBIN of a program compiled for a real architecture.
///
/// # Safety
/// `program` is a live NVRTC program, compiled successfully for an `sm_XY` architecture.
unsafe fn cubin(program: cudarc::nvrtc::sys::nvrtcProgram) -> Result<Vec<u8>, String> {
    use cudarc::nvrtc::sys::{nvrtcGetCUBIN, nvrtcGetCUBINSize, nvrtcResult};
    let mut size = 0usize;
    // SAFETY: the caller's contract; NVRTC writes one integer we own.
    let status = unsafe { nvrtcGetCUBINSize(program, &mut size) };
    if status != nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("reading the CUBIN's size: {status:?}"));
    }
    let mut code = vec![0u8; size];
    // SAFETY: `code` holds the `size` bytes NVRTC writes.
    let status = unsafe { nvrtcGetCUBIN(program, code.as_mut_ptr().cast()) };
    if status != nvrtcResult::NVRTC_SUCCESS || code.is_empty() {
        return Err(format!("reading the CUBIN: {status:?}"));
    }
    Ok(code)
}

/// The kernels as machine code for the device `sm_{major}{minor}`, kept in `dir` between runs
/// as [`compile_cached`] keeps their PTX, with NVRTC's log (warnings reported, not fatal) and
/// whether it came from the cache. A driver older than the NVRTC loads this where it would
/// refuse that NVRTC's PTX.
///
/// # Errors
/// [`GpuError::NoNvrtc`] when NVRTC cannot be loaded; [`GpuError::Compile`] on an error, or
/// for an architecture this NVRTC cannot build machine code for.
///
/// ```no_run
/// use kernels::source::{cache_dir, compile_cubin_cached};
///
/// // Machine code for an H100 (sm_90), from the cache when it holds this source's.
/// let (cubin, _log, cached) = compile_cubin_cached(9, 0, cache_dir().as_deref())?;
/// assert!(!cubin.is_empty());
/// println!("{} bytes{}", cubin.len(), if cached { ", cached" } else { "" });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compile_cubin_cached(
    major: i32,
    minor: i32,
    dir: Option<&std::path::Path>,
) -> Result<(Vec<u8>, String, bool), GpuError> {
    let source = program_source();
    let path = dir.map(|d| cache_path(d, &source, &format!("sm_{major}{minor}"), "cubin"));
    if let Some(code) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        return Ok((code, String::new(), true));
    }
    let (code, log) = run_nvrtc(&source, &format!("sm_{major}{minor}"), Output::Cubin)?;
    if let Some(path) = path {
        store(&path, &code);
    }
    Ok((code, log, false))
}

/// Where the kernels compiled from `source` for `arch` are kept in `dir`: a hash of the
/// source, the options, the architecture and NVRTC's version, so any change compiles afresh.
fn cache_path(
    dir: &std::path::Path,
    source: &str,
    arch: &str,
    extension: &str,
) -> std::path::PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut hasher);
    OPTIONS.hash(&mut hasher);
    std::env::var("RAYLB_MIN_BLOCKS").ok().hash(&mut hasher);
    (arch, nvrtc_version()).hash(&mut hasher);
    dir.join(format!(
        "kernels-{:016x}-{arch}.{extension}",
        hasher.finish()
    ))
}

/// Writes `bytes` to `path` under a temporary name and renames it, so that a reader never
/// sees half a file; a cache that cannot be written is passed over (it only saves time).
fn store(path: &std::path::Path, bytes: &[u8]) {
    let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
    let stored = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&temporary, bytes))
        .and_then(|()| std::fs::rename(&temporary, path));
    if stored.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}

/// NVRTC's version, as `(major, minor)`.
///
/// ```
/// use kernels::source::nvrtc_version;
///
/// if let Some((major, _minor)) = nvrtc_version() {
///     assert!(major >= 11);
/// }
/// ```
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_available() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (checked above); the call writes two integers we own.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    (status == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
}

/// Where compiled kernels are kept between runs: `$RAYLB_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/raylb`, else `~/.cache/raylb`; `None` when none can be named.
///
/// ```
/// use kernels::source::cache_dir;
///
/// // With $RAYLB_CACHE_DIR unset, a folder named raylb under the user's cache.
/// if std::env::var_os("RAYLB_CACHE_DIR").is_none() {
///     if let Some(dir) = cache_dir() {
///         assert!(dir.ends_with("raylb"));
///     }
/// }
/// ```
pub fn cache_dir() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("RAYLB_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("raylb")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("raylb")))
}

/// [`compile`], with the PTX kept in `dir` between runs: the file's name is a hash of the
/// source, the options, the architecture and NVRTC's version, so any change compiles afresh.
/// Returns the kernels and whether they came from the cache. A cache that cannot be read or
/// written is passed over silently; it only saves time. NVRTC's warnings are kept in the log,
/// not fatal: this is what a GPU machine runs, whatever its NVRTC.
///
/// # Errors
/// As [`compile`] on a cache miss, but for an error alone.
///
/// ```no_run
/// use kernels::source::compile_cached;
///
/// let dir = std::env::temp_dir().join(format!("raylb-ptx-{}", std::process::id()));
/// let (first, cached) = compile_cached(9, 0, Some(&dir))?;
/// assert!(!cached);
/// // The second time from the folder, the same PTX.
/// let (again, cached) = compile_cached(9, 0, Some(&dir))?;
/// assert!(cached && again.ptx == first.ptx);
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compile_cached(
    major: i32,
    minor: i32,
    dir: Option<&std::path::Path>,
) -> Result<(CompiledKernels, bool), GpuError> {
    let source = program_source();
    let Some(dir) = dir else {
        return compile_reporting(&source, major, minor).map(|c| (c, false));
    };
    let path = cache_path(dir, &source, &format!("compute_{major}{minor}"), "ptx");
    if let Ok(ptx) = std::fs::read_to_string(&path) {
        return Ok((
            CompiledKernels {
                ptx,
                log: String::new(),
            },
            true,
        ));
    }
    let compiled = compile_reporting(&source, major, minor)?;
    store(&path, compiled.ptx.as_bytes());
    Ok((compiled, false))
}

fn c_chars_to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_fails_the_strict_compile_and_is_kept_by_the_reporting_one() {
        if !nvrtc_available() {
            assert!(
                std::env::var_os("RAYLB_REQUIRE_NVRTC").is_none(),
                "RAYLB_REQUIRE_NVRTC is set but NVRTC cannot be loaded"
            );
            eprintln!("skipped: NVRTC is not available");
            return;
        }
        let warns = "extern \"C\" __global__ void unused_variable() { int x = 1; }";
        assert!(compile_source(warns, 9, 0).is_err());
        let reported = compile_reporting(warns, 9, 0).expect("a warning is not an error");
        assert!(reported.log.contains("warning"), "{}", reported.log);
        assert!(reported.ptx.contains("unused_variable"));
    }

    #[test]
    fn the_headers_are_spliced_in_once() {
        let source = program_source();
        assert!(!source.contains("#include \"raylb_math.cuh\""));
        assert!(!source.contains("#include \"raylb_layout.cuh\""));
        assert_eq!(source.matches("#define RAYLB_MATH_CUH").count(), 1);
        assert_eq!(source.matches("#define RAYLB_LAYOUT_CUH").count(), 1);
        for entry in ENTRY_POINTS {
            assert!(source.contains(&format!(" {entry}(")), "{entry}");
        }
    }
}
