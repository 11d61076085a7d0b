//! Comparing two images pixel by pixel: the validation that balancers agree.

use crate::output::Rgba8;

/// Where two images of the same size differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Pixels that differ in any channel.
    pub pixels: u64,
    /// The largest difference of one channel.
    pub largest: u8,
    /// The first differing pixel in row-major order: `(x, y)` and its values in each image.
    pub first: (u32, u32, [u8; 4], [u8; 4]),
}

/// `None` when the images are identical; they must have the same size.
pub fn difference(a: &Rgba8, b: &Rgba8) -> Option<Difference> {
    assert_eq!(
        (a.width, a.height),
        (b.width, b.height),
        "images of different sizes"
    );
    let mut out: Option<Difference> = None;
    for (i, (pa, pb)) in a
        .pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .enumerate()
    {
        if pa == pb {
            continue;
        }
        let largest = pa
            .iter()
            .zip(pb)
            .map(|(x, y)| x.abs_diff(*y))
            .max()
            .unwrap_or(0);
        match &mut out {
            Some(d) => {
                d.pixels += 1;
                d.largest = d.largest.max(largest);
            }
            None => {
                let (x, y) = (i as u32 % a.width, i as u32 / a.width);
                let values = |p: &[u8]| [p[0], p[1], p[2], p[3]];
                out = Some(Difference {
                    pixels: 1,
                    largest,
                    first: (x, y, values(pa), values(pb)),
                });
            }
        }
    }
    out
}
