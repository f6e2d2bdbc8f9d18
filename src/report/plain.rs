//! Plain, greppable lines for logs and CI: one event per line, no control codes.

use std::io::Write;
use std::sync::Mutex;

use crate::clock::format_duration;

use super::{DeferStatus, Event, Outcome, Sink};

pub struct PlainSink<W: Write + Send> {
    out: Mutex<W>,
}

impl<W: Write + Send> PlainSink<W> {
    pub fn new(out: W) -> Self {
        Self {
            out: Mutex::new(out),
        }
    }
}

pub(super) fn timing(virtual_time: std::time::Duration, wall_time: std::time::Duration) -> String {
    format!(
        "virtual {}, wall {}",
        format_duration(virtual_time),
        format_duration(wall_time)
    )
}

pub(super) fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "pass",
        Outcome::Failed => "fail",
        Outcome::Interrupted => "interrupted",
    }
}

pub(super) fn defer_word(status: DeferStatus) -> &'static str {
    match status {
        DeferStatus::Passed => "pass",
        DeferStatus::Failed => "fail",
        DeferStatus::Skipped => "skipped",
        DeferStatus::CutShort => "cut short",
    }
}

fn line(event: &Event<'_>) -> String {
    match event {
        Event::RunStarted {
            runbook,
            clock,
            run_id,
        } => match run_id {
            Some(id) => format!("[run] {runbook} ({clock} clock, run {id})"),
            None => format!("[run] {runbook} ({clock} clock)"),
        },
        Event::StepStarted { path } => format!("[step] {}", path.join(" > ")),
        Event::StepFinished {
            path,
            outcome,
            error,
            virtual_time,
            wall_time,
        } => {
            let mut text = format!(
                "[{}] {} ({})",
                outcome_word(*outcome),
                path.join(" > "),
                timing(*virtual_time, *wall_time)
            );
            if let Some(error) = error {
                text.push_str(": ");
                text.push_str(&error.replace('\n', "\n    "));
            }
            text
        }
        Event::Log { line } => format!("[log] {line}"),
        Event::DeferStarted { name } => format!("[defer] {name}"),
        Event::DeferFinished {
            name,
            status,
            error,
            virtual_time,
            wall_time,
        } => {
            let mut text = format!(
                "[defer {}] {name} ({})",
                defer_word(*status),
                timing(*virtual_time, *wall_time)
            );
            if let Some(error) = error {
                text.push_str(": ");
                text.push_str(error);
            }
            text
        }
        Event::Snapshot {
            name,
            outcome,
            path,
        } => {
            format!(
                "[snapshot {}] {name} -> {path}",
                serde_json::to_value(outcome)
                    .unwrap_or_default()
                    .as_str()
                    .unwrap_or("?")
            )
        }
        Event::RunFinished { summary } => format!("[result] {summary}"),
    }
}

impl<W: Write + Send> Sink for PlainSink<W> {
    fn event(&self, event: &Event<'_>) {
        let mut out = self
            .out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Output is best effort: a closed pipe must not fail the run.
        let _ = writeln!(out, "{}", line(event));
        let _ = out.flush();
    }
}

/// Only what the script prints, as it printed it (for `runbook eval`).
pub struct PrintSink<W: Write + Send> {
    out: Mutex<W>,
}

impl<W: Write + Send> PrintSink<W> {
    pub fn new(out: W) -> Self {
        Self {
            out: Mutex::new(out),
        }
    }
}

impl<W: Write + Send> Sink for PrintSink<W> {
    fn event(&self, event: &Event<'_>) {
        if let Event::Log { line } = event {
            let mut out = self
                .out
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let _ = writeln!(out, "{line}");
        }
    }
}
