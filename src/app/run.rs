//! `runbook run`: a runbook with live output, cleanups, snapshots and reports.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use super::{AppResult, preflight, runtime, signals, target};
use crate::cli::{Progress, RunArgs, RunConfig};
use crate::error::{Error, Exit};
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
        },
        target.clock.clone(),
        sink(config.progress),
        Interrupt::new(),
        runtime.handle().clone(),
    );

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
    }
    Ok(Exit::from(&outcome.report))
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
