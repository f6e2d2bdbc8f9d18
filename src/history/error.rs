//! What can go wrong with the run history, naming the database file.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("the run history {}", path.display())]
    Database {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the run history {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the run history {} was written by a newer runbook (schema {version}); use that version, or another --history folder", path.display())]
    Newer { path: PathBuf, version: i64 },
    /// SQLite's integrity check found a problem (or the file is not a database at all).
    #[error("the run history {} is damaged ({problem})", path.display())]
    Damaged { path: PathBuf, problem: String },
    /// Raised inside the store before the path is attached with [`HistoryError::at`].
    #[error("the run history")]
    Sql(#[from] rusqlite::Error),
    #[error("the run history")]
    File(#[source] std::io::Error),
    /// The shared store's history: not reached, or a query refused.
    #[error(transparent)]
    Store(Box<crate::store::StoreError>),
    #[error("schema {version} is newer than this build's")]
    NewerSchema { version: i64 },
}

impl HistoryError {
    /// Whether the database file itself is damaged (garbled pages, not a database), as
    /// opposed to a folder that cannot be written or a newer schema.
    pub fn is_damaged(&self) -> bool {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match self {
            Self::Damaged { .. } => true,
            Self::Database { source, .. } | Self::Sql(source) => matches!(
                source.sqlite_error_code(),
                Some(DatabaseCorrupt | NotADatabase)
            ),
            _ => false,
        }
    }

    pub(super) fn from_io(error: std::io::Error) -> Self {
        Self::File(error)
    }

    /// The same error, naming the database file.
    pub(super) fn at(self, path: &Path) -> Self {
        let path = path.to_path_buf();
        match self {
            Self::Sql(source) => Self::Database { path, source },
            Self::File(source) => Self::Io { path, source },
            Self::NewerSchema { version } => Self::Newer { path, version },
            other => other,
        }
    }
}
