//! A run's place in the history: the history opened before the run (so a bad `--history`
//! fails before anything is touched), the baselines judged against it, and the run kept in it
//! when it ends; with it the Prometheus textfile.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::cli::HistoryArgs;
use crate::error::Error;
use crate::history::{self, History, MetricId, NewRun};
use crate::report::{
    BaselineResult, BaselineSpec, Better, MetricRecord, Report, to_prometheus_text,
};
use crate::script::{GpuRecord, MetricHistory};

/// The folder `--history` names: the state directory when absent, none for `off`.
pub(crate) fn history_dir(args: &HistoryArgs, state_dir: &Path) -> Option<PathBuf> {
    match &args.dir {
        Some(dir) if dir.as_os_str() == "off" => None,
        Some(dir) => Some(dir.clone()),
        None => Some(state_dir.to_path_buf()),
    }
}

/// Where a run's history is kept.
pub(crate) enum Kept<'a> {
    Folder(&'a Path),
    Store(&'a Arc<crate::store::SharedStore>),
}

/// The history of one run: where it is kept, what it is keyed by.
#[derive(Clone)]
pub(crate) struct RunHistory {
    history: Arc<Mutex<History>>,
    /// Kept in the shared store: keyed as every machine names the runbook.
    shared: bool,
    runbook: String,
    runbook_file: PathBuf,
    target: String,
    started: f64,
    /// `git status` for the commit, started with the run so its few ms overlap the run's work
    /// instead of following it.
    commit: Arc<Mutex<Option<std::thread::JoinHandle<Option<String>>>>>,
}

impl RunHistory {
    /// The history in `dir`, or in the shared store when there is one, for runs of
    /// `runbook_file` against `target` (its identity, in a shared store).
    pub(crate) fn open(
        kept: Kept<'_>,
        runbook_file: &Path,
        runbook: &str,
        target: &str,
    ) -> Result<Self, Error> {
        let history = match kept {
            Kept::Folder(dir) => History::open(dir).map_err(Error::History)?,
            Kept::Store(store) => History::shared(store.clone()),
        };
        history.check().map_err(Error::History)?;
        let file = runbook_file.to_path_buf();
        let commit = std::thread::Builder::new()
            .name("git-status".into())
            .spawn(move || commit_of(&file))
            .ok();
        Ok(Self {
            shared: matches!(history, History::Shared(_)),
            history: Arc::new(Mutex::new(history)),
            runbook: runbook.to_string(),
            runbook_file: runbook_file.to_path_buf(),
            target: target.to_string(),
            started: unix_now(),
            commit: Arc::new(Mutex::new(commit)),
        })
    }

    /// What the run ran against, as the history keys it.
    /// What a run is kept and judged by: in a shared store, the runbook by its path in its
    /// repository, as every machine's checkout names it.
    fn key(&self, parameters: &serde_json::Value) -> history::RunKey {
        let mut key = history::run_key(&self.runbook_file, &self.target, parameters);
        if self.shared {
            key.runbook_path = history::portable(&self.runbook_file);
        }
        key
    }

    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    /// Keeps the finished run; answers its number in the history and the commit it came from.
    pub(crate) fn keep(
        &self,
        report: &Report,
        finished: f64,
    ) -> Result<(u64, Option<String>), Error> {
        let key = self.key(&report.parameters);
        let started = self
            .commit
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let commit = match started {
            Some(status) => status.join().ok().flatten(),
            None => commit_of(&self.runbook_file),
        };
        let mut history = self.locked();
        history
            .record(&NewRun {
                key: &key,
                runbook: &self.runbook,
                report,
                started: self.started,
                finished,
                commit: commit.as_deref(),
            })
            .map(|number| (number, commit))
            .map_err(Error::History)
    }
}

impl RunHistory {
    /// For each of the report's metrics, its values over the last runs of this key, this one
    /// included (kept already), oldest first; empty where the history cannot say.
    pub(crate) fn trends(&self, report: &Report) -> Vec<Vec<f64>> {
        const TREND_RUNS: usize = 20;
        let key = self.key(&report.parameters);
        let history = self.locked();
        report
            .metrics
            .iter()
            .map(|m| {
                let (labels, step) = (m.label_key(), m.step.join(" > "));
                let metric = MetricId {
                    name: &m.name,
                    labels: &labels,
                    step: &step,
                };
                history
                    .series(&key, &metric, TREND_RUNS)
                    .map(|s| s.into_iter().map(|(_, value, _)| value).collect())
                    .unwrap_or_default()
            })
            .collect()
    }
}

impl MetricHistory for RunHistory {
    fn compare(
        &self,
        parameters: &serde_json::Value,
        record: &MetricRecord,
        better: Better,
        spec: BaselineSpec,
    ) -> Result<BaselineResult, String> {
        let key = self.key(parameters);
        let (labels, step) = (record.label_key(), record.step.join(" > "));
        let metric = MetricId {
            name: &record.name,
            labels: &labels,
            step: &step,
        };
        let history = self.locked();
        let past = history
            .passing_values(&key, &metric, spec.runs)
            .map_err(in_words)?;
        Ok(history::judge(record.value, better, spec, &past))
    }
}

impl RunHistory {
    /// The history, whatever a thread that panicked holding it left (each write is one
    /// SQLite transaction, so nothing half-done is seen).
    fn locked(&self) -> std::sync::MutexGuard<'_, History> {
        self.history
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A history error as a script sees it: the top-level error's words, without its `error: `.
fn in_words(error: history::HistoryError) -> String {
    Error::History(error)
        .render()
        .trim_end()
        .trim_start_matches("error: ")
        .to_string()
}

impl GpuRecord for RunHistory {
    fn past(
        &self,
        who: &str,
        window: std::time::Duration,
    ) -> Result<Vec<(f64, serde_json::Value)>, String> {
        let now = unix_now();
        let history = self.locked();
        let record = history
            .gpu_record(who, now - window.as_secs_f64())
            .map_err(in_words)?;
        Ok(record
            .into_iter()
            .map(|past| ((now - past.finished).max(0.0), past.health))
            .collect())
    }

    fn certificate(&self, machine: &str) -> Result<Option<(u64, serde_json::Value)>, String> {
        let history = self.locked();
        let kept = history.certificate(machine).map_err(in_words)?;
        Ok(kept.map(|past| (past.run, past.certificate)))
    }
}

/// The commit the runbook came from: `GITHUB_SHA` in a workflow, else HEAD of the repository
/// holding the runbook's folder (with `-dirty` when tracked files have changes: such a run is
/// not the commit's); None outside a repository. One `git status --porcelain=v2 --branch`
/// tells both: its `# branch.oid` line and a line per changed file.
fn commit_of(runbook_file: &Path) -> Option<String> {
    if let Some(sha) = std::env::var("GITHUB_SHA").ok().filter(|c| !c.is_empty()) {
        return Some(sha);
    }
    let folder = crate::cli::runbook_folder(runbook_file);
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(&folder)
        .args([
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=no",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&status.stdout);
    let head = text
        .lines()
        .find_map(|l| l.strip_prefix("# branch.oid "))
        .filter(|oid| *oid != "(initial)")?;
    let dirty = text.lines().any(|l| !l.starts_with('#'));
    Some(if dirty {
        format!("{head}-dirty")
    } else {
        head.to_string()
    })
}

/// Writes the run's Prometheus metrics to `path` whole: to a temporary file beside it, then
/// renamed over it, so a collector never reads half a file.
pub(crate) fn write_metrics_file(report: &Report, finished: f64, path: &Path) -> Result<(), Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "metrics.prom".into());
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    // World-readable (0644 by the usual umask), unlike the reports: node_exporter's textfile
    // collector reads it as a user of its own. It holds metric names, labels and numbers.
    let written = std::fs::write(&temporary, to_prometheus_text(report, finished))
        .and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|source| {
        let _ = std::fs::remove_file(&temporary);
        Error::Write {
            path: path.to_path_buf(),
            what: "the metrics file",
            source,
        }
    })
}

/// Wall-clock Unix seconds.
pub(crate) fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
