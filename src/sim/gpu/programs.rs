//! The GPU side of what containers run in the twin: `nvidia-smi`, `dcgmi` and `dmesg` in pods
//! on GPU nodes, and nccl-tests' `all_reduce_perf` (alone or under `mpirun` across pods) whose
//! fate the security groups between the nodes decide. Every one of them sees the node's
//! hardware faults.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::boards::{BOARDS, board_of};
use super::efa;
use super::gpu_model::{GpuHost, seed_from_name};
use super::nccl_tests::model::LocalPath;
use super::nccl_tests::{self, NcclDebug, NcclRun, Outcome, RankInfo};
use super::node_faults::NodeFaults;
use super::{dcgmi, kernel_log, nvidia_smi};
use crate::lab::{gpu_catalog, nccl_figures};
use crate::sim::kube::programs::{Context, Output};
use crate::sim::kube::storage::state::{KubeState, ProgramRun, built_in_key};
use crate::sim::timestamps::{ctime, parse_rfc3339, unix_seconds};

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

fn instance_type(node: &Value) -> &str {
    node["metadata"]["labels"]["node.kubernetes.io/instance-type"]
        .as_str()
        .unwrap_or_default()
}

/// The twin draws the GPUs of the catalog types it has a board for (sim/gpu/boards.rs); a
/// node of another type has its GPUs as Kubernetes resources, and its tools answer that they
/// are not modelled rather than show GPUs it does not have.
fn unmodelled(node: &Value) -> Option<Output> {
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

fn node_ip(node: &Value) -> String {
    node["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["type"] == "InternalIP")
        .and_then(|a| a["address"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn node_name(node: &Value) -> &str {
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

/// Every GPU the node's type has, idle, by slot (the index a fault names), before faults.
fn installed_gpus(node: &Value, timestamp: &str) -> GpuHost {
    let name = node_name(node);
    gpu_catalog::find(instance_type(node))
        .and_then(|row| GpuHost::of_type(row, name, seed_from_name(name), timestamp))
        .unwrap_or_else(|| GpuHost::a10g(name, seed_from_name(name), timestamp))
}

/// The node's GPUs at `now`, as its faults leave them: a missing GPU is off the bus and the
/// driver numbers the others without it; a lost one is listed but answers nothing.
fn gpu_host(node: &Value, now: Duration, faults: Option<&NodeFaults>) -> GpuHost {
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

/// When the node joined: its kernel log counts from there.
fn booted_at(node: &Value) -> Duration {
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
    let out = nvidia_smi::run(&gpu_host(node, state.now, faults), &args);
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
        duration: Some(Duration::ZERO),
    }
}

fn privileged(container: &Value) -> bool {
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
        stdout: kernel_log::dmesg(booted_at(node), &host.gpus, faults),
        stderr: String::new(),
        exit_code: 0,
        duration: Some(Duration::ZERO),
    }
}

/// Answers an exec of a GPU program; `None` for anything else.
pub(crate) fn exec(argv: &[String], context: &Context<'_>, state: &KubeState) -> Option<Output> {
    let (program, args) = argv.split_first()?;
    match program.rsplit('/').next()? {
        "nvidia-smi" => Some(nvidia_smi(args, context, state)),
        "dcgmi" => Some(dcgmi(args, context, state)),
        "dmesg" => Some(dmesg(context, state)),
        _ => None,
    }
}

/// `-b 8 -e 128M -f 2 -g 1 -n 20 -w 5` of nccl-tests.
fn apply_test_args(run: &mut NcclRun, args: &[String]) -> Result<usize, String> {
    let size = |text: &str| -> Result<u64, String> {
        let (digits, unit) = text.split_at(
            text.find(|c: char| !c.is_ascii_digit())
                .unwrap_or(text.len()),
        );
        let n: u64 = digits.parse().map_err(|_| format!("invalid size {text}"))?;
        Ok(n * match unit {
            "" => 1,
            "K" | "k" => 1 << 10,
            "M" | "m" => 1 << 20,
            "G" | "g" => 1 << 30,
            _ => return Err(format!("invalid size {text}")),
        })
    };
    let mut gpus = 1;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).map(String::as_str).unwrap_or_default();
        match args[i].as_str() {
            "-b" | "--minbytes" => run.min_bytes = size(value)?,
            "-e" | "--maxbytes" => run.max_bytes = size(value)?,
            "-f" | "--stepfactor" => {
                run.step_factor = value
                    .parse()
                    .map_err(|_| format!("invalid step factor {value}"))?
            }
            "-g" | "--ngpus" => {
                gpus = value
                    .parse()
                    .map_err(|_| format!("invalid GPU count {value}"))?
            }
            "-n" | "--iters" => {
                run.iters = value
                    .parse()
                    .map_err(|_| format!("invalid iteration count {value}"))?
            }
            "-w" | "--warmup_iters" => {
                run.warmup_iters = value
                    .parse()
                    .map_err(|_| format!("invalid warmup count {value}"))?
            }
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    Ok(gpus)
}

/// The pods an `mpirun --host a:1,b:1` names (worker pods by name or `name.service`).
fn hosts_of(mpirun_args: &[String]) -> Vec<(String, usize)> {
    let list = mpirun_args
        .iter()
        .position(|a| a == "--host" || a == "-H")
        .and_then(|i| mpirun_args.get(i + 1));
    list.map(|l| {
        l.split(',')
            .filter(|h| !h.is_empty())
            .map(|h| {
                let (host, slots) = h.split_once(':').unwrap_or((h, "1"));
                let pod = host.split('.').next().unwrap_or(host).to_string();
                (pod, slots.parse().unwrap_or(1))
            })
            .collect()
    })
    .unwrap_or_default()
}

/// An NCCL variable as the ranks see it: mpirun's `-x NAME=VALUE`, else the container's env.
fn nccl_env(argv: &[String], container: &Value, name: &str) -> Option<String> {
    let from_env = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str().map(str::to_string));
    let prefix = format!("{name}=");
    let from_mpirun = argv
        .iter()
        .find_map(|a| a.strip_prefix(&prefix).map(str::to_string));
    from_mpirun.or(from_env)
}

fn debug_level(argv: &[String], container: &Value) -> NcclDebug {
    match nccl_env(argv, container, "NCCL_DEBUG").as_deref() {
        Some("INFO" | "TRACE") => NcclDebug::Info,
        Some("WARN") => NcclDebug::Warn,
        _ => NcclDebug::Off,
    }
}

/// `all_reduce_perf`, directly or under `mpirun`, as a container's main program.
fn all_reduce(
    argv: &[String],
    pod: &Value,
    container: &Value,
    state: &KubeState,
    network: &Network,
) -> ProgramRun {
    let fail = |message: String| ProgramRun {
        stdout: message,
        exit_code: 1,
        duration: Some(Duration::ZERO),
        later: Vec::new(),
    };
    let Some(test_at) = argv
        .iter()
        .position(|a| a.rsplit('/').next() == Some("all_reduce_perf"))
    else {
        return fail("mpirun: no program to run (the lab twin runs all_reduce_perf)\n".into());
    };
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let mut placements: Vec<(Value, Value, usize)> = Vec::new();
    let hosts = hosts_of(&argv[..test_at]);
    let here = pod["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let hosts = if hosts.is_empty() {
        vec![(here, 1)]
    } else {
        hosts
    };
    for (name, slots) in hosts {
        let Some(worker) = state.object("pods", namespace, &name) else {
            return fail(format!(
                "ssh: Could not resolve hostname {name}: Name or service not known\n--------------------------------------------------------------------------\nORTE was unable to reliably start one or more daemons.\n--------------------------------------------------------------------------\n"
            ));
        };
        let node = worker["spec"]["nodeName"]
            .as_str()
            .and_then(|n| state.object("nodes", "", n));
        let Some(node) = node.filter(|n| node_gpus(n) > 0) else {
            return fail(format!(
                "{name}: no CUDA-capable device is detected (the pod is not on a GPU node)\n"
            ));
        };
        placements.push((worker, node, slots));
    }
    let mut run = NcclRun::new(Vec::new(), unix_seconds(state.now));
    let gpus = match apply_test_args(&mut run, &argv[test_at + 1..]) {
        Ok(g) => g,
        Err(message) => return fail(format!("{message}\n")),
    };
    run.debug = debug_level(&argv[..test_at], container);
    run.algorithm = nccl_env(&argv[..test_at], container, "NCCL_ALGO");
    let mut hosts = Vec::new();
    for (index, (worker, node, slots)) in placements.iter().enumerate() {
        let faults = faults_of(state, node_name(node));
        if faults.is_some_and(NodeFaults::any_ecc_uncorrectable) {
            run.corrupted_ranks += u32::try_from(gpus * slots).unwrap_or(u32::MAX);
        }
        if let Some(refusal) = unmodelled(node) {
            return fail(refusal.stderr);
        }
        let host = gpu_host(node, state.now, faults);
        if host.gpus.is_empty() || host.gpus.iter().any(|g| g.lost) {
            return fail(format!(
                "{}: no CUDA-capable device is detected\n",
                worker["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
        let ip = worker["status"]["podIP"]
            .as_str()
            .map_or_else(|| node_ip(node), str::to_string);
        let name = worker["metadata"]["name"].as_str().unwrap_or_default();
        for process in 0..*slots {
            let pid = 1000 + 37 * index as u32 + process as u32;
            for device in 0..gpus {
                let gpu = &host.gpus[(process * gpus + device) % host.gpus.len()];
                run.ranks.push(RankInfo::on_gpu(name, &ip, pid, gpu));
            }
        }
        hosts.push(host);
    }
    let efa_nics = placements
        .iter()
        .map(|(worker, node, _)| {
            let given = worker["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .map(efa::requested)
                .max()
                .unwrap_or(0);
            given.min(efa::interfaces(node))
        })
        .min()
        .unwrap_or(0);
    let pace = pace_of(&placements, &hosts, efa_nics);
    // AWS's nccl-tests images carry aws-ofi-nccl; on a type with EFA its search for devices
    // is in the log whether or not the pod got any (on the lab's g5 it is left out).
    run.aws_ofi_nccl = placements
        .iter()
        .all(|(_, node, _)| efa::interfaces(node) > 0);
    run.network = pace.network;
    run.local = pace.local;
    run.busbw_gbps = pace.busbw_gbps;
    run.latency_us = pace.latency_us;
    // A run across nodes goes at the pace the network between them allows.
    let nodes: std::collections::BTreeSet<&str> = placements
        .iter()
        .map(|(_, node, _)| node_name(node))
        .collect();
    if let (Some(share), true) = (state.network_share, nodes.len() > 1) {
        run.busbw_gbps *= share;
    }
    // The run goes at the pace of its slowest NIC.
    let slowest_nic = placements
        .iter()
        .filter_map(|(_, node, _)| faults_of(state, node_name(node)).and_then(|f| f.nic_share))
        .fold(1.0_f64, f64::min);
    if nodes.len() > 1 {
        run.busbw_gbps *= slowest_nic;
    }
    let ips: Vec<String> = placements
        .iter()
        .map(|(_, node, _)| node_ip(node))
        .collect();
    let fabric = match run.network {
        nccl_tests::model::Network::Efa { .. } => Fabric::Efa,
        nccl_tests::model::Network::Socket => Fabric::Tcp,
    };
    // The bootstrap always goes over TCP; EFA carries the collective once that is up.
    let blocked = network(&ips, Fabric::Tcp);
    run.outcome = match blocked {
        Some(peer) => Outcome::Hang {
            unreachable_peer_ip: peer,
            waited_s: 0,
        },
        None if fabric == Fabric::Efa => match network(&ips, Fabric::Efa) {
            Some(peer) => Outcome::EfaUnreachable {
                peer_ip: peer,
                host_id: placements
                    .first()
                    .and_then(|(_, node, _)| node["spec"]["providerID"].as_str())
                    .and_then(|id| id.rsplit('/').next())
                    .unwrap_or("N/A")
                    .to_string(),
            },
            None => Outcome::Ok,
        },
        None => Outcome::Ok,
    };
    match run.outcome {
        Outcome::Ok => {
            let transcript = nccl_tests::run(&run);
            ProgramRun {
                stdout: transcript.stdout,
                exit_code: transcript.exit_code.unwrap_or(0),
                // Twenty-odd sizes times 25 iterations, twice: about half a minute on this network.
                duration: Some(Duration::from_secs(30)),
                later: Vec::new(),
            }
        }
        Outcome::Hang { .. } => hang(run),
        Outcome::EfaUnreachable { .. } => {
            // Everything up to the first collective prints at once; the failure comes when
            // the plugin gives up on the handshake.
            let transcript = nccl_tests::run(&run);
            let ids = nccl_tests::nccl_log::Ids::of(&run);
            let host_id = match &run.outcome {
                Outcome::EfaUnreachable { host_id, .. } => host_id.clone(),
                _ => String::new(),
            };
            let end = nccl_tests::report::efa_unreachable_end(&run, &ids, &host_id);
            let at = Duration::from_secs(nccl_tests::report::EFA_HANDSHAKE_GIVES_UP_S);
            let first = transcript
                .stdout
                .strip_suffix(end.as_str())
                .unwrap_or(&transcript.stdout)
                .to_string();
            ProgramRun {
                stdout: first,
                exit_code: 3,
                duration: Some(at),
                later: end.lines().map(|line| (at, line.to_string())).collect(),
            }
        }
    }
}

/// How fast a run goes and over what: its transports, bus bandwidth and latency.
struct Pace {
    network: nccl_tests::model::Network,
    local: LocalPath,
    busbw_gbps: f64,
    latency_us: f64,
}

/// Latency of an empty all-reduce inside an NVLink node, and across nodes over EFA (the twin's
/// estimates: NCCL's small-message times on these fabrics are tens of microseconds in one node
/// and about a hundred across two).
const NVLINK_LATENCY_US: f64 = 20.0;
const EFA_LATENCY_US: f64 = 100.0;

/// The pace of a run over `placements` (their hosts in the same order), given the EFA devices
/// each worker was given (0: none, so NCCL uses sockets between nodes). Calibrated on the
/// published figures of the catalog (lab/nccl_figures.rs).
fn pace_of(placements: &[(Value, Value, usize)], hosts: &[GpuHost], efa_nics: u32) -> Pace {
    let rows: Vec<&'static gpu_catalog::GpuInstanceType> = placements
        .iter()
        .filter_map(|(_, node, _)| gpu_catalog::find(instance_type(node)))
        .collect();
    let nvlink_up = hosts
        .iter()
        .all(|h| h.gpus.iter().all(|g| g.nvlinks > 0 && !g.nvlink_down));
    let local = if nvlink_up {
        LocalPath::NvLink
    } else {
        LocalPath::Shm
    };
    let sockets = NcclRun::new(Vec::new(), 0);
    let Some(row) = rows.first().copied() else {
        return Pace {
            network: nccl_tests::model::Network::Socket,
            local,
            busbw_gbps: sockets.busbw_gbps,
            latency_us: sockets.latency_us,
        };
    };
    // Inside a node: the published figure with NVLink up; through host memory otherwise.
    let in_node = if nvlink_up {
        nccl_figures::in_node(row).map(|f| f.busbw_gbps)
    } else {
        None
    }
    .unwrap_or(nccl_figures::THROUGH_HOST_MEMORY.busbw_gbps);
    let multi_gpu = placements.iter().any(|(_, _, slots)| *slots > 1);
    if placements.len() == 1 {
        return Pace {
            network: nccl_tests::model::Network::Socket,
            local,
            busbw_gbps: if multi_gpu {
                in_node
            } else {
                sockets.busbw_gbps
            },
            latency_us: if nvlink_up {
                NVLINK_LATENCY_US
            } else {
                sockets.latency_us
            },
        };
    }
    let slowest = |figure: fn(&gpu_catalog::GpuInstanceType) -> f64| {
        rows.iter().map(|r| figure(r)).fold(f64::INFINITY, f64::min)
    };
    if efa_nics > 0 {
        let efa = slowest(|r| {
            nccl_figures::two_nodes_efa(r).map_or_else(
                // No published figure: EFA's line rate at the lab's socket efficiency.
                || nccl_figures::line_rate_gbits(r.network_performance) / 8.0 * (1.1 / 1.25),
                |f| f.busbw_gbps,
            )
        });
        return Pace {
            network: nccl_tests::model::Network::Efa {
                nics: efa_nics,
                instance_type: row.instance_type.to_string(),
            },
            local,
            busbw_gbps: if multi_gpu { efa.min(in_node) } else { efa },
            latency_us: EFA_LATENCY_US,
        };
    }
    Pace {
        network: nccl_tests::model::Network::Socket,
        local,
        busbw_gbps: slowest(nccl_figures::socket_busbw_gbps),
        latency_us: sockets.latency_us,
    }
}

/// NCCL retries a connect that times out every ~127 s (2 min SYN timeout), 35 times; a hung
/// run's log grows by those lines as time passes, then its ranks give up (or it hangs on).
const RETRY_EVERY_S: u64 = 127;
const RETRIES: u64 = 36;

fn with_wait(run: &NcclRun, waited_s: u64) -> NcclRun {
    let mut run = run.clone();
    if let Outcome::Hang {
        unreachable_peer_ip,
        ..
    } = &run.outcome
    {
        run.outcome = Outcome::Hang {
            unreachable_peer_ip: unreachable_peer_ip.clone(),
            waited_s,
        };
    }
    run
}

fn hang(run: NcclRun) -> ProgramRun {
    let first = nccl_tests::run(&with_wait(&run, 0));
    let mut printed = first.stdout.clone();
    let mut later = Vec::new();
    let mut ends = None;
    for attempt in 1..=RETRIES {
        let at = attempt * RETRY_EVERY_S;
        let transcript = nccl_tests::run(&with_wait(&run, at));
        if let Some(rest) = transcript.stdout.strip_prefix(printed.as_str()) {
            later.extend(
                rest.lines()
                    .map(|line| (Duration::from_secs(at), line.to_string())),
            );
        }
        printed = transcript.stdout;
        if let Some(code) = transcript.exit_code {
            ends = Some((at, code));
            break;
        }
    }
    ProgramRun {
        stdout: first.stdout,
        exit_code: ends.map_or(0, |(_, code)| code),
        duration: ends.map(|(at, _)| Duration::from_secs(at)),
        later,
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
        "mpirun" | "all_reduce_perf" => Some(all_reduce(&argv, pod, container, state, network)),
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
