//! A viewing session: the viewer's state between window events, and its two loops, the
//! interactive one and the scripted one.
//!
//! The window's loop runs on the main thread; each frame renders on a [`LiveFrame`] thread.
//! Several times a second the loop draws the pixels the frame has traced so far into the
//! [`Preview`] (the rest keep the previous frame), and when the frame ends it draws the whole
//! of it. Any change of camera, balancer, threads or tile edge cancels the running frame (its
//! workers all joined) and starts the next at once.

use std::fmt;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use minifb::{Key, KeyRepeat, MouseButton, MouseMode, Window};
use renderer::accel::AccelKind;
use renderer::device::Schedule;
use renderer::file_errors::io_reason;
use renderer::frame::Frame;
use renderer::live::LiveFrame;
use renderer::output::write_png;
use renderer::preview::{Layer, Pixels, Preview};
use renderer::scene::{Scene, Viewpoint};
use renderer::stats::counted;
use renderer::watch::FrameWatch;

use crate::fly::Fly;
use crate::lineup::Lineup;
use crate::print::{Lines, note};

/// How often the window shows the pixels of a frame that is still rendering.
const REFRESH: Duration = Duration::from_millis(250);

/// The keys, as `raylb view` prints them at the start and on H.
pub(crate) const KEYS: &str = "\
keys: arrows walk (up/down: forward/back, left/right: sideways), PgUp/PgDn rise/sink,
      drag with the left button to turn, scroll or +/- to zoom, R back to the scene's camera,
      P print the camera as a [camera] table,
      A switch the acceleration structure (wide / octree),
      B / Shift+B next / previous balancer, ] / [ one thread more / less,
      . / , double / halve the tile edge, Space render again,
      W image / work map / workers, S save what the window shows as a PNG,
      H these keys, Esc or Q quit";

/// What the keys read in one poll of the interactive window ask of it, beyond the settings
/// they changed.
#[derive(Debug, Default)]
struct Asked {
    /// Esc or Q: close the window.
    quit: bool,
    /// Render again although the settings are the same (Space, or a work map asked of a
    /// frame that counted no rays).
    again: bool,
    /// The layer changed: draw the picture again.
    redraw: bool,
}

/// The viewer's state between window events.
pub(crate) struct Viewer<'o> {
    scene: Arc<Scene>,
    /// The scene file's camera, for R.
    home: Viewpoint,
    fly: Fly,
    lineup: Lineup,
    layer: Layer,
    preview: Preview,
    /// The frame rendering now.
    live: Option<LiveFrame>,
    /// The last finished frame and its worker stamps: what the window shows when no frame
    /// is rendering.
    shown: Option<(Frame, Arc<FrameWatch>)>,
    /// Frames finished so far.
    frames: usize,
    /// When the running frame's pixels were last drawn.
    last_refresh: Instant,
    /// Time the window loop spent drawing the running frame and handing it to the window.
    display_time: Duration,
    quiet: bool,
    /// Where the viewer's lines go.
    out: &'o mut dyn Lines,
}

impl<'o> Viewer<'o> {
    pub(crate) fn new(
        scene: Scene,
        lineup: Lineup,
        layer: Layer,
        quiet: bool,
        out: &'o mut dyn Lines,
    ) -> Self {
        let home = scene.viewpoint;
        let fly = Fly::new(home, scene_size(&scene));
        let preview = Preview::new(scene.width, scene.height);
        Self {
            scene: Arc::new(scene),
            home,
            fly,
            lineup,
            layer,
            preview,
            live: None,
            shown: None,
            frames: 0,
            last_refresh: Instant::now(),
            display_time: Duration::ZERO,
            quiet,
            out,
        }
    }

    /// Writes one of the viewer's lines.
    pub(crate) fn say(&mut self, line: fmt::Arguments<'_>) -> Result<()> {
        self.out.line(line)
    }

