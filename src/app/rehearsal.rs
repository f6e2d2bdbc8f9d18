//! A rehearsal: a runbook run on a twin (of the lab twin's scenario, or of a capture of a real
//! target) on its virtual clock, into a [`Plan`]. `plan` prints one; `run` shows one's summary
//! before it asks to change a real target.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{runtime, state_capture};
use crate::cli::{Sets, TargetArgs};
use crate::error::Error;
use crate::guard::Guards;
use crate::plan::Plan;
use crate::report::NullSink;
use crate::sandbox::ReadSandbox;
use crate::script::{self, Host, HostConfig, Interrupt, RunOptions};

/// What a rehearsal runs, as the run would.
pub(crate) struct Rehearsal<'a> {
    pub(crate) file: &'a Path,
    pub(crate) text: String,
    pub(crate) sets: Sets,
    pub(crate) set_files: Sets,
    pub(crate) read: ReadSandbox,
    pub(crate) guards: Guards,
    pub(crate) target: &'a TargetArgs,
}

/// Rehearses on the lab twin of `--scenario`, or, when the target is real, on a twin of a
/// capture of it (read-only calls there; nothing else is sent to it).
pub(crate) fn rehearse(
    runtime: &tokio::runtime::Runtime,
    rehearsal: Rehearsal<'_>,
) -> Result<Plan, Error> {
    let args = rehearsal.target;
    if args.aws_endpoint.is_some() && !args.names_a_cluster() {
        // The embedded twin would send the runbook's AWS changes there.
        return Err(Error::Usage(
            "a rehearsal with --aws-endpoint captures a whole lab: add --kubeconfig or --cluster for its Kubernetes side".into(),
        ));
    }
    let twin = if args.names_a_cluster() {
        let real = crate::target::connect(runtime, args, None)?;
        let capture = state_capture::read(runtime, &real, None)?;
        let name = format!(
            "captured from {} at {}",
            real.description, capture.captured_at
        );
        crate::target::twin_of(runtime, args, capture, &name)?
    } else {
        // The run planned is on the embedded twin itself: held to the guards as it will be.
        let twin = crate::target::connect(runtime, args, None)?;
        let guards = rehearsal
            .guards
            .clone()
            .on_embedded_twin(twin.embedded_worlds());
        return on(
            runtime,
            &twin,
            Rehearsal {
                guards,
                ..rehearsal
            },
        );
    };
    on(runtime, &twin, rehearsal)
}

fn on(
    runtime: &tokio::runtime::Runtime,
    twin: &crate::target::Target,
    rehearsal: Rehearsal<'_>,
) -> Result<Plan, Error> {
    let folder = crate::cli::runbook_folder(rehearsal.file);
    // Snapshots go to a folder of the rehearsal's own, removed after it: a rehearsal writes
    // nothing of the runbook's.
    let scratch = Scratch(std::env::temp_dir().join(format!(
        "runbook-plan-{}-{}",
        std::process::id(),
        SCRATCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )));
    let runbook = rehearsal.file.display().to_string();
    let host = Host::builder(
        HostConfig {
            runbook: runbook.clone(),
            base_dir: folder,
            sets: rehearsal.sets,
            set_files: rehearsal.set_files,
            read: rehearsal.read,
            snapshot_dir: scratch.0.clone(),
            update_snapshots: false,
            run_id: None,
        },
        twin.clock.clone(),
        Arc::new(NullSink),
        Interrupt::new(),
        runtime.handle().clone(),
    )
    .guards(rehearsal.guards)
    .build();
    let aws = twin.clients.aws.clone();
    let before = runtime.block_on(aws.cost_report()).ok();
    let (h, extensions, text) = (host.clone(), twin.extensions.clone(), rehearsal.text);
    let outcome = runtime::run_script(runtime, move || {
        script::run_file(
            &h,
            RunOptions {
                source_name: runbook,
                text,
                extensions,
            },
        )
    })?;
    let after = runtime.block_on(aws.cost_report()).ok();
    let where_ = twin.twin_name.as_deref().unwrap_or(&twin.description);
    Ok(Plan::new(
        &outcome.report,
        where_,
        before.as_ref(),
        after.as_ref(),
    ))
}

static SCRATCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A folder removed when the rehearsal is done with it.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
