//! The newlines of a text, found 64 bytes at a time. `memchr`'s search is made for long
//! stretches between matches; a log's lines are a few dozen bytes, and one search a line took
//! 108 instructions a line on the seeds, most of them starting and ending the search. Here a
//! 64-byte block gives one mask of its newlines, and every newline in it is one bit.
#![allow(unsafe_code)]

/// Calls `found` with the offset of every `\n` in `bytes`, in order.
#[inline]
pub fn each(bytes: &[u8], mut found: impl FnMut(usize)) {
    let mut base = 0;
    #[cfg(target_arch = "x86_64")]
    for block in bytes.chunks_exact(64) {
        let mut mask = mask(block.try_into().expect("a block of 64 bytes"));
        while mask != 0 {
            found(base + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
        base += 64;
    }
    for at in memchr::memchr_iter(b'\n', &bytes[base..]) {
        found(base + at);
    }
}

/// Bit `i` set where `block[i]` is a newline (SSE2, which every x86-64 CPU has).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn mask(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let mut mask = 0;
    // SAFETY: SSE2 is part of x86-64 (the intrinsics ask for it all the same); each load
    // reads the 16 bytes from `16 * k`, within the 64 of `block`, unaligned.
    unsafe {
        let newline = _mm_set1_epi8(b'\n' as i8);
        for k in 0..4 {
            let bytes = _mm_loadu_si128(block.as_ptr().add(16 * k).cast());
            // The sixteen bits of a 16-byte compare, the rest of the `i32` zero.
            let bits = _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, newline)) as u32;
            mask |= u64::from(bits) << (16 * k);
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    /// The offsets `memchr` finds, for texts of every length up to three blocks and a half
    /// with newlines at every place, and for the fixtures' texts.
    #[test]
    fn finds_what_memchr_finds() {
        let check = |bytes: &[u8]| {
            let mut got = Vec::new();
            super::each(bytes, |at| got.push(at));
            let want: Vec<usize> = memchr::memchr_iter(b'\n', bytes).collect();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(bytes));
        };
        for len in 0..224 {
            check(&vec![b'\n'; len]);
            check(&vec![b'x'; len]);
            for at in 0..len {
                let mut bytes = vec![b'x'; len];
                bytes[at] = b'\n';
                check(&bytes);
                // 0x8a has the newline's low bits; 0x0b is one past it.
                bytes[(at * 7) % len] = 0x8a;
                bytes[(at * 3) % len] = 0x0b;
                check(&bytes);
            }
        }
        let mut seen = 0;
        for dir in ["fixtures/seeds", "fixtures/iperf2", "fixtures/iperf3"] {
            for entry in std::fs::read_dir(dir).expect("a fixture folder") {
                let path = entry.expect("an entry").path();
                if path.is_file() {
                    check(&std::fs::read(&path).expect("a fixture"));
                    seen += 1;
                }
            }
        }
        assert!(seen > 10, "{seen} fixtures");
    }
}
