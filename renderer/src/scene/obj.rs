//! OBJ meshes and their MTL materials, read through `tobj`.
//!
//! `tobj` reports malformed input without a line number, so each file is first checked line
//! by line here: numbers that do not parse, NaN or infinite coordinates, faces with too few
//! corners or indices out of range, and statements that are not OBJ. A file that passes is
//! then read by `tobj`. What `tobj` would drop without a word is warned of: a `usemtl` whose
//! material no library defines, and MTL statements raylb does not use.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Cursor};
use std::path::{Path, PathBuf};

use crate::math::Vec3;

use super::Reads;
use super::error::SceneError;
use super::material::{self, Material};
use super::mesh::Mesh;
use super::mesh_file::MeshBudget;
use crate::input::{MAX_MESH_BYTES, MAX_MTL_BYTES, read_regular_file};

/// One part of an OBJ file: its triangles and the material its MTL gives it, if any.
#[derive(Debug)]
pub(crate) struct ObjPart {
    pub(crate) mesh: Mesh,
    pub(crate) material: Option<Material>,
}

/// Statements of the OBJ format that carry no triangles and are skipped.
const OTHER_STATEMENTS: &[&str] = &[
    "vp",
    "l",
    "p",
    "g",
    "o",
    "s",
    "mtllib",
    "usemtl",
    "cstype",
    "deg",
    "bmat",
    "step",
    "curv",
    "curv2",
    "surf",
    "parm",
    "trim",
    "hole",
    "scrv",
    "sp",
    "end",
    "con",
    "mg",
    "bevel",
    "c_interp",
    "d_interp",
    "lod",
    "shadow_obj",
    "trace_obj",
    "ctech",
    "stech",
    "maplib",
    "usemap",
];

/// The MTL statements raylb reads (see [`material::from_mtl`]); any other is left out, with a
/// warning.
const MTL_STATEMENTS: &[&str] = &[
    "newmtl", "Ka", "Kd", "Ks", "Ns", "Ni", "d", "Tr", "Tf", "illum",
];

/// The most keys (MTL keywords, material names) of one file warned of one by one: enough to
/// show what is wrong, short of a screenful from a file of junk. The lines past them are
/// counted in one more warning.
const MAX_WARNED_KEYS: usize = 8;

/// What becomes of the MTL files an OBJ names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MtlFiles {
    /// The OBJ's own materials colour it: they are read from the OBJ file's directory, one
    /// that cannot be read is an error, and what of them raylb leaves out is warned of.
    Needed,
    /// The scene gives the object a material of its own: they are read, and one that cannot
    /// be read is worth a warning, no more.
    Overridden,
    /// Left unread, so that every part has no material: for OBJ text that has no directory,
    /// such as a fuzzer's input.
    Skip,
}

/// Reads `path` (an OBJ) and the MTL files it names; fails if the file has more than
/// `max_triangles` triangles (counted before anything is built). The files read, and the
/// warnings, go to `reads`.
pub(crate) fn load(
    path: &Path,
    budget: MeshBudget,
    mtl: MtlFiles,
    reads: &mut Reads,
) -> Result<Vec<ObjPart>, SceneError> {
    // The text is held through the parse: a file larger than the room for it is not read.
    if let Ok(meta) = std::fs::metadata(path) {
        let text_alone = ObjCounts::default();
        check_parse_room(path, meta.len(), text_alone, budget.bytes)?;
    }
    let bytes = read_regular_file(path, MAX_MESH_BYTES).map_err(|e| SceneError::file(path, e))?;
    reads.file(path);
    parse(&bytes, path, budget, mtl, reads)
}

/// Reads an OBJ file from `bytes`, naming `path` in errors, and the MTL files it names as
/// `mtl` says; fails if the file has more than `max_triangles` triangles (counted before
/// anything is built).
pub(crate) fn parse(
    bytes: &[u8],
    path: &Path,
    budget: MeshBudget,
    mtl: MtlFiles,
    reads: &mut Reads,
) -> Result<Vec<ObjPart>, SceneError> {
    let source = text(path, bytes)?;
    for warning in check_size(path, source, budget)? {
        reads.warn(warning);
    }
    let libraries = Libraries::new(path, source, mtl, reads);
    let (models, materials) = read_with_tobj(path, source, &libraries)?;
    let materials = libraries.finish(materials)?;
    Ok(models
        .into_iter()
        .map(|model| part(model.mesh, &materials))
        .collect())
}

