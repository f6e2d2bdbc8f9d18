//! Tab completion: REPL commands, modules, functions with their signatures, variables in
//! scope, and keys of maps held in variables (`node.` then Tab).

use std::sync::{Arc, Mutex};

use reedline::{Completer, CompletionResult, Span, Suggestion};
use rhai::{Dynamic, Map};

use super::commands::COMMANDS;
use crate::script::FunctionDoc;

/// What the completer knows, refreshed after every evaluation.
#[derive(Default)]
pub(super) struct Known {
    pub(super) functions: Vec<FunctionDoc>,
    pub(super) variables: Vec<(String, Dynamic)>,
    /// Module aliases imported in the session (`import "check" as check`).
    pub(super) modules: Vec<String>,
}

pub(super) struct RhaiCompleter {
    pub(super) known: Arc<Mutex<Known>>,
}

fn word_start(line: &str, pos: usize) -> usize {
    line[..pos]
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_alphanumeric() || matches!(c, '_' | ':' | '.')))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

fn suggestion(value: String, description: Option<String>, span: Span) -> Suggestion {
    Suggestion {
        value,
        description,
        span,
        append_whitespace: false,
        ..Suggestion::default()
    }
}

impl Completer for RhaiCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> CompletionResult {
        let pos = pos.min(line.len());
        let start = word_start(line, pos);
        let word = &line[start..pos];
        let span = Span::new(start, pos);
        let known = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if line.trim_start().starts_with(':') && !line[..start].contains(' ') {
            return CompletionResult::fresh(commands(line, pos));
        }
        if let Some((variable, partial)) = word.rsplit_once('.') {
            return CompletionResult::fresh(map_keys(&known, variable, partial, span));
        }
        CompletionResult::fresh(names(&known, word, span))
    }
}

/// The REPL commands that start as typed (from the `:`).
fn commands(line: &str, pos: usize) -> Vec<Suggestion> {
    let command_start = line.find(':').unwrap_or(0);
    let typed = &line[command_start..pos];
    COMMANDS
        .iter()
        .filter(|(command, _)| command.starts_with(typed))
        .map(|(command, help)| {
            suggestion(
                (*command).to_string(),
                Some((*help).to_string()),
                Span::new(command_start, pos),
            )
        })
        .collect()
}

/// Keys of a map held in a variable: `node.` + Tab.
fn map_keys(known: &Known, variable: &str, partial: &str, span: Span) -> Vec<Suggestion> {
    let map = known
        .variables
        .iter()
        .find(|(name, _)| name == variable)
        .and_then(|(_, v)| v.read_lock::<Map>().map(|m| m.clone()));
    let mut out = Vec::new();
    for (key, value) in map.into_iter().flatten() {
        if key.starts_with(partial) {
            let shown = format!("{variable}.{key}");
            out.push(suggestion(shown, Some(value.type_name().to_string()), span));
        }
    }
    out
}

/// Functions, modules and variables that start with `word`, each once, sorted.
fn names(known: &Known, word: &str, span: Span) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for doc in &known.functions {
        let name = if doc.module.is_empty() {
            doc.name.clone()
        } else {
            format!("{}::{}", doc.module, doc.name)
        };
        if name.starts_with(word) && seen.insert(name.clone()) {
            out.push(suggestion(name, Some(doc.signature.clone()), span));
        }
    }
    for module in module_names(known) {
        let path = format!("{module}::");
        if path.starts_with(word) && !word.contains("::") && seen.insert(path.clone()) {
            out.push(suggestion(path, Some("module".into()), span));
        }
    }
    for (name, value) in &known.variables {
        if name.starts_with(word) && seen.insert(name.clone()) {
            out.push(suggestion(
                name.clone(),
                Some(value.type_name().to_string()),
                span,
            ));
        }
    }
    out.sort_by(|a, b| a.value.cmp(&b.value));
    out
}

/// The modules of the known functions and those imported, sorted, each once.
fn module_names(known: &Known) -> Vec<String> {
    let mut modules: Vec<String> = known
        .functions
        .iter()
        .filter(|d| !d.module.is_empty())
        .map(|d| d.module.clone())
        .collect();
    modules.extend(known.modules.iter().cloned());
    modules.sort();
    modules.dedup();
    modules
}
