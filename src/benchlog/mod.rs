//! The `linkperf bench` log, written and read in one place: [`write`] renders the native
//! runner's results as a perftest-like table per test under a `# linkperf bench` header whose
//! `Key: value` fields, `device.*` facts, per-size check and percentile lines carry everything
//! the stored run holds; [`read`] is the import adapter that reads it back. `linkperf bench`
//! builds its stored runs by reading its own log through [`read`], so a stored run and an
//! import of its log are the same run (same id: importing the log again stores nothing new).

pub mod read;
pub mod write;

/// The first line of every test block.
pub const HEADER: &str = "# linkperf bench ";

/// The rule above and below a table.
const RULE: &str =
    "---------------------------------------------------------------------------------------";
