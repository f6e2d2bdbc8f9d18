//! `runbook docs`: every host function with its signature and a one-line doc.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{AppResult, runtime, target};
use crate::cli::DocsArgs;
use crate::clock::VirtualClock;
use crate::error::{Error, Exit};
use crate::report::NullSink;
use crate::script::{Host, HostConfig, Interrupt, build_engine, function_docs};

/// What `runbook docs` calls the global functions.
const CORE: &str = "core";

pub(crate) fn execute(args: &DocsArgs) -> AppResult {
    let runtime = runtime::build()?;
    let host = Host::new(
        HostConfig::scratch(
            "<docs>",
            std::env::current_dir().unwrap_or_default(),
            std::env::temp_dir(),
        ),
        Arc::new(VirtualClock::new()),
        Arc::new(NullSink),
        Interrupt::new(),
        runtime.handle().clone(),
    );
    let engine = build_engine(&host, &target::documentation_extensions(&runtime));
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
    for module in &modules {
        if args.module.as_ref().is_some_and(|m| m != module) {
            continue;
        }
        println!("# {module}\n");
        for doc in docs.iter().filter(|d| &module_of(&d.module) == module) {
            println!("{}", doc.signature);
            for line in doc.doc.lines() {
                println!("    {line}");
            }
            println!();
        }
    }
    Ok(Exit::Passed)
}
