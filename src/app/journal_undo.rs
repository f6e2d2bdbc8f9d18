//! Undoing from a journal: each step of a [`crate::journal::UndoPlan`] made so against the target
//! (it reads first, and "already so" or "gone" is fine), so a second pass finds nothing to do.
//! `runbook recover` runs it for a killed run; a run whose own cleanups could not start runs it
//! for itself on SIGTERM or a second Ctrl-C. Like a runbook's cleanups, its AWS steps ride out a
//! busy API: throttled or failed on AWS's side, a step is made again until its deadline.

use std::sync::Arc;
use std::time::Duration;

use crate::clients::aws::{
    AwsClients, AwsError, Backoff, NodeRepair, RuleSpec, is_transient, until_deadline,
};
use crate::clients::kube::{KubeClient, ListOptions};
use crate::clock::{Clock, RealClock, format_duration};
use crate::journal::{Journal, JournalError, Record, Rule, Undo};

/// How long one AWS step keeps trying while AWS is busy: a defer's default deadline.
const STEP_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// Runs every step against the target, newest first, saying each as `[undo]`, `[pass]` or
/// `[fail]` through `say` (and each retry of a busy API); answers how many failed.
pub(crate) async fn undo_all(
    clients: &crate::target::TargetClients,
    steps: &[Undo],
    say: impl Fn(String),
) -> usize {
    let clock = RealClock::new();
    let mut failed = 0;
    for step in steps {
        say(format!("[undo] {}", step.describe()));
        match undo(&clients.aws, &clients.kube, step, &clock, &say).await {
            Ok(Done::Changed) => say(format!("[pass] {}", step.describe())),
            Ok(Done::AlreadySo) => say(format!("[pass] {} (already so)", step.describe())),
            Err(error) => {
                failed += 1;
                say(format!("[fail] {}: {error}", step.describe()));
            }
        }
    }
    failed
}

/// Marks a journal recovered, so that neither `recover --list` nor the next run offers it
/// again; a journal that cannot take the mark is said, not fatal: the steps are safe to repeat.
pub(crate) fn mark_recovered(journal: &Journal) {
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    warn_unmarked(journal.append(&Record::Recovered { at }));
}

/// Said when a journal could not take its recovered mark.
pub(crate) fn warn_unmarked(marked: Result<(), JournalError>) {
    if let Err(error) = marked {
        eprintln!(
            "warning: {error}: a second recover will redo the steps (they are safe to repeat)"
        );
    }
}

/// `make` (one AWS step) made again while AWS throttles it or fails on its side, with a
/// cleanup's backoff, until [`STEP_DEADLINE`]: an undo does not give up on a busy API.
async fn patiently<F, Fut>(
    clock: &dyn Clock,
    say: &impl Fn(String),
    make: F,
) -> Result<Done, AwsError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Done, AwsError>>,
{
    until_deadline(
        clock,
        Some(clock.now() + STEP_DEADLINE),
        Backoff::CLEANUP,
        |error| is_transient(&error.code),
        |error, pause| {
            say(format!(
                "{error}; trying again in {}",
                format_duration(pause)
            ))
        },
        make,
    )
    .await
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
    say: &impl Fn(String),
) -> Result<Done, UndoError> {
    match step {
        Undo::ScaleNodegroup {
            cluster,
            nodegroup,
            desired,
            max,
        } => Ok(patiently(clock, say, || {
            scale_back(aws, cluster, nodegroup, *desired, *max, clock)
        })
        .await?),
        Undo::Authorize { group, rule } => {
            Ok(patiently(clock, say, || authorize(aws, group, rule)).await?)
        }
        Undo::Revoke { group, rule } => {
            Ok(patiently(clock, say, || revoke(aws, group, rule)).await?)
        }
        Undo::DeleteObject {
            kind,
            namespace,
            name,
        } => delete_object(kube, kind, namespace.as_deref(), name).await,
        Undo::DeleteLabeled {
            kinds,
            namespace,
            selector,
        } => delete_labeled(kube, kinds, namespace, selector).await,
        Undo::RestoreObject { object } => {
            kube.apply(std::slice::from_ref(object), None).await?;
            Ok(Done::Changed)
        }
        Undo::ReleaseNode { node, key } => release_node(kube, node, key).await,
        Undo::RestoreNodeRepair {
            cluster,
            nodegroup,
            config,
        } => {
            let repair: NodeRepair = serde_json::from_value(config.clone()).unwrap_or_default();
            Ok(patiently(clock, say, || {
                restore_repair(aws, cluster, nodegroup, &repair)
            })
            .await?)
        }
    }
}

