use super::*;

fn image(width: u32, height: u32, channels: Channels, samples: Samples) -> Image {
    Image::new(width, height, channels, samples).unwrap()
}

fn rgb8(width: u32, height: u32, samples: &[u8]) -> Image {
    image(width, height, Channels::Rgb, Samples::U8(samples.to_vec()))
}

fn pixels(comparison: Comparison) -> PixelComparison {
    match comparison {
        Comparison::Pixels(report) => report,
        other => panic!("expected a pixel comparison, got {other:?}"),
    }
}

#[test]
fn sixteen_bit_images_compare_at_sixteen_bits() {
    // 0x1234 and 0x1235 are the same in their top 8 bits: one code apart at 16 bits.
    let a = image(1, 1, Channels::Grey, Samples::U16(vec![0x1234]));
    let b = image(1, 1, Channels::Grey, Samples::U16(vec![0x1235]));
    let report = pixels(compare(&a, &b));
    assert_eq!(report.units, Units::Sixteen);
    assert_eq!(report.differing, 1);
    assert_eq!(report.largest, 1.0);
    assert_eq!(report.largest_normalised(), 1.0 / 65535.0);
    assert!(
        Comparison::Pixels(report.clone())
            .to_string()
            .ends_with("largest difference 0.00001526 of full scale")
    );
    let first = report.first.unwrap();
    assert_eq!((first.a, first.b), (vec![4660.0], vec![4661.0]));
}

#[test]
fn different_sizes_are_a_difference() {
    let a = rgb8(2, 2, &[0; 12]);
    let b = rgb8(4, 1, &[0; 12]);
    let comparison = compare(&a, &b);
    assert_eq!(
        comparison,
        Comparison::Sizes {
            a: (2, 2),
            b: (4, 1)
        }
    );
    assert_eq!(comparison.to_string(), "differ: sizes 2×2 vs 4×1");
    assert_eq!(difference_image(&a, &b), Ok(None));
}

#[test]
fn grey_counts_as_rgb_and_missing_alpha_as_opaque() {
    let grey = image(2, 1, Channels::Grey, Samples::U8(vec![10, 200]));
    let rgb = rgb8(2, 1, &[10, 10, 10, 200, 200, 200]);
    let rgba = image(
        2,
        1,
        Channels::Rgba,
        Samples::U8(vec![10, 10, 10, 255, 200, 200, 200, 255]),
    );
    let grey_alpha = image(
        2,
        1,
        Channels::GreyAlpha,
        Samples::U8(vec![10, 255, 200, 255]),
    );
    for (a, b) in [
        (&grey, &rgb),
        (&rgb, &rgba),
        (&grey, &rgba),
        (&grey_alpha, &rgb),
    ] {
        let report = pixels(compare(a, b));
        assert!(report.is_identical(), "{report:?}");
    }
    assert_eq!(pixels(compare(&grey, &rgb)).channels, ["R", "G", "B"]);
    assert_eq!(pixels(compare(&grey, &grey)).channels, ["Y"]);
    assert_eq!(pixels(compare(&grey, &grey_alpha)).channels, ["Y", "A"]);

    let translucent = image(
        2,
        1,
        Channels::Rgba,
        Samples::U8(vec![10, 10, 10, 254, 200, 200, 200, 255]),
    );
    let report = pixels(compare(&rgb, &translucent));
    assert_eq!(report.channels, ["R", "G", "B", "A"]);
    assert_eq!(report.differing, 1);
    let first = report.first.unwrap();
    assert_eq!(first.b, vec![10.0, 10.0, 10.0, 254.0]);
}

#[test]
fn eight_bit_meets_sixteen_bit_widened_by_257() {
    let eight = image(3, 1, Channels::Grey, Samples::U8(vec![0, 1, 255]));
    let same = image(3, 1, Channels::Grey, Samples::U16(vec![0, 257, 65535]));
    assert!(pixels(compare(&eight, &same)).is_identical());
    let off = image(3, 1, Channels::Grey, Samples::U16(vec![0, 258, 65535]));
    let report = pixels(compare(&eight, &off));
    assert_eq!(
        (report.units, report.differing, report.largest),
        (Units::Sixteen, 1, 1.0)
    );
}

#[test]
fn floats_meet_integers_normalised() {
    let eight = rgb8(1, 1, &[255, 0, 51]);
    let float = image(1, 1, Channels::Rgb, Samples::F32(vec![1.0, 0.0, 0.2]));
    let report = pixels(compare(&eight, &float));
    assert_eq!(report.units, Units::Float);
    assert!(report.is_identical(), "{report:?}");

    let sixteen = image(1, 1, Channels::Grey, Samples::U16(vec![65535]));
    let hdr = image(1, 1, Channels::Grey, Samples::F32(vec![1.5]));
    let comparison = compare(&sixteen, &hdr);
    assert_eq!(pixels(comparison.clone()).largest, 0.5);
    assert_eq!(
        comparison.to_string().lines().next().unwrap(),
        "differ: 1 of 1 pixels, largest channel difference 0.5, first at (0, 0): [1] vs [1.5]"
    );
}

