//! "Did you mean": the nearest known function or variable name to a misspelt one.

use std::collections::BTreeSet;

use rhai::Engine;

/// The closest candidates by edit distance, best first, at most three.
pub(crate) fn nearest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter(|c| *c != wanted)
        .map(|c| (strsim::levenshtein(&wanted_lower, &c.to_lowercase()), c))
        .filter(|(distance, c)| *distance <= (wanted.len().max(c.len()) / 3).max(2))
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_string())
        .collect()
}

/// Every function name a script can call: host functions, module functions (`json::parse`),
/// Rhai's standard library, and functions the script defines.
fn function_names(engine: &Engine, script: Option<&str>) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = engine
        .gen_fn_signatures(true)
        .into_iter()
        .filter_map(|sig| sig.split('(').next().map(|n| n.trim().to_string()))
        .filter(|n| !n.starts_with("get$") && !n.starts_with("set$") && !n.starts_with("index$"))
        .collect();
    if let Some(script) = script {
        names.extend(
            script_words(script)
                .into_iter()
                .filter(|w| script.contains(&format!("fn {w}("))),
        );
    }
    names
}

fn signatures_named(engine: &Engine, name: &str) -> Vec<String> {
    let mut signatures: Vec<String> = engine
        .gen_fn_signatures(true)
        .into_iter()
        .filter(|sig| sig.split('(').next().map(str::trim) == Some(name))
        .collect();
    signatures.sort();
    signatures
}

pub(crate) fn for_function(engine: &Engine, script: Option<&str>, signature: &str) -> Vec<String> {
    let name = signature.split(" (").next().unwrap_or(signature).trim();
    let known = signatures_named(engine, name);
    if !known.is_empty() {
        let mut help = vec![format!(
            "`{name}` exists, but not for these argument types; it takes:"
        )];
        help.extend(known.into_iter().map(|sig| format!("    {sig}")));
        return vec![help.join("\n")];
    }
    let names = function_names(engine, script);
    let close = nearest(name, names.iter().map(String::as_str));
    match close.as_slice() {
        [] => vec![format!("`runbook docs` lists every function")],
        [one] => vec![format!("did you mean `{one}`?")],
        many => vec![format!(
            "did you mean one of: {}?",
            many.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )],
    }
}

pub(crate) fn for_variable(script: Option<&str>, name: &str) -> Vec<String> {
    let words = script.map(script_words).unwrap_or_default();
    match nearest(name, words.iter().map(String::as_str)).first() {
        Some(close) => vec![format!("did you mean `{close}`?")],
        None => vec![format!("declare it first with `let {name} = ...;`")],
    }
}

/// Identifiers in a script's text: a cheap stand-in for the names in scope.
fn script_words(script: &str) -> BTreeSet<String> {
    script
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_close_names_only() {
        let names = ["wait_until", "snapshot", "step", "defer"];
        assert_eq!(nearest("wait_untl", names), vec!["wait_until"]);
        assert_eq!(nearest("snapshto", names), vec!["snapshot"]);
        assert!(nearest("completely_different", names).is_empty());
    }
}
