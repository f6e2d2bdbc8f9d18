//! What slows a collective between nodes besides its fabric's published figure: the node
//! count (figures fall as rings grow, lab/nccl_scale.rs), a node's NIC or one of its EFA
//! interfaces (a ring goes at its slowest member), and a slow network node whose links the
//! run's traffic crosses (it has nodes both under that network node and outside it).

use std::collections::BTreeSet;

use serde_json::Value;

use super::programs::{faults_of, network_nodes, node_gpus, node_name, node_named};
use crate::lab::nccl_scale::{self, Collective};
use crate::sim::kube::storage::state::KubeState;

/// The share of the two-node figure a run over `nodes` (distinct, more than one) gets, EFA or
/// not: `efa` says whether EFA carries it (an EFA interface that is down only slows EFA).
pub(super) fn share(state: &KubeState, nodes: &[&Value], collective: Collective, efa: bool) -> f64 {
    let mut share = state.network_share.unwrap_or(1.0);
    if efa && let Some(first) = nodes.first() {
        let kind = super::programs::instance_type(first);
        let count = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
        share *= nccl_scale::share_of_two_nodes(kind, collective, count);
    }
    share *= nodes
        .iter()
        .map(|node| node_share(state, node, efa))
        .fold(1.0, f64::min);
    share * crossed_slow_links(state, nodes)
}

/// What one node's network lets it send: its NIC's share, and with an EFA interface down, the
/// share its rail keeps (a p5's GPU sends over 4 of its 32 interfaces: one down leaves 3/4).
fn node_share(state: &KubeState, node: &Value, efa: bool) -> f64 {
    let Some(faults) = faults_of(state, node_name(node)) else {
        return 1.0;
    };
    let mut share = faults.nic_share.unwrap_or(1.0);
    if efa && let Some(down) = faults.efa_down {
        let interfaces = f64::from(super::efa::interfaces(node));
        let per_gpu = (interfaces / f64::from(node_gpus(node).max(1))).max(1.0);
        share *= (1.0 - f64::from(down) / per_gpu).max(0.0);
    }
    share
}

/// The slowest of the slow network nodes whose uplinks the run crosses.
fn crossed_slow_links(state: &KubeState, nodes: &[&Value]) -> f64 {
    if state.slow_network_nodes.is_empty() {
        return 1.0;
    }
    let placed: Vec<BTreeSet<String>> = nodes
        .iter()
        .map(|node| network_nodes(node).into_iter().collect())
        .collect();
    state
        .slow_network_nodes
        .iter()
        .filter_map(|(target, share)| Some((network_node(state, target)?, *share)))
        .filter(|(id, _)| {
            let under = placed.iter().filter(|p| p.contains(id)).count();
            under > 0 && under < placed.len()
        })
        .map(|(_, share)| share)
        .fold(1.0, f64::min)
}

/// The network node a fault names: `nn-...` itself, or the block of the node it names.
fn network_node(state: &KubeState, target: &str) -> Option<String> {
    if target.starts_with("nn-") {
        return Some(target.to_string());
    }
    network_nodes(&node_named(state, target)?).pop()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::sim::kube::storage::state::built_in_key;

    /// 8 p5 nodes, `ip-0`..`ip-7`, 4 under block `nn-a` and 4 under `nn-b`, one spine.
    fn fleet() -> KubeState {
        let mut state = KubeState::default();
        for i in 0..8 {
            let block = if i < 4 { "nn-a" } else { "nn-b" };
            let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("ip-{i}"), "labels": {
                "node.kubernetes.io/instance-type": "p5.48xlarge",
                "topology.k8s.aws/network-node-layer-1": "nn-spine",
                "topology.k8s.aws/network-node-layer-2": "nn-mid",
                "topology.k8s.aws/network-node-layer-3": block,
            }}, "status": {"capacity": {"nvidia.com/gpu": "8"}}});
            state
                .store
                .create(&built_in_key("nodes"), node, Duration::ZERO);
        }
        state
    }

    fn pace(state: &KubeState, names: &[usize], efa: bool) -> f64 {
        let nodes: Vec<Value> = names
            .iter()
            .map(|i| state.object("nodes", "", &format!("ip-{i}")).unwrap())
            .collect();
        let nodes: Vec<&Value> = nodes.iter().collect();
        share(state, &nodes, Collective::AllReduce, efa)
    }

    #[test]
    fn a_slow_block_slows_only_the_runs_that_leave_it() {
        let mut state = fleet();
        assert_eq!(pace(&state, &[0, 1], true), 1.0);
        // Four nodes get the published 4-node share of the 2-node figure.
        assert!((pace(&state, &[0, 1, 2, 3], true) - 356.99 / 477.71).abs() < 1e-9);
        state.slow_network_nodes.insert("nn-a".into(), 0.4);
        assert_eq!(pace(&state, &[0, 1], true), 1.0, "inside the block");
        assert_eq!(pace(&state, &[4, 5], true), 1.0, "the other block");
        assert!((pace(&state, &[0, 4], true) - 0.4).abs() < 1e-9, "across");
    }

    #[test]
    fn a_straggler_or_a_down_efa_interface_sets_the_pace_of_every_run_it_is_in() {
        let mut state = fleet();
        state.hardware.entry("ip-2").nic_share = Some(0.5);
        state.hardware.entry("ip-6").efa_down = Some(1);
        assert_eq!(pace(&state, &[2, 3], true), 0.5);
        // One of a GPU's four interfaces down leaves its rail three quarters.
        assert_eq!(pace(&state, &[6, 7], true), 0.75);
        assert_eq!(pace(&state, &[6, 7], false), 1.0, "sockets do not use EFA");
        assert_eq!(pace(&state, &[0, 1], true), 1.0);
    }
}
