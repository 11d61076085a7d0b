//! The same mesh as OBJ, ASCII PLY and binary PLY of both byte orders renders to the same
//! bytes through `raylb render --mesh`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::ok;

/// A mesh as an OBJ file has it, one PLY vertex per distinct `v//vn` corner.
struct Converted {
    positions: Vec<[f32; 3]>,
    /// One per position, or none.
    normals: Vec<[f32; 3]>,
    faces: Vec<Vec<u32>>,
}

/// Reads the `v`, `vn` and `f` statements of OBJ text (positive indices), as a PLY needs
/// them: a vertex for every distinct position and normal pair that a face corner names, as
/// the OBJ reader makes them too.
fn convert(obj: &str) -> Converted {
    let number = |w: &str| w.parse::<f32>().expect("a number");
    let (mut v, mut vn) = (Vec::new(), Vec::new());
    let mut corners: HashMap<(usize, Option<usize>), u32> = HashMap::new();
    let mut out = Converted {
        positions: Vec::new(),
        normals: Vec::new(),
        faces: Vec::new(),
    };
    for line in obj.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => v.push([(); 3].map(|_| number(words.next().unwrap()))),
            Some("vn") => vn.push([(); 3].map(|_| number(words.next().unwrap()))),
            Some("f") => {
                let face = words
                    .map(|corner| {
                        let mut refs = corner.split('/');
                        let p: usize = refs.next().unwrap().parse().unwrap();
                        let n = refs.nth(1).map(|n| n.parse::<usize>().unwrap());
                        *corners.entry((p, n)).or_insert_with(|| {
                            out.positions.push(v[p - 1]);
                            if let Some(n) = n {
                                out.normals.push(vn[n - 1]);
                            }
                            out.positions.len() as u32 - 1
                        })
                    })
                    .collect();
                out.faces.push(face);
            }
            _ => {}
        }
    }
    assert!(
        out.normals.is_empty() || out.normals.len() == out.positions.len(),
        "normals on some corners only"
    );
    out
}

impl Converted {
    fn header(&self, format: &str, coordinate: &str, list: &str) -> String {
        let mut h = format!(
            "ply\nformat {format} 1.0\ncomment converted from OBJ by raylb's tests\nelement vertex {}\n",
            self.positions.len()
        );
        let mut names = vec!["x", "y", "z"];
        if !self.normals.is_empty() {
            names.extend(["nx", "ny", "nz"]);
        }
        for name in names {
            writeln!(h, "property {coordinate} {name}").unwrap();
        }
        write!(
            h,
            "element face {}\nproperty list {list} vertex_indices\nend_header\n",
            self.faces.len()
        )
        .unwrap();
        h
    }

    fn values(&self, i: usize) -> Vec<f32> {
        let mut values = self.positions[i].to_vec();
        if let Some(n) = self.normals.get(i) {
            values.extend(n);
        }
        values
    }

    /// ASCII, `float` coordinates (written as Rust writes an `f32`, which reads back exactly).
    fn ascii(&self) -> Vec<u8> {
        let mut text = self.header("ascii", "float", "uchar int");
        for i in 0..self.positions.len() {
            let values: Vec<String> = self.values(i).iter().map(f32::to_string).collect();
            writeln!(text, "{}", values.join(" ")).unwrap();
        }
        for face in &self.faces {
            write!(text, "{}", face.len()).unwrap();
            for i in face {
                write!(text, " {i}").unwrap();
            }
            text.push('\n');
        }
        text.into_bytes()
    }

    /// Little endian: `float` coordinates, `uchar uint` corner lists.
    fn little_endian(&self) -> Vec<u8> {
        let mut bytes = self
            .header("binary_little_endian", "float", "uchar uint")
            .into_bytes();
        for i in 0..self.positions.len() {
            for x in self.values(i) {
                bytes.extend(x.to_le_bytes());
            }
        }
        for face in &self.faces {
            bytes.push(u8::try_from(face.len()).unwrap());
            for i in face {
                bytes.extend(i.to_le_bytes());
            }
        }
        bytes
    }

    /// Big endian: `double` coordinates (widened exactly), `int int` corner lists.
    fn big_endian(&self) -> Vec<u8> {
        let mut bytes = self
            .header("binary_big_endian", "double", "int int")
            .into_bytes();
        for i in 0..self.positions.len() {
            for x in self.values(i) {
                bytes.extend(f64::from(x).to_be_bytes());
            }
        }
        for face in &self.faces {
            bytes.extend((face.len() as i32).to_be_bytes());
            for &i in face {
                bytes.extend((i as i32).to_be_bytes());
            }
        }
        bytes
    }
}

