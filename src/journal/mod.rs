//! The run journal: every mutation a run makes, written with what undoes it before it is sent,
//! so that `runbook recover` can put a target back after a run that was killed.

mod lock;
mod record;
mod runs;
mod undo_plan;
mod writer;

pub use lock::{Holder, LockError, TargetLock, acquire};
pub use record::{Record, Scope};
pub use runs::{
    JournalAt, KEPT_ENDED_RUNS, RunInfo, latest_unfinished, list_runs, prune_ended, read_journal,
    run_info, state_dir,
};
pub use undo_plan::{Rule, Undo, UndoPlan, undo_plan};
pub use writer::{Journal, JournalError, RecordStore};
