//! Multi-line input: an unfinished block, array, map, string or call continues on the next
//! line. The Rhai parser decides; a finished but wrong input is complete (and then fails).

use reedline::{ValidationResult, Validator};
use rhai::{Engine, LexError, ParseErrorType};

pub(super) struct RhaiValidator {
    engine: Engine,
}

impl RhaiValidator {
    pub(super) fn new() -> Self {
        Self {
            engine: Engine::new_raw(),
        }
    }
}

/// Whether a parse error means "more is coming" rather than "this is wrong".
pub(super) fn is_incomplete(source: &str, error: &rhai::ParseError) -> bool {
    match error.err_type() {
        ParseErrorType::UnexpectedEOF => true,
        ParseErrorType::BadInput(LexError::UnterminatedString) => true,
        ParseErrorType::MissingToken(..) | ParseErrorType::MissingSymbol(..) => {
            // Missing at the very end of the input: the user has not typed it yet.
            let last_line = source.trim_end().lines().count();
            error.position().line().is_none_or(|line| line >= last_line)
        }
        _ => false,
    }
}

impl Validator for RhaiValidator {
    fn validate(&self, line: &str) -> ValidationResult {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(':') || trimmed.ends_with(";;") {
            return ValidationResult::Complete;
        }
        match self.engine.compile(line) {
            Err(error) if is_incomplete(line, &error) => ValidationResult::Incomplete,
            _ => ValidationResult::Complete,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incomplete(text: &str) -> bool {
        matches!(
            RhaiValidator::new().validate(text),
            ValidationResult::Incomplete
        )
    }

    #[test]
    fn unfinished_input_continues() {
        assert!(incomplete("let x = ["));
        assert!(incomplete("step(\"a\", || {"));
        assert!(incomplete("let m = #{ a: 1,"));
        assert!(incomplete("print(\"abc"));
        assert!(incomplete("k8s::nodes("));
        assert!(!incomplete("1 + 1"));
        assert!(!incomplete("let x = ;"));
        assert!(!incomplete(":help"));
    }
}
