use super::*;
use regex::Regex;

/// A recycled vector is the same allocation, empty: a table's rows share one.
#[test]
fn recycled_values_keep_their_allocation() {
    let line = String::from(" 2 1000 0.06 0.05 3.67");
    let first = row(&line).unwrap().values;
    let (at, capacity) = (first.as_ptr() as usize, first.capacity());
    let again = row_in(&line, recycle(first)).unwrap().values;
    assert_eq!((again.as_ptr() as usize, again.capacity()), (at, capacity));
    let empty: Vec<Cell> = recycle(again);
    assert!(empty.is_empty() && empty.capacity() == capacity);
}

#[test]
fn rows() {
    let r =
        row(" 2          1000           0.061539            0.058761            3.672573").unwrap();
    let texts: Vec<_> = r.values.iter().map(|c| c.text).collect();
    assert_eq!(texts, ["2", "1000", "0.061539", "0.058761", "3.672573"]);
    let r = row("8388608 1000 0.00 98.03 0.001461时延测试").unwrap();
    assert_eq!(r.values.len(), 5);
    assert_eq!(r.trailing, "时延测试");
    let r = row(" 65536      5000             4508.97            4508.79\t\t   0.072141").unwrap();
    assert_eq!(r.values[4].text, "0.072141");
    assert!(row(" 2x 100").is_none());
    assert!(row("Linux 4.19").is_none());
    assert!(row(" 4.5 10").is_none());
    let r = row(" 2       1000          0.96           1.25         0.98     \t       0.98        \t0.01   \t\t1.00    \t\t1.25   ").unwrap();
    assert_eq!(r.values.len(), 9);
}

/// The regex the header scanner replaced; the scanner must read every header as it did.
fn header_by_regex(line: &str) -> Option<Vec<Column>> {
    let re = Regex::new(concat!(
        r"#bytes|#iterations|#sl|",
        r"BW\s+peak\[(?P<peak>[^\]]+)\]|BW\s+average\[(?P<avg>[^\]]+)\]|",
        r"BW\s+Port1\[(?P<p1>[^\]]+)\]|MsgRate\s+Port1\[Mpps\]|",
        r"BW\s+Port2\[(?P<p2>[^\]]+)\]|MsgRate\s+Port2\[Mpps\]|MsgRate\[Mpps\]|",
        r"CPU_Util\[%\]|t_min\[usec\]|t_max\[usec\]|t_typical\[usec\]|t_avg\[usec\]|",
        r"t_stdev\[usec\]|99%\s+percentile\[usec\]|99\.9%\s+percentile\[usec\]|tps\s+average"
    ))
    .unwrap();
    if !line.trim_start().starts_with("#bytes") {
        return None;
    }
    let mut cols = Vec::new();
    for c in re.captures_iter(line) {
        let unit = |name: &str| c.name(name).map(|m| m.as_str().to_string());
        let squashed = c[0].split_whitespace().collect::<Vec<_>>().join(" ");
        cols.push(if let Some(u) = unit("peak") {
            Column::BwPeak(u.into())
        } else if let Some(u) = unit("avg") {
            Column::BwAvg(u.into())
        } else if let Some(u) = unit("p1") {
            Column::BwPort1(u.into())
        } else if let Some(u) = unit("p2") {
            Column::BwPort2(u.into())
        } else {
            match squashed.as_str() {
                "#bytes" => Column::Bytes,
                "#iterations" => Column::Iterations,
                "#sl" => Column::Sl,
                "MsgRate[Mpps]" => Column::MsgRate,
                "MsgRate Port1[Mpps]" => Column::MsgRatePort1,
                "MsgRate Port2[Mpps]" => Column::MsgRatePort2,
                "CPU_Util[%]" => Column::CpuUtil,
                "t_min[usec]" => Column::TMin,
                "t_max[usec]" => Column::TMax,
                "t_typical[usec]" => Column::TTypical,
                "t_avg[usec]" => Column::TAvg,
                "t_stdev[usec]" => Column::TStdev,
                "99% percentile[usec]" => Column::P99,
                "99.9% percentile[usec]" => Column::P999,
                _ => Column::Tps,
            }
        });
    }
    (cols.len() >= 2 && cols[0] == Column::Bytes).then_some(cols)
}

