//! SVG charts with plotters: an x/y line chart (message-size axis in powers of two with byte
//! ticks, or seconds; linear or log y; min–max whiskers for repeats; dashed series for tail
//! percentiles; horizontal reference lines such as the line rate) and a bar chart. Legends are
//! drawn in their own column beside the plot, so nothing is drawn on top of the data.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: &[RGBColor] = &[
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

const WIDTH: u32 = 760;
const HEIGHT: u32 = 380;
const LEGEND_WIDTH: u32 = 210;

/// What the x axis shows.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum XAxis {
    /// Message size in bytes, plotted as log2 with byte-size ticks (2 B … 8 MiB).
    #[default]
    Bytes,
    /// Time in seconds, linear.
    Seconds,
    /// Positions 0, 1, 2 … of a history (nights, builds), ticked with `XyChart::x_labels`.
    Order,
}

/// One line of an x/y chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// (x, min, max) whiskers for repeated runs.
    pub whiskers: Vec<(f64, f64, f64)>,
    pub dashed: bool,
    pub colour: usize,
}

/// An x/y line chart.
#[derive(Debug, Clone, Default)]
pub struct XyChart {
    pub title: String,
    pub x_axis: XAxis,
    pub x_desc: String,
    pub y_desc: String,
    pub y_log: bool,
    pub series: Vec<Series>,
    /// Horizontal reference lines: (y, label).
    pub hlines: Vec<(f64, String)>,
    /// Vertical markers (change points): (x, label), dashed.
    pub vlines: Vec<(f64, String)>,
    /// Tick labels of an [`XAxis::Order`] axis, one per position.
    pub x_labels: Vec<String>,
}

pub use crate::format::bytes_label;

/// Axis tick labels: whole numbers without decimals (`100`, not `100.00`).
fn axis_number(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        crate::format::num(v)
    }
}

/// Time ticks: `2`, `1.5`, `0.25` — short runs (a `linkperf bench` session of two seconds) need
/// fractions, and no tick carries padding zeros.
fn seconds_label(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn axis_is_order(c: &XyChart) -> bool {
    c.x_axis == XAxis::Order
}

/// The label of position `x` on an order axis; ticks between positions stay blank.
fn order_label(labels: &[String], x: f64) -> String {
    let i = x.round();
    if (x - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    labels.get(i as usize).cloned().unwrap_or_default()
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("chart drawing failed: {e}")
}

fn x_of(axis: XAxis, x: f64) -> f64 {
    match axis {
        XAxis::Bytes => x.max(1.0).log2(),
        XAxis::Seconds | XAxis::Order => x,
    }
}

/// Draws the mesh, reference lines and series of `$c` on a built chart (linear or log y: the
/// two coordinate types share this code).
macro_rules! draw_xy {
    ($chart:expr, $c:expr, $x0:expr, $x1:expr) => {{
        let c: &XyChart = $c;
        let (x0, x1): (f64, f64) = ($x0, $x1);
        let axis = c.x_axis;
        let x_fmt = |x: &f64| match axis {
            XAxis::Bytes => bytes_label(2f64.powf(*x)),
            XAxis::Seconds => seconds_label(*x),
            XAxis::Order => order_label(&c.x_labels, *x),
        };
        let y_fmt = |y: &f64| axis_number(*y);
        let mut chart = $chart;
        chart
            .configure_mesh()
            .x_desc(c.x_desc.as_str())
            .y_desc(c.y_desc.as_str())
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_labels(match axis {
                XAxis::Bytes => ((x1 - x0) as usize / 2).clamp(2, 12),
                XAxis::Seconds => 10,
                XAxis::Order => c.x_labels.len().clamp(2, 16) + 1,
            })
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        for (y, _) in &c.hlines {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x0, *y), (x1, *y)],
                    BLACK.stroke_width(1),
                )))
                .map_err(err)?;
        }
        let (ylo, yhi) = {
            let r = chart.plotting_area().get_y_range();
            (r.start, r.end)
        };
        for (x, _) in &c.vlines {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(*x, ylo), (*x, yhi)],
                    4,
                    4,
                    RGBColor(120, 120, 120).stroke_width(1),
                ))
                .map_err(err)?;
        }
        for s in &c.series {
            let colour = PALETTE[s.colour % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| !c.y_log || p.1 > 0.0)
                .map(|p| (x_of(axis, p.0), p.1))
                .collect();
            if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(
                        pts.clone(),
                        6,
                        4,
                        colour.stroke_width(1),
                    ))
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
                    .map_err(err)?;
                chart
                    .draw_series(pts.iter().map(|p| Circle::new(*p, 2, colour.filled())))
                    .map_err(err)?;
            }
            chart
                .draw_series(s.whiskers.iter().filter(|w| w.2 > w.1).map(|w| {
                    let x = x_of(axis, w.0);
                    PathElement::new(vec![(x, w.1), (x, w.2)], colour.stroke_width(1))
                }))
                .map_err(err)?;
        }
    }};
}

