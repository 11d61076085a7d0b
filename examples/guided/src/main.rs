//! `raylb-guided`: the `raylb` command line with guided self-scheduling among its balancers,
//! on real threads and in the simulator.

use std::process::ExitCode;

use guided::Guided;

fn main() -> ExitCode {
    raylb::Raylb::new()
        .simulated_balancer(
            "guided",
            "Guided self-scheduling: tiles from one counter in chunks that shrink as the work runs out (k = 2).",
            Guided::default(),
        )
        .main()
}
