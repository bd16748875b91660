//! The typed document against the tree it replaced: the same raw text for every row object,
//! the same fields, the same equality of documents, the same errors, on documents of every
//! shape (repeated and escaped keys, nested values, a number where an array belongs, …).

use super::*;
use proptest::prelude::*;

/// The row objects of a document, as its rows are read (intervals' streams and sums, end
/// streams' sender/receiver/udp, end sums), typed.
fn typed_points<'a>(doc: &'a Doc) -> Vec<&'a Point<'a>> {
    let mut out = Vec::new();
    for i in doc.intervals().iter().filter_map(Obj::keys) {
        out.extend(i.streams.iter().flat_map(List::items));
        out.extend(i.sum.iter().chain(&i.sum_bidir_reverse));
    }
    if let Some(end) = doc.end() {
        for s in end
            .streams
            .iter()
            .flat_map(List::items)
            .filter_map(Obj::keys)
        {
            out.extend(s.sender.iter().chain(&s.receiver).chain(&s.udp));
        }
        out.extend(end.sum_sent.iter().chain(&end.sum_received).chain(&end.sum));
    }
    out
}

/// The same objects of the tree, as the tree-reading code found them.
fn tree_points(doc: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for i in doc["intervals"].as_array().into_iter().flatten() {
        out.extend(i["streams"].as_array().into_iter().flatten());
        out.extend(
            ["sum", "sum_bidir_reverse"]
                .iter()
                .filter_map(|k| i.get(*k)),
        );
    }
    let end = &doc["end"];
    for s in end["streams"].as_array().into_iter().flatten() {
        out.extend(
            ["sender", "receiver", "udp"]
                .iter()
                .filter_map(|k| s.get(*k)),
        );
    }
    out.extend(
        ["sum_sent", "sum_received", "sum"]
            .iter()
            .filter_map(|k| end.get(*k)),
    );
    out
}

/// The document of a stream of at most one interval and an end.
fn doc_of<'a>(interval: Option<Interval<'a>>, end: Option<End<'a>>) -> Doc<'a> {
    let end = end.unwrap_or(Obj::Other(Value::Null));
    Doc::of_stream(Tree::Null, interval.into_iter().collect(), end, None)
}

/// Reads `text` both ways and checks they agree; returns both when it is a document.
fn both(text: &str) -> Option<(Doc<'_>, Value)> {
    let typed = serde_json::from_str::<Doc>(text);
    let tree = serde_json::from_str::<Value>(text);
    match (typed, tree) {
        (Ok(d), Ok(v)) => {
            let (tp, vp) = (typed_points(&d), tree_points(&v));
            assert_eq!(tp.len(), vp.len(), "row objects of {text}");
            for (p, v) in tp.iter().zip(vp) {
                assert_eq!(p.to_json(), v.to_string(), "raw text in {text}");
                for key in [
                    "bits_per_second",
                    "bytes",
                    "retransmits",
                    "omitted",
                    "socket",
                ] {
                    let (pf, vf) = (p.get(key), v.get(key));
                    assert_eq!(pf.and_then(Field::as_f64), vf.and_then(Value::as_f64));
                    assert_eq!(pf.and_then(Field::as_u64), vf.and_then(Value::as_u64));
                    assert_eq!(pf.and_then(Field::as_bool), vf.and_then(Value::as_bool));
                    let pt = pf.map(|f| serde_json::to_string(f).unwrap());
                    assert_eq!(pt, vf.map(Value::to_string), "{key} in {text}");
                }
            }
            let (ts, vs) = (d.start(), &v["start"]);
            assert_eq!(ts.to_json(), vs.to_string(), "start in {text}");
            for key in ["start", "socket", "bytes", "error", "zz"] {
                let (tk, vk) = (&ts[key], &vs[key]);
                assert_eq!(
                    ts.get(key).is_some(),
                    vs.get(key).is_some(),
                    "{key} in {text}"
                );
                assert_eq!(tk.to_json(), vk.to_string(), "{key} in {text}");
                assert_eq!(tk.as_str(), vk.as_str(), "{key} in {text}");
                assert_eq!(tk.as_u64(), vk.as_u64(), "{key} in {text}");
                assert_eq!(tk.is_null(), vk.is_null(), "{key} in {text}");
            }
            assert_eq!(d.rest("error"), &v["error"]);
            assert_eq!(d.cpu(), &v["end"]["cpu_utilization_percent"]);
            Some((d, v))
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "error for {text}");
            None
        }
        (a, b) => panic!("{text}: typed {:?}, tree {:?}", a.is_ok(), b.is_ok()),
    }
}

