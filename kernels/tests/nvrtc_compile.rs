//! Every kernel compiles with NVRTC, without a warning, for the architectures raylb targets;
//! its PTX holds no arithmetic that could round differently from the host's (see
//! [`why_not_reproducible`]), and each entry point takes the `layout` crate's parameter structs
//! at their Rust sizes and alignments. NVRTC needs no GPU. Where it cannot be loaded the test
//! says it was skipped, unless `RAYLB_REQUIRE_NVRTC` is set (as `.ci/run` does, after
//! installing NVRTC), which makes a missing NVRTC a failure.

use kernels::GpuError;
use kernels::source::{self, ENTRY_POINTS};
use layout::params::{Film, Managed, Scene, Work};

/// The architectures raylb compiles for: Turing (the oldest NVRTC 12 takes without a
/// deprecation warning), Ampere, Ada, Hopper.
const ARCHITECTURES: [(i32, i32); 4] = [(7, 5), (8, 0), (8, 9), (9, 0)];

/// Whether NVRTC can be loaded; where it cannot, says the test was skipped, unless
/// `RAYLB_REQUIRE_NVRTC` is set, which makes that a failure.
fn nvrtc_or_skip() -> bool {
    if source::nvrtc_available() {
        return true;
    }
    assert!(
        std::env::var_os("RAYLB_REQUIRE_NVRTC").is_none(),
        "RAYLB_REQUIRE_NVRTC is set but libnvrtc cannot be loaded (LD_LIBRARY_PATH?)"
    );
    eprintln!("skipped: NVRTC is not installed (see .ci/run for how CI installs it)");
    false
}

#[test]
fn kernels_compile_to_ptx_without_warnings() {
    if !nvrtc_or_skip() {
        return;
    }
    for (major, minor) in ARCHITECTURES {
        let compiled = match source::compile(major, minor) {
            Ok(c) => c,
            Err(GpuError::Compile(log)) => panic!("compute_{major}{minor}: {log}"),
            Err(e) => panic!("compute_{major}{minor}: {e}"),
        };
        assert!(compiled.log.is_empty());
        for entry in ENTRY_POINTS {
            assert!(
                compiled.ptx.contains(&format!(".entry {entry}(")),
                "compute_{major}{minor}: no entry point {entry}"
            );
        }
        assert_reproducible(&compiled.ptx, &format!("compute_{major}{minor}"));
        assert_parameters_match_layout(&compiled.ptx, &format!("compute_{major}{minor}"));
    }
}

/// A kernel that runs the wide BVH's traversals (closest hit and occlusion) for one ray per
/// thread, appended to the kernels: the traversal is compiled in the kernels' translation
/// unit, with their options, before any balancer calls it.
const WIDE_TRAVERSAL_PROBE: &str = r#"
extern "C" __global__ void rl_probe_wide(rl_wide_bvh b, const rl_task* rays, rl_u32 n,
                                         rl_u32* index, float* t, rl_u32* blocked) {
    rl_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    rl_prepared r = rl_prepare(rays[i].origin, rays[i].dir, 0.0f, RL_INFINITY);
    index[i] = rl_wide_closest_hit(b, r, t + i);
    blocked[i] = rl_wide_occluded(b, r) ? 1u : 0u;
}
"#;

#[test]
fn the_wide_bvh_traversal_compiles_with_the_kernels() {
    if !nvrtc_or_skip() {
        return;
    }
    let program = source::program_source() + WIDE_TRAVERSAL_PROBE;
    for (major, minor) in ARCHITECTURES {
        let compiled = match source::compile_source(&program, major, minor) {
            Ok(c) => c,
            Err(GpuError::Compile(log)) => panic!("compute_{major}{minor}: {log}"),
            Err(e) => panic!("compute_{major}{minor}: {e}"),
        };
        assert!(
            compiled.ptx.contains(".entry rl_probe_wide("),
            "compute_{major}{minor}: the probe was not compiled"
        );
        for entry in ENTRY_POINTS {
            assert!(compiled.ptx.contains(&format!(".entry {entry}(")));
        }
        assert_reproducible(
            &compiled.ptx,
            &format!("compute_{major}{minor}, with the probe"),
        );
    }
}