#[test]
fn nan_is_the_same_as_nan_and_infinitely_far_from_anything_else() {
    let nan = image(2, 1, Channels::Grey, Samples::F32(vec![f32::NAN, 1.0]));
    let nan_too = image(2, 1, Channels::Grey, Samples::F32(vec![f32::NAN, 1.0]));
    assert!(pixels(compare(&nan, &nan_too)).is_identical());
    let number = image(2, 1, Channels::Grey, Samples::F32(vec![0.0, 1.0]));
    let comparison = compare(&nan, &number);
    assert_eq!(pixels(comparison.clone()).largest, f64::INFINITY);
    assert_eq!(
        comparison.to_string().lines().next().unwrap(),
        "differ: 1 of 2 pixels, largest channel difference inf (a NaN or an infinity against another value), first at (0, 0): [NaN] vs [0]"
    );
    assert_eq!(
        difference_image(&nan, &number).unwrap().unwrap(),
        [255, 255, 255, 0, 0, 0]
    );
    // Zero and negative zero are the same value.
    let zero = image(1, 1, Channels::Grey, Samples::F32(vec![0.0]));
    let negative_zero = image(1, 1, Channels::Grey, Samples::F32(vec![-0.0]));
    assert!(pixels(compare(&zero, &negative_zero)).is_identical());
}

#[test]
fn mse_psnr_and_the_largest_difference() {
    // Two RGB pixels; one channel differs by 51 codes = 0.2 of full scale.
    let a = rgb8(2, 1, &[0, 0, 0, 0, 0, 51]);
    let b = rgb8(2, 1, &[0, 0, 0, 0, 0, 0]);
    let comparison = compare(&a, &b);
    let report = pixels(comparison.clone());
    assert_eq!(report.differing, 1);
    assert_eq!(report.largest, 51.0);
    assert!((report.largest_normalised() - 0.2).abs() < 1e-12);
    // 0.2² over 6 channel values.
    assert!((report.mse - 0.04 / 6.0).abs() < 1e-12, "{}", report.mse);
    assert!((report.psnr() - 10.0 * 150f64.log10()).abs() < 1e-9);
    assert_eq!(
        comparison.to_string(),
        "differ: 1 of 2 pixels, largest channel difference 51, first at (1, 0): [0, 0, 51] vs [0, 0, 0]\n\
         mse 6.667e-3, psnr 21.76 dB, largest difference 0.2000 of full scale"
    );

    let same = pixels(compare(&a, &a.clone()));
    assert_eq!((same.mse, same.psnr()), (0.0, f64::INFINITY));
    assert_eq!(
        Comparison::Pixels(same).to_string(),
        "identical: 2×1\nmse 0, psnr inf dB, largest difference 0 of full scale"
    );
}

#[test]
fn the_first_difference_is_the_first_in_reading_order() {
    let mut a = vec![0u8; 4 * 3 * 3];
    let b = a.clone();
    // (2, 1) and then (0, 2): row-major order finds (2, 1) first.
    a[(2 * 4) * 3] = 9;
    a[(4 + 2) * 3 + 1] = 3;
    let report = pixels(compare(&rgb8(4, 3, &a), &rgb8(4, 3, &b)));
    let first = report.first.unwrap();
    assert_eq!((first.x, first.y), (2, 1));
    assert_eq!((report.differing, report.largest), (2, 9.0));
}

#[test]
fn difference_image_makes_the_largest_difference_white() {
    // Differences of 0, 1, 2 and 200 codes in red; alpha differences show in all three.
    let a = image(
        5,
        1,
        Channels::Rgba,
        Samples::U8(vec![
            0, 0, 0, 255, 1, 0, 0, 255, 2, 0, 0, 255, 200, 0, 0, 255, 0, 0, 0, 155,
        ]),
    );
    let b = image(5, 1, Channels::Rgb, Samples::U8(vec![0; 15]));
    let drawn = difference_image(&a, &b).unwrap().unwrap();
    assert_eq!(
        drawn,
        [0, 0, 0, 1, 0, 0, 3, 0, 0, 255, 0, 0, 128, 128, 128],
        "one code shows as 1, not 0; 100 alpha codes of 200 are half way"
    );
    assert_eq!(difference_image(&a, &a.clone()).unwrap().unwrap(), [0; 15]);
}

#[test]
fn identical_samples_take_the_shortcut_and_mixed_layouts_do_not() {
    // Same values, one as 8-bit and one as 16-bit: not byte-equal, still identical.
    let a = image(2, 2, Channels::Grey, Samples::U8(vec![0, 1, 2, 3]));
    let b = image(2, 2, Channels::Grey, Samples::U16(vec![0, 257, 514, 771]));
    assert!(pixels(compare(&a, &b)).is_identical());
}
