//! The run history: one SQLite database (`history.sqlite3` in the history folder, WAL mode so
//! readers never wait on a drill that is writing) with a row per run, its metrics and its
//! steps. Runs are numbered in the order they finished; a run's key is its runbook, target and
//! parameters, the things a baseline must hold still to compare like with like.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, params};

use super::error::HistoryError;

mod reads;
use crate::report::{MetricRecord, Report};

/// The database file in a history folder.
pub const FILE_NAME: &str = "history.sqlite3";

/// What a baseline compares like with like by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunKey {
    /// The runbook's file, absolute (the same drill from another folder is the same drill).
    pub runbook_path: String,
    /// Where it ran (the twin, a `lab serve`, a cluster): the same key the target lock uses.
    pub target: String,
    /// The run's parameters as canonical JSON (keys sorted).
    pub parameters: String,
}

/// Which metric, as earlier runs recorded it: its name, labels ([`crate::report::label_key`])
/// and the step that measured it (`outer > inner`).
#[derive(Debug, Clone, Copy)]
pub struct MetricId<'a> {
    pub name: &'a str,
    pub labels: &'a str,
    pub step: &'a str,
}

/// A step that passed in some runs and failed in others of the same runbook, target and
/// commit: what changed was not the code, so the step (or what it checks) is flaky.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlakyStep {
    pub runbook: String,
    pub step: String,
    pub target: String,
    pub commit: String,
    pub passed: u32,
    pub failed: u32,
    /// The runs in the window where it ran, newest first.
    pub runs: Vec<u64>,
}

/// A finished run to keep.
impl FlakyStep {
    /// Of steps that flake inside one another (`outer` and `outer > inner`), the innermost.
    pub(super) fn innermost(found: Vec<FlakyStep>) -> Vec<FlakyStep> {
        found
            .iter()
            .filter(|f| {
                !found.iter().any(|inner| {
                    inner.runbook == f.runbook
                        && inner.commit == f.commit
                        && inner.target == f.target
                        && inner.step.starts_with(&format!("{} > ", f.step))
                })
            })
            .cloned()
            .collect()
    }
}

pub struct NewRun<'a> {
    pub key: &'a RunKey,
    /// The runbook as the user named it.
    pub runbook: &'a str,
    pub report: &'a Report,
    /// Unix seconds (wall clock) when it started and ended.
    pub started: f64,
    pub finished: f64,
    /// The commit the runbook came from, when known.
    pub commit: Option<&'a str>,
}

/// A run as the history keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub number: u64,
    pub run_id: String,
    pub runbook: String,
    pub runbook_path: String,
    pub target: String,
    pub parameters: String,
    pub status: String,
    pub started: f64,
    pub finished: f64,
    pub wall_ms: u64,
    pub virtual_ms: u64,
    /// The innermost failing step, `outer > inner`.
    pub failed_step: Option<String>,
    pub error: Option<String>,
    pub commit: Option<String>,
    pub metrics: Vec<MetricRecord>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    number       INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       TEXT NOT NULL,
    runbook      TEXT NOT NULL,
    runbook_path TEXT NOT NULL,
    target       TEXT NOT NULL,
    parameters   TEXT NOT NULL,
    status       TEXT NOT NULL,
    started      REAL NOT NULL,
    finished     REAL NOT NULL,
    wall_ms      INTEGER NOT NULL,
    virtual_ms   INTEGER NOT NULL,
    failed_step  TEXT,
    error        TEXT,
    commit_id    TEXT,
    report       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_key ON runs (runbook_path, target, parameters, number);
