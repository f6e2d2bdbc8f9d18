//! Functions a reader can hold: no function of the product's code (src/, tests left out) runs
//! over 120 lines, and at most 20 run over 80, the data tables named below excepted. A
//! function's length is counted from its `fn` line to its closing brace, both included; braces
//! inside comments, strings and character literals do not count.

use std::path::{Path, PathBuf};

use crate::support::repo_root;

/// The longest a function may be.
const MOST_LINES: usize = 120;
/// A function over this many lines is long; a few may be.
const LONG_LINES: usize = 80;
const MOST_LONG: usize = 20;

/// Functions that are one literal of facts rather than logic: splitting them would scatter a
/// table a reader wants whole. Each is (file, function, why).
const DATA_TABLES: &[(&str, &str, &str)] = &[
    (
        "src/sim/kube/auth/rbac/bootstrap.rs",
        "aggregate_to_view",
        "the rules of Kubernetes' aggregated view role, as the real cluster has them",
    ),
    (
        "src/sim/kube/auth/rbac/bootstrap.rs",
        "aggregate_to_edit",
        "the rules of Kubernetes' aggregated edit role, as the real cluster has them",
    ),
];

#[derive(Debug)]
struct Function {
    file: String,
    line: usize,
    name: String,
    lines: usize,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Test-only files: a module's tests kept beside it, and the helpers only tests use.
fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name == "test_support.rs"
        || name == "test_fixtures.rs"
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// The text with comments, strings and character literals blanked (newlines kept), so the
/// braces and words left are code's.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&chars, i) {
            out.extend(chars[i..end].iter().map(|&c| blank(c)));
            i = end;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let skip = if chars[i] == '\\' { 2 } else { 1 };
                for _ in 0..skip.min(chars.len() - i) {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\''
            && let Some(end) = char_literal_end(&chars, i)
        {
            out.extend(std::iter::repeat_n(' ', end - i));
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where a raw string starting at `i` (`r"..."`, `r#"..."#`, `br"..."`) ends, or None.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let before_is_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if before_is_word || chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// Where a character literal starting at `i` ends, or None for a lifetime (`'a`).
fn char_literal_end(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1)? {
        '\\' => {
            let close = chars[i + 2..].iter().position(|&c| c == '\'')?;
            Some(i + 2 + close + 1)
        }
        _ if chars.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// Every function with a body in `text`, up to the file's `#[cfg(test)] mod` if it has one.
fn functions(file: &str, text: &str) -> Vec<Function> {
    let code = code_only(text);
    let lines: Vec<&str> = code.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].starts_with("#[cfg(test)]") && w[1].starts_with("mod "))
        .unwrap_or(lines.len());
    let code: String = lines[..end].join("\n");
    let bytes = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("fn ").map(|at| at + from) {
        from = at + 3;
        let word_start =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let name: String = code[at + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !word_start || name.is_empty() {
            continue;
        }
        // The body opens at the first `{` after the signature; a `;` first is a declaration.
        let Some(open) = code[at..].find(['{', ';']).map(|o| o + at) else {
            continue;
        };
        if bytes[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut close = open;
        for (offset, b) in bytes[open..].iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + offset;
                        break;
                    }
                }
                _ => {}
            }
        }
        found.push(Function {
            file: file.to_string(),
            line: line_of(at),
            name,
            lines: line_of(close) - line_of(at) + 1,
        });
    }
    found
}

fn product_functions() -> Vec<Function> {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    files
        .iter()
        .filter(|path| !is_test_file(path))
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).expect("a source file");
            let file = path
                .strip_prefix(&root)
                .unwrap_or(path)
                .display()
                .to_string();
            functions(&file, &text)
        })
        .collect()
}

fn is_data_table(function: &Function) -> bool {
    DATA_TABLES
        .iter()
        .any(|(file, name, _)| function.file == *file && function.name == *name)
}

fn listing(functions: &[&Function]) -> String {
    functions
        .iter()
        .map(|f| format!("  {}:{} {} ({} lines)", f.file, f.line, f.name, f.lines))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_function_runs_past_the_bound_and_few_are_long() {
    let all = product_functions();
    assert!(
        all.len() > 1000,
        "found only {} functions under src/",
        all.len()
    );
    let mut too_long: Vec<&Function> = all
        .iter()
        .filter(|f| f.lines > MOST_LINES && !is_data_table(f))
        .collect();
    too_long.sort_by_key(|f| std::cmp::Reverse(f.lines));
    assert!(
        too_long.is_empty(),
        "functions over {MOST_LINES} lines (split them into named steps, or, if one is a single \
         literal of data, list it in DATA_TABLES with why):\n{}",
        listing(&too_long)
    );
    let mut long: Vec<&Function> = all
        .iter()
        .filter(|f| f.lines > LONG_LINES && !is_data_table(f))
        .collect();
    long.sort_by_key(|f| std::cmp::Reverse(f.lines));
    assert!(
        long.len() <= MOST_LONG,
        "{} functions run over {LONG_LINES} lines, more than the {MOST_LONG} allowed; the longest \
         are:\n{}",
        long.len(),
        listing(&long)
    );
}

#[test]
fn every_listed_data_table_exists_and_is_long() {
    let all = product_functions();
    for (file, name, _) in DATA_TABLES {
        let function = all
            .iter()
            .find(|f| f.file == *file && f.name == *name)
            .unwrap_or_else(|| panic!("DATA_TABLES names {file} {name}, which is not there"));
        assert!(
            function.lines > LONG_LINES,
            "{file} {name} is {} lines now: take it off DATA_TABLES",
            function.lines
        );
    }
}

#[test]
fn the_counter_skips_braces_in_comments_strings_and_characters() {
    let text = "fn a() {\n    let s = \"}}}\"; // }\n    let c = '}';\n    let r = r#\"{\"#;\n    /* } */\n}\nfn b<'a>(x: &'a str) -> &'a str {\n    x\n}\ntrait T { fn c(); }\n";
    let found = functions("x.rs", text);
    let summary: Vec<(String, usize, usize)> = found
        .iter()
        .map(|f| (f.name.clone(), f.line, f.lines))
        .collect();
    assert_eq!(
        summary,
        vec![("a".to_string(), 1, 6), ("b".to_string(), 7, 3)]
    );
}
