//! Placement groups and launch templates over EC2's query protocol: what an EFA node group
//! launches from (a cluster placement group, EFA network interfaces). Create, describe and
//! delete, with AWS's refusals: a duplicate name, an unknown one, a placement group still in
//! use.

use super::ec2_query::{Params, Wanted, required};
use super::error::AwsError;
use super::state::{AwsState, LaunchTemplate, PlacementGroup, TemplateInterface};
use super::wire::{Member, Xml, iso, members, numbered};
use crate::lab;

const STRATEGIES: &[&str] = &["cluster", "spread", "partition"];

fn placement_group_unknown(name: &str) -> AwsError {
    AwsError::new(
        400,
        "InvalidPlacementGroup.Unknown",
        format!("The Placement Group '{name}' is unknown."),
    )
}

fn template_not_found() -> AwsError {
    AwsError::new(
        400,
        "InvalidLaunchTemplateName.NotFoundException",
        "At least one of the launch templates specified in the request does not exist.",
    )
}

fn invalid_value(message: String) -> AwsError {
    AwsError::new(400, "InvalidParameterValue", message)
}

fn placement_group_xml(xml: &mut Xml, group: &PlacementGroup) {
    xml.leaf("groupName", &group.name)
        .leaf("state", "available")
        .leaf("strategy", &group.strategy)
        .leaf("groupId", &group.id)
        .leaf(
            "groupArn",
            format!(
                "arn:aws:ec2:{}:{}:placement-group/{}",
                lab::REGION,
                lab::ACCOUNT_ID,
                group.name
            ),
        );
}

fn template_xml(xml: &mut Xml, template: &LaunchTemplate) {
    xml.leaf("launchTemplateId", &template.id)
        .leaf("launchTemplateName", &template.name)
        .leaf("createTime", iso(template.created_at))
        .leaf(
            "createdBy",
            format!("arn:aws:iam::{}:user/lab", lab::ACCOUNT_ID),
        )
        .leaf("defaultVersionNumber", 1)
        .leaf("latestVersionNumber", 1);
}

fn template_data_xml(xml: &mut Xml, template: &LaunchTemplate) {
    xml.open("launchTemplateData");
    if !template.interfaces.is_empty() {
        xml.open("networkInterfaceSet");
        for interface in &template.interfaces {
            xml.open("item")
                .leaf("deviceIndex", interface.device_index)
                .leaf("networkCardIndex", interface.network_card_index)
                .leaf("interfaceType", &interface.interface_type)
                .open("groupSet");
            for group in &interface.groups {
                xml.leaf("groupId", group);
            }
            xml.close("groupSet").close("item");
        }
        xml.close("networkInterfaceSet");
    }
    if let Some(group) = &template.placement_group {
        xml.open("placement")
            .leaf("groupName", group)
            .close("placement");
    }
    xml.close("launchTemplateData");
}

/// The template a request names by `LaunchTemplateId` or `LaunchTemplateName`.
fn named_template<'a>(
    state: &'a AwsState,
    params: &Params,
) -> Result<&'a LaunchTemplate, AwsError> {
    if let Some(id) = params.get("LaunchTemplateId") {
        return state.launch_templates.get(id).ok_or_else(|| {
            AwsError::new(
                400,
                "InvalidLaunchTemplateId.NotFound",
                format!("The specified launch template, with template ID {id}, does not exist."),
            )
        });
    }
    let name = required(params, "LaunchTemplateName")?;
    state
        .launch_templates
        .values()
        .find(|t| t.name == *name)
        .ok_or_else(template_not_found)
}

fn interfaces_of(params: &Params) -> Result<Vec<TemplateInterface>, AwsError> {
    members(params, "LaunchTemplateData.NetworkInterface")
        .iter()
        .map(interface_of)
        .collect()
}

fn interface_of(member: &Member<'_>) -> Result<TemplateInterface, AwsError> {
    let number = |field: &str| -> Result<u32, AwsError> {
        member.get(field).map_or(Ok(0), |v| {
            v.parse()
                .map_err(|_| invalid_value(format!("{field} must be a number, got {v}")))
        })
    };
    let interface_type = member
        .get("InterfaceType")
        .cloned()
        .unwrap_or_else(|| "interface".into());
    if !["interface", "efa", "efa-only"].contains(&interface_type.as_str()) {
        return Err(invalid_value(format!(
            "Value ({interface_type}) for parameter interfaceType is invalid. Valid values: interface, efa, efa-only"
        )));
    }
    Ok(TemplateInterface {
        device_index: number("DeviceIndex")?,
        network_card_index: number("NetworkCardIndex")?,
        interface_type,
        groups: member.values("SecurityGroupId"),
    })
}

