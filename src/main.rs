//! The `linkperf` binary: parse arguments, run, print the error chain, map the exit status.

use clap::Parser;
use std::process::ExitCode;

// Parsing allocates per row and per run, on every core at once: mimalloc's thread-local free
// lists beat glibc's arenas there (benches/import.sh measures it).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: linkperf::allocator::MiMalloc = linkperf::allocator::MiMalloc;

fn main() -> ExitCode {
    let cli = match linkperf::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Usage errors exit 2 like every other error; --help and --version exit 0.
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match linkperf::commands::dispatch(cli) {
        Ok(status) => status.into(),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("linkperf: error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            linkperf::exit::ExitStatus::Error.into()
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
