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

/// One side's program as linkperf starts it (`exec`) and as the log and manifest show it
/// (`shown`, the plain [`on_host`] command).
pub struct Launch {
    pub shown: Vec<String>,
    pub exec: Vec<String>,
    /// `exec` ends the remote program when its standard input closes: start it with a pipe
    /// there and close the pipe to stop it.
    pub tied: bool,
}

/// How `argv` is started on `host`. Through ssh the remote program is tied to the connection:
/// ssh without a terminal gives the remote side no hangup, so a server stopped by ending the
/// local ssh kept running on the remote host (and held its port for the next repeat). A watcher
/// beside it sends it SIGINT (tools print their summary on it) when ssh's standard input closes.
/// `sh -c` keeps the script POSIX whatever the remote login shell.
pub fn launch(host: &Host, argv: &Argv) -> Launch {
    let shown = on_host(host, argv);
    if host.ssh.is_none() || host.slurm_node.is_some() {
        return Launch {
            exec: shown.clone(),
            shown,
            tied: false,
        };
    }
    let command = argv
        .0
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    // The watcher reads the connection's input on fd 3 (a background list's own input is
    // /dev/null); `$$` is the shell, which `exec` turns into the program.
    let script = format!(
        "exec 3<&0; {{ cat <&3 >/dev/null 2>&1; kill -INT $$; }} >/dev/null 2>&1 & exec {command} </dev/null 3<&-"
    );
    Launch {
        exec: on_host(host, &Argv(vec!["sh".into(), "-c".into(), script])),
        shown,
        tied: true,
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
