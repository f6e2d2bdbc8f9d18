//! The scheduler: binds pending pods to nodes that are Ready, match selectors and affinity,
//! tolerate the taints and have room for the requests (extended resources such as
//! `nvidia.com/gpu` included); spreads replicas across zones; explains why when none fits.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::placement::{self, Spread};
use super::{events, shared};
use crate::sim::kube::storage::state::{KubeState, built_in_key};
use crate::sim::timestamps::rfc3339;

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    let changed = update_queue(state, dirty);
    // A pod that did not fit may fit once a node joins or capacity frees up; otherwise only
    // new and changed pods need a place.
    let keys: Vec<(String, String)> = if dirty.nodes_changed || dirty.capacity_freed {
        state.unscheduled.iter().cloned().collect()
    } else {
        changed
    };
    let pods = built_in_key("pods");
    let pending: Vec<Value> = keys
        .iter()
        .filter_map(|(namespace, name)| state.store.get(&pods, namespace, name).cloned())
        .collect();
    if pending.is_empty() {
        return;
    }
    // One look at the cluster for the whole pass, kept current as pods are bound: placing a
    // pod costs a pass over the nodes, not over every pod of every node.
    let mut cluster = Cluster::observe(state);
    for pod in pending {
        schedule(state, &mut cluster, pod);
    }
    cluster.remember(state);
}

fn is_pending(pod: &Value) -> bool {
    pod["spec"]["nodeName"].is_null() && pod["status"]["phase"] == "Pending"
}

/// Brings the queue of unscheduled pods up to date with what changed; returns the changed
/// pods that wait for a node.
fn update_queue(state: &mut KubeState, dirty: &Dirty) -> Vec<(String, String)> {
    let pods = built_in_key("pods");
    if dirty.all {
        state.unscheduled = state
            .store
            .list(&pods, None)
            .filter(|p| is_pending(p))
            .map(|p| {
                (
                    shared::namespace(p).to_string(),
                    shared::name(p).to_string(),
                )
            })
            .collect();
        return state.unscheduled.iter().cloned().collect();
    }
    for (namespace, name, _) in &dirty.deleted_pods {
        state.unscheduled.remove(&(namespace.clone(), name.clone()));
    }
    let mut changed = Vec::new();
    for (resource, namespace, name) in &dirty.changed {
        if *resource != pods {
            continue;
        }
        let key = (namespace.clone(), name.clone());
        if state
            .store
            .get(resource, namespace, name)
            .is_some_and(is_pending)
        {
            state.unscheduled.insert(key.clone());
            changed.push(key);
        } else {
            state.unscheduled.remove(&key);
        }
    }
    changed
}

/// What the scheduler knows of one node.
struct NodeView {
    node: Arc<Value>,
    name: String,
    zone: String,
    facts: Arc<NodeFacts>,
    usage: Arc<NodeUsage>,
    /// A pod was bound here this pass: the cache needs the new usage.
    bound: bool,
}

/// What a node offers, read from it once per version of it rather than once per pod.
pub(super) struct NodeFacts {
    ready: bool,
    unschedulable: bool,
    max_pods: usize,
    allocatable: BTreeMap<String, i128>,
}

impl NodeFacts {
    fn of(node: &Value) -> Self {
        let allocatable = &node["status"]["allocatable"];
        Self {
            ready: node_ready(node),
            unschedulable: node["spec"]["unschedulable"] == true,
            max_pods: allocatable["pods"]
                .as_str()
                .map_or(110, |p| p.parse().unwrap_or(110)),
            allocatable: allocatable
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), value_milli(v))).collect())
                .unwrap_or_default(),
        }
    }
}

/// The requests and the number of the non-terminal pods bound to a node.
#[derive(Default, Clone)]
pub(super) struct NodeUsage {
    used: BTreeMap<String, i128>,
    pods: usize,
}

impl NodeUsage {
    fn add(&mut self, requests: &BTreeMap<String, i128>) {
        self.pods += 1;
        for (resource, amount) in requests {
            *self.used.entry(resource.clone()).or_insert(0) += amount;
        }
    }
}

