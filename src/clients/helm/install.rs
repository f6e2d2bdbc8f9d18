//! Installing rendered objects as `helm install` would, through server-side apply: the
//! namespace, then CRDs (waiting until they are Established), `pre-install` hooks, the
//! resources in Helm's kind order, `post-install` hooks, and optionally a wait for workloads.
//! Hooks of other events (`pre-upgrade`, `post-delete`, ...) are not part of an install and are
//! reported as skipped.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use super::error::HelmError;
use super::render::RenderedObject;
use crate::clients::kube::{Condition, KubeClient, KubeError};
use crate::clock::Clock;

/// Helm's install order for kinds (`releaseutil.InstallOrder`); other kinds come after.
const INSTALL_ORDER: [&str; 37] = [
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
];

/// What an install did, by `Kind/name`.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct InstallReport {
    pub namespace: String,
    pub crds: Vec<String>,
    pub applied: Vec<String>,
    pub hooks_run: Vec<String>,
    pub hooks_skipped: Vec<String>,
    /// Workloads waited for until rolled out (with `wait`).
    pub rolled_out: Vec<String>,
}

fn label(object: &RenderedObject) -> String {
    format!("{}/{}", object.kind(), object.name())
}

fn rank(kind: &str) -> usize {
    INSTALL_ORDER
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(INSTALL_ORDER.len())
}

fn kube_error(object: String, source: KubeError) -> HelmError {
    HelmError::Kube { object, source }
}

fn has_event(object: &RenderedObject, event: &str) -> bool {
    object
        .hook
        .as_deref()
        .is_some_and(|h| h.split(',').any(|e| e.trim() == event))
}

async fn apply_one(
    kube: &KubeClient,
    object: &RenderedObject,
    namespace: &str,
) -> Result<Value, HelmError> {
    let mut applied = kube
        .apply(std::slice::from_ref(&object.object), Some(namespace))
        .await
        .map_err(|e| kube_error(label(object), e))?;
    Ok(applied.pop().unwrap_or(Value::Null))
}

/// What every step of one install shares: where it goes and how long each wait may take.
struct Target<'a> {
    kube: &'a KubeClient,
    namespace: &'a str,
    timeout: Duration,
    clock: &'a dyn Clock,
}

async fn run_hooks(
    target: &Target<'_>,
    hooks: &[&RenderedObject],
    report: &mut InstallReport,
) -> Result<(), HelmError> {
    let mut hooks = hooks.to_vec();
    hooks.sort_by_key(|h| {
        (
            h.hook_weight.unwrap_or(0),
            rank(h.kind()),
            h.name().to_string(),
        )
    });
    let complete =
        Condition::parse("condition=Complete").map_err(|e| kube_error("hook".into(), e))?;
    for hook in hooks {
        apply_one(target.kube, hook, target.namespace).await?;
        if hook.kind() == "Job" {
            finish_hook_job(target, hook, &complete).await?;
        }
        report.hooks_run.push(label(hook));
    }
    Ok(())
}

/// Waits for a hook Job to complete, then deletes it when its delete policy says so.
async fn finish_hook_job(
    target: &Target<'_>,
    hook: &RenderedObject,
    complete: &Condition,
) -> Result<(), HelmError> {
    let Target {
        kube, namespace, ..
    } = *target;
    kube.wait(
        "batch/v1/Job",
        hook.name(),
        Some(namespace),
        complete,
        target.timeout,
        target.clock,
    )
    .await
    .map_err(|e| kube_error(label(hook), e))?;
    let policy = hook
        .hook_delete_policy
        .as_deref()
        .unwrap_or("before-hook-creation");
    if policy.contains("hook-succeeded") {
        kube.delete("batch/v1/Job", hook.name(), Some(namespace))
            .await
            .map_err(|e| kube_error(label(hook), e))?;
    }
    Ok(())
}

