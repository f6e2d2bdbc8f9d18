//! Server-side printing (`Accept: ...;as=Table`): the columns `kubectl get` shows, `-o wide`
//! columns at priority 1.

use std::time::Duration;

use serde_json::{Value, json};

use super::table_cells::cells;
use crate::sim::kube::storage::resources::ResourceType;

type Column = (&'static str, &'static str, u8);

const NAME: Column = ("Name", "string", 0);
const AGE: Column = ("Age", "string", 0);

const LEASE: &[Column] = &[NAME, ("Holder", "string", 0), AGE];
const NODE: &[Column] = &[
    NAME,
    ("Status", "string", 0),
    ("Roles", "string", 0),
    AGE,
    ("Version", "string", 0),
    ("Internal-IP", "string", 1),
    ("External-IP", "string", 1),
    ("OS-Image", "string", 1),
    ("Kernel-Version", "string", 1),
    ("Container-Runtime", "string", 1),
];
const POD: &[Column] = &[
    NAME,
    ("Ready", "string", 0),
    ("Status", "string", 0),
    ("Restarts", "string", 0),
    AGE,
    ("IP", "string", 1),
    ("Node", "string", 1),
    ("Nominated Node", "string", 1),
    ("Readiness Gates", "string", 1),
];
const DEPLOYMENT: &[Column] = &[
    NAME,
    ("Ready", "string", 0),
    ("Up-to-date", "string", 0),
    ("Available", "string", 0),
    AGE,
    ("Containers", "string", 1),
    ("Images", "string", 1),
    ("Selector", "string", 1),
];
const DAEMON_SET: &[Column] = &[
    NAME,
    ("Desired", "integer", 0),
    ("Current", "integer", 0),
    ("Ready", "integer", 0),
    ("Up-to-date", "integer", 0),
    ("Available", "integer", 0),
    ("Node Selector", "string", 0),
    AGE,
    ("Containers", "string", 1),
    ("Images", "string", 1),
    ("Selector", "string", 1),
];
const REPLICA_SET: &[Column] = &[
    NAME,
    ("Desired", "integer", 0),
    ("Current", "integer", 0),
    ("Ready", "integer", 0),
    AGE,
    ("Containers", "string", 1),
    ("Images", "string", 1),
    ("Selector", "string", 1),
];
const JOB: &[Column] = &[
    NAME,
    ("Status", "string", 0),
    ("Completions", "string", 0),
    ("Duration", "string", 0),
    AGE,
    ("Containers", "string", 1),
    ("Images", "string", 1),
    ("Selector", "string", 1),
];
const NAMESPACE: &[Column] = &[NAME, ("Status", "string", 0), AGE];
const CONFIG_MAP: &[Column] = &[NAME, ("Data", "integer", 0), AGE];
const SERVICE: &[Column] = &[
    NAME,
    ("Type", "string", 0),
    ("Cluster-IP", "string", 0),
    ("External-IP", "string", 0),
    ("Port(s)", "string", 0),
    AGE,
    ("Selector", "string", 1),
];
const EVENT: &[Column] = &[
    ("Last Seen", "string", 0),
    ("Type", "string", 0),
    ("Reason", "string", 0),
    ("Object", "string", 0),
    ("Message", "string", 0),
];
const CUSTOM_RESOURCE_DEFINITION: &[Column] = &[NAME, ("Created At", "date", 0)];
const RESOURCE_SLICE: &[Column] = &[
    NAME,
    ("Node", "string", 0),
    ("Driver", "string", 0),
    ("Pool", "string", 0),
    AGE,
];
const OTHER: &[Column] = &[NAME, AGE];

fn columns(kind: &str) -> &'static [Column] {
    match kind {
        "Node" => NODE,
        "Pod" => POD,
        "Deployment" => DEPLOYMENT,
        "DaemonSet" => DAEMON_SET,
        "ReplicaSet" => REPLICA_SET,
        "Job" => JOB,
        "Namespace" => NAMESPACE,
        "ConfigMap" => CONFIG_MAP,
        "Service" => SERVICE,
        "Event" => EVENT,
        "CustomResourceDefinition" => CUSTOM_RESOURCE_DEFINITION,
        "ResourceSlice" => RESOURCE_SLICE,
        "Lease" => LEASE,
        _ => OTHER,
    }
}

fn row_object(object: &Value, include: &str) -> Option<Value> {
    match include {
        "None" => None,
        "Object" => Some(object.clone()),
        _ => Some(
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]}),
        ),
    }
}

/// A Table of `objects` as the apiserver prints them for `kubectl get`.
pub(crate) fn table(
    resource: &ResourceType,
    objects: &[Value],
    now: Duration,
    include: &str,
    resource_version: u64,
    headers: bool,
) -> Value {
    let kind = resource.kind.as_str();
    let definitions: Vec<Value> = if headers {
        columns(kind)
            .iter()
            .map(|&(name, kind, priority)| json!({"name": name, "type": kind, "format": if name == "Name" { "name" } else { "" }, "description": "", "priority": priority}))
            .collect()
    } else {
        Vec::new()
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            let mut row = json!({"cells": cells(kind, object, now)});
            if let Some(o) = row_object(object, include) {
                row["object"] = o;
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version.to_string()},
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

/// Whether an Accept header asks for a Table.
pub(crate) fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table"))
}

/// Whether an Accept header asks for metadata only (`as=PartialObjectMetadataList`), as
/// `kubectl get --show-kind -o name` and readers that must not see a Secret's data do.
pub(crate) fn wants_metadata_only(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=PartialObjectMetadataList"))
}

/// A PartialObjectMetadataList of `objects`: their metadata, nothing else.
pub(crate) fn metadata_list(objects: &[Value], resource_version: u64) -> Value {
    let items: Vec<Value> = objects
        .iter()
        .map(|o| row_object(o, "Metadata").unwrap_or_default())
        .collect();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version.to_string()},
        "items": items,
    })
}
