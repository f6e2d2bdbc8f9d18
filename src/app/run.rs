//! `runbook run`: a runbook with live output, cleanups, snapshots and reports.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use super::{AppResult, preflight, runtime, signals, target};
use crate::cli::{JournalArgs, Progress, RunArgs, RunConfig};
use crate::error::Error;
use crate::journal::{self, Journal, Record};
use crate::report::{LiveSink, PlainSink, Report, Sink, left_behind_text, to_junit_xml};
use crate::script::{self, Host, HostConfig, Interrupt, RunOptions};

pub(crate) fn execute(args: RunArgs) -> AppResult {
    let config = RunConfig::from_args(args)?;
    preflight::check_outputs(
        config.report.as_deref(),
        config.junit.as_deref(),
        config.snapshot_root.as_deref(),
    )?;
    let text = std::fs::read_to_string(&config.file).map_err(|source| Error::Read {
        path: config.file.clone(),
        what: "the runbook".into(),
        source,
    })?;
    let runtime = runtime::build()?;
    let target = target::connect(&runtime, &config.target, config.clock)?;
    let runbook = config.file.display().to_string();
    let state_dir = journal::state_dir(config.journal.state_dir.as_deref());
    let run_id = new_run_id();
    // The embedded twin is this process's own; any other target is held for the run.
    let _lock = match &target.clients {
        Some(_) => Some(take_lock(
            &state_dir,
            &config,
            &target.key,
            &run_id,
            &runbook,
        )?),
        None => None,
    };
    if let Some(earlier) = journal::latest_unfinished(&state_dir, &target.key) {
        eprintln!(
            "note: run {} of {} against this target was killed before its cleanups finished; \
             `runbook recover {}` with the same --kubeconfig and --aws-endpoint puts back what it changed",
            earlier.id, earlier.runbook, earlier.id
        );
    }
    // `RUNBOOK_JOURNAL=off` is the benchmarks' baseline (scripts/bench-lab.py): a run that
    // nothing can recover.
    let run_journal = match std::env::var("RUNBOOK_JOURNAL").as_deref() {
        Ok("off") => None,
        _ => Some(start_journal(
            &state_dir,
            &run_id,
            &runbook,
            &target.key,
            target.clients.is_some(),
        )?),
    };
    let host = Host::new(
        HostConfig {
            runbook: runbook.clone(),
            base_dir: config
                .file
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
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
    );

    if let Some(journal) = &run_journal {
        host.attach_journal(journal.clone());
    }
    let (report_path, junit_path) = (config.report.clone(), config.junit.clone());
    signals::watch(&runtime, host.clone(), move |report| {
        // Best effort on abort: the process is about to exit either way.
        let _ = write_reports(report, report_path.as_deref(), junit_path.as_deref());
    });

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
    if let Some(diagnostic) = &outcome.diagnostic {
        eprint!("{}", host.mask(&diagnostic.render(&host.sources)));
    }
    write_reports(
        &outcome.report,
        config.report.as_deref(),
        config.junit.as_deref(),
    )?;
    if let Some(text) = left_behind_text(&outcome.report) {
        eprint!("{text}");
        if run_journal.is_some() && target.clients.is_some() {
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
        }
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
    .map_err(|e| Error::Usage(e.to_string()))
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

fn write_reports(report: &Report, json: Option<&Path>, junit: Option<&Path>) -> Result<(), Error> {
    if let Some(path) = json {
        std::fs::write(path, report.to_json() + "\n").map_err(|source| Error::Write {
            path: path.to_path_buf(),
            what: "the report",
            source,
        })?;
    }
    if let Some(path) = junit {
        std::fs::write(path, to_junit_xml(report)).map_err(|source| Error::Write {
            path: path.to_path_buf(),
            what: "the JUnit report",
            source,
        })?;
    }
    Ok(())
}
