//! iperf 2's enhanced (`-e`) columns after the rate: TCP's `writes/errs retry cwnd/rtt` and
//! UDP's `avg/min/max/stdev ms` latency. Read by hand on ASCII text, exactly as the regexes
//! they replaced capture them (each still decides on other text, where its `\d` and `\s`
//! take non-ASCII digits and blanks too).

use crate::ingest::common::{blanks, digits, expect, run};

/// The parts of a TCP enhanced report that become columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpEnhanced<'a> {
    pub retry: &'a str,
    pub cwnd_kib: &'a str,
    pub rtt_us: &'a str,
}

/// A UDP enhanced report's latency, in ms as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpLatency<'a> {
    pub avg: &'a str,
    pub min: &'a str,
    pub max: &'a str,
    pub stdev: &'a str,
}

crate::ingest::common::per_thread_regex! {
    static TCP_ENHANCED = r"^(?P<writes>\d+)/(?P<errs>\d+)\s+(?P<retry>\d+)\s+(?:(?P<inflight>\d+)/)?(?P<cwnd>\d+)K/(?P<rtt>\d+)(?:\((?P<var>\d+)\))?\s*us";
    static UDP_LATENCY = r"(?P<avg>[\d.]+)/(?P<min>[\d.]+)/(?P<max>[\d.]+)/(?P<stdev>[\d.]+)\s+ms";
}

/// `writes/errs retry [inflight/]cwndK/rtt[(var)] us` at the start of `text`.
pub fn tcp_enhanced(text: &str) -> Option<TcpEnhanced<'_>> {
    if !text.is_ascii() {
        return tcp_enhanced_by_regex(text);
    }
    let b = text.as_bytes();
    let errs = digits(b, expect(b, digits(b, 0)?, b"/")?)?;
    let retry_from = blanks(b, errs, 1)?;
    let retry = digits(b, retry_from)?;
    let first_from = blanks(b, retry, 1)?;
    let first = digits(b, first_from)?;
    // The in-flight count is there when a slash follows the first number: `cwnd` itself is
    // followed by `K/`.
    let cwnd_from = match expect(b, first, b"/") {
        Some(after) => after,
        None => first_from,
    };
    let cwnd = digits(b, cwnd_from)?;
    let rtt_from = expect(b, cwnd, b"K/")?;
    let rtt = digits(b, rtt_from)?;
    let var = expect(b, rtt, b"(")
        .and_then(|at| digits(b, at))
        .and_then(|at| expect(b, at, b")"))
        .unwrap_or(rtt);
    expect(b, blanks(b, var, 0)?, b"us")?;
    Some(TcpEnhanced {
        retry: &text[retry_from..retry],
        cwnd_kib: &text[cwnd_from..cwnd],
        rtt_us: &text[rtt_from..rtt],
    })
}

/// The first `avg/min/max/stdev ms` in `text`.
pub fn udp_latency(text: &str) -> Option<UdpLatency<'_>> {
    if !text.is_ascii() {
        return udp_latency_by_regex(text);
    }
    let b = text.as_bytes();
    let is_part = |c: u8| c.is_ascii_digit() || c == b'.';
    // Each number is its whole run of digits and dots, so a match starts where a run does
    // (from within a run it would read what that run's start reads): the first run it reads
    // from is the leftmost match.
    (0..b.len())
        .filter(|&i| is_part(b[i]) && (i == 0 || !is_part(b[i - 1])))
        .find_map(|start| {
            let mut ends = [start; 4];
            let mut from = start;
            for (k, end) in ends.iter_mut().enumerate() {
                *end = Some(run(b, from, is_part)).filter(|&e| e > from)?;
                from = match k {
                    3 => expect(b, blanks(b, *end, 1)?, b"ms")?,
                    _ => expect(b, *end, b"/")?,
                };
            }
            Some(UdpLatency {
                avg: &text[start..ends[0]],
                min: &text[ends[0] + 1..ends[1]],
                max: &text[ends[1] + 1..ends[2]],
                stdev: &text[ends[2] + 1..ends[3]],
            })
        })
}