/// Checks every line of the OBJ file `path` (text `source`), then that its triangles fit in
/// `max_triangles` and that reading it fits in the memory that budget stands for. Returns the
/// warnings of the lines checked ([`validate_obj`]).
fn check_size(path: &Path, source: &str, budget: MeshBudget) -> Result<Vec<String>, SceneError> {
    let (counts, warnings) = validate_obj(path, source)?;
    let triangles = counts.triangles;
    if triangles > budget.triangles as u64 {
        return Err(SceneError::file(
            path,
            format!(
                "{triangles} triangles: more than the {} the scene has room for",
                budget.triangles
            ),
        ));
    }
    check_parse_room(path, source.len() as u64, counts, budget.bytes)?;
    Ok(warnings)
}

/// The OBJ file `path` (text `source`, already checked) as `tobj` reads it, with the MTL
/// files it names read through `libraries`: its parts, and every library's materials (none
/// where a library failed).
fn read_with_tobj(
    path: &Path,
    source: &str,
    libraries: &Libraries<'_, '_>,
) -> Result<(Vec<tobj::Model>, Vec<tobj::Material>), SceneError> {
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ignore_points: true,
        ignore_lines: true,
    };
    // `tobj` takes a comment after a statement (`f 1 2 3  # lid`) as part of it, where the
    // check (and the format) ends the statement at `#`, and it reads polylines as faces: it
    // reads the text without either.
    let text = for_tobj(source);
    tobj::load_obj_buf(
        &mut BufReader::new(Cursor::new(text.as_ref())),
        &options,
        |mtl_name| libraries.load(mtl_name),
    )
    .map(|(models, materials)| (models, materials.unwrap_or_default()))
    .map_err(|e| SceneError::file(path, format!("not a valid OBJ file: {e}")))
}

/// The MTL files of one OBJ file as `tobj` asks for them, one `mtllib` statement at a time
/// (through a shared reference, which is all `tobj` lends its loader): what each gave, the
/// first that failed where that is an error, and the files read and warnings.
struct Libraries<'a, 'r> {
    /// The OBJ file and its text.
    path: &'a Path,
    source: &'a str,
    /// Its directory, where the libraries are looked for.
    dir: PathBuf,
    mtl: MtlFiles,
    reads: RefCell<&'r mut Reads>,
    /// How many materials each `mtllib` statement gave, in order: what a `usemtl` can name.
    given: RefCell<Vec<usize>>,
    /// The first library that could not be read, where that is an error.
    error: RefCell<Option<SceneError>>,
}

impl<'a, 'r> Libraries<'a, 'r> {
    fn new(path: &'a Path, source: &'a str, mtl: MtlFiles, reads: &'r mut Reads) -> Self {
        Self {
            path,
            source,
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            mtl,
            reads: RefCell::new(reads),
            given: RefCell::new(Vec::new()),
            error: RefCell::new(None),
        }
    }

    /// The materials of the libraries `mtl_name` names (the next `mtllib` statement's), or
    /// none, as `mtl` says: a library that cannot be read is kept as the error, or warned of
    /// where the object's own material stands in.
    fn load(&self, mtl_name: &Path) -> tobj::MTLLoadResult {
        if self.mtl == MtlFiles::Skip {
            return Ok(Default::default());
        }
        let statement = self.given.borrow().len();
        let mut materials = Vec::new();
        let mut failed = None;
        for mtl_path in library_paths(&self.dir, mtl_name) {
            match self.load_one(statement, &mtl_path) {
                Ok(more) => materials.extend(more),
                Err(e) => {
                    failed = Some((mtl_path, e));
                    break;
                }
            }
        }
        let Some((mtl_path, e)) = failed else {
            self.given.borrow_mut().push(materials.len());
            // Each name stands for its last material, as in `tobj`'s map of one library and
            // its merge of several.
            let mut loaded: tobj::MTLLoadResult = Ok((materials, Default::default()));
            if let Ok((materials, names)) = &mut loaded {
                for (i, m) in materials.iter().enumerate() {
                    names.insert(m.name.clone(), i);
                }
            }
            return loaded;
        };
        self.given.borrow_mut().push(0);
        match self.mtl {
            MtlFiles::Needed | MtlFiles::Skip => {
                // Named from the statement that asked for the library, unless it is that
                // statement's own fault (it names this OBJ file).
                let e = if e.path == self.path {
                    e
                } else {
                    let (line, column, name) = mtllib_statement(self.source, statement);
                    SceneError::at(self.path, line, column, format!("`mtllib {name}`: {e}"))
                };
                self.error.borrow_mut().get_or_insert(e);
            }
            MtlFiles::Overridden => self.reads.borrow_mut().warn_once(
                &mtl_path,
                format!("{e}; the object's own `material` stands in"),
            ),
        }
        Err(tobj::LoadError::OpenFileFailed)
    }

