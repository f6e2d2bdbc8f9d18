//! What an add-on's settings (`configurationValues`) change in the cluster. The twin models
//! the Pod Identity Agent's: `{"daemonsets":{"hybrid":{"create":true}}}` (or
//! `hybrid-bottlerocket`) adds the DaemonSet that runs the agent on hybrid nodes and keeps the
//! cloud DaemonSet off them, as the add-on does; settings without it remove that DaemonSet.

use serde_json::{Value, json};

use crate::sim::kube::storage::api;
use crate::sim::kube::storage::state::KubeState;

const AGENT: &str = "eks-pod-identity-agent";
const HYBRID_AGENT: &str = "eks-pod-identity-agent-hybrid";
const COMPUTE_TYPE: &str = "eks.amazonaws.com/compute-type";

/// Whether settings ask for the hybrid DaemonSet.
fn wants_hybrid_daemonset(configuration: Option<&str>) -> bool {
    let settings: Value = configuration
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null);
    ["hybrid", "hybrid-bottlerocket"]
        .iter()
        .any(|key| settings["daemonsets"][key]["create"] == true)
}

fn node_affinity(operator: &str, values: &[&str]) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": COMPUTE_TYPE, "operator": operator, "values": values}]}
    ]}}})
}

/// Brings the cluster in line with an add-on's settings (only the Pod Identity Agent's have an
/// effect here).
pub(crate) fn apply(state: &mut KubeState, addon: &str, configuration: Option<&str>) {
    if addon != AGENT {
        return;
    }
    let daemonsets = state.built_in("daemonsets");
    let Some(mut agent) = state.object("daemonsets", "kube-system", AGENT) else {
        return;
    };
    let hybrid = wants_hybrid_daemonset(configuration);
    let existing = state.object("daemonsets", "kube-system", HYBRID_AGENT);
    if hybrid == existing.is_some() {
        return;
    }
    if hybrid {
        agent["spec"]["template"]["spec"]["affinity"] =
            node_affinity("NotIn", &["fargate", "hybrid", "auto"]);
        let mut twin = agent.clone();
        if let Some(metadata) = twin["metadata"].as_object_mut() {
            metadata.retain(|key, _| key == "namespace" || key == "labels");
        }
        twin["metadata"]["name"] = json!(HYBRID_AGENT);
        twin["metadata"]["labels"]["app.kubernetes.io/instance"] = json!(AGENT);
        twin["spec"]["selector"] = json!({"matchLabels": {"app.kubernetes.io/name": HYBRID_AGENT}});
        twin["spec"]["template"]["metadata"]["labels"] =
            json!({"app.kubernetes.io/name": HYBRID_AGENT});
        twin["spec"]["template"]["spec"]["affinity"] = node_affinity("In", &["hybrid"]);
        if let Some(status) = twin.as_object_mut() {
            status.remove("status");
        }
        // A create the add-on makes: refused only if the namespace went, which leaves nothing
        // to run it in.
        let _ = api::create(state, &daemonsets, "kube-system", twin, false);
    } else {
        let _ = api::delete(
            state,
            &daemonsets,
            "kube-system",
            HYBRID_AGENT,
            false,
            false,
        );
        if let Some(spec) = agent["spec"]["template"]["spec"].as_object_mut() {
            spec.remove("affinity");
        }
    }
    let _ = api::replace(state, &daemonsets, "kube-system", AGENT, agent, None);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_settings_are_read_as_the_add_on_reads_them() {
        assert!(wants_hybrid_daemonset(Some(
            r#"{"daemonsets":{"hybrid":{"create":true}}}"#
        )));
        assert!(wants_hybrid_daemonset(Some(
            r#"{"daemonsets":{"hybrid-bottlerocket":{"create":true}}}"#
        )));
        assert!(!wants_hybrid_daemonset(Some(
            r#"{"daemonsets":{"hybrid":{"create":false}}}"#
        )));
        assert!(!wants_hybrid_daemonset(Some("{}")));
        assert!(!wants_hybrid_daemonset(None));
        assert!(!wants_hybrid_daemonset(Some("not json")));
    }
}
