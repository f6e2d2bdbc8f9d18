//! What the shared history reads back, as the local one does (`store/reads.rs`): baselines'
//! passing values, series, recent runs, the last passing run, a metric's history, a run's
//! report and metrics, and the steps that flake.

use tokio_postgres::{Client, Row};

use super::SharedHistory;
use crate::history::rows::int;
use crate::history::{FlakyStep, HistoryError, MetricId, RunKey, RunRow};
use crate::report::MetricRecord;

const SELECT_RUN: &str = "SELECT number, run_id, runbook, runbook_path, target, parameters, status,
    started, finished, wall_ms, virtual_ms, failed_step, error, commit_id FROM runbook.history_runs";

fn run_row(row: &Row) -> RunRow {
    let count = |i: usize| u64::try_from(row.get::<_, i64>(i)).unwrap_or_default();
    RunRow {
        number: count(0),
        run_id: row.get(1),
        runbook: row.get(2),
        runbook_path: row.get(3),
        target: row.get(4),
        parameters: row.get(5),
        status: row.get(6),
        started: row.get(7),
        finished: row.get(8),
        wall_ms: count(9),
        virtual_ms: count(10),
        failed_step: row.get(11),
        error: row.get(12),
        commit: row.get(13),
        metrics: Vec::new(),
    }
}