    /// The materials of the library at `mtl_path`, named by `mtllib` statement `statement`.
    fn load_one(
        &self,
        statement: usize,
        mtl_path: &Path,
    ) -> Result<Vec<tobj::Material>, SceneError> {
        not_itself(self.path, self.source, statement, mtl_path)
            .and_then(|()| checked_mtl(mtl_path))
            .and_then(|(source, left_out)| {
                let mut reads = self.reads.borrow_mut();
                reads.file(mtl_path);
                // Overridden, none of the library is used: nothing is left out.
                if self.mtl == MtlFiles::Needed {
                    left_out.into_iter().for_each(|w| reads.warn(w));
                }
                tobj::load_mtl_buf(&mut BufReader::new(Cursor::new(&source)))
                    .map(|(materials, _)| materials)
                    .map_err(|e| SceneError::file(mtl_path, format!("not a valid MTL file: {e}")))
            })
    }

    /// Once `tobj` is done: the first library that failed, if that is an error; else every
    /// library's `materials`, with warnings for the `usemtl` statements that name none of
    /// them where the OBJ's own materials colour it.
    fn finish(self, materials: Vec<tobj::Material>) -> Result<Vec<tobj::Material>, SceneError> {
        if let Some(e) = self.error.into_inner() {
            return Err(e);
        }
        if self.mtl == MtlFiles::Needed {
            let reads = self.reads.into_inner();
            let given = self.given.into_inner();
            for warning in missing_materials(self.path, self.source, &given, &materials) {
                reads.warn(warning);
            }
        }
        Ok(materials)
    }
}

/// The files an `mtllib` statement's `name` (all that follows its keyword) stands for, in
/// `dir`: the one file of that name where there is one, as a name may hold spaces; else each of
/// its words, as the statement may name several libraries.
fn library_paths(dir: &Path, name: &Path) -> Vec<PathBuf> {
    let whole = dir.join(name);
    let text = name.to_string_lossy();
    if text.split_whitespace().nth(1).is_none() || whole.exists() {
        return vec![whole];
    }
    text.split_whitespace().map(|word| dir.join(word)).collect()
}

