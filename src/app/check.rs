//! `runbook check`: parse every runbook and resolve its imports, without running anything.

use std::path::Path;
use std::sync::Arc;

use super::{AppResult, runtime};
use crate::cli::CheckArgs;
use crate::clock::VirtualClock;
use crate::error::Exit;
use crate::report::NullSink;
use crate::script::{self, Diagnostic, FaultKind, Host, HostConfig, Interrupt};

/// A file's verdict, with the host whose sources render its diagnostic.
type Checked = (Arc<Host>, Result<(), Box<Diagnostic>>);

pub(crate) fn execute(args: &CheckArgs) -> AppResult {
    let runtime = runtime::build()?;
    // The modules runbooks call (k8s::, eks::, ...) are known to the parser, never called.
    let extensions = super::target::documentation_extensions(&runtime);
    // One engine per folder: files side by side share their imports' resolution.
    let mut folders: Vec<(std::path::PathBuf, Vec<usize>)> = Vec::new();
    for (index, file) in args.files.iter().enumerate() {
        let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
        match folders.iter_mut().find(|(f, _)| *f == folder) {
            Some((_, members)) => members.push(index),
            None => folders.push((folder, vec![index])),
        }
    }
    let mut results: Vec<Option<Checked>> = args.files.iter().map(|_| None).collect();
    for (folder, members) in folders {
        // Messages show imports relative to the folder as the user named it.
        let shown = args.files[members[0]].display().to_string();
        let host = Host::new(
            HostConfig::scratch(&shown, folder, std::env::temp_dir()),
            Arc::new(VirtualClock::new()),
            Arc::new(NullSink),
            Interrupt::new(),
            runtime.handle().clone(),
        );
        let mut readable = Vec::new();
        for index in &members {
            let file = &args.files[*index];
            let name = file.display().to_string();
            match std::fs::read_to_string(file) {
                Ok(text) => readable.push((*index, name, text)),
                Err(e) => {
                    let diagnostic =
                        Diagnostic::new(FaultKind::Script, format!("cannot read {name}: {e}"));
                    results[*index] = Some((host.clone(), Err(Box::new(diagnostic))));
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
        for ((index, _, _), result) in readable.iter().zip(checked) {
            results[*index] = Some((host.clone(), result));
        }
    }
    let mut failures = 0;
    for (file, result) in args.files.iter().zip(results) {
        let name = file.display().to_string();
        let Some((host, result)) = result else {
            continue;
        };
        match result {
            Ok(()) => println!("ok      {name}"),
            Err(diagnostic) => {
                failures += 1;
                println!("error   {name}");
                eprint!("{}", diagnostic.render(&host.sources, false));
            }
        }
    }
    if failures > 0 {
        eprintln!("{failures} of {} runbooks have errors", args.files.len());
        Ok(Exit::ScriptError)
    } else {
        Ok(Exit::Passed)
    }
}
