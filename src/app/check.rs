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
    let mut failures = 0;
    for file in &args.files {
        let name = file.display().to_string();
        let host = Host::new(
            HostConfig {
                runbook: name.clone(),
                base_dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
                sets: Default::default(),
                snapshot_dir: std::env::temp_dir(),
                update_snapshots: false,
            },
            Arc::new(VirtualClock::new()),
            Arc::new(NullSink),
            Interrupt::new(),
            runtime.handle().clone(),
        );
        let result = match std::fs::read_to_string(file) {
            Ok(text) => {
                let h = host.clone();
                let n = name.clone();
                runtime::run_script(&runtime, move || script::check_file(&h, &n, &text))?
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
