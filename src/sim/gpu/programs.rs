//! The GPU side of what containers run in the twin: `nvidia-smi`, `dcgmi` and `dmesg` in pods
//! on GPU nodes, and nccl-tests' `all_reduce_perf`, `all_gather_perf` and `alltoall_perf`
//! (alone or under `mpirun` across pods, run by all_reduce.rs) whose fate the security groups
//! between the nodes decide. Every one of them sees the node's hardware faults.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::all_reduce::all_reduce;
use super::boards::{BOARDS, board_of};
use super::gpu_model::{GpuHost, seed_from_name};
use super::node_faults::NodeFaults;
use super::{dcgmi, kernel_log, smi_output};
use crate::lab::gpu_catalog;
use crate::sim::kube::programs::{Context, Output};
use crate::sim::kube::storage::state::{KubeState, ProgramRun, built_in_key};
use crate::sim::timestamps::{ctime, parse_rfc3339};

/// What carries a run's traffic between nodes: TCP (NCCL's sockets, on ports 1025-65535) or
/// EFA (SRD, which only All-traffic rules naming a security group let through).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fabric {
    Tcp,
    Efa,
}

/// Whether that traffic passes both ways between the nodes of a run's ranks: given their
/// addresses in order, the first peer that some rank cannot reach, if any. The twin answers
/// it from the EC2 state.
pub(crate) type Network = Arc<dyn Fn(&[String], Fabric) -> Option<String> + Send + Sync>;

/// GPUs of a node, by its instance type.
pub(crate) fn node_gpus(node: &Value) -> u32 {
    gpu_catalog::gpus_of(instance_type(node))
}

pub(super) fn instance_type(node: &Value) -> &str {
    node["metadata"]["labels"]["node.kubernetes.io/instance-type"]
        .as_str()
        .unwrap_or_default()
}

