//! DescribeInstances over EC2's query protocol: each instance in a reservation of its own, with
//! its state, placement, security groups, EFA interfaces and the node group tags EKS puts on
//! it.

use super::ec2_query::{Params, Wanted};
use super::error::AwsError;
use super::instance_ids::check_ids;
use super::state::{AwsState, Instance};
use super::wire::{Xml, iso};
use crate::lab;

pub(super) fn describe_instances(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "InstanceId");
    let page = Page::read(params, !wanted.values().is_empty())?;
    check_ids(state, wanted.values())?;
    let instances: Vec<&Instance> = state
        .instances
        .values()
        .filter(|i| wanted.accepts(&i.id))
        .collect();
    let end = page.size.map_or(instances.len(), |size| {
        (page.start + size).min(instances.len())
    });
    let shown = instances.get(page.start..end).unwrap_or_default();
    xml.items("reservationSet", shown.iter().copied(), |xml, instance| {
        xml.leaf("reservationId", format!("r-{}", &instance.id[2..]))
            .leaf("ownerId", lab::ACCOUNT_ID)
            .items("instancesSet", [instance], |xml, instance| {
                instance_xml(xml, state, instance);
            });
    });
    if end < instances.len() {
        xml.leaf("nextToken", format!("instances-{end}"));
    }
    Ok(())
}

/// DescribeInstances' page: `MaxResults` 5 to 1000 and never with instance ids (the EC2 API
/// reference), from `NextToken`. Words: "Value ( 3 ) for parameter maxResults is invalid.
/// Expecting a value greater than 5." (aws/aws-sdk-ruby#2575); "The parameter instancesSet
/// cannot be used with the parameter maxResults" (EC2's answer quoted in getmoto/moto#6282 and
/// yuuki/grabeni#7). Above 1000 and a bad token have no published words: the twin's.
struct Page {
    size: Option<usize>,
    start: usize,
}

impl Page {
    fn read(params: &Params, with_ids: bool) -> Result<Self, AwsError> {
        let invalid = |message: String| AwsError::new(400, "InvalidParameterValue", message);
        let size = match params.get("MaxResults") {
            None => None,
            Some(_) if with_ids => {
                return Err(AwsError::new(
                    400,
                    "InvalidParameterCombination",
                    "The parameter instancesSet cannot be used with the parameter maxResults",
                ));
            }
            Some(text) => match text.parse::<i64>() {
                Ok(n) if n < 5 => {
                    return Err(invalid(format!(
                        "Value ( {text} ) for parameter maxResults is invalid. Expecting a value greater than 5."
                    )));
                }
                Ok(n) if n <= 1000 => usize::try_from(n).ok(),
                _ => {
                    return Err(invalid(format!(
                        "Value ( {text} ) for parameter maxResults is invalid. Expecting a value less than 1000."
                    )));
                }
            },
        };
        let start = match params.get("NextToken") {
            None => 0,
            Some(token) => token
                .strip_prefix("instances-")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| invalid(format!("The token '{token}' is invalid.")))?,
        };
        Ok(Self { size, start })
    }
}

/// RebootInstances: every named instance must exist and run; each reboots (the twin's Node goes
/// silent and comes back with a new bootID: sim/kube/controllers/node_maintenance.rs). EC2
/// queues the reboot and answers `true` at once.
pub(super) fn reboot_instances(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let wanted = Wanted::listed(params, "InstanceId");
    if !params.keys().any(|k| k.starts_with("InstanceId.")) {
        return Err(AwsError::new(
            400,
            "MissingParameter",
            "The request must contain the parameter InstanceId",
        ));
    }
    check_ids(state, wanted.values())?;
    let ids: Vec<(String, String)> = state
        .instances
        .values()
        .filter(|i| wanted.accepts(&i.id))
        .map(|i| (i.id.clone(), i.state.clone()))
        .collect();
    if let Some((id, current)) = ids.iter().find(|(_, state)| state != "running") {
        // The twin's words: EC2 documents the code, not its message.
        return Err(AwsError::new(
            400,
            "IncorrectInstanceState",
            format!("The instance '{id}' is {current}, not running: it cannot be rebooted"),
        ));
    }
    for (id, _) in ids {
        state.schedule(
            std::time::Duration::ZERO,
            super::state::AwsTimer::InstanceRebooting { instance: id },
        );
    }
    xml.leaf("return", "true");
    Ok(())
}

/// EC2's code for an instance state.
pub(super) fn state_code(state: &str) -> u32 {
    match state {
        "pending" => 0,
        "running" => 16,
        "shutting-down" => 32,
        _ => 48,
    }
}

fn instance_xml(xml: &mut Xml, state: &AwsState, instance: &Instance) {
    xml.leaf("instanceId", &instance.id)
        .leaf("imageId", &instance.ami)
        .open("instanceState")
        .leaf("code", state_code(&instance.state))
        .leaf("name", &instance.state)
        .close("instanceState")
        .leaf(
            "privateDnsName",
            format!(
                "ip-{}.{}.compute.internal",
                instance.private_ip.replace('.', "-"),
                lab::REGION
            ),
        )
        .leaf("instanceType", &instance.instance_type)
        .leaf("launchTime", iso(instance.launched_at))
        .element("placement", |xml| {
            xml.leaf("availabilityZone", &instance.zone);
            if let Some(group) = &instance.placement_group {
                xml.leaf("groupName", group);
            }
        })
        .leaf("subnetId", &instance.subnet)
        .leaf(
            "vpcId",
            state
                .subnets
                .get(&instance.subnet)
                .map_or(lab::VPC_ID, |s| s.vpc.as_str()),
        )
        .leaf("privateIpAddress", &instance.private_ip);
    groups_xml(xml, state, instance);
    efa_xml(xml, instance);
    tags_xml(xml, instance);
}

fn groups_xml(xml: &mut Xml, state: &AwsState, instance: &Instance) {
    xml.items("groupSet", &instance.groups, |xml, group| {
        let name = state
            .groups
            .get(group)
            .map_or(group.as_str(), |g| g.name.as_str());
        xml.leaf("groupId", group).leaf("groupName", name);
    });
}

/// The EFA interfaces, one per network card, as the launch template asked.
fn efa_xml(xml: &mut Xml, instance: &Instance) {
    if instance.efa_interfaces == 0 {
        return;
    }
    xml.items(
        "networkInterfaceSet",
        0..instance.efa_interfaces,
        |xml, card| {
            xml.leaf("interfaceType", "efa")
                .open("attachment")
                .leaf("deviceIndex", u32::from(card > 0))
                .leaf("networkCardIndex", card)
                .close("attachment");
        },
    );
}

fn tags_xml(xml: &mut Xml, instance: &Instance) {
    let tags = [
        ("eks:nodegroup-name", instance.nodegroup.as_str()),
        ("eks:cluster-name", lab::CLUSTER_NAME),
    ];
    xml.items("tagSet", tags, |xml, (key, value)| {
        xml.leaf("key", key).leaf("value", value);
    });
}
