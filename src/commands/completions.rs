//! `linkperf completions SHELL`: a completion script generated from the CLI definition itself,
//! so it never drifts from the commands and flags.

use crate::cli::Cli;
use crate::exit::ExitStatus;
use anyhow::Result;
use clap::CommandFactory;

pub fn run(shell: clap_complete::Shell) -> Result<ExitStatus> {
    let mut command = Cli::command();
    clap_complete::generate(
        shell,
        &mut command,
        "linkperf",
        &mut std::io::stdout().lock(),
    );
    Ok(ExitStatus::Success)
}
