//! The size limits ARCHITECTURE.md sets for the source tree: no function over 120 lines outside
//! tests, no file over 600 lines (the FFI bindings excepted). Lines are counted as written,
//! from the `fn` line to its closing brace, comments and blank lines included.

use std::path::{Path, PathBuf};

const MAX_FN_LINES: usize = 120;
const MAX_FILE_LINES: usize = 600;
/// Generated-style bindings: one declaration after another, nothing to split.
const FILE_LIMIT_EXEMPT: &[&str] = &["src/verbs/ffi.rs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The start of a function item: `fn`, after visibility and qualifiers.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
        "extern \"C\" ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&name[..end])
}

/// (name, first line, length) of every function with a body, outside `#[cfg(test)]` modules.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let test_module = lines
        .iter()
        .position(|l| l.trim() == "#[cfg(test)]")
        .filter(|&i| lines.get(i + 1).is_some_and(|l| l.contains("mod ")))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().take(test_module) {
        let Some(name) = fn_name(line) else {
            continue;
        };
        let indent = &line[..line.len() - line.trim_start().len()];
        // A declaration without a body (a trait method) ends with `;` before any `{`.
        let body = lines[i..]
            .iter()
            .position(|l| l.contains('{') || l.trim_end().ends_with(';'));
        if body.is_none_or(|b| !lines[i + b].contains('{')) {
            continue;
        }
        if line.trim_end().ends_with('}') {
            continue; // one-line function
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close) {
            out.push((name.to_string(), i + 1, end + 2));
        }
    }
    out
}

#[test]
fn functions_and_files_stay_small() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut over = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(file).unwrap();
        let n = text.lines().count();
        if n > MAX_FILE_LINES && !FILE_LIMIT_EXEMPT.contains(&rel.as_str()) {
            over.push(format!("{rel}: {n} lines (limit {MAX_FILE_LINES})"));
        }
        if file.file_name().is_some_and(|f| f == "tests.rs") {
            continue;
        }
        for (name, line, len) in functions(&text) {
            if len > MAX_FN_LINES {
                over.push(format!(
                    "{rel}:{line}: fn {name} is {len} lines (limit {MAX_FN_LINES})"
                ));
            }
        }
    }
    assert!(over.is_empty(), "over the limits:\n{}", over.join("\n"));
}

#[test]
fn the_counter_sees_long_functions() {
    let body = "    x += 1;\n".repeat(130);
    let text = format!("pub fn long(x: &mut u32) {{\n{body}}}\nfn short() {{}}\n");
    assert_eq!(functions(&text), vec![("long".to_string(), 1, 132)]);
    let in_impl = format!("impl A {{\n    pub(super) fn m(&self) {{\n{body}    }}\n}}\n");
    assert_eq!(functions(&in_impl), vec![("m".to_string(), 2, 132)]);
    let tests = format!("#[cfg(test)]\nmod tests {{\n    fn t() {{\n{body}    }}\n}}\n");
    assert!(functions(&tests).is_empty());
}
