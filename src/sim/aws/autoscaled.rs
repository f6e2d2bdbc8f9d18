//! Instances an autoscaler inside the cluster starts and stops (the twin's Karpenter), outside
//! any node group: launched into the lab's private subnet of the zone asked for, billed by
//! instance type, joined as a node after the type's boot time. The vCPU quota and a subnet
//! out of addresses refuse them, as EC2 does.

use super::state::{AwsState, AwsTimer, Instance, SHUTDOWN_DELAY, join_delay};
use crate::lab;
use crate::sim::launch::{LaunchOutcome, LaunchRequest};

/// Starts the instance a NodeClaim asks for, or says why EC2 would not.
pub(crate) fn launch(state: &mut AwsState, request: &LaunchRequest) -> LaunchOutcome {
    let subnet = private_subnet(state, &request.zone);
    if let Some((code, message)) = refusal(state, &subnet) {
        return LaunchOutcome::Failed {
            nodeclaim: request.nodeclaim.clone(),
            code: code.into(),
            message,
        };
    }
    let instance = new_instance(state, request, subnet);
    let (id, zone) = (instance.id.clone(), instance.zone.clone());
    state.schedule(
        join_delay(&instance.instance_type),
        AwsTimer::InstanceJoins {
            instance: id.clone(),
        },
    );
    let now = state.now;
    state.meter.start(&id, &instance.instance_type, now);
    state.instances.insert(id.clone(), instance);
    state.autoscaled.insert(id.clone(), request.clone());
    LaunchOutcome::Launched {
        nodeclaim: request.nodeclaim.clone(),
        instance: id,
        zone,
    }
}

/// The lab's private subnet in `zone`, else its first.
fn private_subnet(state: &AwsState, zone: &str) -> String {
    lab::PRIVATE_SUBNETS
        .iter()
        .find(|id| state.subnets.get(**id).is_some_and(|s| s.zone == zone))
        .or(lab::PRIVATE_SUBNETS.first())
        .map(|s| (*s).to_string())
        .unwrap_or_default()
}

/// The code and message EC2 refuses a new instance with, when a fault says it would.
fn refusal(state: &AwsState, subnet: &str) -> Option<(&'static str, String)> {
    if state.faults.vcpu_quota {
        return Some((
            "VcpuLimitExceeded",
            "You have requested more vCPU capacity than your current vCPU limit allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit.".into(),
        ));
    }
    if state.faults.subnet_ips_exhausted {
        return Some((
            "InsufficientFreeAddressesInSubnet",
            format!(
                "There are not enough free addresses in subnet '{subnet}' to satisfy the requested number of instances."
            ),
        ));
    }
    None
}

fn new_instance(state: &mut AwsState, request: &LaunchRequest, subnet: String) -> Instance {
    let zone = state
        .subnets
        .get(&subnet)
        .map_or_else(|| request.zone.clone(), |s| s.zone.clone());
    let network_nodes = super::topology::place(state, &request.instance_type, &zone);
    Instance {
        id: state.next_id("i"),
        nodegroup: String::new(),
        instance_type: request.instance_type.clone(),
        private_ip: state.next_private_ip(&subnet),
        subnet,
        zone,
        state: "pending".into(),
        groups: vec![lab::NODE_SG.into()],
        ami: lab::AMI_STANDARD.into(),
        launched_at: state.now,
        placement_group: None,
        efa_interfaces: 0,
        network_nodes,
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
