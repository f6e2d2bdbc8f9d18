//! TerminateInstances: each named instance shuts down (gone after the shutdown delay, its Node
//! with it), and a node group's Auto Scaling group launches one in its place, as it does when
//! EKS node repair replaces a node (sim/repair/controller.rs). The answer lists each instance's
//! previous and current state (`terminatingInstances`, the EC2 API reference).
//!
//! The product's own clients never terminate instances (src/clients/aws has no such call): this
//! serves the aws CLI and SDKs run against the twin, so it is twin-side only.

use super::ec2_query::{Params, Wanted};
use super::error::AwsError;
use super::instance_ids::check_ids;
use super::instances::state_code;
use super::nodegroups::{launch, terminate_instance};
use super::state::AwsState;
use super::wire::Xml;

pub(super) fn terminate_instances(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "InstanceId");
    if wanted.values().is_empty() {
        return Err(AwsError::new(
            400,
            "MissingParameter",
            "The request must contain the parameter InstanceId",
        ));
    }
    check_ids(state, wanted.values())?;
    let mut changes = Vec::new();
    for id in wanted.values() {
        let before = state
            .instances
            .get(id)
            .map(|i| i.state.clone())
            .unwrap_or_default();
        terminate(state, id);
        let after = state
            .instances
            .get(id)
            .map(|i| i.state.clone())
            .unwrap_or_default();
        changes.push((id.clone(), before, after));
    }
    xml.items("instancesSet", changes, |xml, (id, before, after)| {
        xml.leaf("instanceId", id)
            .open("currentState")
            .leaf("code", state_code(&after))
            .leaf("name", &after)
            .close("currentState")
            .open("previousState")
            .leaf("code", state_code(&before))
            .leaf("name", &before)
            .close("previousState");
    });
    Ok(())
}

/// Shuts one instance down; one of an EKS node group's Auto Scaling group is replaced while the
/// group runs fewer than its desired size (an autoscaler's instance is not: it decides).
fn terminate(state: &mut AwsState, id: &str) {
    let Some(instance) = state.instances.get(id).cloned() else {
        return;
    };
    if !matches!(instance.state.as_str(), "pending" | "running") {
        return;
    }
    terminate_instance(state, id);
    let Some(nodegroup) = state
        .nodegroups
        .values()
        .find(|n| n.name == instance.nodegroup && n.status != "DELETING")
        .cloned()
    else {
        return;
    };
    let live = state.live_instances(&nodegroup.name).len();
    let desired = usize::try_from(nodegroup.desired).unwrap_or(0);
    if live < desired {
        launch(state, &nodegroup, live, desired);
    }
}
