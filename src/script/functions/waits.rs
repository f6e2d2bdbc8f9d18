//! `sleep`, `wait_until`, `retry` and `elapsed`: every wait goes through the run's clock.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, Engine, EvalAltResult, FnPtr, Map, NativeCallContext};

use super::doc;
use crate::clock::format_duration;
use crate::script::convert::{Options, duration_arg, is_truthy};
use crate::script::diagnostic::Diagnostic;
use crate::script::error::{failure, usage_error};
use crate::script::host::Host;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);

pub(super) fn register(engine: &mut Engine, host: &Arc<Host>) {
    register_elapsed(engine, host);
    register_sleep(engine, host);
    register_seconds(engine);
    register_wait_until(engine, host);
    register_retry(engine, host);
}

fn register_elapsed(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "elapsed",
        &["f64"],
        "Seconds on the run's clock since the run started (virtual on the lab twin): what a\n\
         wait took is `elapsed()` after less `elapsed()` before.",
    )
    .register_into_engine(engine, move || h.virtual_elapsed().as_secs_f64());
}

fn register_seconds(engine: &mut Engine) {
    doc(
        "seconds",
        &["duration: Dynamic", "f64"],
        "Seconds a duration is: `seconds(\"9m24s\")` is 564.0 (a number is taken as seconds), for\n\
         comparing what `elapsed()` measured with a budget given as a duration.",
    )
    .register_into_engine(engine, |ctx: NativeCallContext, duration: Dynamic| {
        duration_arg(&duration, "seconds", ctx.call_position()).map(|d| d.as_secs_f64())
    });
}

fn register_sleep(engine: &mut Engine, host: &Arc<Host>) {
    // Rhai's standard library has a `sleep(seconds)` that blocks the thread in wall time;
    // these exact-type overloads take its place so that sleeps go through the run's clock.
    let h = host.clone();
    doc(
        "sleep",
        &["duration: &str", "()"],
        "Waits on the run's clock: \"90s\", \"9m24s\", \"500ms\".",
    )
    .register_into_engine(engine, move |ctx: NativeCallContext, duration: &str| {
        sleep(&h, &ctx, &Dynamic::from(duration.to_string()))
    });
    let h = host.clone();
    doc(
        "sleep",
        &["seconds: i64", "()"],
        "Waits this many seconds on the run's clock.",
    )
    .register_into_engine(engine, move |ctx: NativeCallContext, seconds: i64| {
        sleep(&h, &ctx, &Dynamic::from_int(seconds))
    });
    let h = host.clone();
    doc(
        "sleep",
        &["seconds: f64", "()"],
        "Waits this many seconds on the run's clock.",
    )
    .register_into_engine(engine, move |ctx: NativeCallContext, seconds: f64| {
        sleep(&h, &ctx, &Dynamic::from_float(seconds))
    });
}

/// Registers `wait_until(options, probe)` and `wait_until(timeout, probe)`.
fn register_wait_until(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "wait_until",
        &["options: Map", "probe: FnPtr", "Dynamic"],
        "Calls `probe` until it returns a truthy value and returns that value.\n\
         Options: `timeout` (default \"5m\"), `interval` between polls (default \"10s\"), `what`\n\
         (words for the error). On timeout the step fails with the last value seen.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, options: Map, probe: FnPtr| {
            let opts = Options::new(
                &options,
                "wait_until",
                &["timeout", "interval", "what"],
                ctx.call_position(),
            )?;
            let what = opts.get("what").map(|w| w.to_string());
            wait_until(
                &h,
                &ctx,
                opts.duration("timeout", DEFAULT_TIMEOUT)?,
                opts.duration("interval", DEFAULT_INTERVAL)?,
                what,
                &probe,
            )
        },
    );

    let h = host.clone();
    doc(
        "wait_until",
        &["timeout: Dynamic", "probe: FnPtr", "Dynamic"],
        "`wait_until(\"10m\", || ...)`: the same with a timeout and the default interval.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, timeout: Dynamic, probe: FnPtr| {
            let timeout = duration_arg(&timeout, "wait_until timeout", ctx.call_position())?;
            wait_until(&h, &ctx, timeout, DEFAULT_INTERVAL, None, &probe)
        },
    );
}

