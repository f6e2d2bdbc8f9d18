//! What happens to the twin's Karpenter's NodeClaims after they are made: EC2's answer to the
//! launch (Launched, or refused and tried again 30 s later), the node registering, and an
//! empty node removed after its pool's `consolidateAfter` (tainted, its NodeClaim deleted, its
//! instance terminated).

use std::time::Duration;

use serde_json::{Value, json};

use super::karpenter::{KarpenterMemory, NODECLAIMS, Phase};
use super::karpenter_pools::Pool;
use super::{events, shared};
use crate::sim::kube::storage::state::{KubeState, Timer};
use crate::sim::launch::LaunchOutcome;
use crate::sim::timestamps::rfc3339;

/// How long a NodeClaim whose launch failed stays before Karpenter tries again.
const RETRY_AFTER: Duration = Duration::from_secs(30);

/// Sets one condition of a NodeClaim (and more status fields).
fn update_claim(state: &mut KubeState, name: &str, condition: Value, fields: Value) {
    let Some(mut claim) = state.store.get(NODECLAIMS, "", name).cloned() else {
        return;
    };
    let now = rfc3339(state.now);
    shared::set_condition(&mut claim, condition, &now);
    for (key, value) in fields.as_object().into_iter().flatten() {
        claim["status"][key] = value.clone();
    }
    state.store.update(NODECLAIMS, claim);
}

/// EC2's answer to a launch.
pub(crate) fn launched(state: &mut KubeState, outcome: &LaunchOutcome) {
    match outcome {
        LaunchOutcome::Launched {
            nodeclaim,
            instance,
            zone,
        } => {
            if let Some(claim) = state
                .memory
                .get_mut::<KarpenterMemory>()
                .claims
                .get_mut(nodeclaim)
            {
                claim.phase = Phase::Launched(instance.clone());
            }
            update_claim(
                state,
                nodeclaim,
                json!({"type": "Launched", "status": "True", "reason": "Launched", "message": ""}),
                json!({"providerID": format!("aws:///{zone}/{instance}")}),
            );
        }
        LaunchOutcome::Failed {
            nodeclaim,
            code,
            message,
        } => {
            if let Some(claim) = state
                .memory
                .get_mut::<KarpenterMemory>()
                .claims
                .get_mut(nodeclaim)
            {
                claim.phase = Phase::Failed;
            }
            update_claim(
                state,
                nodeclaim,
                json!({"type": "Launched", "status": "False", "reason": code, "message": message}),
                json!({}),
            );
            if let Some(claim) = state.store.get(NODECLAIMS, "", nodeclaim).cloned() {
                events::record(
                    state,
                    &claim,
                    true,
                    "FailedLaunching",
                    &format!("{code}: {message}"),
                    "karpenter",
                );
            }
            state.schedule(
                RETRY_AFTER,
                Timer::KarpenterRetry {
                    nodeclaim: nodeclaim.clone(),
                },
            );
        }
    }
}

/// A NodeClaim's node has joined the cluster.
pub(crate) fn registered(state: &mut KubeState, nodeclaim: &str, node: &str) {
    let Some(claim) = state
        .memory
        .get_mut::<KarpenterMemory>()
        .claims
        .get_mut(nodeclaim)
    else {
        return;
    };
    let instance = match &claim.phase {
        Phase::Launched(instance) => instance.clone(),
        _ => return,
    };
    claim.phase = Phase::Registered {
        node: node.to_string(),
        instance,
    };
    state
        .memory
        .get_mut::<KarpenterMemory>()
        .nominated
        .retain(|_, claim| claim != nodeclaim);
    for kind in ["Registered", "Initialized"] {
        update_claim(
            state,
            nodeclaim,
            json!({"type": kind, "status": "True", "reason": kind, "message": ""}),
            json!({"nodeName": node}),
        );
    }
}

/// A failed NodeClaim is deleted; its pods are Pending again, and the next pass tries anew.
pub(crate) fn retry(state: &mut KubeState, nodeclaim: &str) {
    if state
        .memory
        .get_mut::<KarpenterMemory>()
        .claims
        .get(nodeclaim)
        .is_some_and(|c| c.phase == Phase::Failed)
    {
        state
            .memory
            .get_mut::<KarpenterMemory>()
            .claims
            .remove(nodeclaim);
        state
            .memory
            .get_mut::<KarpenterMemory>()
            .nominated
            .retain(|_, claim| claim != nodeclaim);
        // The deletion is the change that brings the controller back to the waiting pods.
        state.store.remove(NODECLAIMS, "", nodeclaim);
    }
}

/// Pods that keep a node from being empty: any that is not a DaemonSet's and not over.
fn workload_pods_on(state: &KubeState, node: &str) -> usize {
    state
        .store
        .pods_on_node_with_json(node, None)
        .filter(|(p, _)| {
            !shared::is_terminal(p)
                && !shared::is_terminating(p)
                && p["metadata"]["ownerReferences"][0]["kind"] != "DaemonSet"
        })
        .count()
}

pub(super) fn watch_empty_nodes(state: &mut KubeState, pools: &[Pool]) {
    let registered: Vec<(String, String, String)> = state
        .memory
        .get_mut::<KarpenterMemory>()
        .claims
        .iter()
        .filter_map(|(name, c)| match &c.phase {
            Phase::Registered { node, .. } => Some((name.clone(), node.clone(), c.pool.clone())),
            _ => None,
        })
        .collect();
    for (claim, node, pool) in registered {
        if workload_pods_on(state, &node) > 0 {
            state
                .memory
                .get_mut::<KarpenterMemory>()
                .empty
                .remove(&claim);
        } else if state
            .memory
            .get_mut::<KarpenterMemory>()
            .empty
            .insert(claim.clone())
        {
            let after = pools
                .iter()
                .find(|p| p.name == pool)
                .map_or(Duration::from_secs(30), |p| p.consolidate_after);
            state.schedule(after, Timer::KarpenterEmpty { nodeclaim: claim });
        }
    }
}

/// `consolidateAfter` has passed for an empty node: Karpenter taints it, deletes its
/// NodeClaim and terminates its instance; the node leaves once the instance is gone.
pub(crate) fn empty_expired(state: &mut KubeState, nodeclaim: &str) {
    if !state
        .memory
        .get_mut::<KarpenterMemory>()
        .empty
        .contains(nodeclaim)
    {
        return;
    }
    let Some(Phase::Registered { node, instance }) = state
        .memory
        .get_mut::<KarpenterMemory>()
        .claims
        .get(nodeclaim)
        .map(|c| c.phase.clone())
    else {
        return;
    };
    if workload_pods_on(state, &node) > 0 {
        state
            .memory
            .get_mut::<KarpenterMemory>()
            .empty
            .remove(nodeclaim);
        return;
    }
    state
        .memory
        .get_mut::<KarpenterMemory>()
        .empty
        .remove(nodeclaim);
    state
        .memory
        .get_mut::<KarpenterMemory>()
        .claims
        .remove(nodeclaim);
    if let Some(mut object) = state.object("nodes", "", &node) {
        let mut taints = object["spec"]["taints"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        taints.push(json!({"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}));
        object["spec"]["taints"] = json!(taints);
        let object = shared::update(state, "nodes", object);
        events::record(
            state,
            &object,
            false,
            "DisruptionTerminating",
            "Disrupting Node: Empty/Delete",
            "karpenter",
        );
    }
    state.store.remove(NODECLAIMS, "", nodeclaim);
    state.terminate_requests.push(instance);
}
