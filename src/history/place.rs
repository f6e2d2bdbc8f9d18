//! Where a run history is kept: this machine's SQLite file (the default), or the shared store
//! every runner of a fleet records in and judges against. One set of questions for both.

use std::path::Path;
use std::sync::Arc;

use super::certificates::PastCertificate;
use super::error::HistoryError;
use super::gpu_record::PastVerdict;
use super::shared::SharedHistory;
use super::store::{FlakyStep, LocalHistory, MetricId, NewRun, RunKey, RunRow};
use crate::report::MetricRecord;
use crate::store::SharedStore;

pub enum History {
    Local(LocalHistory),
    Shared(SharedHistory),
}

impl History {
    /// The history in `dir`'s SQLite file, made if missing.
    pub fn open(dir: &Path) -> Result<Self, HistoryError> {
        LocalHistory::open(dir).map(Self::Local)
    }

    /// The history in the shared store (its tables are made with the store's schema).
    pub fn shared(store: Arc<SharedStore>) -> Self {
        Self::Shared(SharedHistory { store })
    }

    /// Where it is, in words: a file's path or the store's address.
    pub fn place(&self) -> String {
        match self {
            Self::Local(local) => local.path().display().to_string(),
            Self::Shared(shared) => format!("the shared store {}", shared.store.shown()),
        }
    }

    /// Whether it is whole (a local file's pages; the shared store keeps its own).
    pub fn check(&self) -> Result<(), HistoryError> {
        match self {
            Self::Local(local) => local.check(),
            Self::Shared(_) => Ok(()),
        }
    }

    /// Keeps a finished run; answers its number.
    pub fn record(&mut self, run: &NewRun<'_>) -> Result<u64, HistoryError> {
        match self {
            Self::Local(local) => local.record(run),
            Self::Shared(shared) => shared.record(run),
        }
    }

    /// The values of `metric` in the newest `limit` passing runs of `key`, oldest first.
    pub fn passing_values(
        &self,
        key: &RunKey,
        metric: &MetricId<'_>,
        limit: usize,
    ) -> Result<Vec<(u64, f64)>, HistoryError> {
        let values = match self {
            Self::Local(local) => local.values(key, metric, limit, true)?,
            Self::Shared(shared) => shared.values(key, metric, limit, true)?,
        };
        Ok(values
            .into_iter()
            .map(|(run, value, _)| (run, value))
            .collect())
    }

    /// The values of `metric` in the newest `limit` runs of `key`, passing or not.
    pub fn series(
        &self,
        key: &RunKey,
        metric: &MetricId<'_>,
        limit: usize,
    ) -> Result<Vec<(u64, f64, bool)>, HistoryError> {
        match self {
            Self::Local(local) => local.values(key, metric, limit, false),
            Self::Shared(shared) => shared.values(key, metric, limit, false),
        }
    }

    /// The newest `limit` runs (of one runbook), newest first.
    pub fn recent(
        &self,
        runbook_path: Option<&str>,
        limit: usize,
    ) -> Result<Vec<RunRow>, HistoryError> {
        match self {
            Self::Local(local) => local.recent(runbook_path, limit),
            Self::Shared(shared) => shared.recent(runbook_path, limit),
        }
    }

    /// Each runbook's name and its newest passing run.
    pub fn last_passing(
        &self,
        runbook_path: Option<&str>,
    ) -> Result<Vec<(String, Option<RunRow>)>, HistoryError> {
        match self {
            Self::Local(local) => local.last_passing(runbook_path),
            Self::Shared(shared) => shared.last_passing(runbook_path),
        }
    }

    /// A metric's newest `limit` records, oldest first, with run and runbook.
    pub fn metric_history(
        &self,
        runbook_path: Option<&str>,
        name: &str,
        limit: usize,
    ) -> Result<Vec<(u64, String, MetricRecord)>, HistoryError> {
        match self {
            Self::Local(local) => local.metric_history(runbook_path, name, limit),
            Self::Shared(shared) => shared.metric_history(runbook_path, name, limit),
        }
    }

    /// Run `number`'s report.
    pub fn report(&self, number: u64) -> Result<Option<serde_json::Value>, HistoryError> {
        match self {
            Self::Local(local) => local.report(number),
            Self::Shared(shared) => shared.report(number),
        }
    }

    /// Steps that both passed and failed on the same commit within the newest `window` runs.
    pub fn flaky_steps(
        &self,
        runbook_path: Option<&str>,
        window: usize,
    ) -> Result<Vec<FlakyStep>, HistoryError> {
        match self {
            Self::Local(local) => local.flaky_steps(runbook_path, window),
            Self::Shared(shared) => shared.flaky_steps(runbook_path, window),
        }
    }

    /// Run `number`, with its metrics.
    pub fn run(&self, number: u64) -> Result<Option<RunRow>, HistoryError> {
        match self {
            Self::Local(local) => local.run(number),
            Self::Shared(shared) => shared.run(number),
        }
    }

    /// The verdicts of `who` (a machine, or a node name) since `since`, newest first.
    pub fn gpu_record(&self, who: &str, since: f64) -> Result<Vec<PastVerdict>, HistoryError> {
        match self {
            Self::Local(local) => local.gpu_record(who, since),
            Self::Shared(shared) => shared.gpu_record(who, since),
        }
    }

    /// The newest birth certificate kept for `machine`.
    pub fn certificate(&self, machine: &str) -> Result<Option<PastCertificate>, HistoryError> {
        match self {
            Self::Local(local) => local.certificate(machine),
            Self::Shared(shared) => shared.certificate(machine),
        }
    }
}
