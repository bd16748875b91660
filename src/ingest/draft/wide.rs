//! Run-id hashes side by side in AVX-512 registers ([`hash_texts`]), eight lanes a register:
//! each lane's multiply chain waits for its last multiply, and a vector multiply advances
//! eight chains in the time a scalar one advances one. Scalar code with eight lanes spilled
//! their states out of the registers and was slower than four.
#![allow(unsafe_code)]

use super::ContentHash;

/// Whether this CPU has the vector multiply [`hash_texts`] uses (AVX-512 F and DQ).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The most lanes [`hash_texts`] runs: four registers of eight. A vector multiply waits some
/// fifteen cycles for the one before it in its chain, and the multiplier takes a new one every
/// few cycles: two registers (sixteen lanes) left it idle half the time; four hash about 1.6
/// times as many bytes a second as two.
pub const MOST_LANES: usize = 32;

/// The hashes of `texts`, each the [`ContentHash`] of that text alone, worked out side by
/// side in vector registers where [`available`]. A lane whose text ends takes the next text
/// not yet started, so every lane has text until the last ones; then the width narrows a
/// register at a time, and the last few lanes end one at a time.
pub fn hash_texts(texts: &[&[u8]]) -> Vec<ContentHash> {
    let mut lanes = Lanes::new(texts, MOST_LANES);
    #[cfg(target_arch = "x86_64")]
    if available() {
        // SAFETY: the CPU has AVX-512 F and DQ, the features `run` is compiled for.
        unsafe {
            lanes.run::<32, 4>();
            lanes.run::<24, 3>();
            lanes.run::<16, 2>();
            lanes.run::<8, 1>();
        }
    }
    lanes.finish_alone()
}

/// The lanes of [`hash_texts`]: lanes `..active` each hash one text, lane `l` text
/// `text[l]`, of which `rest[l]` is left.
struct Lanes<'t> {
    texts: &'t [&'t [u8]],
    /// The first text no lane has taken yet.
    next: usize,
    out: Vec<ContentHash>,
    active: usize,
    text: [usize; MOST_LANES],
    rest: [&'t [u8]; MOST_LANES],
    /// The halves of the lanes' hashes, each half of every lane in a row: a vector register
    /// loads eight lanes' at once.
    a: [u64; MOST_LANES],
    b: [u64; MOST_LANES],
}

