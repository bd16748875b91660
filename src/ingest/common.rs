//! Small line-reading helpers shared by the tool parsers.

/// Scans a decimal number at the start of `input` (`2`, `-0.5`, `11403.46`, `1e+06`) and
/// returns it with the rest of the input.
pub fn leading_number(input: &str) -> Option<(&str, &str)> {
    let b = input.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if digits(&mut i) == 0 {
        return None;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        digits(&mut i);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digits(&mut j) > 0 {
            i = j;
        }
    }
    Some((&input[..i], &input[i..]))
}

/// Collapses every run of whitespace to one space and trims the ends.
pub fn squash(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    if line.is_ascii() {
        // The common case, byte by byte: `split_whitespace` decodes every character.
        // Unicode's White_Space in ASCII: `is_ascii_whitespace` and the vertical tab.
        let space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i..].iter().position(|b| !space(b)) {
                Some(skip) => i += skip,
                None => break,
            }
            let end = bytes[i..]
                .iter()
                .position(space)
                .map_or(bytes.len(), |n| i + n);
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&line[i..end]);
            i = end;
        }
        return out;
    }
    for w in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// A printed key in snake case: `Data ex. method` → `data_ex_method`, `ibv_wr* API` →
/// `ibv_wr_api`. Used for banner keys, device facts and iperf header lines.
pub fn snake_key(key: &str) -> String {
    let mut s = String::with_capacity(key.len());
    for w in key.split(|c: char| !c.is_ascii_alphanumeric()) {
        if w.is_empty() {
            continue;
        }
        if !s.is_empty() {
            s.push('_');
        }
        s.extend(w.chars().map(|c| c.to_ascii_lowercase()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squash_by_bytes_is_squash_by_words() {
        let by_words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut lines = crate::ingest::fixture_lines_with(&["fixtures"], " ");
        lines.extend(
            [
                "",
                " ",
                "\x0b a\x0b",
                "\t a \x0c b\r",
                " a\u{3000}b ",
                "x\x1fy",
                "\x0b",
            ]
            .map(String::from),
        );
        for l in &lines {
            assert_eq!(squash(l), by_words(l), "{l:?}");
        }
    }
}