    /// Cancels the running frame, if any, and starts one with the current settings.
    fn restart(&mut self) -> Result<()> {
        if let Some(live) = self.live.take() {
            // Its workers are all joined when this returns; its partial film is dropped.
            live.cancel()?;
        }
        if self.fly.viewpoint != self.scene.viewpoint {
            let camera = self
                .fly
                .viewpoint
                .camera()
                .context("the camera has no valid frame")?;
            // The cancelled frame's thread held the other reference; it has ended.
            let scene = Arc::get_mut(&mut self.scene).expect("no frame holds the scene");
            scene.camera = camera;
            scene.viewpoint = self.fly.viewpoint;
        }
        self.display_time = Duration::ZERO;
        self.last_refresh = Instant::now();
        self.preview.start_frame();
        let work_map = self.layer == Layer::WorkMap;
        self.live = Some(LiveFrame::start(
            Arc::clone(&self.scene),
            self.lineup.job(work_map),
            self.lineup.gpu(),
        )?);
        Ok(())
    }

    /// Draws the running frame's traced pixels if it is time; returns whether it drew.
    fn refresh(&mut self) -> bool {
        let Some(live) = &self.live else { return false };
        if self.last_refresh.elapsed() < REFRESH {
            return false;
        }
        let start = Instant::now();
        self.preview
            .draw(live.film(), live.watch(), self.layer, Pixels::New);
        self.display_time += start.elapsed();
        self.last_refresh = Instant::now();
        true
    }

    /// Takes the running frame if it has ended and draws all of it; returns whether it did.
    fn collect(&mut self) -> Result<bool> {
        if !self.live.as_ref().is_some_and(LiveFrame::is_finished) {
            return Ok(false);
        }
        let live = self.live.take().expect("checked above");
        let watch = live.shared_watch();
        let frame = live.finish()?;
        self.frames += 1;
        self.shown = Some((frame, watch));
        self.redraw();
        if !self.quiet {
            let line = self.frame_line();
            self.say(format_args!("{line}"))?;
        }
        Ok(true)
    }

    /// Draws the last finished frame whole, in the current layer.
    fn redraw(&mut self) {
        if let Some((frame, watch)) = &self.shown {
            self.preview
                .draw(&frame.film, watch, self.layer, Pixels::All);
        }
    }

    /// One line about the last finished frame.
    fn frame_line(&self) -> String {
        let Some((frame, _)) = &self.shown else {
            return String::new();
        };
        let seconds = frame.wall().as_secs_f64();
        format!(
            "frame {:>3}  {:<40} {:>8.3} s {:>8.1} Mrays/s  steals {:>8}  display {:.1}% of the frame",
            self.frames,
            self.lineup.describe(),
            seconds,
            frame.mrays_per_second(),
            frame.telemetry.total_steals(),
            100.0 * self.display_time.as_secs_f64() / seconds.max(1e-9),
        )
    }

    /// The window's title: scene, settings, the last frame's figures, what is shown.
    pub(crate) fn title(&self) -> String {
        let scene = &self.scene;
        let mut title = format!(
            "raylb {} {}×{} {}: {}",
            scene.name,
            scene.width,
            scene.height,
            scene.accel.kind().name(),
            self.lineup.describe()
        );
        if let Some(live) = &self.live {
            let total = u64::from(scene.width) * u64::from(scene.height);
            title += &format!(
                " | rendering {}%",
                100 * live.watch().pixels_done() / total.max(1)
            );
        } else if let Some((frame, _)) = &self.shown {
            title += &format!(
                " | {:.2} s, {:.1} Mrays/s, {} steals",
                frame.wall().as_secs_f64(),
                frame.mrays_per_second(),
                frame.telemetry.total_steals()
            );
        }
        title += &format!(" | {}", self.layer.name());
        match (self.layer, self.preview.rays_range()) {
            (Layer::WorkMap, Some((lo, hi))) => title += &format!(" {lo}–{hi} rays/px"),
            (Layer::Workers, _) if matches!(self.lineup.engine(), Schedule::Gpu(_)) => {
                title += " (GPU frames carry no worker stamps)";
            }
            (Layer::Workers, _) if matches!(self.lineup.engine(), Schedule::Hybrid(_)) => {
                title += " (white: the GPU's tiles)";
            }
            _ => {}
        }
        title
    }

