//! The twin's Karpenter, the minimal one seed 004 describes: while its controller pod runs, a
//! pod the scheduler could not place (Pending, Unschedulable) that tolerates and matches a
//! NodePool's nodes gets a NodeClaim, packed with other such pods by what a new node of the
//! pool's instance type offers after its DaemonSets, within the pool's `limits.cpu`. The twin
//! starts its instance, whose node registers with the pool's labels and taints. It reacts to
//! Pending pods only: it does not fill on-premises capacity first and never moves pods back. A
//! node left empty goes after the pool's `disruption.consolidateAfter`. A launch EC2 refuses
//! (vCPU quota, subnet addresses) leaves the NodeClaim `Launched=False` with EC2's reason, and
//! is tried again 30 s later.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::karpenter_pools::{NODEPOOLS, Pool, fits, pools, take};
use super::scheduler::{pod_requests, quantity_milli};
use super::{events, shared};
use crate::sim::kube::api;
use crate::sim::kube::state::{KubeState, Timer, built_in_key};
use crate::sim::launch::{LaunchOutcome, LaunchRequest};
use crate::sim::timestamps::rfc3339;

const NODECLAIMS: &str = "karpenter.sh/nodeclaims";
/// How long a NodeClaim whose launch failed stays before Karpenter tries again.
const RETRY_AFTER: Duration = Duration::from_secs(30);

/// What the controller remembers between passes.
#[derive(Default)]
pub struct KarpenterMemory {
    claims: BTreeMap<String, Claim>,
    /// Pods waiting for a NodeClaim's node, by (namespace, name).
    nominated: BTreeMap<(String, String), String>,
    /// Pods already told their pool is at its limit.
    limited: BTreeSet<(String, String)>,
    /// Registered claims whose node is empty, waiting for `consolidateAfter`.
    empty: BTreeSet<String>,
}

struct Claim {
    pool: String,
    node: Value,
    room: BTreeMap<String, i128>,
    cpu: i128,
    phase: Phase,
}

#[derive(Clone, PartialEq)]
enum Phase {
    Launching,
    Launched(String),
    Failed,
    Registered { node: String, instance: String },
}

fn controller_runs(state: &KubeState) -> bool {
    state
        .store
        .list(&built_in_key("pods"), Some("kube-system"))
        .any(|pod| {
            pod["status"]["phase"] == "Running"
                && pod["spec"]["containers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| {
                        c["image"]
                            .as_str()
                            .is_some_and(|i| i.contains("karpenter/controller"))
                    })
        })
}

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    if state.store.list(NODEPOOLS, None).next().is_none()
        || !(dirty.touched("/pods")
            || dirty.nodes_changed
            || dirty.touched(NODEPOOLS)
            || dirty.touched(NODECLAIMS))
        || !controller_runs(state)
    {
        return;
    }
    let pools = pools(state);
    place_pending(state, &pools);
    watch_empty_nodes(state, &pools);
}

