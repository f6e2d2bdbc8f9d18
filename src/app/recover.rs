//! `runbook recover`: puts back, from a killed run's journal, what its pending cleanups were
//! there to undo. Each step makes a resource so (it reads first, and "already so" or "gone"
//! is fine), so a second recover finds nothing to do; a run whose process lives is refused.

use std::path::PathBuf;
use std::sync::Arc;

use super::stdout::out;
use super::target_lock::{Beside, RECOVER_OF, Taker, TargetLocks};
use super::{AppResult, journal_undo, runtime, shared_store};
use crate::cli::RecoverArgs;
use crate::error::{Error, Exit};
use crate::journal::{self, Journal, JournalAt, Record, RunInfo, UndoPlan};
use crate::store::SharedStore;
use crate::target::TargetClients;

/// Where the runs are read from: one machine's state folder, or the shared store.
struct Runs {
    state_dir: PathBuf,
    store: Option<Arc<SharedStore>>,
}

impl Runs {
    fn all(&self) -> Result<Vec<RunInfo>, Error> {
        match &self.store {
            Some(store) => shared_store::runs(store, None),
            None => Ok(journal::list_runs(&self.state_dir)),
        }
    }

    /// Where they are, in words.
    fn place(&self) -> String {
        match &self.store {
            Some(store) => format!("in the shared store {}", store.shown()),
            None => format!("under {}", self.state_dir.display()),
        }
    }

    fn records(&self, run: &RunInfo) -> Result<Vec<Record>, Error> {
        match (&run.at, &self.store) {
            (JournalAt::Store { .. }, Some(store)) => shared_store::records(store, &run.id),
            (JournalAt::File(path), _) => {
                journal::read_journal(path).map_err(|e| Error::Usage(e.to_string()))
            }
            (JournalAt::Store { .. }, None) => Ok(Vec::new()),
        }
    }

    fn mark_recovered(&self, run: &RunInfo) {
        match (&run.at, &self.store) {
            (JournalAt::Store { .. }, Some(store)) => shared_store::mark_recovered(store, &run.id),
            (JournalAt::File(path), _) => match Journal::append_to(path) {
                Ok(journal) => journal_undo::mark_recovered(&journal),
                Err(error) => journal_undo::warn_unmarked(Err(error)),
            },
            (JournalAt::Store { .. }, None) => {}
        }
    }
}

pub(crate) fn execute(args: &RecoverArgs) -> AppResult {
    let runs = Runs {
        state_dir: journal::state_dir(args.journal.state_dir.as_deref()),
        store: shared_store::open(&args.journal)?,
    };
    if args.list {
        return list(&runs);
    }
    let runtime = runtime::build()?;
    let target = crate::target::connect(&runtime, &args.target, None)?;
    let Some(clients) = target.outside().cloned() else {
        return Err(Error::Usage(
            "recover acts on the target a run used: give its --kubeconfig (and --aws-endpoint, --profile, --region); \
             a run on the embedded lab twin took its twin, and what it changed, with it"
                .into(),
        ));
    };
    let identity = runtime.block_on(crate::target::identify(
        &clients,
        target.cluster.as_deref(),
        target.eks_arn.as_deref(),
    ))?;
    let names = TargetNames {
        key: identity.key(),
        spelt: target.key.clone(),
    };
    let Some(run) = chosen_run(args, &runs, &names)? else {
        out!(
            "nothing to recover: no unfinished run against {}",
            identity.describe()
        );
        return Ok(Exit::Passed);
    };
    may_recover(&run, &names)?;
    let beside = match &runs.store {
        Some(store) => Beside::Store(store),
        None => Beside::Folder(&runs.state_dir),
    };
    let _locks = TargetLocks::take(
        &runtime,
        &clients,
        &identity,
        &beside,
        &Taker {
            run_id: &format!("{RECOVER_OF}{}", run.id),
            runbook: &run.runbook,
        },
        // A run killed a moment ago still holds the target's Lease until it expires: recover
        // waits that out rather than refuse.
        super::run::lock_patience(&args.journal)?.max(
            crate::lock::LeaseSettings::default().duration + std::time::Duration::from_secs(2),
        ),
    )?;
    let records = runs.records(&run)?;
    let plan = journal::undo_plan(&records);
    out!(
        "[recover] run {} of {} against {}",
        run.id,
        run.runbook,
        run.target
    );
    if plan.already_recovered {
        out!("[result] already recovered: nothing to do");
        return Ok(Exit::Passed);
    }
    carry_out(&runtime, &clients, &runs, &run, &plan, args.dry_run)
}

