//! How a command ended, mapped to the process exit code in one place. Every command returns one;
//! `main` turns it into the exit code.

use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Exit 0.
    Success,
    /// Exit 1: a regression (gate), a suspect finding (check --fail-on-findings).
    Regression,
    /// Exit 2: usage or input error.
    Error,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        ExitCode::from(match s {
            ExitStatus::Success => 0,
            ExitStatus::Regression => 1,
            ExitStatus::Error => 2,
        })
    }
}