/// The scheduler's memory: what it last read of each node and counted on it, kept until the
/// node or one of its pods changes.
type NodeCaches = HashMap<String, NodeCache>;

/// What the scheduler keeps of a node between passes: its facts for one version of the node,
/// its usage for one state of its pods.
struct NodeCache {
    version: String,
    facts: Arc<NodeFacts>,
    pods_written: u64,
    usage: Arc<NodeUsage>,
}

/// The nodes, and where each owner's pods are (for zone spreading), for one pass: what a
/// pod's placement needs is looked up once and kept current as pods are bound.
struct Cluster {
    nodes: Vec<NodeView>,
    zones: Option<HashMap<String, String>>,
    /// Owner uid -> zone -> how many of its live pods run there.
    owners_by_zone: HashMap<String, HashMap<String, usize>>,
}

impl Cluster {
    fn observe(state: &KubeState) -> Self {
        let nodes: Vec<NodeView> = state
            .store
            .list_shared(&built_in_key("nodes"), None)
            .map(|node| {
                let name = shared::name(&node).to_string();
                let version = node["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default();
                let written = state.store.node_pods_written(&name);
                let cached = state.memory.get::<NodeCaches>().and_then(|c| c.get(&name));
                let facts = match cached {
                    Some(c) if c.version == version => c.facts.clone(),
                    _ => Arc::new(NodeFacts::of(&node)),
                };
                let usage = match cached {
                    Some(c) if c.pods_written == written => c.usage.clone(),
                    _ => Arc::new(Self::usage(state, &name)),
                };
                NodeView {
                    zone: zone_of(&node).to_string(),
                    name,
                    node,
                    facts,
                    usage,
                    bound: false,
                }
            })
            .collect();
        Self {
            nodes,
            zones: None,
            owners_by_zone: HashMap::new(),
        }
    }

    fn usage(state: &KubeState, node: &str) -> NodeUsage {
        let mut usage = NodeUsage::default();
        for (pod, _) in state.store.pods_on_node_with_json(node, None) {
            if !shared::is_terminal(pod) {
                usage.add(&pod_requests(&pod["spec"]));
            }
        }
        usage
    }

    /// Keeps what was looked at for the next pass (only what changed is written).
    fn remember(self, state: &mut KubeState) {
        for view in self.nodes {
            let version = view.node["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default();
            let written = state.store.node_pods_written(&view.name);
            let current = state
                .memory
                .get_mut::<NodeCaches>()
                .get(&view.name)
                .is_some_and(|c| !view.bound && c.version == version && c.pods_written == written);
            if !current {
                state.memory.get_mut::<NodeCaches>().insert(
                    view.name,
                    NodeCache {
                        version: version.to_string(),
                        facts: view.facts,
                        pods_written: written,
                        usage: view.usage,
                    },
                );
            }
        }
    }

    /// Zone -> live pods of `owner` there.
    fn siblings(&mut self, state: &KubeState, owner: &str) -> &HashMap<String, usize> {
        let nodes = &self.nodes;
        let zones = self.zones.get_or_insert_with(|| {
            nodes
                .iter()
                .map(|n| (n.name.clone(), n.zone.clone()))
                .collect()
        });
        self.owners_by_zone
            .entry(owner.to_string())
            .or_insert_with(|| {
                let mut by_zone = HashMap::new();
                for pod in state.store.owned_by(&built_in_key("pods"), owner) {
                    if shared::is_terminal(pod) || owner_uid(pod) != Some(owner) {
                        continue;
                    }
                    if let Some(zone) = pod["spec"]["nodeName"].as_str().and_then(|n| zones.get(n))
                    {
                        *by_zone.entry(zone.clone()).or_insert(0) += 1;
                    }
                }
                by_zone
            })
    }

    /// Records a pod bound to the node at `index`.
    fn bind(&mut self, index: usize, pod: &Value, requests: &BTreeMap<String, i128>) {
        let node = &mut self.nodes[index];
        Arc::make_mut(&mut node.usage).add(requests);
        node.bound = true;
        if let Some(by_zone) = owner_uid(pod).and_then(|o| self.owners_by_zone.get_mut(o)) {
            *by_zone.entry(node.zone.clone()).or_insert(0) += 1;
        }
    }
}

fn zone_of(node: &Value) -> &str {
    node["metadata"]["labels"]["topology.kubernetes.io/zone"]
        .as_str()
        .unwrap_or_default()
}

pub(crate) use crate::sim::kube::storage::quantity::milli as quantity_milli;

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
    view: &NodeView,
    requests: &BTreeMap<String, i128>,
    usage: &NodeUsage,
) -> Verdict {
    let (node, facts) = (&*view.node, &view.facts);
    let spec = &pod["spec"];
    let mut reasons = Vec::new();
    // An unreachable node says so with its taint; a node that is only not ready has none here.
    if !facts.ready && !shared::has_taint(node, super::node_lifecycle::UNREACHABLE, None) {
        reasons.push("node(s) had untolerated taint {node.kubernetes.io/not-ready: }".to_string());
    }
    if facts.unschedulable {
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
    if usage.pods >= facts.max_pods {
        reasons.push("Too many pods".to_string());
    }
    for (resource, request) in requests {
        let capacity = facts.allocatable.get(resource).copied().unwrap_or(0);
        if *request > 0 && usage.used.get(resource).copied().unwrap_or(0) + request > capacity {
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

/// A node the pod fits, by the order the scheduler prefers: preferred affinity, then least
/// crowded spread domain, fewest siblings in its zone, fewest pods, and name.
type Candidate = (i64, usize, usize, usize, String, usize);

fn schedule(state: &mut KubeState, cluster: &mut Cluster, pod: Value) {
    let requests = pod_requests(&pod["spec"]);
    let (mut candidates, tally) = evaluate_nodes(state, cluster, &pod, &requests);
    candidates.sort();
    match candidates.first() {
        Some((_, _, _, _, node_name, index)) => {
            let node_name = node_name.clone();
            cluster.bind(*index, &pod, &requests);
            bind(state, pod, &node_name);
        }
        None => {
            let message = unschedulable_message(cluster.nodes.len(), &tally);
            report_unschedulable(state, pod, &message);
        }
    }
}

/// The nodes the pod fits, and for those it does not, how many gave each reason.
fn evaluate_nodes(
    state: &KubeState,
    cluster: &mut Cluster,
    pod: &Value,
    requests: &BTreeMap<String, i128>,
) -> (Vec<Candidate>, BTreeMap<String, usize>) {
    let mut candidates = Vec::new();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    let siblings = match owner_uid(pod) {
        Some(owner) => cluster.siblings(state, owner).clone(),
        None => HashMap::new(),
    };
    let spread = Spread::observe(state, pod, cluster.nodes.iter().map(|v| &*v.node));
    for (index, view) in cluster.nodes.iter().enumerate() {
        let usage = &view.usage;
        let mut verdict = evaluate(pod, view, requests, usage);
        if verdict.fits
            && let Some(spread) = &spread
            && !spread.allows(&view.node)
        {
            verdict.fits = false;
            verdict
                .reasons
                .push("node(s) didn't match pod topology spread constraints".to_string());
        }
        if verdict.fits {
            let siblings_in_zone = siblings.get(&view.zone).copied().unwrap_or(0);
            let preferred = -placement::preference(&pod["spec"], &view.node);
            let crowding = spread.as_ref().map_or(0, |s| s.crowding(&view.node));
            candidates.push((
                preferred,
                crowding,
                siblings_in_zone,
                usage.pods,
                view.name.clone(),
                index,
            ));
        } else {
            for reason in verdict.reasons {
                *tally.entry(reason).or_insert(0) += 1;
            }
        }
    }
    (candidates, tally)
}

fn bind(state: &mut KubeState, mut pod: Value, node_name: &str) {
    let now = rfc3339(state.now);
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

/// Says why the pod fits nowhere, once per reason: the condition and a FailedScheduling event.
fn report_unschedulable(state: &mut KubeState, mut pod: Value, message: &str) {
    let now = rfc3339(state.now);
    let already = pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "PodScheduled" && c["message"] == message);
    if already {
        return;
    }
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
        message,
        "default-scheduler",
    );
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
