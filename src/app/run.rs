//! `runbook run`: a runbook with live output, cleanups, snapshots and reports. `execute` reads
//! as the run's phases: what is checked before the target is touched, the target, the
//! confirmation, the run's records (lock, history, journal), the script host, the script, and
//! what is said and written after it.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::rehearsal::{Rehearsal, rehearse};
use super::run_history::{Kept, RunHistory, history_dir};
use super::run_outputs::Outputs;
use super::target_lock::{Beside, Taker, TargetLocks};
use super::{AppResult, confirm, preflight, runtime, signals};
use crate::cli::{IfHistoryDamaged, JournalArgs, Progress, RunArgs, RunConfig};
use crate::clients::pushgateway::Pushgateway;
use crate::error::{Error, Exit};
use crate::journal::{self, Journal, Record};
use crate::plan::to_summary;
use crate::report::{LiveSink, PlainSink, Report, Sink, left_behind_text};
use crate::script::{self, Host, HostConfig, Interrupt, RunOptions, RunOutcome};
use crate::store::SharedStore;
use crate::target::{Target, TargetIdentity};

pub(crate) fn execute(args: RunArgs) -> AppResult {
    let config = RunConfig::from_args(args)?;
    let Inputs {
        runbook,
        text,
        pushgateway,
    } = Inputs::read(&config)?;
    let runtime = runtime::build()?;
    let target = crate::target::connect(&runtime, &config.target, config.clock)?;
    confirm_changes(&runtime, &config, &target, &runbook, &text)?;
    let records = RunRecords::open(&runtime, &config, &target, &runbook)?;
    let host = build_host(&config, &target, &records, &runtime, &runbook);
    if let Some(locks) = &records.locks {
        locks.close_mutations_when_lost(&host);
    }
    let outputs = Outputs::for_run(&config, records.history.clone(), pushgateway, &runtime);
    write_outputs_on_abort(&runtime, &host, &target, &outputs, &records);
    let mut outcome = run_script(&runtime, &host, &target, runbook, text)?;
    say_how_it_went(&config, &host, &target, &mut outcome);
    outputs.write(&outcome.report)?;
    say_left_behind(&outcome.report, &records, &target);
    records.end(&outcome.report);
    Ok(exit_code(&host, &outcome))
}

/// What is read and checked before the target is touched: the outputs can be written, the
/// runbook read, the Pushgateway URL can work.
struct Inputs {
    /// The runbook as named on the command line.
    runbook: String,
    text: String,
    pushgateway: Option<Pushgateway>,
}

impl Inputs {
    fn read(config: &RunConfig) -> Result<Self, Error> {
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
        Ok(Self {
            runbook: config.file.display().to_string(),
            text,
            pushgateway,
        })
    }
}

