//! The platform a run was measured on: cpu, nic, driver, vendor, firmware, os, kernel, link
//! speed, MTU, plus free labels, each with the source it came from. Sources, strongest first:
//! 1. labels given at import (`--label platform=kunpeng920`);
//! 2. `linkperf.toml` rules (by source path glob, host or device);
//! 3. device facts from the same transcript (`ibv_devinfo`, `ibstat`, `rdma link`, qperf `conf`);
//! 4. built-in rules from device names and vendor ids (`hns_*` → HiSilicon HNS RoCE, ...).
//!
//! Resolution happens when the store is read, so a changed `linkperf.toml` applies to runs
//! imported before it.

use crate::config::{glob_match, Config};
use crate::model::Run;
use serde::Serialize;
use std::collections::BTreeMap;

/// Where a resolved value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Label,
    Config,
    DeviceFacts,
    BuiltIn,
    Run,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Label => "label",
            Source::Config => "config",
            Source::DeviceFacts => "device facts",
            Source::BuiltIn => "built-in",
            Source::Run => "run",
        }
    }
}

/// A resolved value with its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub value: String,
    pub from: Source,
}

/// The resolved platform of one run: key → value and source.
pub type Platform = BTreeMap<String, Resolved>;

/// Built-in knowledge of RDMA device names: (prefix, nic, driver, cpu if the NIC is on-die).
const DEVICE_RULES: &[(&str, &str, &str, Option<&str>)] = &[
    (
        "hns_",
        "HiSilicon HNS RoCE",
        "hns_roce_hw_v2",
        Some("Kunpeng 920"),
    ),
    ("mlx4_", "NVIDIA/Mellanox ConnectX-3", "mlx4_ib", None),
    (
        "mlx5_",
        "NVIDIA/Mellanox ConnectX-4 or later",
        "mlx5_ib",
        None,
    ),
    ("irdma", "Intel E810/X722", "irdma", None),
    ("mrdma", "B850", "mrdma", None),
    ("rxe", "Soft-RoCE", "rdma_rxe", None),
    ("siw", "Soft-iWARP", "siw", None),
    ("bnxt_re", "Broadcom NetXtreme-E", "bnxt_re", None),
    ("qedr", "Marvell FastLinQ", "qedr", None),
    ("efa_", "AWS EFA", "efa", None),
    ("erdma", "Alibaba eRDMA", "erdma", None),
    ("hfi1_", "Intel Omni-Path", "hfi1", None),
];

/// PCI vendor ids as `ibv_devinfo` prints them.
const VENDOR_IDS: &[(&str, &str)] = &[
    ("0x19e5", "Huawei"),
    ("0x02c9", "Mellanox"),
    ("0x15b3", "Mellanox"),
    ("0x8086", "Intel"),
    ("0x14e4", "Broadcom"),
    ("0x1077", "QLogic/Marvell"),
    ("0x1d0f", "Amazon"),
];

/// The keys `--by` and `--where` accept besides labels.
pub const PLATFORM_KEYS: &[&str] = &[
    "platform",
    "cpu",
    "nic",
    "driver",
    "vendor",
    "firmware",
    "os",
    "kernel",
    "link_speed_gbps",
];

/// Per-port fact names, ports 1 to 8: state and link rate, each as a run's own fact and as one
/// from a device listing in its file. Written out, not put together per run: resolving runs
/// once per run of an import.
const PORT_KEYS: [(&str, &str, [&str; 2]); 8] = [
    ("port1.state", "device.port1.state", ["port1.rate_gbps", "device.port1.rate_gbps"]),
    ("port2.state", "device.port2.state", ["port2.rate_gbps", "device.port2.rate_gbps"]),
    ("port3.state", "device.port3.state", ["port3.rate_gbps", "device.port3.rate_gbps"]),
    ("port4.state", "device.port4.state", ["port4.rate_gbps", "device.port4.rate_gbps"]),
    ("port5.state", "device.port5.state", ["port5.rate_gbps", "device.port5.rate_gbps"]),
    ("port6.state", "device.port6.state", ["port6.rate_gbps", "device.port6.rate_gbps"]),
    ("port7.state", "device.port7.state", ["port7.rate_gbps", "device.port7.rate_gbps"]),
    ("port8.state", "device.port8.state", ["port8.rate_gbps", "device.port8.rate_gbps"]),
];

/// The link rate fact of the first port whose state is active (`PORT_ACTIVE (4)`, `Active`,
/// `ACTIVE`), else of port 1.
fn active_port_rate(run: &Run) -> [&'static str; 2] {
    // Runs without port facts (most of a large selection) skip the per-port lookups.
    if !run.has_facts_under("port") && !run.has_facts_under("device.port") {
        return PORT_KEYS[0].2;
    }
    PORT_KEYS
        .iter()
        .find(|(state, device_state, _)| {
            let state = run.facts.get(*state).or_else(|| run.facts.get(*device_state));
            state.is_some_and(|s| {
                s.as_bytes()
                    .windows(6)
                    .any(|w| w.eq_ignore_ascii_case(b"ACTIVE"))
            })
        })
        .unwrap_or(&PORT_KEYS[0])
        .2
}

