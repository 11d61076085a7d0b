//! What benchmarks hand back: a text table on the terminal, CSV, and an SVG line chart.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use renderer::file_errors::io_reason;
use renderer::output::{StagedFiles, check_writable};
use serde::Serialize;

use crate::outputs::Outputs;

/// A table for the terminal: a header row and data rows of equal width, printed aligned. (The
/// CSV files hold the same figures as numbers, one row per observation: see [`csv_text`].)
/// Our own rather than `comfy-table` or `tabled`: left-aligned names and right-aligned
/// numbers are all it does, in thirty lines.
#[derive(Debug, Default)]
pub(crate) struct Table {
    /// The column names.
    pub(crate) header: Vec<String>,
    /// The cells, a row at a time, as many as the header has columns.
    pub(crate) rows: Vec<Vec<String>>,
}

impl Table {
    /// A table of these columns and no rows yet.
    pub(crate) fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row of cells, one per column.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Aligned columns for the terminal (numbers right-aligned).
    pub(crate) fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, &w))| {
                    if i == 0 {
                        format!("{cell:<w$}")
                    } else {
                        format!("{cell:>w$}")
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
        out
    }
}

/// One line of a chart.
#[derive(Debug)]
pub(crate) struct Series {
    /// The legend's name for it.
    pub(crate) label: String,
    /// Its (x, y) points, in the order the line joins them.
    pub(crate) points: Vec<(f64, f64)>,
}

/// One chart of a figure (a figure puts its panels side by side).
#[derive(Debug)]
pub(crate) struct Panel {
    /// The panel's caption.
    pub(crate) title: String,
    /// Its lines.
    pub(crate) series: Vec<Series>,
}

/// Axis descriptions of a figure.
#[derive(Debug)]
pub(crate) struct Axes<'a> {
    /// What the x axis measures.
    pub(crate) x: &'a str,
    /// What the y axis measures.
    pub(crate) y: &'a str,
    /// A logarithmic (base 2) x axis, for tile edges and thread counts.
    pub(crate) log_x: bool,
    /// Start the y axis at 0 (otherwise it hugs the data).
    pub(crate) y_from_zero: bool,
}

const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Draws `panels` side by side as an SVG line chart and returns the document.
pub(crate) fn line_chart(title: &str, axes: &Axes<'_>, panels: &[Panel]) -> Result<String> {
    let mut svg = String::new();
    let width = 520 * panels.len().max(1) as u32;
    {
        let root = SVGBackend::with_string(&mut svg, (width, 420)).into_drawing_area();
        let plot_error = |e: &dyn std::fmt::Display| anyhow!("cannot draw the chart: {e}");
        root.fill(&WHITE).map_err(|e| plot_error(&e))?;
        let root = root
            .titled(title, ("sans-serif", 20))
            .map_err(|e| plot_error(&e))?;
        for (area, panel) in root
            .split_evenly((1, panels.len().max(1)))
            .iter()
            .zip(panels)
        {
            let points = panel.series.iter().flat_map(|s| s.points.iter());
            let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
            for &(x, y) in points {
                x0 = x0.min(x);
                x1 = x1.max(x);
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
            if x0 > x1 {
                continue;
            }
            if axes.y_from_zero {
                y0 = 0.0;
            }
            let pad = ((y1 - y0) * 0.08).max(1e-9);
            let (y0, y1) = (if axes.y_from_zero { 0.0 } else { y0 - pad }, y1 + pad);
            let mut builder = ChartBuilder::on(area);
            builder
                .caption(&panel.title, ("sans-serif", 16))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(60);
            if axes.log_x {
                let mut chart = builder
                    .build_cartesian_2d((x0..x1).log_scale().base(2.0), y0..y1)
                    .map_err(|e| plot_error(&e))?;
                draw_panel(&mut chart, panel, axes)?;
            } else {
                let mut chart = builder
                    .build_cartesian_2d(x0..x1, y0..y1)
                    .map_err(|e| plot_error(&e))?;
                draw_panel(&mut chart, panel, axes)?;
            }
        }
        root.present().map_err(|e| plot_error(&e))?;
    }
    Ok(svg)
}

/// Draws one panel's mesh, lines, points and legend.
fn draw_panel<'a, X>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, RangedCoordf64>>,
    panel: &Panel,
    axes: &Axes<'_>,
) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let plot_error = |e: &dyn std::fmt::Display| anyhow!("cannot draw the chart: {e}");
    chart
        .configure_mesh()
        .x_desc(axes.x)
        .y_desc(axes.y)
        .x_label_formatter(&|x| format!("{}", x.round()))
        .draw()
        .map_err(|e| plot_error(&e))?;
    for (i, series) in panel.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(
                series.points.clone(),
                colour.stroke_width(2),
            ))
            .map_err(|e| plot_error(&e))?
            .label(series.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(
                series
                    .points
                    .iter()
                    .map(|&p| Circle::new(p, 3, colour.filled())),
            )
            .map_err(|e| plot_error(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| plot_error(&e))?;
    Ok(())
}

/// The files a benchmark writes into its output folder, checked before any work is done and
/// written together when it is all done: a folder that cannot be written fails the command at
/// once, not after every round has run.
#[derive(Debug)]
pub(crate) struct OutputFiles {
    dir: PathBuf,
    names: &'static [&'static str],
}

