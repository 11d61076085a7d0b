//! What happens when the X display goes away under the viewer: Xlib's own handler prints its
//! line and exits 1; raylb's says in one line that the display was lost, removes the staged
//! outputs' temporary files, and exits 2, as every other error does.

use std::ffi::c_int;
use std::sync::OnceLock;

use x11_dl::xlib::{Display, Xlib};

use crate::print::note;

/// The Xlib the window uses (the same library, loaded once per process), kept for the
/// process's life: the handler lives inside it.
static XLIB: OnceLock<Option<Xlib>> = OnceLock::new();

/// Called by Xlib on a fatal I/O error (the server died or the connection broke); must not
/// return, or Xlib exits on its own.
unsafe extern "C" fn display_lost(_display: *mut Display) -> c_int {
    let _held = renderer::output::abandon_staged();
    let name = std::env::var("DISPLAY").unwrap_or_default();
    note(format_args!(
        "raylb: error: lost the connection to display {name}; the window is gone"
    ));
    std::process::exit(2)
}

/// Installs [`display_lost`] as Xlib's fatal I/O error handler. Where Xlib cannot be loaded
/// the window cannot open either, and says so itself.
pub(crate) fn report_a_lost_display() {
    if let Some(xlib) = XLIB.get_or_init(|| Xlib::open().ok()) {
        // SAFETY: XSetIOErrorHandler only stores the pointer; `display_lost` has the
        // signature Xlib calls, and never returns.
        unsafe { (xlib.XSetIOErrorHandler)(Some(display_lost)) };
    }
}
