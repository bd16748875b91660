use super::*;
use crate::ingest::parse_bytes;

/// Reads `path` whole and in pieces of each size, the first pass on one to five threads;
/// returns how many sizes were read in pieces.
fn compare(path: &Path, sizes: &[usize]) -> usize {
    let whole = parse_bytes(&path.display().to_string(), &std::fs::read(path).unwrap());
    let source = path.display().to_string();
    let mut in_pieces = 0;
    for &piece in sizes {
        // The plan does not depend on how many threads made it.
        let one = plan(&source, path, piece, 1).unwrap();
        for threads in [2, 3, 5] {
            let many = plan(&source, path, piece, threads).unwrap();
            let at =
                format!("{path:?} in pieces of {piece} bytes, first pass on {threads} threads");
            assert_eq!(format!("{many:?}"), format!("{one:?}"), "{at}");
        }
        let Some(plan) = one else {
            continue;
        };
        in_pieces += 1;
        let pieces = plan.pieces;
        let size = std::fs::metadata(path).unwrap().len();
        assert_eq!(pieces[0].bytes.start, 0);
        assert_eq!(pieces.last().unwrap().bytes.end, size, "{path:?}");
        for w in pieces.windows(2) {
            assert_eq!(w[0].bytes.end, w[1].bytes.start, "{path:?}");
            assert!(w[0].first_line < w[1].first_line, "{path:?}");
        }
        let read = parse_in_pieces(&source, path, piece, 1).unwrap().unwrap();
        let at = format!("{} in pieces of {piece} bytes", path.display());
        assert_eq!(read.runs.len(), whole.runs.len(), "{at}");
        for (a, b) in read.runs.iter().zip(&whole.runs) {
            // Compared as printed: a value that is not a number is never equal to itself.
            let (a, b) = (format!("{a:?}"), format!("{b:?}"));
            if a != b {
                let i = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
                let near = |s: &str| s[i.saturating_sub(200)..(i + 200).min(s.len())].to_string();
                panic!("{at}: a run differs\n{}\nwhole:\n{}", near(&a), near(&b));
            }
        }
        assert_eq!(read.problems, whole.problems, "{at}");
        assert_eq!(read.long_lines, whole.long_lines, "{at}");
        assert_eq!(read.unreadable_blocks, whole.unreadable_blocks, "{at}");
        assert_eq!(read.encoding, whole.encoding, "{at}");
    }
    in_pieces
}

#[test]
fn every_fixture_read_in_pieces_reads_as_a_whole_read() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = crate::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
    let in_pieces: usize = files.iter().map(|f| compare(f, &[1, 700, 64 * 1024])).sum();
    // The transcripts of several commands (seeds, samples): the comparison ran on them.
    assert!(in_pieces >= 12, "only {in_pieces} reads in pieces");
}

