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

/// Every run in the store (against `target` only, when given), oldest first, as the journal
/// tells each; the journals of runs that ended are not read.
pub(crate) fn runs(store: &SharedStore, target: Option<&str>) -> Result<Vec<RunInfo>, Error> {
    let mut runs = Vec::new();
    for run in store.runs(target).map_err(Error::Store)? {
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
    runs(store, Some(target))
        .ok()?
        .into_iter()
        .rev()
        .find(|run| run.unfinished() && run.target == target)
}

/// The end of a run whose store was lost mid-run, written there once the store answers again
/// (on a new session), so that no machine takes it for unfinished; said, not fatal, when it
/// still does not.
pub(crate) fn mark_ended_after_loss(store: &SharedStore, run_id: &str, status: &str) {
    let marked = store.reopen().and_then(|fresh| {
        let line = fresh.next_line(run_id)?;
        fresh.append(
            run_id,
            line,
            &Record::End {
                status: status.to_string(),
            },
        )
    });
    match marked {
        Ok(()) => eprintln!(
            "note: the shared store {} answers again: run {run_id} is marked ended there",
            store.shown()
        ),
        Err(error) => eprintln!(
            "note: {error}; the store still holds run {run_id} as unfinished (a recover from it finds its steps already done)"
        ),
    }
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
