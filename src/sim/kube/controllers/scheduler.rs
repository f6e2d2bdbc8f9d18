//! The scheduler: binds pending pods to nodes that are Ready, match selectors and affinity,
//! tolerate the taints and have room for the requests (extended resources such as
//! `nvidia.com/gpu` included); spreads replicas across zones; explains why when none fits.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::{events, shared};
use crate::sim::kube::state::KubeState;
use crate::sim::timestamps::rfc3339;

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    let is_pending =
        |p: &Value| p["spec"]["nodeName"].is_null() && p["status"]["phase"] == "Pending";
    // A pod that did not fit may fit once a node joins or capacity frees up; otherwise only
    // new and changed pods need a place.
    let pending: Vec<Value> = if dirty.nodes_changed || dirty.capacity_freed {
        state.objects_where("pods", None, is_pending)
    } else {
        dirty
            .changed_objects(state, "pods")
            .into_iter()
            .filter(is_pending)
            .collect()
    };
    for pod in pending {
        schedule(state, pod);
    }
}

/// Parses a quantity into base units times 1000 (millicores, milli-bytes), enough to compare.
pub(crate) fn quantity_milli(text: &str) -> i128 {
    let text = text.trim();
    let suffixes: [(&str, i128); 13] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("Pi", 1 << 50),
        ("Ei", 1 << 60),
        ("k", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
        ("P", 1_000_000_000_000_000),
        ("E", 1_000_000_000_000_000_000),
        ("m", 0),
    ];
    for (suffix, factor) in suffixes {
        if let Some(number) = text.strip_suffix(suffix) {
            let value: f64 = number.parse().unwrap_or(0.0);
            return if factor == 0 {
                value as i128
            } else {
                (value * 1000.0) as i128 * factor
            };
        }
    }
    (text.parse::<f64>().unwrap_or(0.0) * 1000.0) as i128
}

fn value_milli(value: &Value) -> i128 {
    match value {
        Value::String(s) => quantity_milli(s),
        Value::Number(n) => (n.as_f64().unwrap_or(0.0) * 1000.0) as i128,
        _ => 0,
    }
}

