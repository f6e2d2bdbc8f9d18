//! `eks::`: the cluster, its node groups and add-ons, Pod Identity associations, and scaling a
//! node group (journaled with the size before). Creates, deletes and waits are in
//! [`super::eks_lifecycle`].

use std::sync::Arc;
use std::time::Duration;

use rhai::{Map, Module, NativeCallContext, Position};

use super::call::{Result, call, json, read_only};
use crate::bindings::shared::args::known_options;
use crate::bindings::shared::journaled::journaled;
use crate::clients::aws::AwsClients;
use crate::guard::Change;
use crate::journal::Undo;
use crate::script::{Host, documented as doc, duration_value, usage_error};

pub(super) fn module(c: &Arc<AwsClients>, h: &Arc<Host>) -> Module {
    let mut eks = Module::new();
    install_cluster_reads(&mut eks, c, h);
    install_nodegroup_and_addon_reads(&mut eks, c, h);
    install_scaling(&mut eks, c, h);
    super::eks_lifecycle::install(&mut eks, c, h);
    super::eks_repair::install_repair(&mut eks, c, h);
    eks
}

/// Registers reading a cluster and its Pod Identity associations.
fn install_cluster_reads(eks: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    read_only!(
        eks,
        c,
        h,
        "pod_identity_associations",
        [cluster],
        "Array",
        "A cluster's Pod Identity associations: [#{ association_id, namespace, service_account, role_arn }].",
        |clients| clients.pod_identity_associations(cluster)
    );
    read_only!(
        eks,
        c,
        h,
        "cluster",
        [name],
        "Map",
        "describe-cluster: #{ name, status, version, endpoint, platform_version, identity: #{ oidc: #{ issuer } }, resources_vpc_config, node_security_group, ... }.",
        |clients| clients.cluster(name)
    );
}

/// Registers reading a cluster's node groups and add-ons.
fn install_nodegroup_and_addon_reads(eks: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    read_only!(
        eks,
        c,
        h,
        "nodegroups",
        [cluster],
        "Array",
        "The names of a cluster's node groups.",
        |clients| clients.nodegroups(cluster)
    );
    read_only!(
        eks,
        c,
        h,
        "nodegroup",
        [cluster, name],
        "Map",
        "describe-nodegroup: #{ status, scaling_config: #{ min_size, max_size, desired_size }, instance_types, labels, taints, subnets, repair (node auto repair, as eks::update_node_repair takes it; () when off by default), ... }.",
        |clients| clients.nodegroup(cluster, name)
    );
    read_only!(
        eks,
        c,
        h,
        "addons",
        [cluster],
        "Map",
        "Add-ons by name: #{ \"vpc-cni\": #{ version, status, configuration_values }, ... }\n(configuration_values: the add-on's JSON settings as a string, only when it has some).",
        |clients| clients.addons(cluster)
    );
}

/// Registers `scale_nodegroup`, journaled with the size before.
fn install_scaling(eks: &mut Module, c: &Arc<AwsClients>, h: &Arc<Host>) {
    let (clients, host) = (c.clone(), h.clone());
    doc(
        "scale_nodegroup",
        &["cluster: &str", "name: &str", "desired: i64", "Map"],
        "Sets a node group's desired size and waits (on the run's clock, up to 20m) until the update is\nSuccessful; returns the update #{ id, status }. An update already in flight is waited out first;\na group that already has the size is left alone (status \"Unchanged\", id ()). Waiting for the\nNodes is k8s::wait_nodes's job.",
    )
    .set_into_module(eks, move |ctx: NativeCallContext, cluster: &str, name: &str, desired: i64| -> Result {
        scale(&host, &clients, ctx.call_position(), (cluster, name), desired, None, Some(Duration::from_secs(1200)))
    });
    let (clients, host) = (c.clone(), h.clone());
    doc(
        "scale_nodegroup",
        &[
            "cluster: &str",
            "name: &str",
            "desired: i64",
            "options: Map",
            "Map",
        ],
        "The same; options `wait`: a timeout (\"30m\"), or false to return at once; `max`: the group's\nmaximum size, set in the same update (a recover puts the old one back).",
    )
    .set_into_module(
        eks,
        move |ctx: NativeCallContext,
              cluster: &str,
              name: &str,
              desired: i64,
              options: Map|
              -> Result {
            let position = ctx.call_position();
            known_options(&options, "eks::scale_nodegroup", &["wait", "max"], position)?;
            let max = max_option(&options, position)?;
            let wait = wait_option(&options, position)?;
            scale(&host, &clients, position, (cluster, name), desired, max, wait)
        },
    );
}

/// `max`: the group's new maximum size, at least 1; none when absent or `()`.
fn max_option(options: &Map, position: Position) -> Result<Option<i32>> {
    match options.get("max") {
        None => Ok(None),
        Some(v) if v.is_unit() => Ok(None),
        Some(v) => Ok(Some(
            v.as_int()
                .ok()
                .and_then(|m| i32::try_from(m).ok())
                .filter(|m| *m >= 1)
                .ok_or_else(|| {
                    usage_error(
                        format!("eks::scale_nodegroup: `max` is a size of at least 1, got {v}"),
                        position,
                    )
                })?,
        )),
    }
}

/// `wait`: how long to wait for the update (20m when absent); none for false.
fn wait_option(options: &Map, position: Position) -> Result<Option<Duration>> {
    match options.get("wait") {
        None => Ok(Some(Duration::from_secs(1200))),
        Some(v) if v.as_bool() == Ok(false) => Ok(None),
        Some(v) => Ok(Some(duration_value(
            v,
            "eks::scale_nodegroup: `wait`",
            position,
        )?)),
    }
}

fn scale(
    host: &Host,
    clients: &AwsClients,
    position: Position,
    (cluster, name): (&str, &str),
    desired: i64,
    max: Option<i32>,
    wait: Option<Duration>,
) -> Result {
    let desired = i32::try_from(desired).map_err(|_| {
        usage_error(
            format!("eks::scale_nodegroup: desired size {desired} is out of range"),
            position,
        )
    })?;
    let clock = host.clock.clone();
    // The size before, so that a recover can put it back.
    let before = call(host, position, || clients.nodegroup_sizing(cluster, name))?;
    let undo = before.desired.map(|previous| Undo::ScaleNodegroup {
        cluster: cluster.to_string(),
        nodegroup: name.to_string(),
        desired: previous,
        // The old maximum goes back only when this call changes it.
        max: max.and(before.max).filter(|m| Some(*m) != max),
    });
    let action = match max {
        Some(max) => format!("eks::scale_nodegroup {cluster} {name} to {desired} (max {max})"),
        None => format!("eks::scale_nodegroup {cluster} {name} to {desired}"),
    };
    let mut change = Change::new(action).on(format!("nodegroup/{cluster}/{name}"));
    if let (Some(kind), Some(previous)) = (before.instance_types.first(), before.desired) {
        change = change.running(kind, i64::from(desired), i64::from(previous));
    }
    if before.runs_gpus() {
        change = change.sizing_gpus(i64::from(desired));
        let per_node = before
            .instance_types
            .first()
            .map_or(0, |kind| crate::lab::gpu_catalog::gpus_of(kind));
        if per_node > 0 {
            change = change.holding_gpus(i64::from(desired) * i64::from(per_node));
        }
    }
    let update = journaled(host, position, change, undo, || {
        call(host, position, || {
            clients.scale_nodegroup_to(cluster, name, desired, max, wait, clock.as_ref())
        })
    })?;
    Ok(json(&update))
}
