//! Reading a counters file back: its host, its before/after pairs, and every counter value with
//! its line. A line that should hold a value and does not is a problem (line, why); the output
//! of a reader that yielded no value at all (`ethtool -S lo`: "no stats available", `rdma`
//! without RDMA devices) only says that reader had nothing here.

/// One counter value as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// `counters`, `hw_counters`, `rdma statistic`, `ethtool -S`, `snmp`.
    pub group: &'static str,
    /// `rxe0/1`, `eth0`, `Tcp`.
    pub object: String,
    pub name: String,
    pub value: u64,
    /// 1-based line in the counters file.
    pub line: u32,
}

/// One before/after pair.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pair {
    /// The host read (the `# linkperf counters host=…` line above the pair).
    pub host: String,
    /// The pair applies to the log's runs that start at this line or later.
    pub log_line: u32,
    pub before: Vec<Reading>,
    /// `None` when the file ends before the `after` read (the run was cut short).
    pub after: Option<Vec<Reading>>,
}

/// A whole counters file. It starts with a `# linkperf counters host=NAME` line; a later one
/// starts another host's reads (`linkperf bench` adds the server's after each test).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CountersFile {
    /// The first host.
    pub host: String,
    pub pairs: Vec<Pair>,
    /// (device, file, value) of the RDMA devices' placement files, from the first read.
    pub placement: Vec<(String, String, String)>,
    /// (1-based line, why) for each line that could not be read.
    pub problems: Vec<(u32, String)>,
}

/// `/proc/net/snmp` fields that are settings or gauges, not counters.
const SNMP_NOT_COUNTERS: &[&str] = &["RtoAlgorithm", "RtoMin", "RtoMax", "MaxConn", "CurrEstab"];
/// `/proc/net/snmp` protocols kept (Ip, Icmp, IcmpMsg and UdpLite are read past).
const SNMP_KEPT: &[&str] = &["Tcp", "Udp"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Reader {
    Sysfs,
    RdmaStatistic,
    Ethtool,
    Snmp,
    Placement,
}

fn reader_of(command: &str) -> Option<(Reader, String)> {
    if command.contains("/device/numa_node") {
        return Some((Reader::Placement, String::new()));
    }
    if command.contains("/sys/class/infiniband/") && command.starts_with("sh -c") {
        return Some((Reader::Sysfs, String::new()));
    }
    if command == "rdma statistic show" {
        return Some((Reader::RdmaStatistic, String::new()));
    }
    if let Some(nd) = command.strip_prefix("ethtool -S ") {
        return Some((Reader::Ethtool, nd.trim().to_string()));
    }
    (command == "cat /proc/net/snmp").then(|| (Reader::Snmp, String::new()))
}

/// What one reader printed in one section, before it is taken apart.
struct Output<'a> {
    reader: Reader,
    object: String,
    lines: Vec<(u32, &'a str)>,
}

/// The line that names the host whose reads follow.
pub const HEADER: &str = "# linkperf counters host=";

/// Reads a counters file.
pub fn parse(text: &str) -> CountersFile {
    let mut file = CountersFile::default();
    let lines = text.lines().enumerate().map(|(i, l)| (i as u32 + 1, l));
    if !text.starts_with(HEADER) {
        file.problems.push((
            1,
            "not a counters file: the first line is not `# linkperf counters host=NAME`".into(),
        ));
    }
    let mut host = String::new();
    let mut section: Option<(bool, u32, Vec<Output>)> = None;
    let close = |file: &mut CountersFile, host: &str, section: Option<(bool, u32, Vec<Output>)>| {
        let Some((is_before, log_line, outputs)) = section else {
            return;
        };
        if file.pairs.is_empty() {
            file.placement.extend(placement(&outputs));
        }
        let readings = read_outputs(outputs, &mut file.problems);
        if is_before {
            file.pairs.push(Pair {
                host: host.to_string(),
                log_line,
                before: readings,
                after: None,
            });
        } else if let Some(p) = file.pairs.last_mut().filter(|p| p.after.is_none()) {
            p.after = Some(readings);
        }
    };
    for (n, line) in lines {
        if let Some(name) = line.strip_prefix(HEADER) {
            close(&mut file, &host, section.take());
            host = name.trim().to_string();
            if file.host.is_empty() {
                file.host = host.clone();
            }
        } else if let Some(rest) = line.strip_prefix("== before log line ") {
            close(&mut file, &host, section.take());
            match rest.trim().parse::<u32>() {
                Ok(log_line) => section = Some((true, log_line, Vec::new())),
                Err(_) => file
                    .problems
                    .push((n, format!("`{line}`: expected a line number"))),
            }
        } else if line == "== after" {
            close(&mut file, &host, section.take());
            if file.pairs.last().is_none_or(|p| p.after.is_some()) {
                file.problems
                    .push((n, "an `== after` read without a `== before` read".into()));
            } else {
                section = Some((false, 0, Vec::new()));
            }
        } else if let Some(command) = line.strip_prefix("$ ") {
            let Some((_, _, outputs)) = section.as_mut() else {
                file.problems
                    .push((n, "a command outside a before or after read".into()));
                continue;
            };
            match reader_of(command) {
                Some((reader, object)) => outputs.push(Output {
                    reader,
                    object,
                    lines: Vec::new(),
                }),
                None => file.problems.push((
                    n,
                    format!("`{command}`: not a counter reader linkperf knows"),
                )),
            }
        } else if let Some((_, _, outputs)) = section.as_mut() {
            match outputs.last_mut() {
                Some(o) => o.lines.push((n, line)),
                None if line.trim().is_empty() => {}
                None => file
                    .problems
                    .push((n, "output before any `$ command` line".into())),
            }
        } else if !line.trim().is_empty() {
            file.problems
                .push((n, "a line outside a before or after read".into()));
        }
    }
    close(&mut file, &host, section.take());
    file
}

/// The placement files of a section's placement reader.
fn placement(outputs: &[Output]) -> Vec<(String, String, String)> {
    outputs
        .iter()
        .filter(|o| o.reader == Reader::Placement)
        .flat_map(|o| o.lines.iter())
        .filter_map(|(_, l)| crate::ingest::sysfs::device_file(l))
        .map(|(d, f, v)| (d.to_string(), f.to_string(), v.to_string()))
        .collect()
}

fn read_outputs(outputs: Vec<Output>, problems: &mut Vec<(u32, String)>) -> Vec<Reading> {
    let mut out = Vec::new();
    for o in outputs
        .into_iter()
        .filter(|o| o.reader != Reader::Placement)
    {
        let mut readings = Vec::new();
        let mut unread = Vec::new();
        match o.reader {
            Reader::Snmp => read_snmp(&o.lines, &mut readings, &mut unread),
            _ => {
                for &(n, line) in &o.lines {
                    let before = readings.len();
                    match o.reader {
                        Reader::Sysfs => readings.extend(sysfs(n, line)),
                        Reader::RdmaStatistic => rdma_statistic(n, line, &mut readings),
                        _ => readings.extend(ethtool(n, line, &o.object)),
                    }
                    let header = o.reader == Reader::Ethtool && line.ends_with("statistics:");
                    if readings.len() == before && !header && !line.trim().is_empty() {
                        unread.push(n);
                    }
                }
            }
        }
        // A reader with no value printed why it had none (no device, no stats): not a problem.
        if !readings.is_empty() {
            problems.extend(
                unread
                    .into_iter()
                    .map(|n| (n, "not a counter value of the command above".to_string())),
            );
        }
        out.extend(readings);
    }
    out
}

/// `/sys/class/infiniband/DEV/ports/N/counters/NAME:VALUE`.
fn sysfs(n: u32, line: &str) -> Option<Reading> {
    let (path, value) = line.rsplit_once(':')?;
    let rest = path.strip_prefix("/sys/class/infiniband/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    let [dev, "ports", port, group @ ("counters" | "hw_counters"), name] = parts[..] else {
        return None;
    };
    Some(Reading {
        group: if group == "counters" {
            "counters"
        } else {
            "hw_counters"
        },
        object: format!("{dev}/{port}"),
        name: name.to_string(),
        value: value.trim().parse().ok()?,
        line: n,
    })
}

/// `link rxe0/1 sent_pkts 12 rcvd_pkts 34 …` (iproute2's `rdma statistic show`).
fn rdma_statistic(n: u32, line: &str, out: &mut Vec<Reading>) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let ["link", object, pairs @ ..] = &words[..] else {
        return;
    };
    for pair in pairs.chunks(2) {
        if let [name, value] = pair {
            if let Ok(value) = value.parse() {
                out.push(Reading {
                    group: "rdma statistic",
                    object: object.to_string(),
                    name: name.to_string(),
                    value,
                    line: n,
                });
            }
        }
    }
}

