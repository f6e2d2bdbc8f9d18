//! What every AWS binding shares: one client call for the script (a cleanup's calls ride out
//! a busy API until its deadline), the error a script catches by its AWS code, JSON to Rhai,
//! and the shapes most bindings take: a read-only call and a waiter.

use rhai::{Dynamic, EvalAltResult, Map, Position};

use crate::bindings::shared::args::causes;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::{AwsError, Backoff, is_transient, until_deadline};
use crate::script::{Host, from_json};

pub(super) type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub(super) fn aws_error(error: AwsError, position: Position) -> Box<EvalAltResult> {
    let mut map = Map::new();
    map.insert("code".into(), Dynamic::from(error.code.clone()));
    map.insert("reason".into(), Dynamic::from(error.code.clone()));
    map.insert("operation".into(), Dynamic::from(error.operation.clone()));
    map.insert("message".into(), Dynamic::from(error.message.clone()));
    map.insert("causes".into(), causes(&error.causes));
    EvalAltResult::ErrorRuntime(Dynamic::from_map(map), position).into()
}

/// One client call for the script. Inside a cleanup, a call that AWS throttles or fails on
/// its side (past the SDK's own attempts) is made again, on the run's clock, until the
/// cleanup's deadline: a cleanup must not give up on a busy API.
pub(super) fn call<T, F, Fut>(host: &Host, position: Position, make: F) -> Result<T>
where
    F: Fn() -> Fut,
    Fut: Future<Output = std::result::Result<T, AwsError>>,
{
    let retried = until_deadline(
        host.clock.as_ref(),
        host.cleanup_deadline(),
        Backoff::CLEANUP,
        |error| is_transient(&error.code),
        |error, pause| {
            host.log(&format!(
                "{error}; the cleanup tries again in {}",
                crate::clock::format_duration(pause)
            ));
        },
        make,
    );
    host.block_on(position, retried)?
        .map_err(|e| aws_error(e, position))
}

pub(super) fn json(value: &serde_json::Value) -> Dynamic {
    from_json(value)
}

pub(super) fn unit() -> Dynamic {
    Dynamic::UNIT
}

pub(super) fn int32(spec: &Spec<'_>, key: &str, default: i32) -> Result<i32> {
    match spec.int(key)? {
        None => Ok(default),
        Some(v) => i32::try_from(v).map_err(|_| spec.error(format!("`{key}` {v} is out of range"))),
    }
}

/// Registers a read-only binding: `name(args..)` makes one client call and answers what it
/// read as Rhai data. Nothing is journaled and no guard is asked: it changes nothing.
macro_rules! read_only {
    ($module:expr, $clients:expr, $host:expr, $name:literal, [$($arg:ident),*], $returns:literal, $doc:expr, |$c:ident| $call:expr) => {{
        let (clients, host) = ($clients.clone(), $host.clone());
        $crate::script::documented($name, &[$(concat!(stringify!($arg), ": &str"),)* $returns], $doc)
            .set_into_module($module, move |ctx: rhai::NativeCallContext $(, $arg: &str)*| -> $crate::bindings::aws::call::Result {
                let $c = &clients;
                let answer = $crate::bindings::aws::call::call(&host, ctx.call_position(), || $call)?;
                Ok($crate::script::from_json(&serde_json::to_value(answer).unwrap_or_default()))
            });
    }};
}

/// Registers `name(args..)` and `name(args.., timeout)` for a waiter: the client method gets
/// what the arguments name (`(cluster, name) => EksResource::Addon { cluster, name }`), the
/// timeout and the run's clock.
macro_rules! waiter {
    ($module:expr, $clients:expr, $host:expr, $name:literal, $default:expr, $what:literal, ($($arg:ident),+) => $resource:expr, $method:ident) => {{
        let params: &[&str] = &[$(concat!(stringify!($arg), ": &str")),+, "()"];
        let params_timeout: &[&str] = &[$(concat!(stringify!($arg), ": &str")),+, "timeout: Dynamic", "()"];
        let (clients, host) = ($clients.clone(), $host.clone());
        $crate::script::documented($name, params, concat!("Waits on the run's clock until ", $what, "; a state it will not leave raises WaiterFailed,\nrunning out of time Timeout."))
            .set_into_module($module, move |ctx: rhai::NativeCallContext, $($arg: &str),+| -> $crate::bindings::aws::call::Result<()> {
                let clock = host.clock.clone();
                $crate::bindings::aws::call::call(&host, ctx.call_position(), || clients.$method($resource, $default, clock.as_ref()))
            });
        let (clients, host) = ($clients.clone(), $host.clone());
        $crate::script::documented($name, params_timeout, "The same with a timeout (\"30m\", or milliseconds).")
            .set_into_module($module, move |ctx: rhai::NativeCallContext, $($arg: &str),+, timeout: rhai::Dynamic| -> $crate::bindings::aws::call::Result<()> {
                let position = ctx.call_position();
                let timeout = $crate::script::duration_value(&timeout, concat!($name, ": timeout"), position)?;
                let clock = host.clock.clone();
                $crate::bindings::aws::call::call(&host, position, || clients.$method($resource, timeout, clock.as_ref()))
            });
    }};
}

pub(crate) use {read_only, waiter};
