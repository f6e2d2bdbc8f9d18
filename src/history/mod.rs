//! The run history: every run's report kept with its key (runbook, target, parameters), what
//! baselines are judged against, and what `runbook history` reads; in a local SQLite file or
//! the shared store.

mod baseline;
mod certificates;
mod diff;
mod error;
mod gpu_record;
mod key;
mod place;
mod rows;
mod shared;
mod store;
mod table;
mod trend;

pub use baseline::judge;
pub use certificates::PastCertificate;
pub use diff::diff_text;
pub use error::HistoryError;
pub use gpu_record::{PastVerdict, gpu_record_table};
pub use key::{absolute, portable, run_key};
pub use place::History;
pub use store::{FILE_NAME, FlakyStep, MetricId, NewRun, RunKey, RunRow};
pub use table::{flaky_lines, runs_table};
pub use trend::{Series, series, trend_text};
