//! Ctrl-C, SIGTERM and SIGHUP: the first stops the script and lets its cleanups run. When
//! those cannot start within [`CLEANUP_START_GRACE`] (the script is deep in one long call), or a
//! second signal comes, the run is undone from its journal instead, as `runbook recover` would,
//! and the process exits 3 saying which way it went.

use std::sync::Arc;
use std::time::Duration;

use crate::error::Exit;
use crate::report::{Report, left_behind_text};
use crate::script::{Host, SIGHUP, SIGINT, SIGTERM};

use crate::target::TargetClients;

/// How long the script's own cleanups may take to start after the first signal before the run
/// is undone from its journal: a CI runner's grace period after SIGTERM is often 10 s.
pub(crate) const CLEANUP_START_GRACE: Duration = Duration::from_secs(3);

/// What a run that must stop without its script undoes through: the target's clients. None
/// for the embedded twin, which goes with the process.
pub(crate) type Undoer = Option<TargetClients>;

/// The signals that stop a run: Ctrl-C, a CI job's cancel (SIGTERM), a closed terminal (SIGHUP).
pub(crate) struct StopSignals {
    streams: Vec<(i32, tokio::signal::unix::Signal)>,
}

impl StopSignals {
    /// The next one to arrive, by number.
    pub(crate) async fn recv(&mut self) -> i32 {
        let waits = self.streams.iter_mut().map(|(number, stream)| {
            Box::pin(async move {
                stream.recv().await;
                *number
            })
        });
        futures::future::select_all(waits).await.0
    }
}

/// Installs the handlers now, before the script starts: a signal that came before a spawned
/// listener first ran would otherwise kill the process without its cleanups.
pub(crate) fn interrupts(runtime: &tokio::runtime::Runtime) -> Option<StopSignals> {
    use tokio::signal::unix::{SignalKind, signal};
    let _entered = runtime.enter();
    let streams: Vec<(i32, tokio::signal::unix::Signal)> = [
        (SIGINT, SignalKind::interrupt()),
        (SIGTERM, SignalKind::terminate()),
        (SIGHUP, SignalKind::hangup()),
    ]
    .into_iter()
    .filter_map(|(number, kind)| signal(kind).ok().map(|s| (number, s)))
    .collect();
    (!streams.is_empty()).then_some(StopSignals { streams })
}

/// Listens for stop signals for the rest of the run. `on_abort` gets the report as it stands
/// before the process exits without the script's cleanups (to write what can be written).
pub(crate) fn watch(
    runtime: &tokio::runtime::Runtime,
    host: Arc<Host>,
    undoer: Undoer,
    on_abort: impl Fn(&Report) + Send + Sync + 'static,
) {
    let Some(mut signals) = interrupts(runtime) else {
        return;
    };
    let on_abort = Arc::new(on_abort);
    let undoer = Arc::new(undoer);
    runtime.spawn(async move {
        loop {
            let number = signals.recv().await;
            if host.interrupt.raise_signal(number) == 1 {
                let what = match number {
                    SIGTERM => "terminated (SIGTERM)",
                    SIGHUP => "hung up (SIGHUP)",
                    _ => "interrupted (Ctrl-C)",
                };
                eprintln!(
                    "\n{what}: stopping the runbook; cleanups will run (a second signal undoes the run from its journal instead)"
                );
                let (host, undoer, on_abort) = (host.clone(), undoer.clone(), on_abort.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(CLEANUP_START_GRACE).await;
                    if !host.is_cleaning_up() && host.interrupt.count() == 1 {
                        let why = format!(
                            "the runbook's cleanups did not start within {} s of the signal (the script is inside one long call)",
                            CLEANUP_START_GRACE.as_secs()
                        );
                        // Boxed: the undo's futures are too deep to lay out inline in this task's.
                        Box::pin(abort(&host, &undoer, &why, on_abort.as_ref())).await;
                    }
                });
            } else {
                let why = "a second signal came before the cleanups finished";
                Box::pin(abort(&host, &undoer, why, on_abort.as_ref())).await;
            }
        }
    });
}

/// Ends the run without the script: no more mutations go out, what the journal says the run
/// changed is put back through `undoer` (as `runbook recover` does), the report is written and
/// the process exits 3, saying which way it went.
async fn abort(
    host: &Host,
    undoer: &Undoer,
    why: &str,
    on_abort: &(dyn Fn(&Report) + Send + Sync),
) {
    host.close_mutations("the run is being undone from its journal");
    eprintln!("\naborted: {why}");
    let undone = match (undoer, host.journal()) {
        (Some(clients), Some(journal)) => Some(Box::pin(undo_from_journal(clients, journal)).await),
        _ => None,
    };
    let report = crate::script::report(host, None);
    if let Some(Err(left)) = &undone {
        eprintln!("{left}");
    }
    // Unless the journal put everything back, the report says what may be left.
    if !matches!(undone, Some(Ok(())))
        && let Some(text) = left_behind_text(&report)
    {
        eprint!("{text}");
    }
    on_abort(&report);
    std::process::exit(Exit::CleanupFailed.code());
}

/// Puts back what the run's journal says it changed; Err says what is left and how to finish.
async fn undo_from_journal(
    clients: &TargetClients,
    journal: &crate::journal::Journal,
) -> Result<(), String> {
    let records = journal.records().map_err(|e| {
        format!("the journal could not be read ({e}): `runbook recover` with the same target puts back what the run changed")
    })?;
    let plan = crate::journal::undo_plan(&records);
    for action in &plan.not_undoable {
        eprintln!("[not undone] {action} (nothing undoes it)");
    }
    if plan.steps.is_empty() {
        eprintln!("[result] undone from the journal: nothing to undo");
        return Ok(());
    }
    eprintln!("undoing the run from its journal, as `runbook recover` would:");
    let failed =
        super::journal_undo::undo_all(clients, &plan.steps, |line| eprintln!("{line}")).await;
    if failed > 0 {
        return Err(format!(
            "[result] {failed} of {} steps failed: `runbook recover` with the same target tries them again",
            plan.steps.len()
        ));
    }
    super::journal_undo::mark_recovered(journal);
    eprintln!(
        "[result] undone from the journal: {} steps",
        plan.steps.len()
    );
    Ok(())
}

/// Once the run is being ended without its script (a second signal, or cleanups that could not
/// start), that path owns the ending: it undoes from the journal, prints what is left and exits
/// the process. A run that ends meanwhile waits for that instead of printing its own ending
/// over it (the two used to interleave).
pub(crate) fn yield_to_abort(host: &Host) {
    if host.interrupt.count() >= 2 || host.mutations_closed() {
        loop {
            std::thread::park();
        }
    }
}

/// The exit code of a run that ended: 3 when a cleanup did not finish, else the signal's
/// (130, 143, 129) when one stopped it, else the report's.
pub(crate) fn exit_code(host: &Host, report: &Report) -> Exit {
    let exit = Exit::from(report);
    if exit != Exit::Interrupted {
        return exit;
    }
    match host.interrupt.first_signal() {
        Some(SIGTERM) => Exit::Terminated,
        Some(SIGHUP) => Exit::HungUp,
        _ => Exit::Interrupted,
    }
}
