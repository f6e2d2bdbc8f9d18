//! One line of a journal, as JSON.

use serde::{Deserialize, Serialize};

use super::undo_plan::Undo;

/// Where a mutation was made: by the script while cleanups were pending (what recover undoes),
/// or by a cleanup itself (restoring; never undone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// Ids of the cleanups registered and not yet run, oldest first.
    pub pending: Vec<u64>,
    /// The cleanup that made the call, if one did.
    pub in_cleanup: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line.
    Start {
        run_id: String,
        runbook: String,
        /// Where the run acts, as the lock names it.
        target: String,
        pid: u32,
        /// Seconds since the Unix epoch.
        started_at: u64,
    },
    DeferRegistered {
        id: u64,
        name: String,
    },
    DeferFinished {
        id: u64,
        passed: bool,
    },
    /// Written (and synced) before the call goes out.
    Mutation {
        seq: u64,
        /// What the call does, in words (`ec2::revoke sg-0abc3456 tcp 1025-65535 self`).
        action: String,
        /// What puts back the state before it; `None` when nothing can (a delete).
        undo: Option<Undo>,
        scope: Scope,
    },
    /// The answer to mutation `seq`.
    Outcome {
        seq: u64,
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        error: Option<String>,
    },
    /// A `runbook recover` undid it (or found nothing to undo).
    Recovered {
        at: u64,
    },
    /// The last line of a run that ended by itself.
    End {
        status: String,
    },
}

impl Record {
    /// The record with its words for people (a cleanup's name, a call's description, an
    /// error) passed through `mask`: a run's secrets never reach the journal on disk. What
    /// recover acts on (ids, undos, scopes) is kept as it is.
    pub fn masked(&self, mask: impl Fn(&str) -> String) -> Record {
        let mut record = self.clone();
        match &mut record {
            Record::DeferRegistered { name, .. } => *name = mask(name),
            Record::Mutation { action, .. } => *action = mask(action),
            Record::Outcome {
                error: Some(error), ..
            } => *error = mask(error),
            _ => {}
        }
        record
    }
}
