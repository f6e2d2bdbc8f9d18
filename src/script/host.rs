//! The state one run shares with every host function: clock, output, steps, cleanups, snapshots.

mod branches;
mod builder;

pub(crate) use branches::BranchRecords;
mod gpu_record;
mod journal_calls;
mod metric_history;
mod test_hooks;

pub use builder::HostBuilder;
pub use gpu_record::GpuRecord;
pub use metric_history::MetricHistory;
pub use test_hooks::TestHooks;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rhai::{Dynamic, EvalAltResult, FnPtr, Position};

use super::interrupt::Interrupt;
use super::sources::SourceMap;
use crate::clock::Clock;
use crate::journal::{Journal, Record};
use crate::report::{
    DeferRecord, DeferStatus, Event, MetricRecord, Outcome, Secrets, Sink, SnapshotOutcome,
    SnapshotRecord, StepRecord,
};
use crate::sandbox::ReadSandbox;

/// What a run is about, fixed before it starts.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The runbook as the user named it, used in messages and reports.
    pub runbook: String,
    /// The folder imports and `read_text` resolve against.
    pub base_dir: PathBuf,
    /// `--set` values (already read from `@file`).
    pub sets: BTreeMap<String, String>,
    /// The `@path` of `--set` values read from files: what reports show for them.
    pub set_files: BTreeMap<String, String>,
    /// What `read_text` may read.
    pub read: ReadSandbox,
    /// Where `snapshot()` keeps golden files for this runbook.
    pub snapshot_dir: PathBuf,
    pub update_snapshots: bool,
    /// The run's journal id (`runbook run`), shown in the first line and the report.
    pub run_id: Option<String>,
}

impl HostConfig {
    /// For work that is not a runbook file (`eval`, `check`, `docs`, the REPL): no `--set`
    /// values, imports and `read_text` from `base_dir`, snapshots kept under `snapshot_dir`.
    pub fn scratch(
        name: &str,
        base_dir: std::path::PathBuf,
        snapshot_dir: std::path::PathBuf,
    ) -> Self {
        Self {
            runbook: name.to_string(),
            read: ReadSandbox::new(
                [base_dir.clone(), snapshot_dir.clone()],
                crate::sandbox::DEFAULT_MAX_READ_BYTES,
            ),
            base_dir,
            sets: BTreeMap::new(),
            set_files: BTreeMap::new(),
            snapshot_dir,
            update_snapshots: false,
            run_id: None,
        }
    }

    /// The same, reading what `read` allows instead.
    pub fn reading(mut self, read: ReadSandbox) -> Self {
        self.read = read;
        self
    }
}

struct OpenStep {
    name: String,
    virtual_start: Duration,
    wall_start: Instant,
    children: Vec<StepRecord>,
}

pub(crate) struct PendingDefer {
    /// Its number in the run journal.
    pub(crate) id: u64,
    pub(crate) name: String,
    pub(crate) body: FnPtr,
    /// The modules imported where the cleanup was registered (`gpu::scale` in its body needs
    /// them after the script has ended).
    pub(crate) imports: Vec<(String, rhai::Shared<rhai::Module>)>,
    /// The script functions in reach where it was registered: a closure made inside a stdlib
    /// module's function lives there, not in the runbook's own AST.
    pub(crate) namespaces: Vec<rhai::Shared<rhai::Module>>,
    /// How long it may keep retrying a busy or throttled API.
    pub(crate) deadline: Duration,
    /// What a person runs to undo by hand what this cleanup was for, when it did not finish.
    pub(crate) undo: Option<String>,
}

/// The cleanup running now.
struct RunningDefer {
    id: u64,
    name: String,
    undo: Option<String>,
    /// Its deadline on the run's clock.
    until: Duration,
    /// Host calls it has made: one or more, and an abort leaves it cut short, not unrun.
    calls: u32,
}

