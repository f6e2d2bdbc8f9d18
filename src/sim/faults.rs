//! Faults a drill can switch on in the twin, by name: `check=NAME` (a readyz/livez check
//! fails), `nodegroup-never-joins=NAME` (that node group's new instances never become nodes),
//! `aws-throttle=RATE`, `aws-5xx=RATE` (a share of AWS calls fails, 0.0-1.0),
//! `aws-latency=DURATION` (added to every AWS call) and `kube-latency=DURATION` (added to every
//! Kubernetes API request, exec included); `link-down=onprem` (or a node's name) cuts
//! on-premises nodes off the control plane (`link-down=off` restores them); `ec2-vcpu-quota=on`
//! and `subnet-ips-exhausted=on` make EC2 refuse the instances an autoscaler starts. A GPU node's hardware: `gpu-xid=NODE:CODE` (the
//! driver reports that Xid; 79 takes the GPU off the bus), `gpu-row-remap-pending=NODE`,
//! `gpu-ecc-uncorrectable=NODE:COUNT`, `gpu-missing=NODE`, `nvlink-down=NODE` (every NVLink of
//! the GPU down), `gpu-recovery-action=NODE:gpu-reset` (or node-reboot, drain-p2p,
//! drain-and-reset: what the driver asks for), `gpu-power-capped=NODE:WATTS`,
//! `gpu-pcie-degraded=NODE:WIDTH` (the link trained that narrow), `fabric-down=NODE` (the
//! NVSwitch fabric never registered the node's GPUs), `dcgm-hang=NODE` (its host engine stops
//! answering: `dcgmi diag` never returns), `nic-slow=NODE:SHARE` (the node gets
//! that share of its NIC's bandwidth) and `efa-down=NODE:COUNT` (that many of its EFA
//! interfaces are down),
//! NODE being a node name or `gpuN`, and `NODE/3` GPU 3 of it (GPU 0 without one); and
//! `nccl-busbw=SHARE` (the network between GPU nodes delivers that share of its bandwidth).
//! `NAME=off` (or `heal=NAME`) turns one off.

use super::aws::state::AwsState;
use super::gpu::node_faults::{GpuFaults, NODE_FORMS, NodeFaults};
use super::kube::controllers::{hardware_changed, node_lifecycle, node_monitoring};
use super::kube::storage::state::KubeState;
use super::twin::Twin;
use crate::clock::parse_duration;

pub(crate) const NAMES: &str = "check=NAME, nodegroup-never-joins=NAME, aws-throttle=RATE, aws-5xx=RATE, aws-latency=DURATION, aws-deny=ACTION, aws-expired-token=on, kube-latency=DURATION, link-down=onprem|NODE, ec2-vcpu-quota=on, subnet-ips-exhausted=on, gpu-xid=NODE:CODE, gpu-row-remap-pending=NODE, gpu-ecc-uncorrectable=NODE:COUNT, gpu-missing=NODE, nvlink-down=NODE, gpu-recovery-action=NODE:gpu-reset|node-reboot|drain-p2p|drain-and-reset, gpu-power-capped=NODE:WATTS, gpu-pcie-degraded=NODE:WIDTH, fabric-down=NODE, dcgm-hang=NODE, nic-slow=NODE:SHARE, efa-down=NODE:COUNT, network-slow=NODE|nn-ID:SHARE, nccl-busbw=SHARE (NODE/GPU names one GPU of a node: gpu0/3)";

fn rate(name: &str, value: &str) -> Result<f64, String> {
    if value == "off" {
        return Ok(0.0);
    }
    value
        .parse::<f64>()
        .ok()
        .filter(|r| (0.0..=1.0).contains(r))
        .ok_or_else(|| format!("fault {name}: the rate is a number from 0.0 to 1.0, got `{value}`"))
}

fn latency(name: &str, value: &str) -> Result<std::time::Duration, String> {
    if value == "off" {
        return Ok(std::time::Duration::ZERO);
    }
    parse_duration(value).map_err(|e| format!("fault {name}: {e}"))
}

/// Where a hardware fault is: the node as the fault names it, and the GPU (0 unless
/// `NODE/INDEX` names another).
struct Target<'a> {
    node: &'a str,
    gpu: u32,
}

