//! `runbook eval`: one snippet with every module loaded; prints its value.

use super::stdout::out;
use std::sync::Arc;

use super::{AppResult, runtime};
use crate::cli::EvalArgs;
use crate::error::Exit;
use crate::report::PrintSink;
use crate::script::{self, Host, HostConfig, Interrupt, to_json};

pub(crate) fn execute(args: &EvalArgs) -> AppResult {
    let runtime = runtime::build()?;
    let target = crate::target::connect(&runtime, &args.target, None)?;
    let host = Host::builder(
        HostConfig::scratch(
            "<eval>",
            std::env::current_dir().unwrap_or_default(),
            std::env::temp_dir().join("runbook-eval-snapshots"),
        )
        .reading(
            args.read
                .sandbox([std::env::current_dir().unwrap_or_default()]),
        ),
        target.clock.clone(),
        Arc::new(PrintSink::new(std::io::stderr())),
        Interrupt::new(),
        runtime.handle().clone(),
    )
    .guards(
        args.guards
            .guards()
            .on_embedded_twin(target.embedded_worlds()),
    )
    .build();
    let (h, snippet) = (host.clone(), args.script.clone());
    let outcome = runtime::run_script(&runtime, move || {
        script::eval_snippet(&h, &snippet, target.extensions.clone())
    })?;
    if let Some(diagnostic) = &outcome.diagnostic {
        eprint!(
            "{}",
            host.mask(&diagnostic.render(&host.sources, args.target.verbose))
        );
    } else if let Some(value) = &outcome.value {
        let json = to_json(value);
        if args.json {
            out!(
                "{}",
                serde_json::to_string_pretty(&json).unwrap_or_default()
            );
        } else if let Some(text) = pretty(value, &json) {
            out!("{text}");
        }
    }
    if let Some(text) = crate::report::left_behind_text(&outcome.report) {
        eprint!("{text}");
    }
    Ok(Exit::from(&outcome.report))
}

/// Strings as they are, maps and arrays as YAML, `()` as nothing, the rest as Rhai shows them.
fn pretty(value: &rhai::Dynamic, json: &serde_json::Value) -> Option<String> {
    if value.is_unit() {
        return None;
    }
    if let Some(text) = json.as_str().filter(|_| value.is_string()) {
        return Some(text.to_string());
    }
    if json.is_object() || json.is_array() {
        return Some(
            serde_saphyr::to_string(json)
                .unwrap_or_default()
                .trim_end()
                .to_string(),
        );
    }
    Some(value.to_string())
}
