//! The rate maths of the native runner, free of any device: work-request ids, ping-pong
//! markers, the windowed peak and bandwidth over time from completion events. Always built,
//! so its tests run without the `verbs` feature.

use super::record::Interval;

pub const SEQ_BITS: u32 = 40;

pub const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

pub fn wr_id(qp: usize, seq: u64) -> u64 {
    ((qp as u64) << SEQ_BITS) | seq
}

pub fn split_wr_id(id: u64) -> (usize, u64) {
    ((id >> SEQ_BITS) as usize, id & SEQ_MASK)
}

/// The ping-pong marker of iteration `i`: never 0, different from the previous one.
pub fn marker(i: u64) -> u8 {
    (i % 255) as u8 + 1
}

/// The best rate over windows of at least 1 ms (and 1 % of the run), so one early completion
/// batch cannot pass for the link's peak.
pub fn peak_gbps(events: &[(f64, u64)], elapsed: f64) -> Option<f64> {
    let window = (elapsed / 100.0).max(1e-3);
    let (mut start, mut bytes, mut best) = (0.0, 0u64, None::<f64>);
    for &(t, b) in events {
        bytes += b;
        // The tolerance keeps float noise in completion times from merging two windows.
        if t - start >= window * (1.0 - 1e-9) {
            let rate = bytes as f64 * 8.0 / (t - start) / 1e9;
            best = Some(best.map_or(rate, |x: f64| x.max(rate)));
            start = t;
            bytes = 0;
        }
    }
    best
}

/// Bytes completed per `step` seconds, from completion events.
pub fn intervals(events: &[(f64, u64)], step: f64, elapsed: f64) -> Vec<Interval> {
    let n = (elapsed / step).ceil().max(1.0) as usize;
    let mut out: Vec<Interval> = (0..n)
        .map(|i| Interval {
            start_s: i as f64 * step,
            end_s: ((i + 1) as f64 * step).min(elapsed.max(step * i as f64)),
            bytes: 0,
        })
        .collect();
    for &(t, b) in events {
        let i = ((t / step) as usize).min(n - 1);
        out[i].bytes += b;
    }
    // A last slice much shorter than a step holds only the drain of the requests in flight at
    // the deadline; alone it would show a burst rate the link never ran at.
    if out.len() >= 2 && out[n - 1].end_s - out[n - 1].start_s < step / 2.0 {
        let last = out.pop().expect("two slices");
        let prev = out.last_mut().expect("one slice");
        prev.end_s = last.end_s;
        prev.bytes += last.bytes;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_request_ids_keep_qp_and_sequence() {
        assert_eq!(split_wr_id(wr_id(3, 12345)), (3, 12345));
        assert_eq!(split_wr_id(wr_id(0, SEQ_MASK)), (0, SEQ_MASK));
    }

    #[test]
    fn markers_never_repeat_back_to_back_and_are_never_zero() {
        for i in 0..1000 {
            assert_ne!(marker(i), 0);
            assert_ne!(marker(i), marker(i + 1));
        }
    }

    #[test]
    fn peak_uses_windows_and_intervals_sum_to_the_total() {
        // 1 MB per ms for 10 ms, then one 5 MB burst in a single ms.
        let mut ev: Vec<(f64, u64)> = (1..=10).map(|i| (i as f64 * 1e-3, 1_000_000)).collect();
        ev.push((11e-3, 5_000_000));
        let peak = peak_gbps(&ev, 11e-3).unwrap();
        assert!((peak - 40.0).abs() < 1e-6, "{peak}");
        let iv = intervals(&ev, 5e-3, 11e-3);
        // [0, 5) ms, then [5, 11] ms: the 1 ms tail joins the slice before it.
        assert_eq!(iv.len(), 2);
        assert_eq!(iv.iter().map(|i| i.bytes).sum::<u64>(), 15_000_000);
        assert!((iv[1].end_s - 11e-3).abs() < 1e-12);
        assert_eq!(intervals(&ev, 4e-3, 11e-3).len(), 3);
    }
}
