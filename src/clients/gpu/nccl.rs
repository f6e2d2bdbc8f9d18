//! A multi-node nccl-tests `all_reduce_perf` (or `all_gather_perf`, `alltoall_perf`) the way an
//! MPIJob runs it, without the operator:
//! a headless Service and one worker pod per GPU node (the GPU taint tolerated, `nvidia.com/gpu`
//! requested, running the image's sshd), then a launcher pod whose `mpirun` starts one rank
//! per GPU across the workers. It waits with a deadline, reads the launcher's log, parses it,
//! and leaves deleting everything to [`AllReduce::cleanup`], which callers always run.

use std::time::Duration;

use kube::api::LogParams;
use serde_json::{Value, json};

use super::pause::pause;
use crate::clients::kube::{KubeClient, KubeError, ListOptions, NodeSummary};
use crate::clock::{Clock, format_duration};
use crate::gpu::nccl::parse;
use crate::lab::nccl_scale::Collective;

#[derive(Clone)]
pub struct AllReduceSpec {
    /// Nodes it may use: a label selector.
    pub selector: String,
    pub nodes: usize,
    /// These nodes exactly (each Ready and matching the selector), instead of the first
    /// `nodes` in name order.
    pub names: Option<Vec<String>>,
    pub gpus_per_node: u32,
    /// EFA devices each worker asks for (`vpc.amazonaws.com/efa`; 32 on a p5.48xlarge); 0
    /// asks for none, and NCCL then goes between nodes over sockets.
    pub efa_per_node: u32,
    pub min_bytes: String,
    pub max_bytes: String,
    pub step_factor: u32,
    pub iters: u32,
    /// The whole run, workers' start included: past it, a run that has not finished hangs.
    pub timeout: Duration,
    pub image: String,
    pub namespace: String,
    /// `NCCL_ALGO` for every rank (`Ring`: the network's bandwidth between two nodes, which a
    /// tree's figure overstates, NVIDIA/nccl-tests#196); None lets NCCL choose.
    pub algorithm: Option<String>,
    /// Which nccl-tests binary the launcher runs.
    pub collective: Collective,
}

/// NCCL's algorithm names (src/include/device.h, ncclAlgoStr), which `NCCL_ALGO` lists.
const ALGORITHMS: [&str; 7] = [
    "Tree",
    "Ring",
    "CollNetDirect",
    "CollNetChain",
    "NVLS",
    "NVLSTree",
    "PAT",
];

