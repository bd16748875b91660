//! The walk over a perftest block: each line is classified by the small parsers in
//! [`lines`] and changes the open [`Draft`]. A run starts at the waiting box, banner or table
//! header and ends at the next banner, at prose after its table, or at the end of the block.

use super::draft::{finish, measurement, push_row, Draft};
use super::lines;
use crate::ingest::adapter::Block;
use crate::ingest::common::TrimWs;
use crate::ingest::file_lines::FileLines;
use crate::ingest::{Problem, RunDraft};
use crate::model::Word;

/// Parses one block; `block.named` is true when the prompt named a perftest program.
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    if let Some(drafts) = super::terse::parse_block(block, problems) {
        return drafts;
    }
    let mut w = Walker {
        source: block.source,
        all: block.lines,
        named: block.named,
        problems,
        out: Vec::new(),
        draft: None,
        pending: Vec::new(),
        spare_values: Vec::new(),
    };
    for i in block.range.clone() {
        w.line(i);
    }
    w.close();
    w.out.retain(|r| r.keep);
    w.out
}

/// How many lines below a table header look like its rows (start with a digit): the table's
/// size, short of warnings printed inside it.
fn rows_below(lines: &[&str]) -> usize {
    lines
        .iter()
        .take_while(|l| {
            l.trim_start_ws()
                .as_bytes()
                .first()
                .is_some_and(u8::is_ascii_digit)
        })
        .count()
}

struct Walker<'a, 'p> {
    source: &'a str,
    all: FileLines<'a>,
    named: bool,
    problems: &'p mut Vec<Problem>,
    out: Vec<RunDraft>,
    draft: Option<Draft>,
    /// Warnings seen before any perftest output, for the run that follows: (line, text).
    pending: Vec<(usize, String)>,
    /// The vector the last table row's values were read into, emptied ([`lines::recycle`]):
    /// one allocation a table, not one a row.
    spare_values: Vec<lines::Cell<'static>>,
}

impl Walker<'_, '_> {
    fn line(&mut self, i: usize) {
        let line = self.all[i];
        if crate::ingest::common::is_blank(line)
            || self.fast_row(i, line)
            || self.structure(i, line)
        {
            return;
        }
        if self.draft.is_none() {
            self.before_output(i, line);
        } else if !(self.banner(i, line) || self.samples(i, line) || self.table(i, line)) {
            self.rest(i, line);
        }
    }

    /// Finishes the open run, if any.
    fn close(&mut self) {
        if let Some(d) = self.draft.take() {
            self.out
                .push(finish(d, self.source, self.all, self.problems));
        }
    }

    /// The open run, opened at line `i` (with the warnings seen before it) when there is none.
    fn open(&mut self, i: usize) -> &mut Draft {
        let pending = &mut self.pending;
        let d = self.draft.get_or_insert_with(|| {
            let mut d = Draft {
                start: pending.first().map_or(i, |p| p.0),
                end: i + 1,
                // A banner holds twenty to thirty facts: one allocation, not five growths.
                facts: Vec::with_capacity(32),
                ..Draft::default()
            };
            d.notes.extend(
                pending
                    .drain(..)
                    .map(|(l, n)| format!("line {}: {}", l + 1, n)),
            );
            d
        });
        d.touch(i);
        d
    }

    /// A table row: stored, or kept as the run's `local_result`/`remote_result` fact under
    /// `Local results:`/`Remote results:`, or a problem when it does not fit the header.
    fn row(&mut self, i: usize, line: &str, row: &lines::Row<'_>) {
        let d = self.draft.as_mut().expect("a row belongs to an open run");
        d.touch(i);
        // The header moves out while the row is read into the run's rows, and back.
        let cols = d.header.take().expect("open table has a header");
        let read = match d.report_both {
            Some(side) => measurement(&cols, row, i, line).map(|_| {
                d.facts
                    .push((format!("{side}_result").into(), line.trim_ws().to_string()));
            }),
            None => push_row(d, &cols, row, i, line),
        };
        d.header = Some(cols);
        if let Err(why) = read {
            d.bad_rows += 1;
            self.problems
                .push(Problem::new(self.source, i as u32 + 1, why));
        }
    }

    /// The most common line, a data row of an open table, without the other checks.
    fn fast_row(&mut self, i: usize, line: &str) -> bool {
        let open_table = self
            .draft
            .as_ref()
            .is_some_and(|d| d.table_open && d.report_both.is_none());
        if !open_table
            || !line
                .trim_start_ws()
                .starts_with(|c: char| c.is_ascii_digit())
            || lines::is_sample(line)
        {
            return false;
        }
        let spare = lines::recycle(std::mem::take(&mut self.spare_values));
        let Some(row) = lines::row_in(line, spare) else {
            return false;
        };
        self.row(i, line, &row);
        self.spare_values = lines::recycle(row.values);
        true
    }

    /// Rules, the waiting box, banner titles and table headers: where runs start and end.
    fn structure(&mut self, i: usize, line: &str) -> bool {
        if lines::is_rule(line) {
            if let Some(d) = self.draft.as_mut() {
                d.touch(i);
                if d.table_open {
                    d.table_open = false;
                    d.report_both = None;
                }
            }
        } else if lines::is_waiting(line) || lines::is_star_rule(line) {
            // A new waiting box after a finished table is the next run; the rdma_cm variant
            // ("Waiting for client rdma_cm QP to connect") sits inside the banner of this one.
            if self.draft.as_ref().is_some_and(|d| d.header.is_some()) {
                self.close();
            }
            let d = self.open(i);
            if lines::is_waiting(line) {
                d.waiting = true;
                d.facts.push(("waiting_for_client".into(), "yes".into()));
            }
        } else if let Some(t) = lines::title(line) {
            let started = |d: &Draft| d.title.is_some() || d.header.is_some();
            if self.draft.as_ref().is_some_and(started) {
                self.close();
            }
            let d = self.open(i);
            d.facts.push(("title".into(), t.text.clone()));
            d.title = Some(t);
        } else if let Some(cols) = lines::header(line) {
            let rows = rows_below(&self.all[i + 1..]);
            let d = self.open(i);
            // Sized once: doubling a million-row table's vector held both copies at its peak.
            d.rows.reserve(rows);
            d.header = Some(cols);
            d.header_line = i;
            d.table_open = true;
        } else {
            return false;
        }
        true
    }

