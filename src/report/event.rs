//! Live events of a run, for whatever shows progress to a person.

use std::time::Duration;

use super::{DeferStatus, Outcome, SnapshotOutcome};

pub enum Event<'a> {
    RunStarted {
        runbook: &'a str,
        clock: &'static str,
        /// The run's journal id, when it has one.
        run_id: Option<&'a str>,
    },
    StepStarted {
        path: &'a [String],
    },
    StepFinished {
        path: &'a [String],
        outcome: Outcome,
        error: Option<&'a str>,
        virtual_time: Duration,
        wall_time: Duration,
    },
    Log {
        line: &'a str,
    },
    DeferStarted {
        name: &'a str,
    },
    DeferFinished {
        name: &'a str,
        status: DeferStatus,
        error: Option<&'a str>,
        virtual_time: Duration,
        wall_time: Duration,
    },
    Snapshot {
        name: &'a str,
        outcome: SnapshotOutcome,
        path: &'a str,
    },
    RunFinished {
        summary: &'a str,
    },
}

/// Receives events as they happen. Implementations must not fail the run.
pub trait Sink: Send + Sync {
    fn event(&self, event: &Event<'_>);
}

/// Shows nothing (for `check`, `eval --json`, tests).
pub struct NullSink;

impl Sink for NullSink {
    fn event(&self, _: &Event<'_>) {}
}
