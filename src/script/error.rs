//! Errors of the script layer, and the marker for errors that mean "the runbook is wrong".

use rhai::{Dynamic, EvalAltResult, Position};

/// A mistake in how the runbook calls the host (a bad duration, an unknown parameter): thrown as
/// this value so that the run ends with the "script error" exit code rather than "failed".
#[derive(Debug, Clone)]
pub(crate) struct UsageError(pub(crate) String);

/// Builds the error a host function returns for a mistake in the runbook itself.
pub fn usage_error(message: impl Into<String>, position: Position) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(Dynamic::from(UsageError(message.into())), position).into()
}

/// Builds the error a host function returns when the world is not as the runbook expects.
pub fn failure(message: impl Into<String>, position: Position) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(Dynamic::from(message.into()), position).into()
}
