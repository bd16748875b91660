//! The parts of an iperf3 JSON document that become rows, read straight from its text.
//!
//! A `-J` document was read into a [`Value`] tree and its rows taken from that: every key an
//! owned string in a sorted map, every interval and summary object rebuilt, then written back
//! as JSON for the row's raw text. That was a third of an iperf3 import. Here the objects
//! rows come from (interval, stream and summary objects: [`Point`]) keep their entries in a
//! vector with keys borrowed from the text; `start`, which the run's facts come from, is a
//! [`Tree`] (the tree's shape, its keys and strings borrowed), and only the rest (keys no row
//! or fact reads) is a [`Value`]. Every type keeps what the tree kept, so
//! - a row's raw text is the same bytes (keys sorted, the last of a repeated key kept, numbers
//!   as the tree read and wrote them), and
//! - two documents are equal exactly when their trees are (a `-J` document printed twice is
//!   recognised the same way).
//!
//! An object of another shape than iperf3 prints (a number where an array belongs, …) is kept
//! as the [`Value`] it is, and reads as the tree read it: no rows from it.

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;
pub use tree::Tree;
use tree::{entries_of, key_order, Key, NULL_TREE};

mod tree;

static NULL: Value = Value::Null;

/// Visitor methods for everything but objects and arrays, each giving `Self::Value::other` of
/// the [`Value`] the tree holds for it.
macro_rules! scalars_as_other {
    () => {
        fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
            Ok(Other::other(Value::Bool(v)))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Other::other(Value::from(v)))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Other::other(Value::from(v)))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
            Ok(Other::other(Value::from(v)))
        }
        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Other::other(Value::from(v)))
        }
        fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
            Ok(Other::other(Value::String(v)))
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Other::other(Value::Null))
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(Other::other(Value::Null))
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            Value::deserialize(d).map(Other::other)
        }
    };
}

/// A type that keeps a value of a shape it does not read as the value itself.
trait Other {
    fn other(v: Value) -> Self;
}

/// A value inside a [`Point`]: scalars as they are, an object or array as a [`Value`].
#[derive(Debug, Clone, PartialEq)]
pub enum Field<'de> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'de, str>),
    Nested(Value),
}

impl Field<'_> {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Field::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Field::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Field::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl Other for Field<'_> {
    fn other(v: Value) -> Self {
        match v {
            Value::Null => Field::Null,
            Value::Bool(b) => Field::Bool(b),
            Value::Number(n) => Field::Number(n),
            Value::String(s) => Field::String(Cow::Owned(s)),
            nested => Field::Nested(nested),
        }
    }
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Field<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            scalars_as_other!();
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Field::String(Cow::Borrowed(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(a)).map(Field::Nested)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(a)).map(Field::Nested)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Null => s.serialize_unit(),
            Field::Bool(b) => s.serialize_bool(*b),
            Field::Number(n) => n.serialize(s),
            Field::String(t) => s.serialize_str(t),
            Field::Nested(v) => v.serialize(s),
        }
    }
}

/// An interval, stream or summary object: its entries sorted by key, the last of a repeated
/// key kept (as a map keeps them), or whatever else stood where one belongs.
#[derive(Debug, Clone, PartialEq)]
pub enum Point<'de> {
    Object(Vec<(Cow<'de, str>, Field<'de>)>),
    Other(Value),
}

impl<'de> Point<'de> {
    /// Its entries (none unless it is an object).
    pub fn entries(&self) -> &[(Cow<'de, str>, Field<'de>)] {
        match self {
            Point::Object(e) => e,
            Point::Other(_) => &[],
        }
    }

    pub fn get(&self, key: &str) -> Option<&Field<'de>> {
        let e = self.entries();
        e.binary_search_by(|(k, _)| key_order(k, key))
            .ok()
            .map(|i| &e[i].1)
    }

    /// Compact JSON, keys sorted: the bytes the tree wrote for it.
    pub fn to_json(&self) -> String {
        let Point::Object(entries) = self else {
            return serde_json::to_string(self).expect("a JSON value always serializes");
        };
        // What `collect_map` writes, with each key that holds nothing to escape copied as it
        // is: escaping every key byte by byte was half the cost of a row's raw text.
        let plain = |k: &str| k.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
        let mut out = Vec::with_capacity(24 * entries.len() + 2);
        out.push(b'{');
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            if plain(k) {
                out.push(b'"');
                out.extend_from_slice(k.as_bytes());
                out.push(b'"');
            } else {
                serde_json::to_writer(&mut out, k.as_ref()).expect("a key always serializes");
            }
            out.push(b':');
            serde_json::to_writer(&mut out, v).expect("a JSON value always serializes");
        }
        out.push(b'}');
        String::from_utf8(out).expect("JSON is written as UTF-8")
    }
}

impl Other for Point<'_> {
    fn other(v: Value) -> Self {
        Point::Other(v)
    }
}

