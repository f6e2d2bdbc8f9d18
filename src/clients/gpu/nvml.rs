//! `nvidia-smi --query-gpu` on nodes: through a pod on the node that already sees the GPUs
//! (the device plugin's, a driver pod, a GPU workload), or a short-lived probe pod that
//! tolerates every taint and is deleted afterwards; or on this machine, when asked.

use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::pause::concurrency;
use super::probe::{self, Probe, probe_name};
use crate::clients::kube::{KubeClient, KubeError, ListOptions};
use crate::clock::Clock;
use crate::gpu::nvidia_smi::parse_csv;

/// What `nvml::query` asks for when no fields are given.
pub const DEFAULT_FIELDS: [&str; 9] = [
    "index",
    "name",
    "uuid",
    "driver_version",
    "memory.total",
    "memory.used",
    "utilization.gpu",
    "temperature.gpu",
    "power.draw",
];

pub struct QuerySpec {
    /// Which nodes: a label selector (`tier=gpu`).
    pub selector: Option<String>,
    pub fields: Vec<String>,
    /// Image of the probe pod, for nodes with no pod that sees the GPUs.
    pub probe_image: String,
    pub namespace: String,
    /// Nodes queried at once.
    pub concurrency: usize,
    /// For one node, probe pod start included.
    pub timeout: Duration,
}

/// One node's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeGpus {
    pub node: String,
    pub ok: bool,
    /// The pod the query ran in (`namespace/name`), or `local`.
    pub via: String,
    pub gpus: Vec<Map<String, Value>>,
    pub error: Option<String>,
}