#[test]
fn a_broken_kernel_is_reported_with_the_compiler_log() {
    if !source::nvrtc_available() {
        eprintln!("skipped: NVRTC is not installed");
        return;
    }
    // The real source compiles; the checker must still see errors in what it is given.
    let e = source::compile_source("extern \"C\" __global__ void broken() { int x = ; }", 9, 0)
        .unwrap_err();
    match e {
        GpuError::Compile(log) => assert!(log.contains("expected an expression"), "{log}"),
        other => panic!("{other}"),
    }
    let e = source::compile_source(
        "extern \"C\" __global__ void unused_variable() { int x = 1; }",
        9,
        0,
    )
    .unwrap_err();
    assert!(
        matches!(e, GpuError::Compile(ref log) if log.contains("warning") || log.contains("error")),
        "{e}"
    );
}

#[test]
fn compiled_kernels_are_cached_between_runs() {
    if !source::nvrtc_available() {
        eprintln!("skipped: NVRTC is not installed");
        return;
    }
    let dir = tempfile_dir();
    let (first, hit) = source::compile_cached(9, 0, Some(&dir)).unwrap();
    assert!(!hit, "an empty cache cannot hit");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(files.len(), 1, "one PTX file, no temporaries left");
    let (second, hit) = source::compile_cached(9, 0, Some(&dir)).unwrap();
    assert!(hit, "the second compilation comes from the cache");
    assert_eq!(first.ptx, second.ptx);
    // Another architecture is another entry.
    let (_, hit) = source::compile_cached(8, 0, Some(&dir)).unwrap();
    assert!(!hit);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_kernels_compile_to_machine_code_for_each_architecture_and_are_cached() {
    if !nvrtc_or_skip() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("raylb-cubin-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (major, minor) in [(7, 5), (8, 0), (8, 6), (9, 0)] {
        let (code, log, hit) = source::compile_cubin_cached(major, minor, Some(&dir)).unwrap();
        assert!(!hit, "sm_{major}{minor}: an empty cache cannot hit");
        assert!(log.is_empty(), "sm_{major}{minor}: {log}");
        assert_eq!(
            &code[..4],
            b"\x7fELF",
            "sm_{major}{minor}: a CUBIN is an ELF file"
        );
        let (again, _, hit) = source::compile_cubin_cached(major, minor, Some(&dir)).unwrap();
        assert!(hit, "sm_{major}{minor}: the second comes from the cache");
        assert_eq!(code, again);
    }
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(
        files.len(),
        4,
        "one CUBIN an architecture, no temporaries left"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("raylb-kernel-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_device_checks_compile_with_the_kernels() {
    if !nvrtc_or_skip() {
        return;
    }
    let program = source::program_source() + "\n" + source::CHECKS;
    for (major, minor) in ARCHITECTURES {
        let compiled = match source::compile_source(&program, major, minor) {
            Ok(c) => c,
            Err(GpuError::Compile(log)) => panic!("compute_{major}{minor}: {log}"),
            Err(e) => panic!("compute_{major}{minor}: {e}"),
        };
        for entry in [
            "rl_check_floats",
            "rl_check_float_results",
            "rl_check_traversals",
        ] {
            assert!(
                compiled.ptx.contains(&format!(".entry {entry}(")),
                "compute_{major}{minor}: no entry point {entry}"
            );
        }
        assert_reproducible(
            &compiled.ptx,
            &format!("compute_{major}{minor}, with the checks"),
        );
    }
}

// ---- The arithmetic in the PTX --------------------------------------------------------------

/// PTX's floating-point types, as an instruction's type modifier.
const FLOAT_TYPES: [&str; 7] = ["f16", "f16x2", "bf16", "bf16x2", "f32", "f32x2", "f64"];

/// The rounding modifiers of `add`, `sub` and `mul`. Any of them, not `.rn` alone, keeps
/// ptxas from contracting the instruction into a multiply-add (the PTX ISA: "an add
/// instruction with an explicit rounding modifier is treated conservatively by the code
/// optimizer"); the kernels use `.rz` where the host truncates.
const ROUNDING: [&str; 4] = ["rn", "rz", "rm", "rp"];

/// Why the PTX instruction whose opcode and modifiers are `opcode` (e.g. `add.rn.f32`) could
/// give the device a result other than the host's, or `None` where it cannot:
/// - `.approx` (`div`, `sqrt`, `rcp`, `rsqrt`, `ex2`, `sin`...) and `div.full` are
///   approximations;
/// - `.ftz` flushes subnormal inputs and results to zero, anywhere it appears;
/// - `mad` and `fma` on a float type round once where the host rounds twice;
/// - `add`, `sub` and `mul` on a float type without a rounding modifier may be fused by the
///   driver's JIT (ptxas) into a multiply-add, whatever `--fmad=false` told NVRTC.
fn why_not_reproducible(opcode: &str) -> Option<&'static str> {
    let mut parts = opcode.split('.');
    let name = parts.next()?;
    let modifiers: Vec<&str> = parts.collect();
    if modifiers.contains(&"approx") {
        return Some("an approximation (.approx)");
    }
    if modifiers.contains(&"ftz") {
        return Some("flushes subnormals to zero (.ftz)");
    }
    if !modifiers.iter().any(|m| FLOAT_TYPES.contains(m)) {
        return None;
    }
    match name {
        "add" | "sub" | "mul" if !modifiers.iter().any(|m| ROUNDING.contains(m)) => {
            Some("no rounding modifier: ptxas may contract it into a multiply-add")
        }
        "mad" | "fma" => Some("a fused multiply-add"),
        "div" if modifiers.contains(&"full") => Some("an approximate division (.full)"),
        _ => None,
    }
}

/// The opcode with its modifiers (`add.rn.f32`) of a PTX line holding an instruction, without
/// its predicate guard (`@%p1`, `@!%p1`); `None` for directives, labels, braces, comments and
/// blank lines.
fn opcode(line: &str) -> Option<&str> {
    // An inline `asm` block may open its scope on the line of its first instruction.
    let line = line.split("//").next().unwrap_or("").trim();
    let line = line.strip_prefix('{').map_or(line, str::trim_start);
    if line.is_empty() || line.ends_with(':') || line.starts_with(['.', '{', '}', '(', ')', '$']) {
        return None;
    }
    let line = match line.strip_prefix('@') {
        Some(guarded) => guarded.split_once(char::is_whitespace)?.1.trim_start(),
        None => line,
    };
    line.split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .filter(|op| !op.is_empty())
}

/// The name of the function a PTX line declares (`.visible .entry rl_persistent(`, `.func
/// (.param .b32 func_retval0) rl_trace(`), if it declares one.
fn declared_function(line: &str) -> Option<&str> {
    let line = line.trim();
    if line.starts_with("//") {
        return None;
    }
    let after = [".entry ", ".func "]
        .iter()
        .find_map(|keyword| line.split_once(keyword).map(|(_, rest)| rest.trim_start()))?;
    // A `.func` returning a value names its return parameter first.
    let after = match after.strip_prefix('(') {
        Some(rest) => rest.split_once(')')?.1.trim_start(),
        None => after,
    };
    let end = after
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(after.len());
    Some(&after[..end]).filter(|name| !name.is_empty())
}

/// What the PTX's float arithmetic holds: the `add`, `sub` and `mul` on float types seen (so
/// that a parser which finds no instruction cannot pass), and every instruction that could
/// round differently from the host, as `function, line N: instruction (why)`.
#[derive(Debug, Default)]
struct ArithmeticReport {
    float_add_sub_mul: usize,
    violations: Vec<String>,
}

fn check_arithmetic(ptx: &str) -> ArithmeticReport {
    let mut report = ArithmeticReport::default();
    let mut function = "(module scope)";
    for (number, line) in ptx.lines().enumerate() {
        if let Some(name) = declared_function(line) {
            function = name;
            continue;
        }
        let Some(op) = opcode(line) else {
            continue;
        };
        let mut parts = op.split('.');
        if matches!(parts.next(), Some("add" | "sub" | "mul"))
            && parts.any(|m| FLOAT_TYPES.contains(&m))
        {
            report.float_add_sub_mul += 1;
        }
        if let Some(why) = why_not_reproducible(op) {
            report.violations.push(format!(
                "{function}, line {}: {} ({why})",
                number + 1,
                line.trim()
            ));
        }
    }
    report
}

/// Why `ptx` fails the check, listing the instructions, or `None` where it passes: it must hold
/// float arithmetic (a parser that reads nothing would pass anything) and none that could round
/// differently from the host's.
fn arithmetic_failure(ptx: &str) -> Option<String> {
    let report = check_arithmetic(ptx);
    if report.float_add_sub_mul == 0 {
        return Some("no float add, sub or mul found in the PTX: the checker reads nothing".into());
    }
    if !report.violations.is_empty() {
        return Some(format!(
            "{} instructions could round differently from the host:\n{}",
            report.violations.len(),
            report.violations.join("\n")
        ));
    }
    None
}

/// Fails where [`arithmetic_failure`] finds something.
fn assert_reproducible(ptx: &str, what: &str) {
    if let Some(failure) = arithmetic_failure(ptx) {
        panic!("{what}: {failure}");
    }
}

/// A piece of PTX as NVRTC writes it, with one instruction of each kind the check must pass.
const CLEAN_PTX: &str = r#"
.visible .entry rl_example(
	.param .align 8 .b8 rl_example_param_0[168],
	.param .u32 rl_example_param_1
)
{
	.reg .f32 	%f<9>;
	ld.param.f32 	%f1, [rl_example_param_0+8];
	add.rn.f32 	%f2, %f1, %f1;
	sub.rn.f64 	%fd2, %fd1, %fd1;
	mul.rn.f32 	%f3, %f2, %f1;
	add.rz.f32 	%f4, %f3, %f1;
	mul.lo.s32 	%r2, %r1, 3;
	mad.lo.s32 	%r3, %r2, %r1, 7;
	add.s64 	%rd2, %rd1, 8;
	div.rn.f32 	%f5, %f4, %f3;
	sqrt.rn.f32 	%f6, %f5;
	rcp.rn.f32 	%f7, %f6;
	cvt.rn.f32.f64 	%f8, %fd2;
	@%p1 bra 	$L__BB0_2;
$L__BB0_2:
	// mul.f32 in a comment is no instruction
	{ .reg .b32 %r9;
	}
	ret;
}
"#;

#[test]
fn the_arithmetic_checker_passes_rounded_arithmetic() {
    let report = check_arithmetic(CLEAN_PTX);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    // add.rn.f32, sub.rn.f64, mul.rn.f32, add.rz.f32; not the integer ones.
    assert_eq!(report.float_add_sub_mul, 4);
}

#[test]
fn the_arithmetic_checker_finds_each_planted_instruction() {
    let planted = [
        "add.f32 \t%f2, %f1, %f1;",
        "sub.f32 \t%f2, %f1, %f1;",
        "mul.f64 \t%fd2, %fd1, %fd1;",
        "@%p3 mul.f32 \t%f2, %f1, %f1;",
        "{ add.f32 \t%f2, %f1, %f1;",
        "@!%p3 add.f64 \t%fd2, %fd1, %fd1;",
        "add.ftz.f32 \t%f2, %f1, %f1;",
        "mul.rn.ftz.f32 \t%f2, %f1, %f1;",
        "div.approx.f32 \t%f2, %f1, %f1;",
        "div.full.f32 \t%f2, %f1, %f1;",
        "div.approx.ftz.f64 \t%fd2, %fd1, %fd1;",
        "sqrt.approx.f32 \t%f2, %f1;",
        "rcp.approx.ftz.f64 \t%fd2, %fd1;",
        "rsqrt.approx.f32 \t%f2, %f1;",
        "ex2.approx.ftz.f32 \t%f2, %f1;",
        "cvt.ftz.f32.f32 \t%f2, %f1;",
        "setp.lt.ftz.f32 \t%p1, %f1, %f2;",
        "mad.f32 \t%f2, %f1, %f1, %f1;",
        "mad.rn.f32 \t%f2, %f1, %f1, %f1;",
        "fma.rn.f32 \t%f2, %f1, %f1, %f1;",
        "fma.rn.f64 \t%fd2, %fd1, %fd1, %fd1;",
        "add.f16x2 \t%r2, %r1, %r1;",
    ];
    for bad in planted {
        let ptx = CLEAN_PTX.replace("\tret;", &format!("\t{bad}\n\tret;"));
        let line = ptx.lines().position(|l| l.contains(bad)).unwrap() + 1;
        let report = check_arithmetic(&ptx);
        assert_eq!(report.violations.len(), 1, "{bad}: {:?}", report.violations);
        assert!(
            report.violations[0].starts_with(&format!("rl_example, line {line}: {bad}")),
            "{bad}: {}",
            report.violations[0]
        );
        assert!(arithmetic_failure(&ptx).is_some(), "{bad} passed the check");
    }
}

/// A kernel appended to the kernels whose arithmetic the check must refuse: an unrounded
/// multiplication written as PTX, and an approximate division.
const PLANTED_PROBE: &str = r#"
extern "C" __global__ void rl_probe_planted(float* x) {
    float v = x[threadIdx.x];
    asm volatile("mul.f32 %0, %0, %0;" : "+f"(v));
    x[threadIdx.x] = __fdividef(v, 3.0f);
}
"#;

#[test]
fn the_arithmetic_check_refuses_a_kernel_compiled_with_a_planted_instruction() {
    if !nvrtc_or_skip() {
        return;
    }
    let program = source::program_source() + PLANTED_PROBE;
    let compiled = source::compile_source(&program, 9, 0).unwrap();
    let report = check_arithmetic(&compiled.ptx);
    let planted: Vec<&String> = report
        .violations
        .iter()
        .filter(|v| v.starts_with("rl_probe_planted, "))
        .collect();
    assert_eq!(planted.len(), 2, "{:?}", report.violations);
    assert!(planted[0].contains("mul.f32"), "{}", planted[0]);
    assert!(planted[1].contains("div.approx.f32"), "{}", planted[1]);
    assert_eq!(
        report.violations.len(),
        2,
        "only the probe's: {:?}",
        report.violations
    );
}

#[test]
fn the_arithmetic_checker_names_the_function_holding_the_instruction() {
    let ptx = "\
.func  (.param .b32 func_retval0) rl_helper(
\t.param .b32 rl_helper_param_0
)
{
\tadd.rn.f32 \t%f2, %f1, %f1;
\tmul.f32 \t%f3, %f2, %f2;
}
";
    let report = check_arithmetic(ptx);
    assert_eq!(report.float_add_sub_mul, 2);
    assert_eq!(report.violations.len(), 1);
    assert!(
        report.violations[0].starts_with("rl_helper, line 6: mul.f32"),
        "{}",
        report.violations[0]
    );
}

#[test]
fn ptx_without_float_arithmetic_is_not_taken_for_clean() {
    assert!(arithmetic_failure("ret;\n").is_some());
    assert_eq!(arithmetic_failure(CLEAN_PTX), None);
}

// ---- The kernels' parameters ----------------------------------------------------------------

/// The size and alignment in bytes of each parameter of the entry point `entry` in `ptx`, in
/// order (`.param .align 8 .b8 name[168]` is (168, 8); `.param .u64 name` is (8, 8)), or
/// `None` where `ptx` has no such entry point.
fn entry_parameters(ptx: &str, entry: &str) -> Option<Vec<(usize, usize)>> {
    let start = ptx.find(&format!(".entry {entry}("))?;
    let list = &ptx[start..];
    let list = &list[list.find('(')? + 1..];
    let list = &list[..list.find(')')?];
    let parameters = list
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| parameter(p).unwrap_or_else(|| panic!("{entry}: unreadable parameter {p:?}")))
        .collect();
    Some(parameters)
}

