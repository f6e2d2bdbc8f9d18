//! Node group scaling: launching and terminating instances, and the update that tracks it.

use std::time::Duration;

use super::eks_records::{in_use, nodegroup_missing};
use super::error::AwsError;
use super::state::{
    AwsState, AwsTimer, Instance, LaunchTemplate, Nodegroup, SHUTDOWN_DELAY, Update, join_delay,
};
use crate::lab;

/// UpdateNodegroupConfig's new sizes (those not given stay): instances start or stop to
/// reach the desired size, and the update turns Successful once they have.
pub(crate) fn update_config(
    state: &mut AwsState,
    cluster: &str,
    name: &str,
    desired: Option<i64>,
    min: Option<i64>,
    max: Option<i64>,
) -> Result<Update, AwsError> {
    let key = (cluster.to_string(), name.to_string());
    let current = state
        .nodegroups
        .get(&key)
        .cloned()
        .ok_or_else(|| nodegroup_missing(name))?;
    let (min, max) = (min.unwrap_or(current.min), max.unwrap_or(current.max));
    let desired = desired.unwrap_or(current.desired);
    super::parameters::scaling(
        min,
        desired,
        max,
        super::parameters::Sizing::UpdateNodegroupConfig,
    )?;
    if current.status == "UPDATING" {
        return Err(in_use(format!(
            "Nodegroup {name} is currently being updated"
        )));
    }
    let params = changed_sizes(&current, desired, min, max);
    let id = state.next_uuid();
    let update = Update {
        id: id.clone(),
        errors: Vec::new(),
        cluster: cluster.into(),
        nodegroup: Some(name.into()),
        kind: "ConfigUpdate".into(),
        status: "InProgress".into(),
        params,
        created_at: state.now,
    };
    state.updates.insert(id.clone(), update.clone());
    let now = state.now;
    if let Some(ng) = state.nodegroups.get_mut(&key) {
        resize(ng, (min, max, desired), now);
    }
    let longest = scale_to(state, &current, desired);
    state.schedule(longest, AwsTimer::UpdateDone { update: id });
    Ok(update)
}

/// A node group takes its new sizes and is UPDATING until its instances match them.
fn resize(ng: &mut Nodegroup, (min, max, desired): (i64, i64, i64), now: Duration) {
    ng.desired = desired;
    ng.min = min;
    ng.max = max;
    ng.status = "UPDATING".into();
    ng.modified_at = now;
}

/// The update's params: each size that changes, as EKS lists them.
fn changed_sizes(current: &Nodegroup, desired: i64, min: i64, max: i64) -> Vec<(String, String)> {
    let mut params = vec![];
    if desired != current.desired {
        params.push(("DesiredSize".to_string(), desired.to_string()));
    }
    if min != current.min {
        params.push(("MinSize".to_string(), min.to_string()));
    }
    if max != current.max {
        params.push(("MaxSize".to_string(), max.to_string()));
    }
    params
}

/// Starts or stops instances until the node group runs `desired`; returns how long that takes.
fn scale_to(state: &mut AwsState, nodegroup: &Nodegroup, desired: i64) -> Duration {
    let live = state.live_instances(&nodegroup.name).len();
    if (live as i64) < desired {
        launch(state, nodegroup, live, desired as usize)
    } else {
        terminate_newest(state, &nodegroup.name, live - desired as usize)
    }
}

/// Launches instances number `from..to` of a node group (spread over its subnets in order);
/// returns how long until the last one has joined.
pub(crate) fn launch(
    state: &mut AwsState,
    nodegroup: &Nodegroup,
    from: usize,
    to: usize,
) -> Duration {
    let mut longest = Duration::from_secs(5);
    let now = state.now;
    // The template's placement group and EFA interfaces go to every instance it starts.
    let template = nodegroup
        .launch_template
        .as_ref()
        .and_then(|lt| state.launch_templates.get(&lt.id))
        .cloned();
    // Spread over the subnets the way the seed's Auto Scaling group placed `primary`
    // (2a, then 2c, then 2b): every other subnet first.
    let order: Vec<&String> = nodegroup
        .subnets
        .iter()
        .step_by(2)
        .chain(nodegroup.subnets.iter().skip(1).step_by(2))
        .collect();
    for index in from..to {
        let Some(subnet) = order.get(index % order.len().max(1)).map(|s| (*s).clone()) else {
            break;
        };
        let instance = new_instance(state, nodegroup, subnet, template.as_ref());
        let delay = join_delay(&instance.instance_type);
        longest = longest.max(delay);
        state.schedule(
            delay,
            AwsTimer::InstanceJoins {
                instance: instance.id.clone(),
            },
        );
        state
            .meter
            .start(&instance.id, &instance.instance_type, now);
        state.instances.insert(instance.id.clone(), instance);
    }
    longest
}

