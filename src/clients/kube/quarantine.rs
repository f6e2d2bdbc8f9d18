//! Taking a node out of service for a reason, and putting it back exactly as it was: cordon,
//! a `KEY=VALUE:NoSchedule` taint, the `KEY` label with the verdict and a `KEY-valid-until`
//! label, and a `KEY` annotation with the evidence and what the quarantine changed (so that
//! the release uncordons only a node it cordoned). Each change is one JSON patch guarded by
//! the node's resourceVersion: a node changed meanwhile is read again, never overwritten.

use serde_json::{Value, json};

use super::{KubeClient, KubeError};

/// Attempts before giving up on a node that keeps changing under us.
const ATTEMPTS: usize = 5;

pub struct Quarantine<'a> {
    /// A qualified label key: `runbook.dev/gpu-health`.
    pub key: &'a str,
    /// A label value: the verdict (`ISOLATE`).
    pub value: &'a str,
    /// ISO 8601 basic (`20261203T080000Z`): after this the verdict is stale.
    pub valid_until: String,
    /// What the verdict rests on, kept in the annotation.
    pub evidence: Value,
    /// When it was put on (Unix seconds on the run's clock), kept in the annotation: the
    /// breaker counts the nodes isolated within its window.
    pub since: i64,
}

/// JSON pointer escaping of one path segment (`runbook.dev/gpu-health`).
fn segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn valid_until_key(key: &str) -> String {
    format!("{key}-valid-until")
}

/// Whether `text` is a label value Kubernetes takes (63 characters of `[A-Za-z0-9_.-]`,
/// alphanumeric at both ends, or empty).
pub fn is_label_value(text: &str) -> bool {
    let ends = |c: Option<char>| c.is_none_or(|c| c.is_ascii_alphanumeric());
    text.len() <= 63
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && ends(text.chars().next())
        && ends(text.chars().last())
}

fn taints_without(node: &Value, key: &str) -> Vec<Value> {
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["key"] != key)
        .cloned()
        .collect()
}

/// The patch that quarantines `node` (read just now).
fn quarantine_patch(node: &Value, q: &Quarantine<'_>) -> Vec<Value> {
    let version = node["metadata"]["resourceVersion"].clone();
    let earlier: Option<Value> = node["metadata"]["annotations"][q.key]
        .as_str()
        .and_then(|a| serde_json::from_str(a).ok());
    // A node quarantined twice keeps the first record of whether it was cordoned before.
    let cordoned_by_us = earlier.as_ref().map_or_else(
        || node["spec"]["unschedulable"] != true,
        |e| e["cordoned"] == true,
    );
    let mut taints = taints_without(node, q.key);
    taints.push(json!({"key": q.key, "value": q.value, "effect": "NoSchedule"}));
    let record = json!({
        "verdict": q.value,
        "valid_until": q.valid_until,
        "cordoned": cordoned_by_us,
        "evidence": q.evidence,
        // A node isolated again stays isolated since the first time: the breaker counts nodes
        // newly taken out of service, and this one was out already.
        "since": earlier.as_ref().and_then(|e| e["since"].as_i64()).unwrap_or(q.since),
    });
    let mut ops = vec![
        json!({"op": "test", "path": "/metadata/resourceVersion", "value": version}),
        json!({"op": "add", "path": "/spec/unschedulable", "value": true}),
        json!({"op": "add", "path": "/spec/taints", "value": taints}),
    ];
    if node["metadata"]["labels"].is_null() {
        ops.push(json!({"op": "add", "path": "/metadata/labels", "value": {}}));
    }
    if node["metadata"]["annotations"].is_null() {
        ops.push(json!({"op": "add", "path": "/metadata/annotations", "value": {}}));
    }
    for (key, value) in [
        (q.key.to_string(), q.value.to_string()),
        (valid_until_key(q.key), q.valid_until.clone()),
    ] {
        ops.push(json!({"op": "add", "path": format!("/metadata/labels/{}", segment(&key)), "value": value}));
    }
    ops.push(json!({
        "op": "add",
        "path": format!("/metadata/annotations/{}", segment(q.key)),
        "value": record.to_string(),
    }));
    ops
}

/// The patch that releases `node`, or None when nothing of the quarantine is on it.
fn release_patch(node: &Value, key: &str) -> Option<Vec<Value>> {
    let labels = &node["metadata"]["labels"];
    let annotation = node["metadata"]["annotations"][key].as_str();
    let has_taint =
        taints_without(node, key).len() != node["spec"]["taints"].as_array().map_or(0, Vec::len);
    let until = valid_until_key(key);
    if !has_taint && labels[key].is_null() && labels[&until].is_null() && annotation.is_none() {
        return None;
    }
    let cordoned_by_us = annotation
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
        .is_some_and(|record| record["cordoned"] == true);
    let version = node["metadata"]["resourceVersion"].clone();
    let mut ops =
        vec![json!({"op": "test", "path": "/metadata/resourceVersion", "value": version})];
    if has_taint {
        ops.push(
            json!({"op": "replace", "path": "/spec/taints", "value": taints_without(node, key)}),
        );
    }
    for label in [key, until.as_str()] {
        if !labels[label].is_null() {
            ops.push(
                json!({"op": "remove", "path": format!("/metadata/labels/{}", segment(label))}),
            );
        }
    }
    if annotation.is_some() {
        ops.push(
            json!({"op": "remove", "path": format!("/metadata/annotations/{}", segment(key))}),
        );
    }
    if cordoned_by_us && node["spec"]["unschedulable"] == true {
        ops.push(json!({"op": "remove", "path": "/spec/unschedulable"}));
    }
    Some(ops)
}

