//! The binary's allocator: mimalloc, asked for plain blocks when the alignment is one every
//! block has.
//!
//! The `mimalloc` crate's allocator asks for every block through `mi_malloc_aligned`, which
//! checks the alignment before taking the same fast path `mi_malloc` takes: 2 % of an import's
//! time (a string or map node per value and per row). A block from `mi_malloc` is aligned to
//! [`PLAIN`] bytes, so only larger alignments need the aligned calls.
#![allow(unsafe_code)]

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The alignment of every block of at least this size `mi_malloc` returns on 64-bit targets
/// (`MI_MAX_ALIGN_SIZE`).
const PLAIN: usize = 16;

/// Whether a plain block of `size` bytes has alignment `align`.
#[inline]
fn plain(size: usize, align: usize) -> bool {
    align <= PLAIN && align <= size
}

pub struct MiMalloc;

// SAFETY: each method hands the layout's size, and its alignment unless a plain block has it,
// to the mimalloc call that honours them, and frees only blocks mimalloc returned.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(layout.size(), layout.align()) {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(layout.size(), layout.align()) {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi::mi_free(ptr.cast::<c_void>());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(new_size, layout.align()) {
            mi::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aligned(p: *mut u8, align: usize) -> bool {
        !p.is_null() && (p as usize).is_multiple_of(align)
    }

    /// Blocks of every size and alignment up to a page come back aligned, keep their bytes
    /// through growing and shrinking, and zeroed ones read zero.
    #[test]
    fn blocks_are_aligned_and_keep_their_bytes() {
        let a = MiMalloc;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 3, 8, 15, 16, 17, 100, 4096, 70_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size, and each block is used within its size and freed once.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(aligned(p, align), "{size} {align}");
                    for i in 0..size {
                        *p.add(i) = i as u8;
                    }
                    let bigger = size * 3;
                    let q = a.realloc(p, layout, bigger);
                    assert!(aligned(q, align), "{size} {align}");
                    assert!((0..size).all(|i| *q.add(i) == i as u8), "{size} {align}");
                    let r = a.realloc(q, Layout::from_size_align(bigger, align).unwrap(), 1);
                    assert!(aligned(r, align) && *r == 0);
                    a.dealloc(r, Layout::from_size_align(1, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert!(aligned(z, align), "{size} {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0), "{size} {align}");
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
