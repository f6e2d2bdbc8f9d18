//! Runs a runbook from start to finish: compile, evaluate, cleanups, and the report.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rhai::{AST, Dynamic, Engine, EvalAltResult, Scope};

use super::diagnostic::{Diagnostic, FaultKind};
use super::engine::{Extension, build_engine};
use super::host::{Host, millis};
use crate::report::{DeferRecord, DeferStatus, ErrorAt, Event, Report, RunStatus, SnapshotOutcome};

pub struct RunOptions {
    /// The script's text and the name errors use for it.
    pub source_name: String,
    pub text: String,
    pub extensions: Vec<Arc<dyn Extension>>,
}

pub struct RunOutcome {
    pub report: Report,
    /// Why the run did not pass, when it stopped on an error.
    pub diagnostic: Option<Diagnostic>,
    /// The script's final value (what `runbook eval` prints).
    pub value: Option<Dynamic>,
}

/// Runs a script to the end on the current (blocking) thread. Host functions block on the
/// host's runtime, so call this from `spawn_blocking`, never from an async task.
pub fn run_file(host: &Arc<Host>, options: RunOptions) -> RunOutcome {
    let RunOptions {
        source_name,
        text,
        extensions,
    } = options;
    host.sources.insert(&source_name, &text);
    let mut engine = build_engine(host, &extensions);
    host.emit(&Event::RunStarted {
        runbook: &host.config.runbook,
        clock: clock_name(host),
        run_id: host.config.run_id.as_deref(),
    });

    let ast = match engine.compile(&text) {
        Ok(mut ast) => {
            ast.set_source(source_name.as_str());
            ast
        }
        Err(error) => {
            let diagnostic =
                Diagnostic::from_parse(&error, &source_name).suggest(&engine, &host.sources);
            return finish(host, Some(diagnostic), None);
        }
    };

    // A panic (a bug in runbook, never the script's doing) stops the script where it is, but
    // not the cleanups: they run below as after any error.
    let (mut diagnostic, value) = match at_run_boundary(|| engine.eval_ast::<Dynamic>(&ast)) {
        Ok(Ok(value)) => (None, Some(value)),
        Err(panic) => {
            let diagnostic = panic_diagnostic(
                &panic,
                "this is a bug in runbook: the run stopped here and its cleanups ran; please report it with the command that caused it (RUNBOOK_BACKTRACE=1 for details)",
            );
            host.close_open_steps(crate::report::Outcome::Failed, &diagnostic.one_line());
            (Some(diagnostic), None)
        }
        Ok(Err(error)) => {
            let diagnostic =
                Diagnostic::from_eval(&error, &source_name).suggest(&engine, &host.sources);
            host.close_open_steps(
                match diagnostic.kind {
                    FaultKind::Interrupted => crate::report::Outcome::Interrupted,
                    _ => crate::report::Outcome::Failed,
                },
                &diagnostic.one_line(),
            );
            (Some(diagnostic), None)
        }
    };
    if diagnostic.is_none() && !host.config.sets.is_empty() && !host.params_called() {
        let keys: Vec<&str> = host.config.sets.keys().map(String::as_str).collect();
        diagnostic = Some(
            Diagnostic::new(
                FaultKind::Script,
                format!(
                    "--set {} given, but {source_name} never calls params()",
                    keys.join(", ")
                ),
            )
            .with_help("declare parameters with `let p = params(#{ key: default });`"),
        );
    }

    host.start_cleanup();
    run_cleanups(host, &mut engine, &ast, 0);
    finish(host, diagnostic, value)
}

