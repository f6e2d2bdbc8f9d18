//! Server-side printing (`Accept: ...;as=Table`): the columns `kubectl get` shows, `-o wide`
//! columns at priority 1.

use serde_json::{Value, json};

use crate::sim::timestamps::{human_age, parse_rfc3339};

use super::resources::ResourceType;

type Column = (&'static str, &'static str, u8);

const NAME: Column = ("Name", "string", 0);
const AGE: Column = ("Age", "string", 0);

fn columns(kind: &str) -> Vec<Column> {
    match kind {
        "Node" => vec![
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
        ],
        "Pod" => vec![
            NAME,
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            AGE,
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ],
        "Deployment" => vec![
            NAME,
            ("Ready", "string", 0),
            ("Up-to-date", "string", 0),
            ("Available", "string", 0),
            AGE,
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ],
        "DaemonSet" => vec![
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
        ],
        "ReplicaSet" => vec![
            NAME,
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            AGE,
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ],
        "Job" => vec![
            NAME,
            ("Status", "string", 0),
            ("Completions", "string", 0),
            ("Duration", "string", 0),
            AGE,
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ],
        "Namespace" => vec![NAME, ("Status", "string", 0), AGE],
        "ConfigMap" => vec![NAME, ("Data", "integer", 0), AGE],
        "Service" => vec![
            NAME,
            ("Type", "string", 0),
            ("Cluster-IP", "string", 0),
            ("External-IP", "string", 0),
            ("Port(s)", "string", 0),
            AGE,
            ("Selector", "string", 1),
        ],
        "Event" => vec![
            ("Last Seen", "string", 0),
            ("Type", "string", 0),
            ("Reason", "string", 0),
            ("Object", "string", 0),
            ("Message", "string", 0),
        ],
        "CustomResourceDefinition" => vec![NAME, ("Created At", "date", 0)],
        "ResourceSlice" => vec![
            NAME,
            ("Node", "string", 0),
            ("Driver", "string", 0),
            ("Pool", "string", 0),
            AGE,
        ],
        _ => vec![NAME, AGE],
    }
}

