//! The host's side of the run journal: cleanups and mutations as records, with the scope
//! (pending cleanups, the one running) that tells `recover` what a mutation was guarded by.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Host;
use crate::journal::{Journal, Record, Scope, Undo};

impl Host {
    /// From now on every mutation is journaled here before it is sent.
    pub fn attach_journal(&self, journal: Arc<Journal>) {
        let _ = self.journal.set(journal);
    }

    pub fn journal(&self) -> Option<&Arc<Journal>> {
        self.journal.get()
    }

    pub fn write_journal(&self, record: &Record) -> Result<(), String> {
        match self.journal.get() {
            Some(journal) => journal.append(record).map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// Journals a mutation about to be sent (synced to disk when this returns): what it does
    /// and what undoes it. Answers its number for [`Host::mutation_answered`].
    pub fn mutation_starts(&self, action: &str, undo: Option<Undo>) -> Result<u64, String> {
        let Some(journal) = self.journal.get() else {
            return Ok(0);
        };
        let scope = {
            let state = self.state();
            Scope {
                pending: state
                    .pending_defers
                    .iter()
                    .map(|d| d.id)
                    .chain(state.running_defer.as_ref().map(|d| d.id))
                    .collect(),
                in_cleanup: state.running_defer.as_ref().map(|d| d.id),
            }
        };
        let seq = journal.next_seq();
        journal
            .append(&Record::Mutation {
                seq,
                action: action.to_string(),
                undo,
                scope,
            })
            .map_err(|e| format!("{e}; the call was not sent"))?;
        Ok(seq)
    }

    /// Journals the answer to the mutations `seqs`, sent as one call.
    pub fn mutation_answered(&self, seqs: &[u64], error: Option<String>) {
        let calls = self.answered_calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.crash_after.is_some_and(|n| calls >= n) {
            // The test hook: gone without a word, cleanups and all, like SIGKILL.
            std::process::exit(137);
        }
        for seq in seqs {
            let _ = self.write_journal(&Record::Outcome {
                seq: *seq,
                ok: error.is_none(),
                error: error.clone(),
            });
        }
    }
}