/// Checks an `NCCL_ALGO` value as NCCL parses it: names from [`ALGORITHMS`] in any case,
/// comma-separated, `^` first to exclude them, and since NCCL 2.24 `func:list` parts joined by
/// `;`. NCCL refuses an unknown name only when the communicator starts; this says so first.
pub fn check_algorithm(value: &str) -> Result<(), String> {
    let names = value.strip_prefix('^').unwrap_or(value);
    for part in names.split(';') {
        let list = part.split_once(':').map_or(part, |(_, list)| list);
        let list = list.strip_prefix('^').unwrap_or(list);
        for name in list.split(',') {
            if !ALGORITHMS
                .iter()
                .any(|a| a.eq_ignore_ascii_case(name.trim()))
            {
                return Err(format!(
                    "`{name}` in NCCL_ALGO `{value}` is not an NCCL algorithm: one of {}, comma-separated (`^` first excludes them)",
                    ALGORITHMS.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// The objects of one run.
pub struct AllReduce {
    pub name: String,
    pub namespace: String,
    /// `runbook/nccl-group`: the runs of one sweep, for one cleanup of them all.
    group: Option<String>,
    workers: Vec<String>,
    collective: Collective,
}

/// mpirun's command line: every rank gets NCCL's INFO log (what the report reads), the
/// interfaces to avoid, and the algorithm when one is asked for.
fn launcher_command(spec: &AllReduceSpec, ranks: &str, hosts: &str) -> Vec<String> {
    let mut command: Vec<String> = [
        "mpirun",
        "--allow-run-as-root",
        "-np",
        ranks,
        "--host",
        hosts,
        "--mca",
        "plm_rsh_args",
        "-p 2222",
        "-x",
        "NCCL_DEBUG=INFO",
        "-x",
        "NCCL_SOCKET_IFNAME=^lo,docker",
    ]
    .map(str::to_string)
    .to_vec();
    if let Some(algorithm) = &spec.algorithm {
        command.extend(["-x".to_string(), format!("NCCL_ALGO={algorithm}")]);
    }
    command.extend([
        format!("/opt/nccl-tests/build/{}", spec.collective.program()),
        "-b".to_string(),
        spec.min_bytes.clone(),
        "-e".to_string(),
        spec.max_bytes.clone(),
        "-f".to_string(),
        spec.step_factor.to_string(),
        "-g".to_string(),
        "1".to_string(),
        "-n".to_string(),
        spec.iters.to_string(),
    ]);
    command
}

fn labels(name: &str, role: &str, group: Option<&str>) -> Value {
    let mut labels = json!({"app.kubernetes.io/managed-by": "runbook", "runbook/nccl": name, "runbook/role": role});
    if let Some(group) = group {
        labels["runbook/nccl-group"] = json!(group);
    }
    labels
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or("Pending")
}

/// Why a pod is not running, in the scheduler's or kubelet's words.
fn why_not_running(pod: &Value) -> String {
    let conditions = pod["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions
        .iter()
        .find(|c| c["status"] == "False" && c["message"].is_string())
        .and_then(|c| c["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| phase(pod).to_string())
}

/// A worker's requests and limits: its GPUs and, when asked, its EFA devices.
fn resources(gpus: &str, efa: u32) -> Value {
    let mut wanted = json!({"nvidia.com/gpu": gpus});
    if efa > 0 {
        wanted["vpc.amazonaws.com/efa"] = json!(efa.to_string());
    }
    json!({"limits": wanted, "requests": wanted})
}

/// The nodes a run uses: those `names` (each Ready and matching the selector), or else the
/// first `nodes` Ready ones in name order.
async fn choose_nodes(kube: &KubeClient, spec: &AllReduceSpec) -> Result<Vec<String>, KubeError> {
    let ready = ready_nodes(kube, &spec.selector).await?;
    match &spec.names {
        Some(names) => {
            if let Some(missing) = names.iter().find(|n| !ready.contains(n)) {
                return Err(KubeError::Invalid(format!(
                    "nccl::all_reduce: node {missing} is not a Ready node matching `{}`",
                    spec.selector
                )));
            }
            Ok(names.clone())
        }
        None if ready.len() < spec.nodes || spec.nodes == 0 => Err(KubeError::Invalid(format!(
            "nccl::all_reduce needs {} Ready nodes matching `{}`; there are {} ({})",
            spec.nodes,
            spec.selector,
            ready.len(),
            if ready.is_empty() {
                "scale the GPU node group up first".to_string()
            } else {
                ready.join(", ")
            }
        ))),
        None => Ok(ready.into_iter().take(spec.nodes).collect()),
    }
}

/// The Ready nodes matching `selector`, in name order.
async fn ready_nodes(kube: &KubeClient, selector: &str) -> Result<Vec<String>, KubeError> {
    let candidates = kube
        .list(
            "Node",
            &ListOptions {
                namespace: None,
                labels: Some(selector.to_string()),
                fields: None,
            },
        )
        .await?;
    let mut ready: Vec<String> = candidates
        .iter()
        .map(NodeSummary::from_object)
        .filter(|n| n.ready)
        .map(|n| n.name)
        .collect();
    ready.sort();
    Ok(ready)
}

/// The run's status and summary line, from how the launcher ended (None: not by the deadline)
/// and what its log says.
fn outcome(
    finished: Option<&str>,
    log: &str,
    spec: &AllReduceSpec,
    ranks: &str,
) -> (&'static str, String) {
    let report = parse(log);
    match finished {
        None => {
            // What NCCL said of the network is the reason; else the last thing it said.
            let why = match report.causes.first() {
                Some(cause) => format!("cause: {cause}"),
                None => {
                    let last = report
                        .warnings
                        .last()
                        .cloned()
                        .or_else(|| log.lines().last().map(str::to_string))
                        .unwrap_or_default();
                    format!("last: {}", last.trim())
                }
            };
            (
                "hang",
                format!(
                    "hang: no result within {} across {} ranks; {why}",
                    format_duration(spec.timeout),
                    ranks,
                ),
            )
        }
        Some("Succeeded") if report.ok => ("ok", report.summary.clone()),
        Some(phase) => (
            "error",
            format!(
                "error: the launcher {}; {}",
                phase.to_lowercase(),
                report.summary
            ),
        ),
    }
}

impl AllReduce {
    /// Names for a run started at `now` on the run's clock; `salt` (the process id on a real
    /// cluster, 0 on the twin, whose runs must repeat exactly) keeps two drills apart.
    pub fn new(spec: &AllReduceSpec, now: Duration, salt: u32) -> Self {
        let stamp = (now.as_millis() as u64) ^ (u64::from(salt) << 12);
        Self {
            name: format!("nccl-allreduce-{:x}", stamp % 0xff_ffff),
            namespace: spec.namespace.clone(),
            group: None,
            workers: Vec::new(),
            collective: spec.collective,
        }
    }

    /// One run of the sweep `group`, named `<group>-<index>`.
    pub fn in_group(spec: &AllReduceSpec, group: &str, index: usize) -> Self {
        Self {
            name: format!("{group}-{index}"),
            namespace: spec.namespace.clone(),
            group: Some(group.to_string()),
            workers: Vec::new(),
            collective: spec.collective,
        }
    }

    fn launcher(&self) -> String {
        format!("{}-launcher", self.name)
    }

    fn result(
        &self,
        status: &str,
        summary: String,
        nodes: &[String],
        started: Duration,
        clock: &dyn Clock,
        log: &str,
    ) -> Value {
        let report = parse(log);
        let mut value = serde_json::to_value(&report).unwrap_or_else(|_| json!({}));
        // What was asked for, by name; `program` is the binary the output says ran.
        value["program"] = value["collective"].take();
        value["collective"] = json!(self.collective.name());
        value["status"] = json!(status);
        value["ok"] = json!(status == "ok");
        value["summary"] = json!(summary);
        value["nodes"] = json!(nodes);
        value["name"] = json!(self.name);
        value["duration_s"] = json!((clock.now().saturating_sub(started)).as_secs_f64());
        let lines: Vec<&str> = log.lines().collect();
        value["log_tail"] = json!(lines[lines.len().saturating_sub(5)..]);
        value
    }

    /// Runs the test and answers #{ ok, status: ok|hang|error, rows, avg_busbw, ... }.
    /// Errors are for what stops it from starting (no such nodes, the API refusing objects).
    pub async fn run(
        &mut self,
        kube: &KubeClient,
        spec: &AllReduceSpec,
        clock: &dyn Clock,
    ) -> Result<Value, KubeError> {
        let started = clock.now();
        let deadline = started + spec.timeout;
        let nodes = choose_nodes(kube, spec).await?;
        self.start_workers(kube, spec, &nodes).await?;
        if let Some(waiting) = self.workers_not_running(kube, clock, deadline).await? {
            let summary = format!(
                "error: the workers did not start within {}: {waiting}",
                format_duration(spec.timeout)
            );
            return Ok(self.result("error", summary, &nodes, started, clock, ""));
        }
        let ranks = (nodes.len() as u32 * spec.gpus_per_node).to_string();
        kube.apply(&[self.launcher_pod(spec, &ranks)], Some(&self.namespace))
            .await?;
        let finished = self.launcher_finished(kube, clock, deadline).await?;
        let log = kube
            .logs(
                &self.launcher(),
                Some(&self.namespace),
                &LogParams::default(),
            )
            .await
            .unwrap_or_default();
        let (status, summary) = outcome(finished.as_deref(), &log, spec, &ranks);
        Ok(self.result(status, summary, &nodes, started, clock, &log))
    }

    /// The headless Service that names the workers, then one worker pod on each node.
    async fn start_workers(
        &mut self,
        kube: &KubeClient,
        spec: &AllReduceSpec,
        nodes: &[String],
    ) -> Result<(), KubeError> {
        let service = json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": self.name, "namespace": self.namespace, "labels": labels(&self.name, "service", self.group.as_deref())},
            "spec": {"clusterIP": "None", "selector": {"runbook/nccl": self.name, "runbook/role": "worker"}, "ports": [{"name": "ssh", "port": 2222}]},
        });
        kube.apply(&[service], Some(&self.namespace)).await?;
        for (index, node) in nodes.iter().enumerate() {
            let worker = format!("{}-worker-{index}", self.name);
            kube.apply(
                &[self.worker_pod(spec, &worker, node)],
                Some(&self.namespace),
            )
            .await?;
            self.workers.push(worker);
        }
        Ok(())
    }

    /// A worker: the image's sshd on `node`, with the node's GPUs (and EFA devices).
    fn worker_pod(&self, spec: &AllReduceSpec, worker: &str, node: &str) -> Value {
        let gpus = spec.gpus_per_node.to_string();
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": worker, "namespace": self.namespace, "labels": labels(&self.name, "worker", self.group.as_deref())},
            "spec": {
                "hostname": worker,
                "subdomain": self.name,
                "nodeSelector": {"kubernetes.io/hostname": node},
                // The GPU nodes' taint, and the acceptance gate's (runbooks/gate.rhai): a new
                // node waits behind it until checks like this one pass there.
                "tolerations": [
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "runbook.dev/gate", "operator": "Exists", "effect": "NoSchedule"},
                ],
                "containers": [{
                    "name": "worker",
                    "image": spec.image,
                    "command": ["/usr/sbin/sshd", "-De", "-p", "2222"],
                    "resources": resources(&gpus, spec.efa_per_node),
                }],
            },
        })
    }

    /// Waits until every worker runs; past the deadline, answers why one does not.
    async fn workers_not_running(
        &self,
        kube: &KubeClient,
        clock: &dyn Clock,
        deadline: Duration,
    ) -> Result<Option<String>, KubeError> {
        loop {
            let Some(waiting) = self.first_waiting_worker(kube).await? else {
                return Ok(None);
            };
            if clock.now() >= deadline {
                return Ok(Some(waiting));
            }
            pause(clock, deadline).await;
        }
    }

    /// The first worker not yet running, and the reason.
    async fn first_waiting_worker(&self, kube: &KubeClient) -> Result<Option<String>, KubeError> {
        for worker in &self.workers {
            let pod = kube.get("Pod", worker, Some(&self.namespace)).await?;
            if phase(&pod) != "Running" {
                return Ok(Some(format!("{worker}: {}", why_not_running(&pod))));
            }
        }
        Ok(None)
    }

    /// The launcher: `mpirun` over every worker, `ranks` ranks in all.
    fn launcher_pod(&self, spec: &AllReduceSpec, ranks: &str) -> Value {
        let gpus = spec.gpus_per_node.to_string();
        let hosts: Vec<String> = self
            .workers
            .iter()
            .map(|w| format!("{w}.{}:{gpus}", self.name))
            .collect();
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": self.launcher(), "namespace": self.namespace, "labels": labels(&self.name, "launcher", self.group.as_deref())},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{
                    "name": "launcher",
                    "image": spec.image,
                    "command": launcher_command(spec, ranks, &hosts.join(",")),
                }],
            },
        })
    }

    /// The launcher's final phase (`Succeeded` or `Failed`), or None when the deadline came first.
    async fn launcher_finished(
        &self,
        kube: &KubeClient,
        clock: &dyn Clock,
        deadline: Duration,
    ) -> Result<Option<String>, KubeError> {
        loop {
            let pod = kube
                .get("Pod", &self.launcher(), Some(&self.namespace))
                .await?;
            if matches!(phase(&pod), "Succeeded" | "Failed") {
                return Ok(Some(phase(&pod).to_string()));
            }
            if clock.now() >= deadline {
                return Ok(None);
            }
            pause(clock, deadline).await;
        }
    }

    /// Deletes the launcher, the workers and the Service. Safe to call more than once.
    pub async fn cleanup(&self, kube: &KubeClient) -> Result<(), KubeError> {
        let options = ListOptions {
            namespace: Some(self.namespace.clone()),
            labels: Some(format!("runbook/nccl={}", self.name)),
            fields: None,
        };
        for pod in kube.list("Pod", &options).await? {
            if let Some(name) = pod["metadata"]["name"].as_str() {
                let _ = kube.delete("Pod", name, Some(&self.namespace)).await;
            }
        }
        match kube
            .delete("Service", &self.name, Some(&self.namespace))
            .await
        {
            Err(KubeError::Api { code: 404, .. }) | Ok(()) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nccl_algo_values_are_checked_as_nccl_parses_them() {
        for ok in [
            "Ring",
            "ring,tree",
            "^NVLS",
            "allreduce:tree;broadcast:ring",
            "PAT",
        ] {
            assert_eq!(check_algorithm(ok), Ok(()), "{ok}");
        }
        let refused = check_algorithm("Ring,Butterfly").unwrap_err();
        assert!(
            refused.starts_with("`Butterfly` in NCCL_ALGO `Ring,Butterfly`"),
            "{refused}"
        );
        assert!(check_algorithm("").is_err());
    }
}