/// Which keys a resolution fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// Every key the run's sources give.
    All,
    /// What the import's checks read ([`crate::check`]): `platform` and `link_speed_gbps`, and
    /// `cpu` and `nic`, which name a platform nothing names. Resolved once per run of an
    /// import: the other keys' lookups and copies were a third of the checks' time.
    Checks,
}

impl Keys {
    fn wants(self, key: &str) -> bool {
        match self {
            Keys::All => true,
            Keys::Checks => matches!(key, "platform" | "link_speed_gbps" | "cpu" | "nic"),
        }
    }
}

fn set(p: &mut Platform, keys: Keys, key: &str, value: impl Into<String>, from: Source) {
    if !keys.wants(key) {
        return;
    }
    // Sources are applied weakest first, so a stronger one simply overwrites.
    p.insert(
        key.to_string(),
        Resolved {
            value: value.into(),
            from,
        },
    );
}

/// Resolves the platform of `run`.
pub fn resolve(run: &Run, config: &Config) -> Platform {
    resolve_keys(run, config, Keys::All)
}

/// Resolves the `keys` of the platform of `run`: each as [`resolve`] gives it.
pub fn resolve_keys(run: &Run, config: &Config, keys: Keys) -> Platform {
    let mut p = Platform::new();
    // 4. Built-in rules.
    if let Some(device) = &run.device {
        if let Some((_, nic, driver, cpu)) = DEVICE_RULES
            .iter()
            .find(|(prefix, ..)| device.starts_with(prefix))
        {
            set(&mut p, keys, "nic", *nic, Source::BuiltIn);
            set(&mut p, keys, "driver", *driver, Source::BuiltIn);
            if let Some(cpu) = cpu {
                set(&mut p, keys, "cpu", *cpu, Source::BuiltIn);
            }
        }
    }
    // Device facts (`device.*`, from a listing in the same file) are looked for only in runs
    // that have some: building the key per fact and run cost more than the rest of resolving.
    let has_device_facts = run.has_facts_under("device.");
    // (the run's own name, the name under `device.`)
    let fact = |[own, device]: [&str; 2]| {
        run.facts
            .get(own)
            .or_else(|| has_device_facts.then(|| run.facts.get(device)).flatten())
    };
    let wants = |key| keys.wants(key);
    if let Some(v) = wants("vendor")
        .then(|| fact(["vendor_id", "device.vendor_id"]))
        .flatten()
        .and_then(|id| VENDOR_IDS.iter().find(|(i, _)| i == id))
    {
        set(&mut p, keys, "vendor", v.1, Source::BuiltIn);
    }
    // 3. Device facts.
    let firmware = || {
        fact(["fw_ver", "device.fw_ver"])
            .or_else(|| fact(["firmware_version", "device.firmware_version"]))
    };
    if let Some(fw) = wants("firmware").then(firmware).flatten() {
        set(&mut p, keys, "firmware", fw.clone(), Source::DeviceFacts);
    }
    if let Some(rate) = fact(active_port_rate(run)) {
        set(&mut p, keys, "link_speed_gbps", rate.clone(), Source::DeviceFacts);
    }
    if let Some(os) = wants("os").then(|| run.facts.get("conf.loc_os")).flatten() {
        set(&mut p, keys, "os", os.clone(), Source::DeviceFacts);
    }
    if let Some(cpu) = run.facts.get("conf.loc_cpu") {
        set(&mut p, keys, "cpu", cpu.clone(), Source::DeviceFacts);
    }
    // 2. Project rules, in file order.
    for rule in &config.rules {
        let matches = rule
            .source
            .as_ref()
            .is_none_or(|g| glob_match(g, &run.source))
            && rule
                .host
                .as_ref()
                .is_none_or(|g| run.host.as_ref().is_some_and(|h| glob_match(g, h)))
            && rule
                .device
                .as_ref()
                .is_none_or(|g| run.device.as_ref().is_some_and(|d| glob_match(g, d)));
        if matches {
            for (k, v) in &rule.set {
                set(&mut p, keys, k, v.as_str(), Source::Config);
            }
        }
    }
    // 1. Labels at import.
    for (k, v) in &run.labels {
        set(&mut p, keys, k, v.as_str(), Source::Label);
    }
    if !p.contains_key("platform") {
        // Unnamed platforms are called after what is known about them.
        let name = [p.get("cpu"), p.get("nic")]
            .into_iter()
            .flatten()
            .map(|r| r.value.clone())
            .collect::<Vec<_>>()
            .join(" + ");
        let name = if name.is_empty() {
            run.host.clone().unwrap_or_else(|| "unknown".into())
        } else {
            name
        };
        set(&mut p, keys, "platform", name, Source::BuiltIn);
    }
    if let Some(mtu) = run.mtu.filter(|_| wants("mtu")) {
        p.entry("mtu".into()).or_insert(Resolved {
            value: mtu.to_string(),
            from: Source::Run,
        });
    }
    p
}

