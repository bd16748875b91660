//! Run-id hashes eight a step in one AVX-512 register each ([`side_by_side8`]), or sixteen in
//! two ([`side_by_side16`]): each lane's multiply chain waits for its last multiply, and a
//! vector multiply advances eight chains in the time a scalar one advances one. Scalar code
//! with eight lanes spilled their states out of the registers and was slower than four.
#![allow(unsafe_code)]

use super::ContentHash;

/// Whether this CPU has the vector multiply [`side_by_side8`] uses (AVX-512 F and DQ).
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

/// `hashes[l]` on with the first `n` bytes of `texts[l]`: in vector registers where
/// [`available`], else a byte at a time per lane as [`super::side_by_side`] does.
pub fn side_by_side8(hashes: [ContentHash; 8], texts: [&[u8]; 8], n: usize) -> [ContentHash; 8] {
    side_by_side_wide::<8, 1>(hashes, texts, n)
}

/// [`side_by_side8`] for sixteen lanes, in two sets of registers: a vector multiply waits for
/// the one before it in its chain, and two chains a half keep the multiplier busy while one
/// waits (sixteen texts in about the time of eight).
pub fn side_by_side16(
    hashes: [ContentHash; 16],
    texts: [&[u8]; 16],
    n: usize,
) -> [ContentHash; 16] {
    side_by_side_wide::<16, 2>(hashes, texts, n)
}

/// `L` lanes (`S` sets of eight) on with `n` bytes each.
fn side_by_side_wide<const L: usize, const S: usize>(
    mut hashes: [ContentHash; L],
    texts: [&[u8]; L],
    n: usize,
) -> [ContentHash; L] {
    let texts = texts.map(|t| &t[..n]);
    #[cfg(target_arch = "x86_64")]
    if available() {
        // SAFETY: the CPU has AVX-512 F and DQ, the features `vector` is compiled for.
        unsafe { vector::<L, S>(&mut hashes, texts) };
        return hashes;
    }
    super::side_by_side(hashes, texts, n)
}

/// The lanes' `a` and `b` halves in two registers a set of eight (`S` sets, `L` = 8 × `S`
/// lanes), eight bytes of each text loaded at once and fed to the chains a byte at a time
/// (lowest first, as [`ContentHash::step`] reads them); the bytes after the last whole eight a
/// byte at a time per lane. Every text is as long as the first.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn vector<const L: usize, const S: usize>(hashes: &mut [ContentHash; L], texts: [&[u8]; L]) {
    use std::arch::x86_64::*;
    const { assert!(L == 8 * S) };
    let n = texts[0].len();
    let whole = n - n % 8;
    let prime = _mm512_set1_epi64(ContentHash::PRIME as i64);
    let low_byte = _mm512_set1_epi64(0xff);
    let eight = |set: usize, get: &dyn Fn(usize) -> i64| {
        let g = |l: usize| get(8 * set + l);
        _mm512_set_epi64(g(7), g(6), g(5), g(4), g(3), g(2), g(1), g(0))
    };
    let mut a: [__m512i; S] = std::array::from_fn(|set| eight(set, &|l| hashes[l].a as i64));
    let mut b: [__m512i; S] = std::array::from_fn(|set| eight(set, &|l| hashes[l].b as i64));
    for i in (0..whole).step_by(8) {
        let word = |l: usize| {
            let bytes: [u8; 8] = texts[l][i..i + 8].try_into().expect("eight bytes");
            i64::from_le_bytes(bytes)
        };
        let mut words: [__m512i; S] = std::array::from_fn(|set| eight(set, &word));
        for _ in 0..8 {
            for set in 0..S {
                let byte = _mm512_and_si512(words[set], low_byte);
                a[set] = _mm512_mullo_epi64(_mm512_xor_si512(a[set], byte), prime);
                b[set] = _mm512_rol_epi64::<5>(_mm512_mullo_epi64(
                    _mm512_xor_si512(b[set], byte),
                    prime,
                ));
                words[set] = _mm512_srli_epi64::<8>(words[set]);
            }
        }
    }
    for set in 0..S {
        // SAFETY: a 512-bit register is eight u64 lanes, lowest first.
        let (a, b) = unsafe {
            (
                std::mem::transmute::<__m512i, [u64; 8]>(a[set]),
                std::mem::transmute::<__m512i, [u64; 8]>(b[set]),
            )
        };
        for l in 0..8 {
            let h = &mut hashes[8 * set + l];
            (h.a, h.b) = (a[l], b[l]);
            h.update(&texts[8 * set + l][whole..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight and sixteen lanes of every length around the vector's eight bytes, from hashes
    /// already under way, end where each text hashed alone ends; so does the fallback.
    #[test]
    fn eight_lanes_end_as_each_text_alone() {
        let mut next = crate::ingest::draft::tests::xorshift(0x2545_f491_4f6c_dd1d);
        for n in (0..40).chain([63, 64, 65, 1000, 4099]) {
            let texts: Vec<Vec<u8>> = (0..16)
                .map(|l| (0..n + l * 3).map(|_| next() as u8).collect())
                .collect();
            let mut start = [ContentHash::new(); 16];
            for (l, h) in start.iter_mut().enumerate() {
                h.update(&texts[l][..l]); // under way: each lane from a different state
            }
            let rest: [&[u8]; 16] = std::array::from_fn(|l| &texts[l][l..]);
            let want: Vec<String> = (0..16)
                .map(|l| {
                    let mut h = start[l];
                    h.update(&rest[l][..n]);
                    h.hex()
                })
                .collect();
            let hex = |hs: &[ContentHash]| hs.iter().map(|h| h.hex()).collect::<Vec<_>>();
            let start8: [ContentHash; 8] = std::array::from_fn(|l| start[l]);
            let rest8: [&[u8]; 8] = std::array::from_fn(|l| rest[l]);
            assert_eq!(
                hex(&side_by_side8(start8, rest8, n)),
                want[..8],
                "{n} bytes"
            );
            assert_eq!(
                hex(&side_by_side16(start, rest, n)),
                want,
                "{n} bytes, 16 lanes"
            );
            let fallback = crate::ingest::draft::side_by_side(start, rest, n);
            assert_eq!(hex(&fallback), want, "{n} bytes, one at a time");
        }
    }
}
