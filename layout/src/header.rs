//! The CUDA header of the shared layout, written from the definitions of this crate.
//!
//! [`generate`] gives the text of `kernels/cuda/raylb_layout.cuh`: the constants, the enums'
//! values and the structs, each with its documentation and followed by `static_assert`s of its
//! size, alignment and every field's offset. The header is checked in; the kernels' test
//! `layout_header` fails when it differs from this text and says how to write it again.

use std::fmt::Write;

use crate::c::{CEnum, CStruct, Constant};
use crate::kernel::{Counts, DequeHead, ErrorBit, KERNEL_CONSTANTS, Mode, Stat, WarpDeque};
use crate::params::{Film, Managed, Scene, WideBvh, Work};
use crate::scene::{
    Camera, FlatNode, Light, Material, RenderSettings, SCENE_CONSTANTS, Triangle, TriangleShading,
};
use crate::task::{TASK_CONSTANTS, Task, TaskKind};
use crate::wide::{WIDE_CONSTANTS, WideNode};

/// The command that writes the header again, for its first lines and for the check's message.
pub const REGENERATE: &str =
    "RAYLB_UPDATE_LAYOUT=1 cargo test -p raylb-kernels --test layout_header";

/// The text of `kernels/cuda/raylb_layout.cuh`.
///
/// ```
/// let header = layout::header::generate();
/// assert!(header.contains("#define RL_WARP 32"));
/// assert!(header.ends_with("#endif  // RAYLB_LAYOUT_CUH\n"));
/// ```
pub fn generate() -> String {
    let mut h = Header(String::new());
    h.preamble();
    h.section("Constants");
    for list in [
        SCENE_CONSTANTS,
        TASK_CONSTANTS,
        KERNEL_CONSTANTS,
        WIDE_CONSTANTS,
    ] {
        h.constants(list);
    }
    h.section("Codes");
    h.enumeration::<TaskKind>();
    h.enumeration::<Stat>();
    h.enumeration::<Mode>();
    h.enumeration::<WarpDeque>();
    h.enumeration::<ErrorBit>();
    h.section("The scene");
    h.structure::<FlatNode>();
    h.structure::<Triangle>();
    h.structure::<TriangleShading>();
    h.structure::<Material>();
    h.structure::<Light>();
    h.structure::<Camera>();
    h.structure::<RenderSettings>();
    h.structure::<WideNode>();
    h.section("Tasks and what the kernels count");
    h.structure::<Task>();
    h.structure::<Counts>();
    h.structure::<DequeHead>();
    h.section("The kernels' parameters");
    h.structure::<Scene>();
    h.structure::<Film>();
    h.structure::<Work>();
    h.structure::<Managed>();
    h.structure::<WideBvh>();
    h.0.push_str("#endif  // RAYLB_LAYOUT_CUH\n");
    h.0
}

/// The header being written. (`write!` to a `String` cannot fail: its results are dropped.)
struct Header(String);

impl Header {
    fn line(&mut self, text: &str) {
        self.0.push_str(text);
        self.0.push('\n');
    }

    fn comment(&mut self, indent: &str, doc: &[&str]) {
        for line in doc {
            let line = line.strip_prefix(' ').unwrap_or(line);
            if line.is_empty() {
                let _ = writeln!(self.0, "{indent}//");
            } else {
                let _ = writeln!(self.0, "{indent}// {line}");
            }
        }
    }

    fn section(&mut self, title: &str) {
        self.line("");
        self.line(&format!("// {:-<95}", ""));
        self.line(&format!("// {title}."));
    }

