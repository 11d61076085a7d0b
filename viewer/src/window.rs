//! Opening the window: what a session needs (a display, its [`Options`]) and how it starts.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use minifb::{Window, WindowOptions};
use renderer::preview::Layer;
use renderer::scene::Scene;

use crate::display;
use crate::lineup::Lineup;
use crate::print::Lines;
use crate::session::{KEYS, Viewer};

/// How a viewing session runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// What the window shows at first (W switches).
    pub layer: Layer,
    /// Frames rendered without reading input, ending in a screenshot; `None`: the window
    /// follows the keys until it is closed.
    pub script: Option<Script>,
    /// Print nothing but errors.
    pub quiet: bool,
}

/// A session that reads no input: it renders `frames` frames with the settings it was given
/// and writes the last, as the window shows it, to `screenshot`.
#[derive(Clone, Debug)]
pub struct Script {
    /// How many frames to render.
    pub frames: NonZeroUsize,
    /// The PNG to write (through [`renderer::output`], staged as every output is).
    pub screenshot: PathBuf,
}

/// Checks that a window can be asked for: it needs an X server (Wayland desktops provide one
/// through XWayland). Worth calling before any slow work, so that a session that cannot open
/// says so at once.
pub fn ensure_display() -> Result<()> {
    if cfg!(all(unix, not(target_os = "macos"))) && display_name().is_empty() {
        bail!(
            "raylb view needs a display: DISPLAY is not set (no X server; `raylb render` writes PNGs without one)"
        );
    }
    Ok(())
}

fn display_name() -> String {
    std::env::var("DISPLAY").unwrap_or_default()
}

/// Opens a window on `scene` and renders it with the settings `lineup` starts at until the
/// window is closed (Esc or Q), or, with a [`Script`], until the script ends. The viewer's
/// lines go to `out`.
pub fn run(scene: Scene, lineup: Lineup, options: &Options, out: &mut dyn Lines) -> Result<()> {
    let mut viewer = Viewer::new(scene, lineup, options.layer, options.quiet, out);
    display::report_a_lost_display();
    let mut window = Window::new(
        &viewer.title(),
        viewer.width(),
        viewer.height(),
        WindowOptions {
            resize: true,
            scale_mode: minifb::ScaleMode::AspectRatioStretch,
            ..WindowOptions::default()
        },
    )
    .map_err(|e| anyhow!("cannot open a window on display {}: {e}", display_name()))?;
    // The loop paces itself (see `session::idle`): minifb's own limiter would sleep inside
    // `update_with_buffer`, where it would count as display time.
    window.set_target_fps(0);
    if !options.quiet && options.script.is_none() {
        viewer.say(format_args!("{KEYS}"))?;
    }
    match &options.script {
        Some(script) => viewer.scripted(&mut window, script.frames, &script.screenshot),
        None => viewer.interactive(&mut window),
    }
}