thread_local! {
    /// Set while this thread evaluates a script or a cleanup under `catch_unwind`: a panic
    /// there is reported by the run itself, so the process's panic hook keeps to one line.
    static AT_RUN_BOUNDARY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a panic on this thread would be caught at a run's boundary (and reported by it).
pub fn caught_at_run_boundary() -> bool {
    AT_RUN_BOUNDARY.with(std::cell::Cell::get)
}

/// `work` under `catch_unwind`, with the boundary marked for the panic hook.
pub fn at_run_boundary<T>(work: impl FnOnce() -> T) -> std::thread::Result<T> {
    AT_RUN_BOUNDARY.with(|flag| flag.set(true));
    let result = catch_unwind(AssertUnwindSafe(work));
    AT_RUN_BOUNDARY.with(|flag| flag.set(false));
    result
}

/// A panic caught at a run's boundary, as the diagnostic a run (or the REPL) shows for it,
/// with `help` saying what became of the work it broke off.
pub fn panic_diagnostic(payload: &Box<dyn std::any::Any + Send>, help: &str) -> Diagnostic {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Diagnostic::new(
        FaultKind::Internal,
        format!("internal error in runbook: {message}"),
    )
    .with_help(help)
}

/// Parses a runbook and resolves its imports without running it.
/// Checks runbooks of one folder with one engine: its imports are resolved once for all.
pub fn check_files(
    host: &Arc<Host>,
    files: &[(String, String)],
    extensions: &[Arc<dyn Extension>],
) -> Vec<Result<(), Box<Diagnostic>>> {
    let engine = build_engine(host, extensions);
    files
        .iter()
        .map(|(source_name, text)| {
            host.sources.insert(source_name, text);
            let mut ast = engine.compile(text).map_err(|e| {
                Box::new(Diagnostic::from_parse(&e, source_name).suggest(&engine, &host.sources))
            })?;
            ast.set_source(source_name.as_str());
            engine
                .compile_into_self_contained(&Scope::new(), text)
                .map(|_| ())
                .map_err(|e| {
                    let mut diagnostic = Diagnostic::from_eval(&e, source_name);
                    // Rhai resolves imports at compile time without their positions: the
                    // import statement naming the module is where the problem is.
                    let missing = match &*e {
                        EvalAltResult::ErrorModuleNotFound(module, _) => Some(module.clone()),
                        // The resolver's own "not found", which names the folders it looked in.
                        _ => diagnostic
                            .message
                            .strip_prefix("module \"")
                            .and_then(|rest| rest.split_once('"'))
                            .map(|(module, _)| module.to_string()),
                    };
                    if let (None, Some(module)) = (&diagnostic.location, missing) {
                        diagnostic.location = import_location(text, source_name, &module);
                    }
                    Box::new(diagnostic.suggest(&engine, &host.sources))
                })
        })
        .collect()
}

/// Where `import "module"` is in a runbook's text: its string's line and column.
fn import_location(text: &str, source: &str, module: &str) -> Option<super::Location> {
    let quoted = format!("\"{module}\"");
    text.lines().enumerate().find_map(|(index, line)| {
        let column = line.find(&quoted)?;
        line.trim_start()
            .starts_with("import")
            .then(|| super::Location {
                source: source.to_string(),
                line: index + 1,
                column: column + 1,
            })
    })
}

/// Evaluates a snippet with every module loaded; cleanups it registers run before returning.
pub fn eval_snippet(
    host: &Arc<Host>,
    snippet: &str,
    extensions: Vec<Arc<dyn Extension>>,
) -> RunOutcome {
    run_file(
        host,
        RunOptions {
            source_name: "<eval>".into(),
            text: snippet.into(),
            extensions,
        },
    )
}

/// Runs the cleanups registered after the first `keep`, last first.
pub fn run_cleanups(host: &Host, engine: &mut Engine, ast: &AST, keep: usize) {
    while let Some(defer) = host.pop_defer(keep) {
        // The script's imports are gone once it has ended; the cleanup still calls through them.
        for (alias, module) in &defer.imports {
            engine.register_static_module(alias.as_str(), module.clone());
        }
        for module in &defer.namespaces {
            engine.register_global_module(module.clone());
        }
        host.emit(&Event::DeferStarted { name: &defer.name });
        let (virtual_start, wall_start) = (host.clock.now(), Instant::now());
        let result = at_run_boundary(|| defer.body.call::<Dynamic>(engine, ast, ()));
        if host.interrupt.count() >= 2 {
            // A second Ctrl-C aborts: this cleanup did not finish, and the signal handler lists
            // it with the others as skipped while it ends the process.
            return;
        }
        let error = match result {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(
                Diagnostic::from_eval(&e, &host.config.runbook)
                    .suggest(engine, &host.sources)
                    .one_line(),
            ),
            Err(panic) => Some(panic_diagnostic(&panic, "").message),
        };
        let record = DeferRecord {
            name: defer.name.clone(),
            status: if error.is_some() {
                DeferStatus::Failed
            } else {
                DeferStatus::Passed
            },
            undo: error.is_some().then(|| defer.undo.clone()).flatten(),
            error,
            start_ms: host.since_start(virtual_start, wall_start).0,
            start_wall_ms: host.since_start(virtual_start, wall_start).1,
            virtual_ms: millis(host.clock.now().saturating_sub(virtual_start)),
            wall_ms: millis(wall_start.elapsed()),
        };
        host.emit(&Event::DeferFinished {
            name: &record.name,
            status: record.status,
            error: record.error.as_deref(),
            virtual_time: Duration::from_millis(record.virtual_ms),
            wall_time: Duration::from_millis(record.wall_ms),
        });
        host.record_defer(record);
    }
}

fn clock_name(host: &Host) -> &'static str {
    if host.clock.is_virtual() {
        "virtual"
    } else {
        "real"
    }
}

