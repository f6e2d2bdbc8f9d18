//! A run as one self-contained HTML page (`--html`): the timeline, what went wrong, the
//! changes and what undid them, the metrics with their trends, NCCL's tables and GPU health
//! verdicts, the parameters and guards.

mod changes;
mod escape;
mod evidence;
mod metrics;
mod page;
mod spend;
mod timeline;

pub use page::to_html;
