//! nccl-tests' `all_reduce_perf`, `all_gather_perf` and `alltoall_perf` as a container's main
//! program, alone or under `mpirun` across pods: where its ranks land, how fast it goes, and
//! whether the security groups between the nodes let it finish, hang on a connect, or lose the
//! EFA handshake.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::efa;
use super::gpu_model::GpuHost;
use super::nccl_tests::model::LocalPath;
use super::nccl_tests::{self, NcclDebug, NcclRun, Outcome, RankInfo};
use super::network_pace;
use super::node_faults::NodeFaults;
use super::programs::{
    Fabric, Network, faults_of, gpu_host, instance_type, node_gpus, node_ip, node_name, unmodelled,
};
use crate::lab::nccl_scale::Collective;
use crate::lab::{gpu_catalog, nccl_figures};
use crate::sim::kube::storage::state::{KubeState, ProgramRun};
use crate::sim::timestamps::unix_seconds;

/// A worker pod of the run, the node it is on, and how many processes (`mpirun` slots) it runs.
type Placement = (Value, Value, usize);

/// A byte count of nccl-tests' options: digits, then an optional K, M or G.
fn byte_size(text: &str) -> Result<u64, String> {
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
}

/// `-b 8 -e 128M -f 2 -g 1 -n 20 -w 5` of nccl-tests.
fn apply_test_args(run: &mut NcclRun, args: &[String]) -> Result<usize, String> {
    let mut gpus = 1;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).map(String::as_str).unwrap_or_default();
        match args[i].as_str() {
            "-b" | "--minbytes" => run.min_bytes = byte_size(value)?,
            "-e" | "--maxbytes" => run.max_bytes = byte_size(value)?,
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

/// A run that ends at once with `message` and exit status 1.
fn fail(message: String) -> ProgramRun {
    ProgramRun {
        stdout: message,
        exit_code: 1,
        duration: Some(Duration::ZERO),
        later: Vec::new(),
    }
}

/// `all_reduce_perf`, directly or under `mpirun`, as a container's main program.
pub(super) fn all_reduce(
    argv: &[String],
    pod: &Value,
    container: &Value,
    state: &KubeState,
    network: &Network,
) -> ProgramRun {
    match planned_run(argv, pod, container, state, network) {
        Ok(run) => played(run),
        Err(message) => fail(message),
    }
}

/// The run `argv` asks for, with its ranks placed, its pace set and its outcome decided; or
/// the message it fails with before it starts.
fn planned_run(
    argv: &[String],
    pod: &Value,
    container: &Value,
    state: &KubeState,
    network: &Network,
) -> Result<NcclRun, String> {
    let (test_at, collective) = argv
        .iter()
        .enumerate()
        .find_map(|(at, a)| {
            let program = a.rsplit('/').next()?;
            let collective = Collective::ALL.into_iter().find(|c| c.program() == program)?;
            Some((at, collective))
        })
        .ok_or(
            "mpirun: no program to run (the lab twin runs all_reduce_perf, all_gather_perf and alltoall_perf)\n",
        )?;
    let placements = placements(&argv[..test_at], pod, state)?;
    let mut run = NcclRun::new(Vec::new(), unix_seconds(state.now));
    run.collective = collective;
    let gpus = apply_test_args(&mut run, &argv[test_at + 1..]).map_err(|m| format!("{m}\n"))?;
    run.debug = debug_level(&argv[..test_at], container);
    run.algorithm = nccl_env(&argv[..test_at], container, "NCCL_ALGO");
    let mut hosts = Vec::new();
    for (index, placement) in placements.iter().enumerate() {
        hosts.push(place_ranks(&mut run, index, placement, gpus, state)?);
    }
    set_pace(&mut run, &placements, &hosts, state);
    run.outcome = outcome(&run, &placements, network);
    Ok(run)
}

/// The worker pods `mpirun` names (the pod itself without `--host`), each on its GPU node.
fn placements(
    mpirun_args: &[String],
    pod: &Value,
    state: &KubeState,
) -> Result<Vec<Placement>, String> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let hosts = hosts_of(mpirun_args);
    let here = pod["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let hosts = if hosts.is_empty() {
        vec![(here, 1)]
    } else {
        hosts
    };
    let mut placements = Vec::new();
    for (name, slots) in hosts {
        let Some(worker) = state.object("pods", namespace, &name) else {
            return Err(format!(
                "ssh: Could not resolve hostname {name}: Name or service not known\n--------------------------------------------------------------------------\nORTE was unable to reliably start one or more daemons.\n--------------------------------------------------------------------------\n"
            ));
        };
        let node = worker["spec"]["nodeName"]
            .as_str()
            .and_then(|n| state.object("nodes", "", n));
        let Some(node) = node.filter(|n| node_gpus(n) > 0) else {
            return Err(format!(
                "{name}: no CUDA-capable device is detected (the pod is not on a GPU node)\n"
            ));
        };
        placements.push((worker, node, slots));
    }
    Ok(placements)
}

