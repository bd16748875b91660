//! One module per CLI command: each turns parsed arguments into calls on the library and prints.
//! [`dispatch`] picks the command; only the commands that use the project file read it.

use crate::cli::{Cli, Command};
use crate::config::Config;
use crate::exit::ExitStatus;

pub mod bench;
pub mod check;
pub mod compare;
pub mod completions;
pub mod devices;
pub mod export;
pub mod fleet;
pub mod gate;
pub mod history;
pub mod import;
pub mod ls;
pub mod report;
pub mod run;
pub mod shared;
pub mod store;

/// Leaves `value` to the end of the process instead of freeing it. Called by a command whose work is
/// done: the process exits next, and handing a large selection back to the allocator piece by
/// piece (100,000 runs, millions of provenance strings) takes longer than the query did.
pub(crate) fn free_at_exit<T>(value: T) {
    std::mem::forget(value);
}

/// Runs the parsed command line. `linkperf.toml` is read only by the commands that use it, so a
/// broken project file does not block `import`, `devices`, `bench`, `store` or `completions`.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitStatus> {
    let store = cli.store.as_path();
    let config = || match &cli.config {
        Some(path) => Config::load(path, true),
        None => Config::load(std::path::Path::new("linkperf.toml"), false),
    };
    match &cli.command {
        Command::Import(args) => import::run(store, config(), args),
        Command::Check(args) => check::run(store, &config()?, args),
        Command::Fleet(args) => fleet::run(store, &config()?, args),
        Command::Export(args) => export::run(store, &config()?, args),
        Command::Ls(args) => ls::run(store, &config()?, args),
        Command::Compare(args) => compare::run(store, &config()?, args),
        Command::Gate(args) => gate::run(store, &config()?, args),
        Command::History(args) => history::run(store, &config()?, args),
        Command::Report(args) => report::run(store, &config()?, args),
        Command::Run(args) => run::run(store, &config()?, args),
        Command::Devices(args) => devices::run(args),
        Command::Bench(args) => bench::run(store, args),
        Command::Store(cmd) => store::run(store, cmd),
        Command::Completions { shell } => completions::run(*shell),
    }
}
