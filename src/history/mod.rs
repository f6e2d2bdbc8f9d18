//! The run history: every run's report kept with its key (runbook, target, parameters), what
//! baselines are judged against, and what `runbook history` reads.

mod baseline;
mod error;
mod key;
mod store;
mod table;

pub use baseline::judge;
pub use error::HistoryError;
pub use key::{absolute, run_key};
pub use store::{FILE_NAME, History, MetricId, NewRun, RunKey, RunRow};
pub use table::runs_table;
