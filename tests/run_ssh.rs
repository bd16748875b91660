//! `linkperf run` with a host reached through ssh: an sshd of our own on loopback stands in for
//! the remote machine. `.ci/run` installs openssh; without it these tests fail.

mod common;
use common::{linkperf, read_manifest, run_dir, run_suite, text};

use std::path::{Path, PathBuf};
use std::process::Command;

/// An sshd of our own on loopback, with throwaway host and client keys.
struct Sshd {
    child: std::process::Child,
    key: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_sshd(dir: &Path, port: u16) -> Sshd {
    let sshd = Path::new("/usr/sbin/sshd");
    assert!(
        sshd.exists(),
        "openssh-server is not installed (.ci/run installs it)"
    );
    let keygen = |name: &str| {
        let st = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(dir.join(name))
            .status()
            .unwrap();
        assert!(st.success());
    };
    keygen("host_key");
    keygen("client_key");
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
    std::fs::create_dir_all("/run/sshd").unwrap();
    let config = dir.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile {}\n",
            dir.join("host_key").display(),
            dir.join("authorized_keys").display(),
            dir.join("sshd.pid").display()
        ),
    )
    .unwrap();
    let child = Command::new(sshd)
        .arg("-D")
        .arg("-e")
        .arg("-f")
        .arg(&config)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "sshd did not start");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Sshd {
        child,
        key: dir.join("client_key"),
    }
}

#[test]
fn remote_host_through_ssh_on_loopback() {
    let tmp = tempfile::tempdir().unwrap();
    let sshd = start_sshd(tmp.path(), 27222);
    let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();
    let suite = tmp.path().join("suite.toml");
    std::fs::write(
        &suite,
        format!(
            "name = \"over-ssh\"\n[[host]]\nname = \"remote\"\naddress = \"127.0.0.1\"\nssh = \"{user}@127.0.0.1:27222\"\nssh_options = [\"-i\", \"{}\", \"-o\", \"StrictHostKeyChecking=no\", \"-o\", \"UserKnownHostsFile=/dev/null\", \"-o\", \"LogLevel=ERROR\"]\n[[host]]\nname = \"local\"\n[[test]]\ntool = \"iperf3\"\nserver = \"remote\"\nclient = \"local\"\nduration = 1\n[[test]]\ntool = \"iperf\"\nserver = \"remote\"\nclient = \"local\"\nduration = 1\nrepeats = 2\n",
            sshd.key.display()
        ),
    )
    .unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    let o = run_suite(
        &store,
        suite.to_str().unwrap(),
        &runs,
        27500,
        &["--no-report"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dir = run_dir(&runs);
    let manifest = read_manifest(&runs);
    let server = manifest["runs"][0]["server_command"].as_array().unwrap();
    assert_eq!(server[0], "ssh");
    assert_eq!(server.last().unwrap(), "iperf3 -s -p 27500 -1");
    // The remote host's facts came through ssh too.
    assert!(std::fs::read_to_string(dir.join("host-remote.log"))
        .unwrap()
        .contains("$ uname -a\nLinux"));
    let server_log = std::fs::read_to_string(dir.join("iperf3-r1-server.log")).unwrap();
    assert!(
        server_log.contains("Server listening on 27500"),
        "{server_log}"
    );
    let rows = linkperf(
        &store,
        &["export", "--where", "test=iperf3_tcp,role=server"],
    );
    assert!(String::from_utf8_lossy(&rows.stdout).lines().count() > 0);
    // iperf 2's server runs until stopped. Stopping it ends it on the remote host too, so its
    // second repeat gets the port (the first once kept it, and the client reached the old
    // server), and nothing is left running after the suite.
    assert_eq!(
        manifest["runs"][2]["server_command"]
            .as_array()
            .unwrap()
            .last()
            .unwrap(),
        "iperf -s -p 27510"
    );
    let second = std::fs::read_to_string(dir.join("iperf-r2-server.log")).unwrap();
    assert!(
        second.contains("Server listening on TCP port 27510"),
        "{second}"
    );
    // Its report of the client's connection, printed before it was stopped.
    assert!(second.contains("bits/sec"), "{second}");
    // The servers themselves (a watcher shell may outlive its server by a moment: it ends once
    // sshd closes its input).
    let servers: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.unwrap().path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.starts_with("iperf") && (c.contains("-p 27510") || c.contains("-p 27500")))
        .collect();
    assert!(servers.is_empty(), "still running: {servers:?}");
}
