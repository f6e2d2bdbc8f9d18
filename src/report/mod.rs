//! What a run tells people and machines: live human output, JSON reports, JUnit XML and
//! Prometheus metrics.

mod event;
mod html;
mod junit;
mod left_behind;
mod live;
mod metric;
mod model;
mod plain;
mod prometheus;
mod redact;
mod sparkline;
mod summary;

pub use event::{Event, NullSink, Sink};
pub use html::to_html;
pub use junit::to_junit_xml;
pub use left_behind::left_behind_text;
pub use live::LiveSink;
pub use metric::{
    BaselineResult, BaselineSpec, BaselineVerdict, Better, MIN_BASELINE_RUNS, MetricRecord,
    label_key, runs_named, shown_number,
};
pub use model::{
    ChangeOutcome, ChangeRecord, DeferRecord, DeferStatus, ErrorAt, Evidence, Outcome, Report,
    RunStatus, SnapshotOutcome, SnapshotRecord, StepRecord, clock_name,
};
pub use plain::{PlainSink, PrintSink};
pub use prometheus::{RESERVED_LABELS, for_pushgateway, is_label_name, to_prometheus_text};
pub use redact::{MASK, MAX_REPORT_STRING, Secrets, bounded};
pub use sparkline::sparkline;
pub use summary::{MAX_SUMMARY_BYTES, SummaryContext, readable_millis, to_markdown_summary};
