//! `runbook check`: parse every runbook and resolve its imports, without running anything, and
//! warn where a runbook breaks a house rule (a change before any cleanup, a step without a
//! name); as text, or as JSON for editors and CI annotations.

use super::stdout::out;
use std::sync::Arc;

use super::{AppResult, runtime};
use crate::cli::CheckArgs;
use crate::clock::VirtualClock;
use crate::error::Exit;
use crate::report::NullSink;
use crate::script::{self, Diagnostic, FaultKind, Host, HostConfig, Interrupt, Lint, lint_text};

/// A file's verdict, with the host whose sources render its diagnostic.
type Checked = (Arc<Host>, Result<(), Box<Diagnostic>>, Vec<Lint>);

pub(crate) fn execute(args: &CheckArgs) -> AppResult {
    let runtime = runtime::build()?;
    // The modules runbooks call (k8s::, eks::, ...) are known to the parser, never called.
    let extensions = crate::target::documentation_extensions(&runtime);
    // One engine per folder: files side by side share their imports' resolution.
    let mut folders: Vec<(std::path::PathBuf, Vec<usize>)> = Vec::new();
    for (index, file) in args.files.iter().enumerate() {
        let folder = crate::cli::runbook_folder(file);
        match folders.iter_mut().find(|(f, _)| *f == folder) {
            Some((_, members)) => members.push(index),
            None => folders.push((folder, vec![index])),
        }
    }
    let mut results: Vec<Option<Checked>> = args.files.iter().map(|_| None).collect();
    for (folder, members) in folders {
        // Messages show imports relative to the folder as the user named it.
        let shown = args.files[members[0]].display().to_string();
        let host = Host::builder(
            HostConfig::scratch(&shown, folder, std::env::temp_dir()),
            Arc::new(VirtualClock::new()),
            Arc::new(NullSink),
            Interrupt::new(),
            runtime.handle().clone(),
        )
        .build();
        let mut readable = Vec::new();
        for index in &members {
            let file = &args.files[*index];
            let name = file.display().to_string();
            match crate::sandbox::read_text_file(file, crate::sandbox::TEXT_FILE_LIMIT) {
                Ok(text) => readable.push((*index, name, text)),
                Err(e) => {
                    let diagnostic =
                        Diagnostic::new(FaultKind::Script, format!("cannot read {name}: {e}"));
                    results[*index] = Some((host.clone(), Err(Box::new(diagnostic)), Vec::new()));
                }
            }
        }
        let sources: Vec<(String, String)> = readable
            .iter()
            .map(|(_, name, text)| (name.clone(), text.clone()))
            .collect();
        let (h, ext) = (host.clone(), extensions.clone());
        let checked =
            runtime::run_script(&runtime, move || script::check_files(&h, &sources, &ext))?;
        for ((index, _, text), result) in readable.iter().zip(checked) {
            results[*index] = Some((host.clone(), result, lint_text(text)));
        }
    }
    let mut failures = 0;
    let mut problems = Vec::new();
    for (file, result) in args.files.iter().zip(results) {
        let name = file.display().to_string();
        let Some((host, result, lints)) = result else {
            continue;
        };
        if result.is_err() {
            failures += 1;
        }
        if args.json {
            if let Err(diagnostic) = &result {
                problems.push(error_json(&name, diagnostic));
            }
            problems.extend(lints.iter().map(|lint| warning_json(&name, lint)));
            continue;
        }
        match result {
            Ok(()) if lints.is_empty() => out!("ok      {name}"),
            Ok(()) => out!("ok      {name} ({} warnings)", lints.len()),
            Err(diagnostic) => {
                out!("error   {name}");
                eprint!("{}", diagnostic.render(&host.sources, false));
            }
        }
        for lint in &lints {
            eprint!(
                "{}",
                warning_text(&name, lint, host.sources.line(&name, lint.line))
            );
        }
    }
    if args.json {
        out!(
            "{}",
            serde_json::to_string_pretty(&problems).unwrap_or_default()
        );
    }
    if failures > 0 {
        if !args.json {
            eprintln!("{failures} of {} runbooks have errors", args.files.len());
        }
        Ok(Exit::ScriptError)
    } else {
        Ok(Exit::Passed)
    }
}

fn error_json(file: &str, diagnostic: &Diagnostic) -> serde_json::Value {
    let location = diagnostic.location.as_ref();
    serde_json::json!({
        "file": location.map_or(file, |l| l.source.as_str()),
        "line": location.map(|l| l.line),
        "column": location.map(|l| l.column),
        "severity": "error",
        "message": diagnostic.message,
        "help": diagnostic.help,
    })
}

fn warning_json(file: &str, lint: &Lint) -> serde_json::Value {
    serde_json::json!({
        "file": file,
        "line": lint.line,
        "column": lint.column,
        "severity": "warning",
        "message": lint.message,
        "help": [lint.help],
    })
}

/// A warning as errors are shown: the line, a caret under the call, what to do.
fn warning_text(file: &str, lint: &Lint, source_line: Option<String>) -> String {
    let mut out = format!(
        "warning: {}\n  --> {file}:{}:{}\n",
        lint.message, lint.line, lint.column
    );
    if let Some(text) = source_line {
        let gutter = lint.line.to_string().len();
        out.push_str(&format!(
            "{:gutter$} |\n{} | {text}\n{:gutter$} | {}^\n",
            "",
            lint.line,
            "",
            " ".repeat(lint.column.saturating_sub(1))
        ));
    }
    out.push_str(&format!("  = help: {}\n", lint.help));
    out
}
