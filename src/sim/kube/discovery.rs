//! Discovery as kubectl asks for it: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/{g}/{v}`.
//! The twin answers the legacy (unaggregated) documents; kubectl falls back to them.

use serde_json::{Value, json};

use super::resources::Registry;

/// The lab's server version (seed 000: `v1.35.3-eks-bbe087e`).
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "35",
        "emulationMajor": "1",
        "emulationMinor": "35",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "34",
        "gitVersion": "v1.35.3-eks-bbe087e",
        "gitCommit": "bbe087e",
        "gitTreeState": "clean",
        "buildDate": "2026-03-26T07:13:31Z",
        "goVersion": "go1.25.7",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

pub fn core_versions() -> Value {
    json!({"kind": "APIVersions", "apiVersion": "v1", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
}

pub fn group_list(registry: &Registry) -> Value {
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

pub fn group(registry: &Registry, name: &str) -> Option<Value> {
    let (group, versions) = registry.groups().into_iter().find(|(g, _)| g == name)?;
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    Some(
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions, "preferredVersion": versions[0]}),
    )
}

pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
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
