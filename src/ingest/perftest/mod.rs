//! perftest (`ib_send_bw`, `ib_read_bw`, `ib_write_bw`, `ib_atomic_bw`, the `_lat` tools and
//! `raw_ethernet_bw`) text output: banner, address lines, waiting box, BW and latency tables
//! in every known layout, warnings inside tables and copy-and-paste damage. Also `--out_json`
//! files (see [`json`]) and the bare numbers of `--output=…` (see [`terse`]).
//!
//! The parser walks a block line by line; each line is classified by the small parsers in
//! [`lines`]. A run starts at the waiting box, banner or table header and ends at the next
//! banner or at the end of the block. Lines inside a table that are neither rows nor known
//! warnings are reported as problems with their line number, never dropped silently.

mod draft;
pub mod json;
pub mod lines;
mod terse;
mod walk;

pub use draft::latency_in_cycles;
pub use walk::parse_block;

use crate::model::Role;

// Markers: a title ends in `Test`, a table header starts `#bytes`.
crate::ingest::adapter::declare_parser!(Perftest, Perftest, markers: &["Test", "#bytes"],
    fn finish(&self, run: &mut crate::model::Run) {
        apply_command(run);
    }
);

/// Does this block look like perftest output (used when no command names the tool)?
pub fn detect(text: &[&str]) -> bool {
    text.iter()
        .any(|l| lines::title(l).is_some() || lines::header(l).is_some())
}

/// Applies what the command line says to a perftest run: without the waiting box, a peer
/// address means client and none means server; `-d` names the device when the banner has none.
pub fn apply_command(run: &mut crate::model::Run) {
    let Some(cmd) = run.command.as_ref() else {
        return;
    };
    if super::command::tool_family(&cmd.program) != Some(crate::model::Tool::Perftest) {
        return;
    }
    if !run.facts.contains_key("waiting_for_client") {
        run.role = if cmd.peer.is_some() {
            Role::Client
        } else {
            Role::Server
        };
    }
    if run.device.is_none() {
        run.device = cmd.flags.get("ib-dev").map(|d| d.to_string());
    }
    // Without -H/-U only the command line tells that the latencies are cycles.
    if cmd.flags.contains_key("report-cycles") && latency_in_cycles(&mut run.measurements) {
        run.notes.push(draft::CYCLES_NOTE.into());
    }
}