/// A cleanup that did not finish, and so may have left something behind.
#[derive(Debug, Clone)]
pub struct Unfinished {
    pub name: String,
    pub undo: Option<String>,
    /// It had sent at least one call when the run was aborted.
    pub started: bool,
}

#[derive(Default)]
struct RunState {
    open: Vec<OpenStep>,
    steps: Vec<StepRecord>,
    pending_defers: Vec<PendingDefer>,
    running_defer: Option<RunningDefer>,
    defers: Vec<DeferRecord>,
    snapshots: Vec<SnapshotRecord>,
    metrics: Vec<MetricRecord>,
    parameters: Option<serde_json::Value>,
    used_sets: BTreeSet<String>,
    failed: bool,
    next_defer_id: u64,
    changes: Vec<crate::report::ChangeRecord>,
    evidence: Vec<crate::report::Evidence>,
}

impl Host {
    /// How far into the run `virtual_at` and `wall_at` are: on its clock, and in wall time.
    pub(crate) fn since_start(&self, virtual_at: Duration, wall_at: Instant) -> (u64, u64) {
        (
            millis(virtual_at.saturating_sub(self.virtual_start)),
            millis(wall_at.saturating_duration_since(self.wall_start)),
        )
    }
}

pub struct Host {
    pub clock: Arc<dyn Clock>,
    pub runtime: tokio::runtime::Handle,
    pub interrupt: Interrupt,
    pub sources: SourceMap,
    pub config: HostConfig,
    sink: Arc<dyn Sink>,
    secrets: Mutex<Secrets>,
    /// Where every mutation is journaled before it is sent (none: `docs`, `check`, `eval`).
    journal: Option<Arc<Journal>>,
    /// What the run may change; none held to nothing.
    guards: Option<crate::guard::Guards>,
    /// What the resources the run started have cost so far (`--max-cost-usd`).
    spend: Mutex<crate::guard::Spend>,
    metric_history: Option<Arc<dyn MetricHistory>>,
    gpu_record: Option<Arc<dyn GpuRecord>>,
    /// What the crash-safety tests asked of this run (nothing, in a release build).
    pub(crate) hooks: TestHooks,
    answered_calls: std::sync::atomic::AtomicU64,
    cleaning_up: AtomicBool,
    /// Why no more mutations may be sent: the run is being undone from its journal.
    closed: std::sync::OnceLock<String>,
    wall_start: Instant,
    virtual_start: Duration,
    state: Mutex<RunState>,
}

