//! Deployments: one ReplicaSet per pod template (named by its hash), older ones scaled to zero.

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::{events, shared};
use crate::sim::kube::storage::state::KubeState;
use crate::sim::timestamps::rfc3339;

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    for deployment in dirty.touched_objects(state, "deployments") {
        reconcile(state, deployment);
    }
}

fn reconcile(state: &mut KubeState, mut deployment: Value) {
    let uid = shared::uid(&deployment).to_string();
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let hash = shared::template_hash(&deployment["spec"]["template"]);
    let rs_name = format!("{}-{hash}", shared::name(&deployment));
    let owned: Vec<Value> = state.owned("replicasets", &uid);
    if !owned.iter().any(|rs| shared::name(rs) == rs_name) {
        create_replica_set(state, &deployment, &rs_name, &hash, owned.len() + 1);
    }
    let counts = scale_replica_sets(state, &deployment, &rs_name, replicas);
    write_status(
        &mut deployment,
        &counts,
        replicas,
        &rs_name,
        &rfc3339(state.now),
    );
    shared::update(state, "deployments", deployment);
}

/// The ReplicaSet of the current pod template, at the Deployment's replicas.
fn create_replica_set(
    state: &mut KubeState,
    deployment: &Value,
    rs_name: &str,
    hash: &str,
    revision: usize,
) {
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let mut template = deployment["spec"]["template"].clone();
    template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
    let mut selector = deployment["spec"]["selector"].clone();
    selector["matchLabels"]["pod-template-hash"] = json!(hash);
    let rs = json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": rs_name,
            "namespace": shared::namespace(deployment),
            "labels": template["metadata"]["labels"],
            "annotations": {"deployment.kubernetes.io/revision": revision.to_string()},
            "ownerReferences": [shared::owner_reference(deployment)],
        },
        "spec": {"replicas": replicas, "selector": selector, "template": template},
    });
    if shared::create(state, "replicasets", rs).is_some() {
        let message = format!("Scaled up replica set {rs_name} from 0 to {replicas}");
        scaling_event(state, deployment, &message);
    }
}

fn scaling_event(state: &mut KubeState, deployment: &Value, message: &str) {
    events::record(
        state,
        deployment,
        false,
        "ScalingReplicaSet",
        message,
        "deployment-controller",
    );
}

/// The replicas of the Deployment's ReplicaSets, summed.
struct Counts {
    total: i64,
    ready: i64,
    /// The current ReplicaSet's.
    updated: i64,
}

/// Scales the current ReplicaSet to `replicas` and the older ones to zero, counting what
/// they run.
fn scale_replica_sets(
    state: &mut KubeState,
    deployment: &Value,
    rs_name: &str,
    replicas: i64,
) -> Counts {
    let owned: Vec<Value> = state.owned("replicasets", shared::uid(deployment));
    let mut counts = Counts {
        total: 0,
        ready: 0,
        updated: 0,
    };
    for mut rs in owned {
        let want = if shared::name(&rs) == rs_name {
            replicas
        } else {
            0
        };
        if rs["spec"]["replicas"].as_i64() != Some(want) {
            let from = rs["spec"]["replicas"].as_i64().unwrap_or(0);
            rs["spec"]["replicas"] = json!(want);
            let verb = if want > from { "up" } else { "down" };
            let message = format!(
                "Scaled {verb} replica set {} from {from} to {want}",
                shared::name(&rs)
            );
            rs = shared::update(state, "replicasets", rs);
            scaling_event(state, deployment, &message);
        }
        counts.total += rs["status"]["replicas"].as_i64().unwrap_or(0);
        counts.ready += rs["status"]["readyReplicas"].as_i64().unwrap_or(0);
        if shared::name(&rs) == rs_name {
            counts.updated = rs["status"]["replicas"].as_i64().unwrap_or(0);
        }
    }
    counts
}

fn write_status(deployment: &mut Value, counts: &Counts, replicas: i64, rs_name: &str, now: &str) {
    let Counts {
        total,
        ready,
        updated,
    } = *counts;
    let complete = ready >= replicas && updated == replicas && total == replicas;
    deployment["status"]["observedGeneration"] = deployment["metadata"]["generation"].clone();
    deployment["status"]["replicas"] = json!(total);
    deployment["status"]["updatedReplicas"] = json!(updated);
    deployment["status"]["readyReplicas"] = json!(ready);
    deployment["status"]["availableReplicas"] = json!(ready);
    deployment["status"]["unavailableReplicas"] = json!((total - ready).max(0));
    let (available, reason) = if ready >= replicas {
        ("True", "MinimumReplicasAvailable")
    } else {
        ("False", "MinimumReplicasUnavailable")
    };
    shared::set_condition(
        deployment,
        json!({"type": "Available", "status": available, "reason": reason, "lastUpdateTime": now,
               "message": if available == "True" { "Deployment has minimum availability." } else { "Deployment does not have minimum availability." }}),
        now,
    );
    let (progress_reason, progress_message) = if complete {
        (
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"{rs_name}\" has successfully progressed."),
        )
    } else {
        (
            "ReplicaSetUpdated",
            format!("ReplicaSet \"{rs_name}\" is progressing."),
        )
    };
    shared::set_condition(
        deployment,
        json!({"type": "Progressing", "status": "True", "reason": progress_reason, "message": progress_message, "lastUpdateTime": now}),
        now,
    );
    for key in ["readyReplicas", "availableReplicas", "unavailableReplicas"] {
        if deployment["status"][key] == 0
            && let Some(status) = deployment["status"].as_object_mut()
        {
            status.remove(key);
        }
    }
}
