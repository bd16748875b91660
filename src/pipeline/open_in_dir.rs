//! Opening the files of one directory by their names in it (`openat` on Linux), not by their
//! whole paths. The kernel walks every directory of a path on each open: over 17,400 small
//! iperf/qperf logs opened by absolute path, that walk took 1.2 % of the import's time, 0.2 %
//! by name (the name's own lookup, 3.3 %, stays). The directory is opened once for the files
//! after it that lie in it.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;

/// Opens files for reading, keeping the directory of the last one open while the next ones
/// lie in it too. A file is opened as `File::open` opens its path: where its name in the
/// directory cannot be opened (or the directory not), `File::open` is asked, and its error is
/// the one returned.
#[derive(Default)]
pub struct Opener {
    #[cfg(target_os = "linux")]
    dir: Option<(Vec<u8>, std::os::fd::OwnedFd)>,
    /// The name being opened, with a NUL after it (a buffer kept for every open).
    #[cfg(target_os = "linux")]
    name: Vec<u8>,
}

impl Opener {
    pub fn open(&mut self, path: &Path) -> std::io::Result<File> {
        #[cfg(target_os = "linux")]
        if let Some(file) = self.open_in_dir(path) {
            return Ok(file);
        }
        File::open(path)
    }

    /// The file by its name in its directory: the text after the path's last `/` in the text
    /// before it (`/` itself for a file at the root: [`super::split_at_last_slash`], which
    /// finds a log's directory for its counters file too), which resolves as the whole path
    /// does.
    /// `None` for a path without a `/`, one whose last part is `.` or `..`, or a name the
    /// directory does not give.
    #[cfg(target_os = "linux")]
    fn open_in_dir(&mut self, path: &Path) -> Option<File> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        let (dir, name) = super::split_at_last_slash(bytes)?;
        if matches!(name, b"" | b"." | b"..") || memchr::memchr(0, bytes).is_some() {
            return None;
        }
        if self.dir.as_ref().is_none_or(|(open, _)| open.as_slice() != dir) {
            self.dir = None;
            let dir_text = std::ffi::CString::new(dir).ok()?;
            // SAFETY: a NUL-terminated path and flags; the result is a new descriptor or -1.
            let fd = unsafe {
                libc::open(
                    dir_text.as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                )
            };
            if fd < 0 {
                return None;
            }
            // SAFETY: `fd` is a descriptor just opened, owned by nothing else.
            self.dir = Some((dir.to_vec(), unsafe { OwnedFd::from_raw_fd(fd) }));
        }
        let (_, dir_fd) = self.dir.as_ref()?;
        self.name.clear();
        self.name.extend_from_slice(name);
        self.name.push(0);
        // SAFETY: an open directory descriptor, a NUL-terminated name (no NUL before its end,
        // checked above) and flags (those `File::open` opens with); a new descriptor or -1.
        let fd = unsafe {
            libc::openat(
                dir_fd.as_raw_fd(),
                self.name.as_ptr().cast(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` is a descriptor just opened, owned by nothing else.
        Some(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
}

#[cfg(test)]
mod tests {
    use super::Opener;
    use std::io::Read;
    use std::path::{Path, PathBuf};

    fn read(opener: &mut Opener, path: &Path) -> std::io::Result<String> {
        let mut text = String::new();
        opener.open(path)?.read_to_string(&mut text)?;
        Ok(text)
    }

    /// Files in one directory, in others, through `.`, `..` and a symbolic link, relative and
    /// absolute, read what `std::fs::read_to_string` reads; a path it cannot open fails with
    /// its error kind and message.
    #[test]
    fn opens_what_the_whole_path_opens() {
        let root = tempfile::tempdir().unwrap();
        let a = root.path().join("a");
        let b = root.path().join("b c");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        for (dir, name) in [(&a, "1.txt"), (&a, "2.txt"), (&b, "1.txt"), (&b, "é.txt")] {
            std::fs::write(dir.join(name), format!("{} {name}", dir.display())).unwrap();
        }
        std::os::unix::fs::symlink(&b, root.path().join("link")).unwrap();
        std::os::unix::fs::symlink(a.join("1.txt"), b.join("to-a")).unwrap();
        let mut paths: Vec<PathBuf> = vec![
            a.join("1.txt"),
            a.join("2.txt"),
            b.join("1.txt"),
            b.join("é.txt"),
            b.join("to-a"),
            a.join("1.txt"),
            root.path().join("link/1.txt"),
            root.path().join("a/./2.txt"),
            root.path().join("a/../b c/1.txt"),
            a.join("missing.txt"),
            root.path().join("missing/1.txt"),
            root.path().join("a/1.txt/x"),
            a.clone(),
            root.path().join("a/."),
            root.path().join("a/.."),
            PathBuf::from("/"),
            PathBuf::from(""),
        ];
        paths.extend(fixture_paths());
        let mut opener = Opener::default();
        for path in &paths {
            let got = read(&mut opener, path);
            let want = std::fs::read_to_string(path);
            match (&got, &want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{}", path.display()),
                (Err(g), Err(w)) => {
                    assert_eq!(g.kind(), w.kind(), "{}", path.display());
                    assert_eq!(g.to_string(), w.to_string(), "{}", path.display());
                }
                _ => panic!("{}: {got:?} against {want:?}", path.display()),
            }
        }
    }

    /// Paths relative to the working directory (the crate's root under test).
    fn fixture_paths() -> Vec<PathBuf> {
        vec![
            PathBuf::from("fixtures/iperf2").join(first_file("fixtures/iperf2")),
            PathBuf::from("./fixtures/qperf/loopback").join(first_file("fixtures/qperf/loopback")),
            PathBuf::from("Cargo.toml"),
        ]
    }

    fn first_file(dir: &str) -> PathBuf {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        PathBuf::from(&names[0])
    }
}
