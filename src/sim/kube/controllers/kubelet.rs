//! The kubelet: starts bound pods after a short virtual delay, runs their programs (logs, exit
//! codes, durations) and ends them; restarts containers of `restartPolicy: Always` pods.

use std::time::Duration;

use serde_json::{Value, json};

use super::dirty::Dirty;
use super::{events, job, karpenter, namespace, node_lifecycle, shared};
use crate::sim::kube::storage::state::{KubeState, Timer};
use crate::sim::timestamps::rfc3339;

/// How long a bound pod takes to pull its image and start (virtual).
const START_DELAY: Duration = Duration::from_secs(3);
/// The wait before a finished container of an always-restarting pod runs again.
const RESTART_DELAY: Duration = Duration::from_secs(10);

pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    let bound: Vec<Value> = dirty
        .changed_objects(state, "pods")
        .into_iter()
        .filter(|p| {
            p["spec"]["nodeName"].is_string()
                && p["status"]["phase"] == "Pending"
                && p["status"]["startTime"].is_null()
        })
        .collect();
    for mut pod in bound {
        let node = state.object(
            "nodes",
            "",
            pod["spec"]["nodeName"].as_str().unwrap_or_default(),
        );
        pod["status"]["startTime"] = json!(rfc3339(state.now));
        pod["status"]["hostIP"] = node.as_ref().map_or(Value::Null, internal_ip);
        let (namespace, name, uid) = (
            shared::namespace(&pod).to_string(),
            shared::name(&pod).to_string(),
            shared::uid(&pod).to_string(),
        );
        shared::update(state, "pods", pod);
        state.schedule(
            START_DELAY,
            Timer::PodStarted {
                namespace,
                name,
                uid,
            },
        );
    }
}