/// The size and alignment of one `.param` declaration.
fn parameter(declaration: &str) -> Option<(usize, usize)> {
    let mut tokens = declaration.split_whitespace();
    if tokens.next()? != ".param" {
        return None;
    }
    let mut align = None;
    let mut element = None;
    let mut count = 1;
    while let Some(token) = tokens.next() {
        if token == ".align" {
            align = Some(tokens.next()?.parse().ok()?);
        } else if let Some(bits) = token
            .strip_prefix(".b")
            .or_else(|| token.strip_prefix(".u"))
            .or_else(|| token.strip_prefix(".s"))
            .or_else(|| token.strip_prefix(".f"))
            .and_then(|bits| bits.parse::<usize>().ok())
        {
            element = Some(bits / 8);
        } else if let Some((_, n)) = token.split_once('[') {
            count = n.strip_suffix(']')?.parse().ok()?;
        }
    }
    let element = element?;
    Some((element * count, align.unwrap_or(element)))
}

/// The size and alignment of `T` as Rust lays it out.
fn rust_layout<T>() -> (usize, usize) {
    (size_of::<T>(), align_of::<T>())
}

/// A struct passed by value: its name and its (size, alignment) in bytes.
type Struct = (&'static str, (usize, usize));

/// Each entry point's parameter structs as the host passes them (`frame.rs`), in order.
fn host_parameters() -> [(&'static str, Vec<Struct>); 5] {
    let scene = ("Scene", rust_layout::<Scene>());
    let film = ("Film", rust_layout::<Film>());
    let work = ("Work", rust_layout::<Work>());
    let managed = ("Managed", rust_layout::<Managed>());
    [
        ("rl_persistent", vec![scene, film, work]),
        ("rl_persistent_wide", vec![scene, film, work]),
        ("rl_block_per_tile", vec![scene, film, managed]),
        ("rl_block_per_tile_wide", vec![scene, film, managed]),
        ("rl_fill_deques", vec![scene, work]),
    ]
}

/// Fails where an entry point's parameters in `ptx` differ in number, size or alignment from
/// the structs the host passes it, or where an entry point is missing from [`host_parameters`].
fn assert_parameters_match_layout(ptx: &str, what: &str) {
    let expected = host_parameters();
    let mut named: Vec<&str> = expected.iter().map(|(entry, _)| *entry).collect();
    let mut entry_points = ENTRY_POINTS.to_vec();
    named.sort_unstable();
    entry_points.sort_unstable();
    assert_eq!(
        named, entry_points,
        "every entry point's parameters are listed here"
    );
    for (entry, structs) in expected {
        let found = entry_parameters(ptx, entry)
            .unwrap_or_else(|| panic!("{what}: no entry point {entry}"));
        let host: Vec<(usize, usize)> = structs.iter().map(|(_, layout)| *layout).collect();
        assert_eq!(
            found, host,
            "{what}: {entry}'s parameters as (size, alignment) in the PTX against the host's \
             {structs:?}"
        );
    }
}

#[test]
fn parameters_are_read_from_an_entry_declaration() {
    assert_eq!(
        entry_parameters(CLEAN_PTX, "rl_example"),
        Some(vec![(168, 8), (4, 4)])
    );
    assert_eq!(entry_parameters(CLEAN_PTX, "rl_missing"), None);
    let ptx = ".visible .entry rl_none()\n{\n\tret;\n}\n";
    assert_eq!(entry_parameters(ptx, "rl_none"), Some(vec![]));
    assert_eq!(
        parameter(".param .u64 .ptr .global .align 16 rl_p_param_0"),
        Some((8, 16))
    );
    assert_eq!(
        parameter(".param .align 4 .b8 rl_p_param_1[12]"),
        Some((12, 4))
    );
}

#[test]
fn a_parameter_of_another_size_is_found() {
    let ptx = ".visible .entry rl_fill_deques(\n\t.param .align 8 .b8 rl_fill_deques_param_0[168],\n\t.param .align 8 .b8 rl_fill_deques_param_1[88]\n)\n";
    let found = entry_parameters(ptx, "rl_fill_deques").unwrap();
    assert_ne!(found, vec![rust_layout::<Scene>(), rust_layout::<Work>()]);
}
