//! The EKS node monitoring agent on the twin's nodes (the `eks-node-monitoring-agent` add-on's
//! DaemonSet): where its pod runs, it reports the conditions it owns True when it starts and,
//! a report interval after each thing it finds (sim/gpu/monitoring_agent.rs), a Fatal finding
//! as AcceleratedHardwareReady False and a Warning as an Event on the node with the condition
//! as its reason and "REASON: MESSAGE" (aws/eks-node-monitoring-agent@51af549,
//! pkg/manager/node_exporter.go: `reportInterval = 15 * time.Second`). Also where a drill's
//! injections land: a DCGM value is a new finding for the agent, a kernel line only a line in
//! the node's log.

use std::time::Duration;

use serde_json::json;

use super::dirty::Dirty;
use super::{events, shared};
use crate::sim::gpu::injected::Injection;
use crate::sim::gpu::monitoring_agent::{
    ACCELERATED_HARDWARE_READY, AgentRun, READY_CONDITIONS, Severity, failed_condition, findings,
};
use crate::sim::gpu::programs::{faults_of, gpu_host, node_gpus};
use crate::sim::kube::storage::state::{KubeState, Timer, built_in_key};
use crate::sim::timestamps::{parse_rfc3339, rfc3339};

/// How often the agent applies what it found to its node (node_exporter.go).
pub(crate) const REPORT_INTERVAL: Duration = Duration::from_secs(15);

/// The agent's image, as its DaemonSet runs it.
const AGENT_IMAGE: &str = "/eks/eks-node-monitoring-agent:";

fn is_agent(pod: &serde_json::Value) -> bool {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["image"].as_str().is_some_and(|i| i.contains(AGENT_IMAGE)))
}

/// An agent pod that has started (again) on its node begins a new run, which reports its first
/// conditions one interval later.
pub(super) fn run(state: &mut KubeState, dirty: &Dirty) {
    let pods_key = built_in_key("pods");
    let started: Vec<(String, Duration)> = dirty
        .changed
        .iter()
        .filter(|(resource, ..)| *resource == pods_key)
        .filter_map(|(resource, namespace, name)| state.store.get(resource, namespace, name))
        .filter(|pod| pod["status"]["phase"] == "Running" && is_agent(pod))
        .filter_map(|pod| {
            let node = pod["spec"]["nodeName"].as_str()?.to_string();
            let since = pod["status"]["startTime"]
                .as_str()
                .and_then(parse_rfc3339)
                .unwrap_or(state.now);
            Some((node, since))
        })
        .collect();
    for (node, since) in started {
        if state
            .monitoring_agents
            .get(&node)
            .is_some_and(|a| a.started >= since)
        {
            continue;
        }
        state.monitoring_agents.insert(
            node.clone(),
            AgentRun {
                started: since,
                reported: None,
            },
        );
        state.schedule(REPORT_INTERVAL, Timer::AgentReport { node });
    }
}

/// Something on `node` changed that the agent may find: it reports one interval later.
pub(crate) fn findings_changed(state: &mut KubeState, node: &str) {
    if state.monitoring_agents.contains_key(node) {
        state.schedule(
            REPORT_INTERVAL,
            Timer::AgentReport {
                node: node.to_string(),
            },
        );
    }
}

/// A new run of the agent on `node` from now (the node booted again).
pub(crate) fn restart(state: &mut KubeState, node: &str) {
    if let Some(run) = state.monitoring_agents.get_mut(node) {
        *run = AgentRun {
            started: state.now,
            reported: None,
        };
        state.schedule(
            REPORT_INTERVAL,
            Timer::AgentReport {
                node: node.to_string(),
            },
        );
    }
}

/// The agent applies what it has found on `node` by now: its conditions, and an Event for
/// each Warning since its last report.
pub(crate) fn report(state: &mut KubeState, node: &str) {
    let Some(run) = state.monitoring_agents.get(node).cloned() else {
        return;
    };
    let Some(mut object) = state.object("nodes", "", node) else {
        state.monitoring_agents.remove(node);
        return;
    };
    let installed = node_gpus(&object);
    let faults = faults_of(state, node);
    let gpus = gpu_host(&object, state.now, faults).gpus;
    let now = state.now;
    let found: Vec<_> = findings(
        installed,
        &gpus,
        faults,
        state.injected.get(node),
        run.started,
    )
    .into_iter()
    .filter(|f| f.at <= now)
    .collect();
    let fatal: Vec<_> = found
        .iter()
        .filter(|f| f.severity == Severity::Fatal)
        .collect();
    let heartbeat = rfc3339(now);
    for (kind, reason, message) in READY_CONDITIONS {
        if kind == ACCELERATED_HARDWARE_READY && installed == 0 {
            continue;
        }
        let (condition, since) = match failed_condition(&fatal) {
            Some((reason, message, at)) if kind == ACCELERATED_HARDWARE_READY => (
                json!({"type": kind, "status": "False", "reason": reason, "message": message, "lastHeartbeatTime": heartbeat}),
                at,
            ),
            _ => (
                json!({"type": kind, "status": "True", "reason": reason, "message": message, "lastHeartbeatTime": heartbeat}),
                run.started,
            ),
        };
        shared::set_condition(&mut object, condition, &rfc3339(since));
    }
    let object = shared::update(state, "nodes", object);
    let warned_since = run.reported;
    for warning in found
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .filter(|f| warned_since.is_none_or(|last| f.at > last))
    {
        events::record(
            state,
            &object,
            true,
            ACCELERATED_HARDWARE_READY,
            &format!("{}: {}", warning.reason, warning.message),
            "eks-node-monitoring-agent",
        );
    }
    if let Some(run) = state.monitoring_agents.get_mut(node) {
        run.reported = Some(now);
    }
}

/// Keeps what a command run in a pod on `node` injected: a DCGM value wherever `dcgmi` reached
/// the host engine, a kernel line only from a privileged container (another writes a file in
/// its own /dev).
pub(crate) fn injected(state: &mut KubeState, node: &str, privileged: bool, injection: &Injection) {
    if matches!(injection, Injection::KernelLine(_)) && !privileged {
        return;
    }
    let now = state.now;
    state
        .injected
        .entry(node.to_string())
        .or_default()
        .keep(injection, now);
    if matches!(injection, Injection::DcgmField { .. }) {
        findings_changed(state, node);
    }
}
