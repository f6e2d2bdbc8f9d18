//! `runbook run`: a runbook with live output, cleanups, snapshots and reports.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use super::rehearsal::{Rehearsal, rehearse};
use super::run_history::{RunHistory, history_dir, unix_now, write_metrics_file};
use super::{AppResult, confirm, preflight, runtime, signals};
use crate::cli::{IfHistoryDamaged, JournalArgs, Progress, RunArgs, RunConfig};
use crate::clients::pushgateway::Pushgateway;
use crate::error::Error;
use crate::journal::{self, Journal, Record};
use crate::plan::to_summary;
use crate::report::{
    LiveSink, PlainSink, Report, Sink, SummaryContext, for_pushgateway, left_behind_text, to_html,
    to_junit_xml, to_markdown_summary,
};
use crate::script::{self, Host, HostConfig, Interrupt, RunOptions};

pub(crate) fn execute(args: RunArgs) -> AppResult {
    let config = RunConfig::from_args(args)?;
    preflight::check_outputs(
        &[
            ("--report", config.report.as_deref()),
            ("--junit", config.junit.as_deref()),
            ("--metrics-file", config.metrics_file.as_deref()),
            ("--summary", config.summary.as_deref()),
            ("--html", config.html.as_deref()),
        ],
        config.snapshot_root.as_deref(),
    )?;
    let text = crate::sandbox::read_text_file(&config.file, crate::sandbox::TEXT_FILE_LIMIT)
        .map_err(|source| Error::Read {
            path: config.file.clone(),
            what: "the runbook".into(),
            source,
        })?;
    // A Pushgateway URL that cannot work fails here, before anything runs.
    let pushgateway = config
        .pushgateway
        .as_deref()
        .map(Pushgateway::new)
        .transpose()
        .map_err(|e| Error::Usage(format!("{e} (nothing has run)")))?;
    let runtime = runtime::build()?;
    let target = crate::target::connect(&runtime, &config.target, config.clock)?;
    let runbook = config.file.display().to_string();
    let real = match (&target.outside(), &config.target.aws_endpoint) {
        (Some(_), _) => Some(target.description.clone()),
        (None, Some(endpoint)) => Some(format!("AWS at {endpoint}")),
        (None, None) => None,
    };
    if let Some(real) = real {
        let rehearsal = || {
            let plan = rehearse(
                &runtime,
                Rehearsal {
                    file: &config.file,
                    text: text.clone(),
                    sets: config.sets.clone(),
                    set_files: config.set_files.clone(),
                    read: config.read.clone(),
                    guards: config.guards.clone(),
                    target: &config.target,
                },
            )?;
            Ok(to_summary(&plan))
        };
        confirm::changes_confirmed(
            &runbook,
            &real,
            config.yes,
            config.guards.read_only,
            rehearsal,
        )?;
    }
    let state_dir = journal::state_dir(config.journal.state_dir.as_deref());
    let run_id = new_run_id();
    // The embedded twin is this process's own; any other target is held for the run, unless
    // the run only reads (a monitoring verify runs beside a drill, and beside others).
    let _lock = match target.outside() {
        Some(_) if !config.guards.read_only => Some(take_lock(
            &state_dir,
            &config,
            &target.key,
            &run_id,
            &runbook,
        )?),
        _ => None,
    };
    // Opened and checked before anything runs: a history that cannot be written, or is
    // damaged, is found here, not after the drill.
    let history = history_dir(&config.history, &state_dir)
        .map(|dir| RunHistory::open(&dir, &config.file, &runbook, &target.history_key))
        .transpose()
        .or_else(|error| damaged_history(error, config.history.if_damaged))?;
    if let Some(earlier) = journal::latest_unfinished(&state_dir, &target.key) {
        eprintln!(
            "note: run {} of {} against this target was killed before its cleanups finished; \
             `runbook recover {}` with the same --kubeconfig and --aws-endpoint puts back what it changed",
            earlier.id, earlier.runbook, earlier.id
        );
    }
    let run_journal = if super::test_hooks::journal_off() {
        None
    } else {
        Some(start_journal(
            &state_dir,
            &run_id,
            &runbook,
            &target.key,
            target.outside().is_some(),
        )?)
    };
    let mut host = Host::builder(
        HostConfig {
            runbook: runbook.clone(),
            base_dir: crate::cli::runbook_folder(&config.file),
            sets: config.sets.clone(),
            set_files: config.set_files.clone(),
            read: config.read.clone(),
            snapshot_dir: config.snapshot_dir.clone(),
            update_snapshots: config.update_snapshots,
            run_id: Some(run_id.clone()),
        },
        target.clock.clone(),
        sink(config.progress),
        Interrupt::new(),
        runtime.handle().clone(),
    )
    .journal(run_journal.clone())
    .guards(config.guards.clone())
    .test_hooks(super::test_hooks::from_env());
    if let Some(history) = &history {
        host = host.history(Arc::new(history.clone()), Arc::new(history.clone()));
    }
    let host = host.build();
    let outputs = Outputs {
        json: config.report.clone(),
        junit: config.junit.clone(),
        metrics_file: config.metrics_file.clone(),
        summary: config.summary.clone(),
        html: config.html.clone(),
        history: history.clone(),
        push: pushgateway.map(|gateway| Push {
            gateway,
            job: config.pushgateway_job.clone(),
            runtime: runtime.handle().clone(),
        }),
    };
    let on_abort = outputs.clone();
    signals::watch(
        &runtime,
        host.clone(),
        target.outside().cloned(),
        move |report| {
            // Best effort on abort: the process is about to exit either way.
            let _ = on_abort.write(report);
        },
    );

    let script_host = host.clone();
    let extensions = target.extensions.clone();
    let outcome = runtime::run_script(&runtime, move || {
        script::run_file(
            &script_host,
            RunOptions {
                source_name: runbook,
                text,
                extensions,
            },
        )
    })?;
    signals::yield_to_abort(&host);
    let mut outcome = outcome;
    outcome.report.connections = target.clients.connections();
    if config.target.verbose {
        eprintln!(
            "{}",
            crate::target::connections_line(&outcome.report.connections)
        );
    }
    if let Some(diagnostic) = &outcome.diagnostic {
        eprint!(
            "{}",
            host.mask(&diagnostic.render(&host.sources, config.target.verbose))
        );
    }
    outputs.write(&outcome.report)?;
    if let Some(text) = left_behind_text(&outcome.report) {
        eprint!("{text}");
        if run_journal.is_some() && target.outside().is_some() {
            eprintln!(
                "  or put back what the run changed from its journal: runbook recover {run_id} (with the same --kubeconfig and --aws-endpoint)"
            );
        }
    }
    // A run whose cleanups did not all finish stays unfinished: recover can still act on it.
    if outcome.report.left_behind().is_empty() {
        let status = serde_json::to_value(outcome.report.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        if let Some(journal) = &run_journal {
            let _ = journal.append(&Record::End { status });
            // Best effort: an old journal left behind costs disk, not safety.
            journal::prune_ended(&state_dir, journal::KEPT_ENDED_RUNS);
        }
    }
    if outcome
        .diagnostic
        .as_ref()
        .is_some_and(|d| d.kind == script::FaultKind::Internal)
    {
        return Ok(crate::error::Exit::CleanupFailed);
    }
    Ok(signals::exit_code(&host, &outcome.report))
}

/// `r<seconds since the epoch>-<pid>`: sortable, and apart across processes.
fn new_run_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("r{secs}-{}", std::process::id())
}

