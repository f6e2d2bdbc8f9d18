//! Appending to a journal: one JSON line a record, synced to disk before the call it announces
//! goes out, so a run killed at any point leaves a journal that says what it had sent.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::record::Record;

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot write the run journal {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read the run journal {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub struct Journal {
    path: PathBuf,
    file: Mutex<std::fs::File>,
    next_seq: AtomicU64,
    /// Each record synced to disk before `append` returns. A run on the embedded twin skips
    /// that: its target dies with the process, so there is never anything to recover.
    durable: bool,
}

impl Journal {
    /// Creates `dir` and its `journal.jsonl` (never one that exists); `durable`: each record
    /// is synced to disk before `append` returns.
    pub fn create(dir: &Path, durable: bool) -> Result<Self, JournalError> {
        let path = dir.join("journal.jsonl");
        let error = |source| JournalError::Write {
            path: path.clone(),
            source,
        };
        crate::sandbox::private_dir(dir).map_err(error)?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(error)?;
        Ok(Self {
            path,
            file: Mutex::new(file),
            next_seq: AtomicU64::new(1),
            durable,
        })
    }

    /// Opens an existing journal to add to it (`recover` marks what it did).
    pub fn append_to(path: &Path) -> Result<Self, JournalError> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| JournalError::Write {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            next_seq: AtomicU64::new(1),
            durable: true,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next mutation's number.
    pub fn next_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed)
    }

    /// Appends one record and syncs it: when this returns, the record survives a crash.
    pub fn append(&self, record: &Record) -> Result<(), JournalError> {
        let mut line = serde_json::to_string(record).unwrap_or_default();
        line.push('\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        file.write_all(line.as_bytes())
            .and_then(|()| {
                if self.durable {
                    file.sync_data()
                } else {
                    Ok(())
                }
            })
            .map_err(|source| JournalError::Write {
                path: self.path.clone(),
                source,
            })
    }
}
