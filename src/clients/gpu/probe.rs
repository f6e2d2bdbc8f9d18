//! A short-lived pod pinned to one node to run NVIDIA tools there: it tolerates every taint
//! (a cordoned or isolated node is still examined), sees every GPU through the NVIDIA
//! container runtime rather than by requesting them (a node whose GPUs are unhealthy has none
//! to give), and carries the labels that let a cut-short run's pods be found and deleted.

use std::time::Duration;

use serde_json::{Value, json};

use super::pause::pause;
use crate::clients::kube::{KubeClient, KubeError, ListOptions};
use crate::clock::Clock;

/// What to start on the node.
pub(super) struct Probe<'a> {
    /// `runbook/probe=<kind>`: `nvml`, `gpu-health`.
    pub kind: &'a str,
    pub image: &'a str,
    pub namespace: &'a str,
    pub command: &'a [&'a str],
    /// Root on the node's devices: `dmesg` needs it (kernel.dmesg_restrict).
    pub privileged: bool,
    /// On the host's network: `localhost:5555` is then the node's DCGM host engine.
    pub host_network: bool,
}

/// `<kind>-probe-<node up to its first dot>`, as a pod name allows.
pub(super) fn probe_name(kind: &str, node: &str) -> String {
    let short: String = node
        .split('.')
        .next()
        .unwrap_or(node)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!("{kind}-probe-{short}")
}

/// The selector of every probe pod of `kind`.
pub fn probe_selector(kind: &str) -> String {
    format!("app.kubernetes.io/managed-by=runbook,runbook/probe={kind}")
}

fn pod(probe: &Probe<'_>, name: &str, node: &str) -> Value {
    let mut container = json!({
        "name": probe.kind,
        "image": probe.image,
        "command": probe.command,
        "env": [
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
        ],
    });
    if probe.privileged {
        container["securityContext"] = json!({"privileged": true});
    }
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": probe.namespace,
            "labels": {"app.kubernetes.io/managed-by": "runbook", "runbook/probe": probe.kind},
        },
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "activeDeadlineSeconds": 900,
            "tolerations": [{"operator": "Exists"}],
            "containers": [container],
        },
    });
    if probe.host_network {
        pod["spec"]["hostNetwork"] = json!(true);
    }
    pod
}

/// Creates the probe pod on `node` and waits until it runs; its name, or why it did not start
/// (the pod is deleted again then).
pub(super) async fn start(
    kube: &KubeClient,
    probe: &Probe<'_>,
    node: &str,
    timeout: Duration,
    clock: &dyn Clock,
) -> Result<String, String> {
    let name = probe_name(probe.kind, node);
    let object = pod(probe, &name, node);
    if let Err(e) = kube
        .apply(std::slice::from_ref(&object), Some(probe.namespace))
        .await
    {
        return Err(format!("cannot create the probe pod: {e}"));
    }
    let deadline = clock.now() + timeout;
    let outcome = loop {
        match kube.get("Pod", &name, Some(probe.namespace)).await {
            Ok(p) if p["status"]["phase"] == "Running" => break Ok(()),
            Ok(p) if matches!(p["status"]["phase"].as_str(), Some("Failed" | "Succeeded")) => {
                break Err(format!("the probe pod ended {}", p["status"]["phase"]));
            }
            Ok(_) if clock.now() >= deadline => {
                break Err("the probe pod did not start in time".to_string());
            }
            Ok(_) => pause(clock, deadline).await,
            Err(e) => break Err(e.to_string()),
        }
    };
    match outcome {
        Ok(()) => Ok(name),
        Err(why) => {
            stop(kube, probe.namespace, &name).await;
            Err(why)
        }
    }
}

/// Deletes a probe pod; one already gone is fine (a cleanup removes the rest by label).
pub(super) async fn stop(kube: &KubeClient, namespace: &str, name: &str) {
    let _ = kube.delete("Pod", name, Some(namespace)).await;
}

/// The names of the nodes `selector` picks (every node without one).
pub(super) async fn node_names(
    kube: &KubeClient,
    selector: Option<String>,
) -> Result<Vec<String>, KubeError> {
    let options = ListOptions {
        namespace: None,
        labels: selector,
        fields: None,
    };
    Ok(kube
        .list("Node", &options)
        .await?
        .iter()
        .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_string))
        .collect())
}

/// Deletes every probe pod of `kind` in `namespace` that a cut-short call left behind.
pub(super) async fn remove_all(
    kube: &KubeClient,
    namespace: &str,
    kind: &str,
) -> Result<(), KubeError> {
    let options = ListOptions {
        namespace: Some(namespace.to_string()),
        labels: Some(probe_selector(kind)),
        fields: None,
    };
    for pod in kube.list("Pod", &options).await? {
        if let Some(name) = pod["metadata"]["name"].as_str() {
            stop(kube, namespace, name).await;
        }
    }
    Ok(())
}
