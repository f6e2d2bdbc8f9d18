//! Turns Rhai errors into messages people can act on: `file:line:col`, the source line with a
//! caret, and a hint (the nearest known name) where one helps.

use rhai::{Engine, EvalAltResult, ParseError, ParseErrorType, Position};

use super::error::UsageError;
use super::sources::SourceMap;
use super::suggest;

/// What kind of trouble an error is; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The world is not as the runbook expects: a failed assertion, a thrown error, a timeout.
    Failure,
    /// The runbook itself is wrong: syntax, unknown names, wrong types, broken limits.
    Script,
    /// Ctrl-C.
    Interrupted,
    /// A bug in runbook itself (a panic), caught at the run's boundary so the cleanups run.
    Internal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub source: String,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.source, self.line, self.column)
    }
}

#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub kind: FaultKind,
    pub message: String,
    pub location: Option<Location>,
    /// Where the failing code was called from, innermost last.
    pub callers: Vec<Location>,
    pub help: Vec<String>,
    /// Under a client error's one line, every layer's own message (`e.causes`): shown with
    /// `--verbose` and kept in the report's `error_detail`.
    pub causes: Vec<String>,
    missing: Option<Missing>,
}

#[derive(Debug, Clone)]
enum Missing {
    Function(String),
    Variable(String),
    Module(String),
}

