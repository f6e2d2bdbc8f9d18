//! The run history: one SQLite database (`history.sqlite3` in the history folder, WAL mode so
//! readers never wait on a drill that is writing) with a row per run, its metrics and its
//! steps. Runs are numbered in the order they finished; a run's key is its runbook, target and
//! parameters, the things a baseline must hold still to compare like with like.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::error::HistoryError;
use crate::report::{MetricRecord, Report, StepRecord};

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

pub struct History {
    conn: Connection,
    path: PathBuf,
}

impl History {
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
        let report = run.report;
        let failed = failed_step(&report.steps);
        let status = serde_json::to_value(report.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (run_id, runbook, runbook_path, target, parameters, status, started,
                               finished, wall_ms, virtual_ms, failed_step, error, commit_id, report)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                report.run_id.as_deref().unwrap_or_default(),
                run.runbook,
                run.key.runbook_path,
                run.key.target,
                run.key.parameters,
                status,
                run.started,
                run.finished,
                int(report.wall_ms),
                int(report.virtual_ms),
                failed,
                report.error,
                run.commit,
                report.to_json(),
            ],
        )?;
        let row = tx.last_insert_rowid();
        {
            let mut metric = tx.prepare(
                "INSERT INTO metrics (run, step, name, labels, record, value, ok) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for m in &report.metrics {
                let record = serde_json::to_string(m).unwrap_or_default();
                metric.execute(params![
                    row,
                    m.step.join(" > "),
                    m.name,
                    m.label_key(),
                    record,
                    m.value,
                    m.ok
                ])?;
            }
            let mut step = tx.prepare(
                "INSERT INTO steps (run, path, status, wall_ms, virtual_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (path, s) in report.flat_steps() {
                let status = serde_json::to_value(s.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                step.execute(params![
                    row,
                    path.join(" > "),
                    status,
                    int(s.wall_ms),
                    int(s.virtual_ms)
                ])?;
            }
        }
        super::gpu_record::keep_verdicts(&tx, row, run.finished, report)?;
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

    /// The values of metric `metric` in earlier runs of `key` where it passed, oldest first,
    /// at most `limit` (the newest ones).
    pub fn passing_values(
        &self,
        key: &RunKey,
        metric: &MetricId<'_>,
        limit: usize,
    ) -> Result<Vec<(u64, f64)>, HistoryError> {
        Ok(self
            .values(key, metric, limit, true)?
            .into_iter()
            .map(|(run, value, _)| (run, value))
            .collect())
    }

    /// Metric `metric`'s values in the last `limit` runs of `key` that recorded it, passed or
    /// not, oldest first: (run number, value, ok).
    pub fn series(
        &self,
        key: &RunKey,
        metric: &MetricId<'_>,
        limit: usize,
    ) -> Result<Vec<(u64, f64, bool)>, HistoryError> {
        self.values(key, metric, limit, false)
    }

    /// The last `limit` values of `metric` in runs of `key` (only those where it passed, with
    /// `passing_only`), oldest first.
    fn values(
        &self,
        key: &RunKey,
        metric: &MetricId<'_>,
        limit: usize,
        passing_only: bool,
    ) -> Result<Vec<(u64, f64, bool)>, HistoryError> {
        let mut query = self.conn.prepare_cached(
            "SELECT m.run, m.value, m.ok FROM metrics m JOIN runs r ON r.number = m.run
             WHERE r.runbook_path = ?1 AND r.target = ?2 AND r.parameters = ?3
               AND m.name = ?4 AND m.labels = ?5 AND m.step = ?6 AND (?8 = 0 OR m.ok = 1)
             ORDER BY m.run DESC LIMIT ?7",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut values = query
            .query_map(
                params![
                    key.runbook_path,
                    key.target,
                    key.parameters,
                    metric.name,
                    metric.labels,
                    metric.step,
                    limit,
                    passing_only
                ],
                |row| {
                    Ok((
                        u64::try_from(row.get::<_, i64>(0)?).unwrap_or_default(),
                        row.get::<_, f64>(1)?,
                        row.get::<_, bool>(2)?,
                    ))
                },
            )?
            .collect::<Result<Vec<_>, _>>()?;
        values.reverse();
        Ok(values)
    }

    /// The newest runs, newest first: of one runbook (its absolute path) or of all.
    pub fn recent(
        &self,
        runbook_path: Option<&str>,
        limit: usize,
    ) -> Result<Vec<RunRow>, HistoryError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let sql = format!(
            "{SELECT_RUN} WHERE ?1 IS NULL OR runbook_path = ?1 ORDER BY number DESC LIMIT ?2"
        );
        let mut query = self.conn.prepare(&sql)?;
        let rows = query
            .query_map(params![runbook_path, limit], run_row)?
            .collect::<Result<Vec<_>, _>>()?;
        self.with_metrics(rows)
    }

    /// Per runbook in the history (or just `runbook_path`): its name as last given, and its
    /// newest passing run, if it has one.
    pub fn last_passing(
        &self,
        runbook_path: Option<&str>,
    ) -> Result<Vec<(String, Option<RunRow>)>, HistoryError> {
        let mut query = self.conn.prepare(
            "SELECT runbook_path, (SELECT runbook FROM runs n WHERE n.runbook_path = r.runbook_path
                                   ORDER BY number DESC LIMIT 1)
             FROM runs r WHERE ?1 IS NULL OR runbook_path = ?1
             GROUP BY runbook_path ORDER BY runbook_path",
        )?;
        let runbooks = query
            .query_map(params![runbook_path], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let sql = format!(
            "{SELECT_RUN} WHERE runbook_path = ?1 AND status = 'passed' ORDER BY number DESC LIMIT 1"
        );
        runbooks
            .into_iter()
            .map(|(path, name)| {
                let row = self
                    .conn
                    .query_row(&sql, params![path], run_row)
                    .optional()?;
                Ok((name, self.with_metrics(row.into_iter().collect())?.pop()))
            })
            .collect()
    }

    /// Every recorded value of metric `name` (of one runbook, or of all), oldest run first:
    /// (run number, runbook as named, the record).
    pub fn metric_history(
        &self,
        runbook_path: Option<&str>,
        name: &str,
        limit: usize,
    ) -> Result<Vec<(u64, String, MetricRecord)>, HistoryError> {
        let mut query = self.conn.prepare(
            "SELECT m.run, r.runbook, m.record FROM metrics m JOIN runs r ON r.number = m.run
             WHERE m.name = ?1 AND (?2 IS NULL OR r.runbook_path = ?2)
             ORDER BY m.run DESC, m.rowid DESC LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows = query
            .query_map(params![name, runbook_path, limit], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter_map(|(run, runbook, record)| {
                let record = serde_json::from_str(&record).ok()?;
                Some((u64::try_from(run).unwrap_or_default(), runbook, record))
            })
            .collect::<Vec<_>>();
        rows.reverse();
        Ok(rows)
    }

    /// A run's whole report as it was written, as JSON.
    pub fn report(&self, number: u64) -> Result<Option<serde_json::Value>, HistoryError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT report FROM runs WHERE number = ?1",
                params![int(number)],
                |row| row.get(0),
            )
            .optional()?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Flaky steps among the last `window` runs (of one runbook, or of all) that know their
    /// commit; only the innermost of nested flaky steps (a failing step fails its parents).
    pub fn flaky_steps(
        &self,
        runbook_path: Option<&str>,
        window: usize,
    ) -> Result<Vec<FlakyStep>, HistoryError> {
        let mut query = self.conn.prepare(
            "WITH recent AS (
                 SELECT number, runbook, runbook_path, target, commit_id FROM runs
                 WHERE commit_id IS NOT NULL AND (?1 IS NULL OR runbook_path = ?1)
                 ORDER BY number DESC LIMIT ?2)
             SELECT r.runbook, s.path, r.target, r.commit_id,
                    SUM(s.status = 'passed'), SUM(s.status = 'failed'),
                    GROUP_CONCAT(r.number)
             FROM steps s JOIN recent r ON r.number = s.run
             GROUP BY r.runbook_path, r.target, r.commit_id, s.path
             HAVING SUM(s.status = 'passed') > 0 AND SUM(s.status = 'failed') > 0
             ORDER BY r.runbook, s.path",
        )?;
        let window = i64::try_from(window).unwrap_or(i64::MAX);
        let found = query
            .query_map(params![runbook_path, window], |row| {
                let runs: String = row.get(6)?;
                let mut runs: Vec<u64> = runs.split(',').filter_map(|n| n.parse().ok()).collect();
                runs.sort_unstable_by(|a, b| b.cmp(a));
                Ok(FlakyStep {
                    runbook: row.get(0)?,
                    step: row.get(1)?,
                    target: row.get(2)?,
                    commit: row.get(3)?,
                    passed: row.get(4)?,
                    failed: row.get(5)?,
                    runs,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let innermost = found
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
            .collect();
        Ok(innermost)
    }

    /// One run by its number.
    pub fn run(&self, number: u64) -> Result<Option<RunRow>, HistoryError> {
        let sql = format!("{SELECT_RUN} WHERE number = ?1");
        let row = self
            .conn
            .query_row(&sql, params![int(number)], run_row)
            .optional()?;
        Ok(self.with_metrics(row.into_iter().collect())?.pop())
    }

    fn with_metrics(&self, rows: Vec<RunRow>) -> Result<Vec<RunRow>, HistoryError> {
        rows.into_iter()
            .map(|mut row| {
                row.metrics = self.metrics_of(row.number)?;
                Ok(row)
            })
            .collect()
    }

    fn metrics_of(&self, run: u64) -> Result<Vec<MetricRecord>, HistoryError> {
        let mut query = self
            .conn
            .prepare_cached("SELECT record FROM metrics WHERE run = ?1 ORDER BY rowid")?;
        let records = query
            .query_map(params![int(run)], |row| row.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(records
            .iter()
            .filter_map(|r| serde_json::from_str(r).ok())
            .collect())
    }
}

/// SQLite's integers are signed.
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

const SELECT_RUN: &str = "SELECT number, run_id, runbook, runbook_path, target, parameters, status,
    started, finished, wall_ms, virtual_ms, failed_step, error, commit_id FROM runs";

fn run_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    let count = |i: usize| -> rusqlite::Result<u64> {
        Ok(u64::try_from(row.get::<_, i64>(i)?).unwrap_or_default())
    };
    Ok(RunRow {
        number: count(0)?,
        run_id: row.get(1)?,
        runbook: row.get(2)?,
        runbook_path: row.get(3)?,
        target: row.get(4)?,
        parameters: row.get(5)?,
        status: row.get(6)?,
        started: row.get(7)?,
        finished: row.get(8)?,
        wall_ms: count(9)?,
        virtual_ms: count(10)?,
        failed_step: row.get(11)?,
        error: row.get(12)?,
        commit: row.get(13)?,
        metrics: Vec::new(),
    })
}

/// The innermost failing step of a run, `outer > inner`.
fn failed_step(steps: &[StepRecord]) -> Option<String> {
    use crate::report::Outcome;
    let failed = steps.iter().find(|s| s.status != Outcome::Passed)?;
    Some(match failed_step(&failed.steps) {
        Some(inner) => format!("{} > {inner}", failed.name),
        None => failed.name.clone(),
    })
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
        drop(History::open(dir.path()).expect("made"));
        let history = History::open(dir.path()).expect("open");
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
        let again = History::open(dir.path()).expect("the first page is intact");
        assert!(again.check().is_ok(), "the stamp matched: no page walk");
        drop(again);
        // ...while any change of size or time brings the walk back.
        std::fs::write(&stamp, "0 0\n").expect("write stamp");
        let opened = History::open(dir.path());
        assert!(
            opened.map_or(true, |h| h.check().is_err()),
            "a garbled history is found"
        );
    }
}
