//! The UDP loss columns iperf 2 and iperf3 print after the rate,
//! `0.012 ms  0/ 8505 (0%)  …`: jitter, lost and total datagrams, loss in percent, and what
//! follows. Read by hand on ASCII text, exactly as the regexes they replaced capture them
//! (each is still here, and decides on other text: its `\d` and `\s` take non-ASCII digits and
//! blanks too); a capture cost several thousand instructions a line, a fifth of a UDP log.

use crate::ingest::common::{blanks, digits, expect, run};

/// The parts of the loss columns, as the regex captures them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpLoss<'a> {
    pub jitter: &'a str,
    pub lost: &'a str,
    pub total: &'a str,
    pub pct: &'a str,
    /// Everything after the loss and the blanks after it (iperf 2's enhanced latency columns).
    pub rest: &'a str,
}

/// Which tool printed the columns: iperf 2 may print a negative lost count (datagrams out of
/// order) and pads the total after the slash; iperf3 does neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printer {
    Iperf2,
    Iperf3,
}

crate::ingest::common::per_thread_regex! {
    static IPERF2 = r"^(?P<jitter>[\d.]+)\s+ms\s+(?P<lost>-?\d+)/\s*(?P<total>\d+)\s+\((?P<pct>[-\d.e+]+|nan)%\)\s*(?P<rest>.*)$";
    static IPERF3 = r"^(?P<jitter>[\d.]+)\s+ms\s+(?P<lost>\d+)/(?P<total>\d+)\s+\((?P<pct>[-\d.e+]+|nan)%\)\s*(?P<rest>.*)$";
}

/// The loss columns at the start of `text`, `None` when it does not start with them.
pub fn udp_loss(text: &str, printer: Printer) -> Option<UdpLoss<'_>> {
    // Non-ASCII text is the regex's to read; so is a line break, which its `.` does not take.
    if !text.bytes().all(|b| b.is_ascii() && b != b'\n') {
        return by_regex(text, printer);
    }
    let b = text.as_bytes();
    let jitter = Some(run(b, 0, |c| c.is_ascii_digit() || c == b'.')).filter(|&e| e > 0)?;
    let at = blanks(b, jitter, 1)?;
    let at = blanks(b, expect(b, at, b"ms")?, 1)?;
    let lost_from = at + usize::from(printer == Printer::Iperf2 && b.get(at) == Some(&b'-'));
    let lost = digits(b, lost_from)?;
    let total_from = expect(b, lost, b"/")?;
    let total_from = match printer {
        Printer::Iperf2 => blanks(b, total_from, 0)?,
        Printer::Iperf3 => total_from,
    };
    let total = digits(b, total_from)?;
    let pct_from = expect(b, blanks(b, total, 1)?, b"(")?;
    // `[-\d.e+]+|nan`: the class's longest run; `nan` only where the run is empty.
    let class = run(b, pct_from, |c| {
        c.is_ascii_digit() || matches!(c, b'-' | b'.' | b'e' | b'+')
    });
    let pct = if class > pct_from {
        class
    } else {
        expect(b, pct_from, b"nan")?
    };
    let rest = blanks(b, expect(b, pct, b"%)")?, 0)?;
    Some(UdpLoss {
        jitter: &text[..jitter],
        lost: &text[at..lost],
        total: &text[total_from..total],
        pct: &text[pct_from..pct],
        rest: &text[rest..],
    })
}

/// The loss columns as the regex of `printer` captures them.
fn by_regex(text: &str, printer: Printer) -> Option<UdpLoss<'_>> {
    let read = |re: &regex::Regex| {
        let c = re.captures(text)?;
        let part = |name: &str| c.name(name).map_or("", |m| m.as_str());
        Some(UdpLoss {
            jitter: part("jitter"),
            lost: part("lost"),
            total: part("total"),
            pct: part("pct"),
            rest: part("rest"),
        })
    };
    match printer {
        Printer::Iperf2 => IPERF2.with(read),
        Printer::Iperf3 => IPERF3.with(read),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand reader answers as the regex does, for both printers, on every fixture line's
    /// columns after its rate and on hand-made edge cases.
    #[test]
    fn read_by_hand_as_the_regexes_read_them() {
        let mut texts: Vec<String> = [
            "0.012 ms  0/ 8505 (0%)",
            "0.012 ms 0/8505 (0%)  1.2/0.5/3.1/0.4 ms  850 pps",
            "0.012 ms -3/ 8505 (-0.035%)",
            "0.012 ms 3/8505 (0.035%)",
            "0.012 ms 3/8505 (nan%)",
            "0.012 ms 3/8505 (1e+02%) ",
            "0.012 ms 3/8505 (na%)",
            "0.012 ms 3/8505 (0%",
            "0.012 ms 3/8505 (%)",
            "0.012 ms 3/8505(0%)",
            "0.012ms 3/8505 (0%)",
            ". ms 3/8505 (0%)",
            "ms 3/8505 (0%)",
            "0.012 ms -/8505 (0%)",
            "0.012 ms --3/8505 (0%)",
            "0.012 ms 3/ (0%)",
            "0.012 ms 3/8505 (0%)\nx",
            "0.012\u{b}ms\u{c}3/\t8505\r(0%)\u{b}rest",
            "0.012 ms 3/8505 (0%)\u{3000}rest",
            "٣ ms 3/8505 (0%)",
            "0.012\u{3000}ms 3/8505 (0%)",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every fixture line with a loss, from each of its words on.
        texts.extend(crate::ingest::fixture_tails_with("%)"));
        let mut read = 0;
        for text in &texts {
            for printer in [Printer::Iperf2, Printer::Iperf3] {
                let want = by_regex(text, printer);
                read += usize::from(want.is_some());
                assert_eq!(udp_loss(text, printer), want, "{text:?} {printer:?}");
            }
        }
        assert!(read > 40, "{read}");
    }
}