    /// Before any perftest output: warnings are kept for the run that follows, an error of a
    /// perftest command is a failed run, anything else is surrounding prose.
    fn before_output(&mut self, i: usize, line: &str) {
        if lines::is_warning(line) {
            self.pending.push((i, line.trim_ws().to_string()));
        } else if lines::is_error(line) && self.named {
            self.open(i).errors.push(line.trim_ws().to_string());
        }
    }

    /// Banner content: addresses, GIDs, `key : value` pairs, the `-F`/bidirectional result
    /// headers.
    fn banner(&mut self, i: usize, line: &str) -> bool {
        let d = self
            .draft
            .as_mut()
            .expect("banner lines belong to an open run");
        if let Some((side, rest)) = lines::address(line) {
            let n = if side == "local" {
                &mut d.local_qps
            } else {
                &mut d.remote_qps
            };
            *n += 1;
            let key = side_key(side, "address", *n);
            d.facts.push((key, rest));
        } else if let Some(g) = lines::gid(line) {
            let (side, n) = if d.remote_qps > 0 {
                ("remote", d.remote_qps)
            } else {
                ("local", d.local_qps)
            };
            let key = side_key(side, "gid", n);
            d.facts.push((key, g));
        } else if lines::banner_pairs_into(line, &mut d.facts).is_some() {
            // Its pairs are among the run's facts now.
        } else if let Some(side) = result_side(line) {
            d.report_both = Some(side);
        } else {
            return false;
        }
        d.touch(i);
        true
    }

    /// `-H`/`-U` raw latency samples and their list header; `^C`; warnings.
    fn samples(&mut self, i: usize, line: &str) -> bool {
        let d = self.draft.as_mut().expect("samples belong to an open run");
        if let Some(unit) = lines::sample_header(line) {
            d.sample_unit = Some(unit);
            d.cycles |= unit == "cycles";
        } else if let Some((index, value)) = lines::sample(line) {
            if d.pending_samples.is_empty() {
                d.pending_samples_line = i;
            }
            if index != d.pending_samples.len() as u64 + 1 {
                d.notes.push(format!(
                    "line {}: raw sample {index} follows sample {} (lines lost in the copy?)",
                    i + 1,
                    d.pending_samples.len()
                ));
            }
            d.pending_samples.push(value);
        } else if lines::is_interrupt(line) {
            d.interrupted = true;
        } else if lines::is_warning(line) {
            d.notes.push(format!("line {}: {}", i + 1, line.trim_ws()));
        } else {
            return false;
        }
        d.touch(i);
        true
    }

    /// Inside an open table every line is a row, an error or a problem: nothing is dropped.
    fn table(&mut self, i: usize, line: &str) -> bool {
        if !self.draft.as_ref().is_some_and(|d| d.table_open) {
            return false;
        }
        if let Some(row) = lines::row(line) {
            self.row(i, line, &row);
            return true;
        }
        let d = self.draft.as_mut().expect("checked above");
        d.touch(i);
        let t = line.trim_ws();
        if lines::is_error(line) {
            d.errors.push(t.to_string());
        } else {
            self.problems.push(Problem::new(
                self.source,
                i as u32 + 1,
                format!("unrecognised line inside a perftest table: {t:?}"),
            ));
        }
        true
    }

    /// Errors after the banner, banner lines of a newer perftest, and prose after the table
    /// (which ends the run).
    fn rest(&mut self, i: usize, line: &str) {
        let d = self.draft.as_mut().expect("an open run");
        let t = line.trim_ws();
        if lines::is_error(line) {
            d.touch(i);
            d.errors.push(t.to_string());
            return;
        }
        if d.title.is_some() && d.header.is_none() && d.end == i {
            // A banner line this parser does not know (a newer perftest): keep it as a fact.
            if let Some((k, v)) = t.split_once(" : ").or_else(|| t.split_once(':')) {
                d.touch(i);
                d.facts.push((
                    crate::ingest::common::snake_key(k).into(),
                    v.trim_ws().to_string(),
                ));
                return;
            }
        }
        if d.header.is_some() && !d.table_open {
            self.close();
        }
    }
}

/// `Local results:` / `Remote results:` (`-F` and bidirectional reports): the side.
fn result_side(line: &str) -> Option<&'static str> {
    let t = line.trim_start_ws();
    if t.starts_with("Local results:") {
        Some("local")
    } else if t.starts_with("Remote results:") {
        Some("remote")
    } else {
        None
    }
}

/// The fact key of a side's `n`th address or GID (`local_address`, `remote_gid_2`): the first's
/// is borrowed, as every run has one.
fn side_key(side: &str, what: &str, n: usize) -> Word {
    match (side, what, n) {
        ("local", "address", ..=1) => "local_address".into(),
        ("remote", "address", ..=1) => "remote_address".into(),
        ("local", "gid", ..=1) => "local_gid".into(),
        ("remote", "gid", ..=1) => "remote_gid".into(),
        (_, _, ..=1) => format!("{side}_{what}").into(),
        _ => format!("{side}_{what}_{n}").into(),
    }
}