/// The runs of `rows` with their metrics, in the order the history recorded them.
async fn with_metrics(
    client: &Client,
    rows: Vec<Row>,
) -> Result<Vec<RunRow>, tokio_postgres::Error> {
    let mut runs = Vec::with_capacity(rows.len());
    for row in &rows {
        let mut run = run_row(row);
        run.metrics = client
            .query(
                "SELECT record FROM runbook.history_metrics WHERE run = $1 ORDER BY id",
                &[&int(run.number)],
            )
            .await?
            .iter()
            .filter_map(|r| serde_json::from_str::<MetricRecord>(r.get::<_, &str>(0)).ok())
            .collect();
        runs.push(run);
    }
    Ok(runs)
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl SharedHistory {
    pub(in crate::history) fn values(
        &self,
        key: &RunKey,
        metric: &MetricId<'_>,
        count: usize,
        passing_only: bool,
    ) -> Result<Vec<(u64, f64, bool)>, HistoryError> {
        let texts = [
            key.runbook_path.clone(),
            key.target.clone(),
            key.parameters.clone(),
            metric.name.to_string(),
            metric.labels.to_string(),
            metric.step.to_string(),
        ];
        let count = limit(count);
        self.call("read the run history", move |client| async move {
            let rows = client
                .query(
                    "SELECT m.run, m.value, m.ok FROM runbook.history_metrics m
                     JOIN runbook.history_runs r ON r.number = m.run
                     WHERE r.runbook_path = $1 AND r.target = $2 AND r.parameters = $3
                       AND m.name = $4 AND m.labels = $5 AND m.step = $6
                       AND (NOT $8 OR m.ok)
                     ORDER BY m.run DESC LIMIT $7",
                    &[
                        &texts[0],
                        &texts[1],
                        &texts[2],
                        &texts[3],
                        &texts[4],
                        &texts[5],
                        &count,
                        &passing_only,
                    ],
                )
                .await?;
            let mut values: Vec<(u64, f64, bool)> = rows
                .iter()
                .map(|row| {
                    (
                        u64::try_from(row.get::<_, i64>(0)).unwrap_or_default(),
                        row.get(1),
                        row.get(2),
                    )
                })
                .collect();
            values.reverse();
            Ok(values)
        })
    }

    pub(in crate::history) fn recent(
        &self,
        runbook_path: Option<&str>,
        count: usize,
    ) -> Result<Vec<RunRow>, HistoryError> {
        let path = runbook_path.map(str::to_string);
        let count = limit(count);
        self.call("read the run history", move |client| async move {
            let sql = format!(
                "{SELECT_RUN} WHERE $1::text IS NULL OR runbook_path = $1 ORDER BY number DESC LIMIT $2"
            );
            let rows = client.query(&sql, &[&path, &count]).await?;
            with_metrics(&client, rows).await
        })
    }

    pub(in crate::history) fn last_passing(
        &self,
        runbook_path: Option<&str>,
    ) -> Result<Vec<(String, Option<RunRow>)>, HistoryError> {
        let path = runbook_path.map(str::to_string);
        self.call("read the run history", move |client| async move {
            let runbooks = client
                .query(
                    "SELECT runbook_path, (SELECT runbook FROM runbook.history_runs n
                                           WHERE n.runbook_path = r.runbook_path
                                           ORDER BY number DESC LIMIT 1)
                     FROM runbook.history_runs r WHERE $1::text IS NULL OR runbook_path = $1
                     GROUP BY runbook_path ORDER BY runbook_path",
                    &[&path],
                )
                .await?;
            let sql = format!(
                "{SELECT_RUN} WHERE runbook_path = $1 AND status = 'passed' ORDER BY number DESC LIMIT 1"
            );
            let mut found = Vec::new();
            for row in &runbooks {
                let (path, name): (String, String) = (row.get(0), row.get(1));
                let last = client.query(&sql, &[&path]).await?;
                found.push((name, with_metrics(&client, last).await?.pop()));
            }
            Ok(found)
        })
    }

    pub(in crate::history) fn metric_history(
        &self,
        runbook_path: Option<&str>,
        name: &str,
        count: usize,
    ) -> Result<Vec<(u64, String, MetricRecord)>, HistoryError> {
        let path = runbook_path.map(str::to_string);
        let name = name.to_string();
        let count = limit(count);
        self.call("read the run history", move |client| async move {
            let rows = client
                .query(
                    "SELECT m.run, r.runbook, m.record FROM runbook.history_metrics m
                     JOIN runbook.history_runs r ON r.number = m.run
                     WHERE m.name = $1 AND ($2::text IS NULL OR r.runbook_path = $2)
                     ORDER BY m.run DESC, m.id DESC LIMIT $3",
                    &[&name, &path, &count],
                )
                .await?;
            let mut found: Vec<(u64, String, MetricRecord)> = rows
                .iter()
                .filter_map(|row| {
                    let record = serde_json::from_str(row.get::<_, &str>(2)).ok()?;
                    Some((
                        u64::try_from(row.get::<_, i64>(0)).unwrap_or_default(),
                        row.get(1),
                        record,
                    ))
                })
                .collect();
            found.reverse();
            Ok(found)
        })
    }

    pub(in crate::history) fn report(
        &self,
        number: u64,
    ) -> Result<Option<serde_json::Value>, HistoryError> {
        self.call("read the run history", move |client| async move {
            let row = client
                .query_opt(
                    "SELECT report FROM runbook.history_runs WHERE number = $1",
                    &[&int(number)],
                )
                .await?;
            Ok(row.and_then(|row| serde_json::from_str(row.get::<_, &str>(0)).ok()))
        })
    }

    pub(in crate::history) fn flaky_steps(
        &self,
        runbook_path: Option<&str>,
        window: usize,
    ) -> Result<Vec<FlakyStep>, HistoryError> {
        let path = runbook_path.map(str::to_string);
        let window = limit(window);
        let found = self.call("read the run history", move |client| async move {
            let rows = client
                .query(
                    "WITH recent AS (
                         SELECT number, runbook, runbook_path, target, commit_id
                         FROM runbook.history_runs
                         WHERE commit_id IS NOT NULL AND ($1::text IS NULL OR runbook_path = $1)
                         ORDER BY number DESC LIMIT $2)
                     SELECT r.runbook, s.path, r.target, r.commit_id,
                            count(*) FILTER (WHERE s.status = 'passed'),
                            count(*) FILTER (WHERE s.status = 'failed'),
                            string_agg(r.number::text, ',')
                     FROM runbook.history_steps s JOIN recent r ON r.number = s.run
                     GROUP BY r.runbook, r.runbook_path, r.target, r.commit_id, s.path
                     HAVING count(*) FILTER (WHERE s.status = 'passed') > 0
                        AND count(*) FILTER (WHERE s.status = 'failed') > 0
                     ORDER BY r.runbook, s.path",
                    &[&path, &window],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| {
                    let mut runs: Vec<u64> = row
                        .get::<_, &str>(6)
                        .split(',')
                        .filter_map(|n| n.parse().ok())
                        .collect();
                    runs.sort_unstable_by(|a, b| b.cmp(a));
                    FlakyStep {
                        runbook: row.get(0),
                        step: row.get(1),
                        target: row.get(2),
                        commit: row.get(3),
                        passed: u32::try_from(row.get::<_, i64>(4)).unwrap_or(u32::MAX),
                        failed: u32::try_from(row.get::<_, i64>(5)).unwrap_or(u32::MAX),
                        runs,
                    }
                })
                .collect())
        })?;
        Ok(FlakyStep::innermost(found))
    }

    pub(in crate::history) fn run(&self, number: u64) -> Result<Option<RunRow>, HistoryError> {
        self.call("read the run history", move |client| async move {
            let sql = format!("{SELECT_RUN} WHERE number = $1");
            let rows = client.query(&sql, &[&int(number)]).await?;
            Ok(with_metrics(&client, rows).await?.pop())
        })
    }
}
