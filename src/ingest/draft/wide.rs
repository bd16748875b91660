//! Eight run-id hashes a step in one AVX-512 register each ([`side_by_side8`]): each lane's
//! multiply chain waits for its last multiply, and a vector multiply advances eight chains in
//! the time a scalar one advances one. Scalar code with eight lanes spilled their states out of
//! the registers and was slower than four; eight lanes here are two registers.
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
pub fn side_by_side8(
    mut hashes: [ContentHash; 8],
    texts: [&[u8]; 8],
    n: usize,
) -> [ContentHash; 8] {
    let texts = texts.map(|t| &t[..n]);
    #[cfg(target_arch = "x86_64")]
    if available() {
        // SAFETY: the CPU has AVX-512 F and DQ, the features `vector` is compiled for.
        unsafe { vector(&mut hashes, texts) };
        return hashes;
    }
    super::side_by_side(hashes, texts, n)
}

/// The eight lanes' `a` and `b` halves in two registers, eight bytes of each text loaded at
/// once and fed to the chains a byte at a time (lowest first, as [`ContentHash::step`] reads
/// them); the bytes after the last whole eight a byte at a time per lane. Every text is as
/// long as the first.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn vector(hashes: &mut [ContentHash; 8], texts: [&[u8]; 8]) {
    use std::arch::x86_64::*;
    let n = texts[0].len();
    let whole = n - n % 8;
    let prime = _mm512_set1_epi64(ContentHash::PRIME as i64);
    let low_byte = _mm512_set1_epi64(0xff);
    let lane = |half: fn(&ContentHash) -> u64| {
        let h = |l: usize| half(&hashes[l]) as i64;
        _mm512_set_epi64(h(7), h(6), h(5), h(4), h(3), h(2), h(1), h(0))
    };
    let (mut a, mut b) = (lane(|h| h.a), lane(|h| h.b));
    for i in (0..whole).step_by(8) {
        let word = |l: usize| {
            let eight: [u8; 8] = texts[l][i..i + 8].try_into().expect("eight bytes");
            i64::from_le_bytes(eight)
        };
        let mut words = _mm512_set_epi64(
            word(7),
            word(6),
            word(5),
            word(4),
            word(3),
            word(2),
            word(1),
            word(0),
        );
        for _ in 0..8 {
            let byte = _mm512_and_si512(words, low_byte);
            a = _mm512_mullo_epi64(_mm512_xor_si512(a, byte), prime);
            b = _mm512_rol_epi64::<5>(_mm512_mullo_epi64(_mm512_xor_si512(b, byte), prime));
            words = _mm512_srli_epi64::<8>(words);
        }
    }
    // SAFETY: a 512-bit register is eight u64 lanes, lowest first.
    let (a, b) = unsafe {
        (
            std::mem::transmute::<__m512i, [u64; 8]>(a),
            std::mem::transmute::<__m512i, [u64; 8]>(b),
        )
    };
    for (l, h) in hashes.iter_mut().enumerate() {
        (h.a, h.b) = (a[l], b[l]);
        h.update(&texts[l][whole..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight lanes of every length around the vector's eight bytes, from hashes already under
    /// way, end where each text hashed alone ends; so does the fallback.
    #[test]
    fn eight_lanes_end_as_each_text_alone() {
        let mut next = crate::ingest::draft::tests::xorshift(0x2545_f491_4f6c_dd1d);
        for n in (0..40).chain([63, 64, 65, 1000, 4099]) {
            let texts: Vec<Vec<u8>> = (0..8)
                .map(|l| (0..n + l * 3).map(|_| next() as u8).collect())
                .collect();
            let mut start = [ContentHash::new(); 8];
            for (l, h) in start.iter_mut().enumerate() {
                h.update(&texts[l][..l]); // under way: each lane from a different state
            }
            let rest: [&[u8]; 8] = std::array::from_fn(|l| &texts[l][l..]);
            let want: Vec<String> = (0..8)
                .map(|l| {
                    let mut h = start[l];
                    h.update(&rest[l][..n]);
                    h.hex()
                })
                .collect();
            let hex = |hs: [ContentHash; 8]| hs.map(|h| h.hex()).to_vec();
            assert_eq!(hex(side_by_side8(start, rest, n)), want, "{n} bytes");
            let fallback = crate::ingest::draft::side_by_side(start, rest, n);
            assert_eq!(hex(fallback), want, "{n} bytes, one at a time");
        }
    }
}
