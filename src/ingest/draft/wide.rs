//! Run-id hashes side by side in vector registers ([`hash_texts`]): each lane's multiply chain
//! waits for its last multiply, and a vector multiply advances a register's chains in the time
//! a scalar one advances one. With AVX-512 a register holds eight lanes and multiplies 64-bit
//! words; with AVX2 alone it holds four, and the multiply by the prime is put together from
//! 32-bit ones ([`Lanes::run_avx2`]). Scalar code with eight lanes spilled their states out of
//! the registers and was slower than four.
#![allow(unsafe_code)]

use super::ContentHash;

/// The vector instructions [`hash_texts`] uses on this CPU, if any.
// Elsewhere than on x86-64 no variant is made: `vector` finds none.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vector {
    /// AVX-512 F and DQ: eight lanes a register, a 64-bit multiply.
    Avx512,
    /// AVX2: four lanes a register, the 64-bit multiply from 32-bit ones.
    Avx2,
}

fn vector() -> Option<Vector> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
        {
            return Some(Vector::Avx512);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Some(Vector::Avx2);
        }
    }
    None
}

/// Whether this CPU has vector instructions [`hash_texts`] uses (AVX-512 F and DQ, or AVX2).
pub fn available() -> bool {
    vector().is_some()
}

/// The most lanes [`hash_texts`] runs: four AVX-512 registers of eight. A vector multiply waits
/// some fifteen cycles for the one before it in its chain, and the multiplier takes a new one
/// every few cycles: two registers (sixteen lanes) left it idle half the time; four hash about
/// 1.6 times as many bytes a second as two.
pub const MOST_LANES: usize = 32;

/// The most lanes [`hash_texts`] runs with AVX2 alone: three registers of four. Their states
/// (two halves) and words take nine of its sixteen vector registers, the constants and the
/// multiply's intermediates most of the rest (four registers of lanes were not tried: their
/// twelve registers would leave four for those).
const AVX2_LANES: usize = 12;

