//! The core crate's size rules, checked over its source: no source file over
//! 1,200 lines, and no function over 80 lines (from its `fn` line to the
//! closing brace at the same indentation, as rustfmt lays them out). A
//! compute kernel that must stay whole says so in a doc line starting with
//! "Kept in one piece:" and is exempt.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::string_slice
)]

use std::fs;
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 1200;
const MAX_FN_LINES: usize = 80;
const EXEMPT_MARK: &str = "/// Kept in one piece:";

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    files.sort();
    assert!(files.len() > 50, "found only {} source files", files.len());
    files
}

/// The name of the function declared on `line`, if it declares one.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "unsafe ",
        "extern \"C\" ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

/// Functions over the limit in one file: (name, first line, length).
fn long_functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let indent = &line[..line.len() - line.trim_start().len()];
        // Declarations without a body (trait methods, extern items) end in ';'.
        let Some(open) = (i..lines.len()).find(|&j| {
            let l = lines[j].trim_end();
            l.ends_with('{') || l.ends_with(';')
        }) else {
            continue;
        };
        if lines[open].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        let Some(end) = (open + 1..lines.len()).find(|&j| lines[j] == close) else {
            continue;
        };
        let len = end - i + 1;
        let exempt = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim_start().starts_with("///") || l.trim_start().starts_with("#["))
            .any(|l| l.trim_start().starts_with(EXEMPT_MARK));
        if len > MAX_FN_LINES && !exempt {
            out.push((name.to_string(), i + 1, len));
        }
    }
    out
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let long: Vec<String> = all_sources()
        .into_iter()
        .filter_map(|p| {
            let n = fs::read_to_string(&p).unwrap().lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these files: {long:#?}");
}

#[test]
fn no_function_is_over_the_line_limit() {
    let mut long = Vec::new();
    for p in all_sources() {
        for (name, line, len) in long_functions(&fs::read_to_string(&p).unwrap()) {
            long.push(format!("{}:{line} fn {name} ({len} lines)", p.display()));
        }
    }
    assert!(long.is_empty(), "split these functions: {long:#?}");
}

#[test]
fn the_function_length_check_counts_bodies() {
    let body: String = (0..MAX_FN_LINES)
        .map(|k| format!("    let x{k} = {k};\n"))
        .collect();
    let long = format!("pub fn big() {{\n{body}}}\n\nfn small() {{\n    1\n}}\n");
    assert_eq!(
        long_functions(&long),
        vec![("big".to_string(), 1, MAX_FN_LINES + 2)]
    );
    let exempt = format!("{EXEMPT_MARK} one loop nest.\n{long}");
    assert!(long_functions(&exempt).is_empty());
    assert!(long_functions("trait T {\n    fn f(&self);\n}\n").is_empty());
}

/// `[lib] test = false`: a `cfg(test)` module in `src/` would never run
/// (tests of internals belong in `tests/internals/`).
#[test]
fn no_unit_tests_in_the_library() {
    let marker = ["#[cfg(", "test)]"].concat();
    let offenders: Vec<String> = all_sources()
        .into_iter()
        .filter(|p| fs::read_to_string(p).unwrap().contains(&marker))
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "unit tests in src/ (move them to tests/internals/): {offenders:?}"
    );
}
