//! `runbook history`: the runs kept in the history, newest first, as a table or JSON; and its
//! subcommands: `check` (fails when a drill has not passed recently enough), `diff` (what
//! changed between two runs), `trend` (a metric run by run), `show` (a kept run's report or
//! page) and `gpu` (a GPU node's verdicts run by run).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::AppResult;
use super::run_history::history_dir;
use super::stdout::out;
use crate::cli::{
    HistoryCheckArgs, HistoryCommandArgs, HistoryDiffArgs, HistoryGpuArgs, HistoryListArgs,
    HistoryShowArgs, HistorySubcommand, HistoryTrendArgs,
};
use crate::clock::dates::{parse_rfc3339_utc, rfc3339_utc};
use crate::error::{Error, Exit};
use crate::history::{self, History, RunRow};
use crate::journal;
use crate::store::SharedStore;

/// Where the history is read from: a local folder's file, or the shared store `--state` names.
enum Kept {
    Folder(PathBuf),
    Store(Arc<SharedStore>),
}

impl Kept {
    /// Whether it holds a history yet (the shared store's is made with its schema).
    fn exists(&self) -> bool {
        match self {
            Kept::Folder(dir) => dir.join(history::FILE_NAME).exists(),
            Kept::Store(_) => true,
        }
    }

    fn open(&self) -> Result<History, Error> {
        match self {
            Kept::Folder(dir) => History::open(dir).map_err(Error::History),
            Kept::Store(store) => Ok(History::shared(store.clone())),
        }
    }

    fn place(&self) -> String {
        match self {
            Kept::Folder(dir) => dir.display().to_string(),
            Kept::Store(store) => format!("the shared store {}", store.shown()),
        }
    }

    /// A runbook as this history keys it.
    fn runbook_key(&self, runbook: &Path) -> String {
        match self {
            Kept::Folder(_) => history::absolute(runbook),
            Kept::Store(_) => history::portable(runbook),
        }
    }
}

pub(crate) fn execute(args: &HistoryCommandArgs) -> AppResult {
    let kept = match super::shared_store::open(&args.journal)? {
        Some(store) => Kept::Store(store),
        None => {
            let state_dir = journal::state_dir(args.journal.state_dir.as_deref());
            let Some(dir) = history_dir(&args.history, &state_dir) else {
                return Err(Error::Usage(
                    "--history off keeps no history to read; name its folder".into(),
                ));
            };
            Kept::Folder(dir)
        }
    };
    match &args.command {
        None => list(&args.list, &kept),
        Some(HistorySubcommand::Check(check_args)) => check(check_args, &kept),
        Some(HistorySubcommand::Diff(diff_args)) => diff(diff_args, &kept),
        Some(HistorySubcommand::Trend(trend_args)) => trend(trend_args, &kept),
        Some(HistorySubcommand::Show(show_args)) => show(show_args, &kept),
        Some(HistorySubcommand::Gpu(gpu_args)) => gpu(gpu_args, &kept),
    }
}

/// A GPU node's record: its verdicts run by run, newest first.
fn gpu(args: &HistoryGpuArgs, kept: &Kept) -> AppResult {
    let history = existing(kept)?;
    let since = super::run_history::unix_now() - args.days as f64 * 86_400.0;
    let record = history
        .gpu_record(&args.node, since)
        .map_err(Error::History)?;
    if args.json {
        let rows: Vec<serde_json::Value> = record
            .iter()
            .map(|p| {
                serde_json::json!({
                    "run": p.run, "finished": rfc3339_utc(p.finished as i64), "node": p.node,
                    "machine": p.machine, "verdict": p.verdict, "health": p.health,
                })
            })
            .collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
    } else {
        out!(
            "{}",
            history::gpu_record_table(&args.node, &record).trim_end()
        );
    }
    Ok(Exit::Passed)
}