fn internal_ip(node: &Value) -> Value {
    node["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["type"] == "InternalIP")
        .map_or(Value::Null, |a| a["address"].clone())
}

/// Runs what a timer stands for.
pub(crate) fn fire_timer(state: &mut KubeState, timer: &Timer) {
    match timer {
        Timer::PodStarted {
            namespace,
            name,
            uid,
        } => start(state, namespace, name, uid),
        Timer::PodFinished {
            namespace,
            name,
            uid,
        } => finish(state, namespace, name, uid),
        Timer::JobDeadline {
            namespace,
            name,
            uid,
        } => job::deadline_passed(state, namespace, name, uid),
        Timer::NodeStatusStale { node } => node_lifecycle::status_stale(state, node),
        Timer::KarpenterRetry { nodeclaim } => karpenter::retry(state, nodeclaim),
        Timer::KarpenterEmpty { nodeclaim } => karpenter::empty_expired(state, nodeclaim),
        Timer::NamespaceFinalize { name } => namespace::finalize(state, name),
        Timer::AgentReport { node } => super::node_monitoring::report(state, node),
        Timer::NodeRebooted { node } => super::node_maintenance::rebooted(state, node),
        Timer::TaintEviction {
            namespace,
            name,
            uid,
        } => node_lifecycle::toleration_expired(state, namespace, name, uid),
    }
}

fn live_pod(state: &KubeState, namespace: &str, name: &str, uid: &str) -> Option<Value> {
    state
        .object("pods", namespace, name)
        .filter(|p| shared::uid(p) == uid)
}

/// A pod IP in the node's subnet, stable for the pod's name.
fn pod_ip(host_ip: &str, name: &str) -> String {
    let parts: Vec<&str> = host_ip.split('.').collect();
    let hash = name
        .bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    match parts.as_slice() {
        [a, b, c, _] => format!("{a}.{b}.{c}.{}", 10 + hash % 240),
        _ => format!("10.0.0.{}", 10 + hash % 240),
    }
}

fn start(state: &mut KubeState, namespace: &str, name: &str, uid: &str) {
    let Some(mut pod) = live_pod(state, namespace, name, uid) else {
        return;
    };
    if pod["status"]["phase"] != "Pending" {
        return;
    }
    let now = rfc3339(state.now);
    pod["status"]["phase"] = json!("Running");
    let ip = assign_ip(state, &pod, name);
    pod["status"]["podIP"] = json!(ip);
    pod["status"]["podIPs"] = json!([{"ip": pod["status"]["podIP"]}]);
    let containers = pod["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let (statuses, longest) = run_containers(state, &pod, &containers, (namespace, name, uid));
    pod["status"]["containerStatuses"] = json!(statuses);
    for kind in [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ] {
        shared::set_condition(
            &mut pod,
            json!({"type": kind, "status": "True", "lastProbeTime": null}),
            &now,
        );
    }
    let pod = shared::update(state, "pods", pod);
    started_events(state, &pod, &containers);
    if let Some(after) = longest {
        state.schedule(
            after,
            Timer::PodFinished {
                namespace: namespace.into(),
                name: name.into(),
                uid: uid.into(),
            },
        );
    }
}

/// The pod's address: the node's own for host networking; else one from the node's pod range
/// (an on-premises node's, from the remote pod network) or, on VPC CNI nodes, the node's
/// subnet.
fn assign_ip(state: &KubeState, pod: &Value, name: &str) -> String {
    let host_ip = pod["status"]["hostIP"]
        .as_str()
        .unwrap_or("192.168.0.10")
        .to_string();
    let pod_range = state
        .object_ref(
            "nodes",
            "",
            pod["spec"]["nodeName"].as_str().unwrap_or_default(),
        )
        .and_then(|n| n["spec"]["podCIDR"].as_str())
        .map(str::to_string);
    if pod["spec"]["hostNetwork"] == true {
        host_ip
    } else {
        pod_ip(pod_range.as_deref().unwrap_or(&host_ip), name)
    }
}

/// Runs each container's program: its log lines, its status, its exit code kept for when the
/// pod finishes; and how long the longest runs (`None`: one runs until deleted).
fn run_containers(
    state: &mut KubeState,
    pod: &Value,
    containers: &[Value],
    (namespace, name, uid): (&str, &str, &str),
) -> (Vec<Value>, Option<Duration>) {
    let now = rfc3339(state.now);
    let mut statuses = Vec::new();
    let mut exit_codes = Vec::new();
    let mut longest: Option<Duration> = Some(Duration::ZERO);
    for container in containers {
        let run = (state.programs)(pod, container, state);
        let container_name = container["name"].as_str().unwrap_or_default().to_string();
        for line in run.stdout.lines() {
            state.log_line(namespace, name, &container_name, line);
        }
        let started = state.now;
        for (after, line) in &run.later {
            state.log_line_at(namespace, name, &container_name, started + *after, line);
        }
        longest = match (longest, run.duration) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        statuses.push(json!({
            "name": container_name,
            "image": container["image"],
            "imageID": format!("{}@sha256:{}", container["image"].as_str().unwrap_or_default(), "0".repeat(64)),
            "containerID": format!("containerd://{}", shared::template_hash(&json!([uid, container_name])).repeat(6)),
            "ready": true,
            "started": true,
            "restartCount": 0,
            "state": {"running": {"startedAt": now}},
            "lastState": {},
        }));
        exit_codes.push(run.exit_code);
    }
    state.exit_codes.insert(uid.to_string(), exit_codes);
    (statuses, longest)
}

fn started_events(state: &mut KubeState, pod: &Value, containers: &[Value]) {
    let node = pod["spec"]["nodeName"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for container in containers {
        let container_name = container["name"].as_str().unwrap_or_default();
        events::record(
            state,
            pod,
            false,
            "Started",
            &format!("Started container {container_name}"),
            &format!("kubelet, {node}"),
        );
    }
}

fn finish(state: &mut KubeState, namespace: &str, name: &str, uid: &str) {
    let Some(mut pod) = live_pod(state, namespace, name, uid) else {
        return;
    };
    if pod["status"]["phase"] != "Running" {
        return;
    }
    let now = rfc3339(state.now);
    let mut statuses = pod["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let exit_codes = state.exit_codes.remove(uid).unwrap_or_default();
    let failed = exit_codes.iter().any(|code| *code != 0);
    let restart = match pod["spec"]["restartPolicy"].as_str() {
        Some("Always") => true,
        Some("OnFailure") => failed,
        _ => false,
    };
    for (index, status) in statuses.iter_mut().enumerate() {
        let exit_code = exit_codes.get(index).copied().unwrap_or(0);
        let started = status["state"]["running"]["startedAt"].clone();
        let terminated = json!({
            "exitCode": exit_code,
            "reason": if exit_code == 0 { "Completed" } else { "Error" },
            "startedAt": started,
            "finishedAt": now,
            "containerID": status["containerID"],
        });
        status["ready"] = json!(false);
        status["started"] = json!(false);
        if restart {
            status["restartCount"] = json!(status["restartCount"].as_i64().unwrap_or(0) + 1);
            status["lastState"] = json!({"terminated": terminated});
            status["state"] = json!({"waiting": {"reason": "CrashLoopBackOff", "message": format!("back-off 10s restarting failed container={} pod={name}", status["name"].as_str().unwrap_or_default())}});
        } else {
            status["state"] = json!({"terminated": terminated});
        }
    }
    pod["status"]["containerStatuses"] = json!(statuses);
    if restart {
        // Pending again without a start time: the kubelet pass starts it after the back-off.
        pod["status"]["phase"] = json!("Pending");
        shared::set_condition(
            &mut pod,
            json!({"type": "Ready", "status": "False", "reason": "ContainersNotReady", "lastProbeTime": null}),
            &now,
        );
        shared::update(state, "pods", pod);
        state.schedule(
            RESTART_DELAY,
            Timer::PodStarted {
                namespace: namespace.into(),
                name: name.into(),
                uid: uid.into(),
            },
        );
        return;
    }
    pod["status"]["phase"] = json!(if failed { "Failed" } else { "Succeeded" });
    for kind in ["Ready", "ContainersReady"] {
        shared::set_condition(
            &mut pod,
            json!({"type": kind, "status": "False", "reason": "PodCompleted", "lastProbeTime": null}),
            &now,
        );
    }
    shared::update(state, "pods", pod);
}
