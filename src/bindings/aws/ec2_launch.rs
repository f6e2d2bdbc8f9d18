//! `ec2::` for what an EFA node group launches from: placement groups and launch templates.
//! Every change journaled before it is sent.

use std::sync::Arc;

use rhai::{Map, Module, NativeCallContext};

use super::call::{Result, call, json, unit};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::{AwsClients, LaunchTemplateSpec};
use crate::guard::Change;
use crate::script::{Host, documented as doc};

pub(super) fn install(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    install_placement_groups(ec2, clients, host);
    install_launch_templates(ec2, clients, host);
}

/// Registers creating, listing and deleting placement groups.
fn install_placement_groups(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "create_placement_group",
        &["name: &str", "strategy: &str", "String"],
        "Creates a placement group (strategy \"cluster\", \"spread\" or \"partition\"); returns its id.",
    )
    .set_into_module(
        ec2,
        move |ctx: NativeCallContext, name: &str, strategy: &str| -> Result<String> {
            let position = ctx.call_position();
            let change = Change::new(format!("ec2::create_placement_group {name} ({strategy})"))
                .on(format!("placement-group/{name}"));
            journaled(&h, position, change, None, || {
                call(&h, position, || c.create_placement_group(name, strategy))
            })
        },
    );
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "placement_groups",
        &["Array"],
        "Placement groups: #{ group_name, group_id, strategy, state }.",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.placement_groups()
        )?)))
    });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "delete_placement_group",
        &["name: &str", "()"],
        "Deletes a placement group (InvalidPlacementGroup.InUse while an instance runs in it).",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext, name: &str| -> Result {
        let position = ctx.call_position();
        let change = Change::new(format!("ec2::delete_placement_group {name}"))
            .on(format!("placement-group/{name}"));
        journaled(&h, position, change, None, || {
            call(&h, position, || c.delete_placement_group(name))
        })
        .map(|()| unit())
    });
}

/// Registers creating, listing and deleting launch templates.
fn install_launch_templates(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc("create_launch_template", &["spec: Map", "String"], "Creates a launch template for a node group: #{ name, placement_group, efa_interfaces (one EFA\ninterface per network card, 0 for none), security_groups }; returns its id.")
        .set_into_module(ec2, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_launch_template", &["name", "placement_group", "efa_interfaces", "security_groups"], position)?;
            let efa = s.int("efa_interfaces")?.unwrap_or(0);
            let efa_interfaces = u32::try_from(efa).map_err(|_| s.error(format!("`efa_interfaces` is 0 or more, got {efa}")))?;
            let template = LaunchTemplateSpec {
                name: s.required("name")?,
                placement_group: s.string("placement_group")?,
                efa_interfaces,
                security_groups: s.strings("security_groups")?,
            };
            let change = Change::new(format!("ec2::create_launch_template {} ({efa_interfaces} EFA interfaces)", template.name))
                .on(format!("launch-template/{}", template.name));
            journaled(&h, position, change, None, || call(&h, position, || c.create_launch_template(&template)))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc("launch_templates", &["Array"], "Launch templates with their default version's contents: #{ launch_template_id, name,\nplacement_group, efa_interfaces, interfaces: [#{ network_card_index, device_index, interface_type }] }.")
        .set_into_module(ec2, move |ctx: NativeCallContext| -> Result {
            Ok(json(&serde_json::json!(call(&h, ctx.call_position(), || c.launch_templates())?)))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "delete_launch_template",
        &["name: &str", "()"],
        "Deletes a launch template by name.",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext, name: &str| -> Result {
        let position = ctx.call_position();
        let change = Change::new(format!("ec2::delete_launch_template {name}"))
            .on(format!("launch-template/{name}"));
        journaled(&h, position, change, None, || {
            call(&h, position, || c.delete_launch_template(name))
        })
        .map(|()| unit())
    });
}