/// A kept run: its report as JSON, or its page. The page's metric charts are each metric's
/// values (same step and labels) in the runs of that runbook up to this one.
fn show(args: &HistoryShowArgs, kept: &Kept) -> AppResult {
    const TREND_RUNS: usize = 20;
    let history = existing(kept)?;
    let missing = || {
        Error::Usage(format!(
            "no run {} in {}; `runbook history` lists the runs kept",
            args.run,
            history.place()
        ))
    };
    let json = history
        .report(args.run)
        .map_err(Error::History)?
        .ok_or_else(missing)?;
    let Some(path) = &args.html else {
        out!(
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
        return Ok(Exit::Passed);
    };
    let clock = crate::report::clock_name(json["clock"].as_str().unwrap_or_default());
    let mut report: crate::report::Report = serde_json::from_value(json).map_err(|e| {
        Error::Usage(format!(
            "run {} in {} has a report this build cannot read ({e}); `runbook history show {}` prints it as JSON",
            args.run,
            history.place(),
            args.run
        ))
    })?;
    report.clock = clock;
    let row = history
        .run(args.run)
        .map_err(Error::History)?
        .ok_or_else(missing)?;
    let mut trends = Vec::new();
    for metric in &report.metrics {
        let earlier = history
            .metric_history(Some(&row.runbook_path), &metric.name, usize::MAX)
            .map_err(Error::History)?;
        let mut values: Vec<f64> = earlier
            .into_iter()
            .filter(|(run, _, m)| {
                *run <= args.run && m.step == metric.step && m.labels == metric.labels
            })
            .map(|(_, _, m)| m.value)
            .collect();
        values = values.split_off(values.len().saturating_sub(TREND_RUNS));
        trends.push(values);
    }
    let context = crate::report::SummaryContext {
        history_run: Some(args.run),
        trends,
        target: Some(row.target.clone()),
        commit: row.commit.clone(),
    };
    crate::sandbox::write_private(path, crate::report::to_html(&report, &context).as_bytes())
        .map_err(|source| Error::Write {
            path: path.clone(),
            what: "the HTML report",
            source,
        })?;
    Ok(Exit::Passed)
}

fn list(args: &HistoryListArgs, kept: &Kept) -> AppResult {
    if !kept.exists() {
        if args.json {
            out!("[]");
        } else {
            out!(
                "no runs kept in {} yet (`runbook run` keeps each run there)",
                kept.place()
            );
        }
        return Ok(Exit::Passed);
    }
    let history = kept.open()?;
    let runbook = args.runbook.as_deref().map(|r| kept.runbook_key(r));
    let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
    let runs = history
        .recent(runbook.as_deref(), limit)
        .map_err(Error::History)?;
    // Flaky within the runs shown.
    let flaky = history
        .flaky_steps(runbook.as_deref(), limit)
        .map_err(Error::History)?;
    if args.json {
        let json: Vec<serde_json::Value> = runs
            .iter()
            .map(|run| {
                let mut json = as_json(run);
                let steps: Vec<&str> = flaky
                    .iter()
                    .filter(|f| f.runs.contains(&run.number))
                    .map(|f| f.step.as_str())
                    .collect();
                json["flaky_steps"] = serde_json::json!(steps);
                json
            })
            .collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
    } else if runs.is_empty() {
        match &args.runbook {
            Some(file) => out!("no runs of {} in {}", file.display(), history.place()),
            None => out!("no runs in {}", history.place()),
        }
    } else {
        super::stdout::write(&format!(
            "{}{}",
            history::runs_table(&runs),
            history::flaky_lines(&flaky)
        ));
    }
    Ok(Exit::Passed)
}

fn as_json(run: &RunRow) -> serde_json::Value {
    serde_json::json!({
        "run": run.number,
        "run_id": run.run_id,
        "runbook": run.runbook,
        "runbook_path": run.runbook_path,
        "target": run.target,
        "parameters": serde_json::from_str::<serde_json::Value>(&run.parameters).unwrap_or_default(),
        "status": run.status,
        "started": run.started,
        "finished": run.finished,
        "wall_ms": run.wall_ms,
        "virtual_ms": run.virtual_ms,
        "failed_step": run.failed_step,
        "error": run.error,
        "commit": run.commit,
        "metrics": run.metrics,
    })
}

/// Each runbook's last passing run against `--max-age`: a line each, exit 1 if any is stale
/// (or has never passed, or the history holds no run of it at all).
fn check(args: &HistoryCheckArgs, kept: &Kept) -> AppResult {
    let max_age = crate::clock::parse_duration(&args.max_age)
        .map_err(|e| Error::Usage(format!("--max-age {}: {e}", args.max_age)))?;
    let now = match &args.now {
        None => super::run_history::unix_now(),
        Some(text) => parse_rfc3339_utc(text)
            .map(|t| t as f64)
            .or_else(|| text.parse::<f64>().ok().filter(|t| t.is_finite()))
            .ok_or_else(|| {
                Error::Usage(format!(
                    "--now {text}: expected an RFC 3339 UTC time (2026-12-03T06:00:00Z) or Unix seconds"
                ))
            })?,
    };
    let runbook = args.runbook.as_deref().map(|r| kept.runbook_key(r));
    let last = if kept.exists() {
        kept.open()?
            .last_passing(runbook.as_deref())
            .map_err(Error::History)?
    } else {
        Vec::new()
    };
    if last.is_empty() {
        let what = args.runbook.as_ref().map_or_else(
            || "no runs".to_string(),
            |f| format!("no runs of {}", f.display()),
        );
        out!(
            "stale: {what} in {} (a drill that never ran has not passed)",
            kept.place()
        );
        return Ok(Exit::Failed);
    }
    let mut stale = false;
    for (runbook, run) in last {
        let Some(run) = run else {
            stale = true;
            out!("stale: {runbook} has never passed");
            continue;
        };
        let age = (now - run.finished).max(0.0);
        let fresh = age <= max_age.as_secs_f64();
        stale |= !fresh;
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a Unix time in seconds fits an i64"
        )]
        let finished = rfc3339_utc(run.finished.floor() as i64);
        out!(
            "{}: {runbook} last passed in run {} at {finished}, {} ago (at most {})",
            if fresh { "fresh" } else { "stale" },
            run.number,
            crate::clock::format_duration(std::time::Duration::from_secs_f64(age)),
            args.max_age,
        );
    }
    Ok(if stale { Exit::Failed } else { Exit::Passed })
}