/// `NODE`, `NODE/GPU`, `NODE:VALUE` or `NODE/GPU:VALUE` of a hardware fault: where, and the
/// value (None without one).
fn target_and_value<'a>(
    name: &str,
    value: &'a str,
) -> Result<(Target<'a>, Option<&'a str>), String> {
    let (at, rest) = match value.rsplit_once(':') {
        Some((at, rest)) => (at, Some(rest)),
        None => (value, None),
    };
    let (node, gpu) = match at.split_once('/') {
        Some((node, index)) => {
            let most = max_gpus_per_node();
            let gpu = index.parse::<u32>().ok().filter(|i| *i < most).ok_or_else(|| {
                format!("fault {name}: the GPU after `/` is an index from 0 to {} (gpu0/3 is GPU 3 of the first GPU node), got `{index}`", most - 1)
            })?;
            (node, gpu)
        }
        None => (at, 0),
    };
    if node.is_empty() {
        return Err(format!(
            "fault {name}: name the node ({NODE_FORMS}), got `{value}`"
        ));
    }
    Ok((Target { node, gpu }, rest))
}

/// The most GPUs any catalog type has (8: p4d, p5, g6e.48xlarge, ...): an index past them is a
/// typo, whichever node it names.
fn max_gpus_per_node() -> u32 {
    crate::lab::gpu_catalog::INSTANCE_TYPES
        .iter()
        .map(|row| row.gpus)
        .max()
        .unwrap_or(1)
}

/// A GPU index past what the named node has is refused while the node is there to ask.
fn gpu_exists(state: &KubeState, name: &str, target: &Target<'_>) -> Result<(), String> {
    let Some(node) = state.object_ref("nodes", "", target.node) else {
        return Ok(());
    };
    let gpus = super::gpu::programs::node_gpus(node);
    if target.gpu >= gpus {
        return Err(format!(
            "fault {name}: node {} has {gpus} GPU(s) (indexes 0 to {}), so it has no GPU {}",
            target.node,
            gpus.saturating_sub(1),
            target.gpu
        ));
    }
    Ok(())
}

fn needs(name: &str, what: &str, value: Option<&str>) -> Result<String, String> {
    value.map(str::to_string).ok_or_else(|| {
        format!(
            "fault {name}: give the {what} after the node, as {name}=NODE:{}",
            what.to_uppercase()
        )
    })
}

/// One hardware fault on (or off) in `state`; a bad value changes nothing.
fn hardware(state: &mut KubeState, name: &str, value: &str) -> Result<(), String> {
    let set = set_hardware(state, name, value);
    state.hardware.prune();
    if set.is_ok() {
        every_gpu_node_refreshed(state);
    }
    set
}

/// The hardware faults, on a node (`fabric-down`, `dcgm-hang`, `nic-slow`) or one GPU of it.
const HARDWARE: [&str; 13] = [
    "gpu-xid",
    "gpu-replaced",
    "gpu-row-remap-pending",
    "gpu-ecc-uncorrectable",
    "gpu-missing",
    "nvlink-down",
    "nic-slow",
    "efa-down",
    "gpu-recovery-action",
    "gpu-power-capped",
    "gpu-pcie-degraded",
    "fabric-down",
    "dcgm-hang",
];

/// One hardware fault as given: its name, the value after the node (None without one),
/// whether that value is `off`, and when (the virtual time).
struct Change<'a> {
    name: &'a str,
    rest: Option<&'a str>,
    off: bool,
    now: std::time::Duration,
}

fn set_hardware(state: &mut KubeState, name: &str, value: &str) -> Result<(), String> {
    let (target, rest) = target_and_value(name, value)?;
    let change = Change {
        name,
        rest,
        off: rest == Some("off"),
        now: state.now,
    };
    if !change.off {
        gpu_exists(state, name, &target)?;
    }
    let node: &mut NodeFaults = state.hardware.entry(target.node);
    match name {
        "fabric-down" => node.fabric_down = !change.off,
        "dcgm-hang" => node.dcgm_hung = !change.off,
        "nic-slow" => node.nic_share = nic_share(&change)?,
        "efa-down" => node.efa_down = positive_number(&change, "count")?,
        _ => set_gpu_fault(node.gpu_mut(target.gpu), &change)?,
    }
    Ok(())
}

