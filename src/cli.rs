//! Command-line interface (clap derive). Each command's arguments live here; the work is in
//! `commands/<command>.rs`.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "linkperf",
    version,
    about = "Import, compare and report RDMA and TCP benchmark logs"
)]
pub struct Cli {
    /// Results store directory.
    #[arg(
        long,
        global = true,
        env = "LINKPERF_STORE",
        default_value = "linkperf-store"
    )]
    pub store: PathBuf,
    /// Project file with labelling rules (default: ./linkperf.toml when it exists).
    #[arg(long, global = true, env = "LINKPERF_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Import raw logs (files or directories, recursively) into the store.
    Import(ImportArgs),
    /// Write one row per measurement point as JSON Lines, CSV or Parquet.
    Export(ExportArgs),
    /// List stored runs, one line each.
    Ls(LsArgs),
    /// List findings about the selected runs: values that cannot be right (above line rate,
    /// message rate × size against bandwidth, negative or NaN, a unit mix-up, a sweep against
    /// single-size runs) and placement that makes them low (remote NUMA node, PCIe link
    /// trained below its maximum).
    Check(CheckArgs),
    /// Name the slow host or pair of a fleet: per-host effects fitted to the pair results of
    /// pattern tests (`linkperf run` with `pattern = "all-pairs"` …); exit 1 on a suspect.
    Fleet(FleetArgs),
    /// Compare groups (platforms, MTUs, label values) point by point against a baseline.
    Compare(CompareArgs),
    /// Fail (exit 1) when the current results regressed against a baseline.
    Gate(GateArgs),
    /// A metric over the stored history of each point, with detected change points.
    History(HistoryArgs),
    /// Write an HTML and Markdown report with charts.
    Report(ReportArgs),
    /// Run a suite of benchmarks between hosts, keep the raw logs, import them and report.
    Run(RunArgs),
    /// List RDMA devices and ports like `ibv_devinfo -v` (needs the `verbs` build feature).
    Devices(DevicesArgs),
    /// Measure RDMA bandwidth and latency natively through libibverbs, perftest-style, and
    /// store the results (needs the `verbs` build feature).
    Bench(BenchArgs),
    /// Inspect and maintain the store: `info`, `compact`, `migrate`.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Print a shell completion script, e.g. `linkperf completions bash > ~/.local/share/bash-completion/completions/linkperf`.
    Completions {
        /// The shell to complete in.
        shell: clap_complete::Shell,
    },
}

/// Which runs a read command works on; flattened into every command that reads the store.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Selection {
    /// Keep only runs where KEY=VALUE (repeatable, or comma-separated). Keys: run columns
    /// (tool, test, role, status, host, device, mtu, ...), platform keys (platform, cpu, nic,
    /// driver, ...) and labels (`label:NAME` or NAME).
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
}

/// Which points are the same point: `gate` pairs baseline and current by these keys, `history`
/// splits its series by them.
#[derive(Debug, Clone, clap::Args)]
pub struct PairBy {
    /// Keys that pair points, comma-separated (`history` takes all but host and device). MTU,
    /// host and device are left out by default, so a run at another MTU pairs with the
    /// baseline (is a step in the same series) and the change is reported.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "test,role,connection_type,qps,msg_size,platform"
    )]
    pub pair_by: Vec<crate::gate::PairKey>,
}