/// Every fixture that is plain UTF-8 in one transcript, each after a `cat` of it: blocks of
/// every tool read by content, device listings and qperf `conf` far from the runs they
/// describe, cut into pieces of many sizes.
#[test]
fn a_transcript_of_every_fixture_reads_in_pieces_as_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = crate::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
    let mut transcript = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let plain = std::str::from_utf8(&bytes).is_ok()
            && !bytes.starts_with(b"\xef\xbb\xbf")
            && !bytes.contains(&0);
        if plain && !bytes.is_empty() {
            let name = f.strip_prefix(root).unwrap().display();
            transcript.extend(format!("[root@lab ~]# cat {name}\n").bytes());
            transcript.extend(&bytes);
            if !bytes.ends_with(b"\n") {
                transcript.push(b'\n');
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("all.txt");
    std::fs::write(&path, &transcript).unwrap();
    assert!(transcript.len() > 1_000_000, "{}", transcript.len());
    let sizes = [1, 4096, 100_000, 1 << 20];
    assert_eq!(compare(&path, &sizes), sizes.len());
    // The file-wide facts were there to be carried across pieces.
    let whole = parse_bytes("all.txt", &transcript);
    let with = |prefix: &str| {
        let has = |r: &&crate::model::Run| r.facts.keys().any(|k| k.starts_with(prefix));
        whole.runs.iter().filter(has).count()
    };
    assert!(
        with("device.") > 0 && with("conf.") > 0,
        "{} {}",
        with("device."),
        with("conf.")
    );
}

/// A seed transcript with CRLF line ends, colour codes, a line too long to read and no
/// final newline: cleaned and cut line by line, pieces read as the whole.
#[test]
fn crlf_colours_and_long_lines_read_in_pieces_as_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seed =
        std::fs::read_to_string(root.join("fixtures/seeds/000_8f7f2e13e9bf4848.txt")).unwrap();
    let mut text = String::new();
    for (i, line) in seed.lines().enumerate() {
        if i == 40 {
            text.push_str(&"x".repeat(MAX_LINE_BYTES + 10));
            text.push_str("\r\n");
        }
        if line.contains("#bytes") {
            text.push_str("\x1b[1;32m");
        }
        text.push_str(line);
        text.push_str("\r\n");
    }
    text.truncate(text.len() - 2);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("crlf.txt");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(compare(&path, &[1, 3000, 70_000]), 3);
    let whole = parse_bytes("crlf.txt", text.as_bytes());
    assert_eq!(whole.long_lines, 1);
    assert!(whole.runs.len() > 10);
}

/// Inputs the `read_in_pieces` fuzz target found: the first byte picks the piece size.
#[test]
fn fuzz_finds_read_in_pieces_as_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/invalid");
    let tmp = tempfile::tempdir().unwrap();
    let mut found = 0;
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("fuzz-read_in_pieces-") {
            continue;
        }
        let input = std::fs::read(&path).unwrap();
        let Some((&pick, bytes)) = input.split_first() else {
            continue;
        };
        let file = tmp.path().join(&name);
        std::fs::write(&file, bytes).unwrap();
        found += compare(&file, &[1 + usize::from(pick) * 16]);
    }
    assert!(found > 0);
}

#[test]
fn what_a_whole_read_decodes_otherwise_is_read_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let transcript = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds/000_8f7f2e13e9bf4848.txt"),
    )
    .unwrap();
    let plan_in = |name: &str, bytes: &[u8], piece: usize| {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        plan(name, &path, piece, 2).unwrap().map(|p| p.pieces.len())
    };
    let plan_of = |name: &str, bytes: &[u8]| plan_in(name, bytes, 1000);
    assert!(plan_of("plain.txt", &transcript).unwrap() > 10);
    let with = |prefix: &[u8], suffix: &[u8]| [prefix, &transcript, suffix].concat();
    // GB18030 for the whole file when any byte is not UTF-8.
    assert_eq!(plan_of("gbk.txt", &with(b"", b"\xb7\xfe\xce\xf1\n")), None);
    assert_eq!(plan_of("bom.txt", &with(b"\xef\xbb\xbf", b"")), None);
    assert_eq!(plan_of("nul.txt", &with(b"", b"\0\n")), None);
    assert_eq!(plan_of("blank.txt", &[b' '; 5000]), None);
    // Judged by the head a whole read judges: its first kilobytes and first lines, however
    // small the first pass's reads are.
    let json = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/perftest/rxe-lab/read_bw-2qp-out_json.json"),
    )
    .unwrap();
    let controls = [
        &b"$ ib_write_bw -a\n"[..],
        &[0x05; 2000],
        b"\n",
        &transcript,
    ]
    .concat();
    for piece in [1, 16] {
        assert_eq!(plan_in("json.txt", &json, piece), None);
        assert_eq!(plan_in("controls.txt", &controls, piece), None);
    }
    // One block (no prompt at all): nothing to cut.
    let bare: Vec<u8> = transcript
        .split(|&b| b == b'\n')
        .filter(|l| !l.contains(&b'#') && !l.contains(&b'$'))
        .flat_map(|l| [l, b"\n"].concat())
        .collect();
    assert_eq!(plan_of("bare.txt", &bare), None);
}
