//! `runbook repl`: the interactive session.

use std::sync::Arc;

use super::{AppResult, runtime};
use crate::cli::ReplArgs;
use crate::error::Exit;
use crate::repl::{Repl, ReplTarget};
use crate::report::LiveSink;
use crate::script::{Host, HostConfig, Interrupt};

pub(crate) fn execute(args: &ReplArgs) -> AppResult {
    let runtime = runtime::build()?;
    let target = crate::target::connect(&runtime, &args.target, args.clock)?;
    let interrupt = Interrupt::new();
    let host = Host::builder(
        HostConfig::scratch(
            "<repl>",
            std::env::current_dir().unwrap_or_default(),
            std::path::PathBuf::from("snapshots/repl"),
        )
        .reading(args.read.sandbox([
            std::env::current_dir().unwrap_or_default(),
            std::path::PathBuf::from("snapshots/repl"),
        ])),
        target.clock.clone(),
        Arc::new(LiveSink::new()),
        interrupt.clone(),
        runtime.handle().clone(),
    )
    .guards(
        args.guards
            .guards()
            .on_embedded_twin(target.embedded_worlds()),
    )
    .build();
    // Ctrl-C while an evaluation runs stops it; the session goes on. (While a line is being
    // edited the terminal is raw and Ctrl-C reaches the editor as a key instead.)
    if let Some(mut signals) = super::signals::interrupts(&runtime) {
        runtime.spawn(async move {
            loop {
                signals.recv().await;
                interrupt.raise();
            }
        });
    }
    let mut repl = Repl::new(
        host,
        ReplTarget {
            clock: target.clock.clone(),
            virtual_clock: target.virtual_clock.clone(),
            extensions: target.extensions.clone(),
            description: target.description.clone(),
            verbose: args.target.verbose,
        },
    );
    repl.run();
    drop(target);
    Ok(Exit::Passed)
}