/// Sum of container requests (limits stand in for missing requests, as the apiserver defaults).
pub(crate) fn pod_requests(spec: &Value) -> BTreeMap<String, i128> {
    let mut total = BTreeMap::new();
    for container in spec["containers"].as_array().into_iter().flatten() {
        let resources = &container["resources"];
        let mut names: Vec<String> = resources["requests"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        names.extend(
            resources["limits"]
                .as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default(),
        );
        names.sort();
        names.dedup();
        for name in names {
            let value = if resources["requests"][&name].is_null() {
                &resources["limits"][&name]
            } else {
                &resources["requests"][&name]
            };
            *total.entry(name).or_insert(0) += value_milli(value);
        }
    }
    total
}

fn node_ready(node: &Value) -> bool {
    shared::condition_true(node, "Ready")
}

struct Verdict {
    fits: bool,
    reasons: Vec<String>,
}

fn evaluate(
    pod: &Value,
    node: &Value,
    used: &BTreeMap<String, i128>,
    pods_on_node: usize,
) -> Verdict {
    let spec = &pod["spec"];
    let mut reasons = Vec::new();
    if !node_ready(node) {
        reasons.push("node(s) had untolerated taint {node.kubernetes.io/not-ready: }".to_string());
    }
    if node["spec"]["unschedulable"] == true {
        reasons.push("node(s) were unschedulable".to_string());
    }
    if !shared::node_matches(spec, node) {
        reasons.push("node(s) didn't match Pod's node affinity/selector".to_string());
    }
    for taint in shared::untolerated_taints(node, &spec["tolerations"]) {
        let value = taint["value"].as_str().unwrap_or_default();
        reasons.push(format!(
            "node(s) had untolerated taint {{{}: {value}}}",
            taint["key"].as_str().unwrap_or_default()
        ));
    }
    let allocatable = &node["status"]["allocatable"];
    let max_pods = allocatable["pods"]
        .as_str()
        .map_or(110, |p| p.parse().unwrap_or(110));
    if pods_on_node >= max_pods {
        reasons.push("Too many pods".to_string());
    }
    for (resource, request) in pod_requests(spec) {
        let capacity = value_milli(&allocatable[&resource]);
        if request > 0 && used.get(&resource).copied().unwrap_or(0) + request > capacity {
            reasons.push(format!("Insufficient {resource}"));
        }
    }
    Verdict {
        fits: reasons.is_empty(),
        reasons,
    }
}

fn owner_uid(pod: &Value) -> Option<&str> {
    pod["metadata"]["ownerReferences"][0]["uid"].as_str()
}

fn schedule(state: &mut KubeState, mut pod: Value) {
    let nodes = state.objects("nodes", None);
    let pods = state.objects("pods", None);
    let now = rfc3339(state.now);
    let mut candidates = Vec::new();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for node in &nodes {
        let node_name = shared::name(node);
        let on_node: Vec<&Value> = pods
            .iter()
            .filter(|p| p["spec"]["nodeName"] == node_name && !shared::is_terminal(p))
            .collect();
        let mut used: BTreeMap<String, i128> = BTreeMap::new();
        for p in &on_node {
            for (k, v) in pod_requests(&p["spec"]) {
                *used.entry(k).or_insert(0) += v;
            }
        }
        let verdict = evaluate(&pod, node, &used, on_node.len());
        if verdict.fits {
            let zone = node["metadata"]["labels"]["topology.kubernetes.io/zone"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let siblings_in_zone = pods
                .iter()
                .filter(|p| {
                    owner_uid(p).is_some()
                        && owner_uid(p) == owner_uid(&pod)
                        && !shared::is_terminal(p)
                })
                .filter(|p| {
                    p["spec"]["nodeName"]
                        .as_str()
                        .and_then(|n| nodes.iter().find(|x| shared::name(x) == n))
                        .is_some_and(|n| {
                            n["metadata"]["labels"]["topology.kubernetes.io/zone"]
                                .as_str()
                                .unwrap_or_default()
                                == zone
                        })
                })
                .count();
            candidates.push((siblings_in_zone, on_node.len(), node_name.to_string()));
        } else {
            for reason in verdict.reasons {
                *tally.entry(reason).or_insert(0) += 1;
            }
        }
    }
    candidates.sort();
    match candidates.first() {
        Some((_, _, node_name)) => {
            let node_name = node_name.clone();
            pod["spec"]["nodeName"] = json!(node_name);
            shared::set_condition(
                &mut pod,
                json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null}),
                &now,
            );
            let pod = shared::update(state, "pods", pod);
            let message = format!(
                "Successfully assigned {}/{} to {node_name}",
                shared::namespace(&pod),
                shared::name(&pod)
            );
            events::record(
                state,
                &pod,
                false,
                "Scheduled",
                &message,
                "default-scheduler",
            );
        }
        None => {
            let message = unschedulable_message(nodes.len(), &tally);
            let already = pod["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "PodScheduled" && c["message"] == message);
            if !already {
                shared::set_condition(
                    &mut pod,
                    json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message, "lastProbeTime": null}),
                    &now,
                );
                let pod = shared::update(state, "pods", pod);
                events::record(
                    state,
                    &pod,
                    true,
                    "FailedScheduling",
                    &message,
                    "default-scheduler",
                );
            }
        }
    }
}

/// The scheduler's summary: `0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: ...`.
fn unschedulable_message(node_count: usize, tally: &BTreeMap<String, usize>) -> String {
    if node_count == 0 {
        return "no nodes available to schedule pods".to_string();
    }
    let parts: Vec<String> = tally
        .iter()
        .map(|(reason, n)| format!("{n} {reason}"))
        .collect();
    format!(
        "0/{node_count} nodes are available: {}. preemption: 0/{node_count} nodes are available: {node_count} Preemption is not helpful for scheduling.",
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_across_units() {
        assert_eq!(quantity_milli("1930m"), 1930);
        assert_eq!(quantity_milli("2"), 2000);
        assert!(quantity_milli("3371436Ki") > quantity_milli("3Gi"));
        assert_eq!(quantity_milli("1"), value_milli(&json!(1)));
    }
}
