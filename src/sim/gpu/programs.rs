//! The GPU side of what containers run in the twin: `nvidia-smi`, `dcgmi` and `dmesg` in pods
//! on GPU nodes, and nccl-tests' `all_reduce_perf` (alone or under `mpirun` across pods) whose
//! fate the security groups between the nodes decide. Every one of them sees the node's
//! hardware faults.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::gpu_model::{GpuHost, seed_from_name};
use super::nccl_tests::model::SOCKET_BUSBW_GBPS;
use super::nccl_tests::{self, NcclDebug, NcclRun, Outcome, RankInfo};
use super::node_faults::NodeFaults;
use super::{dcgmi, kernel_log, nvidia_smi};
use crate::lab::gpu_catalog;
use crate::sim::kube::programs::{Context, Output};
use crate::sim::kube::state::{KubeState, ProgramRun, built_in_key};
use crate::sim::timestamps::{ctime, parse_rfc3339, unix_seconds};

/// Whether TCP on NCCL's ports (1025-65535) passes both ways between the nodes of a run's
/// ranks: given their addresses in order, the first peer that some rank cannot reach, if
/// any. The twin answers it from the EC2 state.
pub type Network = Arc<dyn Fn(&[String]) -> Option<String> + Send + Sync>;

/// GPUs of a node, by its instance type.
pub fn node_gpus(node: &Value) -> u32 {
    gpu_catalog::gpus_of(instance_type(node))
}

fn instance_type(node: &Value) -> &str {
    node["metadata"]["labels"]["node.kubernetes.io/instance-type"]
        .as_str()
        .unwrap_or_default()
}

/// The twin's NVIDIA tools model the g5 family's A10G hosts so far: a node of another GPU type
/// has its GPUs as Kubernetes resources, and its tools answer that they are not modelled
/// rather than show A10Gs it does not have.
fn unmodelled(node: &Value) -> Option<Output> {
    let row = gpu_catalog::find(instance_type(node))?;
    (row.gpu.aws_name != "A10G").then(|| {
        failure(
            1,
            &format!(
                "the lab twin does not model the GPUs of {} ({} x {}) for nvidia-smi, dcgmi, the kernel log or NCCL yet; it models the g5 family's A10G\n",
                row.instance_type, row.gpus, row.gpu.smi_name
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
pub fn faults_of<'a>(state: &'a KubeState, name: &str) -> Option<&'a NodeFaults> {
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

/// The node's GPUs at `now`, as its faults leave them (the first GPU takes the faults).
fn gpu_host(node: &Value, now: Duration, faults: Option<&NodeFaults>) -> GpuHost {
    let mut host = GpuHost::a10g(
        node_name(node),
        seed_from_name(node_name(node)),
        &ctime(now),
    );
    let Some(faults) = faults else {
        return host;
    };
    if faults.gpu_missing {
        host.gpus.remove(0);
        return host;
    }
    let gpu = &mut host.gpus[0];
    gpu.lost = faults.gpu_lost();
    if let Some((count, _)) = faults.ecc_uncorrectable {
        gpu.ecc_uncorrected_volatile = count;
    }
    if faults.row_remap_pending.is_some() {
        gpu.remapped_rows_pending = true;
        gpu.remapped_rows_uncorrectable += 1;
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
    let host = GpuHost::a10g(node_name(node), seed_from_name(node_name(node)), "");
    Output {
        stdout: kernel_log::dmesg(booted_at(node), &host.gpus[0], faults),
        stderr: String::new(),
        exit_code: 0,
        duration: Some(Duration::ZERO),
    }
}

/// Answers an exec of a GPU program; `None` for anything else.
pub fn exec(argv: &[String], context: &Context<'_>, state: &KubeState) -> Option<Output> {
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

fn debug_level(argv: &[String], container: &Value) -> NcclDebug {
    let from_env = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == "NCCL_DEBUG")
        .and_then(|e| e["value"].as_str().map(str::to_string));
    let from_mpirun = argv
        .iter()
        .find_map(|a| a.strip_prefix("NCCL_DEBUG=").map(str::to_string));
    match from_mpirun.or(from_env).as_deref() {
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
    // A run across nodes goes at the pace the network between them allows.
    let nodes: std::collections::BTreeSet<&str> = placements
        .iter()
        .map(|(_, node, _)| node_name(node))
        .collect();
    if let (Some(share), true) = (state.network_share, nodes.len() > 1) {
        run.busbw_gbps = run.busbw_gbps.min(SOCKET_BUSBW_GBPS * share);
    }
    for (index, (worker, node, slots)) in placements.iter().enumerate() {
        let faults = faults_of(state, node_name(node));
        // The run goes at the pace of its slowest NIC.
        if let Some(share) = faults.and_then(|f| f.nic_share) {
            run.busbw_gbps = run.busbw_gbps.min(SOCKET_BUSBW_GBPS * share);
        }
        if faults.is_some_and(|f| f.ecc_uncorrectable.is_some()) {
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
    }
    let ips: Vec<String> = placements
        .iter()
        .map(|(_, node, _)| node_ip(node))
        .collect();
    let blocked = network(&ips);
    run.outcome = match blocked {
        Some(peer) => Outcome::Hang {
            unreachable_peer_ip: peer,
            waited_s: 0,
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
pub fn container(
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
