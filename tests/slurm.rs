//! The Slurm executor against a real Slurm: this test starts munge, `slurmctld` and `slurmd`
//! (Debian's `slurm-wlm`) as a one-node cluster in a temporary folder on its own ports, then runs
//! `salloc -N1 linkperf run --slurm` on a suite whose two hosts are that node: each side runs
//! through `srun --nodelist NODE --ntasks=1` inside the allocation instead of ssh. Needs root,
//! slurm-wlm and munge (`.ci/run` installs them).

mod common;

use common::{can_make_namespaces, linkperf_env, ok, sh, text};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A one-node cluster (node `lp1`) whose daemons are stopped on drop.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let d = dir.display();
        let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        sh(&format!(
            "mkdir -p {d}/state {d}/spool {d}/munge && chmod 700 {d}/munge && \
             dd if=/dev/urandom of={d}/munge/key bs=1024 count=1 2>/dev/null && chmod 400 {d}/munge/key && \
             /usr/sbin/munged --force --socket={d}/munge/sock --key-file={d}/munge/key \
               --pid-file={d}/munge/pid --log-file={d}/munge/log --seed-file={d}/munge/seed"
        ));
        let conf = format!(
            "ClusterName=linkperftest\nSlurmctldHost={host}(127.0.0.1)\nAuthType=auth/munge\n\
             AuthInfo=socket={d}/munge/sock\nCredType=cred/munge\nSlurmUser=root\nSlurmdUser=root\n\
             SlurmctldPort=26917\nSlurmdPort=26918\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nMpiDefault=none\nReturnToService=2\n\
             NodeName=lp1 NodeHostname={host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
             PartitionName=lp Nodes=lp1 Default=YES MaxTime=INFINITE State=UP\n"
        );
        std::fs::write(dir.join("slurm.conf"), conf).unwrap();
        let c = Cluster {
            dir: dir.to_path_buf(),
        };
        sh(&format!(
            "/usr/sbin/slurmctld -f {d}/slurm.conf && /usr/sbin/slurmd -f {d}/slurm.conf -N lp1"
        ));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let o = Command::new("sinfo")
                .args(["-h", "-o", "%t"])
                .env("SLURM_CONF", dir.join("slurm.conf"))
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                break c;
            }
            assert!(
                Instant::now() < deadline,
                "the node never came up: {}",
                std::fs::read_to_string(dir.join("slurmd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for pid in ["slurmd.pid", "slurmctld.pid", "munge/pid"] {
            if let Ok(p) = std::fs::read_to_string(self.dir.join(pid)) {
                let _ = Command::new("kill").arg(p.trim()).status();
            }
        }
    }
}

#[test]
fn each_side_runs_through_srun_inside_the_allocation() {
    if !can_make_namespaces(&["slurmctld", "slurmd", "munged", "srun", "salloc", "iperf3"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(&tmp.path().join("slurm"));
    let conf = cluster.dir.join("slurm.conf");
    let suite = tmp.path().join("slurm.toml");
    std::fs::write(
        &suite,
        "name = \"slurm\"\n\
         [[host]]\nname = \"a\"\nnode = \"lp1\"\naddress = \"127.0.0.1\"\n\
         [[host]]\nname = \"b\"\nnode = \"lp1\"\naddress = \"127.0.0.1\"\n\
         [[test]]\ntool = \"iperf3\"\nserver = \"a\"\nclient = \"b\"\nduration = 1\n",
    )
    .unwrap();
    let store = tmp.path().join("store");
    let runs = tmp.path().join("runs");
    let env = [("SLURM_CONF", conf.to_str().unwrap())];
    // Outside an allocation the executor refuses, and says how to get one.
    let out = linkperf_env(&store, &["run", "--slurm", suite.to_str().unwrap()], &env);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("salloc -N2 linkperf run --slurm"),
        "{}",
        text(&out)
    );
    // Inside one: salloc runs linkperf, which places both sides with srun.
    let bin = env!("CARGO_BIN_EXE_linkperf");
    let o = Command::new("salloc")
        .args([
            "-N1",
            "--time=5",
            bin,
            "run",
            "--slurm",
            suite.to_str().unwrap(),
        ])
        .args([
            "--runs-dir",
            runs.to_str().unwrap(),
            "--no-report",
            "--base-port",
            "26930",
        ])
        .env("SLURM_CONF", &conf)
        .env("LINKPERF_STORE", &store)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.status.success() && all.contains("1 of 1 runs passed"),
        "{all}"
    );
    let dir = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for side in ["server", "client"] {
        let log = std::fs::read_to_string(dir.join(format!("iperf3-r1-{side}.log"))).unwrap();
        let first = log.lines().next().unwrap();
        assert!(
            first.starts_with("$ srun --nodelist lp1 --nodes=1 --ntasks=1 --overlap"),
            "{first}"
        );
    }
    let rows = ok(&linkperf_env(
        &store,
        &["export", "--where", "tool=iperf3,role=client"],
        &[],
    ));
    assert!(rows.lines().count() > 1, "{rows}");
}