/// Renders an x/y chart to an SVG document.
pub fn render_xy(c: &XyChart) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let (x0, x1, y0, y1) = bounds(c);
        let mut builder = ChartBuilder::on(&plot);
        builder
            .caption(c.title.as_str(), ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(64);
        if c.y_log {
            let (lo, hi) = (y0.max(1e-9) / 1.5, y1 * 1.5);
            draw_xy!(
                builder
                    .build_cartesian_2d(x0..x1, (lo..hi).log_scale())
                    .map_err(err)?,
                c,
                x0,
                x1
            );
        } else {
            let hi = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
            let lo = if y0 < 0.0 { y0 * 1.08 } else { 0.0 };
            draw_xy!(
                builder.build_cartesian_2d(x0..x1, lo..hi).map_err(err)?,
                c,
                x0,
                x1
            );
        }
        draw_legend(
            &legend,
            c.series
                .iter()
                .map(|s| (s.name.as_str(), s.colour, s.dashed))
                .chain(c.hlines.iter().map(|h| (h.1.as_str(), 6, false))),
        )?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The plotted ranges (x0, x1, y0, y1): every point, whisker and reference line, x in axis
/// units (log2 of bytes on a bytes axis).
fn bounds(c: &XyChart) -> (f64, f64, f64, f64) {
    let all = c.series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| (p.0, p.1))
            .chain(s.whiskers.iter().flat_map(|w| [(w.0, w.1), (w.0, w.2)]))
    });
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for (x, y) in all.chain(c.hlines.iter().map(|h| (f64::NAN, h.0))) {
        if x.is_finite() {
            x0 = x0.min(x_of(c.x_axis, x));
            x1 = x1.max(x_of(c.x_axis, x));
        }
        if y.is_finite() && (!c.y_log || y > 0.0) {
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if !x0.is_finite() || !y0.is_finite() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if axis_is_order(c) {
        // Half a position of room on each side, so the first and last points are not on
        // the frame.
        (x0, x1) = (-0.5, c.x_labels.len().max(1) as f64 - 0.5);
    }
    (x0, x1, y0, y1)
}

/// Draws legend entries (name, colour, dashed) in their own area, one per row.
fn draw_legend<'a, DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: impl Iterator<Item = (&'a str, usize, bool)>,
) -> Result<()> {
    for (i, (name, colour, dashed)) in entries.enumerate() {
        let y = 40 + i as i32 * 20;
        let c = PALETTE[colour % PALETTE.len()];
        let style = if dashed {
            c.stroke_width(1)
        } else {
            c.stroke_width(3)
        };
        area.draw(&PathElement::new(vec![(6, y), (30, y)], style))
            .map_err(|e| anyhow!("legend: {e:?}"))?;
        // Long names are shortened so they stay inside the legend column.
        let text: String = if name.chars().count() > 26 {
            name.chars().take(25).chain(['…']).collect()
        } else {
            name.to_string()
        };
        area.draw(&Text::new(
            text,
            (36, y - 7),
            ("sans-serif", 13).into_font().color(&BLACK),
        ))
        .map_err(|e| anyhow!("legend: {e:?}"))?;
    }
    Ok(())
}

/// A bar chart of labelled values.
#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    /// (label, value, colour).
    pub bars: Vec<(String, f64, usize)>,
}

/// Renders a bar chart to an SVG document.
pub fn render_bars(c: &BarChart) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let n = c.bars.len().max(1);
        let max = c.bars.iter().map(|b| b.1).fold(0.0f64, f64::max);
        let hi = if max > 0.0 { max * 1.1 } else { 1.0 };
        let labels: Vec<String> = c.bars.iter().map(|b| b.0.clone()).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(c.title.as_str(), ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..n as f64, 0f64..hi)
            .map_err(err)?;
        let x_fmt = |x: &f64| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 1e-9 {
                labels.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let y_fmt = |y: &f64| axis_number(*y);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(c.x_desc.as_str())
            .y_desc(c.y_desc.as_str())
            .x_labels(n * 2 + 1)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(c.bars.iter().enumerate().map(|(i, b)| {
                let colour = PALETTE[b.2 % PALETTE.len()];
                Rectangle::new(
                    [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, b.1)],
                    colour.filled(),
                )
            }))
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_labels() {
        assert_eq!(bytes_label(2.0), "2 B");
        assert_eq!(bytes_label(65536.0), "64 KiB");
        assert_eq!(bytes_label(8_388_608.0), "8 MiB");
        assert_eq!(bytes_label(1000.0), "1000 B");
    }

    #[test]
    fn second_labels() {
        assert_eq!(seconds_label(10.0), "10");
        assert_eq!(seconds_label(1.2000000001), "1.2");
        assert_eq!(seconds_label(0.25), "0.25");
        assert_eq!(seconds_label(0.0), "0");
    }

    #[test]
    fn charts_have_titles_axes_and_legends() {
        let svg = render_xy(&XyChart {
            title: "ib_write_bw bandwidth".into(),
            x_axis: XAxis::Bytes,
            x_desc: "message size".into(),
            y_desc: "Gbit/s".into(),
            y_log: false,
            series: vec![Series {
                name: "kunpeng920".into(),
                points: vec![(2.0, 0.07), (8_388_608.0, 97.56)],
                whiskers: vec![(2.0, 0.06, 0.08)],
                dashed: false,
                colour: 0,
            }],
            hlines: vec![(100.0, "line rate 100 Gbit/s".into())],
            ..Default::default()
        })
        .unwrap();
        for text in [
            "<svg",
            "ib_write_bw bandwidth",
            "message size",
            "Gbit/s",
            "kunpeng920",
            " MiB",
            "line rate",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
        let bars = render_bars(&BarChart {
            title: "per-stream totals".into(),
            x_desc: "stream".into(),
            y_desc: "Gbit/s".into(),
            bars: vec![("3".into(), 24.0, 0), ("4".into(), 24.4, 1)],
        })
        .unwrap();
        assert!(bars.contains("per-stream totals") && bars.contains("<rect"));
    }
}