/// One part of the OBJ file as `tobj` read it, in raylb's mesh, with the material its MTL
/// gives it (an index into `materials`). Normals are kept only where every position has a
/// finite one, and are normalised (zero where they cannot be).
fn part(m: tobj::Mesh, materials: &[tobj::Material]) -> ObjPart {
    let v3 = |s: &[f32]| {
        s.chunks_exact(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect::<Vec<_>>()
    };
    let positions = v3(&m.positions);
    let mut normals = v3(&m.normals);
    if normals.len() != positions.len() || normals.iter().any(|n| !n.is_finite()) {
        normals.clear();
    }
    normals.iter_mut().for_each(|n| *n = n.normalize_or_zero());
    let faces = m
        .indices
        .chunks_exact(3)
        .map(|f| [f[0], f[1], f[2]])
        .collect();
    ObjPart {
        mesh: Mesh {
            positions,
            normals,
            faces,
        },
        material: m
            .material_id
            .and_then(|i| materials.get(i))
            .map(material::from_mtl),
    }
}

/// `source` as `tobj` is to read it: every line cut at its first `#` and bare of leading
/// blanks, and every polyline (`l`) statement left out (a line of its own stays, empty).
/// `tobj` reads `l` with its face parser, so `l a b c` would become a triangle, and its
/// indices are not among those [`validate_obj`] checks: a polyline is no surface to trace.
/// `tobj` takes a name (of `mtllib`, `usemtl`, `o`) as all that follows the first space of
/// the line, so an indented `  usemtl red` would name `usemtl red`. Borrowed when there is
/// nothing to change.
fn for_tobj(source: &str) -> std::borrow::Cow<'_, str> {
    let polyline = |line: &str| line.split_whitespace().next() == Some("l");
    let as_is = |line: &str| {
        !line.contains('#') && !line.starts_with(char::is_whitespace) && !polyline(line)
    };
    if source.lines().all(as_is) {
        return source.into();
    }
    let mut out = String::with_capacity(source.len());
    for line in source.lines() {
        let line = line.split('#').next().unwrap_or("").trim_start();
        if !polyline(line) {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.into()
}

/// A line's keyword and the rest of its statement, as `tobj` reads them from what
/// [`for_tobj`] makes of the line: the rest is all that follows the first space, trimmed (a
/// name may hold spaces).
fn statement(line: &str) -> (&str, &str) {
    let text = line.split('#').next().unwrap_or("").trim();
    let keyword = text.split_whitespace().next().unwrap_or("");
    let rest = text.split_once(' ').map_or("", |(_, rest)| rest.trim());
    (keyword, rest)
}

/// Refuses the `k`-th `mtllib` statement (from 0) of the OBJ file `path`, whose text is
/// `source`, if it names `path` itself: read as a material library, the OBJ would give no
/// materials, without a word.
fn not_itself(path: &Path, source: &str, k: usize, library: &Path) -> Result<(), SceneError> {
    let same = match (std::fs::canonicalize(path), std::fs::canonicalize(library)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same {
        return Ok(());
    }
    let (line, column, name) = mtllib_statement(source, k);
    Err(SceneError::at(
        path,
        line,
        column,
        format!(
            "`mtllib {name}` names this OBJ file itself; a material library is an MTL file of its own"
        ),
    ))
}

/// The line and column (1-based, the column in characters) of the name of the `k`-th
/// `mtllib` statement (from 0) of the OBJ text `source`, and that name; line 0 if there is
/// none, which `tobj` does not ask for.
fn mtllib_statement(source: &str, k: usize) -> (usize, usize, &str) {
    source
        .lines()
        .enumerate()
        .filter_map(|(n, l)| match statement(l) {
            ("mtllib", name) => {
                let at = l.find(name).map_or(0, |byte| l[..byte].chars().count());
                Some((n + 1, at + 1, name))
            }
            _ => None,
        })
        .nth(k)
        .unwrap_or((0, 1, ""))
}

/// Warnings for the `usemtl` statements of the OBJ file `path` (text `source`) whose material
/// none of the libraries named before them defines: `tobj` gives their faces no material, and
/// they take the default one. `given[k]` is how many of `materials` (every library's, in the
/// order they were read) the `k`-th `mtllib` statement gave.
fn missing_materials(
    path: &Path,
    source: &str,
    given: &[usize],
    materials: &[tobj::Material],
) -> Vec<String> {
    // Each name's first material: a `usemtl` finds it once the library that gives it is read.
    let mut first = HashMap::new();
    for (i, m) in materials.iter().enumerate() {
        first.entry(m.name.as_str()).or_insert(i);
    }
    // The libraries named so far, in order, for the warnings, and how many statements named
    // them.
    let (mut libraries, mut seen, mut named) = (Vec::new(), HashSet::new(), 0);
    let mut read = 0;
    let mut left_out = LeftOut::default();
    for (n, line) in source.lines().enumerate() {
        match statement(line) {
            ("mtllib", library) => {
                read += given.get(named).copied().unwrap_or(0);
                named += 1;
                if seen.insert(library) {
                    libraries.push(library);
                }
            }
            ("usemtl", name) if first.get(name).is_none_or(|&i| i >= read) => {
                left_out.add(name, n + 1, || {
                    if named == 0 {
                        return "no `mtllib` before it names a material library".to_string();
                    }
                    let list = match &libraries[..] {
                        [one] => one.to_string(),
                        [some @ .., last] if some.len() < 3 => {
                            format!("{} or {last}", some.join(", "))
                        }
                        all => format!("{} or {} more", all[..3].join(", "), all.len() - 3),
                    };
                    format!("no material `{name}` in {list}")
                });
            }
            _ => {}
        }
    }
    left_out.warnings(
        path,
        |k| {
            format!(
                "`usemtl {}`{}: {}; {} faces take the default material",
                k.key,
                here_and_more(k.more),
                k.why,
                if k.more == 0 { "its" } else { "their" }
            )
        },
        |lines| {
            format!(
                "{lines} more `usemtl` lines, the first here, name materials their libraries lack; their faces take the default material"
            )
        },
    )
}

/// Lines of one file that raylb leaves out, by a key (an MTL statement's keyword, the material
/// a `usemtl` names), for warnings: each key's first line, what is wrong there, and how many
/// more lines have it. Past [`MAX_WARNED_KEYS`] keys, lines are only counted.
#[derive(Debug, Default)]
struct LeftOut<'a> {
    keys: Vec<LeftOutKey<'a>>,
    /// The first line past the keys warned of one by one, and how many such lines there are.
    rest: Option<(usize, usize)>,
}

/// One key of [`LeftOut`].
#[derive(Debug)]
struct LeftOutKey<'a> {
    key: &'a str,
    /// Where it is first met.
    line: usize,
    /// How many more lines have it.
    more: usize,
    /// What is wrong where it is first met.
    why: String,
}

impl<'a> LeftOut<'a> {
    /// Line `line` has `key`; `why` says what is wrong, if the key is new.
    fn add(&mut self, key: &'a str, line: usize, why: impl FnOnce() -> String) {
        if let Some(known) = self.keys.iter_mut().find(|k| k.key == key) {
            known.more += 1;
        } else if self.keys.len() < MAX_WARNED_KEYS {
            self.keys.push(LeftOutKey {
                key,
                line,
                more: 0,
                why: why(),
            });
        } else {
            self.rest.get_or_insert((line, 0)).1 += 1;
        }
    }

    /// One warning per key, `say(key)` at its first line of `path`, then `rest(lines)` at the
    /// first line past them.
    fn warnings(
        self,
        path: &Path,
        say: impl Fn(&LeftOutKey<'_>) -> String,
        rest: impl Fn(usize) -> String,
    ) -> Vec<String> {
        let at = |line, message| SceneError::at_line(path, line, message).to_string();
        let mut warnings: Vec<String> = self.keys.iter().map(|k| at(k.line, say(k))).collect();
        if let Some((line, lines)) = self.rest {
            warnings.push(at(line, rest(lines)));
        }
        warnings
    }
}

/// ` here and on N more lines`, or nothing for none.
fn here_and_more(more: usize) -> String {
    match more {
        0 => String::new(),
        1 => " here and on 1 more line".into(),
        n => format!(" here and on {n} more lines"),
    }
}

/// The OBJ statements that describe geometry raylb does not trace, with what each is.
const UNTRACED_GEOMETRY: &[(&str, &str)] = &[
    ("p", "points"),
    ("l", "a polyline"),
    ("curv", "a free-form curve"),
    ("curv2", "a free-form curve on a surface"),
    ("surf", "a free-form surface"),
];

/// Reads a text file of at most `max_bytes` (a regular file, see [`read_regular_file`]).
pub(crate) fn read_text(path: &Path, max_bytes: u64) -> Result<String, SceneError> {
    let bytes = read_regular_file(path, max_bytes).map_err(|e| SceneError::file(path, e))?;
    text(path, &bytes).map(str::to_string)
}

/// `bytes` as text, or a fault at the line where they stop being UTF-8.
fn text<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, SceneError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        SceneError::at_line(path, line, "not UTF-8 text")
    })
}