/// What a command prints on standard output: text for people, JSON for scripts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum TextOrJson {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Runs, rows, files, bytes, partitions and schema version.
    Info {
        #[arg(long, value_enum, default_value = "text")]
        format: TextOrJson,
    },
    /// Merge the batches of each month into large files (safe to interrupt; imports wait).
    Compact,
    /// Convert a store written by an older linkperf (schema version 1) to the current layout.
    Migrate,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DevicesFormat {
    Text,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct DevicesArgs {
    /// Only this device (default: all).
    #[arg(long, short = 'd')]
    pub device: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: DevicesFormat,
}

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Serve one client (the perftest "server" side).
    #[arg(long, conflicts_with = "server")]
    pub listen: bool,
    /// Server to connect to (client side); runs the tests.
    #[arg(long, required_unless_present = "listen")]
    pub server: Option<String>,
    /// Tests, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "write_bw")]
    pub tests: Vec<crate::verbs::options::BenchTest>,
    /// TCP port of the out-of-band exchange.
    #[arg(long, short = 'p', default_value_t = crate::verbs::protocol::DEFAULT_PORT)]
    pub port: u16,
    /// RDMA device (default: the first one).
    #[arg(long, short = 'd')]
    pub device: Option<String>,
    /// Port of the RDMA device.
    #[arg(long = "ib-port", short = 'i', default_value_t = 1)]
    pub ib_port: u8,
    /// GID index (default: RoCE — an IPv4-mapped RoCE v2 GID; InfiniBand — none, LID routing).
    #[arg(long = "gid-index", short = 'x')]
    pub gid_index: Option<u32>,
    /// Message sizes in bytes, comma-separated; K and M suffixes are powers of 1024.
    #[arg(long, short = 's', value_delimiter = ',', value_parser = parse_size, default_value = "65536")]
    pub size: Vec<u64>,
    /// Sweep every power of two from 2 bytes to --max-size (perftest -a).
    #[arg(long, short = 'a')]
    pub all: bool,
    /// Largest size of an --all sweep.
    #[arg(long = "max-size", value_parser = parse_size, default_value = "8M")]
    pub max_size: u64,
    /// Operations per size and QP (default 5000 for bandwidth-only runs, else 1000).
    #[arg(long, short = 'n', conflicts_with = "duration")]
    pub iters: Option<u64>,
    /// Seconds per size instead of a count (perftest -D).
    #[arg(long, short = 'D')]
    pub duration: Option<f64>,
    /// Outstanding work requests per QP in bandwidth tests.
    #[arg(long = "tx-depth", short = 't', default_value_t = 128)]
    pub tx_depth: u32,
    /// Queue pairs (bandwidth tests).
    #[arg(long, short = 'q', default_value_t = 1)]
    pub qps: u32,
    /// Post messages up to this size inline (0: never).
    #[arg(long = "inline-size", short = 'I', default_value_t = 0)]
    pub inline_size: u32,
    /// Path MTU in bytes (default: the smaller active MTU of the two ports).
    #[arg(long, short = 'm')]
    pub mtu: Option<u32>,
    /// Record bandwidth over time in slices of this many seconds.
    #[arg(long)]
    pub interval: Option<f64>,
    /// Latency percentiles stored with each row, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = crate::stats::samples::parse_percentile,
        default_value = "50,90,99,99.9,99.99"
    )]
    pub percentiles: Vec<f64>,
    /// Print a histogram of the latency samples of each size.
    #[arg(long)]
    pub histogram: bool,
    /// Seconds any wait may take: a peer's message, a completion.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Seconds the server waits for its client.
    #[arg(long = "accept-timeout", default_value_t = 120.0)]
    pub accept_timeout: f64,
    /// Where to write the perftest-style log the stored rows point at
    /// (default: STORE/logs/bench-<time>-<pid>.log).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Print the results but store nothing.
    #[arg(long = "no-store")]
    pub no_store: bool,
    /// Attach a label to the stored runs (repeatable), e.g. platform=kunpeng920.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
}

/// `4096`, `64K`, `8M` (powers of 1024, as perftest sizes are).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1u64 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1u64 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("{s:?}: expected a size in bytes such as 4096, 64K or 8M"))
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Files or directories to import.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Attach a label to every run of this import (repeatable), e.g. platform=kunpeng920.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Treat any unreadable line or block as an error (exit 2, nothing stored).
    #[arg(long)]
    pub strict: bool,
    /// Parse and report, but store nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Threads reading and parsing files (0: one per core). The store and the summary are the
    /// same for any count.
    #[arg(long, short = 'j', default_value_t = 0, env = "LINKPERF_JOBS")]
    pub jobs: usize,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Csv,
    Parquet,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: ExportFormat,
    #[command(flatten)]
    pub selection: Selection,
    /// Output file (default: standard output; required for Parquet).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Export the per-iteration latency samples (`linkperf bench` runs) instead of the rows.
    #[arg(long, conflicts_with = "counters")]
    pub samples: bool,
    /// Export the counters that changed across each selected run (NIC, RDMA port and TCP
    /// counters read by `linkperf run` and `linkperf bench`) instead of the rows.
    #[arg(long)]
    pub counters: bool,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub selection: Selection,
    #[arg(long, value_enum, default_value = "table")]
    pub format: CheckFormat,
    /// Exit 1 when there is a finding (for pipelines that must stop on one).
    #[arg(long)]
    pub fail_on_findings: bool,
    /// List the rules and what each means, then exit.
    #[arg(long)]
    pub rules: bool,
}