impl<'t> Lanes<'t> {
    /// The first `width` texts in lanes (at most [`MOST_LANES`]).
    fn new(texts: &'t [&'t [u8]], width: usize) -> Lanes<'t> {
        let active = texts.len().min(width).min(MOST_LANES);
        let start = ContentHash::new();
        Lanes {
            texts,
            next: active,
            out: vec![start; texts.len()],
            active,
            text: std::array::from_fn(|l| l),
            rest: std::array::from_fn(|l| texts.get(l).copied().unwrap_or_default()),
            a: [start.a; MOST_LANES],
            b: [start.b; MOST_LANES],
        }
    }

    /// Lane `l`'s hash so far.
    fn hash(&self, l: usize) -> ContentHash {
        ContentHash {
            a: self.a[l],
            b: self.b[l],
        }
    }

    /// Lane `l`'s text to its end, a byte at a time, and its hash given.
    fn end_text(&mut self, l: usize) {
        let mut hash = self.hash(l);
        hash.update(self.rest[l]);
        self.out[self.text[l]] = hash;
    }

    /// Lanes with fewer than eight bytes left (a vector step takes eight) end their text a
    /// byte at a time and take the next; when no text is left, the last active lane moves
    /// into the ended one's place, so the active lanes stay the first.
    fn refill(&mut self) {
        let mut l = 0;
        while l < self.active {
            if self.rest[l].len() >= 8 {
                l += 1;
                continue;
            }
            self.end_text(l);
            let (text, rest, hash) = if self.next < self.texts.len() {
                let k = self.next;
                self.next += 1;
                (k, self.texts[k], ContentHash::new())
            } else {
                self.active -= 1;
                let last = self.active;
                (self.text[last], self.rest[last], self.hash(last))
            };
            (self.text[l], self.rest[l], self.a[l], self.b[l]) = (text, rest, hash.a, hash.b);
        }
    }

    /// Runs `L` lanes (`S` registers of eight) until every text has been taken and the active
    /// lanes fit in one register less; at eight lanes, until four are left (one register
    /// for four lanes hashes fewer bytes a second than a chain alone). Lanes past the active
    /// ones repeat lane 0's bytes, and their hashes are never read. Between two texts' ends
    /// the lanes' states stay in the registers, eight bytes of each text loaded at once and
    /// fed to the chains a byte at a time (lowest first, as [`ContentHash::step`] reads them).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn run<const L: usize, const S: usize>(&mut self) {
        use std::arch::x86_64::*;
        const { assert!(L == 8 * S && L <= MOST_LANES) };
        debug_assert!(
            self.active <= L,
            "more lanes active than the registers hold"
        );
        let keep = if L == 8 { 4 } else { L - 8 };
        let prime = _mm512_set1_epi64(ContentHash::PRIME as i64);
        let low_byte = _mm512_set1_epi64(0xff);
        loop {
            self.refill();
            if self.next == self.texts.len() && self.active <= keep {
                return;
            }
            let active = self.active;
            let n = self.rest[..active]
                .iter()
                .map(|t| t.len())
                .min()
                .unwrap_or(0)
                / 8
                * 8;
            let texts: [&[u8]; L] =
                std::array::from_fn(|l| &self.rest[if l < active { l } else { 0 }][..n]);
            // SAFETY (every load and store below): eight u64 at `8 * s`, within the
            // `MOST_LANES` of the arrays (`8 * S <= MOST_LANES`).
            let load = |half: &[u64; MOST_LANES], s: usize| unsafe {
                _mm512_loadu_si512(half.as_ptr().add(8 * s).cast())
            };
            let mut a: [__m512i; S] = std::array::from_fn(|s| load(&self.a, s));
            let mut b: [__m512i; S] = std::array::from_fn(|s| load(&self.b, s));
            for i in (0..n).step_by(8) {
                let mut words: [__m512i; S] = std::array::from_fn(|s| {
                    let w = |l: usize| {
                        let bytes: [u8; 8] = texts[8 * s + l][i..i + 8].try_into().expect("8");
                        i64::from_le_bytes(bytes)
                    };
                    _mm512_set_epi64(w(7), w(6), w(5), w(4), w(3), w(2), w(1), w(0))
                });
                for _ in 0..8 {
                    for s in 0..S {
                        let byte = _mm512_and_si512(words[s], low_byte);
                        a[s] = _mm512_mullo_epi64(_mm512_xor_si512(a[s], byte), prime);
                        b[s] = _mm512_rol_epi64::<5>(_mm512_mullo_epi64(
                            _mm512_xor_si512(b[s], byte),
                            prime,
                        ));
                        words[s] = _mm512_srli_epi64::<8>(words[s]);
                    }
                }
            }
            for s in 0..S {
                unsafe {
                    _mm512_storeu_si512(self.a.as_mut_ptr().add(8 * s).cast(), a[s]);
                    _mm512_storeu_si512(self.b.as_mut_ptr().add(8 * s).cast(), b[s]);
                }
            }
            for rest in &mut self.rest[..active] {
                *rest = &rest[n..];
            }
        }
    }

    /// Each active lane's text to its end, then every text no lane took, a chain each.
    fn finish_alone(mut self) -> Vec<ContentHash> {
        for l in 0..self.active {
            self.end_text(l);
        }
        for k in self.next..self.texts.len() {
            let mut hash = ContentHash::new();
            hash.update(self.texts[k]);
            self.out[k] = hash;
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::draft::tests::xorshift;

    fn hex(hs: &[ContentHash]) -> Vec<String> {
        hs.iter().map(ContentHash::hex).collect()
    }

    /// `L` lanes alone (`S` registers) end as each text hashed alone: as many texts as lanes,
    /// twice as many (lanes that take a next text), of every length around eight bytes.
    #[cfg(target_arch = "x86_64")]
    fn width_hashes_as_alone<const L: usize, const S: usize>() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for n in (0..40).chain([63, 64, 65, 1000, 4099]) {
            let texts: Vec<Vec<u8>> = (0..2 * L)
                .map(|l| (0..n + l).map(|_| next() as u8).collect())
                .collect();
            let refs: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
            for count in [L, 2 * L] {
                let mut lanes = Lanes::new(&refs[..count], L);
                // SAFETY: only where the CPU has the features `run` is compiled for.
                unsafe { lanes.run::<L, S>() };
                assert_eq!(
                    hex(&lanes.finish_alone()),
                    alone(&refs[..count]),
                    "{n} bytes, {L} lanes"
                );
            }
        }
    }

    fn alone(texts: &[&[u8]]) -> Vec<String> {
        texts
            .iter()
            .map(|t| {
                let mut h = ContentHash::new();
                h.update(t);
                h.hex()
            })
            .collect()
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_width_hashes_as_alone() {
        if !available() {
            return; // no AVX-512 here: `hash_texts` hashes a chain at a time (tested below)
        }
        width_hashes_as_alone::<8, 1>();
        width_hashes_as_alone::<16, 2>();
        width_hashes_as_alone::<24, 3>();
        width_hashes_as_alone::<32, 4>();
    }

    /// Texts of every count around the widths (lanes that take a next text, the width that
    /// narrows, lanes left to end alone) and of every length around eight bytes each hash as
    /// alone.
    #[test]
    fn texts_side_by_side_hash_as_alone() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for count in (0..70).chain([100, 257]) {
            let texts: Vec<Vec<u8>> = (0..count)
                .map(|k| {
                    let len = match k % 4 {
                        0 => (next() % 20) as usize,
                        1 => (next() % 200) as usize,
                        _ => (next() % 3000) as usize,
                    };
                    (0..len).map(|_| next() as u8).collect()
                })
                .collect();
            let refs: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
            assert_eq!(hex(&hash_texts(&refs)), alone(&refs), "{count} texts");
        }
    }
}