/// A pending instance of a node group in `subnet`, with its launch template's placement.
fn new_instance(
    state: &mut AwsState,
    nodegroup: &Nodegroup,
    subnet: String,
    template: Option<&LaunchTemplate>,
) -> Instance {
    let zone = state
        .subnets
        .get(&subnet)
        .map_or("ap-northeast-2a".to_string(), |s| s.zone.clone());
    let network_nodes = super::topology::place(state, &nodegroup.instance_type, &zone);
    Instance {
        id: state.next_id("i"),
        nodegroup: nodegroup.name.clone(),
        instance_type: nodegroup.instance_type.clone(),
        private_ip: state.next_private_ip(&subnet),
        subnet,
        zone,
        state: "pending".into(),
        groups: launch_groups(state, nodegroup),
        ami: if nodegroup.ami_type.contains("NVIDIA") {
            lab::AMI_NVIDIA.into()
        } else {
            lab::AMI_STANDARD.into()
        },
        launched_at: state.now,
        placement_group: template.and_then(|t| t.placement_group.clone()),
        efa_interfaces: template.map_or(0, |t| t.efa_interfaces()),
        network_nodes,
    }
}

/// The security groups a new instance of a node group gets: those of its launch template,
/// which the twin reads off an instance the group (or another of its cluster) already runs, so
/// that a twin of a captured account launches into the account's groups; the lab's node
/// groups otherwise.
fn launch_groups(state: &AwsState, nodegroup: &Nodegroup) -> Vec<String> {
    let of_cluster = |i: &&Instance| {
        state
            .nodegroups
            .contains_key(&(nodegroup.cluster.clone(), i.nodegroup.clone()))
    };
    let instances = || state.instances.values().filter(|i| i.state != "terminated");
    instances()
        .find(|i| i.nodegroup == nodegroup.name)
        .or_else(|| instances().find(of_cluster))
        .map_or_else(
            || vec![lab::NODE_SG.into(), lab::AUX_SG.into()],
            |i| i.groups.clone(),
        )
}

/// Shuts down one instance (a repair replacing it, or TerminateInstances): it is gone after
/// the shutdown delay.
pub(crate) fn terminate_instance(state: &mut AwsState, id: &str) {
    let Some(instance) = state.instances.get_mut(id) else {
        return;
    };
    if !matches!(instance.state.as_str(), "pending" | "running") {
        return;
    }
    instance.state = "shutting-down".into();
    state.schedule(
        SHUTDOWN_DELAY,
        AwsTimer::InstanceTerminated {
            instance: id.to_string(),
        },
    );
}

/// Shuts down a node group's `count` newest instances, as the Auto Scaling group's default
/// termination policy does; returns how long until they are gone.
pub(crate) fn terminate_newest(state: &mut AwsState, nodegroup: &str, count: usize) -> Duration {
    let mut live: Vec<Instance> = state
        .live_instances(nodegroup)
        .into_iter()
        .cloned()
        .collect();
    live.sort_by(|a, b| b.launched_at.cmp(&a.launched_at).then(b.id.cmp(&a.id)));
    let mut longest = Duration::from_secs(5);
    for instance in live.into_iter().take(count) {
        if let Some(i) = state.instances.get_mut(&instance.id) {
            i.state = "shutting-down".into();
        }
        longest = longest.max(SHUTDOWN_DELAY);
        state.schedule(
            SHUTDOWN_DELAY,
            AwsTimer::InstanceTerminated {
                instance: instance.id.clone(),
            },
        );
    }
    longest
}
