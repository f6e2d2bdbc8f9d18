//! What the run history reads back: baselines' passing values, series, recent runs, the
//! last passing run, a metric's history, a run's report and metrics, and the steps that flake.

use rusqlite::{OptionalExtension, params};

use super::{FlakyStep, LocalHistory, MetricId, RunKey, RunRow};
use crate::history::HistoryError;
use crate::history::rows::int;
use crate::report::MetricRecord;

impl LocalHistory {
    /// The values of a metric in the newest `limit` runs of `key` (only passing ones, with
    /// `passing_only`), oldest first, each with whether it passed.
    pub(in crate::history) fn values(
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
        Ok(FlakyStep::innermost(found))
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
