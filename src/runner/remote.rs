//! How a command reaches its host: as is on this machine, through the system ssh client, or
//! through `srun` onto a Slurm node of the current allocation.

use super::suite::{Argv, Host};

/// Quotes one argument for a POSIX shell (needed only for the remote side of ssh, which hands
/// its arguments to the remote shell).
pub fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// The argument vector that runs `argv` on `host`: as is locally, or through
/// `ssh -o BatchMode=yes HOST -- quoted...` remotely.
pub fn on_host(host: &Host, argv: &Argv) -> Vec<String> {
    if let Some(node) = &host.slurm_node {
        // One task on that node, sharing the allocation with the other side's step;
        // one SIGINT (the runner's stop) ends the step.
        let mut v: Vec<String> = [
            "srun",
            "--nodelist",
            node,
            "--nodes=1",
            "--ntasks=1",
            "--overlap",
            "--quiet",
            "--quit-on-interrupt",
            "--",
        ]
        .map(String::from)
        .to_vec();
        v.extend(argv.0.iter().cloned());
        return v;
    }
    match &host.ssh {
        None => argv.0.clone(),
        Some(target) => {
            let mut v = vec![
                "ssh".to_string(),
                "-o".into(),
                "BatchMode=yes".into(),
                "-o".into(),
                "ConnectTimeout=10".into(),
            ];
            v.extend(host.ssh_options.iter().cloned());
            match split_port(target) {
                (h, Some(port)) => v.extend(["-p".into(), port.to_string(), h.to_string()]),
                (_, None) => v.push(target.clone()),
            }
            v.push("--".into());
            v.push(
                argv.0
                    .iter()
                    .map(|a| shell_quote(a))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            v
        }
    }
}

/// An ssh target's destination and port: `user@host:2222` → (`user@host`, 2222); a target
/// without a numeric port is all destination.
pub fn split_port(target: &str) -> (&str, Option<u16>) {
    match target.rsplit_once(':').map(|(h, p)| (h, p.parse::<u16>())) {
        Some((h, Ok(port))) => (h, Some(port)),
        _ => (target, None),
    }
}
