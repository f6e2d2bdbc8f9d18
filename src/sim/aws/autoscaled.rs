//! Instances an autoscaler inside the cluster starts and stops (the twin's Karpenter), outside
//! any node group: launched into the lab's private subnet of the zone asked for, billed by
//! instance type, joined as a node after the type's boot time. The vCPU quota and a subnet
//! out of addresses refuse them, as EC2 does.

use super::state::{AwsState, AwsTimer, Instance, SHUTDOWN_DELAY, join_delay};
use crate::lab;
use crate::sim::launch::{LaunchOutcome, LaunchRequest};

/// Starts the instance a NodeClaim asks for, or says why EC2 would not.
pub(crate) fn launch(state: &mut AwsState, request: &LaunchRequest) -> LaunchOutcome {
    let failed = |code: &str, message: String| LaunchOutcome::Failed {
        nodeclaim: request.nodeclaim.clone(),
        code: code.into(),
        message,
    };
    if state.faults.vcpu_quota {
        return failed(
            "VcpuLimitExceeded",
            "You have requested more vCPU capacity than your current vCPU limit allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit.".into(),
        );
    }
    let subnet = lab::PRIVATE_SUBNETS
        .iter()
        .find(|id| {
            state
                .subnets
                .get(**id)
                .is_some_and(|s| s.zone == request.zone)
        })
        .or(lab::PRIVATE_SUBNETS.first())
        .map(|s| (*s).to_string())
        .unwrap_or_default();
    if state.faults.subnet_ips_exhausted {
        return failed(
            "InsufficientFreeAddressesInSubnet",
            format!(
                "There are not enough free addresses in subnet '{subnet}' to satisfy the requested number of instances."
            ),
        );
    }
    let zone = state
        .subnets
        .get(&subnet)
        .map_or_else(|| request.zone.clone(), |s| s.zone.clone());
    let now = state.now;
    let instance = Instance {
        id: state.next_id("i"),
        nodegroup: String::new(),
        instance_type: request.instance_type.clone(),
        private_ip: state.next_private_ip(&subnet),
        subnet,
        zone: zone.clone(),
        state: "pending".into(),
        groups: vec![lab::NODE_SG.into()],
        ami: lab::AMI_STANDARD.into(),
        launched_at: now,
        placement_group: None,
        efa_interfaces: 0,
    };
    state.schedule(
        join_delay(&instance.instance_type),
        AwsTimer::InstanceJoins {
            instance: instance.id.clone(),
        },
    );
    state
        .meter
        .start(&instance.id, &instance.instance_type, now);
    let id = instance.id.clone();
    state.instances.insert(id.clone(), instance);
    state.autoscaled.insert(id.clone(), request.clone());
    LaunchOutcome::Launched {
        nodeclaim: request.nodeclaim.clone(),
        instance: id,
        zone,
    }
}

/// Shuts an autoscaled instance down; its node leaves when it has.
pub(crate) fn terminate(state: &mut AwsState, instance: &str) {
    let Some(record) = state.instances.get_mut(instance) else {
        return;
    };
    if record.state == "terminated" || record.state == "shutting-down" {
        return;
    }
    record.state = "shutting-down".into();
    state.schedule(
        SHUTDOWN_DELAY,
        AwsTimer::InstanceTerminated {
            instance: instance.to_string(),
        },
    );
}
