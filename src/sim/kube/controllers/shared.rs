//! Helpers the controllers share: ownership, readiness, creating and updating built-ins.

use serde_json::{Value, json};

use crate::sim::kube::storage::api;
use crate::sim::kube::storage::state::{KubeState, store_key};

pub(super) fn uid(object: &Value) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

pub(super) fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

pub(super) fn namespace(object: &Value) -> &str {
    object["metadata"]["namespace"].as_str().unwrap_or_default()
}

pub(super) fn owner_reference(owner: &Value) -> Value {
    json!({
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

pub(super) fn is_terminal(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

/// A pod marked for deletion whose kubelet has not confirmed it yet (one on an unreachable
/// node): it still holds its place, but its controller no longer counts it.
pub(super) fn is_terminating(pod: &Value) -> bool {
    !pod["metadata"]["deletionTimestamp"].is_null()
}

pub(super) fn condition_true(object: &Value, kind: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

pub(super) fn pod_ready(pod: &Value) -> bool {
    pod["status"]["phase"] == "Running" && condition_true(pod, "Ready")
}

/// Sets (or replaces) a condition, keeping its transition time when the status is unchanged.
pub(super) fn set_condition(object: &mut Value, condition: Value, now: &str) {
    let mut conditions = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut condition = condition;
    match conditions
        .iter_mut()
        .find(|c| c["type"] == condition["type"])
    {
        // Nothing new to say (same status, reason and message): the condition stays as it
        // is, its times included, as the deployment controller's SetDeploymentCondition does.
        Some(existing)
            if ["status", "reason", "message"]
                .iter()
                .all(|field| existing[*field] == condition[*field]) => {}
        Some(existing) if existing["status"] == condition["status"] => {
            condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            *existing = condition;
        }
        Some(existing) => {
            condition["lastTransitionTime"] = json!(now);
            *existing = condition;
        }
        None => {
            condition["lastTransitionTime"] = json!(now);
            conditions.push(condition);
        }
    }
    object["status"]["conditions"] = json!(conditions);
}

/// Creates a built-in object through the API (validation and defaults included).
pub(super) fn create(state: &mut KubeState, plural: &str, object: Value) -> Option<Value> {
    let resource = state.built_in(plural);
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    api::create(state, &resource, &namespace, object, false).ok()
}

/// Stores a changed object as is (status included); no-op when nothing changed.
pub(super) fn update(state: &mut KubeState, plural: &str, object: Value) -> Value {
    let key = store_key(&state.built_in(plural));
    state.store.update(&key, object)
}

pub(super) fn remove(state: &mut KubeState, plural: &str, object: &Value) {
    let key = store_key(&state.built_in(plural));
    let (namespace, name) = (namespace(object).to_string(), name(object).to_string());
    state.store.remove(&key, &namespace, &name);
    if plural == "pods" {
        state.forget_logs(&namespace, &name);
    }
}

/// A short stable hash of a pod template (`pod-template-hash`).
pub(super) fn template_hash(template: &Value) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in template.to_string().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (0..10)
        .map(|_| {
            let c = ALPHABET[(hash % ALPHABET.len() as u64) as usize] as char;
            hash /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// A pod from a workload's template, owned by `owner`.
pub(super) fn pod_from_template(
    owner: &Value,
    name: String,
    extra_labels: &[(&str, &str)],
) -> Value {
    let template = &owner["spec"]["template"];
    let mut labels = template["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    for (k, v) in extra_labels {
        labels[*k] = json!(v);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": owner["metadata"]["namespace"],
            "labels": labels,
            "annotations": template["metadata"]["annotations"],
            "ownerReferences": [owner_reference(owner)],
        },
        "spec": template["spec"],
    })
}

/// Whether a pod's tolerations tolerate a node's taint.
pub(super) fn tolerates(tolerations: &Value, taint: &Value) -> bool {
    tolerations.as_array().into_iter().flatten().any(|t| {
        let effect_ok = t["effect"]
            .as_str()
            .is_none_or(|e| e.is_empty() || Some(e) == taint["effect"].as_str());
        let key_ok = match t["operator"].as_str().unwrap_or("Equal") {
            "Exists" => t["key"]
                .as_str()
                .is_none_or(|k| k.is_empty() || Some(k) == taint["key"].as_str()),
            _ => {
                t["key"] == taint["key"]
                    && t["value"].as_str().unwrap_or_default()
                        == taint["value"].as_str().unwrap_or_default()
            }
        };
        effect_ok && key_ok
    })
}

/// Whether a node carries a taint with this key (and this effect, when one is given).
pub(super) fn has_taint(node: &Value, key: &str, effect: Option<&str>) -> bool {
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["key"] == key && effect.is_none_or(|e| t["effect"] == e))
}

/// Taints of a node that keep a pod with these tolerations off it (NoSchedule, NoExecute).
pub(super) fn untolerated_taints<'a>(node: &'a Value, tolerations: &Value) -> Vec<&'a Value> {
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
        .filter(|t| !tolerates(tolerations, t))
        .collect()
}

/// Whether a node satisfies a pod spec's nodeSelector and required node affinity.
pub(super) fn node_matches(spec: &Value, node: &Value) -> bool {
    let labels = &node["metadata"]["labels"];
    let selector_ok = spec["nodeSelector"]
        .as_object()
        .is_none_or(|m| m.iter().all(|(k, v)| labels[k.as_str()] == *v));
    let terms = &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    let affinity_ok = terms
        .as_array()
        .is_none_or(|terms| terms.iter().any(|term| term_matches(term, labels)));
    selector_ok && affinity_ok
}

/// Whether node labels satisfy one node selector term (every one of its expressions).
pub(super) fn term_matches(term: &Value, labels: &Value) -> bool {
    term["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let value = labels[e["key"].as_str().unwrap_or_default()].as_str();
            let values: Vec<&str> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match e["operator"].as_str() {
                Some("In") => value.is_some_and(|v| values.contains(&v)),
                Some("NotIn") => value.is_none_or(|v| !values.contains(&v)),
                Some("Exists") => value.is_some(),
                Some("DoesNotExist") => value.is_none(),
                _ => false,
            }
        })
}