fn take_lock(
    state_dir: &Path,
    config: &RunConfig,
    key: &str,
    run_id: &str,
    runbook: &str,
) -> Result<journal::TargetLock, Error> {
    let wait = lock_patience(&config.journal)?;
    journal::acquire(
        state_dir,
        &journal::Holder {
            pid: std::process::id(),
            run_id: run_id.to_string(),
            runbook: runbook.to_string(),
            target: key.to_string(),
        },
        wait,
    )
    .inspect(|lock| {
        if let Some(note) = &lock.taken_over {
            eprintln!("note: {note}");
        }
    })
    .map_err(|e| Error::Usage(e.to_string()))
}

/// A damaged history refuses the run, or (`--if-history-damaged without`) is said in one line
/// and left out of it; any other history error stands.
fn damaged_history(error: Error, choice: IfHistoryDamaged) -> Result<Option<RunHistory>, Error> {
    let Error::History(damage) = &error else {
        return Err(error);
    };
    if !damage.is_damaged() {
        return Err(error);
    }
    let what = match std::error::Error::source(damage) {
        Some(cause) => format!("{damage} is damaged ({cause})"),
        None => damage.to_string(),
    };
    match choice {
        IfHistoryDamaged::Refuse => Err(Error::Usage(format!(
            "{what}; nothing has run. Move the file aside to start a new history, or pass --if-history-damaged without to run without one"
        ))),
        IfHistoryDamaged::Without => {
            eprintln!(
                "warning: {what}; this run goes on without a history (no baseline judged, the run not kept)"
            );
            Ok(None)
        }
    }
}

/// `--wait-lock`, or no waiting.
pub(crate) fn lock_patience(args: &JournalArgs) -> Result<std::time::Duration, Error> {
    match &args.wait_lock {
        Some(text) => crate::clock::parse_duration(text)
            .map_err(|e| Error::Usage(format!("--wait-lock {text}: {e}"))),
        None => Ok(std::time::Duration::ZERO),
    }
}

/// The run's journal, with its first record on disk.
fn start_journal(
    state_dir: &Path,
    run_id: &str,
    runbook: &str,
    key: &str,
    durable: bool,
) -> Result<Arc<Journal>, Error> {
    let journal =
        Journal::create(&state_dir.join("runs").join(run_id), durable).map_err(Error::Journal)?;
    journal
        .append(&Record::Start {
            run_id: run_id.to_string(),
            runbook: runbook.to_string(),
            target: key.to_string(),
            pid: std::process::id(),
            started_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        })
        .map_err(Error::Journal)?;
    Ok(Arc::new(journal))
}