fn set_gpu_fault(faults: &mut GpuFaults, change: &Change<'_>) -> Result<(), String> {
    let on = !change.off;
    match change.name {
        "gpu-xid" => set_xid(faults, change)?,
        "gpu-row-remap-pending" => faults.row_remap_pending = on.then_some(change.now),
        "gpu-missing" => faults.missing = on,
        "gpu-replaced" => faults.replaced = on,
        "nvlink-down" => faults.nvlink_down = on,
        "gpu-recovery-action" => faults.recovery_action = recovery_action_of(change)?,
        "gpu-power-capped" => faults.power_cap_w = positive_number(change, "watts")?,
        "gpu-pcie-degraded" => faults.pcie_width = positive_number(change, "width")?,
        "gpu-ecc-uncorrectable" => faults.ecc_uncorrectable = ecc_errors(change)?,
        other => return Err(format!("`{other}` is not a hardware fault")),
    }
    Ok(())
}

/// The driver reports one more Xid on the GPU (`off` clears them all).
fn set_xid(faults: &mut GpuFaults, change: &Change<'_>) -> Result<(), String> {
    let code = needs(change.name, "code", change.rest)?;
    if change.off {
        faults.xids.clear();
        return Ok(());
    }
    let code: u32 = code.parse().ok().filter(|c| *c > 0).ok_or_else(|| {
        format!("fault gpu-xid: the Xid is a positive number (79, 48, ...), got `{code}`")
    })?;
    faults.xids.push((code, change.now));
    Ok(())
}

fn nic_share(change: &Change<'_>) -> Result<Option<f64>, String> {
    let share = needs(change.name, "share", change.rest)?;
    if change.off {
        return Ok(None);
    }
    bandwidth_share(&share).map(Some).ok_or_else(|| {
        format!("fault nic-slow: the share of bandwidth is a number above 0 and at most 1 (0.3), got `{share}`")
    })
}

/// A share of bandwidth: above 0, at most 1.
fn bandwidth_share(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|s| *s > 0.0 && *s <= 1.0)
}

fn recovery_action_of(change: &Change<'_>) -> Result<Option<String>, String> {
    let action = needs(change.name, "action", change.rest)?;
    if change.off {
        return Ok(None);
    }
    Ok(Some(recovery_action(&action)?.to_string()))
}

/// The power cap's watts or the PCIe link's width: a positive number.
fn positive_number(change: &Change<'_>, what: &str) -> Result<Option<u32>, String> {
    let given = needs(change.name, what, change.rest)?;
    if change.off {
        return Ok(None);
    }
    let number = given
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            format!(
                "fault {}: the {what} is a positive number (150, 4, ...), got `{given}`",
                change.name
            )
        })?;
    Ok(Some(number))
}

/// How many uncorrectable ECC errors the GPU has reported, and since when.
fn ecc_errors(change: &Change<'_>) -> Result<Option<(u64, std::time::Duration)>, String> {
    let count = needs(change.name, "count", change.rest)?;
    if change.off {
        return Ok(None);
    }
    let count: u64 = count.parse().ok().filter(|c| *c > 0).ok_or_else(|| {
        format!("fault gpu-ecc-uncorrectable: the error count is a positive number, got `{count}`")
    })?;
    Ok(Some((count, change.now)))
}

/// The recovery action nvidia-smi prints for a fault's word (`gpu-reset` -> `GPU Reset`).
fn recovery_action(word: &str) -> Result<&'static str, String> {
    const ACTIONS: [(&str, &str); 4] = [
        ("gpu-reset", "GPU Reset"),
        ("node-reboot", "Node Reboot"),
        ("drain-p2p", "Drain P2P"),
        ("drain-and-reset", "Drain and Reset"),
    ];
    ACTIONS
        .iter()
        .find(|(w, _)| *w == word)
        .map(|(_, printed)| *printed)
        .ok_or_else(|| {
            format!("fault gpu-recovery-action: the action is gpu-reset, node-reboot, drain-p2p or drain-and-reset, got `{word}`")
        })
}

