//! `runbook docs`: every host function with its signature and a one-line doc.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{AppResult, runtime};
use crate::cli::DocsArgs;
use crate::clock::VirtualClock;
use crate::error::{Error, Exit};
use crate::report::NullSink;
use crate::script::{Host, HostConfig, Interrupt, build_engine, definition_files, function_docs};

/// What `runbook docs` calls the global functions.
const CORE: &str = "core";

pub(crate) fn execute(args: &DocsArgs) -> AppResult {
    if let Some(dir) = &args.man {
        return write_man_pages(dir);
    }
    let runtime = runtime::build()?;
    let host = Host::builder(
        HostConfig::scratch(
            "<docs>",
            std::env::current_dir().unwrap_or_default(),
            std::env::temp_dir(),
        ),
        Arc::new(VirtualClock::new()),
        Arc::new(NullSink),
        Interrupt::new(),
        runtime.handle().clone(),
    )
    .build();
    let engine = build_engine(&host, &crate::target::documentation_extensions(&runtime));
    if let Some(dir) = &args.definitions {
        return write_definitions(&engine, dir);
    }
    let docs = function_docs(&engine);
    let module_of = |m: &str| {
        if m.is_empty() {
            CORE.to_string()
        } else {
            m.to_string()
        }
    };
    let modules: BTreeSet<String> = docs.iter().map(|d| module_of(&d.module)).collect();
    if let Some(wanted) = &args.module
        && !modules.contains(wanted)
    {
        let known: Vec<&str> = modules.iter().map(String::as_str).collect();
        return Err(Error::Usage(format!(
            "no module `{wanted}`; modules: {}",
            known.join(", ")
        )));
    }
    let mut out = String::new();
    for module in &modules {
        if args.module.as_ref().is_some_and(|m| m != module) {
            continue;
        }
        out.push_str(&format!("# {module}\n\n"));
        for doc in docs.iter().filter(|d| &module_of(&d.module) == module) {
            out.push_str(&format!("{}\n", doc.signature));
            for line in doc.doc.lines() {
                out.push_str(&format!("    {line}\n"));
            }
            out.push('\n');
        }
    }
    // `runbook docs | head` closes the pipe early: that is the reader's choice, not an error.
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(Exit::Passed)
}

/// `--definitions DIR`: the definition files, each replaced if it is there.
fn write_definitions(engine: &rhai::Engine, dir: &std::path::Path) -> AppResult {
    let error = |source| Error::Write {
        path: dir.to_path_buf(),
        what: "the Rhai definition files",
        source,
    };
    std::fs::create_dir_all(dir).map_err(error)?;
    let files = definition_files(engine);
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).map_err(error)?;
    }
    eprintln!(
        "wrote {} definition files to {} (point the Rhai language server or your editor's Rhai extension at this folder)",
        files.len(),
        dir.display()
    );
    Ok(Exit::Passed)
}

/// `--man DIR`: runbook.1, and runbook-SUBCOMMAND.1 for each subcommand (and theirs).
fn write_man_pages(dir: &std::path::Path) -> AppResult {
    let error = |source| Error::Write {
        path: dir.to_path_buf(),
        what: "the man pages",
        source,
    };
    std::fs::create_dir_all(dir).map_err(error)?;
    let mut command = <crate::cli::Cli as clap::CommandFactory>::command();
    command.build();
    let mut pages = vec![("runbook".to_string(), command.clone())];
    let mut index = 0;
    while index < pages.len() {
        let (name, page) = pages[index].clone();
        for sub in page.get_subcommands().filter(|s| s.get_name() != "help") {
            let sub_name = format!("{name}-{}", sub.get_name());
            pages.push((sub_name, sub.clone()));
        }
        index += 1;
    }
    for (name, page) in &pages {
        let mut text = Vec::new();
        clap_mangen::Man::new(page.clone())
            .title(name.clone())
            .render(&mut text)
            .map_err(error)?;
        std::fs::write(dir.join(format!("{name}.1")), text).map_err(error)?;
    }
    eprintln!(
        "wrote {} man pages to {} (man -l {}/runbook.1)",
        pages.len(),
        dir.display(),
        dir.display()
    );
    Ok(Exit::Passed)
}