pub(super) fn create_placement_group(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let name = required(params, "GroupName")?.to_string();
    let strategy = params
        .get("Strategy")
        .cloned()
        .unwrap_or_else(|| "cluster".into());
    if !STRATEGIES.contains(&strategy.as_str()) {
        return Err(invalid_value(format!(
            "Value ({strategy}) for parameter strategy is invalid. Valid values: cluster, spread, partition"
        )));
    }
    if state.placement_groups.contains_key(&name) {
        return Err(AwsError::new(
            400,
            "InvalidPlacementGroup.Duplicate",
            format!("The Placement Group '{name}' already exists."),
        ));
    }
    let group = PlacementGroup {
        id: state.next_id("pg"),
        name: name.clone(),
        strategy,
    };
    xml.element("placementGroup", |xml| placement_group_xml(xml, &group));
    state.placement_groups.insert(name, group);
    Ok(())
}

pub(super) fn describe_placement_groups(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    // Only the groups named outright must exist; a filter may name any.
    let named = Wanted::listed(params, "GroupName");
    named.all_exist(
        |name| state.placement_groups.contains_key(name),
        placement_group_unknown,
    )?;
    let wanted = named.or_filtered(params, "group-name");
    let groups = state
        .placement_groups
        .values()
        .filter(|g| wanted.accepts(&g.name));
    xml.items("placementGroupSet", groups, placement_group_xml);
    Ok(())
}

pub(super) fn delete_placement_group(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let name = required(params, "GroupName")?.to_string();
    if !state.placement_groups.contains_key(&name) {
        return Err(placement_group_unknown(&name));
    }
    if state
        .instances
        .values()
        .any(|i| i.state != "terminated" && i.placement_group.as_deref() == Some(&name))
    {
        return Err(AwsError::new(
            400,
            "InvalidPlacementGroup.InUse",
            format!("The placement group '{name}' is in use and may not be deleted."),
        ));
    }
    state.placement_groups.remove(&name);
    xml.leaf("return", true);
    Ok(())
}

pub(super) fn create_launch_template(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let name = required(params, "LaunchTemplateName")?.to_string();
    if state.launch_templates.values().any(|t| t.name == name) {
        return Err(AwsError::new(
            400,
            "InvalidLaunchTemplateName.AlreadyExistsException",
            format!("Launch template name already in use: {name}"),
        ));
    }
    let placement_group = params
        .get("LaunchTemplateData.Placement.GroupName")
        .cloned();
    if let Some(group) = &placement_group
        && !state.placement_groups.contains_key(group)
    {
        return Err(placement_group_unknown(group));
    }
    let template = LaunchTemplate {
        id: state.next_id("lt"),
        name,
        created_at: state.now,
        placement_group,
        interfaces: interfaces_of(params)?,
    };
    xml.element("launchTemplate", |xml| template_xml(xml, &template));
    state.launch_templates.insert(template.id.clone(), template);
    Ok(())
}

pub(super) fn describe_launch_templates(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let ids = numbered(params, "LaunchTemplateId");
    let names = numbered(params, "LaunchTemplateName");
    let found: Vec<&LaunchTemplate> = state
        .launch_templates
        .values()
        .filter(|t| {
            (ids.is_empty() && names.is_empty()) || ids.contains(&t.id) || names.contains(&t.name)
        })
        .collect();
    if found.len() < ids.len() + names.len() {
        return Err(template_not_found());
    }
    xml.items("launchTemplates", found, template_xml);
    Ok(())
}

pub(super) fn describe_launch_template_versions(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let templates: Vec<&LaunchTemplate> = if names_every_template(params) {
        state.launch_templates.values().collect()
    } else {
        vec![named_template(state, params)?]
    };
    xml.items("launchTemplateVersionSet", templates, |xml, template| {
        xml.leaf("launchTemplateId", &template.id)
            .leaf("launchTemplateName", &template.name)
            .leaf("versionNumber", 1)
            .leaf("createTime", iso(template.created_at))
            .leaf("defaultVersion", true);
        template_data_xml(xml, template);
    });
    Ok(())
}

/// Every template's $Default or $Latest when none is named (as EC2 answers it); the twin
/// keeps one version per template, so both name that one.
fn names_every_template(params: &Params) -> bool {
    let versions = numbered(params, "LaunchTemplateVersion");
    !params.contains_key("LaunchTemplateId")
        && !params.contains_key("LaunchTemplateName")
        && !versions.is_empty()
        && versions.iter().all(|v| v == "$Default" || v == "$Latest")
}

pub(super) fn delete_launch_template(
    state: &mut AwsState,
    params: &Params,
    xml: &mut Xml,
) -> Result<(), AwsError> {
    let template = named_template(state, params)?.clone();
    // EC2 lets a template go while a node group still names it (the group's next
    // launch fails then): the blueprint deletes node groups first.
    state.launch_templates.remove(&template.id);
    xml.element("launchTemplate", |xml| template_xml(xml, &template));
    Ok(())
}
