//! `runbook plan`: rehearses a runbook on the lab twin, on its virtual clock, and prints what it
//! would change: every mutating call by step, its cleanups' apart, how the run ends, how long it
//! takes and what the resources cost meanwhile. Nothing outside this process is called.

use std::sync::Arc;

use super::{AppResult, runtime, target};
use crate::cli::{PlanArgs, parse_sets, runbook_folder};
use crate::error::{Error, Exit};
use crate::plan::{Plan, to_text};
use crate::report::NullSink;
use crate::script::{self, Host, HostConfig, Interrupt, RunOptions};

pub(crate) fn execute(args: &PlanArgs) -> AppResult {
    let t = &args.target;
    if t.kubeconfig.is_some() || t.cluster.is_some() || t.in_cluster || t.aws_endpoint.is_some() {
        return Err(Error::Usage(
            "runbook plan rehearses on the lab twin (--scenario, --fault); a twin of a real target, captured from it, is not built yet: run with --read-only there to see what it reads, or on the twin to see what it changes".into(),
        ));
    }
    let text = std::fs::read_to_string(&args.file).map_err(|source| Error::Read {
        path: args.file.clone(),
        what: "the runbook".into(),
        source,
    })?;
    let folder = runbook_folder(&args.file);
    // Snapshots go to a folder of the rehearsal's own, removed after it: a plan writes
    // nothing of the runbook's.
    let scratch =
        Scratch(std::env::temp_dir().join(format!("runbook-plan-{}", std::process::id())));
    let read = args.read.sandbox([folder.clone()]);
    let (sets, set_files) = parse_sets(&args.sets, &read)?;
    let runtime = runtime::build()?;
    let target = target::connect(&runtime, t, None)?;
    let runbook = args.file.display().to_string();
    let host = Host::new(
        HostConfig {
            runbook: runbook.clone(),
            base_dir: folder,
            sets,
            set_files,
            read,
            snapshot_dir: scratch.0.clone(),
            update_snapshots: false,
            run_id: None,
        },
        target.clock.clone(),
        Arc::new(NullSink),
        Interrupt::new(),
        runtime.handle().clone(),
    );
    host.attach_guards(args.guards.guards());
    let aws = target.clients.aws.clone();
    let before = runtime.block_on(aws.cost_report()).ok();
    let (h, extensions) = (host.clone(), target.extensions.clone());
    let outcome = runtime::run_script(&runtime, move || {
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
    let plan = Plan::new(
        &outcome.report,
        &format!("the lab twin ({} scenario)", t.scenario),
        before.as_ref(),
        after.as_ref(),
    );
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&plan).unwrap_or_default()
        );
    } else {
        print!("{}", to_text(&plan));
    }
    Ok(Exit::Passed)
}

/// A folder removed when the plan is done with it.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