impl OutputFiles {
    /// Checks that each of `names` can be written in `dir`, or, when `dir` does not exist
    /// yet, that it can be made: its nearest existing ancestor is a folder that takes new
    /// files. Nothing is created until [`write`](Self::write).
    pub(crate) fn check(dir: &Path, names: &'static [&'static str]) -> Result<Self> {
        let existing = dir
            .ancestors()
            .find(|a| a.as_os_str().is_empty() || a.exists());
        match existing {
            Some(a) if a == dir => {
                for name in names {
                    let path = dir.join(name);
                    check_writable(&path)
                        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
                }
            }
            Some(a) => {
                let a = if a.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    a
                };
                check_writable(&a.join("probe"))
                    .map_err(|e| anyhow!("cannot create {}: {e}", dir.display()))?;
            }
            None => bail!("cannot create {}: no folder above it exists", dir.display()),
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            names,
        })
    }

    /// Checks that no file to be written is one of `inputs`.
    pub(crate) fn check_inputs(&self, inputs: &[PathBuf]) -> Result<()> {
        let paths: Vec<PathBuf> = self.names.iter().map(|n| self.dir.join(n)).collect();
        let mut outputs = Outputs::new();
        for path in &paths {
            outputs.add("--out", Some(path));
        }
        outputs.check_inputs(inputs)
    }

    /// Writes the files, `contents` in the order of the names given to
    /// [`check`](Self::check), each to a temporary name first and all renamed into place
    /// together once every one is written.
    pub(crate) fn write(&self, contents: &[&str]) -> Result<()> {
        assert_eq!(contents.len(), self.names.len(), "one content per file");
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| anyhow!("cannot create {}: {}", self.dir.display(), io_reason(&e)))?;
        let mut staged = StagedFiles::new();
        for (name, text) in self.names.iter().zip(contents) {
            let path = self.dir.join(name);
            staged
                .text(&path, text)
                .map_err(|e| anyhow!("cannot write {}: {}", path.display(), io_reason(&e)))?;
        }
        Ok(staged.commit()?)
    }

    /// `wrote   DIR/first, second, …`, the line that reports the files.
    pub(crate) fn summary(&self) -> String {
        format!("wrote   {}/{}", self.dir.display(), self.names.join(", "))
    }
}

/// `rows` as CSV: a header of the row type's field names, then one record per row, fields
/// quoted where they hold a comma, a quote or a line break. Numbers are written as numbers,
/// an absent value (`None`) as an empty field.
pub(crate) fn csv_text<R: Serialize>(rows: &[R]) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| anyhow!("cannot write CSV: {}", e.error()))?;
    Ok(String::from_utf8(bytes)?)
}

/// `x` rounded to `decimals` decimal places, for CSV fields that would otherwise carry the
/// float's rounding noise (`8.000000000000007`).
pub(crate) fn rounded(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// The lower quartile, median and upper quartile of `values` (not empty), interpolating
/// linearly between order statistics.
pub(crate) fn quantiles(values: &[f64]) -> [f64; 3] {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    [0.25, 0.5, 0.75].map(|q| {
        let at = q * (sorted.len() - 1) as f64;
        let (low, high) = (at.floor() as usize, at.ceil() as usize);
        sorted[low] + (sorted[high] - sorted[low]) * (at - low as f64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row {
        name: String,
        count: u32,
        share: Option<f64>,
    }

    #[test]
    fn csv_quotes_commas_and_leaves_absent_values_empty() {
        let rows = [
            Row {
                name: "iii) push/pop at random, steal".into(),
                count: 3,
                share: Some(50.7),
            },
            Row {
                name: "plain".into(),
                count: 0,
                share: None,
            },
        ];
        let text = csv_text(&rows).unwrap();
        assert_eq!(
            text,
            "name,count,share\n\"iii) push/pop at random, steal\",3,50.7\nplain,0,\n"
        );
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(&records[0][0], "iii) push/pop at random, steal");
        assert_eq!(records[0].len(), 3);
    }

    #[test]
    fn rounding_drops_float_noise() {
        assert_eq!(rounded(8.000_000_000_000_007, 3), 8.0);
        assert_eq!(rounded(-0.123_456, 2), -0.12);
    }

    #[test]
    fn outputs_are_checked_before_and_written_together() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new/folder");
        let files = OutputFiles::check(&out, &["a.csv", "b.svg"]).unwrap();
        assert!(!out.exists(), "the check creates nothing");
        files.write(&["1\n", "<svg/>"]).unwrap();
        assert_eq!(std::fs::read_to_string(out.join("a.csv")).unwrap(), "1\n");
        assert_eq!(
            std::fs::read_to_string(out.join("b.svg")).unwrap(),
            "<svg/>"
        );
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            2,
            "no temporary file left behind"
        );
        assert!(files.summary().ends_with("folder/a.csv, b.svg"));

        // A folder under a regular file cannot be created.
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let error = OutputFiles::check(&file.join("out"), &["a.csv"]).unwrap_err();
        assert!(error.to_string().starts_with("cannot create "), "{error}");
        // A name that is a folder cannot be written.
        std::fs::create_dir(out.join("c.csv")).unwrap();
        let error = OutputFiles::check(&out, &["a.csv", "c.csv"]).unwrap_err();
        assert!(
            error.to_string().ends_with("c.csv: is a directory"),
            "{error}"
        );
    }
}
