//! `eks::update_node_repair` and the `repair` of `eks::create_nodegroup`: a managed node
//! group's node auto repair (`nodeRepairConfig`) as a script writes it, journaled with the
//! configuration it replaces.

use std::sync::Arc;

use rhai::{Map, Module, NativeCallContext, Position};

use super::call::{Result, call, json};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::{AwsClients, NodeRepair, RepairOverride};
use crate::guard::Change;
use crate::journal::Undo;
use crate::script::{Host, documented as doc};

/// The keys of a `repair` map.
const REPAIR_KEYS: &[&str] = &[
    "enabled",
    "max_unhealthy_count",
    "max_unhealthy_percentage",
    "max_parallel_count",
    "max_parallel_percentage",
    "overrides",
];

const OVERRIDE_KEYS: &[&str] = &["condition", "reason", "wait_mins", "action"];

/// What a `repair` map says, in words for the docs.
pub(super) const REPAIR_DOC: &str = "#{ enabled, max_unhealthy_count | max_unhealthy_percentage (repair stops past that many unhealthy\nnodes), max_parallel_count | max_parallel_percentage (nodes repaired at once), overrides: [#{ condition\n(AcceleratedHardwareReady, ...), reason (NvidiaXID79Error, ...), wait_mins, action: Replace | Reboot |\nNoAction }] }";

fn int(s: &Spec<'_>, key: &str) -> Result<Option<i32>> {
    match s.int(key)? {
        None => Ok(None),
        Some(n) => i32::try_from(n)
            .map(Some)
            .map_err(|_| s.error(format!("`{key}` {n} is out of range"))),
    }
}

/// A `repair` map as the client sends it (EKS checks the values: ranges, a count and its
/// percentage never both).
pub(super) fn node_repair_of(map: &Map, function: &str, position: Position) -> Result<NodeRepair> {
    let s = Spec::new(map, function, REPAIR_KEYS, position)?;
    let enabled = match map.get("enabled").filter(|v| !v.is_unit()) {
        None => None,
        Some(v) => Some(
            v.as_bool()
                .map_err(|_| s.error("`enabled` is true or false"))?,
        ),
    };
    let overrides = match map.get("overrides").filter(|v| !v.is_unit()) {
        None => Vec::new(),
        Some(list) => list
            .clone()
            .into_typed_array::<Map>()
            .map_err(|_| {
                s.error("`overrides` is an array of maps #{ condition, reason, wait_mins, action }")
            })?
            .iter()
            .map(|o| override_of(o, function, position))
            .collect::<Result<Vec<_>>>()?,
    };
    Ok(NodeRepair {
        enabled,
        max_unhealthy_count: int(&s, "max_unhealthy_count")?,
        max_unhealthy_percentage: int(&s, "max_unhealthy_percentage")?,
        max_parallel_count: int(&s, "max_parallel_count")?,
        max_parallel_percentage: int(&s, "max_parallel_percentage")?,
        overrides,
    })
}

fn override_of(map: &Map, function: &str, position: Position) -> Result<RepairOverride> {
    let s = Spec::new(map, function, OVERRIDE_KEYS, position)?;
    Ok(RepairOverride {
        condition: s.required("condition")?,
        reason: s.required("reason")?,
        wait_mins: int(&s, "wait_mins")?.ok_or_else(|| s.error("an override needs `wait_mins`"))?,
        action: s.required("action")?,
    })
}

/// A `repair` map (or ()) as the EKS API shapes `nodeRepairConfig`, for `crate::repair`.
fn api_shape(repair: &NodeRepair) -> serde_json::Value {
    serde_json::json!({
        "enabled": repair.enabled,
        "maxUnhealthyNodeThresholdCount": repair.max_unhealthy_count,
        "maxUnhealthyNodeThresholdPercentage": repair.max_unhealthy_percentage,
        "maxParallelNodesRepairedCount": repair.max_parallel_count,
        "maxParallelNodesRepairedPercentage": repair.max_parallel_percentage,
        "nodeRepairConfigOverrides": repair.overrides.iter().map(|o| serde_json::json!({
            "nodeMonitoringCondition": o.condition,
            "nodeUnhealthyReason": o.reason,
            "minRepairWaitTimeMins": o.wait_mins,
            "repairAction": o.action,
        })).collect::<Vec<_>>(),
    })
}

