//! What the balancers' integration tests share.

/// The children of every node of a forest of `roots` uneven trees, roots first: node `n` has
/// 0 to 2 children by a hash of `n`, down to depth `max_depth`.
pub(crate) fn uneven_forest(roots: u32, max_depth: u32) -> Vec<Vec<u32>> {
    let mut children: Vec<Vec<u32>> = (0..roots).map(|_| Vec::new()).collect();
    let mut depth = vec![0u32; roots as usize];
    let mut next = 0;
    while next < children.len() {
        let fan_out = if depth[next] >= max_depth {
            0
        } else {
            ((next as u32).wrapping_mul(2_654_435_761) >> 30).min(2)
        };
        for _ in 0..fan_out {
            let id = children.len() as u32;
            children.push(Vec::new());
            depth.push(depth[next] + 1);
            children[next].push(id);
        }
        next += 1;
    }
    children
}
