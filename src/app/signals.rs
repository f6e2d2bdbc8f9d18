//! Ctrl-C: the first stops the script and lets cleanups run; the second aborts at once.

use std::sync::Arc;

use crate::error::Exit;
use crate::report::{Report, left_behind_text};
use crate::script::Host;

/// Installs the SIGINT handler now, before the script starts: a Ctrl-C that came before a
/// spawned listener first ran would otherwise kill the process without its cleanups.
pub(crate) fn interrupts(runtime: &tokio::runtime::Runtime) -> Option<tokio::signal::unix::Signal> {
    let _entered = runtime.enter();
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok()
}

/// Listens for Ctrl-C for the rest of the run. `on_abort` gets the report as it stands before
/// the process exits on the second one (to write what can be written).
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
            if signals.recv().await.is_none() {
                return;
            }
            if host.interrupt.raise() == 1 {
                eprintln!("\ninterrupted: stopping the runbook; cleanups will run (Ctrl-C again to abort them)");
            } else {
                let report = crate::script::report(&host, None);
                eprintln!("\naborted");
                if let Some(text) = left_behind_text(&report) {
                    eprint!("{text}");
                }
                on_abort(&report);
                std::process::exit(Exit::from(&report).code());
            }
        }
    });
}
