//! `step` and `defer`: named units of work, and cleanups that always run.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, Engine, EvalAltResult, FnPtr, Map, NativeCallContext};

use super::doc;
use crate::report::Outcome;
use crate::script::convert::duration_arg;
use crate::script::diagnostic::{Diagnostic, FaultKind};
use crate::script::error::{failure, usage_error};
use crate::script::host::{Host, PendingDefer};

pub(super) fn register(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "step",
        &["name: &str", "body: FnPtr", "Dynamic"],
        "Runs `body` as a named step and returns its value. Steps nest.\n\
         A failing step is recorded with its error and fails the run; the error goes on up,\n\
         so later steps do not run unless the script catches it with try/catch.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, name: &str, body: FnPtr| run_step(&h, &ctx, name, &body),
    );

    let h = host.clone();
    doc(
        "defer",
        &["name: &str", "body: FnPtr", "()"],
        "Registers a cleanup. Cleanups run last-in-first-out when the run ends: on success,\n\
         failure, script error and the first Ctrl-C. A failing cleanup is reported and fails\n\
         the run (exit 3: something may be left behind); the others still run. While it runs,\n\
         AWS calls that are throttled or fail on the server side are retried for up to 15m.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, name: &str, body: FnPtr| -> Result<(), Box<EvalAltResult>> {
            register_defer(&h, &ctx, name, &Map::new(), body)
        },
    );
    let h = host.clone();
    doc(
        "defer",
        &["name: &str", "options: Map", "body: FnPtr", "()"],
        "The same with options: `deadline` (how long the cleanup keeps retrying a busy or\n\
         throttled API, default \"15m\") and `undo` (the command a person runs to undo by hand\n\
         what the cleanup was for, printed when it does not finish).",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext,
              name: &str,
              options: Map,
              body: FnPtr|
              -> Result<(), Box<EvalAltResult>> {
            register_defer(&h, &ctx, name, &options, body)
        },
    );
}

/// How long a cleanup keeps retrying a throttled or failing API unless its `defer` says.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(15 * 60);

fn register_defer(
    host: &Host,
    ctx: &NativeCallContext,
    name: &str,
    options: &Map,
    body: FnPtr,
) -> Result<(), Box<EvalAltResult>> {
    let position = ctx.call_position();
    if name.trim().is_empty() {
        return Err(usage_error(
            "defer needs a name that says what it cleans up",
            position,
        ));
    }
    if let Some(unknown) = options
        .keys()
        .find(|k| !["deadline", "undo"].contains(&k.as_str()))
    {
        return Err(usage_error(
            format!("defer: unknown option `{unknown}` (known: deadline, undo)"),
            position,
        ));
    }
    let deadline = match options.get("deadline") {
        Some(value) => duration_arg(value, "defer: `deadline`", position)?,
        None => DEFAULT_DEADLINE,
    };
    let undo = match options.get("undo") {
        Some(value) => Some(value.clone().into_string().map_err(|t| {
            usage_error(
                format!("defer: `undo` is the command that undoes by hand, a string; got {t}"),
                position,
            )
        })?),
        None => None,
    };
    let imports = ctx
        .iter_imports()
        .map(|(alias, module)| (alias.to_string(), rhai::Shared::new(module.clone())))
        .collect();
    let namespaces = ctx
        .iter_namespaces()
        .map(|module| rhai::Shared::new(module.clone()))
        .collect();
    host.push_defer(PendingDefer {
        id: host.next_defer_id(),
        name: name.to_string(),
        body,
        imports,
        namespaces,
        deadline,
        undo,
    })
    .map_err(|e| failure(e, position))
}

fn run_step(
    host: &Host,
    ctx: &NativeCallContext,
    name: &str,
    body: &FnPtr,
) -> Result<Dynamic, Box<EvalAltResult>> {
    let position = ctx.call_position();
    if name.trim().is_empty() {
        return Err(usage_error("a step needs a name", position));
    }
    if host.should_stop() {
        return Err(host.interrupted_error(position));
    }
    host.begin_step(name);
    let result = body.call_within_context::<Dynamic>(ctx, ());
    match &result {
        Ok(_) => host.end_step(Outcome::Passed, None),
        Err(error) => {
            let source = ctx.call_source().unwrap_or(&host.config.runbook);
            let diagnostic = Diagnostic::from_eval(error, source);
            let outcome = match diagnostic.kind {
                FaultKind::Interrupted => Outcome::Interrupted,
                FaultKind::Failure | FaultKind::Script | FaultKind::Internal => Outcome::Failed,
            };
            host.end_step(outcome, Some(diagnostic.one_line()));
        }
    }
    result
}