/// A run that may change a real target goes on only when someone says so; the question shows
/// a rehearsal's summary first.
fn confirm_changes(
    runtime: &tokio::runtime::Runtime,
    config: &RunConfig,
    target: &Target,
    runbook: &str,
    text: &str,
) -> Result<(), Error> {
    let Some(real) = real_target(config, target) else {
        return Ok(());
    };
    let rehearsal = || {
        let plan = rehearse(
            runtime,
            Rehearsal {
                file: &config.file,
                text: text.to_string(),
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
        runbook,
        &real,
        config.yes,
        config.guards.read_only,
        rehearsal,
    )
}

/// The real target in words: a cluster outside this process, or the embedded twin with a real
/// AWS endpoint; None when everything the run changes is this process's own.
fn real_target(config: &RunConfig, target: &Target) -> Option<String> {
    match (&target.outside(), &config.target.aws_endpoint) {
        (Some(_), _) => Some(target.description.clone()),
        (None, Some(endpoint)) => Some(format!("AWS at {endpoint}")),
        (None, None) => None,
    }
}

/// What the run keeps under the state directory and in the target: the target's locks, held
/// for the run, the history it is judged against and kept in, and its journal.
struct RunRecords {
    state_dir: PathBuf,
    /// The shared store `--state` names, for a run against a target outside this process.
    store: Option<Arc<SharedStore>>,
    run_id: String,
    locks: Option<TargetLocks>,
    history: Option<RunHistory>,
    journal: Option<Arc<Journal>>,
}

impl RunRecords {
    fn open(
        runtime: &tokio::runtime::Runtime,
        config: &RunConfig,
        target: &Target,
        runbook: &str,
    ) -> Result<Self, Error> {
        let state_dir = journal::state_dir(config.journal.state_dir.as_deref());
        let run_id = new_run_id();
        // The embedded twin's runs have nothing to share: it lives and dies with this process.
        let store = match target.outside() {
            Some(_) => super::shared_store::open(&config.journal)?,
            None => None,
        };
        let identity = identify(runtime, config, target, store.is_some())?;
        let locks = match (target.outside(), &identity) {
            (Some(clients), Some(identity)) if !config.guards.read_only => {
                let beside = match &store {
                    Some(store) => Beside::Store(store),
                    None => Beside::Folder(&state_dir),
                };
                let taker = Taker {
                    run_id: &run_id,
                    runbook,
                };
                let wait = lock_patience(&config.journal)?;
                Some(TargetLocks::take(
                    runtime, clients, identity, &beside, &taker, wait,
                )?)
            }
            _ => None,
        };
        let key = identity
            .as_ref()
            .map_or_else(|| target.key.clone(), TargetIdentity::key);
        let history = open_history(config, target, runbook, &state_dir, store.as_ref(), &key)?;
        note_unfinished_run(&state_dir, store.as_deref(), &key);
        let journal = if super::test_hooks::journal_off() {
            None
        } else {
            let at = JournalPlace {
                state_dir: &state_dir,
                store: store.as_ref(),
                durable: target.outside().is_some(),
            };
            Some(start_journal(&at, &run_id, runbook, &key)?)
        };
        Ok(Self {
            state_dir,
            store,
            run_id,
            locks,
            history,
            journal,
        })
    }

    /// The journal's end record, then the locks given back. A run whose cleanups did not all
    /// finish stays unfinished: recover can still act on it.
    fn end(self, report: &Report) {
        if let Some(locks) = self.locks {
            locks.release();
        }
        if !report.left_behind().is_empty() {
            return;
        }
        let status = serde_json::to_value(report.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        if let Some(journal) = &self.journal {
            let _ = journal.append(&Record::End {
                status: status.clone(),
            });
            // Best effort: an old journal left behind costs disk, not safety.
            match &self.store {
                Some(store) if journal.store_lost().is_none() => {
                    let _ = store.prune_ended(journal::KEPT_ENDED_RUNS);
                }
                Some(store) => {
                    super::shared_store::mark_ended_after_loss(store, &self.run_id, &status);
                }
                None => {
                    journal::prune_ended(&self.state_dir, journal::KEPT_ENDED_RUNS);
                }
            }
        }
    }
}

/// What the target is, read when the run holds it or shares a store with other machines. The
/// embedded twin is this process's own; any other target is held for the run unless the run
/// only reads (a monitoring verify runs beside a drill, and beside others).
fn identify(
    runtime: &tokio::runtime::Runtime,
    config: &RunConfig,
    target: &Target,
    shared: bool,
) -> Result<Option<TargetIdentity>, Error> {
    let Some(clients) = target.outside() else {
        return Ok(None);
    };
    if config.guards.read_only && !shared {
        return Ok(None);
    }
    let identity = runtime.block_on(crate::target::identify(
        clients,
        target.cluster.as_deref(),
        target.eks_arn.as_deref(),
    ))?;
    if config.target.verbose {
        eprintln!("target: {}", identity.describe());
    }
    Ok(Some(identity))
}

/// The run's history, opened and checked before anything runs: a history that cannot be
/// written, or is damaged, is found here, not after the drill. A shared one names the target
/// by what it is (`key`), as every machine names it.
fn open_history(
    config: &RunConfig,
    target: &Target,
    runbook: &str,
    state_dir: &Path,
    store: Option<&Arc<SharedStore>>,
    key: &str,
) -> Result<Option<RunHistory>, Error> {
    history_dir(&config.history, state_dir)
        .map(|dir| match store {
            Some(store) => RunHistory::open(Kept::Store(store), &config.file, runbook, key),
            None => RunHistory::open(
                Kept::Folder(&dir),
                &config.file,
                runbook,
                &target.history_key,
            ),
        })
        .transpose()
        .or_else(|error| damaged_history(error, config.history.if_damaged))
}

/// An earlier run against this target that was killed mid-cleanup is pointed out: recover
/// puts back what it changed.
fn note_unfinished_run(state_dir: &Path, store: Option<&SharedStore>, key: &str) {
    let earlier = match store {
        Some(store) => super::shared_store::latest_unfinished(store, key),
        None => journal::latest_unfinished(state_dir, key),
    };
    if let Some(earlier) = earlier {
        eprintln!(
            "note: run {} of {} against this target was killed before its cleanups finished; \
             `runbook recover {}` with target flags for the same cluster (however spelt) puts back what it changed",
            earlier.id, earlier.runbook, earlier.id
        );
    }
}

/// The script host, given the run's journal, guards, history and test hooks.
fn build_host(
    config: &RunConfig,
    target: &Target,
    records: &RunRecords,
    runtime: &tokio::runtime::Runtime,
    runbook: &str,
) -> Arc<Host> {
    let mut host = Host::builder(
        HostConfig {
            runbook: runbook.to_string(),
            base_dir: crate::cli::runbook_folder(&config.file),
            sets: config.sets.clone(),
            set_files: config.set_files.clone(),
            read: config.read.clone(),
            snapshot_dir: config.snapshot_dir.clone(),
            update_snapshots: config.update_snapshots,
            run_id: Some(records.run_id.clone()),
        },
        target.clock.clone(),
        sink(config.progress),
        Interrupt::new(),
        runtime.handle().clone(),
    )
    .journal(records.journal.clone())
    .guards(
        config
            .guards
            .clone()
            .on_embedded_twin(target.embedded_worlds()),
    )
    .test_hooks(super::test_hooks::from_env());
    if let Some(history) = &records.history {
        host = host.history(Arc::new(history.clone()), Arc::new(history.clone()));
    }
    host.build()
}

/// Stop signals stop the script and run its cleanups (or undo from the journal); a run that
/// aborts still writes its outputs and gives the target's Lease back.
fn write_outputs_on_abort(
    runtime: &tokio::runtime::Runtime,
    host: &Arc<Host>,
    target: &Target,
    outputs: &Outputs,
    records: &RunRecords,
) {
    let on_abort = outputs.clone();
    let give_back = records.locks.as_ref().map(TargetLocks::giver);
    signals::watch(
        runtime,
        host.clone(),
        target.outside().cloned(),
        move |report| {
            // Best effort on abort: the process is about to exit either way.
            let _ = on_abort.write(report);
            if let Some(give_back) = &give_back {
                give_back();
            }
        },
    );
}

/// The runbook run to its end on a blocking thread; an abort under way has the last word.
fn run_script(
    runtime: &tokio::runtime::Runtime,
    host: &Arc<Host>,
    target: &Target,
    runbook: String,
    text: String,
) -> Result<RunOutcome, Error> {
    let script_host = host.clone();
    let extensions = target.extensions.clone();
    let outcome = runtime::run_script(runtime, move || {
        script::run_file(
            &script_host,
            RunOptions {
                source_name: runbook,
                text,
                extensions,
            },
        )
    })?;
    signals::yield_to_abort(host);
    Ok(outcome)
}

/// The connections the run opened, into its report (and said with `--verbose`), and why it
/// stopped, when it stopped on an error.
fn say_how_it_went(config: &RunConfig, host: &Host, target: &Target, outcome: &mut RunOutcome) {
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
}

/// What the run's cleanups left behind, and how to put it back.
fn say_left_behind(report: &Report, records: &RunRecords, target: &Target) {
    if let Some(text) = left_behind_text(report) {
        eprint!("{text}");
        if records.journal.is_some() && target.outside().is_some() {
            eprintln!(
                "  or put back what the run changed from its journal: runbook recover {} (with target flags for the same cluster, however spelt)",
                records.run_id
            );
        }
    }
}

/// A bug in runbook itself ends the run as a failed cleanup would; otherwise the report and
/// the signals decide.
fn exit_code(host: &Host, outcome: &RunOutcome) -> Exit {
    if outcome
        .diagnostic
        .as_ref()
        .is_some_and(|d| d.kind == script::FaultKind::Internal)
    {
        return Exit::CleanupFailed;
    }
    signals::exit_code(host, &outcome.report)
}

/// `r<seconds since the epoch>-<pid>`: sortable, and apart across processes.
fn new_run_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("r{secs}-{}", std::process::id())
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

/// Where a run's journal is kept: the shared store (going on in the state folder if the store
/// is lost), or the state folder; `durable`: synced to disk record by record.
struct JournalPlace<'a> {
    state_dir: &'a Path,
    store: Option<&'a Arc<SharedStore>>,
    durable: bool,
}

/// The run's journal, with its first record kept.
fn start_journal(
    at: &JournalPlace<'_>,
    run_id: &str,
    runbook: &str,
    key: &str,
) -> Result<Arc<Journal>, Error> {
    let folder = at.state_dir.join("runs").join(run_id);
    let journal = match at.store {
        Some(store) => Journal::shared(store.clone(), run_id, &folder),
        None => Journal::create(&folder, at.durable).map_err(Error::Journal)?,
    };
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
    // A store lost before anything ran fails the run: nothing has been sent yet.
    if let Some(why) = journal.store_lost() {
        return Err(Error::Usage(format!(
            "{why}: the run did not start (nothing was sent)"
        )));
    }
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
