//! What each AWS timer does to the AWS side when it fires: resources turn ACTIVE or go,
//! instances boot and terminate, updates finish. The twin adds the Kubernetes side.

use super::state::{AwsState, AwsTimer, Instance, Nodegroup};

/// The AWS side of a timer that changes nothing else (the twin handles the others itself,
/// with the steps below).
pub(crate) fn on_timer(state: &mut AwsState, timer: &AwsTimer) {
    match timer {
        AwsTimer::ClusterActive { cluster } => cluster_active(state, cluster),
        AwsTimer::ClusterDeleted { cluster } => cluster_deleted(state, cluster),
        AwsTimer::AddonActive { cluster, addon } => addon_active(state, cluster, addon),
        AwsTimer::AddonDeleted { cluster, addon } => addon_deleted(state, cluster, addon),
        AwsTimer::NodegroupActive { cluster, nodegroup } => {
            nodegroup_active(state, cluster, nodegroup);
        }
        AwsTimer::NodegroupDeleted { cluster, nodegroup } => {
            state
                .nodegroups
                .remove(&(cluster.clone(), nodegroup.clone()));
        }
        AwsTimer::NatAvailable { id } => nat_available(state, id),
        AwsTimer::NatDeleted { id } => nat_deleted(state, id),
        AwsTimer::UpdateDone { update } => finish_update(state, update),
        AwsTimer::InstanceJoins { .. }
        | AwsTimer::RepairDue { .. }
        | AwsTimer::RepairScan { .. }
        | AwsTimer::InstanceRebooting { .. }
        | AwsTimer::InstanceTerminated { .. }
        | AwsTimer::AddonConfigured { .. } => {}
    }
}

fn cluster_active(state: &mut AwsState, cluster: &str) {
    if let Some(c) = state.clusters.get_mut(cluster) {
        c.config.status = "ACTIVE".into();
    }
}

fn cluster_deleted(state: &mut AwsState, cluster: &str) {
    let now = state.now;
    state.clusters.remove(cluster);
    state.meter.stop(cluster, now);
    state.updates.retain(|_, u| u.cluster != *cluster);
}

fn addon_active(state: &mut AwsState, cluster: &str, addon: &str) {
    if let Some(a) = state
        .clusters
        .get_mut(cluster)
        .and_then(|c| c.addons.get_mut(addon))
    {
        a.status = "ACTIVE".into();
    }
}

fn addon_deleted(state: &mut AwsState, cluster: &str, addon: &str) {
    if let Some(c) = state.clusters.get_mut(cluster) {
        c.addons.remove(addon);
    }
}

/// A new node group turns ACTIVE, or CREATE_FAILED when an instance of it never joined.
fn nodegroup_active(state: &mut AwsState, cluster: &str, nodegroup: &str) {
    let now = state.now;
    let stuck = !pending_instances(state, nodegroup).is_empty();
    if let Some(ng) = state
        .nodegroups
        .get_mut(&(cluster.to_string(), nodegroup.to_string()))
    {
        ng.status = if stuck { "CREATE_FAILED" } else { "ACTIVE" }.into();
        ng.modified_at = now;
    }
}

/// The ids of a node group's instances that are still pending: they never joined.
fn pending_instances(state: &AwsState, nodegroup: &str) -> Vec<String> {
    state
        .instances
        .values()
        .filter(|i| i.nodegroup == nodegroup && i.state == "pending")
        .map(|i| i.id.clone())
        .collect()
}

fn nat_available(state: &mut AwsState, id: &str) {
    if let Some(n) = state.nat_gateways.get_mut(id) {
        n.state = "available".into();
    }
}

fn nat_deleted(state: &mut AwsState, id: &str) {
    let now = state.now;
    if let Some(n) = state.nat_gateways.get_mut(id) {
        n.state = "deleted".into();
    }
    // A deleted NAT gateway lets go of its Elastic IP, which can then be released.
    for address in state.addresses.values_mut() {
        if address.nat_gateway.as_deref() == Some(id) {
            address.nat_gateway = None;
        }
    }
    state.meter.stop(id, now);
}

/// A node group's update finishes: Successful, or Failed naming the instances that never
/// joined (the node group DEGRADED then).
fn finish_update(state: &mut AwsState, id: &str) {
    let Some(record) = state.updates.get(id).cloned() else {
        return;
    };
    let Some(nodegroup) = record.nodegroup.clone() else {
        // A cluster's own update (UpdateClusterConfig).
        super::eks_cluster_config::finish(state, &record);
        return;
    };
    // Only what this update launched: an instance a repair started before it is not its own.
    let stuck: Vec<String> = pending_instances(state, &nodegroup)
        .into_iter()
        .filter(|i| {
            state
                .instances
                .get(i)
                .is_some_and(|i| i.launched_at >= record.created_at)
        })
        .collect();
    if stuck.is_empty() && record.kind == "VersionUpdate" {
        super::eks_versions::finish(state, &record);
    }
    if let Some(u) = state.updates.get_mut(id) {
        if stuck.is_empty() {
            u.status = "Successful".into();
        } else {
            u.status = "Failed".into();
            u.errors.push((
                "NodeCreationFailure".into(),
                "Instances failed to join the kubernetes cluster".into(),
                stuck.clone(),
            ));
        }
    }
    let now = state.now;
    if let Some(ng) = state.nodegroups.get_mut(&(record.cluster, nodegroup)) {
        ng.status = if stuck.is_empty() {
            "ACTIVE"
        } else {
            "DEGRADED"
        }
        .into();
        ng.modified_at = now;
    }
}

/// A booted instance turns running, unless its node group's instances never join (a
/// fault); answers it with its node group, whose labels and taints its Node gets.
pub(crate) fn instance_running(state: &mut AwsState, id: &str) -> Option<(Instance, Nodegroup)> {
    let nodegroup_name = state.instances.get(id)?.nodegroup.clone();
    if state.failing_joins.contains(&nodegroup_name) {
        return None;
    }
    let instance = state.instances.get_mut(id)?;
    instance.state = "running".into();
    let instance = instance.clone();
    let nodegroup = state
        .nodegroups
        .values()
        .find(|n| n.name == nodegroup_name)?
        .clone();
    Some((instance, nodegroup))
}

/// An instance is gone (its meter stops); answers its private IP, which names its Node.
pub(crate) fn instance_terminated(state: &mut AwsState, id: &str) -> Option<String> {
    let now = state.now;
    state.meter.stop(id, now);
    let instance = state.instances.get_mut(id)?;
    instance.state = "terminated".into();
    Some(instance.private_ip.clone())
}
