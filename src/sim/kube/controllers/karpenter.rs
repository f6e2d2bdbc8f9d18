//! The twin's Karpenter, the minimal one seed 004 describes: while its controller pod runs, a
//! pod the scheduler could not place (Pending, Unschedulable) that tolerates and matches a
//! NodePool's nodes gets a NodeClaim, packed with other such pods by what a new node of the
//! pool's instance type offers after its DaemonSets, within the pool's `limits.cpu`. The twin
//! starts its instance, whose node registers with the pool's labels and taints. It reacts to
//! Pending pods only: it does not fill on-premises capacity first and never moves pods back.
//! What becomes of a NodeClaim after that (launched or refused, registered, removed when its
//! node is empty) is `karpenter_lifecycle`'s.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::karpenter_pools::{NODEPOOLS, Pool, fits, pools, take};
use super::scheduler::{pod_requests, quantity_milli};
use super::{events, karpenter_lifecycle, shared};
use crate::sim::kube::storage::api;
use crate::sim::kube::storage::state::{KubeState, built_in_key};
use crate::sim::launch::LaunchRequest;
use crate::sim::timestamps::rfc3339;

pub(crate) use super::karpenter_lifecycle::{empty_expired, launched, registered, retry};

pub(super) const NODECLAIMS: &str = "karpenter.sh/nodeclaims";

/// What the controller remembers between passes.
#[derive(Default)]
pub(crate) struct KarpenterMemory {
    pub(super) claims: BTreeMap<String, Claim>,
    /// Pods waiting for a NodeClaim's node, by (namespace, name).
    pub(super) nominated: BTreeMap<(String, String), String>,
    /// Pods already told their pool is at its limit.
    limited: BTreeSet<(String, String)>,
    /// Registered claims whose node is empty, waiting for `consolidateAfter`.
    pub(super) empty: BTreeSet<String>,
}

pub(super) struct Claim {
    pub(super) pool: String,
    node: Value,
    room: BTreeMap<String, i128>,
    cpu: i128,
    pub(super) phase: Phase,
}

#[derive(Clone, PartialEq)]
pub(super) enum Phase {
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
    karpenter_lifecycle::watch_empty_nodes(state, &pools);
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
    // The scheduler's queue of pods waiting for a node (ordered by namespace and name): those
    // it has found no room for are this controller's.
    let pods_key = built_in_key("pods");
    let pending: Vec<Value> = state
        .unscheduled
        .iter()
        .filter_map(|(namespace, name)| state.store.get(&pods_key, namespace, name))
        .filter(|p| unschedulable(p))
        .cloned()
        .collect();
    for pod in pending {
        place(state, pools, &pod);
    }
}

/// Finds the pod a NodeClaim: a launching one of the first pool that suits it with room left,
/// else a new one; or tells it the pool is at its limit.
fn place(state: &mut KubeState, pools: &[Pool], pod: &Value) {
    let key = (
        shared::namespace(pod).to_string(),
        shared::name(pod).to_string(),
    );
    // A pod waits for its NodeClaim; one whose launch failed is retried when it is deleted.
    let memory = state.memory.get_mut::<KarpenterMemory>();
    if memory
        .nominated
        .get(&key)
        .is_some_and(|claim| memory.claims.contains_key(claim))
    {
        return;
    }
    let requests = pod_requests(&pod["spec"]);
    for pool in pools {
        if try_pool(state, pool, pod, &key, &requests) == Tried::Settled {
            break;
        }
    }
}

#[derive(PartialEq)]
enum Tried {
    /// The pool is not for this pod (no zone it suits, or too small a node): try the next.
    NextPool,
    /// Nominated, told of the limit, or refused by the API: done with this pod for now.
    Settled,
}

/// Whether a node of the pool would take the pod: its selectors and affinity, its taints.
fn suits(pod: &Value, node: &Value) -> bool {
    shared::node_matches(&pod["spec"], node)
        && shared::untolerated_taints(node, &pod["spec"]["tolerations"]).is_empty()
}

