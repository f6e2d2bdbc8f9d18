//! The controllers of the twin: they run after every change until the world is at rest, and
//! ask for timers for what happens later (a container starting, a program finishing).

mod clusterrole_aggregation;
mod daemonset;
mod deployment;
mod device_plugin;
mod dirty;
mod events;
mod gc;
mod gpu_operator;
mod job;
pub(crate) mod karpenter;
mod karpenter_lifecycle;
mod karpenter_pools;
mod kubelet;
mod namespace;
pub(crate) mod node_lifecycle;
pub(crate) mod node_maintenance;
pub(crate) mod node_monitoring;
mod placement;
mod replicaset;
mod scheduler;
mod shared;

pub(crate) use device_plugin::hardware_changed;
pub(crate) use kubelet::fire_timer;

use super::storage::state::KubeState;
use dirty::Dirty;

/// Runs the controllers on what changed until nothing changes any more (bounded, in case two
/// disagree).
pub(crate) fn reconcile(state: &mut KubeState) {
    for _ in 0..20 {
        let dirty = Dirty::since(state, state.settled_at);
        state.settled_at = state.store.resource_version();
        if dirty.is_empty() {
            return;
        }
        gc::run(state, &dirty);
        clusterrole_aggregation::run(state, &dirty);
        deployment::run(state, &dirty);
        replicaset::run(state, &dirty);
        daemonset::run(state, &dirty);
        job::run(state, &dirty);
        scheduler::run(state, &dirty);
        karpenter::run(state, &dirty);
        kubelet::run(state, &dirty);
        gpu_operator::run(state, &dirty);
        device_plugin::run(state, &dirty);
        node_monitoring::run(state, &dirty);
    }
}