impl<'de> Deserialize<'de> for Point<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Point<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            scalars_as_other!();
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(a)).map(Point::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                entries_of(a, 16).map(Point::Object)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Point<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Point::Object(e) => s.collect_map(e.iter().map(|(k, v)| (k.as_ref(), v))),
            Point::Other(v) => v.serialize(s),
        }
    }
}

/// An array of `T`, or whatever else stood where one belongs.
#[derive(Debug, Clone, PartialEq)]
pub enum List<T> {
    Items(Vec<T>),
    Other(Value),
}

impl<T> List<T> {
    pub fn items(&self) -> &[T] {
        match self {
            List::Items(v) => v,
            List::Other(_) => &[],
        }
    }
}

impl<T> Other for List<T> {
    fn other(v: Value) -> Self {
        List::Other(v)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            scalars_as_other!();
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element()? {
                    items.push(item);
                }
                Ok(List::Items(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(a)).map(List::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The keys of an object that are read as their own types; `read` takes the value of `key`
/// and says true, or leaves it and says false (it is then kept as a [`Value`]).
pub trait Keys<'de>: Default {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error>;
}

/// An object with the keys `K` reads and the rest as values, or whatever else stood where
/// such an object belongs.
#[derive(Debug, Clone, PartialEq)]
pub enum Obj<K> {
    Object(K, Map<String, Value>),
    Other(Value),
}

impl<K> Obj<K> {
    pub fn keys(&self) -> Option<&K> {
        match self {
            Obj::Object(k, _) => Some(k),
            Obj::Other(_) => None,
        }
    }

    /// A key read as a value (`&Value::Null` when absent, as indexing the tree gives).
    pub fn rest(&self, key: &str) -> &Value {
        match self {
            Obj::Object(_, rest) => rest.get(key).unwrap_or(&NULL),
            Obj::Other(_) => &NULL,
        }
    }
}

impl<K> Other for Obj<K> {
    fn other(v: Value) -> Self {
        Obj::Other(v)
    }
}

impl<'de, K: Keys<'de>> Deserialize<'de> for Obj<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<K>(std::marker::PhantomData<K>);
        impl<'de, K: Keys<'de>> Visitor<'de> for V<K> {
            type Value = Obj<K>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            scalars_as_other!();
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(a)).map(Obj::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut keys = K::default();
                let mut rest = Map::new();
                while let Some(Key(k)) = a.next_key()? {
                    if !keys.read(&k, &mut a)? {
                        // A key read as its own type and again here would be kept twice: the
                        // types' keys are never among the rest, so the last one wins either way.
                        rest.insert(k.into_owned(), a.next_value()?);
                    }
                }
                Ok(Obj::Object(keys, rest))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `{"streams": [..], "sum": {..}, "sum_bidir_reverse": {..}}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntervalKeys<'de> {
    pub streams: Option<List<Point<'de>>>,
    pub sum: Option<Point<'de>>,
    pub sum_bidir_reverse: Option<Point<'de>>,
}

impl<'de> Keys<'de> for IntervalKeys<'de> {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "streams" => self.streams = Some(map.next_value()?),
            "sum" => self.sum = Some(map.next_value()?),
            "sum_bidir_reverse" => self.sum_bidir_reverse = Some(map.next_value()?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// One stream of the end summary: `{"sender": {..}, "receiver": {..}}` or `{"udp": {..}}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndStreamKeys<'de> {
    pub sender: Option<Point<'de>>,
    pub receiver: Option<Point<'de>>,
    pub udp: Option<Point<'de>>,
}

impl<'de> Keys<'de> for EndStreamKeys<'de> {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "sender" => self.sender = Some(map.next_value()?),
            "receiver" => self.receiver = Some(map.next_value()?),
            "udp" => self.udp = Some(map.next_value()?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// The end summary: its streams and sums (`cpu_utilization_percent` and the rest are values).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndKeys<'de> {
    pub streams: Option<List<Obj<EndStreamKeys<'de>>>>,
    pub sum_sent: Option<Point<'de>>,
    pub sum_received: Option<Point<'de>>,
    pub sum: Option<Point<'de>>,
}

impl<'de> Keys<'de> for EndKeys<'de> {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "streams" => self.streams = Some(map.next_value()?),
            "sum_sent" => self.sum_sent = Some(map.next_value()?),
            "sum_received" => self.sum_received = Some(map.next_value()?),
            "sum" => self.sum = Some(map.next_value()?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

pub type Interval<'de> = Obj<IntervalKeys<'de>>;
pub type End<'de> = Obj<EndKeys<'de>>;

/// A whole document: `start` read for the run's facts, the intervals and the end summary for
/// their rows, `error` (and anything else) as values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocKeys<'de> {
    pub start: Option<Tree<'de>>,
    pub intervals: Option<List<Interval<'de>>>,
    pub end: Option<End<'de>>,
}

impl<'de> Keys<'de> for DocKeys<'de> {
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "start" => self.start = Some(map.next_value()?),
            "intervals" => self.intervals = Some(map.next_value()?),
            "end" => self.end = Some(map.next_value()?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

pub type Doc<'de> = Obj<DocKeys<'de>>;

impl<'de> Doc<'de> {
    /// The document a `--json-stream` adds up to: `{"start", "intervals", "end"}` and an
    /// `error` when the stream had one.
    pub fn of_stream(
        start: Tree<'de>,
        intervals: Vec<Interval<'de>>,
        end: End<'de>,
        error: Option<String>,
    ) -> Doc<'de> {
        let mut rest = Map::new();
        if let Some(e) = error {
            rest.insert("error".into(), Value::String(e));
        }
        let keys = DocKeys {
            start: Some(start),
            intervals: Some(List::Items(intervals)),
            end: Some(end),
        };
        Obj::Object(keys, rest)
    }

    /// `start` (null when missing, as indexing the tree gives).
    pub fn start(&self) -> &Tree<'de> {
        self.keys()
            .and_then(|k| k.start.as_ref())
            .unwrap_or(&NULL_TREE)
    }

    pub fn intervals(&self) -> &[Interval<'de>] {
        self.keys()
            .and_then(|k| k.intervals.as_ref())
            .map_or(&[], List::items)
    }

    pub fn end(&self) -> Option<&EndKeys<'de>> {
        self.keys().and_then(|k| k.end.as_ref()).and_then(Obj::keys)
    }

