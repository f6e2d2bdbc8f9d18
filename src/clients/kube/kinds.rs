//! Resolving what a runbook calls a kind (`"Node"`, `"deploy"`, `"apps/v1/Deployment"`,
//! `"deployments.apps"`, a CRD's kind) to an API resource, from the server's discovery.

use kube::discovery::{ApiCapabilities, ApiResource, Discovery, Scope};

use super::error::KubeError;

/// kubectl's short names for built-in kinds (discovery documents carry them, but kube-rs's
/// `Discovery` does not keep them).
const SHORT_NAMES: &[(&str, &str)] = &[
    ("pods", "po"),
    ("nodes", "no"),
    ("namespaces", "ns"),
    ("services", "svc"),
    ("configmaps", "cm"),
    ("serviceaccounts", "sa"),
    ("events", "ev"),
    ("persistentvolumeclaims", "pvc"),
    ("persistentvolumes", "pv"),
    ("deployments", "deploy"),
    ("daemonsets", "ds"),
    ("replicasets", "rs"),
    ("statefulsets", "sts"),
    ("cronjobs", "cj"),
    ("customresourcedefinitions", "crd"),
    ("poddisruptionbudgets", "pdb"),
    ("ingresses", "ing"),
    ("storageclasses", "sc"),
    ("priorityclasses", "pc"),
];

/// A resolved kind: where its objects live and whether they are namespaced.
#[derive(Debug, Clone)]
pub(super) struct Kind {
    pub resource: ApiResource,
    pub namespaced: bool,
}

/// Finds `wanted` among the discovered resources: by `group/version/Kind`, `version/Kind`,
/// Kind, plural, singular, short name or `plural.group`, case-insensitively.
pub(super) fn resolve(discovery: &Discovery, wanted: &str) -> Option<Kind> {
    let lower = wanted.to_lowercase();
    let (prefix, kind_part) = match lower.rsplit_once('/') {
        Some((prefix, kind)) => (Some(prefix.to_string()), kind.to_string()),
        None => (None, lower.clone()),
    };
    let mut best: Option<(u8, Kind)> = None;
    for group in discovery.groups() {
        for (resource, caps) in group.recommended_resources() {
            if let Some(prefix) = &prefix {
                let api_version = resource.api_version.to_lowercase();
                if *prefix != api_version && *prefix != resource.group.to_lowercase() {
                    continue;
                }
            }
            let plural_group = format!("{}.{}", resource.plural, resource.group).to_lowercase();
            let short = SHORT_NAMES
                .iter()
                .any(|(plural, short)| *plural == resource.plural && *short == kind_part);
            let rank = if resource.kind.to_lowercase() == kind_part {
                1
            } else if resource.plural.to_lowercase() == kind_part || plural_group == kind_part {
                2
            } else if short {
                3
            } else if resource.plural.trim_end_matches('s') == kind_part {
                4
            } else {
                continue;
            };
            // Core and the well-known groups win ties, as kubectl prefers them.
            let rank = rank * 2
                + u8::from(
                    !resource.group.is_empty()
                        && !["apps", "batch"].contains(&resource.group.as_str()),
                );
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, kind(resource, &caps)));
            }
        }
    }
    best.map(|(_, k)| k)
}

fn kind(resource: ApiResource, caps: &ApiCapabilities) -> Kind {
    Kind {
        resource,
        namespaced: caps.scope == Scope::Namespaced,
    }
}

pub(super) fn unknown(wanted: &str, discovery: &Discovery) -> KubeError {
    let mut kinds: Vec<String> = discovery
        .groups()
        .flat_map(|g| g.recommended_resources())
        .map(|(r, _)| r.kind)
        .collect();
    kinds.sort();
    kinds.dedup();
    let close: Vec<&String> = kinds
        .iter()
        .filter(|k| strsim::levenshtein(&k.to_lowercase(), &wanted.to_lowercase()) <= 2)
        .collect();
    let hint = match close.first() {
        Some(k) => format!("did you mean `{k}`?"),
        None => "list kinds with `kubectl api-resources`".into(),
    };
    KubeError::UnknownKind {
        kind: wanted.to_string(),
        hint,
    }
}
