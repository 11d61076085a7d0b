//! raylb's window on a frame being rendered (`raylb view`): the image, the work map or the
//! workers layer, drawn as the frame's workers trace it; a fly camera; keys that switch the
//! balancer, the device (CPU, GPU or both), the acceleration structure, the threads and the
//! tile edge, each change starting the next frame at once; and scripted frames that end in a
//! screenshot.
//!
//! The command line decides what runs first and checks it ([`Lineup`], the scene, the
//! outputs); [`run`] opens the window and keeps it until it is closed or the script ends. What
//! the viewer prints goes through the caller's [`Lines`], which says what a failure means.

#![deny(missing_docs)]

mod display;
mod fly;
mod lineup;
mod print;
mod session;
mod window;

pub use lineup::Lineup;
pub use print::Lines;
pub use window::{Options, Script, ensure_display, run};