/// A JSON value as text, from a small alphabet so that documents often share parts.
#[derive(Debug, Clone)]
enum J {
    Scalar(&'static str),
    Array(Vec<J>),
    /// Entries in order, a key possibly twice.
    Object(Vec<(&'static str, J)>),
}

impl J {
    fn text(&self) -> String {
        match self {
            J::Scalar(s) => (*s).to_string(),
            J::Array(items) => {
                let items: Vec<String> = items.iter().map(J::text).collect();
                format!("[{}]", items.join(", "))
            }
            J::Object(entries) => {
                let e: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("\"{k}\":\t{}", v.text()))
                    .collect();
                format!("{{\n{}\n}}", e.join(",\n"))
            }
        }
    }

    /// The same value with every object's entries in reverse order (equal as a tree unless
    /// a key is repeated).
    fn reversed(&self) -> J {
        match self {
            J::Scalar(s) => J::Scalar(s),
            J::Array(items) => J::Array(items.iter().map(J::reversed).collect()),
            J::Object(e) => J::Object(e.iter().rev().map(|(k, v)| (*k, v.reversed())).collect()),
        }
    }
}

const SCALARS: &[&str] = &[
    "0",
    "5",
    "-3",
    "1.0",
    "1e3",
    "2.5E-1",
    "24671711710.00297",
    "18446744073709551616",
    "-0.0",
    "1.0000000000000002",
    "true",
    "false",
    "null",
    "\"x\"",
    "\"a\\u0062\"",
    "\"\"",
];
const KEYS: &[&str] = &[
    "intervals",
    "end",
    "start",
    "streams",
    "sum",
    "sum_bidir_reverse",
    "sender",
    "receiver",
    "udp",
    "sum_sent",
    "sum_received",
    "cpu_utilization_percent",
    "bits_per_second",
    "bytes",
    "socket",
    "omitted",
    "retransmits",
    "error",
    "so\\u0063ket",
    "zz",
    // Keys whose text is escaped again when written (quote, backslash, control bytes), and
    // keys that are not (non-ASCII, DEL, slash).
    r#"a\"b"#,
    r#"t\\x"#,
    r#"c\u0001"#,
    r#"\n"#,
    "é",
    r#"\u007f"#,
    "/",
];

fn value() -> impl Strategy<Value = J> {
    let leaf = prop::sample::select(SCALARS).prop_map(J::Scalar);
    leaf.prop_recursive(5, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(J::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(J::Object),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn typed_documents_read_as_the_tree_does(a in value(), b in value(), cut in 0usize..400) {
        let (ta, tb, tr) = (a.text(), b.text(), a.reversed().text());
        let (da, db, dr) = (both(&ta), both(&tb), both(&tr));
        if let (Some((da, va)), Some((db, vb))) = (&da, &db) {
            prop_assert_eq!(da == db, va == vb);
        }
        if let (Some((da, va)), Some((dr, vr))) = (&da, &dr) {
            prop_assert_eq!(da == dr, va == vr);
        }
        // Cut short: the same error, at the same place.
        both(&ta[..ta.floor_char_boundary(cut.min(ta.len()))]);
    }

    #[test]
    fn stream_events_read_as_the_tree_does(
        name in prop::sample::select(&["\"interval\"", "\"end\"", "\"start\"", "5", "\"error\""][..]),
        data in value(),
        order in 0usize..4,
    ) {
        let d = data.text();
        let line = match order {
            0 => format!("{{\"event\":{name},\"data\":{d}}}"),
            1 => format!("{{\"event\":{name},\"zz\":1,\"data\":{d},\"more\":[1]}}"),
            2 => format!("{{\"event\":\"start\",\"data\":{d},\"event\":{name}}}"),
            _ => format!("{{\"event\":{name},\"data\":1,\"data\":{d}}}"),
        };
        let event = Event::read(&line).expect("a whole event");
        let mut tree: Value = serde_json::from_str(&line).unwrap();
        prop_assert_eq!(&event.name, &tree["event"]);
        let data = tree["data"].take();
        let tree_doc = |interval: Option<&Value>, end: Option<&Value>| {
            serde_json::json!({
                "start": null,
                "intervals": interval.into_iter().collect::<Vec<_>>(),
                "end": end,
            })
        };
        let (typed, tree) = match event.data {
            EventData::Interval(i) => (doc_of(Some(i), None), tree_doc(Some(&data), None)),
            EventData::End(e) => (doc_of(None, Some(e)), tree_doc(None, Some(&data))),
            EventData::Start(t) => {
                prop_assert_eq!(t.to_json(), data.to_string());
                return Ok(());
            }
            EventData::Value(v) => {
                prop_assert_eq!(v, data);
                return Ok(());
            }
        };
        let (tp, vp) = (typed_points(&typed), tree_points(&tree));
        prop_assert_eq!(tp.len(), vp.len());
        for (p, v) in tp.iter().zip(vp) {
            prop_assert_eq!(p.to_json(), v.to_string());
        }
    }
}

#[test]
fn a_repeated_key_keeps_its_last_value_in_place() {
    let text = r#"{"intervals":[{"sum":{"z":1,"a":2,"z":3,"b\u0061":4}}]}"#;
    let (doc, _) = both(text).expect("a document");
    let points = typed_points(&doc);
    assert_eq!(points[0].to_json(), r#"{"a":2,"ba":4,"z":3}"#);
}

#[test]
fn documents_that_differ_only_in_a_key_no_row_reads_are_not_the_same_document() {
    let a = r#"{"end":{"sum":{"bytes":1},"sender_tcp_congestion":"cubic"}}"#;
    let b = r#"{"end":{"sum":{"bytes":1},"sender_tcp_congestion":"bbr"}}"#;
    let (da, _) = both(a).unwrap();
    let (db, _) = both(b).unwrap();
    assert_ne!(da, db);
    assert_eq!(da, both(a).unwrap().0);
}

#[test]
fn key_order_is_the_order_of_str() {
    let keys = [
        "", "a", "b", "ab", "aa", "snd_cwnd", "snd_wnd", "sender", "seconds", "socket", "start",
        "é", "e", "\u{7f}", "\u{80}", "Z", "s",
    ];
    for x in keys {
        for y in keys {
            assert_eq!(tree::key_order(x, y), x.cmp(y), "{x:?} against {y:?}");
        }
    }
}
