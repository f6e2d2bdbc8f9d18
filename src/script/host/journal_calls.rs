//! The host's side of the run journal and of the guards: each mutation held to the guards,
//! then journaled with the scope (pending cleanups, the one running) that tells `recover` what
//! it was guarded by, and listed for the report.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use super::Host;
use crate::guard::{Change, Guards};
use crate::journal::{Journal, Record, Scope, Undo};
use crate::report::{ChangeOutcome, ChangeRecord};

/// A mutation on its way: its journal number and its place in the report's list.
#[derive(Debug, Clone, Copy)]
pub struct Sending {
    seq: u64,
    change: usize,
}

impl Host {
    pub fn journal(&self) -> Option<&Arc<Journal>> {
        self.journal.as_ref()
    }

    pub fn write_journal(&self, record: &Record) -> Result<(), String> {
        match self.journal.as_ref() {
            Some(journal) => journal
                .append(&record.masked(|text| self.mask(text)))
                .map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    pub fn guards(&self) -> Guards {
        self.guards.as_ref().cloned().unwrap_or_default()
    }

    /// Whether the guards let `change` through; a refusal is listed in the report. For calls
    /// that send several changes at once, each is checked before any is journaled.
    pub fn guard(&self, change: &Change) -> Result<(), String> {
        let Some(guards) = self.guards.as_ref() else {
            return Ok(());
        };
        let checked = guards.check(change).and_then(|()| {
            // A cleanup puts back what the run changed: the budget never stops one.
            if self.state().running_defer.is_some() {
                return Ok(());
            }
            let spend = self.spend.lock().unwrap_or_else(PoisonError::into_inner);
            guards.check_spend(change, spend.spent(self.clock.now()), &spend.running())
        });
        checked.map_err(|refusal| {
            let error = refusal.to_string();
            self.list_change(change, ChangeOutcome::Refused, Some(error.clone()));
            error
        })
    }

    /// Whether `--read-only` lets a call through that can change things without being a change
    /// to a resource: a command run in a pod (`argv`), a lab twin fault. A refusal is listed in
    /// the report as any other.
    pub fn guard_read_only(&self, action: &str, argv: Option<&[String]>) -> Result<(), String> {
        let Some(guards) = self.guards.as_ref() else {
            return Ok(());
        };
        guards.check_read_only(action, argv).map_err(|refusal| {
            let error = refusal.to_string();
            self.list_change(
                &Change::new(action),
                ChangeOutcome::Refused,
                Some(error.clone()),
            );
            error
        })
    }

    /// What the resources the run started have cost, when it has a `--max-cost-usd` (to a
    /// hundredth of a cent: small budgets are for tests and rehearsals).
    pub fn spent_usd(&self) -> Option<f64> {
        self.guards.as_ref()?.max_cost_usd?;
        let spent = self
            .spend
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .spent(self.clock.now());
        Some((spent * 10_000.0).round() / 10_000.0)
    }

    /// When each resource the run started cost what per hour, from the run's start.
    pub fn spend_rates(&self) -> Vec<crate::guard::SpendRate> {
        self.spend
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .rates(self.virtual_start)
    }

    /// Why the run must stop now, when what it started has cost more than `--max-cost-usd`
    /// (never while its cleanups run).
    pub fn over_budget(&self) -> Option<String> {
        let guards = self.guards.as_ref()?;
        guards.max_cost_usd?;
        if self.is_cleaning_up() || self.state().running_defer.is_some() {
            return None;
        }
        let spend = self.spend.lock().unwrap_or_else(PoisonError::into_inner);
        guards.over_budget(spend.spent(self.clock.now()), &spend.running())
    }

    /// Resolves, with why, once the run's spend passes `--max-cost-usd` while it waits; never
    /// without one. Checked on the wall clock: a wait on the virtual clock is over in a blink,
    /// and the next call checks again.
    pub(crate) async fn budget_spent(&self) -> String {
        if self.guards.as_ref().and_then(|g| g.max_cost_usd).is_none() {
            return std::future::pending().await;
        }
        let mut ticker = tokio::time::interval(std::time::Duration::from_millis(250));
        loop {
            ticker.tick().await;
            if let Some(over) = self.over_budget() {
                return over;
            }
        }
    }

    fn list_change(&self, change: &Change, outcome: ChangeOutcome, error: Option<String>) -> usize {
        let open = self.open_path();
        let mut state = self.state();
        let (step, cleanup) = match &state.running_defer {
            Some(defer) => (vec![defer.name.clone()], true),
            None => (open, false),
        };
        state.changes.push(ChangeRecord {
            change: change.clone(),
            outcome,
            step,
            cleanup,
            error,
        });
        state.changes.len() - 1
    }

    /// Holds a mutation about to be sent to the guards, then journals it (synced to disk when
    /// this returns): what it does and what undoes it. Answers the ticket for
    /// [`Host::mutation_answered`].
    pub fn mutation_starts(&self, change: &Change, undo: Option<Undo>) -> Result<Sending, String> {
        if let Some(why) = self.closed.get() {
            return Err(format!("{} was not sent: {why}", change.action));
        }
        // Only a cleanup's calls go out once the shared store is lost: they put back what the
        // run changed, journaled in the local file the journal went on in.
        if let Some(why) = self.journal.as_ref().and_then(|j| j.store_lost())
            && self.state().running_defer.is_none()
        {
            return Err(format!(
                "{} was not sent: {why}; a run that lost its shared store sends only its cleanups' calls",
                change.action
            ));
        }
        self.guard(change)?;
        if let (Some(runs), Some(resource)) = (&change.runs, &change.resource) {
            let now = self.clock.now();
            self.spend
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .record(resource, runs, now);
        }
        let seq = match self.journal.as_ref() {
            None => 0,
            Some(journal) => self.journal_mutation(journal, &change.action, undo)?,
        };
        let change = self.list_change(change, ChangeOutcome::Sent, None);
        Ok(Sending { seq, change })
    }

    fn journal_mutation(
        &self,
        journal: &Journal,
        action: &str,
        undo: Option<Undo>,
    ) -> Result<u64, String> {
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
                action: self.mask(action),
                undo,
                scope,
            })
            .map_err(|e| format!("{e}; the call was not sent"))?;
        // The store went while this record was written (it was kept in the local journal): a
        // cleanup's call goes out, any other is answered as not sent.
        if let Some(why) = journal.store_lost()
            && self.state().running_defer.is_none()
        {
            let error = format!(
                "{} was not sent: {why}; a run that lost its shared store sends only its cleanups' calls",
                self.mask(action)
            );
            let _ = journal.append(&Record::Outcome {
                seq,
                ok: false,
                error: Some(error.clone()),
            });
            return Err(error);
        }
        Ok(seq)
    }

    /// Journals the answer to the mutations `sent`, sent as one call.
    pub fn mutation_answered(&self, sent: &[Sending], error: Option<String>) {
        let calls = self.answered_calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.hooks.after_answer(calls);
        {
            let mut state = self.state();
            for sending in sent {
                if let Some(record) = state.changes.get_mut(sending.change) {
                    record.outcome = match error {
                        None => ChangeOutcome::Done,
                        Some(_) => ChangeOutcome::Failed,
                    };
                    record.error.clone_from(&error);
                }
            }
        }
        if self.journal.as_ref().is_none() {
            return;
        }
        for sending in sent {
            let _ = self.write_journal(&Record::Outcome {
                seq: sending.seq,
                ok: error.is_none(),
                error: error.clone(),
            });
        }
    }
}