/// Checks every line of an OBJ file; the first fault is reported with its line. Returns the
/// number of triangles its faces make, and of its vertex statements; and a warning for each
/// kind of geometry raylb leaves out ([`UNTRACED_GEOMETRY`]), at its first line: a user who
/// drew it would otherwise look for it in the image.
fn validate_obj(path: &Path, source: &str) -> Result<(ObjCounts, Vec<String>), SceneError> {
    let (mut positions, mut normals, mut texcoords) = (0i64, 0i64, 0i64);
    let mut triangles = 0u64;
    let mut untraced = LeftOut::default();
    for (n, raw) in source.lines().enumerate() {
        let line = n + 1;
        let fail = |msg: String| Err(SceneError::at_line(path, line, msg));
        let text = raw.split('#').next().unwrap_or("").trim();
        let mut words = text.split_whitespace();
        let Some(keyword) = words.next() else {
            continue;
        };
        let args: Vec<&str> = words.collect();
        match keyword {
            "v" | "vn" | "vt" => {
                let needed = if keyword == "vt" { 1 } else { 3 };
                if args.len() < needed {
                    let plural = if needed == 1 { "" } else { "s" };
                    return fail(format!(
                        "`{keyword}` needs {needed} coordinate{plural}, found {}",
                        args.len()
                    ));
                }
                for a in &args {
                    match a.parse::<f32>() {
                        Ok(x) if x.is_finite() => {}
                        Ok(x) => {
                            return fail(format!(
                                "coordinate `{a}` is {}; coordinates must be finite",
                                describe(x)
                            ));
                        }
                        Err(_) => return fail(format!("coordinate `{a}` is not a number")),
                    }
                }
                match keyword {
                    "v" => positions += 1,
                    "vn" => normals += 1,
                    _ => texcoords += 1,
                }
            }
            "mtllib" | "usemtl" if args.is_empty() => {
                return fail(format!("`{keyword}` needs a name"));
            }
            "f" => {
                if args.len() < 3 {
                    return fail(format!(
                        "a face needs at least 3 corners, found {}",
                        args.len()
                    ));
                }
                for corner in &args {
                    let refs: Vec<&str> = corner.split('/').collect();
                    let lists = [
                        ("vertex", positions),
                        ("texture coordinate", texcoords),
                        ("normal", normals),
                    ];
                    if refs.len() > 3 || refs[0].is_empty() {
                        return fail(format!(
                            "face corner `{corner}` is not `v`, `v/vt`, `v//vn` or `v/vt/vn`"
                        ));
                    }
                    for (r, (what, count)) in refs.iter().zip(lists) {
                        if r.is_empty() {
                            continue;
                        }
                        let Ok(index) = r.parse::<i64>() else {
                            return fail(format!("face corner `{corner}`: `{r}` is not an index"));
                        };
                        let resolved = if index < 0 { count + 1 + index } else { index };
                        if index == 0 || resolved < 1 || resolved > count {
                            return fail(format!(
                                "face corner `{corner}` refers to {what} {index}, but {count} are defined so far"
                            ));
                        }
                    }
                }
                triangles += args.len() as u64 - 2;
            }
            k if OTHER_STATEMENTS.contains(&k) => {
                if let Some((key, what)) = UNTRACED_GEOMETRY.iter().find(|(key, _)| *key == k) {
                    untraced.add(key, line, || what.to_string());
                }
            }
            k => return fail(format!("unknown statement `{k}`")),
        }
    }
    if triangles == 0 {
        return Err(SceneError::file(path, "the OBJ file has no faces"));
    }
    let counts = ObjCounts {
        triangles,
        positions: positions as u64,
        normals: normals as u64,
        texcoords: texcoords as u64,
    };
    let warnings = untraced.warnings(
        path,
        |k| {
            let more = here_and_more(k.more);
            format!(
                "`{}` ({}) is left out{more}: raylb traces faces alone",
                k.key, k.why
            )
        },
        |lines| format!("{lines} more lines, the first here, hold geometry raylb leaves out"),
    );
    Ok((counts, warnings))
}