const PLAN_KEYS: &[&str] = &["condition", "reason", "nodes", "unhealthy"];

fn repair_plan(repair: &rhai::Dynamic, about: &Map, position: Position) -> Result {
    let function = "eks::repair_plan";
    let s = Spec::new(about, function, PLAN_KEYS, position)?;
    let config = match repair.clone().try_cast::<Map>() {
        Some(map) => Some(api_shape(&node_repair_of(&map, function, position)?)),
        None => None,
    };
    let condition = s
        .string("condition")?
        .unwrap_or_else(|| "AcceleratedHardwareReady".into());
    let reason = s
        .string("reason")?
        .ok_or_else(|| s.error("give the condition's `reason` (NvidiaXID79Error, ...)"))?;
    let count = |key: &str| -> Result<usize> {
        let n = s
            .int(key)?
            .ok_or_else(|| s.error(format!("give `{key}`")))?;
        usize::try_from(n).map_err(|_| s.error(format!("`{key}` is a node count, got {n}")))
    };
    let plan = crate::repair::policy::plan(
        config.as_ref(),
        &condition,
        &reason,
        count("nodes")?,
        count("unhealthy")?,
    );
    Ok(json(&serde_json::to_value(&plan).unwrap_or_default()))
}

pub(super) fn install_repair(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    doc(
        "repair_plan",
        &["repair: Dynamic", "about: Map", "Map"],
        "What EKS node auto repair will do about a node whose `condition` (AcceleratedHardwareReady)\nfails for `reason` (NvidiaXID79Error), by the rules of the EKS user guide and the node group's\n`repair` (eks::nodegroup(...).repair; () is off), in a group of `nodes` with `unhealthy` unhealthy\n(that node included): #{ enabled, wait_seconds, action (Replace, Reboot, NoAction), held (why\nrepair holds off, or ()), parallel (nodes repaired at once) }.",
    )
    .set_into_module(
        eks,
        |ctx: NativeCallContext, repair: rhai::Dynamic, about: Map| -> Result {
            repair_plan(&repair, &about, ctx.call_position())
        },
    );
    let (c, h) = (clients.clone(), host.clone());
    let text = format!(
        "Gives a managed node group this node auto repair configuration (UpdateNodegroupConfig's\nnodeRepairConfig), journaled with the one it replaces, once an update in flight is done, and waits\nuntil it is Successful (20m at most each): {REPAIR_DOC}. Answers the update #{{ id, status }}."
    );
    doc(
        "update_node_repair",
        &["cluster: &str", "nodegroup: &str", "repair: Map", "Map"],
        &text,
    )
    .set_into_module(
        eks,
        move |ctx: NativeCallContext, cluster: &str, nodegroup: &str, repair: Map| -> Result {
            update(&h, &c, ctx.call_position(), (cluster, nodegroup), &repair)
        },
    );
}

fn update(
    host: &Host,
    clients: &AwsClients,
    position: Position,
    (cluster, nodegroup): (&str, &str),
    repair: &Map,
) -> Result {
    let wanted = node_repair_of(repair, "eks::update_node_repair", position)?;
    let before = call(host, position, || clients.node_repair(cluster, nodegroup))?;
    let undo = Undo::RestoreNodeRepair {
        cluster: cluster.to_string(),
        nodegroup: nodegroup.to_string(),
        config: serde_json::to_value(&before).unwrap_or_default(),
    };
    let change = Change::new(format!("eks::update_node_repair {cluster} {nodegroup}"))
        .on(format!("nodegroup/{cluster}/{nodegroup}"));
    let update = journaled(host, position, change, Some(undo), || {
        call(host, position, || {
            clients.update_node_repair_settled(
                cluster,
                nodegroup,
                &wanted,
                std::time::Duration::from_secs(1200),
                host.clock.as_ref(),
            )
        })
    })?;
    Ok(json(&update))
}