/// `platform=kunpeng920 (label), nic=HiSilicon HNS RoCE (built-in)` for `ls`.
pub fn describe(p: &Platform) -> String {
    p.iter()
        .filter(|(k, _)| k.as_str() != "mtu")
        .map(|(k, r)| format!("{k}={} ({})", r.value, r.from.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, RunStatus};

    fn run(device: &str) -> Run {
        Run {
            run_id: "x".into(),
            source: "logs/kp920/a.txt".into(),
            line: 1,
            tool: "perftest".into(),
            test: "ib_write_bw".into(),
            role: Role::Client,
            status: RunStatus::Ok,
            host: Some("node1".into()),
            command: None,
            device: Some(device.into()),
            mtu: Some(4096),
            link_layer: None,
            connection_type: None,
            qps: None,
            facts: BTreeMap::new(),
            notes: vec![],
            error: None,
            labels: BTreeMap::new(),
            measurements: vec![],
            counters: vec![],
        }
    }

    #[test]
    fn precedence_label_over_config_over_facts_over_builtin() {
        let mut r = run("hns_1");
        r.facts.insert("device.vendor_id".into(), "0x19e5".into());
        r.facts.insert("device.fw_ver".into(), "0.277.001".into());
        let p = resolve(&r, &Config::default());
        assert_eq!(p["nic"].value, "HiSilicon HNS RoCE");
        assert_eq!(
            p["cpu"],
            Resolved {
                value: "Kunpeng 920".into(),
                from: Source::BuiltIn
            }
        );
        assert_eq!(p["vendor"].value, "Huawei");
        assert_eq!(p["firmware"].from, Source::DeviceFacts);
        assert_eq!(p["platform"].value, "Kunpeng 920 + HiSilicon HNS RoCE");

        let config = Config::parse("[[rule]]\nsource = \"logs/kp920/**\"\nset = { platform = \"kp\", nic = \"hns 100G\" }\n").unwrap();
        let p = resolve(&r, &config);
        assert_eq!(
            (p["platform"].value.as_str(), p["platform"].from),
            ("kp", Source::Config)
        );
        assert_eq!(p["nic"].value, "hns 100G");

        r.labels.insert("platform".into(), "kunpeng920".into());
        let p = resolve(&r, &config);
        assert_eq!(
            (p["platform"].value.as_str(), p["platform"].from),
            ("kunpeng920", Source::Label)
        );
    }

    #[test]
    fn link_speed_comes_from_the_active_port() {
        let mut r = run("mlx4_0");
        for (k, v) in [
            ("port1.state", "Down"),
            ("port1.rate_gbps", "10"),
            ("port2.state", "Active"),
            ("port2.rate_gbps", "56"),
        ] {
            r.facts.insert(format!("device.{k}").into(), v.into());
        }
        assert_eq!(
            resolve(&r, &Config::default())["link_speed_gbps"].value,
            "56"
        );
    }

    #[test]
    fn the_checks_keys_resolve_as_a_whole_resolution_gives_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = crate::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
        let config = Config::parse(
            "[[rule]]\nsource = \"**/seeds/**\"\nset = { platform = \"kp\", os = \"x\" }\n\
             [[rule]]\ndevice = \"mlx*\"\nset = { nic = \"cx\", link_speed_gbps = \"25\" }\n",
        )
        .unwrap();
        let (mut runs, mut by_config) = (0, 0);
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            for mut run in crate::ingest::parse_bytes(&file.display().to_string(), &bytes).runs {
                for config in [&Config::default(), &config] {
                    for labels in [&[][..], &[("cpu", "label cpu"), ("rack", "r1")][..]] {
                        run.labels = labels
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect();
                        let mut whole = resolve(&run, config);
                        whole.retain(|k, _| Keys::Checks.wants(k));
                        assert_eq!(resolve_keys(&run, config, Keys::Checks), whole);
                        runs += 1;
                        by_config += usize::from(whole.values().any(|r| r.from == Source::Config));
                    }
                }
            }
        }
        assert!(runs > 1000 && by_config > 100, "{runs} resolutions, {by_config} by a rule");
    }

    #[test]
    fn device_rules() {
        assert_eq!(
            resolve(&run("mrdma0"), &Config::default())["nic"].value,
            "B850"
        );
        assert_eq!(
            resolve(&run("mlx4_0"), &Config::default())["nic"].value,
            "NVIDIA/Mellanox ConnectX-3"
        );
        assert_eq!(
            resolve(&run("rxe0"), &Config::default())["driver"].value,
            "rdma_rxe"
        );
    }
}