fn describe(x: f32) -> &'static str {
    if x.is_nan() { "NaN" } else { "infinite" }
}

/// Reads an MTL file and checks that its numeric statements hold finite numbers (and that
/// `illum` is a whole number from 0 to 10). Returns the text with every colour written out as
/// three numbers: the MTL format allows `Kd r` and `Kd r g` (the missing channels repeat
/// `r`), which `tobj` cannot read; and a warning for each statement keyword raylb leaves out
/// (not among [`MTL_STATEMENTS`]: a texture map, or a typo such as `Kdd`).
fn checked_mtl(path: &Path) -> Result<(String, Vec<String>), SceneError> {
    let source = read_text(path, MAX_MTL_BYTES)?;
    let mut out = String::with_capacity(source.len());
    let mut left_out = LeftOut::default();
    for (n, raw) in source.lines().enumerate() {
        let fail = |msg: String| Err(SceneError::at_line(path, n + 1, msg));
        let text = raw.split('#').next().unwrap_or("").trim();
        let mut words = text.split_whitespace();
        let keyword = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        if !keyword.is_empty() && !MTL_STATEMENTS.contains(&keyword) {
            left_out.add(keyword, n + 1, String::new);
        }
        let colour = matches!(keyword, "Ka" | "Kd" | "Ks" | "Ke" | "Tf");
        let arity = match keyword {
            "Ka" | "Kd" | "Ks" | "Ke" | "Tf" => 1..=3,
            "Ns" | "Ni" | "d" | "Tr" | "illum" | "sharpness" => 1..=1,
            _ => {
                out.push_str(raw);
                out.push('\n');
                continue;
            }
        };
        let numbers: Vec<Option<f32>> = args.iter().map(|a| a.parse::<f32>().ok()).collect();
        if !arity.contains(&args.len()) || numbers.iter().any(|x| !x.is_some_and(f32::is_finite)) {
            return fail(format!(
                "`{keyword}` needs {} finite number{}, found `{}`",
                if colour { "1 to 3" } else { "1" },
                if colour { "s" } else { "" },
                args.join(" ")
            ));
        }
        if keyword == "illum" && !(0..=10).map(|i| i.to_string()).any(|i| i == args[0]) {
            return fail(format!(
                "`illum` needs a whole number from 0 to 10, found `{}`",
                args[0]
            ));
        }
        if colour {
            let first = args[0];
            let channel = |i: usize| args.get(i).copied().unwrap_or(first);
            out.push_str(&format!(
                "{keyword} {} {} {}\n",
                channel(0),
                channel(1),
                channel(2)
            ));
        } else {
            out.push_str(raw);
            out.push('\n');
        }
    }
    let reads = MTL_STATEMENTS
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>();
    let reads = format!(
        "of an MTL file raylb reads only {} and {}",
        reads[..reads.len() - 1].join(", "),
        reads[reads.len() - 1]
    );
    let warnings = left_out.warnings(
        path,
        |k| format!("`{}` is left out{}: {reads}", k.key, here_and_more(k.more)),
        |lines| format!("{lines} more lines, the first here, hold statements raylb leaves out"),
    );
    Ok((out, warnings))
}

