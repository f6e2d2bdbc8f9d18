//! A run as one self-contained HTML page (`--html`): the timeline, what went wrong, the
//! changes and what undid them, the metrics with their trends, NCCL's tables, GPU health
//! verdicts and birth certificates, the parameters and guards.

mod certificates;
mod changes;
mod escape;
mod evidence;
mod metrics;
mod page;
mod repair;
mod spend;
mod timeline;

pub use page::to_html;