/// The device plugin looks again at every GPU node (a fault may name one by position).
fn every_gpu_node_refreshed(state: &mut KubeState) {
    let names: Vec<String> = state
        .store
        .list(&super::kube::storage::state::built_in_key("nodes"), None)
        .filter(|n| super::gpu::programs::node_gpus(n) > 0)
        .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    for name in names {
        hardware_changed(state, &name);
        node_monitoring::findings_changed(state, &name);
    }
}

/// Switches one fault given as `name=value`; answers what is now on, in words.
pub(crate) fn apply(twin: &Twin, spec: &str) -> Result<String, String> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| format!("fault `{spec}` needs a value: one of {NAMES}"))?;
    switch(twin, name, value)?;
    Ok(describe(twin))
}

/// Sets the fault `name` to `value` (a bad value changes nothing).
fn switch(twin: &Twin, name: &str, value: &str) -> Result<(), String> {
    match name {
        "check" => failing_check(twin, value),
        "heal" => heal(twin, value),
        name if HARDWARE.contains(&name) => twin.kube(|s| hardware(s, name, value)),
        "nodegroup-never-joins" => never_joins(twin, value),
        "link-down" => twin.kube(|s| link_down(s, value)),
        "ec2-vcpu-quota" => on_or_off(name, value).map(|on| twin.aws(|s| s.faults.vcpu_quota = on)),
        "subnet-ips-exhausted" => {
            on_or_off(name, value).map(|on| twin.aws(|s| s.faults.subnet_ips_exhausted = on))
        }
        "aws-throttle" => rate(name, value).map(|r| twin.aws(|s| s.faults.throttle_rate = r)),
        "aws-5xx" => rate(name, value).map(|r| twin.aws(|s| s.faults.error_rate = r)),
        "aws-latency" => latency(name, value).map(|l| twin.aws(|s| s.faults.latency = l)),
        "aws-deny" => aws_deny(twin, value),
        "aws-expired-token" => {
            on_or_off(name, value).map(|on| twin.aws(|s| s.faults.token_expired = on))
        }
        "kube-latency" => latency(name, value).map(|l| twin.kube(|s| s.latency = l)),
        "nccl-busbw" => network_share(value).map(|share| twin.kube(|s| s.network_share = share)),
        "network-slow" => twin.kube(|s| network_slow(s, value)),
        other => Err(format!("unknown fault `{other}`; the twin knows {NAMES}")),
    }
}

fn on_or_off(name: &str, value: &str) -> Result<bool, String> {
    match value {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("fault {name}: on or off, got `{value}`")),
    }
}

/// A readyz/livez check fails from now on (the switches below that cannot be refused answer
/// Ok, as the others do).
fn failing_check(twin: &Twin, check: &str) -> Result<(), String> {
    twin.kube(|s| s.failing_checks.insert(check.to_string()));
    Ok(())
}

/// A node group's new instances never become nodes.
fn never_joins(twin: &Twin, nodegroup: &str) -> Result<(), String> {
    twin.aws(|s| s.failing_joins.insert(nodegroup.to_string()));
    Ok(())
}

/// Turns one fault off by name: a check, a node's hardware faults, a node group that never
/// joins.
fn heal(twin: &Twin, name: &str) -> Result<(), String> {
    twin.kube(|s| {
        s.failing_checks.remove(name);
        if s.hardware.heal(name) {
            every_gpu_node_refreshed(s);
        }
    });
    twin.aws(|s| s.failing_joins.remove(name));
    Ok(())
}

/// Denies an IAM action (`off` allows them all again).
fn aws_deny(twin: &Twin, value: &str) -> Result<(), String> {
    if value == "off" {
        twin.aws(|s| s.faults.denied.clear());
        return Ok(());
    }
    let well_formed = value.split_once(':').is_some_and(|(service, action)| {
        matches!(service, "eks" | "ec2" | "iam")
            && action.starts_with(|c: char| c.is_ascii_uppercase())
    });
    if !well_formed {
        return Err(format!(
            "fault aws-deny: an IAM action such as eks:UpdateNodegroupConfig or ec2:DescribeVpcs (or off), got `{value}`"
        ));
    }
    twin.aws(|s| s.faults.denied.insert(value.to_string()));
    Ok(())
}

