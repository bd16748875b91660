//! Number and table formatting in one place, so every view prints values the same way.

/// A value with the precision a reader expects: two decimals from 1 up (`97.56`, `4.48`), four
/// significant digits below (`0.001454`).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".into();
    }
    if v.abs() >= 1.0 {
        return format!("{v:.2}");
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    // Four significant digits at most, without padding: 0.58, not 0.5800.
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `8388608` → `8 MiB`.
pub fn bytes_label(bytes: f64) -> String {
    let b = bytes.round() as u64;
    match b {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// `0.977` → `97.7 %`.
pub fn pct(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// `0.5738` → `0.57×`.
pub fn ratio(r: f64) -> String {
    format!("{r:.2}×")
}

/// Renders rows as a left-aligned text table with a header rule.
pub fn text_table(headers: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = line(headers);
    out.push('\n');
    out.push_str(
        &widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
    );
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

/// Escapes a cell for a GitHub-flavoured Markdown table: pipes, line breaks, and the
/// characters GitHub would read as HTML. The one escaper of every Markdown linkperf writes.
pub fn md_cell(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

/// Renders rows as a GitHub-flavoured Markdown table.
pub fn markdown_table(headers: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n",
        headers
            .iter()
            .map(|h| md_cell(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    out.push_str(&format!("|{}\n", "---|".repeat(headers.len())));
    for r in rows {
        out.push_str(&format!(
            "| {} |\n",
            r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    out
}

/// Renders rows as CSV (RFC 4180 quoting).
pub fn csv(headers: &[String], rows: &[Vec<String>]) -> String {
    let cell = |c: &String| {
        if c.contains([',', '"', '\n']) {
            format!("\"{}\"", c.replace('"', "\"\""))
        } else {
            c.clone()
        }
    };
    let mut out = String::new();
    for r in std::iter::once(headers.to_vec()).chain(rows.iter().cloned()) {
        out.push_str(&r.iter().map(cell).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(97.56), "97.56");
        assert_eq!(num(4.48161), "4.48");
        assert_eq!(num(0.001454), "0.001454");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(0.58), "0.58");
        assert_eq!(pct(0.97742), "97.7 %");
        assert_eq!(ratio(5.43 / 1.97), "2.76×");
    }

    #[test]
    fn tables() {
        let h = vec!["a".to_string(), "bb".to_string()];
        let r = vec![vec!["x|y".to_string(), "1,2".to_string()]];
        assert_eq!(
            markdown_table(&h, &r),
            "| a | bb |\n|---|---|\n| x\\|y | 1,2 |\n"
        );
        assert_eq!(csv(&h, &r), "a,bb\nx|y,\"1,2\"\n");
        assert_eq!(text_table(&h, &r), "a    bb\n---  ---\nx|y  1,2\n");
    }
}
