//! Writes the kernels' PTX for a compute capability, e.g. `cargo run -p raylb-kernels --example ptx
//! -- 9 0 > raylb.ptx`, to read the compiler's resource report (`ptxas -v`) or the code.
fn main() {
    let args: Vec<i32> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("major and minor version numbers"))
        .collect();
    let (major, minor) = match args[..] {
        [major, minor] => (major, minor),
        _ => (9, 0),
    };
    match kernels::source::compile(major, minor) {
        Ok(compiled) => print!("{}", compiled.ptx),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
