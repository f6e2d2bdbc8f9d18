//! Ctrl-C, SIGTERM and SIGHUP: the first stops the script and lets cleanups run; the second
//! aborts at once.

use std::sync::Arc;

use crate::error::Exit;
use crate::report::{Report, left_behind_text};
use crate::script::{Host, SIGHUP, SIGINT, SIGTERM};

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
/// before the process exits on the second one (to write what can be written).
pub(crate) fn watch(
    runtime: &tokio::runtime::Runtime,
    host: Arc<Host>,
    on_abort: impl Fn(&Report) + Send + 'static,
) {
    let Some(mut signals) = interrupts(runtime) else {
        return;
    };
    runtime.spawn(async move {
        loop {
            let number = signals.recv().await;
            if host.interrupt.raise_signal(number) == 1 {
                let what = match number {
                    SIGTERM => "terminated (SIGTERM)",
                    SIGHUP => "hung up (SIGHUP)",
                    _ => "interrupted",
                };
                eprintln!("\n{what}: stopping the runbook; cleanups will run (a second signal aborts them)");
            } else {
                let report = crate::script::report(&host, None);
                eprintln!("\naborted");
                if let Some(text) = left_behind_text(&report) {
                    eprint!("{text}");
                }
                on_abort(&report);
                std::process::exit(exit_code(&host, &report).code());
            }
        }
    });
}

/// Once a second signal has come, the abort path owns the ending: it prints what was left
/// behind and exits the process. A run that ends meanwhile waits for that instead of printing
/// its own ending over it (the two used to interleave).
pub(crate) fn yield_to_abort(host: &Host) {
    if host.interrupt.count() >= 2 {
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
