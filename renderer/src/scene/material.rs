//! Materials: Phong shading plus the weights of the mirror and refraction rays. [`Material`]
//! is a type of the shared layout, which the GPU reads as it is; what is made here is how a
//! scene's files give one.

pub use layout::Material;

use crate::math::Vec3;

use super::config::MaterialConfig;

/// The largest channel of `reflectivity` plus that of `refractivity`: what the surface sends
/// on at most, as a fraction of what reaches it.
pub(crate) fn returned(m: &Material) -> f32 {
    m.reflectivity.max_element() + m.refractivity.max_element()
}

/// A material of a scene file's `[materials]` table, defaults filled in.
pub(crate) fn from_config(c: &MaterialConfig) -> Material {
    let d = Material::default();
    let diffuse = c.diffuse.map_or(d.diffuse, |v| Vec3::from(v.0));
    Material {
        ambient: c.ambient.map_or(diffuse, |v| Vec3::from(v.0)),
        diffuse,
        specular: c.specular.map_or(d.specular, |v| Vec3::from(v.0)),
        shininess: c.shininess.map_or(d.shininess, |v| v.0),
        reflectivity: c.reflectivity.map_or(d.reflectivity, |v| Vec3::from(v.0)),
        refractivity: c.refractivity.map_or(d.refractivity, |v| Vec3::from(v.0)),
        ior: c.ior.map_or(d.ior, |v| v.0),
    }
}

/// A material of an MTL file, mapped as the table in docs/scenes.md says:
///
/// | MTL | raylb |
/// | --- | --- |
/// | `Kd` | `diffuse` (default 0.8 grey) |
/// | `Ka` | `ambient` (default `Kd`) |
/// | `Ks` | `specular` (default black; ignored for `illum` 0 and 1) |
/// | `Ns` | `shininess`, rounded to a whole number, at most 10000 |
/// | `Ni` | `ior` (default 1.5), clamped to 0.1–10 |
/// | `d`, or `Tr` = 1 − `d` | transparency `1 − d` |
/// | `illum` 3, 5, 8 | `reflectivity` = `Ks` |
/// | `illum` 4, 6, 7 | `reflectivity` = `Ks`, `refractivity` = transparency (`Tf` if given) |
/// | `illum` 9 | `refractivity` = transparency (`Tf` if given) |
///
/// Where the largest channels of `reflectivity` and `refractivity` add up to more than 1,
/// both are scaled down to make them add up to 1.
pub(crate) fn from_mtl(m: &tobj::Material) -> Material {
    let d = Material::default();
    let rgb = |v: Option<[f32; 3]>| v.map(Vec3::from);
    let diffuse = rgb(m.diffuse).unwrap_or(d.diffuse);
    let illum = m.illumination_model.unwrap_or(2);
    let specular = if illum <= 1 {
        Vec3::ZERO
    } else {
        rgb(m.specular).unwrap_or(Vec3::ZERO)
    };
    let opacity = m
        .dissolve
        .or_else(|| parse_number(m.unknown_param.get("Tr")).map(|tr| 1.0 - tr))
        .unwrap_or(1.0)
        .clamp(0.0, 1.0);
    let transmission = parse_rgb(m.unknown_param.get("Tf")).unwrap_or(Vec3::splat(1.0 - opacity));
    let (reflectivity, refractivity) = match illum {
        3 | 5 | 8 => (specular, Vec3::ZERO),
        4 | 6 | 7 => (specular, transmission),
        9 => (Vec3::ZERO, transmission),
        _ => (Vec3::ZERO, Vec3::ZERO),
    };
    let returned = reflectivity.max_element() + refractivity.max_element();
    let (reflectivity, refractivity) = if returned > 1.0 {
        (reflectivity / returned, refractivity / returned)
    } else {
        (reflectivity, refractivity)
    };
    Material {
        ambient: rgb(m.ambient).unwrap_or(diffuse),
        diffuse,
        specular,
        shininess: m
            .shininess
            .map_or(0, |s| s.round().clamp(0.0, 10_000.0) as u32),
        reflectivity,
        refractivity,
        ior: m.optical_density.map_or(d.ior, |n| n.clamp(0.1, 10.0)),
    }
}

fn parse_number(text: Option<&String>) -> Option<f32> {
    text?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|v: &f32| v.is_finite())
}

fn parse_rgb(text: Option<&String>) -> Option<Vec3> {
    let v: Vec<f32> = text?
        .split_whitespace()
        .map_while(|t| t.parse().ok())
        .collect();
    match v[..] {
        [g] if g.is_finite() => Some(Vec3::splat(g.max(0.0))),
        [r, g, b, ..] if [r, g, b].iter().all(|c| c.is_finite()) => {
            Some(Vec3::new(r, g, b).max(Vec3::ZERO))
        }
        _ => None,
    }
}