/// A globe of quads between parallels, capped at each pole by one 16-sided polygon, with
/// vertex normals of uneven lengths (both readers make them unit length): fans, polygons and
/// smooth shading all show in the image.
fn generated_obj() -> String {
    const SEGMENTS: usize = 16;
    const RINGS: usize = 9;
    let mut obj = String::from("# a globe\n");
    for j in 1..=RINGS {
        let polar = j as f32 * std::f32::consts::PI / (RINGS + 1) as f32;
        for i in 0..SEGMENTS {
            let azimuth = i as f32 * std::f32::consts::TAU / SEGMENTS as f32;
            let p = [
                polar.sin() * azimuth.cos(),
                polar.cos(),
                polar.sin() * azimuth.sin(),
            ];
            let [x, y, z] = p;
            writeln!(obj, "v {x:.6} {y:.6} {z:.6}").unwrap();
            let length = 1.5 + 0.5 * ((3 * i + 2 * j) as f32).sin();
            let [x, y, z] = p.map(|c| c * length);
            writeln!(obj, "vn {x:.6} {y:.6} {z:.6}").unwrap();
        }
    }
    let at = |i: usize, j: usize| (j - 1) * SEGMENTS + i % SEGMENTS + 1;
    let corner = |k: usize| format!("{k}//{k}");
    for j in 1..RINGS {
        for i in 0..SEGMENTS {
            let quad = [at(i, j), at(i, j + 1), at(i + 1, j + 1), at(i + 1, j)].map(corner);
            writeln!(obj, "f {}", quad.join(" ")).unwrap();
        }
    }
    let top: Vec<String> = (0..SEGMENTS).rev().map(|i| corner(at(i, 1))).collect();
    let bottom: Vec<String> = (0..SEGMENTS).map(|i| corner(at(i, RINGS))).collect();
    writeln!(obj, "f {}\nf {}", top.join(" "), bottom.join(" ")).unwrap();
    obj
}

/// Renders each file with `raylb render --mesh` and checks every PNG is the first's, byte for
/// byte.
fn renders_alike(dir: &Path, files: &[PathBuf]) {
    let mut first: Option<Vec<u8>> = None;
    for file in files {
        let png = file.with_extension(format!(
            "{}.png",
            file.extension().unwrap().to_string_lossy()
        ));
        let out = Command::new(env!("CARGO_BIN_EXE_raylb"))
            .args(["render", "--mesh"])
            .arg(file)
            .args([
                "--width",
                "64",
                "--height",
                "48",
                "--threads",
                "2",
                "--quiet",
                "-o",
            ])
            .arg(&png)
            .current_dir(dir)
            .output()
            .expect("raylb runs");
        ok(&out);
        let bytes = fs::read(&png).unwrap();
        match &first {
            None => first = Some(bytes),
            Some(reference) => assert!(
                *reference == bytes,
                "{} renders differently from {}",
                file.display(),
                files[0].display()
            ),
        }
    }
}

/// Writes `obj` and its three PLY conversions to `dir` under `stem`; returns the four paths,
/// the OBJ first.
fn write_all(dir: &Path, stem: &str, obj: &str) -> Vec<PathBuf> {
    let converted = convert(obj);
    let files = [
        (format!("{stem}.obj"), obj.as_bytes().to_vec()),
        (format!("{stem}-ascii.ply"), converted.ascii()),
        (format!("{stem}-le.ply"), converted.little_endian()),
        (format!("{stem}-be.PLY"), converted.big_endian()),
    ];
    files
        .into_iter()
        .map(|(name, bytes)| {
            let path = dir.join(name);
            fs::write(&path, bytes).unwrap();
            path
        })
        .collect()
}

#[test]
fn generated_mesh_renders_alike_from_obj_and_every_ply_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let obj = generated_obj();
    let converted = convert(&obj);
    assert_eq!(converted.normals.len(), converted.positions.len());
    assert!(converted.faces.iter().any(|f| f.len() == 16));
    renders_alike(dir.path(), &write_all(dir.path(), "globe", &obj));
}

/// The Stanford bunny from the shared test meshes, where they are (never in a fresh clone).
#[test]
fn stanford_bunny_renders_alike_from_obj_and_every_ply_encoding() {
    let bunny =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets/stanford-bunny.obj");
    let Ok(obj) = fs::read_to_string(&bunny) else {
        eprintln!("skipped: no {}", bunny.display());
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    renders_alike(dir.path(), &write_all(dir.path(), "bunny", &obj));
}

#[test]
fn mesh_help_names_both_formats() {
    let out = Command::new(env!("CARGO_BIN_EXE_raylb"))
        .args(["render", "--help"])
        .output()
        .expect("raylb runs");
    let help = ok(&out);
    assert!(help.contains("--mesh <FILE.obj|FILE.ply>"), "{help}");
}
