//! Ctrl-C: the first stops the script and lets cleanups run; the second aborts at once.

use std::sync::Arc;

use crate::error::Exit;
use crate::script::Host;

/// Installs the SIGINT handler now, before the script starts: a Ctrl-C that came before a
/// spawned listener first ran would otherwise kill the process without its cleanups.
pub(crate) fn interrupts(runtime: &tokio::runtime::Runtime) -> Option<tokio::signal::unix::Signal> {
    let _entered = runtime.enter();
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok()
}

/// Listens for Ctrl-C for the rest of the run. `on_abort` runs before the process exits on the
/// second one (to write what can be written).
pub(crate) fn watch(
    runtime: &tokio::runtime::Runtime,
    host: Arc<Host>,
    on_abort: impl Fn(&Host) + Send + 'static,
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
                let skipped = host.unfinished_defers();
                if skipped.is_empty() {
                    eprintln!("\naborted");
                } else {
                    eprintln!("\naborted: these cleanups did not run:");
                    for name in &skipped {
                        eprintln!("  - {name}");
                    }
                }
                on_abort(&host);
                std::process::exit(Exit::Interrupted.code());
            }
        }
    });
}