/// What a journal may name the target by: its identity's key, or (a journal written before
/// runs named targets by what they are) the addresses as they were spelt.
struct TargetNames {
    key: String,
    spelt: String,
}

impl TargetNames {
    fn names(&self, target: &str) -> bool {
        target == self.key || target == self.spelt
    }
}

/// The run `--run-id` names, or the newest unfinished one against this target (None when
/// there is none).
fn chosen_run(
    args: &RecoverArgs,
    runs: &Runs,
    names: &TargetNames,
) -> Result<Option<RunInfo>, Error> {
    let place = runs.place();
    let runs = runs.all()?;
    match &args.run_id {
        Some(id) => runs
            .into_iter()
            .find(|r| &r.id == id)
            .map(Some)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "no run {id} {place}; `runbook recover --list` shows the unfinished ones"
                ))
            }),
        None => Ok(runs
            .into_iter()
            .rev()
            .find(|r| r.unfinished() && names.names(&r.target))),
    }
}

/// Refuses a run against another target, and one whose process still lives.
fn may_recover(run: &RunInfo, names: &TargetNames) -> Result<(), Error> {
    if !names.names(&run.target) {
        return Err(Error::Usage(format!(
            "run {} acted on {}, not on {}: give the --kubeconfig (or --cluster) and --aws-endpoint of the target it ran against",
            run.id, run.target, names.key
        )));
    }
    if run.alive() {
        return Err(Error::Usage(format!(
            "run {} (pid {}) is still running: stop it first (Ctrl-C or SIGTERM runs its cleanups); recover is for a run that was killed",
            run.id, run.pid
        )));
    }
    Ok(())
}

/// The plan's steps done against the target (or, `--dry-run`, only said), and the result.
fn carry_out(
    runtime: &tokio::runtime::Runtime,
    clients: &TargetClients,
    runs: &Runs,
    run: &RunInfo,
    plan: &UndoPlan,
    dry_run: bool,
) -> AppResult {
    for action in &plan.not_undoable {
        out!("[not undone] {action} (nothing undoes it)");
    }
    if plan.steps.is_empty() {
        out!("[result] nothing to undo");
    }
    if dry_run {
        for step in &plan.steps {
            out!("[would undo] {}", step.describe());
        }
        out!("[result] dry run: {} steps, nothing done", plan.steps.len());
        return Ok(Exit::Passed);
    }
    let failed = runtime.block_on(journal_undo::undo_all(clients, &plan.steps, |line| {
        out!("{line}")
    }));
    if failed > 0 {
        out!(
            "[result] {failed} of {} steps failed; run recover again",
            plan.steps.len()
        );
        return Ok(Exit::CleanupFailed);
    }
    runs.mark_recovered(run);
    out!("[result] recovered: {} steps", plan.steps.len());
    Ok(Exit::Passed)
}

fn list(runs: &Runs) -> AppResult {
    let unfinished: Vec<RunInfo> = runs
        .all()?
        .into_iter()
        .filter(|run| run.unfinished() && !run.on_embedded_twin())
        .collect();
    if unfinished.is_empty() {
        out!("no unfinished runs {}", runs.place());
    }
    for run in unfinished {
        let machine = match &run.at {
            JournalAt::Store { host, .. } => format!("  on {host}"),
            JournalAt::File(_) => String::new(),
        };
        out!(
            "{}  {}  {}{machine}  started {}  {}, {} mutations",
            run.id,
            run.runbook,
            run.target,
            crate::clock::dates::rfc3339_utc(i64::try_from(run.started_at).unwrap_or(i64::MAX)),
            run.state(),
            run.mutations.unwrap_or_default()
        );
        for step in &run.to_undo {
            out!("    would undo: {step}");
        }
    }
    Ok(Exit::Passed)
}