    /// Renders `frames` frames with the settings given, reading no input, and writes the
    /// last as the window shows it to `path`.
    pub(crate) fn scripted(
        &mut self,
        window: &mut Window,
        frames: NonZeroUsize,
        path: &Path,
    ) -> Result<()> {
        self.restart()?;
        loop {
            if !window.is_open() {
                bail!(
                    "the window was closed after {} of {}",
                    self.frames,
                    counted(frames.get() as u64, "frame")
                );
            }
            if self.collect()? {
                window.set_title(&self.title());
                self.show(window)?;
                if self.frames == frames.get() {
                    self.save(path)?;
                    if !self.quiet {
                        self.say(format_args!("wrote   {}", path.display()))?;
                    }
                    return Ok(());
                }
                self.restart()?;
            } else if self.refresh() {
                window.set_title(&self.title());
                self.show(window)?;
            } else {
                window.update();
                idle();
            }
        }
    }

    /// The window's loop until the user closes it. A frame that fails (say, more threads
    /// than the system will start) is reported and the window goes on with the last frame.
    pub(crate) fn interactive(&mut self, window: &mut Window) -> Result<()> {
        self.restart()?;
        let mut drag: Option<(f32, f32)> = None;
        let mut last_title = Instant::now();
        while window.is_open() {
            let before = self.settings();
            let asked = self.read_keys(window)?;
            if asked.quit {
                return Ok(());
            }
            self.read_mouse(window, &mut drag);

            // A frame that finished meanwhile is shown before anything replaces it.
            let finished = self.collect().unwrap_or_else(|e| {
                note(format_args!("raylb: {e:#}"));
                false
            });
            // Only a real change restarts: a key at the end of its range changes nothing.
            let changed = asked.again || self.settings() != before;
            if changed && let Err(e) = self.restart() {
                note(format_args!("raylb: {e:#}"));
            }
            if asked.redraw {
                self.redraw();
                if let Some(live) = &self.live {
                    self.preview
                        .draw(live.film(), live.watch(), self.layer, Pixels::Traced);
                }
            }
            let drew = finished || self.refresh() || asked.redraw;
            if drew || changed || last_title.elapsed() > REFRESH {
                window.set_title(&self.title());
                last_title = Instant::now();
            }
            if drew {
                self.show(window)?;
            } else {
                window.update();
                idle();
            }
        }
        Ok(())
    }

    /// Acts on the keys pressed since the last poll. Walking and zooming repeat while their
    /// key is held; the other keys act once per press. Esc or Q stops at once, leaving the
    /// keys after it.
    fn read_keys(&mut self, window: &Window) -> Result<Asked> {
        let mut asked = Asked::default();
        for key in window.get_keys_pressed(KeyRepeat::Yes) {
            match key {
                Key::Up => self.fly.walk(1.0, 0.0, 0.0),
                Key::Down => self.fly.walk(-1.0, 0.0, 0.0),
                Key::Left => self.fly.walk(0.0, -1.0, 0.0),
                Key::Right => self.fly.walk(0.0, 1.0, 0.0),
                Key::PageUp => self.fly.walk(0.0, 0.0, 1.0),
                Key::PageDown => self.fly.walk(0.0, 0.0, -1.0),
                Key::Equal | Key::NumPadPlus => self.fly.zoom(1.0 / 1.1),
                Key::Minus | Key::NumPadMinus => self.fly.zoom(1.1),
                _ => {}
            }
        }
        let shift = window.is_key_down(Key::LeftShift) || window.is_key_down(Key::RightShift);
        for key in window.get_keys_pressed(KeyRepeat::No) {
            match key {
                Key::Escape | Key::Q => {
                    asked.quit = true;
                    return Ok(asked);
                }
                Key::R => self.fly.viewpoint = self.home,
                Key::P => {
                    let camera = self.fly.viewpoint.to_toml();
                    self.say(format_args!("{camera}"))?;
                }
                Key::A => self.switch_accel()?,
                Key::B => self.lineup.step_engine(if shift { -1 } else { 1 }),
                Key::RightBracket => self.lineup.step_threads(1),
                Key::LeftBracket => self.lineup.step_threads(-1),
                Key::Period => self.lineup.step_tile(true),
                Key::Comma => self.lineup.step_tile(false),
                Key::Space => asked.again = true,
                Key::W => {
                    self.layer = self.layer.next();
                    asked.redraw = true;
                    // Rays are counted only for the work map: a frame without counts is
                    // rendered again with them.
                    asked.again |= self.layer == Layer::WorkMap && !self.counts_rays();
                }
                Key::S => self.save_numbered()?,
                Key::H => self.say(format_args!("{KEYS}"))?,
                _ => {}
            }
        }
        Ok(asked)
    }

