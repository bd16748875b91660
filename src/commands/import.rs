//! `linkperf import`: read files and directories, parse, attach labels, store atomically, and
//! print a summary that lists every line or block that could not be read.

use crate::cli::ImportArgs;
use crate::ingest::{self, Problem};
use crate::store::Store;
use crate::exit::ExitStatus;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Parses `KEY=VALUE` label arguments.
pub fn parse_labels(args: &[String]) -> Result<BTreeMap<String, String>> {
    let mut labels = BTreeMap::new();
    for a in args {
        match a.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                labels.insert(k.trim().to_string(), v.trim().to_string());
            }
            _ => bail!("--label {a:?}: expected KEY=VALUE"),
        }
    }
    Ok(labels)
}

/// Expands directories recursively into their files, sorted for a deterministic order.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("{}: cannot read", p.display()))?;
        if meta.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list directory", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()
        .with_context(|| format!("{}: cannot list directory", dir.display()))?;
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

pub fn run(store_dir: &Path, args: &ImportArgs) -> Result<ExitStatus> {
    let labels = parse_labels(&args.labels)?;
    let files = collect_files(&args.paths)?;
    // --strict and --dry-run decide before anything is written; otherwise each file's runs go
    // to the store as they are read, so memory stays bounded by the largest file.
    let mut tx = if args.strict || args.dry_run {
        None
    } else {
        Some(Store::open(store_dir, true)?.begin()?)
    };
    let mut pending = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    let (mut unreadable, mut found, mut rows, mut bytes_read) = (0, 0, 0, 0);
    let mut failed: Vec<String> = Vec::new();
    for f in &files {
        let source = f.display().to_string();
        let bytes = std::fs::read(f).with_context(|| format!("{source}: cannot read"))?;
        bytes_read += bytes.len();
        let result = ingest::parse_bytes(&source, &bytes);
        drop(bytes);
        let mut runs = result.runs;
        for r in &mut runs {
            r.labels
                .extend(labels.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        found += runs.len();
        for r in runs
            .iter()
            .filter(|r| r.status == crate::model::RunStatus::Failed)
        {
            let error = r
                .error
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            failed.push(format!(
                "{}:{}: {} {} failed: {error}",
                r.source, r.line, r.tool, r.test
            ));
        }
        rows += runs.iter().map(|r| r.measurements.len()).sum::<usize>();
        problems.extend(result.problems);
        unreadable += result.unreadable_blocks;
        match tx.as_mut() {
            Some(tx) => tx.add(runs)?,
            None if args.strict && !args.dry_run => pending.extend(runs),
            None => {}
        }
    }
    if args.strict && !problems.is_empty() {
        for p in &problems {
            eprintln!("linkperf: {p}");
        }
        bail!(
            "--strict: {} problem(s) in the input; nothing was stored",
            problems.len()
        );
    }
    let summary = format!(
        "read {} file(s), {:.1} MB: {found} run(s), {rows} row(s)",
        files.len(),
        bytes_read as f64 / 1e6
    );
    if args.dry_run {
        println!("{summary}; --dry-run: nothing stored");
    } else {
        let store = Store::open(store_dir, true)?;
        let outcome = match tx {
            Some(tx) => tx.commit()?,
            None => store.add(pending)?,
        };
        println!(
            "{summary}; stored {} new run(s) ({} rows), {} already in {}",
            outcome.added_runs,
            outcome.added_rows,
            outcome.already_stored,
            store.root().display()
        );
    }
    if !failed.is_empty() {
        println!("{} run(s) failed (stored with their error):", failed.len());
        for f in &failed {
            println!("  {f}");
        }
    }
    if unreadable > 0 || !problems.is_empty() {
        println!(
            "{unreadable} unreadable block(s); {} problem(s):",
            problems.len()
        );
        for p in &problems {
            println!("  {p}");
        }
    }
    Ok(ExitStatus::Success)
}