CREATE TABLE IF NOT EXISTS metrics (
    run     INTEGER NOT NULL REFERENCES runs (number) ON DELETE CASCADE,
    step    TEXT NOT NULL,
    name    TEXT NOT NULL,
    labels  TEXT NOT NULL,
    record  TEXT NOT NULL,
    value   REAL NOT NULL,
    ok      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS metrics_by_name ON metrics (name, labels, step, run);
CREATE TABLE IF NOT EXISTS steps (
    run        INTEGER NOT NULL REFERENCES runs (number) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    status     TEXT NOT NULL,
    wall_ms    INTEGER NOT NULL,
    virtual_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS steps_by_run ON steps (run);
CREATE TABLE IF NOT EXISTS gpu_verdicts (
    run      INTEGER NOT NULL REFERENCES runs (number) ON DELETE CASCADE,
    finished REAL NOT NULL,
    node     TEXT NOT NULL,
    machine  TEXT NOT NULL,
    verdict  TEXT NOT NULL,
    health   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS gpu_verdicts_by_machine ON gpu_verdicts (machine, finished);
CREATE INDEX IF NOT EXISTS gpu_verdicts_by_node ON gpu_verdicts (node, finished);
CREATE TABLE IF NOT EXISTS node_certificates (
    run         INTEGER NOT NULL REFERENCES runs (number) ON DELETE CASCADE,
    finished    REAL NOT NULL,
    node        TEXT NOT NULL,
    machine     TEXT NOT NULL,
    certificate TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS node_certificates_by_machine ON node_certificates (machine, finished);
";

/// Where the stamp of the last check or write is kept: beside the database.
fn stamp_path(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".checked");
    PathBuf::from(name)
}

/// The database file's size and modification time (nanoseconds), as one line.
fn file_stamp(database: &Path) -> Option<String> {
    let meta = std::fs::metadata(database).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!("{} {}\n", meta.len(), modified.as_nanos()))
}

/// The schema this build writes; a newer database is refused rather than misread.
const SCHEMA_VERSION: i64 = 1;

pub struct LocalHistory {
    conn: Connection,
    path: PathBuf,
}

impl LocalHistory {
    /// Opens (creating if need be) the history in `dir`.
    pub fn open(dir: &Path) -> Result<Self, HistoryError> {
        let path = dir.join(FILE_NAME);
        let opened = (|| {
            crate::sandbox::private_dir(dir).map_err(HistoryError::from_io)?;
            let conn = Connection::open(&path)?;
            crate::sandbox::private_file(&path).map_err(HistoryError::from_io)?;
            // Two drills finishing together, or a `history` read during a run: wait, don't fail.
            conn.busy_timeout(Duration::from_secs(10))?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "foreign_keys", "ON")?;
            let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
            if version > SCHEMA_VERSION {
                return Err(HistoryError::NewerSchema { version });
            }
            conn.execute_batch(SCHEMA)?;
            // Written only when it changes: an open that writes nothing leaves the file as
            // the last check stamped it.
            if version != SCHEMA_VERSION {
                conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            }
            Ok(conn)
        })();
        match opened {
            Ok(conn) => Ok(Self { conn, path }),
            Err(error) => Err(error.at(&path)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The database, for the history's other tables (the GPU record).
    pub(super) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// SQLite's `quick_check` over every page: a history with garbled pages is found before a
    /// run starts, not when its baselines go unjudged or its record cannot be kept. Skipped
    /// when the file is as the last run that checked or wrote it left it (same size and
    /// modification time, kept beside it): reading every page of a long history costs each
    /// run more than all its other history work.
    pub fn check(&self) -> Result<(), HistoryError> {
        let stamp = file_stamp(&self.path);
        let checked = std::fs::read_to_string(stamp_path(&self.path)).ok();
        if stamp.is_some() && stamp == checked {
            return Ok(());
        }
        self.check_every_page()?;
        self.keep_stamp();
        Ok(())
    }

    /// Notes the file as it is now as checked; a file that cannot be stamped is checked again
    /// next time.
    fn keep_stamp(&self) {
        let path = stamp_path(&self.path);
        match file_stamp(&self.path) {
            Some(stamp) if std::fs::write(&path, &stamp).is_ok() => {
                let _ = crate::sandbox::private_file(&path);
            }
            _ => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    fn check_every_page(&self) -> Result<(), HistoryError> {
        let problems: Vec<String> = self
            .conn
            .prepare("PRAGMA quick_check(3)")
            .and_then(|mut statement| {
                statement
                    .query_map([], |row| row.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| HistoryError::Sql(e).at(&self.path))?;
        match problems.as_slice() {
            [ok] if ok == "ok" => Ok(()),
            _ => Err(HistoryError::Damaged {
                path: self.path.clone(),
                problem: problems.join("; "),
            }),
        }
    }

    /// Keeps a finished run; answers its number.
    pub fn record(&mut self, run: &NewRun<'_>) -> Result<u64, HistoryError> {
        let rows = super::rows::rows_of(run);
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (run_id, runbook, runbook_path, target, parameters, status, started,
                               finished, wall_ms, virtual_ms, failed_step, error, commit_id, report)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                rows.run_id,
                run.runbook,
                run.key.runbook_path,
                run.key.target,
                run.key.parameters,
                rows.status,
                run.started,
                run.finished,
                rows.wall_ms,
                rows.virtual_ms,
                rows.failed_step,
                rows.error,
                run.commit,
                rows.report,
            ],
        )?;
        let row = tx.last_insert_rowid();
        {
            let mut metric = tx.prepare(
                "INSERT INTO metrics (run, step, name, labels, record, value, ok) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for m in &rows.metrics {
                metric.execute(params![
                    row, m.step, m.name, m.labels, m.record, m.value, m.ok
                ])?;
            }
            let mut step = tx.prepare(
                "INSERT INTO steps (run, path, status, wall_ms, virtual_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for s in &rows.steps {
                step.execute(params![row, s.path, s.status, s.wall_ms, s.virtual_ms])?;
            }
            let mut verdict = tx.prepare(
                "INSERT INTO gpu_verdicts (run, finished, node, machine, verdict, health) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for v in &rows.verdicts {
                verdict.execute(params![
                    row,
                    run.finished,
                    v.node,
                    v.machine,
                    v.verdict,
                    v.health
                ])?;
            }
            let mut certificate = tx.prepare(
                "INSERT INTO node_certificates (run, finished, node, machine, certificate) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for c in &rows.certificates {
                certificate.execute(params![
                    row,
                    run.finished,
                    c.node,
                    c.machine,
                    c.certificate
                ])?;
            }
        }
        tx.commit()?;
        // Into the main file now (as closing would), so the stamp holds what was written; a
        // checkpoint a reader holds up leaves no stamp, and the next run checks every page.
        let checkpointed = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                r.get::<_, i64>(0)
            })
            .is_ok_and(|busy| busy == 0);
        if checkpointed {
            self.keep_stamp();
        } else {
            let _ = std::fs::remove_file(stamp_path(&self.path));
        }
        Ok(u64::try_from(row).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn garble_keeping_size_and_time(path: &Path) {
        let modified = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .expect("mtime");
        let mut bytes = std::fs::read(path).expect("read");
        for (i, byte) in bytes.iter_mut().enumerate().skip(4096) {
            *byte = (i * 7 % 251) as u8;
        }
        std::fs::write(path, &bytes).expect("write");
        let file = std::fs::File::options()
            .write(true)
            .open(path)
            .expect("open");
        file.set_modified(modified).expect("set mtime");
    }

    #[test]
    fn pages_are_walked_only_when_the_file_changed_since_the_last_check() {
        let dir = tempfile::tempdir().expect("temp dir");
        // Made, closed (the schema checkpointed into the file), then opened and checked.
        drop(LocalHistory::open(dir.path()).expect("made"));
        let history = LocalHistory::open(dir.path()).expect("open");
        history.check().expect("a new history is whole");
        let stamp = stamp_path(history.path());
        assert!(stamp.exists(), "the check is stamped");
        let path = history.path().to_path_buf();
        drop(history);
        let size = std::fs::metadata(&path).expect("metadata").len();
        assert!(size > 4096, "the schema takes more than one page: {size}");
        // A rewrite that keeps size and time is taken for the file last checked (a cheap
        // check's blind spot: SQLite still finds such pages when it reads them)...
        garble_keeping_size_and_time(&path);
        let again = LocalHistory::open(dir.path()).expect("the first page is intact");
        assert!(again.check().is_ok(), "the stamp matched: no page walk");
        drop(again);
        // ...while any change of size or time brings the walk back.
        std::fs::write(&stamp, "0 0\n").expect("write stamp");
        let opened = LocalHistory::open(dir.path());
        assert!(
            opened.map_or(true, |h| h.check().is_err()),
            "a garbled history is found"
        );
    }
}
