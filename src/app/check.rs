//! `runbook check`: parse every runbook and resolve its imports, without running anything, and
//! warn where a runbook breaks a house rule (a change before any cleanup, a step without a
//! name); as text, or as JSON for editors and CI annotations.

use std::path::PathBuf;
use std::sync::Arc;

use super::stdout::out;
use super::{AppResult, runtime};
use crate::cli::CheckArgs;
use crate::clock::VirtualClock;
use crate::error::{Error, Exit};
use crate::report::NullSink;
use crate::script::{
    self, Diagnostic, Extension, FaultKind, Host, HostConfig, Interrupt, Lint, lint_text,
};

/// A file's verdict, with the host whose sources render its diagnostic.
type Checked = (Arc<Host>, Result<(), Box<Diagnostic>>, Vec<Lint>);

pub(crate) fn execute(args: &CheckArgs) -> AppResult {
    let runtime = runtime::build()?;
    // The modules runbooks call (k8s::, eks::, ...) are known to the parser, never called.
    let extensions = crate::target::documentation_extensions(&runtime);
    let mut results: Vec<Option<Checked>> = args.files.iter().map(|_| None).collect();
    for (folder, members) in by_folder(&args.files) {
        let folder = (folder, members.as_slice());
        check_folder(&runtime, &extensions, &args.files, folder, &mut results)?;
    }
    let failures = if args.json {
        say_as_json(&args.files, results)
    } else {
        say_as_text(&args.files, results)
    };
    if failures > 0 {
        if !args.json {
            eprintln!("{failures} of {} runbooks have errors", args.files.len());
        }
        Ok(Exit::ScriptError)
    } else {
        Ok(Exit::Passed)
    }
}

/// The files' indices grouped by folder, in the order the folders first come: one engine per
/// folder, so that files side by side share their imports' resolution.
fn by_folder(files: &[PathBuf]) -> Vec<(PathBuf, Vec<usize>)> {
    let mut folders: Vec<(PathBuf, Vec<usize>)> = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let folder = crate::cli::runbook_folder(file);
        match folders.iter_mut().find(|(f, _)| *f == folder) {
            Some((_, members)) => members.push(index),
            None => folders.push((folder, vec![index])),
        }
    }
    folders
}

/// The files of a folder (`members`, indices into `files`) read, parsed with their imports
/// resolved and linted, on one engine; each verdict put in `results` at the file's index.
fn check_folder(
    runtime: &tokio::runtime::Runtime,
    extensions: &[Arc<dyn Extension>],
    files: &[PathBuf],
    (folder, members): (PathBuf, &[usize]),
    results: &mut [Option<Checked>],
) -> Result<(), Error> {
    // Messages show imports relative to the folder as the user named it.
    let shown = files[members[0]].display().to_string();
    let host = Host::builder(
        HostConfig::scratch(&shown, folder, std::env::temp_dir()),
        Arc::new(VirtualClock::new()),
        Arc::new(NullSink),
        Interrupt::new(),
        runtime.handle().clone(),
    )
    .build();
    let mut readable = Vec::new();
    for index in members {
        let file = &files[*index];
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
    let (h, ext) = (host.clone(), extensions.to_vec());
    let checked = runtime::run_script(runtime, move || script::check_files(&h, &sources, &ext))?;
    for ((index, _, text), result) in readable.iter().zip(checked) {
        results[*index] = Some((host.clone(), result, lint_text(text)));
    }
    Ok(())
}

/// Every error and warning as one JSON list on stdout; answers how many files have errors.
fn say_as_json(files: &[PathBuf], results: Vec<Option<Checked>>) -> usize {
    let mut failures = 0;
    let mut problems = Vec::new();
    for (file, result) in files.iter().zip(results) {
        let name = file.display().to_string();
        let Some((_, result, lints)) = result else {
            continue;
        };
        if let Err(diagnostic) = &result {
            failures += 1;
            problems.push(error_json(&name, diagnostic));
        }
        problems.extend(lints.iter().map(|lint| warning_json(&name, lint)));
    }
    out!(
        "{}",
        serde_json::to_string_pretty(&problems).unwrap_or_default()
    );
    failures
}

/// A line per file on stdout, its error and warnings on stderr; answers how many files have
/// errors.
fn say_as_text(files: &[PathBuf], results: Vec<Option<Checked>>) -> usize {
    let mut failures = 0;
    for (file, result) in files.iter().zip(results) {
        let name = file.display().to_string();
        let Some((host, result, lints)) = result else {
            continue;
        };
        match result {
            Ok(()) if lints.is_empty() => out!("ok      {name}"),
            Ok(()) => out!("ok      {name} ({} warnings)", lints.len()),
            Err(diagnostic) => {
                failures += 1;
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
    failures
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