/// The share of its bandwidth the network between GPU nodes delivers (None: all of it).
fn network_share(value: &str) -> Result<Option<f64>, String> {
    if value == "off" {
        return Ok(None);
    }
    bandwidth_share(value).map(Some).ok_or_else(|| {
        format!("fault nccl-busbw: the share of bandwidth is a number above 0 and at most 1 (0.5), got `{value}`")
    })
}

/// Slows the links up the tree from one network node: `nn-ID:SHARE`, or `NODE:SHARE` for the
/// bottom network node of that node's instance (its block, found when a run is paced, so it
/// may name a node that has not joined yet); `TARGET:off` or `off` ends it.
fn network_slow(state: &mut KubeState, value: &str) -> Result<(), String> {
    if value == "off" {
        state.slow_network_nodes.clear();
        return Ok(());
    }
    let (target, share) = value.rsplit_once(':').filter(|(t, _)| !t.is_empty()).ok_or_else(|| {
        format!("fault network-slow: name a network node (nn-...) or a node whose block it is ({NODE_FORMS}), then the share: network-slow=gpu5:0.4, got `{value}`")
    })?;
    if share == "off" {
        state.slow_network_nodes.remove(target);
        return Ok(());
    }
    let share = bandwidth_share(share).ok_or_else(|| {
        format!("fault network-slow: the share of bandwidth is a number above 0 and at most 1 (0.4), got `{share}`")
    })?;
    state.slow_network_nodes.insert(target.to_string(), share);
    Ok(())
}

/// Cuts (or with `off`, restores) the link of on-premises nodes: `onprem` for every hybrid
/// node, or one node by name.
fn link_down(state: &mut KubeState, value: &str) -> Result<(), String> {
    if value == "off" {
        let down: Vec<String> = state.links_down.keys().cloned().collect();
        for node in down {
            node_lifecycle::restore(state, &node);
        }
        return Ok(());
    }
    let nodes = node_lifecycle::nodes_named(state, value);
    if nodes.is_empty() {
        return Err(format!(
            "fault link-down: no node `{value}`; name a node, `onprem` (every hybrid node) or `off`"
        ));
    }
    for node in nodes {
        node_lifecycle::cut(state, &node);
    }
    Ok(())
}

/// The faults that are on, in words.
pub(crate) fn describe(twin: &Twin) -> String {
    let mut on = twin.read_kube(kube_faults_on);
    twin.aws(|s| on.extend(aws_faults_on(s)));
    if on.is_empty() {
        "no faults".into()
    } else {
        on.join(", ")
    }
}

fn kube_faults_on(s: &KubeState) -> Vec<String> {
    let mut on: Vec<String> = s
        .failing_checks
        .iter()
        .map(|c| format!("check={c}"))
        .collect();
    if !s.latency.is_zero() {
        on.push(format!("kube-latency={}ms", s.latency.as_millis()));
    }
    if let Some(share) = s.network_share {
        on.push(format!("nccl-busbw={share}"));
    }
    on.extend(
        s.slow_network_nodes
            .iter()
            .map(|(node, share)| format!("network-slow={node}:{share}")),
    );
    on.extend(s.links_down.keys().map(|node| format!("link-down={node}")));
    on.extend(s.hardware.describe());
    on
}

fn aws_faults_on(s: &AwsState) -> Vec<String> {
    let mut on: Vec<String> = s
        .failing_joins
        .iter()
        .map(|n| format!("nodegroup-never-joins={n}"))
        .collect();
    if s.faults.throttle_rate > 0.0 {
        on.push(format!("aws-throttle={}", s.faults.throttle_rate));
    }
    if s.faults.error_rate > 0.0 {
        on.push(format!("aws-5xx={}", s.faults.error_rate));
    }
    if !s.faults.latency.is_zero() {
        on.push(format!("aws-latency={}ms", s.faults.latency.as_millis()));
    }
    on.extend(s.faults.denied.iter().map(|a| format!("aws-deny={a}")));
    if s.faults.token_expired {
        on.push("aws-expired-token=on".into());
    }
    if s.faults.vcpu_quota {
        on.push("ec2-vcpu-quota=on".into());
    }
    if s.faults.subnet_ips_exhausted {
        on.push("subnet-ips-exhausted=on".into());
    }
    on
}