fn sink(progress: Progress) -> Arc<dyn Sink> {
    let live = match progress {
        Progress::Always => true,
        Progress::Never => false,
        Progress::Auto => std::io::stdout().is_terminal(),
    };
    if live {
        Arc::new(LiveSink::new())
    } else {
        Arc::new(PlainSink::new(std::io::stdout()))
    }
}

/// Where a finished (or aborted) run is written: the report files, the metrics textfile, the
/// history.
#[derive(Clone)]
struct Outputs {
    json: Option<std::path::PathBuf>,
    junit: Option<std::path::PathBuf>,
    metrics_file: Option<std::path::PathBuf>,
    summary: Option<std::path::PathBuf>,
    html: Option<std::path::PathBuf>,
    history: Option<RunHistory>,
    push: Option<Push>,
}

/// Where the run's metrics are pushed.
#[derive(Clone)]
struct Push {
    gateway: Pushgateway,
    job: String,
    runtime: tokio::runtime::Handle,
}

impl Push {
    /// The run's group, then (a passing run) its last-success group. On a thread of its own:
    /// an aborted run writes its outputs from inside the runtime.
    fn send(
        &self,
        report: &Report,
        finished: f64,
    ) -> Result<(), crate::clients::pushgateway::PushError> {
        let (metrics, last_success) = for_pushgateway(report, finished);
        let runbook = report.runbook.as_str();
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    self.runtime.block_on(async {
                        self.gateway
                            .put(&self.job, &[("runbook", runbook)], metrics)
                            .await?;
                        if let Some(body) = last_success {
                            let group = [("runbook", runbook), ("kind", "last_success")];
                            self.gateway.put(&self.job, &group, body).await?;
                        }
                        Ok(())
                    })
                })
                .join()
                .unwrap_or(Ok(()))
        })
    }
}

impl Outputs {
    fn write(&self, report: &Report) -> Result<(), Error> {
        let finished = unix_now();
        if let Some(path) = &self.json {
            // The user's alone, as the journal and history are: it names the run's resources.
            crate::sandbox::write_private(path, (report.to_json() + "\n").as_bytes()).map_err(
                |source| Error::Write {
                    path: path.clone(),
                    what: "the report",
                    source,
                },
            )?;
        }
        if let Some(path) = &self.junit {
            // Private like the JSON report: its failure messages name the run's resources.
            crate::sandbox::write_private(path, to_junit_xml(report).as_bytes()).map_err(
                |source| Error::Write {
                    path: path.clone(),
                    what: "the JUnit report",
                    source,
                },
            )?;
        }
        if let Some(path) = &self.metrics_file {
            write_metrics_file(report, finished, path)?;
        }
        let mut context = SummaryContext::default();
        if let Some(history) = &self.history {
            context.target = Some(history.target().to_string());
            match history.keep(report, finished) {
                Ok((number, commit)) => {
                    context.history_run = Some(number);
                    context.commit = commit;
                    context.trends = history.trends(report);
                }
                // The run itself is over and reported; a history that missed it is said, not
                // fatal.
                Err(error) => eprint!(
                    "warning: this run is not in the history: {}",
                    error.render().trim_start_matches("error: ")
                ),
            }
        }
        if let Some(push) = &self.push
            && let Err(error) = push.send(report, finished)
        {
            // The run is over; monitoring that missed it is said loudly, not turned into a
            // failed drill.
            eprint!(
                "warning: the run's metrics were not pushed: {}",
                Error::Push(error).render().trim_start_matches("error: ")
            );
        }
        if let Some(path) = &self.html {
            // The user's alone, as the JSON report is: it names the run's resources.
            crate::sandbox::write_private(path, to_html(report, &context).as_bytes()).map_err(
                |source| Error::Write {
                    path: path.clone(),
                    what: "the HTML report",
                    source,
                },
            )?;
        }
        let summary = self.summary.is_some() || std::env::var_os("GITHUB_STEP_SUMMARY").is_some();
        if summary {
            write_summary(
                &to_markdown_summary(report, &context),
                self.summary.as_deref(),
            )?;
        }
        Ok(())
    }
}

/// The summary to `--summary PATH`, and appended to `$GITHUB_STEP_SUMMARY` (a job's page shows
/// what every step appended there).
fn write_summary(markdown: &str, path: Option<&Path>) -> Result<(), Error> {
    // `--summary`'s file is private like the reports; $GITHUB_STEP_SUMMARY is the runner's own
    // file, appended to as it is.
    if let Some(path) = path {
        crate::sandbox::write_private(path, markdown.as_bytes()).map_err(|source| {
            Error::Write {
                path: path.to_path_buf(),
                what: "the summary",
                source,
            }
        })?;
    }
    if let Some(step_summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        use std::io::Write as _;
        let path = std::path::PathBuf::from(step_summary);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(markdown.as_bytes()))
            .map_err(|source| Error::Write {
                path,
                what: "the summary ($GITHUB_STEP_SUMMARY)",
                source,
            })?;
    }
    Ok(())
}