impl KubeClient {
    /// Quarantines `node` as `q` says; the node as it is afterwards.
    pub async fn quarantine(&self, node: &str, q: &Quarantine<'_>) -> Result<Value, KubeError> {
        if !is_label_value(q.value) || !is_label_value(&q.valid_until) {
            return Err(KubeError::Invalid(format!(
                "the quarantine of {node} needs label values ([A-Za-z0-9_.-], at most 63), got `{}` and `{}`",
                q.value, q.valid_until
            )));
        }
        self.guarded(node, |current| Some(quarantine_patch(current, q)))
            .await
            .map(|(node, _)| node)
    }

    /// Takes the quarantine `key` off `node`, uncordoning it only if the quarantine cordoned
    /// it; whether anything changed.
    pub async fn release(&self, node: &str, key: &str) -> Result<bool, KubeError> {
        self.guarded(node, |current| release_patch(current, key))
            .await
            .map(|(_, changed)| changed)
    }

    /// Reads `node`, patches it as `patch_of` says, and starts over when the node changed in
    /// between (its resourceVersion test fails).
    async fn guarded(
        &self,
        node: &str,
        patch_of: impl Fn(&Value) -> Option<Vec<Value>>,
    ) -> Result<(Value, bool), KubeError> {
        let mut last_error = None;
        for _ in 0..ATTEMPTS {
            let current = self.get("Node", node, None).await?;
            let Some(ops) = patch_of(&current) else {
                return Ok((current, false));
            };
            match self.patch("Node", node, None, &json!(ops), "json").await {
                Ok(patched) => return Ok((patched, true)),
                Err(e) if e.to_string().contains("resourceVersion") => last_error = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_error
            .unwrap_or_else(|| KubeError::Invalid(format!("node {node} kept changing; try again"))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(cordoned: bool) -> Value {
        let mut node = json!({
            "metadata": {"name": "n", "resourceVersion": "7", "labels": {"tier": "gpu"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]},
        });
        if cordoned {
            node["spec"]["unschedulable"] = json!(true);
        }
        node
    }

    fn q() -> Quarantine<'static> {
        Quarantine {
            key: "runbook.dev/gpu-health",
            value: "ISOLATE",
            valid_until: "20261203T080000Z".into(),
            evidence: json!({"xid": [79]}),
            since: 1_796_000_000,
        }
    }

    fn applied(node: &Value, ops: Vec<Value>) -> Value {
        let mut doc = node.clone();
        let patch: json_patch::Patch = serde_json::from_value(json!(ops)).unwrap();
        json_patch::patch(&mut doc, &patch).unwrap();
        doc
    }

    #[test]
    fn release_after_quarantine_gives_the_node_back_as_it_was() {
        for cordoned_before in [false, true] {
            let before = node(cordoned_before);
            let isolated = applied(&before, quarantine_patch(&before, &q()));
            assert_eq!(isolated["spec"]["unschedulable"], true);
            assert_eq!(
                isolated["metadata"]["labels"]["runbook.dev/gpu-health"],
                "ISOLATE"
            );
            assert_eq!(
                isolated["metadata"]["labels"]["runbook.dev/gpu-health-valid-until"],
                "20261203T080000Z"
            );
            assert_eq!(isolated["spec"]["taints"].as_array().unwrap().len(), 2);
            let released = applied(&isolated, release_patch(&isolated, q().key).unwrap());
            let mut expected = before.clone();
            // The empty annotations map the quarantine had to add stays.
            expected["metadata"]["annotations"] = json!({});
            assert_eq!(released, expected, "cordoned before: {cordoned_before}");
            assert_eq!(release_patch(&released, q().key), None);
        }
    }

    #[test]
    fn a_second_quarantine_keeps_the_first_record_of_the_cordon_and_its_time() {
        let before = node(false);
        let once = applied(&before, quarantine_patch(&before, &q()));
        let later = Quarantine {
            since: q().since + 3600,
            ..q()
        };
        let twice = applied(&once, quarantine_patch(&once, &later));
        let record: Value =
            serde_json::from_str(twice["metadata"]["annotations"][q().key].as_str().unwrap())
                .unwrap();
        assert_eq!(record["since"], q().since, "isolated since the first time");
        let released = applied(&twice, release_patch(&twice, q().key).unwrap());
        assert!(released["spec"]["unschedulable"].is_null());
    }

    #[test]
    fn label_values_are_checked() {
        assert!(is_label_value("ISOLATE"));
        assert!(is_label_value("20261203T080000Z"));
        assert!(!is_label_value("2026-12-03T08:00:00Z"));
        assert!(!is_label_value("-x"));
    }
}