    fn preamble(&mut self) {
        let text = format!(
            "\
// raylb's data layout: every struct, code and constant the kernels share with the host.
//
// GENERATED from the Rust definitions of the `layout` crate (layout/src); do not edit.
// Write it again with: {REGENERATE}
//
// Each struct is followed by static_asserts of its size, its alignment and every field's
// offset: the numbers the Rust definitions assert at compile time. Included by
// raylb_math.cuh, so by the kernels (NVRTC) and by the host build of the math (C++).
#ifndef RAYLB_LAYOUT_CUH
#define RAYLB_LAYOUT_CUH

#if defined(__CUDACC_RTC__)
// NVRTC has no <stddef.h>; its front end evaluates the classic offsetof expression as a
// constant through __INTADDR__.
#define RL_OFFSET_OF(type, field) ((unsigned long long)__INTADDR__(&((type*)0)->field))
#else
#include <stddef.h>
#define RL_OFFSET_OF(type, field) offsetof(type, field)
#endif

typedef unsigned char rl_u8;
typedef unsigned int rl_u32;
typedef unsigned long long rl_u64;
static_assert(sizeof(rl_u8) == 1 && sizeof(rl_u32) == 4 && sizeof(rl_u64) == 8, \"integer sizes\");
static_assert(sizeof(float) == 4 && sizeof(void*) == 8, \"float and address sizes\");

// glam::Vec3.
struct rl_vec3 {{
    float x;
    float y;
    float z;
}};
static_assert(sizeof(rl_vec3) == {size}, \"rl_vec3: {size} bytes, as glam::Vec3\");
static_assert(RL_OFFSET_OF(rl_vec3, x) == {x} && RL_OFFSET_OF(rl_vec3, y) == {y} && RL_OFFSET_OF(rl_vec3, z) == {z}, \"rl_vec3: x, y, z as glam::Vec3\");
",
            size = size_of::<glam::Vec3>(),
            x = std::mem::offset_of!(glam::Vec3, x),
            y = std::mem::offset_of!(glam::Vec3, y),
            z = std::mem::offset_of!(glam::Vec3, z),
        );
        self.0.push_str(&text);
    }

    fn constants(&mut self, list: &[Constant]) {
        for c in list {
            self.line("");
            self.comment("", c.doc);
            let _ = writeln!(self.0, "#define RL_{} {}", c.name, c.literal.write(c.value));
        }
    }

    fn enumeration<E: CEnum>(&mut self) {
        self.line("");
        self.comment("", E::DOC);
        let _ = writeln!(self.0, "// ({}.)", E::RUST_NAME);
        for v in E::VARIANTS {
            self.comment("", v.doc);
            let _ = writeln!(
                self.0,
                "#define {}_{} {}",
                E::PREFIX,
                upper_snake(v.name),
                E::LITERAL.write(u64::from(v.value))
            );
        }
    }

    fn structure<S: CStruct>(&mut self) {
        let name = S::C_NAME;
        let (size, align) = (size_of::<S>(), align_of::<S>());
        let fields = S::fields();
        let natural = fields.iter().map(|f| f.align).max().unwrap_or(1);
        self.line("");
        self.comment("", S::DOC);
        let _ = writeln!(self.0, "// ({}.)", S::RUST_NAME);
        if align > natural {
            let _ = writeln!(self.0, "struct alignas({align}) {name} {{");
        } else {
            let _ = writeln!(self.0, "struct {name} {{");
        }
        for f in &fields {
            self.comment("    ", f.doc);
            let _ = writeln!(self.0, "    {};", f.declaration);
        }
        self.line("};");
        let rust = S::RUST_NAME;
        let _ = writeln!(
            self.0,
            "static_assert(sizeof({name}) == {size} && alignof({name}) == {align}, \"{name}: {size} bytes aligned to {align}, as {rust}\");"
        );
        for f in &fields {
            let _ = writeln!(
                self.0,
                "static_assert(RL_OFFSET_OF({name}, {field}) == {offset}, \"{name}.{field} at byte {offset}, as {rust}\");",
                field = f.name,
                offset = f.offset,
            );
        }
    }
}

/// `StealAttempts` → `STEAL_ATTEMPTS`.
fn upper_snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_are_written_as_the_kernels_spell_them() {
        assert_eq!(upper_snake("StealAttempts"), "STEAL_ATTEMPTS");
        assert_eq!(upper_snake("Tiles"), "TILES");
        let h = generate();
        for line in [
            "#define RL_ST_STEAL_ATTEMPTS 7",
            "#define RL_KIND_TILE 3u",
            "#define RL_MODE_STEALING 2u",
            "#define RL_ERROR_DEQUE_FULL 1u",
            "#define RL_WARP 32",
            "#define RL_SPLIT_ABOVE 1024u",
            "struct alignas(32) rl_node {",
            "    float near_skip[4];",
            "    const rl_node* nodes;",
            "    int* pending;",
            "    rl_u8 lo[3][8];",
            "static_assert(RL_OFFSET_OF(rl_scene, camera) == 68, \"rl_scene.camera at byte 68, as layout::params::Scene\");",
        ] {
            assert!(h.lines().any(|l| l == line), "no line {line:?} in\n{h}");
        }
    }
}
