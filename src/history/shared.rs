//! The run history in the shared store: every runner of a fleet records its runs there and
//! judges against the same baselines and GPU record. The local history's rows and queries,
//! in PostgreSQL's words; a run is recorded in one statement (one round trip, all or nothing).

use std::sync::Arc;

use super::certificates::PastCertificate;
use super::error::HistoryError;
use super::gpu_record::PastVerdict;
use super::rows::rows_of;
use super::store::NewRun;
use crate::store::SharedStore;

mod reads;

pub struct SharedHistory {
    pub(super) store: Arc<SharedStore>,
}

const RECORD: &str = "
WITH run AS (
    INSERT INTO runbook.history_runs (run_id, runbook, runbook_path, target, parameters, status,
        started, finished, wall_ms, virtual_ms, failed_step, error, commit_id, report)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
    RETURNING number),
metrics AS (
    INSERT INTO runbook.history_metrics (run, step, name, labels, record, value, ok)
    SELECT run.number, m.step, m.name, m.labels, m.record, m.value, m.ok
    FROM run, ROWS FROM (json_to_recordset($15::text::json) AS (step text, name text,
        labels text, record text, value double precision, ok boolean))
        WITH ORDINALITY AS m (step, name, labels, record, value, ok, n)
    ORDER BY m.n),
steps AS (
    INSERT INTO runbook.history_steps (run, path, status, wall_ms, virtual_ms)
    SELECT run.number, s.path, s.status, s.wall_ms, s.virtual_ms
    FROM run, json_to_recordset($16::text::json)
        AS s (path text, status text, wall_ms bigint, virtual_ms bigint)),
verdicts AS (
    INSERT INTO runbook.gpu_verdicts (run, finished, node, machine, verdict, health)
    SELECT run.number, $8, v.node, v.machine, v.verdict, v.health
    FROM run, json_to_recordset($17::text::json)
        AS v (node text, machine text, verdict text, health text)),
certificates AS (
    INSERT INTO runbook.node_certificates (run, finished, node, machine, certificate)
    SELECT run.number, $8, c.node, c.machine, c.certificate
    FROM run, json_to_recordset($18::text::json)
        AS c (node text, machine text, certificate text))
SELECT number FROM run";

/// Rows as the JSON array the statement reads them from.
fn json<T: serde::Serialize>(rows: &[T]) -> String {
    serde_json::to_string(rows).unwrap_or_else(|_| "[]".into())
}

impl SharedHistory {
    /// Runs `call` on the store's connection; `what` names it in errors.
    pub(super) fn call<T, C, F>(&self, what: &str, call: C) -> Result<T, HistoryError>
    where
        T: Send + 'static,
        C: FnOnce(Arc<tokio_postgres::Client>) -> F + Send + 'static,
        F: Future<Output = Result<T, tokio_postgres::Error>> + Send + 'static,
    {
        self.store
            .call(what, call)
            .map_err(|error| HistoryError::Store(Box::new(error)))
    }

    pub(super) fn record(&self, run: &NewRun<'_>) -> Result<u64, HistoryError> {
        let rows = rows_of(run);
        let (metrics, steps, verdicts) =
            (json(&rows.metrics), json(&rows.steps), json(&rows.verdicts));
        let certificates = json(&rows.certificates);
        let texts = [
            rows.run_id,
            run.runbook.to_string(),
            run.key.runbook_path.clone(),
            run.key.target.clone(),
            run.key.parameters.clone(),
            rows.status,
        ];
        let optional = [rows.failed_step, rows.error, run.commit.map(str::to_string)];
        let (started, finished) = (run.started, run.finished);
        let (wall_ms, virtual_ms, report) = (rows.wall_ms, rows.virtual_ms, rows.report);
        let number: i64 = self.call("record the run", move |client| async move {
            let row = client
                .query_one(
                    RECORD,
                    &[
                        &texts[0],
                        &texts[1],
                        &texts[2],
                        &texts[3],
                        &texts[4],
                        &texts[5],
                        &started,
                        &finished,
                        &wall_ms,
                        &virtual_ms,
                        &optional[0],
                        &optional[1],
                        &optional[2],
                        &report,
                        &metrics,
                        &steps,
                        &verdicts,
                        &certificates,
                    ],
                )
                .await?;
            Ok(row.get(0))
        })?;
        Ok(u64::try_from(number).unwrap_or_default())
    }

    pub(super) fn gpu_record(
        &self,
        who: &str,
        since: f64,
    ) -> Result<Vec<PastVerdict>, HistoryError> {
        let who = who.to_string();
        self.call("read the GPU record", move |client| async move {
            let rows = client
                .query(
                    "SELECT run, finished, node, machine, verdict, health
                         FROM runbook.gpu_verdicts
                         WHERE (machine = $1 OR node = $1) AND finished >= $2
                         ORDER BY finished DESC, run DESC",
                    &[&who, &since],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|row| PastVerdict {
                    run: u64::try_from(row.get::<_, i64>(0)).unwrap_or_default(),
                    finished: row.get(1),
                    node: row.get(2),
                    machine: row.get(3),
                    verdict: row.get(4),
                    health: serde_json::from_str(row.get::<_, &str>(5)).unwrap_or_default(),
                })
                .collect())
        })
    }

    pub(super) fn certificate(
        &self,
        machine: &str,
    ) -> Result<Option<PastCertificate>, HistoryError> {
        let machine = machine.to_string();
        self.call(
            "read the machine's birth certificate",
            move |client| async move {
                let row = client
                    .query_opt(
                        "SELECT run, finished, certificate FROM runbook.node_certificates
                         WHERE machine = $1 ORDER BY finished DESC, run DESC LIMIT 1",
                        &[&machine],
                    )
                    .await?;
                Ok(row.map(|row| PastCertificate {
                    run: u64::try_from(row.get::<_, i64>(0)).unwrap_or_default(),
                    finished: row.get(1),
                    certificate: serde_json::from_str(row.get::<_, &str>(2)).unwrap_or_default(),
                }))
            },
        )
    }
}
