//! The pair matrix of a fleet test as an SVG heatmap (plotters): one cell per host pair, its
//! value printed in it, coloured by its ratio to the fleet median on a diverging scale (red
//! below, white at the median, blue above), with the scale drawn beside the matrix. A slow host
//! shows as a red row and column; a slow pair as one red cell and its mirror.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

pub struct Heatmap {
    pub title: String,
    pub hosts: Vec<String>,
    /// `values[i][j]`: the pair's value (symmetric), `None` where no test ran.
    pub values: Vec<Vec<Option<f64>>>,
    /// The fleet median the colours are relative to.
    pub median: f64,
}

/// Lowest and highest ratio the colour scale spans; beyond them the end colours hold.
const LOW: f64 = 0.25;
const HIGH: f64 = 1.25;

/// Red (0.25×) → white (1×) → blue (1.25×).
fn colour(ratio: f64) -> RGBColor {
    let mix = |a: (f64, f64, f64), t: f64| {
        let c = |x: f64| (255.0 + (x - 255.0) * t).round() as u8;
        RGBColor(c(a.0), c(a.1), c(a.2))
    };
    if ratio < 1.0 {
        mix((213.0, 94.0, 0.0), ((1.0 - ratio) / (1.0 - LOW)).clamp(0.0, 1.0))
    } else {
        mix((0.0, 114.0, 178.0), ((ratio - 1.0) / (HIGH - 1.0)).clamp(0.0, 1.0))
    }
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("heatmap: {e}")
}

pub fn render(h: &Heatmap) -> Result<String> {
    let n = h.hosts.len().max(1) as u32;
    let cell = (560 / n).clamp(12, 60);
    let (label_w, top, scale_w) = (90u32, 50u32, 110u32);
    let (w, ht) = (label_w + cell * n + scale_w, top + cell * n + 70);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, ht)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let font = ("sans-serif", 13).into_font();
        root.draw(&Text::new(h.title.clone(), (10, 12), font.clone()))
            .map_err(err)?;
        let small = ("sans-serif", (cell / 3).clamp(8, 12) as i32).into_font();
        for (i, name) in h.hosts.iter().enumerate() {
            let y = (top + cell * i as u32 + cell / 2) as i32 - 6;
            root.draw(&Text::new(name.clone(), (6, y), font.clone())).map_err(err)?;
            let x = (label_w + cell * i as u32 + 2) as i32;
            root.draw(&Text::new(name.clone(), (x, top as i32 - 16), small.clone()))
                .map_err(err)?;
            for (j, v) in h.values[i].iter().enumerate() {
                let (x0, y0) = ((label_w + cell * j as u32) as i32, (top + cell * i as u32) as i32);
                let (x1, y1) = (x0 + cell as i32 - 1, y0 + cell as i32 - 1);
                let fill = match v {
                    Some(v) => colour(v / h.median),
                    None => RGBColor(235, 235, 235),
                };
                root.draw(&Rectangle::new([(x0, y0), (x1, y1)], fill.filled()))
                    .map_err(err)?;
                if let Some(v) = v {
                    let dark = v / h.median < 0.55;
                    let style = small.clone().color(if dark { &WHITE } else { &BLACK });
                    root.draw(&Text::new(
                        crate::format::num(*v),
                        (x0 + 2, y0 + cell as i32 / 2 - 5),
                        style,
                    ))
                    .map_err(err)?;
                }
            }
        }
        // The scale: ratio to the fleet median, top (high) to bottom (low).
        let sx = (label_w + cell * n + 20) as i32;
        let steps = 20;
        let height = (cell * n).max(100) as i32;
        for s in 0..steps {
            let ratio = HIGH - (HIGH - LOW) * s as f64 / (steps - 1) as f64;
            let y0 = top as i32 + height * s / steps;
            let y1 = top as i32 + height * (s + 1) / steps;
            root.draw(&Rectangle::new([(sx, y0), (sx + 16, y1)], colour(ratio).filled()))
                .map_err(err)?;
        }
        for (ratio, label) in [(HIGH, "1.25×"), (1.0, "1× median"), (LOW, "0.25×")] {
            let y = top as i32 + (height as f64 * (HIGH - ratio) / (HIGH - LOW)) as i32 - 6;
            root.draw(&Text::new(label, (sx + 20, y.max(top as i32)), small.clone()))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_has_every_host_value_and_the_scale() {
        let h = Heatmap {
            title: "iperf3 bw_avg_gbps".into(),
            hosts: vec!["n1".into(), "n2".into(), "n3".into()],
            values: vec![
                vec![None, Some(0.4), Some(0.1)],
                vec![Some(0.4), None, Some(0.1)],
                vec![Some(0.1), Some(0.1), None],
            ],
            median: 0.4,
        };
        let svg = render(&h).unwrap();
        for want in ["\nn1\n", "\nn3\n", "\n0.4\n", "\n0.1\n", "1× median", "0.25×"] {
            assert!(svg.contains(want), "{want}");
        }
        assert_eq!(colour(1.0), RGBColor(255, 255, 255));
        assert_eq!(colour(0.1), RGBColor(213, 94, 0));
    }
}
