//! One configured Rhai engine per run: limits, sandbox, output routing and the host functions.

use std::path::Path;
use std::sync::Arc;

use rhai::Engine;

use super::error::UsageError;
use super::functions;
use super::host::Host;
use super::resolver::RunbookResolver;

/// Something that adds functions to the engine (the bindings: `k8s::`, `eks::`, ...).
pub trait Extension: Send + Sync {
    fn install(&self, engine: &mut Engine, host: &Arc<Host>);
}

/// A function registration with its signature and doc comment, as `runbook docs` shows them.
pub fn documented(name: &str, params: &[&str], comment: &str) -> rhai::FuncRegistration {
    let comment: Vec<String> = comment.lines().map(|l| format!("/// {l}")).collect();
    rhai::FuncRegistration::new(name)
        .with_params_info(params)
        .with_comments([comment.join("\n")])
}

/// Limits that keep a broken runbook from hanging or exhausting the machine. Runbooks spend
/// their time in host calls, which operation counts do not see, so these stay generous.
///
/// No array, map or string size limits: with any of them set, Rhai walks every value a
/// function returns and every array a push grows, so a 5,000-pod list cost a second walk of
/// 5,000 maps and building an array by `push` went quadratic. A loop that grows data without
/// end is stopped by the memory guard (`super::memory`) instead.
const MAX_OPERATIONS: u64 = 20_000_000;
const MAX_CALL_LEVELS: usize = 48;
pub(super) const MAX_EXPR_DEPTH: usize = 64;
pub(super) const MAX_FN_EXPR_DEPTH: usize = 64;
const MAX_MODULES: usize = 64;

/// What the memory guard stops a script with (the diagnostic turns it into a script error).
pub(crate) const MEMORY_EXHAUSTED: &str = "memory limit";

pub fn build_engine(host: &Arc<Host>, extensions: &[Arc<dyn Extension>]) -> Engine {
    let mut engine = Engine::new();
    engine.set_max_operations(MAX_OPERATIONS);
    engine.set_max_call_levels(MAX_CALL_LEVELS);
    engine.set_max_expr_depths(MAX_EXPR_DEPTH, MAX_FN_EXPR_DEPTH);
    engine.set_max_modules(MAX_MODULES);
    engine.set_strict_variables(true);
    // Scripts run only what the host offers: no eval of generated code.
    engine.disable_symbol("eval");

    let h = host.clone();
    engine.on_print(move |text| h.log(text));
    let h = host.clone();
    engine.on_debug(move |text, source, position| {
        let at = match (source, position.line()) {
            (Some(source), Some(line)) => format!("{source}:{line}: "),
            _ => String::new(),
        };
        h.log(&format!("debug: {at}{text}"));
    });
    let h = host.clone();
    engine.on_progress(move |_| {
        if h.should_stop() {
            Some(h.interrupted_token())
        } else if super::memory::over_limit() {
            Some(MEMORY_EXHAUSTED.into())
        } else {
            None
        }
    });

    let base = &host.config.base_dir;
    let shown = shown_dir(&host.config.runbook);
    engine.set_module_resolver(RunbookResolver::new(base, shown, host.sources.clone()));

    engine
        .register_type_with_name::<UsageError>("UsageError")
        .register_fn("to_string", |e: &mut UsageError| e.0.clone());
    functions::register_all(&mut engine, host);
    for extension in extensions {
        extension.install(&mut engine, host);
    }
    engine
}

/// The folder of a runbook as the user wrote its path (`runbooks/core`), for messages.
fn shown_dir(runbook: &str) -> String {
    Path::new(runbook)
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}