fn age(object: &Value, now: std::time::Duration) -> String {
    object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(parse_rfc3339)
        .map_or_else(
            || "<unknown>".into(),
            |created| human_age(now.saturating_sub(created)),
        )
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

fn join_containers(spec: &Value, field: &str) -> String {
    spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn selector_text(selector: &Value) -> String {
    let mut parts: Vec<String> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    parts.sort();
    parts.join(",")
}

fn map_text(map: &Value) -> String {
    match map.as_object() {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(","),
        _ => "<none>".into(),
    }
}

fn pod_status(pod: &Value) -> String {
    if !pod["metadata"]["deletionTimestamp"].is_null() {
        return "Terminating".into();
    }
    for status in pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(reason) = status["state"]["waiting"]["reason"].as_str() {
            return reason.into();
        }
        if pod["status"]["phase"] != "Succeeded" && pod["status"]["phase"] != "Failed" {
            continue;
        }
        if let Some(reason) = status["state"]["terminated"]["reason"].as_str() {
            return reason.into();
        }
    }
    pod["status"]["phase"].as_str().unwrap_or("Pending").into()
}

fn cells(kind: &str, o: &Value, now: std::time::Duration) -> Vec<Value> {
    let name = json!(o["metadata"]["name"]);
    let age = json!(age(o, now));
    let status = &o["status"];
    let spec = &o["spec"];
    let template = &spec["template"]["spec"];
    match kind {
        "Node" => {
            let ready = status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            let mut state = if ready {
                "Ready".to_string()
            } else {
                "NotReady".to_string()
            };
            if spec["unschedulable"] == true {
                state.push_str(",SchedulingDisabled");
            }
            let roles: Vec<&str> = o["metadata"]["labels"]
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, _)| k.strip_prefix("node-role.kubernetes.io/"))
                .collect();
            let address = |t: &str| {
                status["addresses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|a| a["type"] == t)
                    .and_then(|a| a["address"].as_str())
                    .unwrap_or("<none>")
                    .to_string()
            };
            let info = &status["nodeInfo"];
            vec![
                name,
                json!(state),
                json!(if roles.is_empty() {
                    "<none>".into()
                } else {
                    roles.join(",")
                }),
                age,
                info["kubeletVersion"].clone(),
                json!(address("InternalIP")),
                json!(address("ExternalIP")),
                info["osImage"].clone(),
                info["kernelVersion"].clone(),
                info["containerRuntimeVersion"].clone(),
            ]
        }
        "Pod" => {
            let statuses = status["containerStatuses"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let total = spec["containers"].as_array().map_or(0, Vec::len);
            let ready = statuses.iter().filter(|s| s["ready"] == true).count();
            let restarts: i64 = statuses.iter().map(|s| int(&s["restartCount"])).sum();
            vec![
                name,
                json!(format!("{ready}/{total}")),
                json!(pod_status(o)),
                json!(restarts.to_string()),
                age,
                json!(status["podIP"].as_str().unwrap_or("<none>")),
                json!(spec["nodeName"].as_str().unwrap_or("<none>")),
                json!("<none>"),
                json!("<none>"),
            ]
        }
        "Deployment" => vec![
            name,
            json!(format!(
                "{}/{}",
                int(&status["readyReplicas"]),
                int(&spec["replicas"])
            )),
            json!(int(&status["updatedReplicas"])),
            json!(int(&status["availableReplicas"])),
            age,
            json!(join_containers(template, "name")),
            json!(join_containers(template, "image")),
            json!(selector_text(&spec["selector"])),
        ],
        "DaemonSet" => vec![
            name,
            json!(int(&status["desiredNumberScheduled"])),
            json!(int(&status["currentNumberScheduled"])),
            json!(int(&status["numberReady"])),
            json!(int(&status["updatedNumberScheduled"])),
            json!(int(&status["numberAvailable"])),
            json!(map_text(&template["nodeSelector"])),
            age,
            json!(join_containers(template, "name")),
            json!(join_containers(template, "image")),
            json!(selector_text(&spec["selector"])),
        ],
        "ReplicaSet" => vec![
            name,
            json!(int(&spec["replicas"])),
            json!(int(&status["replicas"])),
            json!(int(&status["readyReplicas"])),
            age,
            json!(join_containers(template, "name")),
            json!(join_containers(template, "image")),
            json!(selector_text(&spec["selector"])),
        ],
        "Job" => {
            let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
            let has = |t: &str| {
                conditions
                    .iter()
                    .any(|c| c["type"] == t && c["status"] == "True")
            };
            let state = if has("Complete") {
                "Complete"
            } else if has("Failed") {
                "Failed"
            } else {
                "Running"
            };
            let duration = match (
                status["startTime"].as_str().and_then(parse_rfc3339),
                status["completionTime"].as_str().and_then(parse_rfc3339),
            ) {
                (Some(start), Some(end)) => human_age(end.saturating_sub(start)),
                (Some(start), None) => human_age(now.saturating_sub(start)),
                _ => String::new(),
            };
            vec![
                name,
                json!(state),
                json!(format!(
                    "{}/{}",
                    int(&status["succeeded"]),
                    int(&spec["completions"])
                )),
                json!(duration),
                age,
                json!(join_containers(template, "name")),
                json!(join_containers(template, "image")),
                json!(format!(
                    "batch.kubernetes.io/controller-uid={}",
                    o["metadata"]["uid"].as_str().unwrap_or_default()
                )),
            ]
        }
        "Namespace" => vec![
            name,
            json!(status["phase"].as_str().unwrap_or("Active")),
            age,
        ],
        "ConfigMap" => vec![
            name,
            json!(
                o["data"].as_object().map_or(0, |m| m.len())
                    + o["binaryData"].as_object().map_or(0, |m| m.len())
            ),
            age,
        ],
        "Service" => {
            let ports: Vec<String> = spec["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| format!("{}/{}", p["port"], p["protocol"].as_str().unwrap_or("TCP")))
                .collect();
            vec![
                name,
                spec["type"].clone(),
                json!(spec["clusterIP"].as_str().unwrap_or("<none>")),
                json!("<none>"),
                json!(if ports.is_empty() {
                    "<none>".into()
                } else {
                    ports.join(",")
                }),
                age,
                json!(map_text(&spec["selector"])),
            ]
        }
        "Event" => {
            let last = o["lastTimestamp"]
                .as_str()
                .and_then(parse_rfc3339)
                .map_or_else(|| "<unknown>".into(), |t| human_age(now.saturating_sub(t)));
            let involved = &o["involvedObject"];
            vec![
                json!(last),
                o["type"].clone(),
                o["reason"].clone(),
                json!(format!(
                    "{}/{}",
                    involved["kind"].as_str().unwrap_or_default().to_lowercase(),
                    involved["name"].as_str().unwrap_or_default()
                )),
                o["message"].clone(),
            ]
        }
        "CustomResourceDefinition" => vec![name, o["metadata"]["creationTimestamp"].clone()],
        "ResourceSlice" => vec![
            name,
            json!(spec["nodeName"].as_str().unwrap_or("<none>")),
            spec["driver"].clone(),
            spec["pool"]["name"].clone(),
            age,
        ],
        _ => vec![name, age],
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
    now: std::time::Duration,
    include: &str,
    resource_version: u64,
    headers: bool,
) -> Value {
    let kind = resource.kind.as_str();
    let definitions: Vec<Value> = if headers {
        columns(kind)
            .into_iter()
            .map(|(name, kind, priority)| json!({"name": name, "type": kind, "format": if name == "Name" { "name" } else { "" }, "description": "", "priority": priority}))
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
