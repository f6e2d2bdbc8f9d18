//! Where a finished (or aborted) `runbook run` is written: the report files, the metrics
//! textfile, the history, the Pushgateway and the job summary.

use std::path::{Path, PathBuf};

use super::run_history::{RunHistory, unix_now, write_metrics_file};
use crate::cli::RunConfig;
use crate::clients::pushgateway::Pushgateway;
use crate::error::Error;
use crate::report::{
    Report, SummaryContext, for_pushgateway, to_html, to_junit_xml, to_markdown_summary,
};

/// Where a finished (or aborted) run is written: the report files, the metrics textfile, the
/// history.
#[derive(Clone)]
pub(super) struct Outputs {
    json: Option<PathBuf>,
    junit: Option<PathBuf>,
    metrics_file: Option<PathBuf>,
    summary: Option<PathBuf>,
    html: Option<PathBuf>,
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
    /// The outputs `config` names, the history opened for the run, and the Pushgateway.
    pub(super) fn for_run(
        config: &RunConfig,
        history: Option<RunHistory>,
        pushgateway: Option<Pushgateway>,
        runtime: &tokio::runtime::Runtime,
    ) -> Self {
        Self {
            json: config.report.clone(),
            junit: config.junit.clone(),
            metrics_file: config.metrics_file.clone(),
            summary: config.summary.clone(),
            html: config.html.clone(),
            history,
            push: pushgateway.map(|gateway| Push {
                gateway,
                job: config.pushgateway_job.clone(),
                runtime: runtime.handle().clone(),
            }),
        }
    }

    pub(super) fn write(&self, report: &Report) -> Result<(), Error> {
        let finished = unix_now();
        if let Some(path) = &self.json {
            // The user's alone, as the journal and history are: it names the run's resources.
            write_private(path, (report.to_json() + "\n").as_bytes(), "the report")?;
        }
        if let Some(path) = &self.junit {
            // Private like the JSON report: its failure messages name the run's resources.
            write_private(path, to_junit_xml(report).as_bytes(), "the JUnit report")?;
        }
        if let Some(path) = &self.metrics_file {
            write_metrics_file(report, finished, path)?;
        }
        let context = self.keep_in_history(report, finished);
        self.push_metrics(report, finished);
        if let Some(path) = &self.html {
            // The user's alone, as the JSON report is: it names the run's resources.
            let html = to_html(report, &context);
            write_private(path, html.as_bytes(), "the HTML report")?;
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

    /// The run kept in the history, and what the summaries say of it from there.
    fn keep_in_history(&self, report: &Report, finished: f64) -> SummaryContext {
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
        context
    }

    fn push_metrics(&self, report: &Report, finished: f64) {
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
    }
}

fn write_private(path: &Path, bytes: &[u8], what: &'static str) -> Result<(), Error> {
    crate::sandbox::write_private(path, bytes).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        what,
        source,
    })
}

/// The summary to `--summary PATH`, and appended to `$GITHUB_STEP_SUMMARY` (a job's page shows
/// what every step appended there).
fn write_summary(markdown: &str, path: Option<&Path>) -> Result<(), Error> {
    // `--summary`'s file is private like the reports; $GITHUB_STEP_SUMMARY is the runner's own
    // file, appended to as it is.
    if let Some(path) = path {
        write_private(path, markdown.as_bytes(), "the summary")?;
    }
    if let Some(step_summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        use std::io::Write as _;
        let path = PathBuf::from(step_summary);
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
