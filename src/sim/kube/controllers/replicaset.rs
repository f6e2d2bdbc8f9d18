//! ReplicaSets: as many live pods as `replicas`, scaling in the way the seed describes
//! (unassigned first, then Pending, Unknown, Running; not-ready before ready; lower
//! `controller.kubernetes.io/pod-deletion-cost` first).

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::{events, shared};
use crate::sim::kube::storage::state::KubeState;

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    for rs in dirty.touched_objects(state, "replicasets") {
        reconcile(state, rs);
    }
}

/// Sort key: pods that should go first sort first.
fn deletion_rank(pod: &Value) -> (u8, u8, u8, i64, std::cmp::Reverse<String>) {
    let assigned = u8::from(pod["spec"]["nodeName"].is_string());
    let phase = match pod["status"]["phase"].as_str() {
        Some("Pending") => 0,
        Some("Unknown") => 1,
        _ => 2,
    };
    let ready = u8::from(shared::pod_ready(pod));
    let cost = pod["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"]
        .as_str()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (
        assigned,
        phase,
        ready,
        cost,
        std::cmp::Reverse(
            pod["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ),
    )
}

fn reconcile(state: &mut KubeState, mut rs: Value) {
    let uid = shared::uid(&rs).to_string();
    let replicas = rs["spec"]["replicas"].as_i64().unwrap_or(1).max(0) as usize;
    let mut pods: Vec<Value> = state
        .owned("pods", &uid)
        .into_iter()
        .filter(|p| !shared::is_terminal(p) && !shared::is_terminating(p))
        .collect();
    while pods.len() < replicas {
        let name = format!("{}-{}", shared::name(&rs), state.next_suffix(5));
        let Some(pod) = shared::create(
            state,
            "pods",
            shared::pod_from_template(&rs, name.clone(), &[]),
        ) else {
            break;
        };
        events::record(
            state,
            &rs,
            false,
            "SuccessfulCreate",
            &format!("Created pod: {name}"),
            "replicaset-controller",
        );
        pods.push(pod);
    }
    if pods.len() > replicas {
        pods.sort_by_key(deletion_rank);
        let excess = pods.len() - replicas;
        for pod in pods.drain(..excess) {
            shared::remove(state, "pods", &pod);
            events::record(
                state,
                &rs,
                false,
                "SuccessfulDelete",
                &format!("Deleted pod: {}", shared::name(&pod)),
                "replicaset-controller",
            );
        }
    }
    let ready = pods.iter().filter(|p| shared::pod_ready(p)).count();
    rs["status"] = json!({
        "replicas": pods.len(),
        "fullyLabeledReplicas": pods.len(),
        "readyReplicas": ready,
        "availableReplicas": ready,
        "observedGeneration": rs["metadata"]["generation"],
    });
    if ready == 0
        && let Some(status) = rs["status"].as_object_mut()
    {
        status.remove("readyReplicas");
        status.remove("availableReplicas");
    }
    shared::update(state, "replicasets", rs);
}
