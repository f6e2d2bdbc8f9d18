//! Runs' journals in the store: each record committed before the call it announces goes out
//! (write-ahead across machines), read back by `recover` on any machine. A run's row says
//! whether it ended or was recovered, and which database session was its own: a run whose
//! session is gone is not running, wherever its machine is.

use super::store::SharedStore;
use crate::journal::Record;
use crate::store::StoreError;

/// A run as the store holds it.
#[derive(Debug, Clone)]
pub struct StoreRun {
    pub run_id: String,
    pub runbook: String,
    pub target: String,
    pub host: String,
    pub pid: i64,
    pub started_at: i64,
    pub ended: bool,
    pub recovered: bool,
    /// Its database session is still open: its process is still running.
    pub alive: bool,
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl SharedStore {
    /// Commits the `line`th record of run `run_id`; its Start makes the run's row, its End
    /// or a Recovered marks it.
    pub fn append(&self, run_id: &str, line: u64, record: &Record) -> Result<(), StoreError> {
        let json = serde_json::to_string(record).unwrap_or_default();
        let run_id = run_id.to_string();
        let line = int(line);
        let start = match record {
            Record::Start {
                runbook,
                target,
                pid,
                started_at,
                ..
            } => Some((
                runbook.clone(),
                target.clone(),
                i64::from(*pid),
                int(*started_at),
            )),
            _ => None,
        };
        let mark = match record {
            Record::End { .. } => Some("ended"),
            Record::Recovered { .. } => Some("recovered"),
            _ => None,
        };
        self.session
            .call("write the journal", move |client| async move {
                if let Some((runbook, target, pid, started_at)) = start {
                    client
                    .execute(
                        "INSERT INTO runbook.runs (run_id, runbook, target, host, pid, started_at,
                                                   backend_pid, backend_start)
                         SELECT $1, $2, $3, $4, $5, $6, pid, backend_start
                         FROM pg_stat_activity WHERE pid = pg_backend_pid()",
                        &[
                            &run_id,
                            &runbook,
                            &target,
                            &crate::lock::this_host(),
                            &pid,
                            &started_at,
                        ],
                    )
                    .await?;
                }
                let sql = match mark {
                    Some("ended") => {
                        "WITH mark AS (UPDATE runbook.runs SET ended = true WHERE run_id = $1)
                     INSERT INTO runbook.journal (run_id, line, record) VALUES ($1, $2, $3)"
                    }
                    Some(_) => {
                        "WITH mark AS (UPDATE runbook.runs SET recovered = true WHERE run_id = $1)
                     INSERT INTO runbook.journal (run_id, line, record) VALUES ($1, $2, $3)"
                    }
                    None => {
                        "INSERT INTO runbook.journal (run_id, line, record) VALUES ($1, $2, $3)"
                    }
                };
                client.execute(sql, &[&run_id, &line, &json]).await?;
                Ok(())
            })
    }

    /// The next line a run's journal takes (a recover appends to a killed run's).
    pub fn next_line(&self, run_id: &str) -> Result<u64, StoreError> {
        let run_id = run_id.to_string();
        self.session
            .call("read the journal", move |client| async move {
                let last: i64 = client
                    .query_one(
                        "SELECT coalesce(max(line), 0) FROM runbook.journal WHERE run_id = $1",
                        &[&run_id],
                    )
                    .await?
                    .get(0);
                Ok(u64::try_from(last).unwrap_or_default() + 1)
            })
    }

    /// Every run in the store (against `target` only, when given), oldest first.
    pub fn runs(&self, target: Option<&str>) -> Result<Vec<StoreRun>, StoreError> {
        let target = target.map(str::to_string);
        self.session
            .call("list the runs", move |client| async move {
                let rows = client
                .query(
                    "SELECT r.run_id, r.runbook, r.target, r.host, r.pid, r.started_at, r.ended,
                            r.recovered,
                            EXISTS (SELECT 1 FROM pg_stat_activity a
                                    WHERE a.pid = r.backend_pid
                                      AND a.backend_start = r.backend_start)
                     FROM runbook.runs r WHERE $1::text IS NULL OR r.target = $1
                     ORDER BY r.started_at, r.run_id",
                    &[&target],
                )
                .await?;
                Ok(rows
                    .iter()
                    .map(|row| StoreRun {
                        run_id: row.get(0),
                        runbook: row.get(1),
                        target: row.get(2),
                        host: row.get(3),
                        pid: row.get(4),
                        started_at: row.get(5),
                        ended: row.get(6),
                        recovered: row.get(7),
                        alive: row.get(8),
                    })
                    .collect())
            })
    }

    /// A run's journal, in the order it was written; a line this runbook cannot read is
    /// left out, as a torn line of a journal file is.
    pub fn records(&self, run_id: &str) -> Result<Vec<Record>, StoreError> {
        let run_id = run_id.to_string();
        self.session
            .call("read the journal", move |client| async move {
                let rows = client
                    .query(
                        "SELECT record FROM runbook.journal WHERE run_id = $1 ORDER BY line",
                        &[&run_id],
                    )
                    .await?;
                Ok(rows
                    .iter()
                    .filter_map(|row| serde_json::from_str(row.get::<_, &str>(0)).ok())
                    .collect())
            })
    }

    /// Removes the runs that ended (or were recovered) beyond the newest `keep` of each
    /// target, with their journals; unfinished runs are never touched. Answers how many.
    pub fn prune_ended(&self, keep: usize) -> Result<u64, StoreError> {
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        self.session
            .call("prune ended runs", move |client| async move {
                client
                    .execute(
                        "DELETE FROM runbook.runs WHERE run_id IN (
                         SELECT run_id FROM (
                             SELECT run_id, row_number() OVER (
                                 PARTITION BY target ORDER BY started_at DESC, run_id DESC) AS n
                             FROM runbook.runs WHERE ended OR recovered) newest
                         WHERE n > $1)",
                        &[&keep],
                    )
                    .await
            })
    }
}

/// A run's journal kept in the store ([`crate::journal::Journal::shared`]).
impl crate::journal::RecordStore for SharedStore {
    fn append(&self, run_id: &str, line: u64, record: &Record) -> Result<(), String> {
        SharedStore::append(self, run_id, line, record).map_err(|e| e.to_string())
    }

    fn name(&self) -> String {
        self.shown().to_string()
    }
}
