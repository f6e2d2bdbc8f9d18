//! A binding's mutation around its call: the journal record, with what undoes it, is on disk
//! before the call is sent, and its answer after. Without a journal (docs, check) it is only
//! the call.

use rhai::{EvalAltResult, Position};

use crate::guard::Change;
use crate::journal::Undo;
use crate::script::{Host, failure_error};

/// Runs `call` as the mutation `change` (an action's words, or a [`Change`] naming its
/// resource), held to the run's guards and journaled with `undo` before it is sent.
pub(crate) fn journaled<T>(
    host: &Host,
    position: Position,
    change: impl Into<Change>,
    undo: Option<Undo>,
    call: impl FnOnce() -> Result<T, Box<EvalAltResult>>,
) -> Result<T, Box<EvalAltResult>> {
    let sending = host
        .mutation_starts(&change.into(), undo)
        .map_err(|e| failure_error(e, position))?;
    let result = call();
    host.mutation_answered(&[sending], result.as_ref().err().map(|e| error_line(e)));
    result
}

/// A call's error as the journal and the report keep it: the line a run would end with
/// (`InvalidPermission.NotFound: The specified rule does not exist ...`), not Rhai's dump of
/// the error map.
fn error_line(error: &EvalAltResult) -> String {
    crate::script::Diagnostic::from_eval(error, "").message
}