/// What the query reads of a pod to pick one that sees the GPUs; the rest of each pod is
/// skipped while parsing, which keeps a fan-out over many nodes cheap.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PodView {
    metadata: PodMetadata,
    spec: PodSpecView,
    status: PodStatusView,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PodMetadata {
    name: String,
    namespace: String,
    labels: AppLabel,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AppLabel {
    app: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PodSpecView {
    containers: Vec<ContainerView>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ContainerView {
    resources: ResourcesView,
    env: Vec<EnvVarView>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ResourcesView {
    limits: GpuLimit,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GpuLimit {
    #[serde(rename = "nvidia.com/gpu")]
    gpus: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct EnvVarView {
    name: String,
    value: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PodStatusView {
    phase: String,
}

fn sees_gpus(pod: &PodView) -> bool {
    pod.status.phase == "Running"
        && pod.spec.containers.iter().any(|c| {
            c.resources.limits.gpus.is_some()
                || c.env.iter().any(|e| {
                    e.name == "NVIDIA_VISIBLE_DEVICES"
                        && !matches!(e.value.as_deref(), Some("void" | "none" | ""))
                })
        })
}

fn query_argv(fields: &[String]) -> Vec<String> {
    vec![
        "nvidia-smi".into(),
        format!("--query-gpu={}", fields.join(",")),
        "--format=csv,noheader,nounits".into(),
    ]
}

fn answer(node: &str, via: String, fields: &[String], stdout: &str) -> NodeGpus {
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    match parse_csv(stdout, Some(&names)) {
        Ok(gpus) => NodeGpus {
            node: node.into(),
            ok: true,
            via,
            gpus,
            error: None,
        },
        Err(e) => NodeGpus {
            node: node.into(),
            ok: false,
            via,
            gpus: vec![],
            error: Some(e.to_string()),
        },
    }
}

fn failed(node: &str, via: String, error: String) -> NodeGpus {
    NodeGpus {
        node: node.into(),
        ok: false,
        via,
        gpus: vec![],
        error: Some(error),
    }
}

async fn in_pod(
    kube: &KubeClient,
    node: &str,
    namespace: &str,
    pod: &str,
    fields: &[String],
) -> NodeGpus {
    let via = format!("{namespace}/{pod}");
    match kube
        .exec(pod, Some(namespace), &query_argv(fields), None)
        .await
    {
        Ok(out) if out.exit_code == 0 => answer(node, via, fields, &out.stdout),
        Ok(out) => failed(
            node,
            via,
            format!(
                "nvidia-smi exited {}: {}{}",
                out.exit_code,
                out.stdout.trim(),
                out.stderr.trim()
            ),
        ),
        Err(e) => failed(node, via, e.to_string()),
    }
}

async fn probe(kube: &KubeClient, node: &str, spec: &QuerySpec, clock: &dyn Clock) -> NodeGpus {
    let probe = Probe {
        kind: "nvml",
        image: &spec.probe_image,
        namespace: &spec.namespace,
        command: &["sleep", "600"],
        privileged: false,
        host_network: false,
    };
    let via = format!("{}/{}", spec.namespace, probe_name("nvml", node));
    match probe::start(kube, &probe, node, spec.timeout, clock).await {
        Ok(name) => {
            let answer = in_pod(kube, node, &spec.namespace, &name, &spec.fields).await;
            probe::stop(kube, &spec.namespace, &name).await;
            answer
        }
        Err(why) => failed(node, via, why),
    }
}

async fn one(kube: &KubeClient, node: &str, spec: &QuerySpec, clock: &dyn Clock) -> NodeGpus {
    // The node's own running pods only: a list per node stays small on a big cluster.
    let on_node = ListOptions {
        namespace: None,
        labels: None,
        fields: Some(format!("spec.nodeName={node},status.phase=Running")),
    };
    let pods = match kube.list_as::<PodView>("Pod", &on_node).await {
        Ok(pods) => pods,
        Err(e) => return failed(node, String::new(), e.to_string()),
    };
    let mut candidates: Vec<&PodView> = pods.iter().filter(|p| sees_gpus(p)).collect();
    // The device plugin's pod first: it is there on every GPU node and sees every GPU.
    candidates.sort_by_key(|p| {
        p.metadata.labels.app.as_deref() != Some("nvidia-device-plugin-daemonset")
    });
    match candidates.first() {
        Some(pod) => {
            let namespace = match pod.metadata.namespace.as_str() {
                "" => "default",
                namespace => namespace,
            };
            in_pod(kube, node, namespace, &pod.metadata.name, &spec.fields).await
        }
        None => probe(kube, node, spec, clock).await,
    }
}

/// Queries every node the selector picks, `concurrency` at a time; a node that fails is
/// reported in its entry, not as an error. Ordered by node name.
pub async fn query(
    kube: &KubeClient,
    spec: &QuerySpec,
    clock: &dyn Clock,
) -> Result<Vec<NodeGpus>, KubeError> {
    let nodes = probe::node_names(kube, spec.selector.clone()).await?;
    let mut answers: Vec<NodeGpus> = futures::stream::iter(nodes.iter())
        .map(|node| one(kube, node, spec, clock))
        .buffer_unordered(concurrency(spec.concurrency, clock))
        .collect()
        .await;
    answers.sort_by(|a, b| a.node.cmp(&b.node));
    Ok(answers)
}

/// Deletes probe pods a cut-short query left behind.
pub async fn remove_probes(kube: &KubeClient, spec: &QuerySpec) -> Result<(), KubeError> {
    probe::remove_all(kube, &spec.namespace, "nvml").await
}

/// The same query on this machine (a GPU host such as a hybrid node), with the local
/// `nvidia-smi`.
pub async fn query_local(fields: &[String]) -> NodeGpus {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
    let argv = query_argv(fields);
    let output = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .kill_on_drop(true)
        .output()
        .await;
    match output {
        Ok(out) if out.status.success() => answer(
            &host,
            "local".into(),
            fields,
            &String::from_utf8_lossy(&out.stdout),
        ),
        Ok(out) => failed(
            &host,
            "local".into(),
            format!(
                "nvidia-smi exited {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ),
        Err(e) => failed(
            &host,
            "local".into(),
            format!("cannot run nvidia-smi on this machine: {e}"),
        ),
    }
}