/// The twin draws the GPUs of the catalog types it has a board for (sim/gpu/boards.rs); a
/// node of another type has its GPUs as Kubernetes resources, and its tools answer that they
/// are not modelled rather than show GPUs it does not have.
pub(super) fn unmodelled(node: &Value) -> Option<Output> {
    let row = gpu_catalog::find(instance_type(node))?;
    board_of(row.gpu.smi_name).is_none().then(|| {
        failure(
            1,
            &format!(
                "the lab twin does not model the GPUs of {} ({} x {}) for nvidia-smi, dcgmi, the kernel log or NCCL yet; it models {}\n",
                row.instance_type,
                row.gpus,
                row.gpu.smi_name,
                BOARDS
                    .iter()
                    .map(|b| b.smi_name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

pub(super) fn node_ip(node: &Value) -> String {
    node["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["type"] == "InternalIP")
        .and_then(|a| a["address"].as_str())
        .unwrap_or_default()
        .to_string()
}

pub(super) fn node_name(node: &Value) -> &str {
    node["metadata"]["name"].as_str().unwrap_or_default()
}

/// What the NVIDIA container runtime gives a container: GPU requests or NVIDIA_VISIBLE_DEVICES.
fn sees_gpus(container: &Value) -> bool {
    let requests = |field: &str| !container["resources"][field]["nvidia.com/gpu"].is_null();
    let visible = container["env"].as_array().into_iter().flatten().any(|e| {
        e["name"] == "NVIDIA_VISIBLE_DEVICES"
            && !matches!(e["value"].as_str(), Some("void" | "none" | ""))
    });
    requests("limits") || requests("requests") || visible
}

fn failure(exit_code: i32, stderr: &str) -> Output {
    Output {
        stdout: String::new(),
        stderr: stderr.into(),
        exit_code,
        duration: Some(Duration::ZERO),
    }
}

/// The hardware faults of node `name`, if any.
pub(crate) fn faults_of<'a>(state: &'a KubeState, name: &str) -> Option<&'a NodeFaults> {
    state.hardware.of(name, || {
        let mut names: Vec<String> = state
            .store
            .list(&built_in_key("nodes"), None)
            .filter(|n| node_gpus(n) > 0)
            .map(|n| node_name(n).to_string())
            .collect();
        names.sort();
        names
    })
}

/// The GPU node a fault names: by name, or `gpuN`, the N-th GPU node by name.
pub(crate) fn node_named(state: &KubeState, name: &str) -> Option<Value> {
    if let Some(node) = state.object("nodes", "", name) {
        return Some(node);
    }
    let index: usize = name.strip_prefix("gpu")?.parse().ok()?;
    let mut gpu_nodes: Vec<&Value> = state
        .store
        .list(&built_in_key("nodes"), None)
        .filter(|n| node_gpus(n) > 0)
        .collect();
    gpu_nodes.sort_by(|a, b| node_name(a).cmp(node_name(b)));
    gpu_nodes.get(index).map(|n| (*n).clone())
}

/// The network nodes a node's instance sits under, top layer first (its
/// `topology.k8s.aws/network-node-layer-N` labels); none for a type without a topology.
pub(crate) fn network_nodes(node: &Value) -> Vec<String> {
    (1..=4)
        .map_while(|layer| {
            node["metadata"]["labels"][format!("topology.k8s.aws/network-node-layer-{layer}")]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

/// Every GPU the node's type has, idle, by slot (the index a fault names), before faults.
fn installed_gpus(node: &Value, timestamp: &str) -> GpuHost {
    let name = node_name(node);
    gpu_catalog::find(instance_type(node))
        .and_then(|row| GpuHost::of_type(row, name, seed_from_name(name), timestamp))
        .unwrap_or_else(|| GpuHost::a10g(name, seed_from_name(name), timestamp))
}

/// The node's GPUs at `now`, as its faults leave them: a missing GPU is off the bus and the
/// driver numbers the others without it; a lost one is listed but answers nothing.
pub(crate) fn gpu_host(node: &Value, now: Duration, faults: Option<&NodeFaults>) -> GpuHost {
    let mut host = installed_gpus(node, &ctime(now));
    let Some(faults) = faults else {
        return host;
    };
    for gpu in &mut host.gpus {
        let Some(on_gpu) = faults.gpu(gpu.index) else {
            continue;
        };
        gpu.lost = on_gpu.lost();
        if let Some((count, _)) = on_gpu.ecc_uncorrectable {
            gpu.ecc_uncorrected_volatile = count;
        }
        if on_gpu.row_remap_pending.is_some() {
            gpu.remapped_rows_pending = true;
            gpu.remapped_rows_uncorrectable += 1;
        }
        gpu.nvlink_down = on_gpu.nvlink_down;
        if let Some(action) = &on_gpu.recovery_action {
            gpu.recovery_action.clone_from(action);
        }
        if let Some(watts) = on_gpu.power_cap_w {
            gpu.power_cap_w = watts;
        }
        if let Some(width) = on_gpu.pcie_width {
            gpu.pcie_width = width;
        }
        if on_gpu.replaced {
            gpu.replace_board();
        }
    }
    if faults.fabric_down {
        for gpu in host.gpus.iter_mut().filter(|g| g.fabric.is_some()) {
            gpu.fabric = Some(("Not Started", "N/A"));
        }
    }
    host.gpus
        .retain(|gpu| !faults.gpu(gpu.index).is_some_and(|f| f.missing));
    for (index, gpu) in (0..).zip(host.gpus.iter_mut()) {
        gpu.index = index;
    }
    host
}

/// When the node booted last: when it joined, or its last reboot. Its kernel log counts from
/// there.
pub(crate) fn booted_at(node: &Value, state: &KubeState) -> Duration {
    if let Some((at, _)) = state.reboots.get(node_name(node)) {
        return *at;
    }
    node["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(parse_rfc3339)
        .unwrap_or_default()
}

/// `nvidia-smi ...` where it runs: the node's GPUs, if the container can see them.
fn nvidia_smi(args: &[String], context: &Context<'_>, state: &KubeState) -> Output {
    let Some(node) = context.node.filter(|n| node_gpus(n) > 0) else {
        return failure(
            9,
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n",
        );
    };
    if let Some(refusal) = unmodelled(node) {
        return refusal;
    }
    if !sees_gpus(context.container) {
        return failure(
            127,
            "exec: \"nvidia-smi\": executable file not found in $PATH (the NVIDIA container runtime mounts it only into containers that request nvidia.com/gpu or set NVIDIA_VISIBLE_DEVICES)\n",
        );
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let faults = faults_of(state, node_name(node));
    let out = smi_output::run(&gpu_host(node, state.now, faults), &args);
    Output {
        stdout: out.stdout,
        stderr: out.stderr,
        exit_code: out.exit_code,
        duration: Some(Duration::ZERO),
    }
}

/// `dcgmi diag -r N -j`: DCGM's diagnostic of the node's GPUs, for a container that sees them.
fn dcgmi(args: &[String], context: &Context<'_>, state: &KubeState) -> Output {
    let node = context.node.filter(|n| node_gpus(n) > 0);
    let (Some(node), true) = (node, sees_gpus(context.container)) else {
        return failure(
            1,
            "Error: unable to establish a connection to the host engine: no NVIDIA GPU is visible to this container\n",
        );
    };
    if let Some(refusal) = unmodelled(node) {
        return refusal;
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let faults = faults_of(state, node_name(node));
    if args.first() == Some(&"test") {
        return dcgmi_inject(&args, node);
    }
    if faults.is_some_and(|f| f.dcgm_hung) && args.first() == Some(&"diag") {
        // The host engine took the request and never answers: no output, no end.
        return Output {
            duration: None,
            ..Output::default()
        };
    }
    let out = dcgmi::run(&gpu_host(node, state.now, faults), &args, faults);
    Output {
        stdout: out.stdout,
        stderr: out.stderr,
        exit_code: out.exit_code,
        duration: Some(out.duration),
    }
}

/// `dcgmi test --inject --gpuid G -f 230 -v XID` (DCGM's dcgmi/TestCommands.cpp words); the
/// twin keeps the value (sim/kube/http/exec.rs) and models the Xid field only.
fn dcgmi_inject(args: &[&str], node: &Value) -> Output {
    let argv: Vec<String> = std::iter::once("dcgmi")
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect();
    let Some(super::injected::Injection::DcgmField { gpu, field, .. }) =
        super::injected::parse(&argv)
    else {
        return failure(
            1,
            "Error: the twin's dcgmi test takes --inject --gpuid GPU -f FIELD -v VALUE only\n",
        );
    };
    if gpu >= node_gpus(node) {
        return failure(
            1,
            "Error: Unable to inject info. Return: Bad parameter passed to function\n",
        );
    }
    if field != super::injected::XID_FIELD {
        return failure(
            1,
            &format!(
                "Error: the twin injects field {} (DCGM_FI_DEV_XID_ERRORS) only, got {field}\n",
                super::injected::XID_FIELD
            ),
        );
    }
    Output {
        stdout: "Successfully injected field info.\n".into(),
        stderr: String::new(),
        exit_code: 0,
        duration: Some(Duration::ZERO),
    }
}

/// `sh -c 'echo "LINE" > /dev/kmsg'`: a privileged container writes the host's kernel log
/// (sim/kube/http/exec.rs keeps the line); another has no such device and only makes a file
/// in its own /dev, so the line goes nowhere, as on a real node.
fn kmsg_write() -> Output {
    Output {
        stdout: String::new(),
        stderr: String::new(),
        exit_code: 0,
        duration: Some(Duration::ZERO),
    }
}

pub(crate) fn privileged(container: &Value) -> bool {
    container["securityContext"]["privileged"] == true
}

/// `dmesg`: the node's kernel log, for a privileged container (kernel.dmesg_restrict keeps it
/// from the others, as on the EKS AMIs).
fn dmesg(context: &Context<'_>, state: &KubeState) -> Output {
    if !privileged(context.container) {
        return failure(
            1,
            "dmesg: read kernel buffer failed: Operation not permitted\n",
        );
    }
    let Some(node) = context.node else {
        return failure(1, "dmesg: read kernel buffer failed: No such device\n");
    };
    if let Some(refusal) = unmodelled(node) {
        return refusal;
    }
    let faults = faults_of(state, node_name(node));
    let mut host = installed_gpus(node, "");
    host.gpus.retain(|gpu| {
        !faults
            .and_then(|f| f.gpu(gpu.index))
            .is_some_and(|f| f.missing)
    });
    Output {
        stdout: kernel_log::dmesg(
            booted_at(node, state),
            &host.gpus,
            faults,
            state
                .injected
                .get(node_name(node))
                .map_or(&[][..], |i| &i.kernel_lines[..]),
        ),
        stderr: String::new(),
        exit_code: 0,
        duration: Some(Duration::ZERO),
    }
}

/// Whether an exec of `argv` holds its caller for the program's whole run: DCGM's
/// diagnostic, minutes to hours long, which a health check waits for; the twin's other
/// programs answer an exec at once (their seconds matter to no one waiting).
pub(crate) fn holds_its_exec(argv: &[String]) -> bool {
    argv.first()
        .is_some_and(|p| p.rsplit('/').next() == Some("dcgmi"))
        && argv.get(1).is_some_and(|a| a == "diag")
}

/// Answers an exec of a GPU program; `None` for anything else.
pub(crate) fn exec(argv: &[String], context: &Context<'_>, state: &KubeState) -> Option<Output> {
    if let Some(device) = crate::gpu::efa::loopback::loopback_device(argv) {
        return Some(super::efa_tools::loopback(&device, context, state));
    }
    if matches!(
        super::injected::parse(argv),
        Some(super::injected::Injection::KernelLine(_))
    ) {
        return Some(kmsg_write());
    }
    let (program, args) = argv.split_first()?;
    match program.rsplit('/').next()? {
        "nvidia-smi" => Some(nvidia_smi(args, context, state)),
        "fi_info" if args == ["-p", "efa"] => Some(super::efa_tools::fi_info(context, state)),
        "dcgmi" => Some(dcgmi(args, context, state)),
        "dmesg" => Some(dmesg(context, state)),
        _ => None,
    }
}

/// Decides a container's program when it is a GPU one; `None` for anything else.
pub(crate) fn container(
    pod: &Value,
    container: &Value,
    state: &KubeState,
    network: &Network,
) -> Option<ProgramRun> {
    let argv = crate::sim::kube::programs::container_argv(container);
    let program = argv.first()?.rsplit('/').next()?.to_string();
    match program.as_str() {
        "mpirun" | "all_reduce_perf" | "all_gather_perf" | "alltoall_perf" => {
            Some(all_reduce(&argv, pod, container, state, network))
        }
        // DCGM's host engine (`nv-hostengine -n`) serves until the pod ends.
        "nv-hostengine" => Some(ProgramRun {
            stdout: format!(
                "Started host engine version {} using port number: 5555 \n",
                dcgmi::DCGM_VERSION
            ),
            exit_code: 0,
            duration: None,
            later: Vec::new(),
        }),
        "nvidia-smi" => {
            let node = pod["spec"]["nodeName"]
                .as_str()
                .and_then(|n| state.object("nodes", "", n));
            let out = nvidia_smi(
                &argv[1..],
                &Context {
                    pod,
                    container,
                    node: node.as_ref(),
                },
                state,
            );
            Some(ProgramRun {
                stdout: format!("{}{}", out.stdout, out.stderr),
                exit_code: out.exit_code,
                duration: Some(Duration::ZERO),
                later: Vec::new(),
            })
        }
        _ => None,
    }
}