fn unschedulable(pod: &Value) -> bool {
    pod["spec"]["nodeName"].is_null()
        && pod["status"]["phase"] == "Pending"
        && !shared::is_terminating(pod)
        && pod["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "PodScheduled" && c["reason"] == "Unschedulable")
}

fn place_pending(state: &mut KubeState, pools: &[Pool]) {
    let mut pending: Vec<Value> = state
        .store
        .list(&built_in_key("pods"), None)
        .filter(|p| unschedulable(p))
        .cloned()
        .collect();
    pending.sort_by(|a, b| {
        (shared::namespace(a), shared::name(a)).cmp(&(shared::namespace(b), shared::name(b)))
    });
    for pod in pending {
        let key = (
            shared::namespace(&pod).to_string(),
            shared::name(&pod).to_string(),
        );
        // A pod waits for its NodeClaim; one whose launch failed is retried when it is deleted.
        if state
            .karpenter
            .nominated
            .get(&key)
            .is_some_and(|claim| state.karpenter.claims.contains_key(claim))
        {
            continue;
        }
        let requests = pod_requests(&pod["spec"]);
        for pool in pools {
            let matches = |node: &Value| {
                shared::node_matches(&pod["spec"], node)
                    && shared::untolerated_taints(node, &pod["spec"]["tolerations"]).is_empty()
            };
            // A pod that matches no zone of the pool is not this pool's.
            if !pool
                .zones
                .iter()
                .any(|zone| matches(&pool.prospective_node(zone)))
            {
                continue;
            }
            let in_flight = state.karpenter.claims.iter_mut().find(|(_, c)| {
                c.pool == pool.name
                    && matches!(c.phase, Phase::Launching | Phase::Launched(_))
                    && matches(&c.node)
                    && fits(&c.room, &requests)
            });
            if let Some((name, claim)) = in_flight {
                take(&mut claim.room, &requests);
                let name = name.clone();
                nominate(state, &pod, &key, &name);
                break;
            }
            let used: i128 = state
                .karpenter
                .claims
                .values()
                // A claim whose launch failed holds its share until it is retried.
                .filter(|c| c.pool == pool.name)
                .map(|c| c.cpu)
                .sum();
            let cpu = quantity_milli(pool.shape.cpu);
            if pool.cpu_limit.is_some_and(|limit| used + cpu > limit) {
                if state.karpenter.limited.insert(key.clone()) {
                    let message = format!(
                        "Failed to schedule pod, all available instance types exceed limits for nodepool: \"{}\"",
                        pool.name
                    );
                    events::record(state, &pod, true, "FailedScheduling", &message, "karpenter");
                }
                break;
            }
            let launched = state
                .karpenter
                .claims
                .values()
                .filter(|c| c.pool == pool.name)
                .count();
            let zone = pool
                .zones
                .iter()
                .cycle()
                .skip(launched)
                .take(pool.zones.len())
                .find(|zone| matches(&pool.prospective_node(zone)))
                .cloned()
                .unwrap_or_default();
            let node = pool.prospective_node(&zone);
            let mut room = pool.room(state, &node);
            if !fits(&room, &requests) {
                // Too big for a new node of this pool even when empty.
                continue;
            }
            take(&mut room, &requests);
            let Some(name) = create_claim(state, pool, &zone, node.clone()) else {
                break;
            };
            state.karpenter.claims.insert(
                name.clone(),
                Claim {
                    pool: pool.name.clone(),
                    node,
                    room,
                    cpu,
                    phase: Phase::Launching,
                },
            );
            nominate(state, &pod, &key, &name);
            break;
        }
    }
}

fn nominate(state: &mut KubeState, pod: &Value, key: &(String, String), claim: &str) {
    state
        .karpenter
        .nominated
        .insert(key.clone(), claim.to_string());
    state.karpenter.limited.remove(key);
    let message = format!("Pod should schedule on: nodeclaim/{claim}");
    events::record(state, pod, false, "Nominated", &message, "karpenter");
}

/// Creates the NodeClaim object and queues its instance's launch; its name, or None when the
/// API refused it (the NodeClaim CRD is gone).
fn create_claim(state: &mut KubeState, pool: &Pool, zone: &str, node: Value) -> Option<String> {
    let resource = state.resource("karpenter.sh/v1", "NodeClaim")?;
    let name = format!("{}-{}", pool.name, state.next_suffix(5));
    let labels = node["metadata"]["labels"].clone();
    let claim = json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": name,
            "labels": labels,
            "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": pool.name, "uid": pool.uid, "blockOwnerDeletion": true}],
        },
        "spec": {
            "nodeClassRef": pool.spec["template"]["spec"]["nodeClassRef"],
            "requirements": pool.spec["template"]["spec"]["requirements"],
            "taints": pool.taints,
            "resources": {"requests": {}},
        },
        "status": {"conditions": [{"type": "Launched", "status": "Unknown", "reason": "AwaitingReconciliation", "message": "", "lastTransitionTime": rfc3339(state.now)}]},
    });
    api::create(state, &resource, "", claim, false).ok()?;
    let labels = labels
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect();
    let taints = pool
        .taints
        .iter()
        .map(|t| {
            let text = |key: &str| t[key].as_str().unwrap_or_default().to_string();
            (text("key"), text("value"), text("effect"))
        })
        .collect();
    state.launch_requests.push(LaunchRequest {
        nodeclaim: name.clone(),
        nodepool: pool.name.clone(),
        instance_type: pool.instance_type.to_string(),
        zone: zone.to_string(),
        labels,
        taints,
    });
    Some(name)
}

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
pub fn launched(state: &mut KubeState, outcome: &LaunchOutcome) {
    match outcome {
        LaunchOutcome::Launched {
            nodeclaim,
            instance,
            zone,
        } => {
            if let Some(claim) = state.karpenter.claims.get_mut(nodeclaim) {
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
            if let Some(claim) = state.karpenter.claims.get_mut(nodeclaim) {
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
pub fn registered(state: &mut KubeState, nodeclaim: &str, node: &str) {
    let Some(claim) = state.karpenter.claims.get_mut(nodeclaim) else {
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
        .karpenter
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
pub fn retry(state: &mut KubeState, nodeclaim: &str) {
    if state
        .karpenter
        .claims
        .get(nodeclaim)
        .is_some_and(|c| c.phase == Phase::Failed)
    {
        state.karpenter.claims.remove(nodeclaim);
        state
            .karpenter
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

fn watch_empty_nodes(state: &mut KubeState, pools: &[Pool]) {
    let registered: Vec<(String, String, String)> = state
        .karpenter
        .claims
        .iter()
        .filter_map(|(name, c)| match &c.phase {
            Phase::Registered { node, .. } => Some((name.clone(), node.clone(), c.pool.clone())),
            _ => None,
        })
        .collect();
    for (claim, node, pool) in registered {
        if workload_pods_on(state, &node) > 0 {
            state.karpenter.empty.remove(&claim);
        } else if state.karpenter.empty.insert(claim.clone()) {
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
pub fn empty_expired(state: &mut KubeState, nodeclaim: &str) {
    if !state.karpenter.empty.contains(nodeclaim) {
        return;
    }
    let Some(Phase::Registered { node, instance }) = state
        .karpenter
        .claims
        .get(nodeclaim)
        .map(|c| c.phase.clone())
    else {
        return;
    };
    if workload_pods_on(state, &node) > 0 {
        state.karpenter.empty.remove(nodeclaim);
        return;
    }
    state.karpenter.empty.remove(nodeclaim);
    state.karpenter.claims.remove(nodeclaim);
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