/// Adds the ranks of the `index`-th placement to `run`, `gpus` per process, and returns its
/// node's GPUs; a node whose GPUs are gone or not modelled fails the run.
fn place_ranks(
    run: &mut NcclRun,
    index: usize,
    (worker, node, slots): &Placement,
    gpus: usize,
    state: &KubeState,
) -> Result<GpuHost, String> {
    let faults = faults_of(state, node_name(node));
    if faults.is_some_and(NodeFaults::any_ecc_uncorrectable) {
        run.corrupted_ranks += u32::try_from(gpus * slots).unwrap_or(u32::MAX);
    }
    if let Some(refusal) = unmodelled(node) {
        return Err(refusal.stderr);
    }
    let host = gpu_host(node, state.now, faults);
    if host.gpus.is_empty() || host.gpus.iter().any(|g| g.lost) {
        return Err(format!(
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
    Ok(host)
}

/// The EFA devices every worker got: the fewest any container asked for and its node has.
fn efa_nics(placements: &[Placement]) -> u32 {
    placements
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
        .unwrap_or(0)
}

/// Sets the run's transports, bandwidth and latency from its nodes, then slows a run across
/// nodes to what the network between them and its slowest NIC allow.
fn set_pace(run: &mut NcclRun, placements: &[Placement], hosts: &[GpuHost], state: &KubeState) {
    let pace = pace_of(placements, hosts, efa_nics(placements));
    // AWS's nccl-tests images carry aws-ofi-nccl; on a type with EFA its search for devices
    // is in the log whether or not the pod got any (on the lab's g5 it is left out).
    run.aws_ofi_nccl = placements
        .iter()
        .all(|(_, node, _)| efa::interfaces(node) > 0);
    run.network = pace.network;
    run.local = pace.local;
    run.busbw_gbps = pace.busbw_gbps;
    run.latency_us = pace.latency_us;
    // A run across nodes goes at the pace its node count, its slowest member and the network
    // between them allow.
    let mut seen = BTreeSet::new();
    let nodes: Vec<&Value> = placements
        .iter()
        .map(|(_, node, _)| node)
        .filter(|node| seen.insert(node_name(node)))
        .collect();
    if nodes.len() > 1 {
        let efa = matches!(run.network, nccl_tests::model::Network::Efa { .. });
        run.busbw_gbps *= network_pace::share(state, &nodes, run.collective, efa);
    }
}

/// Whether the security groups let the run through: the bootstrap always goes over TCP; EFA
/// carries the collective once that is up.
fn outcome(run: &NcclRun, placements: &[Placement], network: &Network) -> Outcome {
    let ips: Vec<String> = placements
        .iter()
        .map(|(_, node, _)| node_ip(node))
        .collect();
    let fabric = match run.network {
        nccl_tests::model::Network::Efa { .. } => Fabric::Efa,
        nccl_tests::model::Network::Socket => Fabric::Tcp,
    };
    match network(&ips, Fabric::Tcp) {
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
    }
}

/// The container's output over time, as the run's outcome has it go.
fn played(run: NcclRun) -> ProgramRun {
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
        Outcome::EfaUnreachable { .. } => efa_unreachable(&run),
    }
}

/// Everything up to the first collective prints at once; the failure comes when the plugin
/// gives up on the handshake.
fn efa_unreachable(run: &NcclRun) -> ProgramRun {
    let transcript = nccl_tests::run(run);
    let ids = nccl_tests::nccl_log::Ids::of(run);
    let host_id = match &run.outcome {
        Outcome::EfaUnreachable { host_id, .. } => host_id.clone(),
        _ => String::new(),
    };
    let end = nccl_tests::report::efa_unreachable_end(run, &ids, &host_id);
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
fn pace_of(placements: &[Placement], hosts: &[GpuHost], efa_nics: u32) -> Pace {
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
    let in_node = in_node_busbw(row, nvlink_up);
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
        let efa = slowest(efa_busbw);
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

/// Inside a node: the published figure with NVLink up; through host memory otherwise.
fn in_node_busbw(row: &gpu_catalog::GpuInstanceType, nvlink_up: bool) -> f64 {
    if nvlink_up {
        nccl_figures::in_node(row).map(|f| f.busbw_gbps)
    } else {
        None
    }
    .unwrap_or(nccl_figures::THROUGH_HOST_MEMORY.busbw_gbps)
}

/// Two nodes of type `row` over EFA: the published figure, else EFA's line rate at the lab's
/// socket efficiency.
fn efa_busbw(row: &gpu_catalog::GpuInstanceType) -> f64 {
    nccl_figures::two_nodes_efa(row).map_or_else(
        || nccl_figures::line_rate_gbits(row.network_performance) / 8.0 * (1.1 / 1.25),
        |f| f.busbw_gbps,
    )
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