/// The hashes of `texts`, each the [`ContentHash`] of that text alone, worked out side by
/// side in vector registers where [`available`]. A lane whose text ends takes the next text
/// not yet started, so every lane has text until the last ones; then the width narrows a
/// register at a time, and the last few lanes end one at a time.
pub fn hash_texts(texts: &[&[u8]]) -> Vec<ContentHash> {
    let vector = vector();
    // The widest step's lanes: AVX2's sixteen registers hold twelve lanes' states and words.
    let width = match vector {
        Some(Vector::Avx2) => AVX2_LANES,
        _ => MOST_LANES,
    };
    let mut lanes = Lanes::new(texts, width);
    #[cfg(target_arch = "x86_64")]
    match vector {
        // SAFETY: the CPU has AVX-512 F and DQ, the features `run` is compiled for.
        Some(Vector::Avx512) => unsafe {
            lanes.run::<32, 4>();
            lanes.run::<24, 3>();
            lanes.run::<16, 2>();
            lanes.run::<8, 1>();
        },
        // SAFETY: the CPU has AVX2, the feature `run_avx2` is compiled for.
        Some(Vector::Avx2) => unsafe {
            lanes.run_avx2::<AVX2_LANES, 3>();
            lanes.run_avx2::<8, 2>();
            lanes.run_avx2::<4, 1>();
        },
        None => {}
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

    /// The next stretch every active lane hashes side by side, at most `L` lanes, once lanes
    /// near their texts' ends have taken their next ones ([`Lanes::refill`]): how many lanes
    /// are active, how many bytes (the fewest any active lane has left, whole words of eight),
    /// and each lane's bytes (lanes past the active ones repeat lane 0's, and their hashes are
    /// never read). `None` once every text has been taken and at most `keep` lanes are active:
    /// fewer would leave a register's lanes idle, and the caller's narrower step takes over.
    fn stretch<const L: usize>(&mut self, keep: usize) -> Option<(usize, usize, [&'t [u8]; L])> {
        self.refill();
        if self.next == self.texts.len() && self.active <= keep {
            return None;
        }
        let active = self.active;
        debug_assert!(active <= L, "more lanes active than the registers hold");
        let n = self.rest[..active]
            .iter()
            .map(|t| t.len())
            .min()
            .unwrap_or(0)
            / 8
            * 8;
        let texts = std::array::from_fn(|l| &self.rest[if l < active { l } else { 0 }][..n]);
        Some((active, n, texts))
    }

    /// Each active lane's text on by the `n` bytes its hash has taken in.
    fn advance(&mut self, active: usize, n: usize) {
        for rest in &mut self.rest[..active] {
            *rest = &rest[n..];
        }
    }

    /// Runs `L` lanes (`S` registers of eight) until every text has been taken and the active
    /// lanes fit in one register less; at eight lanes, until four are left (one register
    /// for four lanes hashes fewer bytes a second than a chain alone). Between two texts' ends
    /// the lanes' states stay in the registers, eight bytes of each text loaded at once and
    /// fed to the chains a byte at a time (lowest first, as [`ContentHash::step`] reads them).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn run<const L: usize, const S: usize>(&mut self) {
        use std::arch::x86_64::*;
        const { assert!(L == 8 * S && L <= MOST_LANES) };
        let keep = if L == 8 { 4 } else { L - 8 };
        let prime = _mm512_set1_epi64(ContentHash::PRIME as i64);
        let low_byte = _mm512_set1_epi64(0xff);
        while let Some((active, n, texts)) = self.stretch::<L>(keep) {
            // SAFETY (every load and store below): eight u64 at `8 * s`, within the
            // `MOST_LANES` of the arrays (`8 * S <= MOST_LANES`).
            let load = |half: &[u64; MOST_LANES], s: usize| unsafe {
                _mm512_loadu_si512(half.as_ptr().add(8 * s).cast())
            };
            let mut a: [__m512i; S] = std::array::from_fn(|s| load(&self.a, s));
            let mut b: [__m512i; S] = std::array::from_fn(|s| load(&self.b, s));
            for i in (0..n).step_by(8) {
                let mut words: [__m512i; S] = std::array::from_fn(|s| {
                    let w = |l: usize| word_at(texts[8 * s + l], i);
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
            self.advance(active, n);
        }
    }

    /// [`Lanes::run`] with AVX2: `L` lanes in `S` registers of four. AVX2 has no 64-bit
    /// multiply, so `x * PRIME` (`PRIME` = 2^40 + 435) is put together from 32-bit ones
    /// ([`mul_prime_avx2`]). Runs until every text has been taken and the active lanes fit in
    /// one register less; at four lanes, until two are left (by the instructions' latencies, a
    /// register's chain waits about twice as long a byte as a scalar chain: two lanes in it
    /// would hash no faster than one alone).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2<const L: usize, const S: usize>(&mut self) {
        use std::arch::x86_64::*;
        const { assert!(L == 4 * S && L <= MOST_LANES) };
        let keep = if L == 4 { 2 } else { L - 4 };
        let low_byte = _mm256_set1_epi64x(0xff);
        while let Some((active, n, texts)) = self.stretch::<L>(keep) {
            // SAFETY (every load and store below): four u64 at `4 * s`, within the
            // `MOST_LANES` of the arrays (`4 * S <= MOST_LANES`).
            let load = |half: &[u64; MOST_LANES], s: usize| unsafe {
                _mm256_loadu_si256(half.as_ptr().add(4 * s).cast())
            };
            let mut a: [__m256i; S] = std::array::from_fn(|s| load(&self.a, s));
            let mut b: [__m256i; S] = std::array::from_fn(|s| load(&self.b, s));
            for i in (0..n).step_by(8) {
                let mut words: [__m256i; S] = std::array::from_fn(|s| {
                    let w = |l: usize| word_at(texts[4 * s + l], i);
                    _mm256_set_epi64x(w(3), w(2), w(1), w(0))
                });
                for _ in 0..8 {
                    for s in 0..S {
                        let byte = _mm256_and_si256(words[s], low_byte);
                        a[s] = mul_prime_avx2(_mm256_xor_si256(a[s], byte));
                        let m = mul_prime_avx2(_mm256_xor_si256(b[s], byte));
                        // Rotated left by five: AVX2 has no rotate.
                        b[s] =
                            _mm256_or_si256(_mm256_slli_epi64::<5>(m), _mm256_srli_epi64::<59>(m));
                        words[s] = _mm256_srli_epi64::<8>(words[s]);
                    }
                }
            }
            for s in 0..S {
                unsafe {
                    _mm256_storeu_si256(self.a.as_mut_ptr().add(4 * s).cast(), a[s]);
                    _mm256_storeu_si256(self.b.as_mut_ptr().add(4 * s).cast(), b[s]);
                }
            }
            self.advance(active, n);
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

/// The eight bytes of `text` from `i` as one word, the first the lowest.
#[inline(always)]
fn word_at(text: &[u8], i: usize) -> i64 {
    let bytes: [u8; 8] = text[i..i + 8].try_into().expect("eight bytes");
    i64::from_le_bytes(bytes)
}

/// `x * PRIME` in each 64-bit lane (`PRIME` = 2^40 + 435), from AVX2's 32 × 32 → 64-bit
/// multiply. With `x = hi·2^32 + lo`, modulo 2^64: `x·2^40 = lo·2^40` and
/// `x·435 = lo·435 + (hi·435)·2^32`, so `x·PRIME = lo·435 + (hi·435 + lo·2^8)·2^32`, where only
/// the low 32 bits of the bracket count: `x << 8` gives them for `lo·2^8`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mul_prime_avx2(x: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    const LOW: i64 = (ContentHash::PRIME & 0xffff_ffff) as i64;
    const { assert!(ContentHash::PRIME == (1 << 40) + LOW as u64) };
    let low = _mm256_set1_epi64x(LOW);
    let lo_part = _mm256_mul_epu32(x, low);
    let hi_part = _mm256_add_epi64(
        _mm256_mul_epu32(_mm256_srli_epi64::<32>(x), low),
        _mm256_slli_epi64::<8>(x),
    );
    _mm256_add_epi64(lo_part, _mm256_slli_epi64::<32>(hi_part))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::draft::tests::xorshift;

    fn hex(hs: &[ContentHash]) -> Vec<String> {
        hs.iter().map(ContentHash::hex).collect()
    }

    /// `L` lanes alone, run by `run`, end as each text hashed alone: as many texts as lanes,
    /// twice as many (lanes that take a next text), of every length around eight bytes.
    #[cfg(target_arch = "x86_64")]
    fn width_hashes_as_alone<const L: usize>(run: impl Fn(&mut Lanes)) {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for n in (0..40).chain([63, 64, 65, 1000, 4099]) {
            let texts: Vec<Vec<u8>> = (0..2 * L)
                .map(|l| (0..n + l).map(|_| next() as u8).collect())
                .collect();
            let refs: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
            for count in [L, 2 * L] {
                let mut lanes = Lanes::new(&refs[..count], L);
                run(&mut lanes);
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
        if vector() != Some(Vector::Avx512) {
            return; // no AVX-512 here: the AVX2 widths are tested below
        }
        // SAFETY (each run): the CPU has AVX-512 F and DQ, the features `run` is compiled for.
        width_hashes_as_alone::<8>(|l| unsafe { l.run::<8, 1>() });
        width_hashes_as_alone::<16>(|l| unsafe { l.run::<16, 2>() });
        width_hashes_as_alone::<24>(|l| unsafe { l.run::<24, 3>() });
        width_hashes_as_alone::<32>(|l| unsafe { l.run::<32, 4>() });
    }

    /// The AVX2 widths, where the CPU has AVX2 (with or without AVX-512).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_avx2_width_hashes_as_alone() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return; // no AVX2 here: `hash_texts` hashes a chain at a time (tested below)
        }
        // SAFETY (each run): the CPU has AVX2, the feature `run_avx2` is compiled for.
        width_hashes_as_alone::<4>(|l| unsafe { l.run_avx2::<4, 1>() });
        width_hashes_as_alone::<8>(|l| unsafe { l.run_avx2::<8, 2>() });
        width_hashes_as_alone::<12>(|l| unsafe { l.run_avx2::<12, 3>() });
    }

    /// The multiply put together from 32-bit ones is the 64-bit multiply, for words whose
    /// halves carry into each other and for random ones.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_multiply_is_the_prime_multiply() {
        use std::arch::x86_64::*;
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut next = xorshift(0x0123_4567_89ab_cdef);
        let edges = [0, 1, u64::MAX, 0xffff_ffff, 1 << 32, (1 << 24) - 1, 1 << 63];
        let words: Vec<u64> = edges.into_iter().chain((0..4000).map(|_| next())).collect();
        for w in words.chunks(4).filter(|w| w.len() == 4) {
            let mut out = [0u64; 4];
            // SAFETY: the CPU has AVX2; four u64 loaded from and stored to arrays of four.
            unsafe {
                let x = _mm256_loadu_si256(w.as_ptr().cast());
                _mm256_storeu_si256(out.as_mut_ptr().cast(), mul_prime_avx2(x));
            }
            let want: Vec<u64> = w
                .iter()
                .map(|x| x.wrapping_mul(ContentHash::PRIME))
                .collect();
            assert_eq!(out.to_vec(), want, "{w:x?}");
        }
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
