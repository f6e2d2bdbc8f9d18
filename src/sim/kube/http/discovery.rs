//! Discovery as kubectl asks for it: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/{g}/{v}`.
//! The twin answers both the legacy documents and aggregated discovery v2 (`/api` and `/apis`
//! with `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`), which
//! kubectl 1.30+ and runbook's own client ask for first.

use serde_json::{Value, json};

use crate::sim::kube::storage::resources::Registry;

/// The server version: the lab's (seed 000: `v1.35.3-eks-bbe087e`) or the hybrid lab's.
pub(crate) fn version(git_version: &str) -> Value {
    let minor: u32 = git_version
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .unwrap_or(35);
    let commit = git_version.rsplit('-').next().unwrap_or_default();
    json!({
        "major": "1",
        "minor": minor.to_string(),
        "emulationMajor": "1",
        "emulationMinor": minor.to_string(),
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": (minor - 1).to_string(),
        "gitVersion": git_version,
        "gitCommit": commit,
        "gitTreeState": "clean",
        "buildDate": "2026-03-26T07:13:31Z",
        "goVersion": "go1.25.7",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

pub(crate) fn core_versions() -> Value {
    json!({"kind": "APIVersions", "apiVersion": "v1", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
}

pub(crate) fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .into_iter()
        .filter(|(group, _)| !group.is_empty())
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
                .collect();
            json!({"name": group, "versions": versions, "preferredVersion": versions[0]})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub(crate) fn group(registry: &Registry, name: &str) -> Option<Value> {
    let (group, versions) = registry.groups().into_iter().find(|(g, _)| g == name)?;
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    Some(
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions, "preferredVersion": versions[0]}),
    )
}

pub(crate) fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let resources: Vec<Value> = registry
        .all()
        .iter()
        .filter(|t| t.group == group && t.version == version)
        .flat_map(|t| t.discovery_entries())
        .collect();
    if resources.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

/// The media type of aggregated discovery (Kubernetes 1.30+), which kubectl asks for first.
pub(crate) const AGGREGATED_V2: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether a request's Accept header asks for aggregated discovery v2.
pub(crate) fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|media| {
        let parts: Vec<&str> = media.split(';').map(str::trim).collect();
        parts.contains(&"g=apidiscovery.k8s.io")
            && parts.contains(&"v=v2")
            && parts.contains(&"as=APIGroupDiscoveryList")
    })
}

/// Every group with its versions and resources in one document: `/api` (the core group) or
/// `/apis` (all the others), as `APIGroupDiscoveryList` v2. Two requests instead of one per
/// group version.
pub(crate) fn aggregated(registry: &Registry, core: bool) -> Value {
    let items: Vec<Value> = registry
        .groups()
        .into_iter()
        .filter(|(group, _)| group.is_empty() == core)
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| {
                    let resources: Vec<Value> = registry
                        .all()
                        .iter()
                        .filter(|t| t.group == group && t.version == *version)
                        .map(aggregated_resource)
                        .collect();
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let metadata = if core {
                json!({"creationTimestamp": null})
            } else {
                json!({"name": group, "creationTimestamp": null})
            };
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

fn aggregated_resource(t: &crate::sim::kube::storage::resources::ResourceType) -> Value {
    let legacy = t.discovery_entries();
    let main = &legacy[0];
    let subresources: Vec<Value> = t
        .subresources
        .iter()
        .zip(legacy.iter().skip(1))
        .map(|(sub, entry)| {
            let (group, version) = match sub.as_str() {
                "scale" => ("autoscaling", "v1"),
                "log" | "exec" | "attach" | "portforward" => ("", "v1"),
                _ => (t.group.as_str(), t.version.as_str()),
            };
            json!({
                "subresource": sub,
                "responseKind": {"group": group, "version": version, "kind": entry["kind"]},
                "verbs": entry["verbs"],
            })
        })
        .collect();
    let mut resource = json!({
        "resource": t.plural,
        "responseKind": {"group": t.group, "version": t.version, "kind": t.kind},
        "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": t.singular,
        "verbs": main["verbs"],
    });
    if !t.short_names.is_empty() {
        resource["shortNames"] = json!(t.short_names);
    }
    if !subresources.is_empty() {
        resource["subresources"] = json!(subresources);
    }
    resource
}