#[test]
fn header_scanner_reads_as_the_regex_did() {
    let mut lines: Vec<String> = [
        "#bytes #iterations BW peak[] BW average[Gb/sec] MsgRate[Mpps]",
        "#bytes#iterations  BW  peak[MB/sec]BW\taverage[MB/sec]   MsgRate Port1[Mpps]",
        "#bytes #iterations BW peak[Gb/sec BW average[Gb/sec]",
        " #bytes #iterations t_min[usec] t_max[usec] 99% percentile[usec] 99.9%  percentile[usec]",
        "#bytes #sl #iterations BW Port1[Gb/sec] BW Port2[Gb/sec] MsgRate Port2[Mpps] tps  average",
        "#bytes 时延 #iterations CPU_Util[%] t_typical[usec] t_avg[usec] t_stdev[usec]",
        "#bytes #iterations MsgRate  [Mpps] BW\u{3000}peak[Gb/sec]",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    lines.extend(crate::ingest::fixture_lines_with(&["fixtures"], "#bytes"));
    assert!(lines.len() > 50, "{} header lines", lines.len());
    for line in &lines {
        assert_eq!(header(line), header_by_regex(line), "{line:?}");
    }
}

#[test]
fn headers() {
    let h = header(
        " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]",
    )
    .unwrap();
    assert_eq!(
        h,
        vec![
            Column::Bytes,
            Column::Iterations,
            Column::BwPeak("MiB/sec".into()),
            Column::BwAvg("MiB/sec".into()),
            Column::MsgRate
        ]
    );
    let h = header("#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]").unwrap();
    assert_eq!(h.len(), 9);
    assert_eq!(h[8], Column::P999);
    let h = header(" #bytes        #iterations       t_avg[usec]    tps average").unwrap();
    assert_eq!(
        h,
        vec![Column::Bytes, Column::Iterations, Column::TAvg, Column::Tps]
    );
}

#[test]
fn banner() {
    let p = banner_pairs("Dual-port : OFF Device : mrdma0").unwrap();
    assert_eq!(
        p,
        vec![
            ("dual_port".into(), "OFF".into()),
            ("device".into(), "mrdma0".into())
        ]
    );
    let p = banner_pairs(" rdma_cm QPs\t : OFF").unwrap();
    assert_eq!(p, vec![("rdma_cm_qps".into(), "OFF".into())]);
    let p = banner_pairs(" ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF").unwrap();
    assert_eq!(p[1], ("using_enhanced_reorder".into(), "OFF".into()));
    let p = banner_pairs(" GID index       : 2").unwrap();
    assert_eq!(p, vec![("gid_index".into(), "2".into())]);
    assert!(banner_pairs("The Device : x").is_none());
}

#[test]
fn titles() {
    let t = title("                    RDMA_Write BW Test").unwrap();
    assert_eq!((t.verb, t.kind, t.bidirectional), ("write", "bw", false));
    let t = title("\t\t    Send Bidirectional BW Test").unwrap();
    assert!(t.bidirectional);
    let t = title("Atomic FETCH_AND_ADD Latency Test").unwrap();
    assert_eq!((t.verb, t.kind), ("atomic", "lat"));
    assert!(title("RDMA_Write BW Test results below").is_none());
}

#[test]
fn samples_and_rules() {
    assert_eq!(sample("17, 1.93"), Some((17, 1.93)));
    assert_eq!(sample("3, 1.2e+06"), Some((3, 1.2e6)));
    assert!(!is_sample("17 1.93"));
    assert!(!is_sample("17, 1.93 usec"));
    assert_eq!(sample_header("#, cycles"), Some("cycles"));
    assert_eq!(sample_header("#, usec "), Some("usec"));
    assert_eq!(sample_header("#bytes"), None);
    assert!(is_rule("---------------------------------------------------------------------------------------4、总结"));
    assert!(!is_rule(
        "--- storage02.(none) (Lid 5) ibping statistics ---"
    ));
}

/// Each banner key is found on its own line, whatever group of first bytes it is in, and the
/// longer of two keys that share a start wins where it is printed (`GID index2`).
#[test]
fn every_banner_key_reads_as_itself() {
    for key in BANNER_KEYS {
        let pairs = banner_pairs(&format!(" {key}     : x")).expect(key);
        let expected = crate::ingest::common::snake_key(key);
        assert_eq!(pairs, vec![(expected.into(), "x".to_string())], "{key}");
    }
}
