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
//! answering: `dcgmi diag` never returns) and `nic-slow=NODE:SHARE` (the node gets
//! that share of its NIC's bandwidth),
//! NODE being a node name or `gpuN`, and `NODE/3` GPU 3 of it (GPU 0 without one); and
//! `nccl-busbw=SHARE` (the network between GPU nodes delivers that share of its bandwidth).
//! `NAME=off` (or `heal=NAME`) turns one off.

use super::gpu::node_faults::{NODE_FORMS, NodeFaults};
use super::kube::controllers::{hardware_changed, node_lifecycle};
use super::kube::storage::state::KubeState;
use super::twin::Twin;
use crate::clock::parse_duration;

pub(crate) const NAMES: &str = "check=NAME, nodegroup-never-joins=NAME, aws-throttle=RATE, aws-5xx=RATE, aws-latency=DURATION, aws-deny=ACTION, aws-expired-token=on, kube-latency=DURATION, link-down=onprem|NODE, ec2-vcpu-quota=on, subnet-ips-exhausted=on, gpu-xid=NODE:CODE, gpu-row-remap-pending=NODE, gpu-ecc-uncorrectable=NODE:COUNT, gpu-missing=NODE, nvlink-down=NODE, gpu-recovery-action=NODE:gpu-reset|node-reboot|drain-p2p|drain-and-reset, gpu-power-capped=NODE:WATTS, gpu-pcie-degraded=NODE:WIDTH, fabric-down=NODE, dcgm-hang=NODE, nic-slow=NODE:SHARE, nccl-busbw=SHARE (NODE/GPU names one GPU of a node: gpu0/3)";

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

fn set_hardware(state: &mut KubeState, name: &str, value: &str) -> Result<(), String> {
    let (target, rest) = target_and_value(name, value)?;
    let now = state.now;
    let off = rest == Some("off");
    if !off {
        gpu_exists(state, name, &target)?;
    }
    let node: &mut NodeFaults = state.hardware.entry(target.node);
    if name == "fabric-down" {
        node.fabric_down = !off;
        return Ok(());
    }
    if name == "dcgm-hang" {
        node.dcgm_hung = !off;
        return Ok(());
    }
    if name == "nic-slow" {
        let share = needs(name, "share", rest)?;
        node.nic_share = if off {
            None
        } else {
            Some(
                share
                    .parse::<f64>()
                    .ok()
                    .filter(|s| *s > 0.0 && *s <= 1.0)
                    .ok_or_else(|| format!("fault nic-slow: the share of bandwidth is a number above 0 and at most 1 (0.3), got `{share}`"))?,
            )
        };
        return Ok(());
    }
    let faults = node.gpu_mut(target.gpu);
    match name {
        "gpu-xid" => {
            let code = needs(name, "code", rest)?;
            if off {
                faults.xids.clear();
            } else {
                let code: u32 = code.parse().ok().filter(|c| *c > 0).ok_or_else(|| {
                    format!(
                        "fault gpu-xid: the Xid is a positive number (79, 48, ...), got `{code}`"
                    )
                })?;
                faults.xids.push((code, now));
            }
        }
        "gpu-row-remap-pending" => faults.row_remap_pending = (!off).then_some(now),
        "gpu-missing" => faults.missing = !off,
        "nvlink-down" => faults.nvlink_down = !off,
        "gpu-recovery-action" => {
            let action = needs(name, "action", rest)?;
            faults.recovery_action = if off {
                None
            } else {
                Some(recovery_action(&action)?.to_string())
            };
        }
        "gpu-power-capped" | "gpu-pcie-degraded" => {
            let what = if name == "gpu-power-capped" {
                "watts"
            } else {
                "width"
            };
            let given = needs(name, what, rest)?;
            let number = if off {
                None
            } else {
                Some(given.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("fault {name}: the {what} is a positive number (150, 4, ...), got `{given}`")
                })?)
            };
            if name == "gpu-power-capped" {
                faults.power_cap_w = number;
            } else {
                faults.pcie_width = number;
            }
        }
        "gpu-ecc-uncorrectable" => {
            let count = needs(name, "count", rest)?;
            faults.ecc_uncorrectable = if off {
                None
            } else {
                let count: u64 = count
                    .parse()
                    .ok()
                    .filter(|c| *c > 0)
                    .ok_or_else(|| format!("fault gpu-ecc-uncorrectable: the error count is a positive number, got `{count}`"))?;
                Some((count, now))
            };
        }
        other => return Err(format!("`{other}` is not a hardware fault")),
    }
    Ok(())
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
    }
}

