//! Counters files (`linkperf run` and `linkperf bench` write them beside each log; import reads
//! them back): any bytes read without a panic, every value and problem names a line of the
//! input, and every change is its two values' difference or says why not.
#![no_main]

use linkperf::counters::{delta, read};
use linkperf::model::Run;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let text = String::from_utf8_lossy(bytes);
    let lines = text.lines().count() as u32;
    let file = read::parse(&text);
    for (line, _) in &file.problems {
        assert!(
            *line >= 1 && *line <= lines.max(1),
            "problem at line {line} of {lines}"
        );
    }
    for p in &file.pairs {
        for r in p.before.iter().chain(p.after.iter().flatten()) {
            assert!(
                r.line >= 1 && r.line <= lines,
                "value at line {} of {lines}",
                r.line
            );
        }
    }
    let mut runs = vec![
        Run {
            line: 1,
            ..Run::default()
        },
        Run {
            line: u32::MAX,
            ..Run::default()
        },
    ];
    delta::attach(&file, "fuzz.counters", &mut runs);
    for c in runs.iter().flat_map(|r| &r.counters) {
        assert!(c.line >= 1 && c.line <= lines);
        if c.note.is_none() {
            assert_eq!(c.delta, c.after - c.before, "{c:?}");
        }
    }
});