impl Host {
    fn state(&self) -> MutexGuard<'_, RunState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn emit(&self, event: &Event<'_>) {
        let secrets = self
            .secrets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if secrets.is_empty() {
            drop(secrets);
            self.sink.event(event);
        } else {
            secrets.emit_masked(self.sink.as_ref(), event);
        }
    }

    /// Marks a value secret: from now on it is masked in output, reports and snapshots.
    pub fn add_secret(&self, value: &str) {
        self.secrets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add(value);
    }

    pub fn secrets(&self) -> Secrets {
        self.secrets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// `text` with the run's secret values masked, for whatever leaves the process.
    pub fn mask(&self, text: &str) -> String {
        self.secrets().mask(text).into_owned()
    }

    pub fn log(&self, line: &str) {
        self.emit(&Event::Log { line });
    }

    /// Virtual time since the run started (the twin's scenario may have run before it).
    pub fn virtual_elapsed(&self) -> Duration {
        self.clock.now().saturating_sub(self.virtual_start)
    }

    pub fn wall_elapsed(&self) -> Duration {
        self.wall_start.elapsed()
    }

    /// True once the main script is over and cleanups run: a first Ctrl-C no longer stops work.
    pub fn is_cleaning_up(&self) -> bool {
        self.cleaning_up.load(Ordering::Relaxed)
    }

    /// From now on every mutation is refused with `why` before it is journaled or sent: the
    /// run is being undone from its journal, and the script's thread must not race that.
    pub fn close_mutations(&self, why: &str) {
        let _ = self.closed.set(why.to_string());
    }

    /// Whether the run is being undone from its journal (see [`Host::close_mutations`]).
    pub fn mutations_closed(&self) -> bool {
        self.closed.get().is_some()
    }

    pub(crate) fn start_cleanup(&self) {
        self.cleaning_up.store(true, Ordering::Relaxed);
    }

    /// Whether a Ctrl-C should stop what the script is doing now.
    pub fn should_stop(&self) -> bool {
        self.interrupt.count() > 0 && !self.is_cleaning_up()
    }

    pub(crate) fn interrupted_error(&self, position: Position) -> Box<EvalAltResult> {
        EvalAltResult::ErrorTerminated(self.interrupted_token(), position).into()
    }

    /// What a script stopped by a signal ends with: `interrupted by SIGTERM`.
    pub(crate) fn interrupted_token(&self) -> Dynamic {
        format!("interrupted by {}", self.interrupt.first_signal_name()).into()
    }

    /// Blocks the script on a call to the target, giving up when Ctrl-C asks the run to stop.
    pub fn block_on<T>(
        &self,
        position: Position,
        future: impl std::future::Future<Output = T>,
    ) -> Result<T, Box<EvalAltResult>> {
        if let Some(running) = self.state().running_defer.as_mut() {
            running.calls += 1;
        }
        self.block_on_quietly(position, future)
    }

    /// The same for waiting that sends nothing (a sleep): a cleanup aborted in one has not
    /// started changing anything.
    fn block_on_quietly<T>(
        &self,
        position: Position,
        future: impl std::future::Future<Output = T>,
    ) -> Result<T, Box<EvalAltResult>> {
        if self.should_stop() {
            return Err(self.interrupted_error(position));
        }
        if let Some(over) = self.over_budget() {
            return Err(super::failure_error(over, position));
        }
        let stop_at = if self.is_cleaning_up() { 2 } else { 1 };
        super::blocking::block_on(&self.runtime, async {
            tokio::select! {
                value = future => Ok(value),
                () = self.interrupt.reached(stop_at) => Err(self.interrupted_error(position)),
                over = self.budget_spent() => Err(super::failure_error(over, position)),
            }
        })
    }

    /// Runs a cleanup (removing what a call made) to its end even after a first Ctrl-C; a
    /// second Ctrl-C abandons it (`None`), as it abandons a runbook's own cleanups.
    pub fn block_on_cleanup<T>(&self, future: impl std::future::Future<Output = T>) -> Option<T> {
        super::blocking::block_on(&self.runtime, async {
            tokio::select! {
                value = future => Some(value),
                () = self.interrupt.reached(2) => None,
            }
        })
    }

    /// Sleeps on the run's clock (virtual time jumps; real time waits).
    pub fn sleep(&self, duration: Duration, position: Position) -> Result<(), Box<EvalAltResult>> {
        // Timers belong to the runtime; the REPL calls in from a thread outside it.
        let _entered = self.runtime.enter();
        let sleep = self.clock.sleep(duration);
        self.block_on_quietly(position, sleep)
    }

    // --- steps -------------------------------------------------------------------------------

    pub(crate) fn begin_step(&self, name: &str) {
        let step = OpenStep {
            name: name.to_string(),
            virtual_start: self.clock.now(),
            wall_start: Instant::now(),
            children: Vec::new(),
        };
        let mut step = Some(step);
        let in_branch = branches::with_branch(|b| {
            b.open.extend(step.take());
            b.path()
        });
        let path = match (in_branch, step) {
            (Some(path), _) => path,
            (None, Some(step)) => {
                let mut state = self.state();
                state.open.push(step);
                state
                    .open
                    .iter()
                    .map(|s| s.name.clone())
                    .collect::<Vec<_>>()
            }
            (None, None) => Vec::new(),
        };
        self.emit(&Event::StepStarted { path: &path });
    }

    pub(crate) fn end_step(&self, outcome: Outcome, error: Option<String>) {
        let finished = match branches::with_branch(|b| {
            let path = b.path();
            b.open.pop().map(|open| (path, open))
        }) {
            Some(Some((path, open))) => {
                let record = self.step_record(open, outcome, error);
                branches::with_branch(|b| b.file(record.clone()));
                Some((path, record))
            }
            Some(None) => None,
            None => {
                let mut state = self.state();
                let path = state
                    .open
                    .iter()
                    .map(|s| s.name.clone())
                    .collect::<Vec<_>>();
                state.open.pop().map(|open| {
                    let record = self.step_record(open, outcome, error);
                    match state.open.last_mut() {
                        Some(parent) => parent.children.push(record.clone()),
                        None => state.steps.push(record.clone()),
                    }
                    (path, record)
                })
            }
        };
        let Some((path, record)) = finished else {
            return;
        };
        if outcome == Outcome::Failed {
            self.state().failed = true;
        }
        self.emit(&Event::StepFinished {
            path: &path,
            outcome,
            error: record.error.as_deref(),
            virtual_time: Duration::from_millis(record.virtual_ms),
            wall_time: Duration::from_millis(record.wall_ms),
        });
    }

    fn step_record(&self, open: OpenStep, outcome: Outcome, error: Option<String>) -> StepRecord {
        // An error that escaped a failed child is that child's: say so rather than repeat it.
        let error = match (error, open.children.last()) {
            (Some(e), Some(child))
                if child.status != Outcome::Passed && child.error.as_deref() == Some(&e) =>
            {
                Some(format!("step `{}` did not pass", child.name))
            }
            (error, _) => error,
        };
        StepRecord {
            name: open.name,
            status: outcome,
            error,
            start_ms: millis(open.virtual_start.saturating_sub(self.virtual_start)),
            start_wall_ms: millis(open.wall_start.saturating_duration_since(self.wall_start)),
            virtual_ms: millis(self.clock.now().saturating_sub(open.virtual_start)),
            wall_ms: millis(open.wall_start.elapsed()),
            steps: open.children,
        }
    }

    /// Closes steps left open by an error that escaped them (interrupt, script error).
    pub(crate) fn close_open_steps(&self, outcome: Outcome, error: &str) {
        while !self.state().open.is_empty() {
            self.end_step(outcome, Some(error.to_string()));
        }
    }

    // --- cleanups ----------------------------------------------------------------------------

    /// A number for the next cleanup.
    pub(crate) fn next_defer_id(&self) -> u64 {
        let mut state = self.state();
        state.next_defer_id += 1;
        state.next_defer_id
    }

    pub(crate) fn push_defer(&self, defer: PendingDefer) -> Result<(), String> {
        self.write_journal(&Record::DeferRegistered {
            id: defer.id,
            name: defer.name.clone(),
        })?;
        self.state().pending_defers.push(defer);
        Ok(())
    }

    /// How many cleanups are registered and not yet run.
    pub fn pending_defers(&self) -> usize {
        self.state().pending_defers.len()
    }

    /// The next cleanup to run (last registered first), marked as running.
    pub(crate) fn pop_defer(&self, keep: usize) -> Option<PendingDefer> {
        let mut state = self.state();
        if state.pending_defers.len() <= keep {
            return None;
        }
        let next = state.pending_defers.pop();
        state.running_defer = next.as_ref().map(|d| RunningDefer {
            id: d.id,
            name: d.name.clone(),
            undo: d.undo.clone(),
            until: self.clock.now() + d.deadline,
            calls: 0,
        });
        next
    }

    pub(crate) fn record_defer(&self, record: DeferRecord) {
        let mut state = self.state();
        if let Some(running) = state.running_defer.take() {
            // A journal that cannot be written now only makes a later recover do more.
            let _ = self.write_journal(&Record::DeferFinished {
                id: running.id,
                passed: record.status == DeferStatus::Passed,
            });
        }
        if record.status == DeferStatus::Failed {
            state.failed = true;
        }
        state.defers.push(record);
    }

    /// The cleanups that have not finished, in the order they would have run.
    pub fn unfinished_defers(&self) -> Vec<Unfinished> {
        unfinished(&self.state())
    }

    // --- cleanups' deadline -----------------------------------------------------------------

    /// While a cleanup runs: until when (on the run's clock) it keeps retrying an API that is
    /// busy or throttled.
    pub fn cleanup_deadline(&self) -> Option<Duration> {
        self.state().running_defer.as_ref().map(|d| d.until)
    }

    // --- parameters and snapshots --------------------------------------------------------------

    pub(crate) fn set_parameters(
        &self,
        parameters: serde_json::Value,
        used: impl IntoIterator<Item = String>,
    ) {
        let mut state = self.state();
        state.parameters = Some(parameters);
        state.used_sets.extend(used);
    }

    pub(crate) fn params_called(&self) -> bool {
        self.state().parameters.is_some()
    }

    pub(crate) fn record_snapshot(&self, name: &str, outcome: SnapshotOutcome, path: &str) {
        let mut record = Some(SnapshotRecord {
            name: name.to_string(),
            outcome,
            path: path.to_string(),
        });
        // Inside `parallel`, a branch keeps its own, so the report's order does not depend on
        // which branch got there first.
        branches::with_branch(|b| b.snapshots.extend(record.take()));
        if let Some(record) = record {
            self.state().snapshots.push(record);
        }
        self.emit(&Event::Snapshot {
            name,
            outcome,
            path,
        });
    }

    /// Keeps what a GPU primitive measured (`kind`: `nccl`, `gpu_health`) in the step open now.
    pub(crate) fn record_evidence(&self, kind: &str, data: serde_json::Value) {
        let step = self.open_path();
        self.state().evidence.push(crate::report::Evidence {
            kind: kind.to_string(),
            step,
            data,
        });
    }

    /// Everything recorded so far, for the report. Unfinished cleanups are listed as skipped.
    pub(crate) fn snapshot_records(&self) -> Recorded {
        let state = self.state();
        let mut defers = state.defers.clone();
        defers.extend(unfinished(&state).into_iter().map(|u| DeferRecord {
            name: u.name,
            status: if u.started {
                DeferStatus::CutShort
            } else {
                DeferStatus::Skipped
            },
            error: None,
            undo: u.undo,
            start_ms: 0,
            start_wall_ms: 0,
            virtual_ms: 0,
            wall_ms: 0,
        }));
        Recorded {
            steps: state.steps.clone(),
            defers,
            snapshots: state.snapshots.clone(),
            metrics: state.metrics.clone(),
            changes: state.changes.clone(),
            evidence: state.evidence.clone(),
            parameters: state.parameters.clone(),
            failed: state.failed,
        }
    }
}

fn unfinished(state: &RunState) -> Vec<Unfinished> {
    let running = state.running_defer.iter().map(|d| Unfinished {
        name: d.name.clone(),
        undo: d.undo.clone(),
        started: d.calls > 0,
    });
    let pending = state.pending_defers.iter().rev().map(|d| Unfinished {
        name: d.name.clone(),
        undo: d.undo.clone(),
        started: false,
    });
    running.chain(pending).collect()
}

pub(crate) struct Recorded {
    pub(crate) steps: Vec<StepRecord>,
    pub(crate) defers: Vec<DeferRecord>,
    pub(crate) snapshots: Vec<SnapshotRecord>,
    pub(crate) metrics: Vec<MetricRecord>,
    pub(crate) changes: Vec<crate::report::ChangeRecord>,
    pub(crate) evidence: Vec<crate::report::Evidence>,
    pub(crate) parameters: Option<serde_json::Value>,
    pub(crate) failed: bool,
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
