//! A run as one self-contained HTML page (`--html`): the timeline, what went wrong, the
//! changes and what undid them, the metrics with their trends, the parameters and guards.

mod changes;
mod escape;
mod metrics;
mod page;
mod timeline;

pub use page::to_html;
