//! Node group scaling: launching and terminating instances, and the update that tracks it.

use super::error::AwsError;
use super::state::{AwsState, AwsTimer, Instance, SHUTDOWN_DELAY, Update, join_delay};
use crate::lab;

pub fn update_config(
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
        .ok_or_else(|| AwsError::not_found(format!("No node group found for name: {name}.")))?;
    let (min, max) = (min.unwrap_or(current.min), max.unwrap_or(current.max));
    let desired = desired.unwrap_or(current.desired);
    if min < 0 || max < 1 || desired < 0 {
        return Err(AwsError::invalid_parameter(
            "Minimum capacity can't be negative and maximum capacity must be at least 1",
        ));
    }
    if desired > max {
        return Err(AwsError::invalid_parameter(format!(
            "desired capacity {desired} can't be greater than max size {max}"
        )));
    }
    if desired < min {
        return Err(AwsError::invalid_parameter(format!(
            "desired capacity {desired} can't be lower than min size {min}"
        )));
    }
    if current.status == "UPDATING" {
        return Err(AwsError::new(
            409,
            "ResourceInUseException",
            format!("Nodegroup {name} is currently being updated"),
        ));
    }
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
    let id = state.next_uuid();
    let update = Update {
        id: id.clone(),
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
        ng.desired = desired;
        ng.min = min;
        ng.max = max;
        ng.status = "UPDATING".into();
        ng.modified_at = now;
    }
    let live: Vec<Instance> = state.live_instances(name).into_iter().cloned().collect();
    let mut longest = std::time::Duration::from_secs(5);
    if (live.len() as i64) < desired {
        for index in live.len() as i64..desired {
            let subnet = current.subnets[(index as usize) % current.subnets.len().max(1)].clone();
            let zone = state
                .subnets
                .get(&subnet)
                .map_or("ap-northeast-2a".to_string(), |s| s.zone.clone());
            let instance = Instance {
                id: state.next_id("i"),
                nodegroup: name.into(),
                instance_type: current.instance_type.clone(),
                private_ip: state.next_private_ip(&subnet),
                subnet,
                zone,
                state: "pending".into(),
                groups: vec![lab::NODE_SG.into(), lab::AUX_SG.into()],
                ami: if current.ami_type.contains("NVIDIA") {
                    lab::AMI_NVIDIA.into()
                } else {
                    lab::AMI_STANDARD.into()
                },
                launched_at: now,
            };
            let delay = join_delay(&instance.instance_type);
            longest = longest.max(delay);
            state.schedule(
                delay,
                AwsTimer::InstanceJoins {
                    instance: instance.id.clone(),
                },
            );
            state.instances.insert(instance.id.clone(), instance);
        }
    } else {
        // Newest first, as the Auto Scaling group's default termination policy does.
        let mut excess: Vec<Instance> = live;
        excess.sort_by(|a, b| b.launched_at.cmp(&a.launched_at).then(b.id.cmp(&a.id)));
        let surplus = excess.len().saturating_sub(desired as usize);
        for instance in excess.into_iter().take(surplus) {
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
    }
    state.schedule(longest, AwsTimer::UpdateDone { update: id });
    Ok(update)
}
