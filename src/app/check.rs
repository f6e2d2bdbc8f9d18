//! `runbook check`: parse every runbook and resolve its imports, without running anything.

use std::path::Path;
use std::sync::Arc;

use super::{AppResult, runtime};
use crate::cli::CheckArgs;
use crate::clock::VirtualClock;
use crate::error::Exit;
use crate::report::NullSink;
use crate::script::{self, Diagnostic, FaultKind, Host, HostConfig, Interrupt};

pub(crate) fn execute(args: &CheckArgs) -> AppResult {
    let runtime = runtime::build()?;
    // The modules runbooks call (k8s::, eks::, ...) are known to the parser, never called.
    let extensions = super::target::documentation_extensions(&runtime);
    let mut failures = 0;
    for file in &args.files {
        let name = file.display().to_string();
        let host = Host::new(
            HostConfig::scratch(
                &name,
                file.parent().map(Path::to_path_buf).unwrap_or_default(),
                std::env::temp_dir(),
            ),
            Arc::new(VirtualClock::new()),
            Arc::new(NullSink),
            Interrupt::new(),
            runtime.handle().clone(),
        );
        let result = match std::fs::read_to_string(file) {
            Ok(text) => {
                let h = host.clone();
                let n = name.clone();
                let ext = extensions.clone();
                runtime::run_script(&runtime, move || script::check_file(&h, &n, &text, &ext))?
            }
            Err(e) => Err(Box::new(Diagnostic::new(
                FaultKind::Script,
                format!("cannot read {name}: {e}"),
            ))),
        };
        match result {
            Ok(()) => println!("ok      {name}"),
            Err(diagnostic) => {
                failures += 1;
                println!("error   {name}");
                eprint!("{}", diagnostic.render(&host.sources));
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
