//! What a run tells people and machines: live human output, JSON reports and JUnit XML.

mod event;
mod junit;
mod left_behind;
mod live;
mod model;
mod plain;
mod redact;

pub use event::{Event, NullSink, Sink};
pub use junit::to_junit_xml;
pub use left_behind::left_behind_text;
pub use live::LiveSink;
pub use model::{
    DeferRecord, DeferStatus, Outcome, Report, RunStatus, SnapshotOutcome, SnapshotRecord,
    StepRecord,
};
pub use plain::{PlainSink, PrintSink};
pub use redact::{MASK, MAX_REPORT_STRING, Secrets, bounded};
