//! Ctrl-C: the first stops the script and lets cleanups run; the second aborts at once.

use std::sync::Arc;

use crate::error::Exit;
use crate::script::Host;

/// Listens for Ctrl-C for the rest of the run. `on_abort` runs before the process exits on the
/// second one (to write what can be written).
pub(crate) fn watch(
    runtime: &tokio::runtime::Runtime,
    host: Arc<Host>,
    on_abort: impl Fn(&Host) + Send + 'static,
) {
    runtime.spawn(async move {
        loop {
            if tokio::signal::ctrl_c().await.is_err() {
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
