//! Object keys and entries as the documents' types read them, and [`Tree`]: any JSON value
//! with its keys and strings borrowed from the text.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::Number;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

/// An object key: borrowed from the text unless it held an escape.
pub(super) struct Key<'de>(pub(super) Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// An object's entries sorted by key, the last of a repeated key kept (as a map keeps them).
pub type Entries<'de, V> = Vec<(Cow<'de, str>, V)>;

/// Reads an object's entries, then sorts them by key and keeps the last of a repeated key.
pub(super) fn entries_of<'de, V: Deserialize<'de>, A: MapAccess<'de>>(
    mut a: A,
    capacity: usize,
) -> Result<Entries<'de, V>, A::Error> {
    let mut entries: Entries<'de, V> = Vec::with_capacity(capacity);
    while let Some(Key(k)) = a.next_key()? {
        entries.push((k, a.next_value()?));
    }
    // Stable: of equal keys the one read last stays last, and is the one kept.
    entries.sort_by(|x, y| key_order(&x.0, &y.0));
    if !entries.windows(2).any(|w| w[0].0 == w[1].0) {
        // No key twice, as iperf3 prints them: kept as they are.
        return Ok(entries);
    }
    let mut kept: Entries<'de, V> = Vec::with_capacity(entries.len());
    for e in entries {
        match kept.last_mut() {
            Some(last) if last.0 == e.0 => *last = e,
            _ => kept.push(e),
        }
    }
    Ok(kept)
}

/// The order of `str`'s `cmp` (byte-wise), the first bytes compared in place: iperf3's keys
/// mostly differ there, and a `memcmp` call a pair was most of sorting an object's keys.
#[inline]
pub(super) fn key_order(x: &str, y: &str) -> Ordering {
    match (x.as_bytes().first(), y.as_bytes().first()) {
        (Some(a), Some(b)) if a != b => a.cmp(b),
        _ => x.cmp(y),
    }
}

/// Any JSON value, as a [`Value`] holds it (so equal exactly when the trees are, and written
/// as the same bytes) but with its keys and strings borrowed from the text and an object's
/// entries in one vector: `start` is most of a document's keys and strings, and a [`Value`]
/// allocated each of them (a `BTreeMap` node and a `String` a key).
///
/// [`Value`]: serde_json::Value
#[derive(Debug, Clone, PartialEq)]
pub enum Tree<'de> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'de, str>),
    Array(Vec<Tree<'de>>),
    Object(Entries<'de, Tree<'de>>),
}

pub(super) static NULL_TREE: Tree<'static> = Tree::Null;

impl<'de> Tree<'de> {
    /// The value of `key` in an object (`None` for a missing key, or when not an object).
    pub fn get(&self, key: &str) -> Option<&Tree<'de>> {
        match self {
            Tree::Object(e) => e
                .binary_search_by(|(k, _)| key_order(k, key))
                .ok()
                .map(|i| &e[i].1),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Tree::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Tree::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Tree::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// Compact JSON, keys sorted: the bytes the tree wrote for it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a JSON value always serializes")
    }
}

/// `tree["key"]`: the value, or null when missing (as indexing a `serde_json::Value` gives).
impl<'de> std::ops::Index<&str> for Tree<'de> {
    type Output = Tree<'de>;
    fn index(&self, key: &str) -> &Tree<'de> {
        self.get(key).unwrap_or(&NULL_TREE)
    }
}

impl<'de> Deserialize<'de> for Tree<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Tree::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Tree::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Tree::Number(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                // As the tree: a float that is no JSON number (never read from text) is null.
                Ok(Number::from_f64(v).map_or(Tree::Null, Tree::Number))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Tree::String(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Tree::String(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Tree::String(Cow::Owned(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Tree::Null)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Tree::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                Tree::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element()? {
                    items.push(item);
                }
                Ok(Tree::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                entries_of(a, 8).map(Tree::Object)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Tree<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tree::Null => s.serialize_unit(),
            Tree::Bool(b) => s.serialize_bool(*b),
            Tree::Number(n) => n.serialize(s),
            Tree::String(t) => s.serialize_str(t),
            Tree::Array(items) => s.collect_seq(items),
            Tree::Object(e) => s.collect_map(e.iter().map(|(k, v)| (k.as_ref(), v))),
        }
    }
}
