//! Appending to a journal: each record durable before the call it announces goes out. In a
//! file, one JSON line a record synced to disk; in a shared store, committed there. A store
//! that cannot be reached is given up: the journal goes on in a local file, with every record
//! written so far, and the run sends only its cleanups' calls.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

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

/// A shared store's side of a journal: the `line`th record of run `run_id` committed there
/// before this returns (the store implements it; the journal does not know the database).
pub trait RecordStore: Send + Sync {
    fn append(&self, run_id: &str, line: u64, record: &Record) -> Result<(), String>;
    /// Its address, without a password.
    fn name(&self) -> String;
}

enum Sink {
    File {
        path: PathBuf,
        file: std::fs::File,
        /// Each record synced to disk before `append` returns. A run on the embedded twin
        /// skips that: its target dies with the process, so there is never anything to recover.
        durable: bool,
    },
    Shared {
        store: Arc<dyn RecordStore>,
        run_id: String,
        /// The lines committed, as JSON: what a local journal starts with if the store goes.
        written: Vec<String>,
        /// Where the journal goes on if the store cannot be reached.
        fallback: PathBuf,
    },
}

pub struct Journal {
    sink: Mutex<Sink>,
    next_seq: AtomicU64,
    /// Why the shared store was given up, once it was.
    store_lost: OnceLock<String>,
}

fn open_file(path: &Path, create: bool) -> Result<std::fs::File, JournalError> {
    let error = |source| JournalError::Write {
        path: path.to_path_buf(),
        source,
    };
    if create && let Some(dir) = path.parent() {
        crate::sandbox::private_dir(dir).map_err(error)?;
    }
    std::fs::OpenOptions::new()
        .append(true)
        .create_new(create)
        .mode(0o600)
        .open(path)
        .map_err(error)
}

fn line_of(record: &Record) -> String {
    let mut line = serde_json::to_string(record).unwrap_or_default();
    line.push('\n');
    line
}

impl Journal {
    fn with(sink: Sink) -> Self {
        Self {
            sink: Mutex::new(sink),
            next_seq: AtomicU64::new(1),
            store_lost: OnceLock::new(),
        }
    }

    /// Creates `dir` and its `journal.jsonl` (never one that exists); `durable`: each record
    /// is synced to disk before `append` returns.
    pub fn create(dir: &Path, durable: bool) -> Result<Self, JournalError> {
        let path = dir.join("journal.jsonl");
        let file = open_file(&path, true)?;
        Ok(Self::with(Sink::File {
            path,
            file,
            durable,
        }))
    }

    /// A journal kept in a shared store, going on in `fallback_dir`'s `journal.jsonl` if the
    /// store cannot be reached.
    pub fn shared(store: Arc<dyn RecordStore>, run_id: &str, fallback_dir: &Path) -> Self {
        Self::with(Sink::Shared {
            store,
            run_id: run_id.to_string(),
            written: Vec::new(),
            fallback: fallback_dir.join("journal.jsonl"),
        })
    }

    /// Opens an existing journal to add to it (`recover` marks what it did).
    pub fn append_to(path: &Path) -> Result<Self, JournalError> {
        let file = open_file(path, false)?;
        Ok(Self::with(Sink::File {
            path: path.to_path_buf(),
            file,
            durable: true,
        }))
    }

    /// Where it is kept, in words: a file's path or the store's address.
    pub fn place(&self) -> String {
        match &*self.sink() {
            Sink::File { path, .. } => path.display().to_string(),
            Sink::Shared { store, .. } => store.name(),
        }
    }

    /// Why the shared store was given up (the run then sends only its cleanups' calls).
    pub fn store_lost(&self) -> Option<&str> {
        self.store_lost.get().map(String::as_str)
    }

