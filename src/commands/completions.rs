//! `linkperf completions SHELL`: a completion script generated from the CLI definition itself,
//! so it never drifts from the commands and flags.

use crate::cli::Cli;
use crate::exit::ExitStatus;
use anyhow::Result;
use clap::CommandFactory;

pub fn run(shell: clap_complete::Shell) -> Result<ExitStatus> {
    let mut command = Cli::command();
    // Generated into memory, then written: `generate` panics when its writer fails (a pipe
    // closed early), and a write of our own hands the error to `main`.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "linkperf", &mut script);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &script)?;
    Ok(ExitStatus::Success)
}