/// The node group's node auto repair as it was, unless it is so already.
async fn restore_repair(
    aws: &AwsClients,
    cluster: &str,
    nodegroup: &str,
    repair: &NodeRepair,
) -> Result<Done, AwsError> {
    if aws.node_repair(cluster, nodegroup).await? == *repair {
        return Ok(Done::AlreadySo);
    }
    aws.update_node_repair(cluster, nodegroup, repair).await?;
    Ok(Done::Changed)
}

/// Whether AWS says the resource (or the rule) is not there: undoing it is then done.
fn gone(e: &AwsError) -> bool {
    matches!(
        e.code.as_str(),
        "ResourceNotFoundException" | "InvalidGroup.NotFound" | "InvalidPermission.NotFound"
    )
}

/// One try at scaling the node group back.
async fn scale_back(
    aws: &AwsClients,
    cluster: &str,
    nodegroup: &str,
    desired: i32,
    max: Option<i32>,
    clock: &dyn Clock,
) -> Result<Done, AwsError> {
    let scaled = aws
        .scale_nodegroup_to(
            cluster,
            nodegroup,
            desired,
            max,
            Some(Duration::from_secs(1200)),
            clock,
        )
        .await;
    match scaled {
        Ok(update) if update["status"] == "Unchanged" => Ok(Done::AlreadySo),
        Ok(_) => Ok(Done::Changed),
        Err(e) if gone(&e) => Ok(Done::AlreadySo),
        Err(e) => Err(e),
    }
}

/// One try at putting the rule back in the group.
async fn authorize(aws: &AwsClients, group: &str, rule: &Rule) -> Result<Done, AwsError> {
    match has_rule(aws, group, rule).await {
        Ok(true) => Ok(Done::AlreadySo),
        Ok(false) => match aws.authorize(group, &spec(group, rule)).await {
            Ok(_) => Ok(Done::Changed),
            Err(e) if e.code == "InvalidPermission.Duplicate" => Ok(Done::AlreadySo),
            Err(e) => Err(e),
        },
        Err(e) if gone(&e) => Ok(Done::AlreadySo),
        Err(e) => Err(e),
    }
}

/// One try at taking the rule out of the group.
async fn revoke(aws: &AwsClients, group: &str, rule: &Rule) -> Result<Done, AwsError> {
    match aws.revoke(group, &spec(group, rule)).await {
        Ok(()) => Ok(Done::Changed),
        Err(e) if gone(&e) => Ok(Done::AlreadySo),
        Err(e) => Err(e),
    }
}

async fn delete_object(
    kube: &KubeClient,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<Done, UndoError> {
    match kube.delete(kind, name, namespace).await {
        Ok(()) => Ok(Done::Changed),
        Err(crate::clients::kube::KubeError::Api { code: 404, .. }) => Ok(Done::AlreadySo),
        Err(e) => Err(e.into()),
    }
}

/// Every object of `kinds` in `namespace` that `selector` matches, deleted.
async fn delete_labeled(
    kube: &KubeClient,
    kinds: &[String],
    namespace: &str,
    selector: &str,
) -> Result<Done, UndoError> {
    let mut deleted = 0;
    for kind in kinds {
        let options = ListOptions {
            namespace: Some(namespace.to_string()),
            labels: Some(selector.to_string()),
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

async fn release_node(kube: &KubeClient, node: &str, key: &str) -> Result<Done, UndoError> {
    match kube.release(node, key).await {
        Ok(true) => Ok(Done::Changed),
        Ok(false) => Ok(Done::AlreadySo),
        Err(crate::clients::kube::KubeError::Api { code: 404, .. }) => Ok(Done::AlreadySo),
        Err(e) => Err(e.into()),
    }
}
