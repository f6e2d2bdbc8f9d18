//! `runbook recover`: puts back, from a killed run's journal, what its pending cleanups were
//! there to undo. Each step makes a resource so (it reads first, and "already so" or "gone"
//! is fine), so a second recover finds nothing to do; a run whose process lives is refused.

use super::stdout::out;
use std::sync::Arc;
use std::time::Duration;

use super::{AppResult, runtime, target};
use crate::cli::RecoverArgs;
use crate::clients::aws::{AwsClients, AwsError, RuleSpec};
use crate::clients::kube::{KubeClient, ListOptions};
use crate::clock::{Clock, RealClock};
use crate::error::{Error, Exit};
use crate::journal::{self, Journal, Record, Rule, RunInfo, Undo};

pub(crate) fn execute(args: &RecoverArgs) -> AppResult {
    let state_dir = journal::state_dir(args.journal.state_dir.as_deref());
    if args.list {
        return list(&state_dir);
    }
    let runtime = runtime::build()?;
    let target = target::connect(&runtime, &args.target, None)?;
    let Some(clients) = target.outside().cloned() else {
        return Err(Error::Usage(
            "recover acts on the target a run used: give its --kubeconfig (and --aws-endpoint, --profile, --region); \
             a run on the embedded lab twin took its twin, and what it changed, with it"
                .into(),
        ));
    };
    let runs = journal::list_runs(&state_dir);
    let run = match &args.run_id {
        Some(id) => runs.into_iter().find(|r| &r.id == id).ok_or_else(|| {
            Error::Usage(format!(
                "no run {id} under {}; `runbook recover --list` shows the unfinished ones",
                state_dir.display()
            ))
        })?,
        None => match runs
            .into_iter()
            .rev()
            .find(|r| r.unfinished() && r.target == target.key)
        {
            Some(run) => run,
            None => {
                out!(
                    "nothing to recover: no unfinished run against {}",
                    target.key
                );
                return Ok(Exit::Passed);
            }
        },
    };
    if run.target != target.key {
        return Err(Error::Usage(format!(
            "run {} acted on {}, not on {}: give the same --kubeconfig and --aws-endpoint",
            run.id, run.target, target.key
        )));
    }
    if run.alive() {
        return Err(Error::Usage(format!(
            "run {} (pid {}) is still running: stop it first (Ctrl-C or SIGTERM runs its cleanups); recover is for a run that was killed",
            run.id, run.pid
        )));
    }
    let _lock = journal::acquire(
        &state_dir,
        &journal::Holder {
            pid: std::process::id(),
            run_id: format!("recover of {}", run.id),
            runbook: run.runbook.clone(),
            target: target.key.clone(),
        },
        super::run::lock_patience(&args.journal)?,
    )
    .map_err(|e| Error::Usage(e.to_string()))?;
    let records = journal::read_journal(&run.journal).map_err(|e| Error::Usage(e.to_string()))?;
    let plan = journal::plan(&records);
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
    for action in &plan.not_undoable {
        out!("[not undone] {action} (nothing undoes it)");
    }
    if plan.steps.is_empty() {
        out!("[result] nothing to undo");
    }
    let clock = RealClock::new();
    let mut failed = 0;
    for step in &plan.steps {
        if args.dry_run {
            out!("[would undo] {}", step.describe());
            continue;
        }
        out!("[undo] {}", step.describe());
        match runtime.block_on(undo(&clients.aws, &clients.kube, step, &clock)) {
            Ok(Done::Changed) => out!("[pass] {}", step.describe()),
            Ok(Done::AlreadySo) => out!("[pass] {} (already so)", step.describe()),
            Err(error) => {
                failed += 1;
                out!("[fail] {}: {error}", step.describe());
            }
        }
    }
    if args.dry_run {
        out!("[result] dry run: {} steps, nothing done", plan.steps.len());
        return Ok(Exit::Passed);
    }
    if failed > 0 {
        out!(
            "[result] {failed} of {} steps failed; run recover again",
            plan.steps.len()
        );
        return Ok(Exit::CleanupFailed);
    }
    let marked = Journal::append_to(&run.journal)
        .and_then(|j| j.append(&Record::Recovered { at: now_secs() }));
    if let Err(error) = marked {
        eprintln!(
            "warning: {error}: a second recover will redo the steps (they are safe to repeat)"
        );
    }
    out!("[result] recovered: {} steps", plan.steps.len());
    Ok(Exit::Passed)
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn list(state_dir: &std::path::Path) -> AppResult {
    let runs: Vec<RunInfo> = journal::list_runs(state_dir)
        .into_iter()
        .filter(|run| run.unfinished() && !run.on_embedded_twin())
        .collect();
    if runs.is_empty() {
        out!("no unfinished runs under {}", state_dir.display());
    }
    for run in runs {
        out!(
            "{}  {}  {}  started {}  {}, {} mutations",
            run.id,
            run.runbook,
            run.target,
            crate::clock::calendar::rfc3339_utc(i64::try_from(run.started_at).unwrap_or(i64::MAX)),
            run.state(),
            run.mutations.unwrap_or_default()
        );
        for step in &run.to_undo {
            out!("    would undo: {step}");
        }
    }
    Ok(Exit::Passed)
}

enum Done {
    Changed,
    AlreadySo,
}

#[derive(Debug, thiserror::Error)]
enum UndoError {
    #[error(transparent)]
    Aws(#[from] AwsError),
    #[error(transparent)]
    Kube(#[from] crate::clients::kube::KubeError),
}

fn spec(group: &str, rule: &Rule) -> RuleSpec {
    let source = if rule.source == "self" {
        group
    } else {
        &rule.source
    };
    let is_group = source.starts_with("sg-");
    RuleSpec {
        egress: rule.direction == "egress",
        protocol: rule.protocol.clone(),
        from_port: rule.from_port,
        to_port: rule.to_port,
        cidr: (!is_group).then(|| source.to_string()),
        group: is_group.then(|| source.to_string()),
        description: rule.description.clone(),
    }
}

/// Whether `group` has `rule` now.
async fn has_rule(aws: &AwsClients, group: &str, rule: &Rule) -> Result<bool, AwsError> {
    let rules = aws.rules(group).await?;
    Ok(rules.iter().any(|r| {
        let source = r["source"].as_str().unwrap_or_default();
        let source = if source == "self" { group } else { source };
        r["direction"].as_str() == Some(rule.direction.as_str())
            && r["protocol"].as_str() == Some(rule.protocol.as_str())
            && r["from_port"].as_i64() == Some(i64::from(rule.from_port))
            && r["to_port"].as_i64() == Some(i64::from(rule.to_port))
            && (source == rule.source || (rule.source == group && source == group))
    }))
}

async fn undo(
    aws: &Arc<AwsClients>,
    kube: &Arc<KubeClient>,
    step: &Undo,
    clock: &dyn Clock,
) -> Result<Done, UndoError> {
    let gone = |e: &AwsError| {
        matches!(
            e.code.as_str(),
            "ResourceNotFoundException" | "InvalidGroup.NotFound" | "InvalidPermission.NotFound"
        )
    };
    match step {
        Undo::ScaleNodegroup {
            cluster,
            nodegroup,
            desired,
            max,
        } => match aws
            .scale_nodegroup_to(
                cluster,
                nodegroup,
                *desired,
                *max,
                Some(Duration::from_secs(1200)),
                clock,
            )
            .await
        {
            Ok(update) if update["status"] == "Unchanged" => Ok(Done::AlreadySo),
            Ok(_) => Ok(Done::Changed),
            Err(e) if gone(&e) => Ok(Done::AlreadySo),
            Err(e) => Err(e.into()),
        },
        Undo::Authorize { group, rule } => match has_rule(aws, group, rule).await {
            Ok(true) => Ok(Done::AlreadySo),
            Ok(false) => match aws.authorize(group, &spec(group, rule)).await {
                Ok(_) => Ok(Done::Changed),
                Err(e) if e.code == "InvalidPermission.Duplicate" => Ok(Done::AlreadySo),
                Err(e) => Err(e.into()),
            },
            Err(e) if gone(&e) => Ok(Done::AlreadySo),
            Err(e) => Err(e.into()),
        },
        Undo::Revoke { group, rule } => match aws.revoke(group, &spec(group, rule)).await {
            Ok(()) => Ok(Done::Changed),
            Err(e) if gone(&e) => Ok(Done::AlreadySo),
            Err(e) => Err(e.into()),
        },
        Undo::DeleteObject {
            kind,
            namespace,
            name,
        } => match kube.delete(kind, name, namespace.as_deref()).await {
            Ok(()) => Ok(Done::Changed),
            Err(crate::clients::kube::KubeError::Api { code: 404, .. }) => Ok(Done::AlreadySo),
            Err(e) => Err(e.into()),
        },
        Undo::DeleteLabeled {
            kinds,
            namespace,
            selector,
        } => {
            let mut deleted = 0;
            for kind in kinds {
                let options = ListOptions {
                    namespace: Some(namespace.clone()),
                    labels: Some(selector.clone()),
                    fields: None,
                };
                for object in kube.list(kind, &options).await? {
                    let name = object["metadata"]["name"].as_str().unwrap_or_default();
                    match kube.delete(kind, name, Some(namespace)).await {
                        Ok(()) => deleted += 1,
                        Err(crate::clients::kube::KubeError::Api { code: 404, .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            Ok(if deleted > 0 {
                Done::Changed
            } else {
                Done::AlreadySo
            })
        }
        Undo::RestoreObject { object } => {
            kube.apply(std::slice::from_ref(object), None).await?;
            Ok(Done::Changed)
        }
        Undo::ReleaseNode { node, key } => match kube.release(node, key).await {
            Ok(true) => Ok(Done::Changed),
            Ok(false) => Ok(Done::AlreadySo),
            Err(crate::clients::kube::KubeError::Api { code: 404, .. }) => Ok(Done::AlreadySo),
            Err(e) => Err(e.into()),
        },
    }
}