/// The report of a run as it stands. Cleanups that never ran are listed as skipped, so this
/// also serves a run aborted by a second Ctrl-C.
pub fn report(host: &Host, diagnostic: Option<&Diagnostic>) -> Report {
    let recorded = host.snapshot_records();
    let status = if host.interrupt.count() > 0
        || diagnostic.is_some_and(|d| d.kind == FaultKind::Interrupted)
    {
        RunStatus::Interrupted
    } else if diagnostic.is_some_and(|d| matches!(d.kind, FaultKind::Script | FaultKind::Internal))
    {
        RunStatus::Error
    } else if diagnostic.is_some() || recorded.failed {
        RunStatus::Failed
    } else {
        RunStatus::Passed
    };
    let report = Report {
        runbook: host.config.runbook.clone(),
        run_id: host.config.run_id.clone(),
        status,
        clock: clock_name(host),
        parameters: recorded.parameters.unwrap_or_else(|| serde_json::json!({})),
        steps: recorded.steps,
        defers: recorded.defers,
        snapshots: recorded.snapshots,
        metrics: recorded.metrics,
        guards: host.guards(),
        spent_usd: host.spent_usd(),
        changes: recorded.changes,
        evidence: recorded.evidence,
        error: diagnostic.map(Diagnostic::one_line),
        error_detail: diagnostic.map(|d| d.causes.clone()).unwrap_or_default(),
        error_at: diagnostic.and_then(|d| {
            let at = d.location.as_ref()?;
            Some(ErrorAt {
                file: at.source.clone(),
                line: at.line,
                column: at.column,
                source: host.sources.line(&at.source, at.line),
                called_from: d.callers.iter().map(ToString::to_string).collect(),
            })
        }),
        spend: host.spend_rates(),
        // Filled in by whoever made the clients (`runbook run`).
        connections: Default::default(),
        virtual_ms: millis(host.virtual_elapsed()),
        wall_ms: millis(host.wall_elapsed()),
    };
    report.for_output(&host.secrets())
}

fn finish(host: &Host, diagnostic: Option<Diagnostic>, value: Option<Dynamic>) -> RunOutcome {
    let report = report(host, diagnostic.as_ref());
    host.emit(&Event::RunFinished {
        summary: &summary(&report),
    });
    RunOutcome {
        report,
        diagnostic,
        value,
    }
}

/// `passed: 4 steps, 2 cleanups, 1 snapshot new (virtual 9m24s, wall 12ms)`.
pub fn summary(report: &Report) -> String {
    let steps = report.flat_steps();
    let failed_steps = steps
        .iter()
        .filter(|(_, s)| s.status != crate::report::Outcome::Passed)
        .count();
    let mut parts = vec![plural(steps.len(), "step")];
    if failed_steps > 0 {
        parts[0].push_str(&format!(" ({failed_steps} not passed)"));
    }
    if !report.defers.is_empty() {
        let failed = report
            .defers
            .iter()
            .filter(|d| d.status != DeferStatus::Passed)
            .count();
        let mut text = plural(report.defers.len(), "cleanup");
        if failed > 0 {
            text.push_str(&format!(" ({failed} not passed)"));
        }
        parts.push(text);
    }
    for (outcome, word) in [
        (SnapshotOutcome::New, "new"),
        (SnapshotOutcome::Matched, "matched"),
        (SnapshotOutcome::Updated, "updated"),
        (SnapshotOutcome::Mismatched, "mismatched"),
    ] {
        let n = report
            .snapshots
            .iter()
            .filter(|s| s.outcome == outcome)
            .count();
        if n > 0 {
            parts.push(format!("{} {word}", plural(n, "snapshot")));
        }
    }
    let status = serde_json::to_value(report.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    format!(
        "{status}: {} (virtual {}, wall {})",
        parts.join(", "),
        crate::clock::format_duration(Duration::from_millis(report.virtual_ms)),
        crate::clock::format_duration(Duration::from_millis(report.wall_ms)),
    )
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
