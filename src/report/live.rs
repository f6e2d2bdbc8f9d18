//! The terminal view: a spinner on each running step, finished steps with a mark and durations.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::plain::defer_word;
use super::{DeferStatus, Event, Outcome, Sink};
use crate::clock::format_duration;

pub struct LiveSink {
    multi: MultiProgress,
    running: Mutex<Vec<ProgressBar>>,
    virtual_clock: AtomicBool,
}

impl LiveSink {
    pub fn new() -> Self {
        Self {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stdout()),
            running: Mutex::new(Vec::new()),
            virtual_clock: AtomicBool::new(true),
        }
    }

    fn println(&self, text: &str) {
        // MultiProgress::println keeps the spinners below printed lines; it fails only when
        // the terminal is gone, and then there is nobody to tell.
        let _ = self.multi.println(text);
    }

    /// On a real clock virtual and wall time are the same: show one.
    fn timing(&self, virtual_time: Duration, wall_time: Duration) -> String {
        if self.virtual_clock.load(Ordering::Relaxed) {
            format!(
                "{} virtual · {} wall",
                format_duration(virtual_time),
                format_duration(wall_time)
            )
        } else {
            format_duration(wall_time)
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, Vec<ProgressBar>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Default for LiveSink {
    fn default() -> Self {
        Self::new()
    }
}

fn indent(depth: usize) -> String {
    "  ".repeat(depth)
}

fn mark(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "\u{1b}[32m✓\u{1b}[0m",
        Outcome::Failed => "\u{1b}[31m✗\u{1b}[0m",
        Outcome::Interrupted => "\u{1b}[33m⏸\u{1b}[0m",
    }
}

fn dim(text: &str) -> String {
    format!("\u{1b}[2m{text}\u{1b}[0m")
}

impl Sink for LiveSink {
    fn event(&self, event: &Event<'_>) {
        match event {
            Event::RunStarted {
                runbook,
                clock,
                run_id,
            } => self.run_started(runbook, clock, *run_id),
            Event::StepStarted { path } => self.step_started(path),
            Event::StepFinished {
                path,
                outcome,
                error,
                virtual_time,
                wall_time,
            } => {
                let timing = self.timing(*virtual_time, *wall_time);
                self.step_finished(path, *outcome, *error, &timing);
            }
            Event::Log { line } => {
                let depth = self.running().len();
                self.println(&format!("{}{line}", indent(depth)));
            }
            Event::DeferStarted { .. } => {}
            Event::DeferFinished {
                name,
                status,
                error,
                virtual_time,
                wall_time,
            } => {
                let timing = self.timing(*virtual_time, *wall_time);
                self.defer_finished(name, *status, *error, &timing);
            }
            Event::Snapshot {
                name,
                outcome,
                path,
            } => {
                let word = serde_json::to_value(outcome).unwrap_or_default();
                self.println(&dim(&format!(
                    "  snapshot {name}: {} ({path})",
                    word.as_str().unwrap_or("?")
                )));
            }
            Event::RunFinished { summary } => {
                self.println(summary);
            }
        }
    }
}

impl LiveSink {
    /// The run's first line; its clock decides how durations are shown from here on.
    fn run_started(&self, runbook: &str, clock: &str, run_id: Option<&str>) {
        self.virtual_clock
            .store(clock == "virtual", Ordering::Relaxed);
        let about = match run_id {
            Some(id) => format!("({clock} clock, run {id})"),
            None => format!("({clock} clock)"),
        };
        self.println(&format!("▶ {runbook} {}", dim(&about)));
    }

    /// A spinner for the step, indented under the steps it is in.
    fn step_started(&self, path: &[String]) {
        let depth = path.len().saturating_sub(1);
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner:.cyan} {msg} {elapsed:.dim}")
                .expect("static template"),
        );
        bar.set_message(format!(
            "{}{}",
            indent(depth),
            path.last().map_or("", |s| s)
        ));
        bar.enable_steady_tick(Duration::from_millis(100));
        self.running().push(bar);
    }

    /// The step's spinner replaced by its mark, name and `timing`, and its error below.
    fn step_finished(&self, path: &[String], outcome: Outcome, error: Option<&str>, timing: &str) {
        if let Some(bar) = self.running().pop() {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
        let depth = path.len().saturating_sub(1);
        let mut text = format!(
            "{}{} {}  {}",
            indent(depth),
            mark(outcome),
            path.last().map_or("", |s| s),
            dim(timing)
        );
        if let Some(error) = error {
            let pad = indent(depth + 1);
            text.push_str(&format!(
                "\n{pad}{}",
                error.replace('\n', &format!("\n{pad}"))
            ));
        }
        self.println(&text);
    }

    fn defer_finished(&self, name: &str, status: DeferStatus, error: Option<&str>, timing: &str) {
        let symbol = match status {
            DeferStatus::Passed => "↺",
            DeferStatus::Failed => "\u{1b}[31m✗\u{1b}[0m",
            DeferStatus::Skipped | DeferStatus::CutShort => "\u{1b}[33m-\u{1b}[0m",
        };
        let mut text = format!(
            "{symbol} cleanup {name}  {}",
            dim(&format!("{} · {timing}", defer_word(status)))
        );
        if let Some(error) = error {
            text.push_str(&format!("\n  {error}"));
        }
        self.println(&text);
    }
}