fn locate(source: &str, position: Position) -> Option<Location> {
    Some(Location {
        source: source.to_string(),
        line: position.line()?,
        column: position.position().unwrap_or(1),
    })
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The longest line a message keeps whole: a 5 MB value quoted in an error is shown by its
/// start and end, not printed as one line of 5 million characters.
const LONGEST_LINE: usize = 2000;

/// `text` with each line over [`LONGEST_LINE`] characters cut in its middle, saying how much.
pub fn elide_long_lines(text: &str) -> String {
    if text.len() <= LONGEST_LINE {
        return text.to_string();
    }
    text.split('\n')
        .map(|line| {
            let count = line.chars().count();
            if count <= LONGEST_LINE {
                return line.to_string();
            }
            let head: String = line.chars().take(LONGEST_LINE / 2).collect();
            let tail: String = line.chars().skip(count - LONGEST_LINE / 4).collect();
            let left_out = count - LONGEST_LINE / 2 - LONGEST_LINE / 4;
            format!("{head}... ({left_out} characters left out) ...{tail}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Diagnostic {
    pub fn new(kind: FaultKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            location: None,
            callers: Vec::new(),
            help: Vec::new(),
            causes: Vec::new(),
            missing: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// From a runtime error. `source` names the script the error's outermost position is in.
    pub fn from_eval(error: &EvalAltResult, source: &str) -> Self {
        let mut callers = Vec::new();
        let mut current = error;
        let mut current_source = source.to_string();
        loop {
            match current {
                EvalAltResult::ErrorInFunctionCall(_, fn_source, inner, position) => {
                    callers.extend(locate(&current_source, *position));
                    if !fn_source.is_empty() {
                        current_source = fn_source.clone();
                    }
                    current = inner;
                }
                EvalAltResult::ErrorInModule(module, inner, position) => {
                    callers.extend(locate(&current_source, *position));
                    current_source = module.clone();
                    current = inner;
                }
                _ => break,
            }
        }
        if let EvalAltResult::ErrorParsing(kind, position) = current {
            let mut diagnostic = Self::from_parse_parts(kind, *position, &current_source);
            diagnostic.callers = callers;
            return diagnostic;
        }
        let (kind, message, missing) = classify(current);
        Self {
            kind,
            message,
            location: locate(&current_source, current.position()),
            callers,
            help: Vec::new(),
            causes: causes_of(current),
            missing,
        }
    }

    pub fn from_parse(error: &ParseError, source: &str) -> Self {
        Self::from_parse_parts(&error.0, error.1, source)
    }

    fn from_parse_parts(kind: &ParseErrorType, position: Position, source: &str) -> Self {
        let missing = match kind {
            ParseErrorType::VariableUndefined(name) => Some(Missing::Variable(name.clone())),
            ParseErrorType::ModuleUndefined(name) => Some(Missing::Module(name.clone())),
            _ => None,
        };
        let message = match kind {
            ParseErrorType::VariableUndefined(name) => format!("unknown variable `{name}`"),
            other => format!("syntax error: {}", lowercase_first(&other.to_string())),
        };
        Self {
            kind: FaultKind::Script,
            message,
            location: locate(source, position),
            callers: Vec::new(),
            help: Vec::new(),
            causes: Vec::new(),
            missing,
        }
    }

    /// Adds "did you mean" hints, looking names up in the engine and the failing script.
    pub fn suggest(mut self, engine: &Engine, sources: &SourceMap) -> Self {
        let Some(missing) = &self.missing else {
            return self;
        };
        let script_text = self.location.as_ref().and_then(|l| sources.get(&l.source));
        match missing {
            Missing::Function(signature) => {
                self.help.extend(suggest::for_function(
                    engine,
                    script_text.as_deref(),
                    signature,
                ));
            }
            Missing::Variable(name) => {
                self.help
                    .extend(suggest::for_variable(script_text.as_deref(), name));
            }
            Missing::Module(name) => self.help.push(format!(
                "`{name}` is not imported here: add `import \"{name}\" as {name};` at the top"
            )),
        }
        self
    }

    /// For step errors and reports: the message with ` (at file:line:col)` after its first line.
    pub fn one_line(&self) -> String {
        let Some(location) = &self.location else {
            return elide_long_lines(&self.message);
        };
        match self.message.split_once('\n') {
            Some((first, rest)) => elide_long_lines(&format!("{first} (at {location})\n{rest}")),
            None => elide_long_lines(&format!("{} (at {location})", self.message)),
        }
    }

    /// The full rendering for a terminal: headline, location, source line with a caret, the
    /// rest of the message, then callers and hints; with `verbose`, the causes under them.
    pub fn render(&self, sources: &SourceMap, verbose: bool) -> String {
        let headline = match self.kind {
            FaultKind::Failure => "failed",
            FaultKind::Script | FaultKind::Internal => "error",
            FaultKind::Interrupted => "interrupted",
        };
        let message = elide_long_lines(&self.message);
        let mut lines = message.lines();
        let mut out = format!("{headline}: {}\n", lines.next().unwrap_or_default());
        if let Some(location) = &self.location {
            let gutter = " ".repeat(location.line.to_string().len());
            out.push_str(&format!("{gutter}--> {location}\n"));
            if let Some(text) = sources.line(&location.source, location.line) {
                let prefix: String = text
                    .chars()
                    .take(location.column.saturating_sub(1))
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                out.push_str(&format!(
                    "{gutter} |\n{} | {text}\n{gutter} | {prefix}^\n",
                    location.line
                ));
            }
        }
        for line in lines {
            out.push_str(&format!("  {line}\n"));
        }
        for caller in self.callers.iter().rev() {
            out.push_str(&format!("  = called from {caller}\n"));
        }
        for help in &self.help {
            out.push_str(&format!("  = help: {help}\n"));
        }
        if verbose {
            for cause in &self.causes {
                out.push_str(&format!("  = caused by: {cause}\n"));
            }
        }
        out
    }
}

/// The `causes` a binding put in its error map.
fn causes_of(error: &EvalAltResult) -> Vec<String> {
    let EvalAltResult::ErrorRuntime(value, _) = error else {
        return Vec::new();
    };
    let Some(map) = value.read_lock::<rhai::Map>() else {
        return Vec::new();
    };
    map.get("causes")
        .and_then(|c| {
            c.read_lock::<rhai::Array>()
                .map(|a| a.iter().map(ToString::to_string).collect())
        })
        .unwrap_or_default()
}

fn classify(error: &EvalAltResult) -> (FaultKind, String, Option<Missing>) {
    use EvalAltResult as E;
    match error {
        E::ErrorRuntime(value, _) => {
            if let Some(usage) = value.read_lock::<UsageError>() {
                return (FaultKind::Script, usage.0.clone(), None);
            }
            if value.is_string() {
                return (FaultKind::Failure, value.to_string(), None);
            }
            // Errors from the bindings are maps with a reason and a message.
            if let Some(map) = value.read_lock::<rhai::Map>()
                && let Some(message) = map.get("message")
            {
                let reason = map.get("reason").or_else(|| map.get("code")).map(|r| format!("{r}: ")).unwrap_or_default();
                return (FaultKind::Failure, format!("{reason}{message}"), None);
            }
            (FaultKind::Failure, format!("thrown: {value}"), None)
        }
        E::ErrorTerminated(token, _) if token.to_string() == super::engine::MEMORY_EXHAUSTED => (
            FaultKind::Script,
            format!(
                "the runbook's data grew past {} MiB: a loop that never stops growing a string or an array?",
                super::memory::MAX_DATA_BYTES >> 20
            ),
            None,
        ),
        // The host's token names the signal (`interrupted by SIGTERM`).
        E::ErrorTerminated(token, _) => {
            let said = token.to_string();
            let message = if said.starts_with("interrupted by ") { said } else { "interrupted by Ctrl-C".into() };
            (FaultKind::Interrupted, message, None)
        }
        E::ErrorFunctionNotFound(signature, _) => (
            FaultKind::Script,
            format!("unknown function: {signature}"),
            Some(Missing::Function(signature.clone())),
        ),
        E::ErrorVariableNotFound(name, _) => {
            (FaultKind::Script, format!("unknown variable `{name}`"), Some(Missing::Variable(name.clone())))
        }
        E::ErrorModuleNotFound(name, _) => (
            FaultKind::Script,
            format!("module not found: \"{name}\""),
            None,
        ),
        E::ErrorTooManyOperations(_) => (
            FaultKind::Script,
            "the script ran too many operations (an endless loop?); the limit keeps runbooks from hanging".into(),
            None,
        ),
        E::ErrorStackOverflow(_) => (
            FaultKind::Script,
            "calls nested too deeply (endless recursion?)".into(),
            None,
        ),
        E::ErrorDataTooLarge(what, _) => (FaultKind::Script, format!("{} is over the size limit", lowercase_first(what)), None),
        // Data-dependent errors: the world had fewer items or other keys than the runbook expected.
        E::ErrorArrayBounds(..)
        | E::ErrorStringBounds(..)
        | E::ErrorBitFieldBounds(..)
        | E::ErrorIndexNotFound(..)
        | E::ErrorPropertyNotFound(..) => (FaultKind::Failure, plain_message(error), None),
        _ => (FaultKind::Script, plain_message(error), None),
    }
}

fn plain_message(error: &EvalAltResult) -> String {
    // Some of Rhai's messages carry their own "(line N, position M)"; the location is shown apart.
    let text = error.to_string();
    let text = match text.rfind(" (line ") {
        Some(at) if text.ends_with(')') && text[at..].contains(", position ") => &text[..at],
        _ => &text,
    };
    lowercase_first(text)
}
