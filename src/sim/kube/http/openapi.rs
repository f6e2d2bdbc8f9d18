//! A minimal OpenAPI v3: the paths of every resource with their GVK and the `fieldValidation`
//! parameter. kubectl reads it to learn that the server validates fields itself, and then
//! skips client-side schema validation; it falls back to its built-in types for patches.

use serde_json::{Value, json};

use crate::sim::kube::storage::resources::{Registry, ResourceType};

fn prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `GET /openapi/v3`: one entry per group-version.
pub(crate) fn root(registry: &Registry) -> Value {
    let mut paths = serde_json::Map::new();
    for (group, versions) in registry.groups() {
        for version in versions {
            let path = prefix(&group, &version);
            paths.insert(
                path.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash=twin")}),
            );
        }
    }
    json!({"paths": paths})
}

fn operation(resource: &ResourceType, action: &str) -> Value {
    json!({
        "operationId": format!("{action}{}", resource.kind),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": resource.group, "version": resource.version, "kind": resource.kind},
        "parameters": [
            {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
        ],
        "responses": {"200": {"description": "OK"}},
    })
}

/// `GET /openapi/v3/apis/{group}/{version}`.
pub(crate) fn group_version(registry: &Registry, path: &str) -> Option<Value> {
    let mut paths = serde_json::Map::new();
    for resource in registry
        .all()
        .iter()
        .filter(|t| prefix(&t.group, &t.version) == path)
    {
        let base = if resource.namespaced {
            format!("/{path}/namespaces/{{namespace}}/{}", resource.plural)
        } else {
            format!("/{path}/{}", resource.plural)
        };
        paths.insert(
            base.clone(),
            json!({"post": operation(resource, "post"), "get": operation(resource, "list")}),
        );
        paths.insert(
            format!("{base}/{{name}}"),
            json!({"get": operation(resource, "get"), "put": operation(resource, "put"), "patch": operation(resource, "patch"), "delete": operation(resource, "delete")}),
        );
    }
    if paths.is_empty() {
        return None;
    }
    Some(
        json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.35.3"}, "paths": paths, "components": {"schemas": {}}}),
    )
}
