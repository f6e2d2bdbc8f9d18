//! `ec2::`: security groups and their rules (authorize and revoke journaled with the rule
//! that undoes them), whether a flow gets through, subnets, VPCs and instances. Creates and
//! deletes are in [`super::ec2_lifecycle`].

use std::sync::Arc;

use rhai::{Dynamic, Map, Module, NativeCallContext, Position};

use super::call::{Result, call, json, read_only};
use super::ec2_rules::{journal_rule, rule_action, rule_spec, shown_rule};
use crate::bindings::shared::args::known_options;
use crate::bindings::shared::journaled::journaled;
use crate::clients::aws::AwsClients;
use crate::guard::Change;
use crate::journal::Undo;
use crate::script::{Host, documented as doc, usage_error};

pub(super) fn module(c: &Arc<AwsClients>, h: &Arc<Host>) -> Module {
    let mut ec2 = Module::new();
    install_group_reads(&mut ec2, c, h);
    install_network_reads(&mut ec2, c, h);
    install_instance_types(&mut ec2, c, h);
    install_rules(&mut ec2, c, h);
    install_reachable(&mut ec2, c, h);
    super::ec2_lifecycle::install(&mut ec2, c, h);
    super::ec2_launch::install(&mut ec2, c, h);
    super::ec2_topology::install(&mut ec2, c, h);
    super::ec2_topology::install_reboot(&mut ec2, c, h);
    ec2
}

/// Registers reading a security group and its rules.
fn install_group_reads(ec2: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    read_only!(
        ec2,
        c,
        h,
        "security_group",
        [id],
        "Map",
        "A security group: #{ group_id, group_name, description, vpc_id, ingress_permissions, egress_permissions, tags }.",
        |clients| clients.security_group(id)
    );
    read_only!(
        ec2,
        c,
        h,
        "rules",
        [group],
        "Array",
        "A group's rules in one shape: #{ id, direction, protocol, from_port, to_port, source, description },\nsource a CIDR, a group id or \"self\"; ingress first, ordered by port.",
        |clients| clients.rules(group)
    );
}

/// Registers reading subnets, VPCs and instances.
fn install_network_reads(ec2: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    read_only!(
        ec2,
        c,
        h,
        "subnets",
        [],
        "Array",
        "Subnets: #{ subnet_id, cidr_block, availability_zone, vpc_id, map_public_ip_on_launch, name }, by CIDR.",
        |clients| clients.subnets()
    );
    read_only!(
        ec2,
        c,
        h,
        "vpcs",
        [],
        "Array",
        "VPCs: #{ vpc_id, cidr_block, state }.",
        |clients| clients.vpcs()
    );
    read_only!(
        ec2,
        c,
        h,
        "instances",
        [],
        "Array",
        "Instances: #{ instance_id, state, instance_type, availability_zone, private_ip_address, subnet_id, security_groups, nodegroup }.",
        |clients| clients.instances()
    );
}

fn install_instance_types(ec2: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    let (clients, host) = (c.clone(), h.clone());
    doc("instance_types", &["names: Array", "Array"], "DescribeInstanceTypes of the named types: #{ instance_type, vcpus, memory_mib, gpus: [#{ name, manufacturer,\ncount, memory_mib }], gpu_count, total_gpu_memory_mib, network_performance, maximum_network_cards,\nefa_supported, maximum_efa_interfaces, placement_strategies }, in the order asked; an unknown name\nis InvalidInstanceType.")
        .set_into_module(ec2, move |ctx: NativeCallContext, names: rhai::Array| -> Result {
            let position = ctx.call_position();
            let names = type_names(&names, position)?;
            Ok(json(&serde_json::json!(call(&host, position, || clients.instance_types(&names))?)))
        });
}

