//! A task file (`raylb record`'s output, what `raylb sim` reads) from memory: whatever the
//! bytes, an error or a tree, never a panic, a hang or an allocation sized by the counts the
//! file declares rather than by its bytes; a tree that reads writes back as the same bytes.
#![no_main]

use balancers::sim::TaskTree;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(tree) = TaskTree::read(data) {
        let mut again = Vec::new();
        tree.write_to(&mut again).expect("writing to memory");
        assert!(
            again == data,
            "a tree that reads writes back as the same bytes"
        );
    }
});