/// What [`validate_obj`] counts in an OBJ file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ObjCounts {
    /// Triangles its faces make.
    triangles: u64,
    /// `v` statements.
    positions: u64,
    /// `vn` statements.
    normals: u64,
    /// `vt` statements.
    texcoords: u64,
}

impl ObjCounts {
    /// What `tobj` holds of every vertex statement while it reads, referenced or not: three
    /// `f32` a position or normal and two a texture coordinate, in vectors that grow by
    /// doubling (twice that at worst).
    fn arrays_bytes(&self) -> u64 {
        2 * (12 * self.positions + 12 * self.normals + 8 * self.texcoords)
    }
}

/// What reading an OBJ file takes per triangle of its faces, beside its text and its vertex
/// arrays: `tobj`'s faces and its map of the vertices they share, the mesh made of them and
/// the scene's triangle. Measured as the peak resident memory of `raylb export --mesh` on the
/// OBJ files of heightfields of 2,097,152 and 8,388,608 triangles (`raylb export`'s own, of
/// 82.7 and 351.1 MB: 514 and 2,093 MiB), less twice the text and the vertex arrays, 166 bytes
/// a triangle; rounded up.
const PARSE_BYTES_PER_TRIANGLE: u64 = 180;

/// Refuses an OBJ file whose parse would take more than `room` bytes (where a bound was given):
/// its `text` bytes (and, at worst, the copy [`for_tobj`] makes of them), the arrays `tobj`
/// fills with its vertices, which a file of many vertices and few faces can make far larger
/// than its triangles, and what its faces take ([`PARSE_BYTES_PER_TRIANGLE`]); `counts` are
/// the file's, or zero before it is read.
fn check_parse_room(
    path: &Path,
    text: u64,
    counts: ObjCounts,
    room: Option<u64>,
) -> Result<(), SceneError> {
    let Some(room) = room else {
        return Ok(());
    };
    let arrays = counts.arrays_bytes();
    let faces = counts.triangles.saturating_mul(PARSE_BYTES_PER_TRIANGLE);
    let needed = text
        .saturating_mul(2)
        .saturating_add(arrays)
        .saturating_add(faces);
    if needed <= room {
        return Ok(());
    }
    let size = crate::memory::format_bytes;
    let parts = [
        (text, "of text"),
        (arrays, "of vertices"),
        (faces, "for its faces"),
    ]
    .iter()
    .filter(|&&(bytes, _)| bytes > 0)
    .map(|&(bytes, what)| format!("{} {what}", size(bytes)))
    .collect::<Vec<_>>()
    .join(", ");
    Err(SceneError::file(
        path,
        format!(
            "reading it takes about {} ({parts}), more than the {} of memory the scene has room for",
            size(needed),
            size(room)
        ),
    ))
}
