//! The view types the templates lay out, and the small formatting helpers every section uses.

use crate::format;
use serde::Serialize;

/// One table cell: text, a CSS class (`better`, `worse`, `num`) and provenance for the tooltip.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub text: String,
    pub class: String,
    pub source: String,
}

impl Cell {
    pub(crate) fn text(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            class: String::new(),
            source: String::new(),
        }
    }
    pub(crate) fn num(v: f64, source: &str) -> Cell {
        Cell {
            text: format::num(v),
            class: "num".into(),
            source: source.to_string(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub id: String,
    pub title: String,
    /// Path of the SVG file beside the Markdown report.
    pub file: String,
    pub svg: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub id: String,
    pub title: String,
    pub charts: Vec<Chart>,
    pub table: Table,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlatformView {
    pub name: String,
    /// `key: value (source)` lines.
    pub facts: Vec<String>,
    pub runs: usize,
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    pub group: String,
    pub label: String,
    pub value: String,
    pub detail: String,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Context {
    pub title: String,
    pub generator: String,
    pub selection: String,
    pub by: String,
    pub baseline: String,
    pub tests: Vec<String>,
    pub platforms: Vec<PlatformView>,
    pub headlines: Vec<Headline>,
    pub findings: Vec<String>,
    pub sections: Vec<Section>,
    pub comparison: Table,
    /// Points some group lacks, one line per (test, role, MTU), instead of rows of `missing`.
    pub only_in_some: Vec<String>,
    /// Each test's headline point over the runs' order, when the selection holds a history.
    pub history: Option<crate::report::history::History>,
    pub regressions: Option<Table>,
    /// Counters that changed across the runs, when any run carries them.
    pub counters: Option<Table>,
    /// Pair matrices of pattern tests (`linkperf run` with `pattern = …`).
    pub fleet: Vec<super::FleetView>,
}

/// Provenance that stays readable (and the HTML small) for points aggregated over many runs:
/// the first three `source:line`s and how many more.
pub(crate) fn provenance(sources: &[String]) -> String {
    let shown = sources
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match sources.len() {
        n if n > 3 => format!("{shown} and {} more", n - 3),
        _ => shown,
    }
}

pub(crate) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

pub(crate) fn size_text(s: Option<u64>) -> String {
    s.map_or("-".into(), |b| format::bytes_label(b as f64))
}

/// A chart of a section: `kind` names it within the section (`bw`, `lat`, `samples`, …).
pub(crate) fn chart(section: &str, kind: &str, title: String, svg: String) -> Chart {
    let id = format!("{}-{}", slug(section), kind);
    Chart {
        file: format!("charts/{id}.svg"),
        id,
        title,
        svg,
    }
}