    /// The next mutation's number.
    pub fn next_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed)
    }

    fn sink(&self) -> std::sync::MutexGuard<'_, Sink> {
        self.sink.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every record written so far, read back (a stop signal undoes the run from them).
    pub fn records(&self) -> Result<Vec<Record>, JournalError> {
        match &*self.sink() {
            Sink::File { path, .. } => super::read_journal(path),
            Sink::Shared { written, .. } => Ok(written
                .iter()
                .filter_map(|line| serde_json::from_str(line.trim_end()).ok())
                .collect()),
        }
    }

    /// Appends one record: when this returns, it survives a crash of this machine (a file,
    /// synced) or of any (the shared store). Err: it was not kept, and the call it announces
    /// must not be sent.
    pub fn append(&self, record: &Record) -> Result<(), JournalError> {
        let mut sink = self.sink();
        let (path, why) = match &mut *sink {
            Sink::File {
                path,
                file,
                durable,
            } => {
                return file
                    .write_all(line_of(record).as_bytes())
                    .and_then(|()| if *durable { file.sync_data() } else { Ok(()) })
                    .map_err(|source| JournalError::Write {
                        path: path.clone(),
                        source,
                    });
            }
            Sink::Shared {
                store,
                run_id,
                written,
                fallback,
            } => {
                let line = written.len() as u64 + 1;
                match store.append(run_id, line, record) {
                    Ok(()) => {
                        written.push(line_of(record));
                        return Ok(());
                    }
                    Err(why) => (fallback.clone(), why),
                }
            }
        };
        let written = match &*sink {
            Sink::Shared { written, .. } => written.concat(),
            Sink::File { .. } => String::new(),
        };
        let file = open_file(&path, true).and_then(|mut file| {
            file.write_all(written.as_bytes())
                .and_then(|()| file.sync_data())
                .map(|()| file)
                .map_err(|source| JournalError::Write {
                    path: path.clone(),
                    source,
                })
        })?;
        *sink = Sink::File {
            path: path.clone(),
            file,
            durable: true,
        };
        let _ = self.store_lost.set(why.clone());
        drop(sink);
        let state_dir = path.ancestors().nth(3).unwrap_or(Path::new("."));
        eprintln!(
            "warning: {why}\n  no call is sent unjournaled: this run sends only its cleanups' calls, journaled in {}; \
             if it does not end by itself, `runbook recover --state-dir {}` on this machine, without --state or RUNBOOK_STATE, puts back what it changed",
            path.display(),
            state_dir.display()
        );
        // Kept here instead: a cleanup's call goes out journaled; any other call's is not sent
        // (the host checks `store_lost` once the record is kept).
        self.append(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// A store that keeps lines until it is told to go away.
    #[derive(Default)]
    struct Flaky {
        gone: AtomicBool,
        kept: Mutex<Vec<(u64, Record)>>,
    }

    impl RecordStore for Flaky {
        fn append(&self, _run_id: &str, line: u64, record: &Record) -> Result<(), String> {
            if self.gone.load(Ordering::SeqCst) {
                return Err("the store went away".into());
            }
            self.kept
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((line, record.clone()));
            Ok(())
        }

        fn name(&self) -> String {
            "postgres://ci@db/runbook".into()
        }
    }

    fn registered(id: u64) -> Record {
        Record::DeferRegistered {
            id,
            name: format!("cleanup {id}"),
        }
    }

    #[test]
    fn a_lost_store_leaves_a_whole_local_journal_behind() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(Flaky::default());
        let journal = Journal::shared(store.clone(), "r1", &dir.path().join("runs/r1"));
        journal.append(&registered(1)).expect("kept in the store");
        journal.append(&registered(2)).expect("kept in the store");
        assert_eq!(journal.place(), "postgres://ci@db/runbook");
        assert_eq!(journal.store_lost(), None);
        let lines: Vec<u64> = store.kept.lock().unwrap().iter().map(|(n, _)| *n).collect();
        assert_eq!(lines, [1, 2]);
        store.gone.store(true, Ordering::SeqCst);
        journal.append(&registered(3)).expect("kept locally");
        assert_eq!(journal.store_lost(), Some("the store went away"));
        let path = dir.path().join("runs/r1/journal.jsonl");
        assert_eq!(journal.place(), path.display().to_string());
        // What the store had, then what it could not take: a journal recover can read whole.
        assert_eq!(
            super::super::read_journal(&path).expect("reads"),
            [registered(1), registered(2), registered(3)]
        );
        assert_eq!(journal.records().expect("reads").len(), 3);
    }
}
