//! The shared store a command uses when `--state` (or `RUNBOOK_STATE`) names one: opened once
//! for the command, it keeps the run's journal and holds the target's lock on its session, and
//! `recover` reads the runs of every machine from it.

use std::sync::Arc;

use crate::cli::JournalArgs;
use crate::error::Error;
use crate::journal::{self, JournalAt, Record, RunInfo};
use crate::store::{SharedStore, shared_store_url};

/// The store `--state` names, connected and its schema checked; None without one.
pub(crate) fn open(args: &JournalArgs) -> Result<Option<Arc<SharedStore>>, Error> {
    let Some(url) = shared_store_url(args.state.as_deref()).map_err(Error::Store)? else {
        return Ok(None);
    };
    SharedStore::open(&url)
        .map(|store| Some(Arc::new(store)))
        .map_err(Error::Store)
}

/// Every run in the store, oldest first, as the journal tells each; the journals of runs that
/// ended are not read.
pub(crate) fn runs(store: &SharedStore) -> Result<Vec<RunInfo>, Error> {
    let mut runs = Vec::new();
    for run in store.runs().map_err(Error::Store)? {
        let at = JournalAt::Store {
            host: run.host.clone(),
            alive: run.alive,
        };
        if run.ended || run.recovered {
            runs.push(RunInfo {
                id: run.run_id,
                at,
                runbook: run.runbook,
                target: run.target,
                pid: u32::try_from(run.pid).unwrap_or_default(),
                started_at: u64::try_from(run.started_at).unwrap_or_default(),
                ended: run.ended,
                recovered: run.recovered,
                mutations: None,
                to_undo: Vec::new(),
                cleanups_failed: 0,
                cleanups_unfinished: 0,
            });
            continue;
        }
        let records = store.records(&run.run_id).map_err(Error::Store)?;
        runs.extend(journal::run_info(&records, at));
    }
    Ok(runs)
}

/// The newest unfinished run against `target` in the store.
pub(crate) fn latest_unfinished(store: &SharedStore, target: &str) -> Option<RunInfo> {
    runs(store)
        .ok()?
        .into_iter()
        .rev()
        .find(|run| run.unfinished() && run.target == target)
}

/// A run's records from the store.
pub(crate) fn records(store: &SharedStore, run_id: &str) -> Result<Vec<Record>, Error> {
    store.records(run_id).map_err(Error::Store)
}

/// Marks a run recovered in the store; said, not fatal, when it cannot be (the steps are safe
/// to repeat).
pub(crate) fn mark_recovered(store: &SharedStore, run_id: &str) {
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let marked = store
        .next_line(run_id)
        .and_then(|line| store.append(run_id, line, &Record::Recovered { at }));
    if let Err(error) = marked {
        eprintln!(
            "warning: {error}: a second recover will redo the steps (they are safe to repeat)"
        );
    }
}