#[derive(Debug, clap::Args)]
pub struct FleetArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// The metric fitted (latency metrics are fitted as their reciprocal).
    #[arg(long, default_value = "bw_avg_gbps")]
    pub metric: String,
    /// A host or pair more than this share below the fleet is a suspect (and beyond noise).
    #[arg(long, default_value_t = 0.10)]
    pub threshold: f64,
    #[arg(long, value_enum, default_value = "table")]
    pub format: FleetFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FleetFormat {
    Table,
    Markdown,
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CheckFormat {
    Table,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct LsArgs {
    #[command(flatten)]
    pub selection: Selection,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CompareFormat {
    Table,
    Markdown,
    Json,
    Csv,
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Dimension to compare: platform, mtu, cpu, nic, driver, firmware, host, device, qps,
    /// connection_type, role, or label:NAME.
    #[arg(long, default_value = "platform")]
    pub by: String,
    /// Group the others are compared with (default: the first in sort order).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Metric to compare (default: bandwidth for bandwidth tests, typical latency for latency tests).
    #[arg(long, value_enum)]
    pub metric: Option<crate::metric::Metric>,
    #[command(flatten)]
    pub selection: Selection,
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    /// Relative difference that still counts as the same (0.01 = 1 %).
    #[arg(long, default_value_t = 0.01)]
    pub same_within: f64,
    /// List every point that some group lacks as its own row (by default they are folded into
    /// one line per test, role and MTU; JSON and CSV always list them).
    #[arg(long)]
    pub show_missing: bool,
}

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Baseline: a store directory, a file or directory of raw logs, or a `linkperf export`
    /// file (.jsonl, .csv, .parquet). Default: the --store.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Current results, in any of the baseline's forms. Default: the --store.
    #[arg(long)]
    pub current: Option<PathBuf>,
    /// Filter for the baseline only (KEY=VALUE, repeatable).
    #[arg(long = "baseline-where", value_name = "KEY=VALUE")]
    pub baseline_where: Vec<String>,
    /// Filter for the current results only.
    #[arg(long = "current-where", value_name = "KEY=VALUE")]
    pub current_where: Vec<String>,
    #[command(flatten)]
    pub selection: Selection,
    /// Metrics to gate (repeatable). Default: bandwidth for bandwidth tests, typical latency
    /// for latency tests.
    #[arg(long = "metric", value_enum)]
    pub metrics: Vec<crate::metric::Metric>,
    #[command(flatten)]
    pub pairing: PairBy,
    /// Write the decisions as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report (one test case per test and size).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write a Markdown report.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// Metric (default: bandwidth for bandwidth tests, typical latency for latency tests).
    #[arg(long, value_enum)]
    pub metric: Option<crate::metric::Metric>,
    /// Order of the history: `source` (path, then line: dated log names sort by date),
    /// `label:NAME`, or `mtu`.
    #[arg(long, default_value = "source")]
    pub order_by: String,
    /// Smallest relative mean shift reported (0.005 = 0.5 %).
    #[arg(long, default_value_t = 0.005)]
    pub min_change: f64,
    /// Print every series, not only those with change points.
    #[arg(long)]
    pub all: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
    #[command(flatten)]
    pub pairing: PairBy,
    /// Exit 1 when the latest step of a series is a regression beyond the gate's threshold
    /// for its metric (`[gate]` thresholds and rules of linkperf.toml).
    #[arg(long)]
    pub fail_on_change: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Output directory (e.g. reports/kp920-vs-b850): index.html, report.md, summary.md, charts/.
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
    /// Dimension of the comparison: platform, mtu, label:NAME, ...
    #[arg(long, default_value = "platform")]
    pub by: String,
    #[arg(long)]
    pub baseline: Option<String>,
    /// Formats to write, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "html,md")]
    pub format: Vec<crate::report::Format>,
    /// Report title.
    #[arg(long, default_value = "linkperf report")]
    pub title: String,
    /// Directory with templates (report.html, report.md, summary.md) that replace the built-in ones.
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Also write the templates' context as context.json.
    #[arg(long)]
    pub dump_context: bool,
    /// A `linkperf gate --json` file: adds a regressions section.
    #[arg(long)]
    pub gate: Option<PathBuf>,
    /// What orders runs for the history section (shown when a point has runs at four or more
    /// positions): `source` (file path, then line) or `label:NAME` (e.g. `label:night`).
    #[arg(long, default_value = "source")]
    pub history_by: String,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Suite file (TOML; examples under suites/). Or use --tests with --server/--client.
    pub suite: Option<PathBuf>,
    /// Shortcut: comma-separated tools to run (iperf, iperf3, qperf, ib_write_bw, ...).
    #[arg(long, value_delimiter = ',')]
    pub tests: Option<Vec<String>>,
    /// Shortcut: the server's address (local when it is this machine, else reached by ssh).
    #[arg(long, default_value = "127.0.0.1")]
    pub server: String,
    /// Shortcut: the client's address.
    #[arg(long, default_value = "127.0.0.1")]
    pub client: String,
    /// Directory under which the run directory `<timestamp>-<suite>/` is created.
    #[arg(long, default_value = "runs")]
    pub runs_dir: PathBuf,
    /// Label every imported run (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Print the plan (commands per host) and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Import but write no report.
    #[arg(long)]
    pub no_report: bool,
    /// First TCP port for the tests (each test gets its own block of 10). The default sits
    /// below Linux's ephemeral range (32768–60999), where outgoing connections take ports.
    #[arg(long, default_value_t = 24000)]
    pub base_port: u16,
    /// Place each side on the Slurm allocation's nodes with `srun` instead of ssh (run inside
    /// `salloc`/`sbatch`); the same as `executor = "slurm"` in the suite.
    #[arg(long)]
    pub slurm: bool,
}