/// The history in `dir`, which must hold runs already (diff and trend have nothing to say
/// otherwise).
fn existing(kept: &Kept) -> Result<History, Error> {
    if !kept.exists() {
        return Err(Error::Usage(format!(
            "no history in {} yet (`runbook run` keeps each run there; --history names another folder)",
            kept.place()
        )));
    }
    kept.open()
}

fn diff(args: &HistoryDiffArgs, kept: &Kept) -> AppResult {
    let history = existing(kept)?;
    let report = |number: u64| -> Result<serde_json::Value, Error> {
        history
            .report(number)
            .map_err(Error::History)?
            .ok_or_else(|| {
                Error::Usage(format!(
                    "no run {number} in {}; `runbook history` lists the runs kept",
                    history.place()
                ))
            })
    };
    let (a, b) = (report(args.run_a)?, report(args.run_b)?);
    super::stdout::write(&history::diff_text((args.run_a, &a), (args.run_b, &b)));
    Ok(Exit::Passed)
}

fn trend(args: &HistoryTrendArgs, kept: &Kept) -> AppResult {
    use std::io::IsTerminal as _;
    let history = existing(kept)?;
    let runbook = args.runbook.as_deref().map(|r| kept.runbook_key(r));
    let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
    let rows = history
        .metric_history(runbook.as_deref(), &args.metric, limit)
        .map_err(Error::History)?;
    if rows.is_empty() {
        return Err(Error::Usage(format!(
            "no values of metric `{}` in {}; `runbook history --json` shows the metrics each run recorded",
            args.metric,
            history.place()
        )));
    }
    let series = history::series(rows);
    if args.json {
        let json: Vec<serde_json::Value> = series
            .iter()
            .map(|s| {
                serde_json::json!({
                    "runbook": s.runbook, "step": s.step, "labels": s.labels, "unit": s.unit,
                    "points": s.points.iter().map(|(run, value, ok, baseline)| serde_json::json!({
                        "run": run, "value": value, "ok": ok, "baseline": baseline,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
    } else {
        super::stdout::write(&history::trend_text(
            &args.metric,
            &series,
            std::io::stdout().is_terminal(),
        ));
    }
    Ok(Exit::Passed)
}
