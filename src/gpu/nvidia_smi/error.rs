//! The one error type shared by the `nvidia-smi` parsers.

/// Why `nvidia-smi` output could not be parsed. Line numbers are 1-based.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// A line that does not have the shape the format requires.
    #[error("line {line}: expected {expected}, found {text:?}")]
    Unexpected {
        line: usize,
        text: String,
        expected: String,
    },
    /// A CSV row whose cell count differs from the header or the given fields.
    #[error(
        "line {line}: expected {expected} comma-separated cells (one per query field), found {found}: {text:?}"
    )]
    ColumnCount {
        line: usize,
        expected: usize,
        found: usize,
        text: String,
    },
    /// CSV from `--format=csv,noheader` parsed without the query's field names.
    #[error(
        "line {line}: expected a csv header such as \"index, name, memory.total [MiB]\", found {text:?}; \
         for --format=csv,noheader pass the --query-gpu fields"
    )]
    MissingFields { line: usize, text: String },
    /// The XML itself is malformed.
    #[error("line {line}: malformed nvidia-smi XML: {message}")]
    Xml { line: usize, message: String },
    /// The XML document stops before its elements are closed.
    #[error("line {line}: nvidia-smi XML ends early: expected {missing}")]
    Truncated { line: usize, missing: String },
    /// Nothing recognisable at all.
    #[error("expected {expected}, found no usable lines")]
    Empty { expected: String },
}

/// 1-based line number of a byte offset, for messages about a position in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