/// Switches one fault given as `name=value`; answers what is now on, in words.
pub(crate) fn apply(twin: &Twin, spec: &str) -> Result<String, String> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| format!("fault `{spec}` needs a value: one of {NAMES}"))?;
    match name {
        "check" => {
            twin.kube(|s| s.failing_checks.insert(value.to_string()));
        }
        "heal" => {
            twin.kube(|s| {
                s.failing_checks.remove(value);
                if s.hardware.heal(value) {
                    every_gpu_node_refreshed(s);
                }
            });
            twin.aws(|s| s.failing_joins.remove(value));
        }
        "gpu-xid"
        | "gpu-row-remap-pending"
        | "gpu-ecc-uncorrectable"
        | "gpu-missing"
        | "nvlink-down"
        | "nic-slow"
        | "gpu-recovery-action"
        | "gpu-power-capped"
        | "gpu-pcie-degraded"
        | "fabric-down"
        | "dcgm-hang" => {
            twin.kube(|s| hardware(s, name, value))?;
        }
        "nodegroup-never-joins" => {
            twin.aws(|s| s.failing_joins.insert(value.to_string()));
        }
        "link-down" => twin.kube(|s| link_down(s, value))?,
        "ec2-vcpu-quota" | "subnet-ips-exhausted" => {
            let on = match value {
                "on" => true,
                "off" => false,
                _ => return Err(format!("fault {name}: on or off, got `{value}`")),
            };
            twin.aws(|s| {
                if name == "ec2-vcpu-quota" {
                    s.faults.vcpu_quota = on;
                } else {
                    s.faults.subnet_ips_exhausted = on;
                }
            });
        }
        "aws-throttle" => {
            let rate = rate(name, value)?;
            twin.aws(|s| s.faults.throttle_rate = rate);
        }
        "aws-5xx" => {
            let rate = rate(name, value)?;
            twin.aws(|s| s.faults.error_rate = rate);
        }
        "aws-latency" => {
            let latency = latency(name, value)?;
            twin.aws(|s| s.faults.latency = latency);
        }
        "aws-deny" => {
            if value == "off" {
                twin.aws(|s| s.faults.denied.clear());
            } else {
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
            }
        }
        "aws-expired-token" => {
            let on = match value {
                "on" => true,
                "off" => false,
                _ => return Err(format!("fault aws-expired-token: on or off, got `{value}`")),
            };
            twin.aws(|s| s.faults.token_expired = on);
        }
        "kube-latency" => {
            let latency = latency(name, value)?;
            twin.kube(|s| s.latency = latency);
        }
        "nccl-busbw" => {
            let share = if value == "off" {
                None
            } else {
                Some(value.parse::<f64>().ok().filter(|s| *s > 0.0 && *s <= 1.0).ok_or_else(|| {
                    format!("fault nccl-busbw: the share of bandwidth is a number above 0 and at most 1 (0.5), got `{value}`")
                })?)
            };
            twin.kube(|s| s.network_share = share);
        }
        other => return Err(format!("unknown fault `{other}`; the twin knows {NAMES}")),
    }
    Ok(describe(twin))
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
    let mut on: Vec<String> = twin.read_kube(|s| {
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
        on.extend(s.links_down.keys().map(|node| format!("link-down={node}")));
        on.extend(s.hardware.describe());
        on
    });
    twin.aws(|s| {
        on.extend(
            s.failing_joins
                .iter()
                .map(|n| format!("nodegroup-never-joins={n}")),
        );
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
    });
    if on.is_empty() {
        "no faults".into()
    } else {
        on.join(", ")
    }
}
