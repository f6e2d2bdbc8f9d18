//! `assert`, `assert_eq` and `assert_ne`, with a diff of maps and arrays that differ.

use rhai::{Dynamic, Engine, EvalAltResult, NativeCallContext, Position};

use super::doc;
use crate::script::convert::{to_json, to_yaml};
use crate::script::diff;
use crate::script::error::failure;

pub(super) fn register(engine: &mut Engine) {
    doc(
        "assert",
        &["condition: bool", "message: &str", "()"],
        "Fails the step with `message` unless `condition` is true.",
    )
    .register_into_engine(
        engine,
        |ctx: NativeCallContext, condition: bool, message: &str| {
            check(
                condition,
                || format!("assertion failed: {message}"),
                ctx.call_position(),
            )
        },
    );
    doc(
        "assert",
        &["condition: bool", "()"],
        "Fails the step unless `condition` is true.",
    )
    .register_into_engine(engine, |ctx: NativeCallContext, condition: bool| {
        check(
            condition,
            || "assertion failed".to_string(),
            ctx.call_position(),
        )
    });
    doc(
        "assert_eq",
        &["actual: Dynamic", "expected: Dynamic", "()"],
        "Fails the step unless `actual` equals `expected`, showing a diff of maps and arrays.",
    )
    .register_into_engine(
        engine,
        |ctx: NativeCallContext, actual: Dynamic, expected: Dynamic| {
            assert_eq(&actual, &expected, None, ctx.call_position())
        },
    );
    doc(
        "assert_eq",
        &[
            "actual: Dynamic",
            "expected: Dynamic",
            "message: &str",
            "()",
        ],
        "The same, with words that say what was compared.",
    )
    .register_into_engine(
        engine,
        |ctx: NativeCallContext, actual: Dynamic, expected: Dynamic, message: &str| {
            assert_eq(&actual, &expected, Some(message), ctx.call_position())
        },
    );
    doc(
        "assert_ne",
        &["actual: Dynamic", "unexpected: Dynamic", "()"],
        "Fails the step if `actual` equals `unexpected`.",
    )
    .register_into_engine(
        engine,
        |ctx: NativeCallContext, actual: Dynamic, unexpected: Dynamic| {
            let same = to_json(&actual) == to_json(&unexpected);
            check(
                !same,
                || format!("assertion failed: value should differ from {unexpected:?}"),
                ctx.call_position(),
            )
        },
    );
}

fn check(
    condition: bool,
    message: impl FnOnce() -> String,
    position: Position,
) -> Result<(), Box<EvalAltResult>> {
    if condition {
        Ok(())
    } else {
        Err(failure(message(), position))
    }
}

fn assert_eq(
    actual: &Dynamic,
    expected: &Dynamic,
    message: Option<&str>,
    position: Position,
) -> Result<(), Box<EvalAltResult>> {
    let (actual_json, expected_json) = (to_json(actual), to_json(expected));
    if actual_json == expected_json {
        return Ok(());
    }
    let headline = match message {
        Some(message) => format!("assertion failed: {message}"),
        None => "assertion failed: values differ".to_string(),
    };
    let structured = actual_json.is_object()
        || actual_json.is_array()
        || expected_json.is_object()
        || expected_json.is_array();
    if !structured {
        // One line, so the step's error in a report or a CI log says what was found.
        return Err(failure(
            format!("{headline}: expected {expected_json}, got {actual_json}"),
            position,
        ));
    }
    let detail = diff::unified(
        &to_yaml(&expected_json),
        &to_yaml(&actual_json),
        "expected",
        "actual",
    );
    Err(failure(
        format!("{headline}\n{}", detail.trim_end()),
        position,
    ))
}
