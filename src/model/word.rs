//! Text from a small vocabulary that every row or run carries (the unit a tool printed, the
//! key of a fact): borrowed from the program when it is one of the texts linkperf knows, owned
//! otherwise. An import makes one per row and a score per run, and an owned copy of the same
//! few words was an allocation and a free each.

use std::borrow::Cow;
use std::collections::BTreeMap;

/// A known text borrowed, any other owned; reads, compares and serialises as the text.
pub type Word = Cow<'static, str>;

/// What a tool printed about a run's setup: key → value as printed.
pub type Facts = BTreeMap<Word, String>;

/// A command line's flags: name → value as typed, `"true"` for a flag without one. The names
/// linkperf knows and the `"true"` of a switch are borrowed: a command line is taken apart
/// for every run an import reads, and an owned copy of each name was an allocation and a free.
pub type Flags = BTreeMap<Word, Word>;

/// `text` as a [`Word`]: borrowed when `known` holds it, else an owned copy.
pub fn word(text: &str, known: &[&'static str]) -> Word {
    match known.iter().find(|k| **k == text) {
        Some(k) => Cow::Borrowed(k),
        None => Cow::Owned(text.to_string()),
    }
}

/// `text` kept for the rest of the program in a block of its own, alone on its cache lines:
/// for a table built once and then read on every core. A small block beside the blocks that
/// the building thread goes on allocating and freeing would share a cache line with them, and
/// each of that thread's writes would take the line from the other cores' caches.
pub fn shared_text(text: &str) -> &'static str {
    /// A cache line, and more: what lies before and after the text in its block.
    const PAD: usize = 128;
    let mut block = String::with_capacity(text.len() + 2 * PAD);
    block.extend(std::iter::repeat_n(' ', PAD));
    block.push_str(text);
    block.extend(std::iter::repeat_n(' ', PAD));
    let block: &'static str = Box::leak(block.into_boxed_str());
    &block[PAD..PAD + text.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_texts_are_borrowed_others_owned() {
        let known = ["Gb/sec", "usec"];
        assert!(matches!(word("usec", &known), Cow::Borrowed("usec")));
        let other = word("furlongs/fortnight", &known);
        assert!(matches!(other, Cow::Owned(_)));
        assert_eq!(other, "furlongs/fortnight");
    }

    #[test]
    fn shared_text_is_the_text() {
        assert_eq!(shared_text("dual_portdevice"), "dual_portdevice");
        assert_eq!(shared_text(""), "");
    }
}
