//! Files are read and parsed on several threads; the store and the summary must not show it:
//! an import of the whole fixtures/ tree with one thread and with four gives the same output,
//! the same exported rows in the same order and the same store content.

mod common;
use common::{linkperf, ok, text};
use std::path::Path;

/// The summary of an import, and its exported rows.
fn import(store: &Path, jobs: &str) -> (String, String) {
    // The tree holds bad input on purpose: the summary lists it, the exit status is 0.
    let o = linkperf(store, &["import", "--jobs", jobs, "fixtures"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The summary names the store; all else must match.
    let summary = text(&o).replace(store.to_str().unwrap(), "STORE");
    let rows = ok(&linkperf(store, &["export", "--format", "jsonl"]));
    (summary, rows)
}

#[test]
fn one_thread_and_four_import_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let (serial_summary, serial_rows) = import(&tmp.path().join("serial"), "1");
    let (parallel_summary, parallel_rows) = import(&tmp.path().join("parallel"), "4");
    assert!(serial_summary.contains("problem(s):"), "{serial_summary}");
    assert_eq!(serial_summary, parallel_summary);
    assert!(serial_rows.lines().count() > 1000);
    assert_eq!(serial_rows, parallel_rows);
    // The dry run counts the same too.
    let dry = |jobs: &str| {
        let o = linkperf(
            &tmp.path().join("dry"),
            &["import", "--dry-run", "-j", jobs, "fixtures"],
        );
        text(&o)
    };
    assert_eq!(dry("1"), dry("3"));
}

#[test]
fn an_unreadable_file_stops_a_parallel_import_and_stores_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("input");
    std::fs::create_dir(&input).unwrap();
    let fixture = common::root().join("fixtures/iperf3/iperf3-json-client.txt");
    for name in ["a.txt", "c.txt", "d.txt"] {
        std::fs::copy(&fixture, input.join(name)).unwrap();
    }
    // Listed by the directory walk, unreadable when a worker opens it.
    std::os::unix::fs::symlink(tmp.path().join("gone"), input.join("b-dangling.txt")).unwrap();
    let store = tmp.path().join("store");
    let o = linkperf(&store, &["import", "-j", "4", input.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("b-dangling.txt: cannot read"),
        "{}",
        text(&o)
    );
    let listed = text(&linkperf(&store, &["ls"]));
    assert!(!listed.contains("iperf3"), "{listed}");
}

/// A large file is read in pieces, so memory follows its largest command block. Read so (every
/// file, pieces of one block), fixtures/ imports as read whole: the same counts, problems,
/// findings and files that yield nothing, and the same stored rows in the same order.
#[test]
fn files_read_in_pieces_import_as_files_read_whole() {
    use linkperf::ingest::stream::Sizes;
    use linkperf::pipeline::{collect_files, import, Mode, Options};
    let tmp = tempfile::tempdir().unwrap();
    let files = collect_files(&["fixtures".into()]).unwrap();
    let config = linkperf::config::Config::default();
    let read = |name: &str, stream: Sizes| {
        let store = tmp.path().join(name);
        let options = Options {
            labels: &Default::default(),
            mode: Mode::Store,
            jobs: 2,
            check: Some(&config),
            file_labels: None,
            stream,
            listed_dirs: None,
            before_commit: None,
        };
        let imported = import(&store, &files, &options).unwrap();
        let rows = ok(&linkperf(&store, &["export", "--format", "jsonl"]));
        (format!("{imported:#?}"), rows)
    };
    let whole = read(
        "whole",
        Sizes {
            from: u64::MAX,
            piece: 1,
        },
    );
    let pieces = read("pieces", Sizes { from: 0, piece: 1 });
    assert!(whole.0.contains("findings: ["), "{}", whole.0);
    assert_eq!(whole.0, pieces.0);
    assert_eq!(whole.1, pieces.1);
}
