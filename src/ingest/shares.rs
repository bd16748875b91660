//! Work over `0..len` cut into contiguous shares, one per thread, the results in order: the
//! first pass over a large file ([`super::stream::plan`]), which every piece of it waits for,
//! looks for prompts on the cores the pieces will use.

use std::ops::Range;

/// `work` of each share of `0..len`, on up to `threads` scoped threads (the calling thread
/// takes the first share), in the shares' order. One share, on the calling thread, when
/// `threads` is 1 or `len` too small to share.
pub fn in_shares<T: Send>(
    len: usize,
    threads: usize,
    work: impl Fn(Range<usize>) -> T + Sync,
) -> Vec<T> {
    let threads = threads.clamp(1, len.max(1));
    if threads == 1 {
        return vec![work(0..len)];
    }
    let share = len.div_ceil(threads);
    let work = &work;
    std::thread::scope(|scope| {
        let others: Vec<_> = (share..len)
            .step_by(share)
            .map(|start| scope.spawn(move || work(start..(start + share).min(len))))
            .collect();
        let mut out = vec![work(0..share)];
        // A panic in a share is the caller's, as it would be on one thread.
        out.extend(
            others
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
        );
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_index_once_in_order() {
        for len in [0, 1, 2, 5, 16, 17, 1000] {
            for threads in [1, 2, 3, 8, 2000] {
                let shares = in_shares(len, threads, |r| r.collect::<Vec<_>>());
                assert!(shares.len() <= threads.max(1), "{len} {threads}");
                let all: Vec<usize> = shares.into_iter().flatten().collect();
                assert_eq!(all, (0..len).collect::<Vec<_>>(), "{len} {threads}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "share 1")]
    fn a_panic_in_a_share_reaches_the_caller() {
        in_shares(10, 2, |r| assert!(r.start == 0, "share {}", r.start / 5));
    }
}