/// `     rx_pause_ctrl_phy: 12` under `NIC statistics:`.
fn ethtool(n: u32, line: &str, netdev: &str) -> Option<Reading> {
    let (name, value) = line.rsplit_once(':')?;
    Some(Reading {
        group: "ethtool -S",
        object: netdev.to_string(),
        name: name.trim().to_string(),
        value: value.trim().parse().ok()?,
        line: n,
    })
}

/// `/proc/net/snmp`: a line of names, then a line of values, per protocol.
fn read_snmp(lines: &[(u32, &str)], out: &mut Vec<Reading>, unread: &mut Vec<u32>) {
    let mut i = 0;
    while i < lines.len() {
        let (n, names) = lines[i];
        let Some((proto, names)) = names.split_once(": ") else {
            if !names.trim().is_empty() {
                unread.push(n);
            }
            i += 1;
            continue;
        };
        let Some(&(vn, values)) = lines.get(i + 1) else {
            unread.push(n);
            break;
        };
        let values = values
            .strip_prefix(proto)
            .and_then(|v| v.strip_prefix(": "));
        let (names, values): (Vec<&str>, Vec<&str>) = match values {
            Some(v) => (
                names.split_whitespace().collect(),
                v.split_whitespace().collect(),
            ),
            None => {
                unread.push(vn);
                i += 1;
                continue;
            }
        };
        if names.len() != values.len() {
            unread.push(vn);
        } else if SNMP_KEPT.contains(&proto) {
            for (name, value) in names.into_iter().zip(values) {
                if SNMP_NOT_COUNTERS.contains(&name) {
                    continue;
                }
                match value.parse() {
                    Ok(value) => out.push(Reading {
                        group: "snmp",
                        object: proto.to_string(),
                        name: name.to_string(),
                        value,
                        line: vn,
                    }),
                    Err(_) => unread.push(vn),
                }
            }
        }
        i += 2;
    }
}