fn try_pool(
    state: &mut KubeState,
    pool: &Pool,
    pod: &Value,
    key: &(String, String),
    requests: &BTreeMap<String, i128>,
) -> Tried {
    // A pod that matches no zone of the pool is not this pool's.
    if !pool
        .zones
        .iter()
        .any(|zone| suits(pod, &pool.prospective_node(zone)))
    {
        return Tried::NextPool;
    }
    if join_in_flight(state, pool, pod, key, requests) {
        return Tried::Settled;
    }
    let cpu = quantity_milli(pool.shape.cpu);
    if pool
        .cpu_limit
        .is_some_and(|limit| pool_cpu(state, pool) + cpu > limit)
    {
        tell_limited(state, pool, pod, key);
        return Tried::Settled;
    }
    let zone = next_zone(state, pool, pod);
    let node = pool.prospective_node(&zone);
    let mut room = pool.room(state, &node);
    if !fits(&room, requests) {
        // Too big for a new node of this pool even when empty.
        return Tried::NextPool;
    }
    take(&mut room, requests);
    let Some(name) = create_claim(state, pool, &zone, node.clone()) else {
        return Tried::Settled;
    };
    state.memory.get_mut::<KarpenterMemory>().claims.insert(
        name.clone(),
        Claim {
            pool: pool.name.clone(),
            node,
            room,
            cpu,
            phase: Phase::Launching,
        },
    );
    nominate(state, pod, key, &name);
    Tried::Settled
}

/// Nominates the pod to a claim of the pool still launching that suits it and has room.
fn join_in_flight(
    state: &mut KubeState,
    pool: &Pool,
    pod: &Value,
    key: &(String, String),
    requests: &BTreeMap<String, i128>,
) -> bool {
    let in_flight = state
        .memory
        .get_mut::<KarpenterMemory>()
        .claims
        .iter_mut()
        .find(|(_, c)| {
            c.pool == pool.name
                && matches!(c.phase, Phase::Launching | Phase::Launched(_))
                && suits(pod, &c.node)
                && fits(&c.room, requests)
        });
    let Some((name, claim)) = in_flight else {
        return false;
    };
    take(&mut claim.room, requests);
    let name = name.clone();
    nominate(state, pod, key, &name);
    true
}

/// The CPU the pool's claims hold (a claim whose launch failed holds its share until it is
/// retried).
fn pool_cpu(state: &mut KubeState, pool: &Pool) -> i128 {
    state
        .memory
        .get_mut::<KarpenterMemory>()
        .claims
        .values()
        .filter(|c| c.pool == pool.name)
        .map(|c| c.cpu)
        .sum()
}

/// Tells the pod, once, that its pool is at its CPU limit.
fn tell_limited(state: &mut KubeState, pool: &Pool, pod: &Value, key: &(String, String)) {
    if state
        .memory
        .get_mut::<KarpenterMemory>()
        .limited
        .insert(key.clone())
    {
        let message = format!(
            "Failed to schedule pod, all available instance types exceed limits for nodepool: \"{}\"",
            pool.name
        );
        events::record(state, pod, true, "FailedScheduling", &message, "karpenter");
    }
}

/// The zone of the pool's next node: round the pool's zones from the one after its last
/// claim's, the first the pod suits.
fn next_zone(state: &mut KubeState, pool: &Pool, pod: &Value) -> String {
    let launched = state
        .memory
        .get_mut::<KarpenterMemory>()
        .claims
        .values()
        .filter(|c| c.pool == pool.name)
        .count();
    pool.zones
        .iter()
        .cycle()
        .skip(launched)
        .take(pool.zones.len())
        .find(|zone| suits(pod, &pool.prospective_node(zone)))
        .cloned()
        .unwrap_or_default()
}

fn nominate(state: &mut KubeState, pod: &Value, key: &(String, String), claim: &str) {
    state
        .memory
        .get_mut::<KarpenterMemory>()
        .nominated
        .insert(key.clone(), claim.to_string());
    state
        .memory
        .get_mut::<KarpenterMemory>()
        .limited
        .remove(key);
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