fn register_retry(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "retry",
        &["options: Map", "body: FnPtr", "Dynamic"],
        "Calls `body` until it succeeds, at most `attempts` times (default 3), sleeping `backoff`\n\
         (default \"1s\") after a failure, multiplied by `factor` (default 2) each time and capped\n\
         at `max_backoff`. Script errors and Ctrl-C are not retried. The last error goes on up.",
    )
    .register_into_engine(engine, move |ctx: NativeCallContext, options: Map, body: FnPtr| {
        retry(&h, &ctx, &options, &body)
    });
}

fn sleep(
    host: &Host,
    ctx: &NativeCallContext,
    duration: &Dynamic,
) -> Result<(), Box<EvalAltResult>> {
    let position = ctx.call_position();
    host.sleep(duration_arg(duration, "sleep", position)?, position)
}

fn wait_until(
    host: &Host,
    ctx: &NativeCallContext,
    timeout: Duration,
    interval: Duration,
    what: Option<String>,
    probe: &FnPtr,
) -> Result<Dynamic, Box<EvalAltResult>> {
    let position = ctx.call_position();
    if interval.is_zero() {
        return Err(usage_error(
            "wait_until: `interval` must be more than zero",
            position,
        ));
    }
    let deadline = host.clock.now() + timeout;
    loop {
        let value = probe.call_within_context::<Dynamic>(ctx, ())?;
        if is_truthy(&value) {
            return Ok(value);
        }
        let now = host.clock.now();
        if now >= deadline {
            let what = what.map(|w| format!(" for {w}")).unwrap_or_default();
            return Err(failure(
                format!(
                    "timed out after {} waiting{what}; last value: {value:?}",
                    format_duration(timeout)
                ),
                position,
            ));
        }
        host.sleep(interval.min(deadline - now), position)?;
    }
}

fn retry(
    host: &Host,
    ctx: &NativeCallContext,
    options: &Map,
    body: &FnPtr,
) -> Result<Dynamic, Box<EvalAltResult>> {
    let position = ctx.call_position();
    let opts = Options::new(
        options,
        "retry",
        &["attempts", "backoff", "factor", "max_backoff"],
        position,
    )?;
    let attempts = opts.int("attempts", 3)?;
    if attempts < 1 {
        return Err(usage_error(
            format!("retry: `attempts` must be at least 1, got {attempts}"),
            position,
        ));
    }
    let mut backoff = opts.duration("backoff", Duration::from_secs(1))?;
    let factor = opts.float("factor", 2.0)?;
    if !(factor.is_finite() && factor >= 1.0) {
        return Err(usage_error(
            format!("retry: `factor` must be 1 or more, got {factor}"),
            position,
        ));
    }
    let max_backoff = opts.duration("max_backoff", Duration::from_secs(3600))?;
    for attempt in 1..=attempts {
        match body.call_within_context::<Dynamic>(ctx, ()) {
            Ok(value) => return Ok(value),
            Err(error) => {
                let diagnostic = Diagnostic::from_eval(
                    &error,
                    ctx.call_source().unwrap_or(&host.config.runbook),
                );
                let retryable =
                    error.is_catchable() && diagnostic.kind == crate::script::FaultKind::Failure;
                if !retryable || attempt == attempts {
                    if retryable {
                        host.log(&format!("retry: giving up after {attempts} attempts"));
                    }
                    return Err(error);
                }
                host.log(&format!(
                    "retry: attempt {attempt}/{attempts} failed: {}; next in {}",
                    diagnostic.message,
                    format_duration(backoff)
                ));
                host.sleep(backoff, position)?;
                backoff = backoff.mul_f64(factor).min(max_backoff);
            }
        }
    }
    unreachable!("the loop returns on the last attempt")
}