    /// `end.cpu_utilization_percent`.
    pub fn cpu(&self) -> &Value {
        match self.keys().and_then(|k| k.end.as_ref()) {
            Some(end) => end.rest("cpu_utilization_percent"),
            None => &NULL,
        }
    }
}

/// What a `--json-stream` event's data is read as: `start` for the run's facts, intervals and
/// the end summary for their rows, the rest (`error`, events of later versions) as values.
pub enum EventData<'de> {
    Start(Tree<'de>),
    Interval(Interval<'de>),
    End(End<'de>),
    Value(Value),
}

impl<'de> EventData<'de> {
    fn of_value(name: Option<&str>, data: Value) -> EventData<'de> {
        // A value's shape is never an error to these types: the conversions cannot fail.
        match name {
            Some("start") => Tree::deserialize(data)
                .map_or_else(|_| EventData::Value(Value::Null), EventData::Start),
            Some("interval") => Interval::deserialize(data)
                .map_or_else(|_| EventData::Value(Value::Null), EventData::Interval),
            Some("end") => End::deserialize(data)
                .map_or_else(|_| EventData::Value(Value::Null), EventData::End),
            _ => EventData::Value(data),
        }
    }
}

/// One `--json-stream` line: `{"event": NAME, "data": ..}`.
pub struct Event<'de> {
    /// The event's name as the line has it (a string, unless the line is odd).
    pub name: Value,
    pub data: EventData<'de>,
}

impl<'de> Event<'de> {
    /// Reads the line; its data is read for the event it is when `event` comes first, as
    /// iperf3 prints it. A line with `data` first, or a key twice, is read as a tree and its
    /// data converted (the last of a repeated key counts, whatever came before it).
    pub fn read(line: &'de str) -> serde_json::Result<Event<'de>> {
        let first: InOrder = serde_json::from_str(line)?;
        if let Some(event) = first.0 {
            return Ok(event);
        }
        let mut tree: Value = serde_json::from_str(line)?;
        let name = tree["event"].take();
        let data = EventData::of_value(name.as_str(), tree["data"].take());
        Ok(Event { name, data })
    }
}

/// An event read in one pass, or `None` when its keys were not `event` then `data`, once each
/// (other keys are allowed anywhere).
struct InOrder<'de>(Option<Event<'de>>);

impl<'de> Deserialize<'de> for InOrder<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = InOrder<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut name: Option<Value> = None;
                let mut data: Option<EventData<'de>> = None;
                let mut in_order = true;
                while let Some(Key(k)) = a.next_key()? {
                    match k.as_ref() {
                        "event" => {
                            in_order &= name.is_none() && data.is_none();
                            name = Some(a.next_value()?);
                        }
                        "data" => {
                            in_order &= data.is_none();
                            data = Some(match name.as_ref().and_then(Value::as_str) {
                                Some("start") => EventData::Start(a.next_value()?),
                                Some("interval") => EventData::Interval(a.next_value()?),
                                Some("end") => EventData::End(a.next_value()?),
                                _ => EventData::Value(a.next_value()?),
                            });
                        }
                        // As a value, not skipped: a number out of range fails the line as the
                        // tree failed it.
                        _ => {
                            a.next_value::<Value>()?;
                        }
                    }
                }
                Ok(InOrder(in_order.then(|| Event {
                    name: name.unwrap_or(Value::Null),
                    data: data.unwrap_or(EventData::Value(Value::Null)),
                })))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests;