/// Installs `objects` into `namespace` (created when missing). `wait` bounds the hook Jobs and,
/// when given, the rollout of every Deployment, DaemonSet and StatefulSet.
pub async fn install(
    kube: &KubeClient,
    objects: &[RenderedObject],
    namespace: &str,
    wait: Option<Duration>,
    clock: &dyn Clock,
) -> Result<InstallReport, HelmError> {
    let mut report = InstallReport {
        namespace: namespace.to_string(),
        ..InstallReport::default()
    };
    let target = Target {
        kube,
        namespace,
        timeout: wait.unwrap_or(Duration::from_secs(300)),
        clock,
    };
    let namespace_object =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    kube.apply(std::slice::from_ref(&namespace_object), None)
        .await
        .map_err(|e| kube_error(format!("Namespace/{namespace}"), e))?;
    apply_crds(&target, objects, &mut report).await?;
    report.hooks_skipped = skipped_hooks(objects);
    run_hooks(&target, &hooks_of(objects, "pre-install"), &mut report).await?;
    let resources = apply_resources(&target, objects, &mut report).await?;
    run_hooks(&target, &hooks_of(objects, "post-install"), &mut report).await?;
    if let Some(wait) = wait {
        wait_for_rollouts(&target, &resources, wait, &mut report).await?;
    }
    Ok(report)
}

/// Applies every CRD and waits until each is Established, before anything that may use it.
async fn apply_crds(
    target: &Target<'_>,
    objects: &[RenderedObject],
    report: &mut InstallReport,
) -> Result<(), HelmError> {
    let established =
        Condition::parse("condition=Established").map_err(|e| kube_error("CRD".into(), e))?;
    for crd in objects.iter().filter(|o| o.is_crd) {
        apply_one(target.kube, crd, target.namespace).await?;
        target
            .kube
            .wait(
                "apiextensions.k8s.io/v1/CustomResourceDefinition",
                crd.name(),
                None,
                &established,
                target.timeout,
                target.clock,
            )
            .await
            .map_err(|e| kube_error(label(crd), e))?;
        report.crds.push(label(crd));
    }
    Ok(())
}

/// The hooks (CRDs aside) that run on `event`.
fn hooks_of<'o>(objects: &'o [RenderedObject], event: &str) -> Vec<&'o RenderedObject> {
    objects
        .iter()
        .filter(|o| o.is_hook() && !o.is_crd && has_event(o, event))
        .collect()
}

/// The hooks (CRDs aside) of other events than an install's, as `Kind/name (events)`.
fn skipped_hooks(objects: &[RenderedObject]) -> Vec<String> {
    objects
        .iter()
        .filter(|o| o.is_hook() && !o.is_crd)
        .filter(|h| !has_event(h, "pre-install") && !has_event(h, "post-install"))
        .map(|h| format!("{} ({})", label(h), h.hook.as_deref().unwrap_or_default()))
        .collect()
}

/// Applies the resources (neither hooks nor CRDs) in Helm's kind order; answers them in it.
async fn apply_resources<'o>(
    target: &Target<'_>,
    objects: &'o [RenderedObject],
    report: &mut InstallReport,
) -> Result<Vec<&'o RenderedObject>, HelmError> {
    let mut resources: Vec<&RenderedObject> = objects
        .iter()
        .filter(|o| !o.is_hook() && !o.is_crd)
        .collect();
    resources.sort_by_key(|o| rank(o.kind()));
    for object in &resources {
        apply_one(target.kube, object, target.namespace).await?;
        report.applied.push(label(object));
    }
    Ok(resources)
}

/// Waits, all within `wait`, until every Deployment, DaemonSet and StatefulSet has rolled out.
async fn wait_for_rollouts(
    target: &Target<'_>,
    resources: &[&RenderedObject],
    wait: Duration,
    report: &mut InstallReport,
) -> Result<(), HelmError> {
    let clock = target.clock;
    let deadline = clock.now() + wait;
    for object in resources
        .iter()
        .filter(|o| matches!(o.kind(), "Deployment" | "DaemonSet" | "StatefulSet"))
    {
        let ns = match object.namespace() {
            "" => target.namespace,
            ns => ns,
        };
        let kind = format!("apps/v1/{}", object.kind());
        let left = deadline.saturating_sub(clock.now());
        target
            .kube
            .rollout_status(&kind, object.name(), Some(ns), left, clock)
            .await
            .map_err(|e| kube_error(label(object), e))?;
        report.rolled_out.push(label(object));
    }
    Ok(())
}
