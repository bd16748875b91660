//! The files an import reads: directories expanded recursively, in name order.

use anyhow::{Context, Result};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Expands directories recursively into their files (hidden entries skipped), sorted for a
/// deterministic order.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    Ok(collect_inputs(paths)?.files)
}

/// The files of some paths ([`collect_files`]), and the directories listed to find them.
#[derive(Debug, Default)]
pub struct Inputs {
    pub files: Vec<PathBuf>,
    /// Every directory whose files are all among `files` (hidden ones aside).
    pub listed: HashSet<PathBuf>,
}

/// [`collect_files`], telling which directories were listed whole ([`Options::listed_dirs`]).
pub fn collect_inputs(paths: &[PathBuf]) -> Result<Inputs> {
    let mut out = Inputs::default();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("{}: cannot read", p.display()))?;
        if meta.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.files.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Inputs) -> Result<()> {
    let cannot = || format!("{}: cannot list directory", dir.display());
    // Where the entries' names start in their paths (`Path::join` adds a separator unless
    // the directory's path ends with one).
    let dir_bytes = dir.as_os_str().as_encoded_bytes();
    let name_at = dir_bytes.len() + usize::from(!dir_bytes.ends_with(b"/"));
    // The entry's type comes with the listing: no stat per file of a large tree.
    let mut entries = std::fs::read_dir(dir)
        .with_context(cannot)?
        .map(|e| {
            e.map(|e| {
                let path = e.path();
                (name_key(name_in(&path, name_at)), path, e.file_type())
            })
        })
        .collect::<std::io::Result<Vec<_>>>()
        .with_context(cannot)?;
    // By name: the paths share their parent, so comparing their bytes orders them by name as
    // comparing them by components would. Names that differ in their first eight bytes are
    // ordered by the key held beside each path; only the rest read the paths' bytes, which lie
    // scattered over the heap. The sort runs before any file is parsed, on one core (README,
    // import throughput).
    entries.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.as_os_str().cmp(b.1.as_os_str()))
    });
    for (_, p, kind) in entries {
        if is_hidden(name_in(&p, name_at)) {
            continue;
        }
        // A link (or an entry whose type could not be read) is followed, as `is_dir` does.
        let is_dir = match kind {
            Ok(k) if !k.is_symlink() => k.is_dir(),
            _ => p.is_dir(),
        };
        if is_dir {
            walk(&p, out)?;
        } else {
            out.files.push(p);
        }
    }
    out.listed.insert(dir.to_path_buf());
    Ok(())
}

/// The name in a listed entry's path, which starts at byte `name_at`.
fn name_in(path: &Path, name_at: usize) -> &[u8] {
    &path.as_os_str().as_encoded_bytes()[name_at..]
}

/// A name's first eight bytes as a number that orders names as their bytes do (a shorter
/// name is padded with zeros, which no name holds, so it comes before the longer ones it
/// begins).
fn name_key(name: &[u8]) -> u64 {
    let mut first = [0u8; 8];
    let n = name.len().min(8);
    first[..n].copy_from_slice(&name[..n]);
    u64::from_be_bytes(first)
}

/// Whether a listed name is skipped: a UTF-8 name that begins with a dot.
fn is_hidden(name: &[u8]) -> bool {
    name.first() == Some(&b'.') && std::str::from_utf8(name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    /// Names that share their first eight bytes or differ only past them, shorter and longer
    /// ones, bytes above 0x7f, hidden entries and a subdirectory: listed in the order of their
    /// paths' bytes, hidden ones (UTF-8 names that begin with a dot) left out, whatever the
    /// directory's path ends with.
    #[test]
    fn files_come_in_name_order_without_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        let names: [&[u8]; 14] = [
            b"b", b"a", b"abcdefgh", b"abcdefg", b"abcdefghi", b"abcdefgha", b"abcdefgh-",
            b"Z", b"\xc3\xa9t\xc3\xa9", b"\xff.log", b"0001", b"000", b".hidden", b"\xc3a",
        ];
        for name in names {
            std::fs::write(dir.path().join(std::ffi::OsStr::from_bytes(name)), "x").unwrap();
        }
        // A name that begins with a dot but is not UTF-8 is not hidden (as before).
        std::fs::write(dir.path().join(std::ffi::OsStr::from_bytes(b".\xff")), "x").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/inner"), "x").unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "x").unwrap();

        let mut want: Vec<Vec<u8>> = names
            .iter()
            .filter(|n| **n != b".hidden")
            .map(|n| n.to_vec())
            .chain([b".\xff".to_vec(), b"sub/inner".to_vec()])
            .collect();
        want.sort();
        for root in [dir.path().to_path_buf(), dir.path().join("")] {
            let inputs = collect_inputs(std::slice::from_ref(&root)).unwrap();
            let got: Vec<Vec<u8>> = inputs
                .files
                .iter()
                .map(|p| p.strip_prefix(dir.path()).unwrap().as_os_str().as_bytes().to_vec())
                .collect();
            assert_eq!(got, want, "{}", root.display());
            assert!(inputs.files.iter().all(|p| p.starts_with(dir.path())));
            assert!(inputs.listed.contains(&root.join("sub")), "{:?}", inputs.listed);
            assert!(!inputs.listed.iter().any(|d| d.ends_with(".git")));
        }
    }

    /// The key orders names as their bytes do wherever it tells them apart.
    #[test]
    fn name_key_agrees_with_byte_order() {
        let names: [&[u8]; 9] = [b"", b"a", b"ab", b"abcdefgh", b"abcdefgz", b"abcdefghz", b"b", b"\xff", b"a\xff"];
        for x in names {
            for y in names {
                let (kx, ky) = (name_key(x), name_key(y));
                if kx != ky {
                    assert_eq!(kx.cmp(&ky), x.cmp(y), "{x:?} {y:?}");
                } else {
                    assert_eq!(x[..x.len().min(8)], y[..y.len().min(8)], "{x:?} {y:?}");
                }
            }
        }
    }
}
