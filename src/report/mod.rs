//! Reports: a view model ([`model`]) rendered by minijinja templates into one self-contained
//! HTML file (inline CSS and SVG, no scripts, nothing from the network), a GitHub-flavoured
//! Markdown file with the charts as SVG files beside it, and a compact Markdown summary for CI
//! job summaries. Templates live in `templates/`, are embedded in the binary, and can be
//! replaced with `--templates DIR`. The whole report directory is written beside its target and
//! renamed into place, so a half-written report is never left behind.

pub mod charts;
pub mod generate;
pub mod heatmap;
pub mod history;
pub mod model;

use anyhow::{anyhow, Context as _, Result};
pub use generate::Format;
use minijinja::{AutoEscape, Environment};
use std::path::{Path, PathBuf};

/// Template names and their embedded defaults.
pub const TEMPLATES: &[(&str, &str)] = &[
    ("report.html", include_str!("../../templates/report.html")),
    ("report.md", include_str!("../../templates/report.md")),
    ("summary.md", include_str!("../../templates/summary.md")),
];

/// The templates' `md` filter: escapes text for a Markdown table cell.
fn md(value: String) -> String {
    crate::format::md_cell(&value)
}

/// Loads the templates, from `dir` where it has them. Errors name the file and line.
pub fn environment(dir: Option<&Path>) -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html") {
            AutoEscape::Html
        } else {
            AutoEscape::None
        }
    });
    env.add_filter("md", md);
    for (name, default) in TEMPLATES {
        let (text, origin) = match dir.map(|d| d.join(name)).filter(|p| p.exists()) {
            Some(p) => (
                std::fs::read_to_string(&p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
                p,
            ),
            None => (default.to_string(), PathBuf::from("templates").join(name)),
        };
        env.add_template_owned(name.to_string(), text)
            .map_err(|e| {
                anyhow!(
                    "{}:{}: template error: {}",
                    origin.display(),
                    e.line().unwrap_or(0),
                    e
                )
            })?;
    }
    Ok(env)
}

/// Renders one template; errors name the template file and line.
pub fn render(
    env: &Environment<'_>,
    name: &str,
    ctx: &model::Context,
    dir: Option<&Path>,
) -> Result<String> {
    let origin = dir
        .map(|d| d.join(name))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("templates").join(name));
    env.get_template(name)
        .and_then(|t| t.render(ctx))
        .map_err(|e| {
            anyhow!(
                "{}:{}: template error: {}",
                origin.display(),
                e.line().unwrap_or(0),
                e
            )
        })
}

/// What to write.
pub struct Outputs {
    pub html: bool,
    pub markdown: bool,
    pub dump_context: bool,
}

/// Writes the report directory `out` atomically: built beside it, then renamed into place.
pub fn write(
    out: &Path,
    ctx: &model::Context,
    env: &Environment<'_>,
    templates: Option<&Path>,
    what: &Outputs,
) -> Result<Vec<PathBuf>> {
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let name = out
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| anyhow!("{}: not a report name", out.display()))?;
    let staging = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).ok();
    }
    let result = (|| -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(staging.join("charts"))
            .with_context(|| format!("cannot write to {}", parent.display()))?;
        let mut files = Vec::new();
        let mut put = |rel: &str, text: &str| -> Result<()> {
            let p = staging.join(rel);
            std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
            files.push(out.join(rel));
            Ok(())
        };
        if what.html {
            put("index.html", &render(env, "report.html", ctx, templates)?)?;
        }
        if what.markdown {
            let history = ctx.history.iter().flat_map(|h| &h.charts);
            let fleet = ctx.fleet.iter().flat_map(|f| &f.charts);
            for c in ctx.sections.iter().flat_map(|s| &s.charts).chain(history).chain(fleet) {
                put(&c.file, &c.svg)?;
            }
            put("report.md", &render(env, "report.md", ctx, templates)?)?;
            put("summary.md", &render(env, "summary.md", ctx, templates)?)?;
        }
        if what.dump_context {
            put("context.json", &(serde_json::to_string_pretty(ctx)? + "\n"))?;
        }
        Ok(files)
    })();
    let files = match result {
        Ok(f) => f,
        Err(e) => {
            std::fs::remove_dir_all(&staging).ok();
            return Err(e);
        }
    };
    // Swap: the old report moves aside, the new one in, the old one goes.
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if out.exists() {
        std::fs::rename(out, &old).with_context(|| format!("cannot replace {}", out.display()))?;
    }
    std::fs::rename(&staging, out).with_context(|| format!("cannot write {}", out.display()))?;
    if old.exists() {
        std::fs::remove_dir_all(&old).ok();
    }
    Ok(files)
}
