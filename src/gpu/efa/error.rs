//! What can be wrong with an EFA tool's output, for every parser of this folder.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EfaParseError {
    /// A `provider:` entry without a field fi_info always prints.
    #[error("fi_info entry {entry} (provider {provider}) has no `{field}:` line")]
    MissingField {
        entry: usize,
        provider: String,
        field: &'static str,
    },
    /// A row of fi_pingpong's table whose columns do not read as its columns.
    #[error("fi_pingpong row {line:?}: {why}")]
    BadRow { line: String, why: String },
}
