//! `raylb`: render scenes to images, view them in a window, compare images, validate
//! balancers, benchmark.

fn main() -> std::process::ExitCode {
    raylb::Raylb::new().main()
}
