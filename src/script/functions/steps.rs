//! `step` and `defer`: named units of work, and cleanups that always run.

use std::sync::Arc;

use rhai::{Dynamic, Engine, EvalAltResult, FnPtr, NativeCallContext};

use super::doc;
use crate::report::Outcome;
use crate::script::diagnostic::{Diagnostic, FaultKind};
use crate::script::error::usage_error;
use crate::script::host::Host;

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
         the run; the others still run.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, name: &str, body: FnPtr| -> Result<(), Box<EvalAltResult>> {
            if name.trim().is_empty() {
                return Err(usage_error(
                    "defer needs a name that says what it cleans up",
                    ctx.call_position(),
                ));
            }
            let imports = ctx
                .iter_imports()
                .map(|(alias, module)| (alias.to_string(), rhai::Shared::new(module.clone())))
                .collect();
            let namespaces = ctx
                .iter_namespaces()
                .map(|module| rhai::Shared::new(module.clone()))
                .collect();
            h.push_defer(name, body, imports, namespaces);
            Ok(())
        },
    );
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
                FaultKind::Failure | FaultKind::Script => Outcome::Failed,
            };
            host.end_step(outcome, Some(diagnostic.one_line()));
        }
    }
    result
}
