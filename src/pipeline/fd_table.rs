//! A file descriptor table of its own for each import worker thread ([`own`]). The kernel
//! locks a process's table for every open and close: with two workers opening many small files
//! each, every open waited on the other's, a tenth more CPU time than one thread spent on the
//! same files.
#![allow(unsafe_code)]

/// Gives the calling thread its own copy of the file descriptor table (Linux `unshare` of
/// `CLONE_FILES`); elsewhere, or if the kernel refuses, the table stays shared as before.
///
/// Only for threads that open, read and close their own files and then end: a descriptor the
/// thread opens afterwards is not seen by the others, nor one they open by it. The copy holds
/// the descriptors open now until the thread ends.
pub fn own() {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn unshare(flags: std::ffi::c_int) -> std::ffi::c_int;
        }
        const CLONE_FILES: std::ffi::c_int = 0x400;
        // SAFETY: `unshare` takes flags by value and touches only the calling thread's own
        // kernel state; its result is an error code, ignored (the table then stays shared).
        unsafe { unshare(CLONE_FILES) };
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    /// A thread with its own table still reads files; the others' descriptors keep working.
    #[test]
    fn a_thread_with_its_own_table_opens_and_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "text").unwrap();
        let mut before = std::fs::File::open(&path).unwrap();
        let read = std::thread::scope(|s| {
            s.spawn(|| {
                super::own();
                std::fs::read_to_string(&path).unwrap()
            })
            .join()
            .unwrap()
        });
        assert_eq!(read, "text");
        let mut again = String::new();
        before.read_to_string(&mut again).unwrap();
        assert_eq!(again, "text");
    }
}
