//! The cells of a server-side Table's row (`kubectl get`), per kind, in the order of the
//! columns `tables` declares.

use std::time::Duration;

use serde_json::{Value, json};

use crate::sim::timestamps::{human_age, parse_rfc3339};

fn age(object: &Value, now: Duration) -> String {
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

pub(super) fn cells(kind: &str, o: &Value, now: Duration) -> Vec<Value> {
    match kind {
        "Node" => node_cells(o, now),
        "Pod" => pod_cells(o, now),
        "Deployment" => deployment_cells(o, now),
        "DaemonSet" => daemon_set_cells(o, now),
        "ReplicaSet" => replica_set_cells(o, now),
        "Job" => job_cells(o, now),
        "Namespace" => namespace_cells(o, now),
        "ConfigMap" => config_map_cells(o, now),
        "Service" => service_cells(o, now),
        "Event" => event_cells(o, now),
        "CustomResourceDefinition" => vec![name(o), o["metadata"]["creationTimestamp"].clone()],
        "ResourceSlice" => resource_slice_cells(o, now),
        "Lease" => vec![
            name(o),
            json!(o["spec"]["holderIdentity"].as_str().unwrap_or_default()),
            json!(age(o, now)),
        ],
        _ => vec![name(o), json!(age(o, now))],
    }
}

fn name(o: &Value) -> Value {
    json!(o["metadata"]["name"])
}

/// `<none>` for an empty list, else its items joined by commas.
fn joined_or_none(items: &[impl AsRef<str>]) -> String {
    if items.is_empty() {
        "<none>".into()
    } else {
        items
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn node_cells(o: &Value, now: Duration) -> Vec<Value> {
    let status = &o["status"];
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
        name(o),
        json!(node_state(o)),
        json!(joined_or_none(&roles)),
        json!(age(o, now)),
        info["kubeletVersion"].clone(),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        info["osImage"].clone(),
        info["kernelVersion"].clone(),
        info["containerRuntimeVersion"].clone(),
    ]
}

/// `Ready` or `NotReady`, with `,SchedulingDisabled` when cordoned.
fn node_state(node: &Value) -> String {
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    let mut state = if ready {
        "Ready".to_string()
    } else {
        "NotReady".to_string()
    };
    if node["spec"]["unschedulable"] == true {
        state.push_str(",SchedulingDisabled");
    }
    state
}

fn pod_cells(o: &Value, now: Duration) -> Vec<Value> {
    let (status, spec) = (&o["status"], &o["spec"]);
    let statuses = status["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let total = spec["containers"].as_array().map_or(0, Vec::len);
    let ready = statuses.iter().filter(|s| s["ready"] == true).count();
    let restarts: i64 = statuses.iter().map(|s| int(&s["restartCount"])).sum();
    vec![
        name(o),
        json!(format!("{ready}/{total}")),
        json!(pod_status(o)),
        json!(restarts.to_string()),
        json!(age(o, now)),
        json!(status["podIP"].as_str().unwrap_or("<none>")),
        json!(spec["nodeName"].as_str().unwrap_or("<none>")),
        json!("<none>"),
        json!("<none>"),
    ]
}

/// The `-o wide` columns of a workload: its containers, their images, its selector.
fn workload_wide(spec: &Value) -> [Value; 3] {
    let template = &spec["template"]["spec"];
    [
        json!(join_containers(template, "name")),
        json!(join_containers(template, "image")),
        json!(selector_text(&spec["selector"])),
    ]
}

fn deployment_cells(o: &Value, now: Duration) -> Vec<Value> {
    let (status, spec) = (&o["status"], &o["spec"]);
    let mut cells = vec![
        name(o),
        json!(format!(
            "{}/{}",
            int(&status["readyReplicas"]),
            int(&spec["replicas"])
        )),
        json!(int(&status["updatedReplicas"])),
        json!(int(&status["availableReplicas"])),
        json!(age(o, now)),
    ];
    cells.extend(workload_wide(spec));
    cells
}

fn daemon_set_cells(o: &Value, now: Duration) -> Vec<Value> {
    let (status, spec) = (&o["status"], &o["spec"]);
    let mut cells = vec![
        name(o),
        json!(int(&status["desiredNumberScheduled"])),
        json!(int(&status["currentNumberScheduled"])),
        json!(int(&status["numberReady"])),
        json!(int(&status["updatedNumberScheduled"])),
        json!(int(&status["numberAvailable"])),
        json!(map_text(&spec["template"]["spec"]["nodeSelector"])),
        json!(age(o, now)),
    ];
    cells.extend(workload_wide(spec));
    cells
}

fn replica_set_cells(o: &Value, now: Duration) -> Vec<Value> {
    let (status, spec) = (&o["status"], &o["spec"]);
    let mut cells = vec![
        name(o),
        json!(int(&spec["replicas"])),
        json!(int(&status["replicas"])),
        json!(int(&status["readyReplicas"])),
        json!(age(o, now)),
    ];
    cells.extend(workload_wide(spec));
    cells
}

fn job_cells(o: &Value, now: Duration) -> Vec<Value> {
    let (status, spec) = (&o["status"], &o["spec"]);
    let template = &spec["template"]["spec"];
    vec![
        name(o),
        json!(job_state(status)),
        json!(format!(
            "{}/{}",
            int(&status["succeeded"]),
            int(&spec["completions"])
        )),
        json!(job_duration(status, now)),
        json!(age(o, now)),
        json!(join_containers(template, "name")),
        json!(join_containers(template, "image")),
        json!(format!(
            "batch.kubernetes.io/controller-uid={}",
            o["metadata"]["uid"].as_str().unwrap_or_default()
        )),
    ]
}

fn job_state(status: &Value) -> &'static str {
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let has = |t: &str| {
        conditions
            .iter()
            .any(|c| c["type"] == t && c["status"] == "True")
    };
    if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else {
        "Running"
    }
}

/// From start to completion, or to now while it runs; empty before it starts.
fn job_duration(status: &Value, now: Duration) -> String {
    match (
        status["startTime"].as_str().and_then(parse_rfc3339),
        status["completionTime"].as_str().and_then(parse_rfc3339),
    ) {
        (Some(start), Some(end)) => human_age(end.saturating_sub(start)),
        (Some(start), None) => human_age(now.saturating_sub(start)),
        _ => String::new(),
    }
}

fn namespace_cells(o: &Value, now: Duration) -> Vec<Value> {
    vec![
        name(o),
        json!(o["status"]["phase"].as_str().unwrap_or("Active")),
        json!(age(o, now)),
    ]
}

fn config_map_cells(o: &Value, now: Duration) -> Vec<Value> {
    vec![
        name(o),
        json!(
            o["data"].as_object().map_or(0, |m| m.len())
                + o["binaryData"].as_object().map_or(0, |m| m.len())
        ),
        json!(age(o, now)),
    ]
}

fn service_cells(o: &Value, now: Duration) -> Vec<Value> {
    let spec = &o["spec"];
    let ports: Vec<String> = spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| format!("{}/{}", p["port"], p["protocol"].as_str().unwrap_or("TCP")))
        .collect();
    vec![
        name(o),
        spec["type"].clone(),
        json!(spec["clusterIP"].as_str().unwrap_or("<none>")),
        json!("<none>"),
        json!(joined_or_none(&ports)),
        json!(age(o, now)),
        json!(map_text(&spec["selector"])),
    ]
}

fn event_cells(o: &Value, now: Duration) -> Vec<Value> {
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

fn resource_slice_cells(o: &Value, now: Duration) -> Vec<Value> {
    let spec = &o["spec"];
    vec![
        name(o),
        json!(spec["nodeName"].as_str().unwrap_or("<none>")),
        spec["driver"].clone(),
        spec["pool"]["name"].clone(),
        json!(age(o, now)),
    ]
}