fn type_names(names: &rhai::Array, position: Position) -> Result<Vec<String>> {
    names
        .iter()
        .map(|n| n.clone().into_immutable_string().map(|s| s.to_string()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|t| usage_error(format!("ec2::instance_types takes an array of names such as [\"p5.48xlarge\"], got an item of type {t}"), position))
}

/// Registers adding and removing rules, each journaled with the rule that undoes it.
fn install_rules(ec2: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    let (clients, host) = (c.clone(), h.clone());
    doc("authorize", &["group: &str", "rule: Map", "String"], "Adds a rule (#{ direction, protocol, port | ports: \"1025-65535\", source, description }); returns its id.")
        .set_into_module(ec2, move |ctx: NativeCallContext, group: &str, rule: Map| -> Result<String> {
            let position = ctx.call_position();
            let spec = rule_spec(group, &rule, position)?;
            let journal_rule = journal_rule(&spec);
            let action = rule_action("authorize", group, &journal_rule);
            let undo = Undo::Revoke { group: group.to_string(), rule: journal_rule };
            journaled(&host, position, Change::new(action).on(format!("sg/{group}")), Some(undo), || call(&host, position, || clients.authorize(group, &spec)))
        });
    let (clients, host) = (c.clone(), h.clone());
    doc("revoke", &["group: &str", "rule: Dynamic", "()"], "Removes a rule, given as a map like authorize's (or one from ec2::rules) or as its id (\"sgr-...\").")
        .set_into_module(ec2, move |ctx: NativeCallContext, group: &str, rule: Dynamic| -> Result<()> {
            let position = ctx.call_position();
            if let Some(id) = rule.read_lock::<rhai::ImmutableString>() {
                return revoke_by_id(&host, &clients, position, group, &id);
            }
            let map = rule.read_lock::<Map>().map(|m| m.clone()).ok_or_else(|| usage_error("ec2::revoke takes a rule map or a rule id", position))?;
            let spec = rule_spec(group, &map, position)?;
            let journal_rule = journal_rule(&spec);
            let action = rule_action("revoke", group, &journal_rule);
            let undo = Undo::Authorize { group: group.to_string(), rule: journal_rule };
            journaled(&host, position, Change::new(action).on(format!("sg/{group}")), Some(undo), || call(&host, position, || clients.revoke(group, &spec)))
        });
}

/// Revokes a rule named by its id (`sgr-...`), journaled with the rule as `ec2::rules` shows it.
fn revoke_by_id(
    host: &Host,
    clients: &AwsClients,
    position: Position,
    group: &str,
    id: &str,
) -> Result<()> {
    // The journal needs the whole rule to put it back: read it first.
    let rules = call(host, position, || clients.rules(group))?;
    let undo = rules
        .iter()
        .find(|r| r["id"].as_str() == Some(id))
        .map(|r| Undo::Authorize {
            group: group.to_string(),
            rule: shown_rule(group, r),
        });
    let action = match &undo {
        Some(Undo::Authorize { rule, .. }) => rule_action("revoke", group, rule),
        _ => format!("ec2::revoke {group} {id}"),
    };
    journaled(
        host,
        position,
        Change::new(action).on(format!("sg/{group}")),
        undo,
        || call(host, position, || clients.revoke_rule_id(group, id)),
    )
}

fn install_reachable(ec2: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    let (clients, host) = (c.clone(), h.clone());
    doc(
        "reachable",
        &["flow: Map", "Map"],
        "Whether security groups let a flow through: #{ from, to, proto (default \"tcp\"), port }, where from and\nto are instance ids, group ids, or arrays of them, or a network outside the VPC (\"10.80.0.0/16\",\nhybrid nodes' remote network: only the VPC side's rules are judged). Answers #{ allowed, egress_rules, ingress_rules, reason }.",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext, flow: Map| -> Result {
        let position = ctx.call_position();
        known_options(&flow, "ec2::reachable", &["from", "to", "proto", "port"], position)?;
        let protocol = flow.get("proto").map_or_else(|| "tcp".to_string(), |p| p.to_string());
        let port = flow
            .get("port")
            .ok_or_else(|| usage_error("ec2::reachable: `port` is required", position))?
            .as_int()
            .map_err(|t| usage_error(format!("ec2::reachable: `port` must be an integer, got {t}"), position))?;
        let (from, to) = (flow_ends(&flow, "from", position)?, flow_ends(&flow, "to", position)?);
        let verdict = call(&host, position, || clients.reachable(&from, &to, &protocol, port as i32))?;
        Ok(json(&serde_json::to_value(verdict).unwrap_or_default()))
    });
}

/// One end of a flow `ec2::reachable` judges: an id, or an array of them.
fn flow_ends(flow: &Map, key: &str, position: Position) -> Result<Vec<String>> {
    let value = flow.get(key).ok_or_else(|| {
        usage_error(
            format!(
                "ec2::reachable: `{key}` is required (an instance id, a group id, or an array of them)"
            ),
            position,
        )
    })?;
    if let Some(one) = value.read_lock::<rhai::ImmutableString>() {
        return Ok(vec![one.to_string()]);
    }
    value
        .read_lock::<rhai::Array>()
        .map(|items| items.iter().map(|i| i.to_string()).collect())
        .ok_or_else(|| {
            usage_error(
                format!("ec2::reachable: `{key}` is an id or an array of ids"),
                position,
            )
        })
}
