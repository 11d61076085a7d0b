//! The batch path of a GPU frame (`GpuBatches::run`, as a hybrid frame's GPU uses it) against
//! one launch of the whole image, on any `Gpu`: the emulator's tests and the GPU's run it.

use kernels::FrameRequest;
use renderer::gpu::{DeviceScene, Gpu, GpuBalancer};
use renderer::scene::Scene;

/// Traces `scene` once in one launch and once in batches of 1, 2, 3, … tiles taken in a
/// scrambled order, and requires the same sums and rays per pixel; a tile number outside the
/// image is refused.
pub(crate) fn batches_add_up_to_one_launch(gpu: &Gpu, scene: &Scene) {
    let device_scene = DeviceScene::new(scene);
    let request = FrameRequest {
        balancer: GpuBalancer::STEALING,
        tile: 8,
        work_map: true,
        seed: 7,
        max_warps: None,
    };
    let whole = gpu.render(&device_scene.data(scene), &request).unwrap();
    let mut batches = gpu.batches(&device_scene.data(scene), &request).unwrap();
    let (_, count) = batches.tiles();
    let step = (1..count)
        .rev()
        .find(|s| gcd(*s, count) == 1 && *s > count / 3)
        .unwrap_or(1);
    let order: Vec<u32> = (0..count).map(|t| (t * step + 11) % count).collect();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert!(sorted.iter().copied().eq(0..count), "a permutation");
    let mut rest = &order[..];
    let mut size = 1;
    while !rest.is_empty() {
        let (batch, tail) = rest.split_at(size.min(rest.len()));
        batches.run(batch).unwrap();
        rest = tail;
        size += 1;
    }
    assert!(batches.run(&[count]).is_err(), "a tile outside the image");
    let batched = batches.finish().unwrap();
    assert_eq!(batched.sums, whole.sums);
    assert_eq!(batched.rays, whole.rays);
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}
