//! Reads of an RDMA device's PCI placement from sysfs, as `grep -H . FILE…` prints them
//! (`/sys/class/infiniband/mlx5_0/device/numa_node:1`): the device's NUMA node, the CPUs local
//! to it, and its PCIe link's trained and maximum speed and width. Device listings
//! ([`super::devinfo`]) and counters files ([`crate::counters`]) both carry them; `linkperf
//! check` reads them (as `device.pci.*` facts of a run) for its placement findings.

/// The device files read, under `/sys/class/infiniband/DEV/device/`.
pub const FILES: &[&str] = &[
    "numa_node",
    "local_cpulist",
    "current_link_speed",
    "current_link_width",
    "max_link_speed",
    "max_link_width",
];

/// The command that reads every RDMA device's placement files: `path:value` lines.
pub fn read_command() -> String {
    let files: Vec<String> = FILES
        .iter()
        .map(|f| format!("/sys/class/infiniband/*/device/{f}"))
        .collect();
    format!("grep -H . {} 2>/dev/null; true", files.join(" "))
}

/// `/sys/class/infiniband/DEV/device/FILE:VALUE` → (DEV, FILE, VALUE), for the files of
/// [`FILES`]. The sysfs mount may sit elsewhere (`/host/sys/…`, a copy of a tree): any absolute
/// path up to `/class/infiniband/` is taken.
pub fn device_file(line: &str) -> Option<(&str, &str, &str)> {
    // The path is the line's start: most lines are ruled out by their first byte.
    if !line.starts_with('/') {
        return None;
    }
    let at = line.find("/class/infiniband/")?;
    let root = &line[..at];
    if !root.starts_with('/') || root.contains([' ', ':', '\t']) {
        return None;
    }
    let rest = &line[at + "/class/infiniband/".len()..];
    let (device, rest) = rest.split_once("/device/")?;
    let (file, value) = rest.split_once(':')?;
    (FILES.contains(&file) && !device.contains('/')).then_some((device, file, value.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_files_name_device_file_and_value() {
        assert_eq!(
            device_file("/sys/class/infiniband/mlx5_0/device/current_link_speed:8.0 GT/s PCIe"),
            Some(("mlx5_0", "current_link_speed", "8.0 GT/s PCIe"))
        );
        assert_eq!(
            device_file("/sys/class/infiniband/mlx5_0/device/vendor:0x15b3"),
            None
        );
        assert_eq!(device_file("/sys/class/net/eth0/device/numa_node:0"), None);
        assert_eq!(
            device_file("/tmp/t/sys/class/infiniband/rxe0/device/numa_node:-1"),
            Some(("rxe0", "numa_node", "-1"))
        );
        assert_eq!(
            device_file("x /sys/class/infiniband/rxe0/device/numa_node:1"),
            None
        );
    }
}
