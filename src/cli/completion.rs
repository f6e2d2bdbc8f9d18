//! What the shell completes beyond clap's own flags: runbook files (`.rhai` and folders) and
//! `--set` keys, read from the `params(...)` of the runbook named on the same command line.
//! The shell asks the binary itself (`RUNBOOK_COMPLETE=bash runbook -- WORDS...`), so the keys
//! are the runbook's as it is now.

use std::ffi::OsStr;
use std::path::Path;

use clap_complete::{ArgValueCompleter, CompletionCandidate, PathCompleter};

/// The environment variable the completion scripts set when they ask for candidates.
pub const COMPLETE_VAR: &str = "RUNBOOK_COMPLETE";

/// `.rhai` files and folders.
pub(super) fn runbook_files() -> ArgValueCompleter {
    ArgValueCompleter::new(
        PathCompleter::any()
            .filter(|path| path.is_dir() || path.extension().is_some_and(|e| e == "rhai")),
    )
}

/// `KEY=` for each parameter of the runbook on the command line being completed.
pub(super) fn set_keys() -> ArgValueCompleter {
    ArgValueCompleter::new(|current: &OsStr| {
        let typed = current.to_string_lossy();
        if typed.contains('=') {
            return Vec::new();
        }
        // The words being completed follow `--` in the completer's own arguments.
        let words: Vec<String> = std::env::args().skip_while(|a| a != "--").skip(1).collect();
        let Some(text) = words.iter().filter(|w| w.ends_with(".rhai")).find_map(|w| {
            crate::sandbox::read_text_file(Path::new(w), crate::sandbox::TEXT_FILE_LIMIT).ok()
        }) else {
            return Vec::new();
        };
        crate::script::param_keys(&text)
            .into_iter()
            .filter(|key| key.starts_with(typed.as_ref()))
            .map(|key| CompletionCandidate::new(format!("{key}=")))
            .collect()
    })
}