    /// Turns the camera while the left button drags (degrees per pixel dragged, less when
    /// zoomed in; `drag` is where the pointer was at the last poll) and zooms on the wheel.
    fn read_mouse(&mut self, window: &Window, drag: &mut Option<(f32, f32)>) {
        if window.get_mouse_down(MouseButton::Left) {
            let now = window.get_mouse_pos(MouseMode::Pass);
            if let (Some((x0, y0)), Some((x1, y1))) = (*drag, now) {
                let per_pixel = self.fly.viewpoint.fov / self.height() as f32;
                self.fly.turn((x1 - x0) * per_pixel, (y0 - y1) * per_pixel);
            }
            *drag = now;
        } else {
            *drag = None;
        }
        if let Some((_, dy)) = window.get_scroll_wheel()
            && dy != 0.0
        {
            self.fly.zoom(if dy > 0.0 { 1.0 / 1.1 } else { 1.1 });
        }
    }

    /// What decides the next frame: camera, balancer, threads and tile edge.
    fn settings(&self) -> (Viewpoint, Schedule, NonZeroUsize, NonZeroU32, AccelKind) {
        (
            self.fly.viewpoint,
            self.lineup.engine(),
            self.lineup.threads,
            self.lineup.tile,
            self.scene.accel.kind(),
        )
    }

    /// A: the scene's triangles in the other acceleration structure. The running frame is
    /// cancelled first (it holds the scene); the image stays the same, only its speed changes.
    fn switch_accel(&mut self) -> Result<()> {
        if let Some(live) = self.live.take() {
            live.cancel()?;
        }
        let next = match self.scene.accel.kind() {
            AccelKind::Wide => AccelKind::Octree,
            AccelKind::Octree => AccelKind::Wide,
        };
        if let Some(scene) = self.scene.with_accel(next)? {
            self.scene = Arc::new(scene);
        }
        Ok(())
    }

    /// Whether the frame on show (or, while one renders, the running frame) counts rays.
    fn counts_rays(&self) -> bool {
        match (&self.live, &self.shown) {
            (Some(live), _) => live.film().pixel_rays(0).is_some(),
            (None, Some((frame, _))) => frame.film.pixel_rays(0).is_some(),
            (None, None) => false,
        }
    }

    /// Hands the picture to the window; while a frame renders, the time counts as display
    /// time.
    fn show(&mut self, window: &mut Window) -> Result<()> {
        let start = Instant::now();
        window
            .update_with_buffer(self.preview.pixels(), self.width(), self.height())
            .context("drawing the window")?;
        if self.live.is_some() {
            self.display_time += start.elapsed();
        }
        Ok(())
    }

    pub(crate) fn width(&self) -> usize {
        self.preview.width() as usize
    }

    pub(crate) fn height(&self) -> usize {
        self.preview.height() as usize
    }

    /// Writes what the window shows to `path`.
    fn save(&self, path: &Path) -> Result<()> {
        write_png(
            path,
            self.preview.width(),
            self.preview.height(),
            &self.preview.to_rgb(),
        )
        .map_err(|e| anyhow!("cannot write {}: {}", path.display(), io_reason(&e)))
    }

    /// S: writes what the window shows to the first free `raylb-SCENE-NNN.png` here. A file
    /// that cannot be written is reported and the window goes on; a line that cannot be
    /// written ends the viewer.
    fn save_numbered(&mut self) -> Result<()> {
        let path = (1..)
            .map(|n| PathBuf::from(format!("raylb-{}-{n:03}.png", self.scene.name)))
            .find(|p| !p.exists())
            .expect("some number is free");
        match self.save(&path) {
            Ok(()) if !self.quiet => self.say(format_args!("wrote   {}", path.display()))?,
            Ok(()) => {}
            Err(e) => note(format_args!("raylb: {e:#}")),
        }
        Ok(())
    }
}

/// A pause between polls of the window when there is nothing to draw: input is read about a
/// hundred times a second, and the loop takes next to no CPU from the frame's workers.
fn idle() {
    std::thread::sleep(Duration::from_millis(10));
}

/// The diagonal of the scene's bounding box.
fn scene_size(scene: &Scene) -> f32 {
    scene.accel.bounds().extent().length()
}
