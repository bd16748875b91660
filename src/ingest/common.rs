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
