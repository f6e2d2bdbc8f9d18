//! The EFA devices of cluster nodes, read through one privileged probe pod per node (it sees
//! the host's /dev/infiniband, every device, as a pod given them by the device plugin would
//! see its share): `fi_info -p efa`, then each listed device's own loopback, one at a time
//! (two on one device would share its rate). A node that cannot answer is reported with why.

use std::time::Duration;

use futures::StreamExt;

use super::pause::concurrency;
use super::probe::{self, Probe};
use crate::acceptance::efa_check::{DeviceRun, NodeEfaOutputs};
use crate::clients::kube::{KubeClient, KubeError};
use crate::clock::Clock;
use crate::gpu::efa::fi_info::parse_fi_info;
use crate::gpu::efa::loopback::{FI_INFO, loopback_command};

/// The probe pods' kind label: `runbook/probe=efa`.
pub const EFA_PROBE_KIND: &str = "efa";

pub struct EfaSpec {
    pub names: Vec<String>,
    /// Image of the probe pod: it needs libfabric's `fi_info` and `fi_pingpong` (the EFA
    /// installer's /opt/amazon/efa/bin on its PATH).
    pub image: String,
    pub namespace: String,
    pub concurrency: usize,
    /// For one node, probe start included.
    pub timeout: Duration,
    /// Whether to run each device's loopback (fi_info alone otherwise).
    pub loopback: bool,
}

async fn exec_in(
    kube: &KubeClient,
    namespace: &str,
    pod: &str,
    command: &[String],
) -> Result<(String, i64), String> {
    kube.exec(pod, Some(namespace), command, None)
        .await
        .map(|out| (format!("{}{}", out.stdout, out.stderr), out.exit_code))
        .map_err(|e| e.to_string())
}

async fn one(kube: &KubeClient, node: &str, spec: &EfaSpec, clock: &dyn Clock) -> NodeEfaOutputs {
    let probe = Probe {
        kind: EFA_PROBE_KIND,
        image: &spec.image,
        namespace: &spec.namespace,
        command: &["sleep", "infinity"],
        privileged: true,
        host_network: false,
    };
    let mut outputs = NodeEfaOutputs {
        node: node.to_string(),
        via: format!(
            "{}/{}",
            spec.namespace,
            probe::probe_name(EFA_PROBE_KIND, node)
        ),
        fi_info: Err("not run".into()),
        loopbacks: Vec::new(),
    };
    let pod = match probe::start(kube, &probe, node, spec.timeout, clock).await {
        Ok(pod) => pod,
        Err(why) => {
            outputs.fi_info = Err(why);
            return outputs;
        }
    };
    let fi_info: Vec<String> = FI_INFO.iter().map(|a| (*a).to_string()).collect();
    outputs.fi_info = exec_in(kube, &spec.namespace, &pod, &fi_info).await;
    let devices = match &outputs.fi_info {
        Ok((text, _)) => parse_fi_info(text).map(|i| i.devices).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    if spec.loopback {
        for device in devices {
            let ran = match loopback_command(&device) {
                Some(command) => exec_in(kube, &spec.namespace, &pod, &command).await,
                None => Err(format!("`{device}` is not a device name fi_info prints")),
            };
            outputs.loopbacks.push(DeviceRun { device, ran });
        }
    }
    probe::stop(kube, &spec.namespace, &pod).await;
    outputs
}

/// Reads every node the spec names, `concurrency` at a time, in the order named.
pub async fn efa_outputs(
    kube: &KubeClient,
    spec: &EfaSpec,
    clock: &dyn Clock,
) -> Vec<NodeEfaOutputs> {
    let mut answers: Vec<(usize, NodeEfaOutputs)> =
        futures::stream::iter(spec.names.iter().enumerate())
            .map(|(i, node)| async move { (i, one(kube, node, spec, clock).await) })
            .buffer_unordered(concurrency(spec.concurrency, clock))
            .collect()
            .await;
    answers.sort_by_key(|(i, _)| *i);
    answers.into_iter().map(|(_, a)| a).collect()
}

/// Deletes the probe pods a cut-short check left behind.
pub async fn remove_efa_probes(kube: &KubeClient, namespace: &str) -> Result<(), KubeError> {
    probe::remove_all(kube, namespace, EFA_PROBE_KIND).await
}
