//! Each machine's birth certificate as the history keeps it: a row per certificate a run
//! recorded (its `node_certificate` evidence), by machine, so a later run finds what the
//! machine was when it was accepted, whichever runner accepted it.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::error::HistoryError;
use super::store::LocalHistory;
use crate::report::Report;

/// The newest certificate kept for a machine.
#[derive(Debug, Clone, PartialEq)]
pub struct PastCertificate {
    pub run: u64,
    /// Unix seconds when that run finished.
    pub finished: f64,
    pub certificate: serde_json::Value,
}

#[derive(Debug, Serialize)]
pub(super) struct CertificateRow {
    pub node: String,
    pub machine: String,
    pub certificate: String,
}

/// The run's certificates (its `node_certificate` evidence), one row each.
pub(super) fn certificate_rows(report: &Report) -> Vec<CertificateRow> {
    report
        .evidence
        .iter()
        .filter(|e| e.kind == "node_certificate")
        .filter_map(|evidence| {
            let certificate = &evidence.data["certificate"];
            let machine = certificate["machine"].as_str().filter(|m| !m.is_empty())?;
            Some(CertificateRow {
                node: certificate["node"].as_str().unwrap_or_default().to_string(),
                machine: machine.to_string(),
                certificate: certificate.to_string(),
            })
        })
        .collect()
}

impl LocalHistory {
    /// The newest certificate of `machine`.
    pub fn certificate(&self, machine: &str) -> Result<Option<PastCertificate>, HistoryError> {
        let conn = self.connection();
        let mut statement = conn.prepare_cached(
            "SELECT run, finished, certificate FROM node_certificates
             WHERE machine = ?1 ORDER BY finished DESC, run DESC LIMIT 1",
        )?;
        let row = statement
            .query_row(params![machine], |row| {
                let text: String = row.get(2)?;
                Ok(PastCertificate {
                    run: u64::try_from(row.get::<_, i64>(0)?).unwrap_or_default(),
                    finished: row.get(1)?,
                    certificate: serde_json::from_str(&text).unwrap_or_default(),
                })
            })
            .optional()?;
        Ok(row)
    }
}