/// What `TCP_ENHANCED` captures of `text`.
fn tcp_enhanced_by_regex(text: &str) -> Option<TcpEnhanced<'_>> {
    TCP_ENHANCED.with(|re| {
        let c = re.captures(text)?;
        Some(TcpEnhanced {
            retry: c.name("retry")?.as_str(),
            cwnd_kib: c.name("cwnd")?.as_str(),
            rtt_us: c.name("rtt")?.as_str(),
        })
    })
}

/// What `UDP_LATENCY` captures of `text`.
fn udp_latency_by_regex(text: &str) -> Option<UdpLatency<'_>> {
    UDP_LATENCY.with(|re| {
        let c = re.captures(text)?;
        Some(UdpLatency {
            avg: c.name("avg")?.as_str(),
            min: c.name("min")?.as_str(),
            max: c.name("max")?.as_str(),
            stdev: c.name("stdev")?.as_str(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fixture line from each of its words on, and hand-made edge cases.
    fn texts(cases: &[&str]) -> Vec<String> {
        let mut texts: Vec<String> = cases.iter().map(|s| s.to_string()).collect();
        texts.extend(crate::ingest::fixture_tails_with("/"));
        texts
    }

    /// How many of `cases` and the fixture texts the regex reads, each read by hand as the
    /// regex reads it (the parts compared as written by `Debug`: each reader's type borrows
    /// from its text).
    fn read_alike(
        cases: &[&str],
        hand: impl Fn(&str) -> Option<String>,
        regex: impl Fn(&str) -> Option<String>,
    ) -> usize {
        let mut read = 0;
        for text in texts(cases) {
            let want = regex(&text);
            read += usize::from(want.is_some());
            assert_eq!(hand(&text), want, "{text:?}");
        }
        read
    }

    #[test]
    fn tcp_enhanced_read_by_hand_as_the_regex_reads_it() {
        let cases = [
            "1/0 0 85K/123 us",
            "1/0 0 85K/123(45) us",
            "1/0 0 85K/123(45)us 1.2 MB",
            "1/0 0 3/85K/123 us",
            "1/0 0 3/85K/123(4 us",
            "1/0 0 3/85K/123() us",
            "1/0 0 3/85/123 us",
            "1/0 0 3/K/123 us",
            "1/0 0 85K/ us",
            "1/0 0 85K/123 u",
            "1/0 085K/123 us",
            "1/00 85K/123 us",
            "/0 0 85K/123 us",
            "1/0\t0\u{b}85K/123\u{c}us",
            "1/0 0 85K/123\u{3000}us",
            "1/0 ٣ 85K/123 us",
            "",
        ];
        let read = read_alike(
            &cases,
            |t| tcp_enhanced(t).map(|c| format!("{c:?}")),
            |t| tcp_enhanced_by_regex(t).map(|c| format!("{c:?}")),
        );
        assert!(read >= 10, "{read}");
    }

    #[test]
    fn udp_latency_read_by_hand_as_the_regex_reads_it() {
        let cases = [
            "1.2/0.5/3.1/0.4 ms",
            "x 1.2/0.5/3.1/0.4 ms",
            "1/2/3/4/5/6 ms",
            "1/2/3/4/5/6ms 7/8/9/10 ms",
            "1.2/0.5/3.1/0.4ms",
            "1.2/0.5/3.1/ ms",
            "1.2//3.1/0.4 ms",
            "a1.2/0.5/3.1/0.4\tms",
            "../././. ms",
            "1.2/0.5/3.1/0.4\u{3000}ms",
            "٣/0.5/3.1/0.4 ms",
            "",
        ];
        let read = read_alike(
            &cases,
            |t| udp_latency(t).map(|l| format!("{l:?}")),
            |t| udp_latency_by_regex(t).map(|l| format!("{l:?}")),
        );
        assert!(read > 10, "{read}");
    }
}
