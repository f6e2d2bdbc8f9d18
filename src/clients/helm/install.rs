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

async fn run_hooks(
    kube: &KubeClient,
    hooks: &[&RenderedObject],
    namespace: &str,
    timeout: Duration,
    clock: &dyn Clock,
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
        apply_one(kube, hook, namespace).await?;
        if hook.kind() == "Job" {
            kube.wait(
                "batch/v1/Job",
                hook.name(),
                Some(namespace),
                &complete,
                timeout,
                clock,
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
        }
        report.hooks_run.push(label(hook));
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
    let timeout = wait.unwrap_or(Duration::from_secs(300));
    let namespace_object =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    kube.apply(std::slice::from_ref(&namespace_object), None)
        .await
        .map_err(|e| kube_error(format!("Namespace/{namespace}"), e))?;

    let established =
        Condition::parse("condition=Established").map_err(|e| kube_error("CRD".into(), e))?;
    for crd in objects.iter().filter(|o| o.is_crd) {
        apply_one(kube, crd, namespace).await?;
        kube.wait(
            "apiextensions.k8s.io/v1/CustomResourceDefinition",
            crd.name(),
            None,
            &established,
            timeout,
            clock,
        )
        .await
        .map_err(|e| kube_error(label(crd), e))?;
        report.crds.push(label(crd));
    }

    let hooks: Vec<&RenderedObject> = objects
        .iter()
        .filter(|o| o.is_hook() && !o.is_crd)
        .collect();
    let pre: Vec<&RenderedObject> = hooks
        .iter()
        .copied()
        .filter(|h| has_event(h, "pre-install"))
        .collect();
    let post: Vec<&RenderedObject> = hooks
        .iter()
        .copied()
        .filter(|h| has_event(h, "post-install"))
        .collect();
    report.hooks_skipped = hooks
        .iter()
        .filter(|h| !has_event(h, "pre-install") && !has_event(h, "post-install"))
        .map(|h| format!("{} ({})", label(h), h.hook.as_deref().unwrap_or_default()))
        .collect();
    run_hooks(kube, &pre, namespace, timeout, clock, &mut report).await?;

    let mut resources: Vec<&RenderedObject> = objects
        .iter()
        .filter(|o| !o.is_hook() && !o.is_crd)
        .collect();
    resources.sort_by_key(|o| rank(o.kind()));
    for object in &resources {
        apply_one(kube, object, namespace).await?;
        report.applied.push(label(object));
    }

    run_hooks(kube, &post, namespace, timeout, clock, &mut report).await?;

    if let Some(wait) = wait {
        let deadline = clock.now() + wait;
        for object in resources
            .iter()
            .filter(|o| matches!(o.kind(), "Deployment" | "DaemonSet" | "StatefulSet"))
        {
            let ns = match object.namespace() {
                "" => namespace,
                ns => ns,
            };
            let kind = format!("apps/v1/{}", object.kind());
            let left = deadline.saturating_sub(clock.now());
            kube.rollout_status(&kind, object.name(), Some(ns), left, clock)
                .await
                .map_err(|e| kube_error(label(object), e))?;
            report.rolled_out.push(label(object));
        }
    }
    Ok(report)
}
