//! `ec2::instance_topology`: where instances sit in AWS's network (DescribeInstanceTopology),
//! so a drill can group GPU nodes by the network node they share; `ec2::reboot`, one instance
//! rebooted as a person repairing its node would.

use std::sync::Arc;

use rhai::{Map, Module, NativeCallContext, Position};

use super::call::{Result, call, json};
use crate::bindings::shared::args::{known_options, string_option};
use crate::clients::aws::AwsClients;
use crate::script::{Host, documented as doc, usage_error};

const NAME: &str = "ec2::instance_topology";
const DOC: &str = "DescribeInstanceTopology, all pages: #{ instance_id, instance_type, group_name, network_nodes\n(top layer first; the last is the node the instance hangs from, shared by the instances of one network\nblock; empty for a type AWS gives no topology or an instance that is not running), availability_zone,\nzone_id, capacity_block_id }. Options: instance_ids (at most 100 per call are sent; more are batched),\ninstance_type (\"p5.48xlarge\", or a family with * and ? wildcards: \"p5*\").";

pub(super) fn install(ec2: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    let (clients, host) = (c.clone(), h.clone());
    doc("instance_topology", &["Array"], DOC).set_into_module(
        ec2,
        move |ctx: NativeCallContext| -> Result {
            let position = ctx.call_position();
            Ok(json(&serde_json::json!(call(&host, position, || {
                clients.instance_topology(&[], None)
            })?)))
        },
    );
    let (clients, host) = (c.clone(), h.clone());
    doc("instance_topology", &["options: Map", "Array"], DOC).set_into_module(
        ec2,
        move |ctx: NativeCallContext, options: Map| -> Result {
            let position = ctx.call_position();
            known_options(&options, NAME, &["instance_ids", "instance_type"], position)?;
            let ids = instance_ids(&options, position)?;
            let instance_type = string_option(&options, "instance_type", NAME, position)?;
            Ok(json(&serde_json::json!(call(&host, position, || {
                clients.instance_topology(&ids, instance_type.as_deref())
            })?)))
        },
    );
}

/// `ec2::reboot(instance)`: RebootInstances, journaled as a disruption of `instance/ID` (no undo:
/// a reboot is not taken back); outside the lab twin it needs --disrupt.
pub(super) fn install_reboot(ec2: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    let (clients, host) = (c.clone(), h.clone());
    doc("reboot", &["instance: &str", "()"], "Reboots an instance (RebootInstances; EC2 queues it and answers at once): its node goes NotReady and\ncomes back with a new bootID. Journaled as a disruption of instance/ID: outside the lab twin it needs\n--disrupt instance/ID.")
        .set_into_module(ec2, move |ctx: NativeCallContext, instance: &str| -> Result<()> {
            let position = ctx.call_position();
            let change = crate::guard::Change::new(format!("ec2::reboot {instance}"))
                .on(format!("instance/{instance}"))
                .disrupting(crate::guard::World::Aws);
            crate::bindings::shared::journaled::journaled(&host, position, change, None, || {
                call(&host, position, || clients.reboot_instance(instance))
            })
        });
}

fn instance_ids(options: &Map, position: Position) -> Result<Vec<String>> {
    let Some(value) = options.get("instance_ids") else {
        return Ok(Vec::new());
    };
    let refused = |what: String| {
        usage_error(
            format!(
                "{NAME}: `instance_ids` is an array of instance ids such as [\"i-0abc...\"], {what}"
            ),
            position,
        )
    };
    let array = value
        .clone()
        .into_array()
        .map_err(|t| refused(format!("got {t}")))?;
    array
        .into_iter()
        .map(|id| {
            id.into_string()
                .map_err(|t| refused(format!("got an item of type {t}")))
        })
        .collect()
}
