//! doctor's questions to the API server about its caller: who the credentials are
//! (SelfSubjectReview) and whether they may make the requests the lab's runbooks make
//! (SelfSubjectAccessReview), as `kubectl auth whoami` and `kubectl auth can-i` would answer.

use super::doctor::Probe;
use crate::clients::kube::{AccessQuestion, KubeClient};

/// What `verify.rhai` and the drills' checks read (deploy/kubernetes/rbac.yaml grants these
/// to the scheduled drill).
const READS: &[(&str, &str, Option<&str>)] = &[
    ("list", "nodes", None),
    ("list", "services", None),
    ("list", "pods", Some("kube-system")),
    ("list", "daemonsets.apps", Some("kube-system")),
    ("list", "deployments.apps", Some("kube-system")),
    ("get", "configmaps", Some("kube-system")),
];

/// What the GPU drill changes: its test pods, commands in them, their logs, and node labels
/// and taints (quarantine).
const CHANGES: &[(&str, &str, Option<&str>)] = &[
    ("create", "pods", Some("default")),
    ("delete", "pods", Some("default")),
    ("create", "pods/exec", Some("default")),
    ("get", "pods/log", Some("default")),
    ("patch", "nodes", None),
];

pub(super) async fn probe(kube: &KubeClient) -> Vec<Probe> {
    let identity = kube.whoami().await.map(|user| {
        let name = user["username"].as_str().unwrap_or("?").to_string();
        let groups: Vec<&str> = user["groups"]
            .as_array()
            .map(|g| g.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        if groups.is_empty() {
            name
        } else {
            format!("{name} (groups {})", groups.join(", "))
        }
    });
    let known = identity.is_ok();
    let mut probes = vec![Probe::new(
        "Kubernetes identity",
        identity.map_err(|e| e.to_string()),
    )];
    if !known {
        return probes;
    }
    let reads = missing(kube, READS).await;
    probes.push(Probe::new(
        "may read what verify reads",
        match reads {
            Ok(missing) if missing.is_empty() => Ok(format!("{} permissions", READS.len())),
            Ok(missing) => Err(format!(
                "cannot {}: bind the identity to a role that grants them (deploy/kubernetes/rbac.yaml has the drill's, AmazonEKSViewPolicy covers them on EKS)",
                missing.join(", ")
            )),
            Err(e) => Err(e),
        },
    ));
    probes.push(match missing(kube, CHANGES).await {
        Ok(missing) if missing.is_empty() => Probe::new(
            "may make the drill's changes",
            Ok(format!("{} permissions", CHANGES.len())),
        ),
        // A read-only identity is a choice (verify-only drills), not a fault of the target.
        Ok(missing) => Probe::warning(
            "may make the drill's changes",
            format!(
                "cannot {}: verify-only runbooks will pass, the GPU drill will not",
                missing.join(", ")
            ),
        ),
        Err(e) => Probe::new("may make the drill's changes", Err(e)),
    });
    probes
}

/// The permissions of `wanted` the API server says the caller lacks, as `verb resource [-n NS]`.
async fn missing(
    kube: &KubeClient,
    wanted: &[(&str, &str, Option<&str>)],
) -> Result<Vec<String>, String> {
    let mut missing = Vec::new();
    for (verb, resource, namespace) in wanted {
        let question = AccessQuestion {
            verb: verb.to_string(),
            resource: resource.to_string(),
            namespace: namespace.map(str::to_string),
            ..AccessQuestion::default()
        };
        if !kube.can_i(&question).await.map_err(|e| e.to_string())? {
            missing.push(match namespace {
                Some(ns) => format!("{verb} {resource} -n {ns}"),
                None => format!("{verb} {resource}"),
            });
        }
    }
    Ok(missing)
}
