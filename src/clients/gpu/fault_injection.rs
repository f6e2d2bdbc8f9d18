//! An Xid injected on purpose into one GPU node, the two ways real drills inject one: into DCGM's
//! field cache through the node's host engine (`dcgmi test --inject --gpuid G -f 230 -v XID`,
//! as the EKS node monitoring agent's own e2e suite injects its faults), so that DCGM's
//! policies, the agent's among them, see it; and the driver's line for it into the kernel log
//! (`/dev/kmsg`, as gpud's `inject-fault` writes one), so what reads the log sees it too. One
//! privileged probe pod on the host's network (there `localhost:5555` is the node's host
//! engine), removed after. The GPU itself is untouched.

use std::time::Duration;

use super::probe::{self, Probe};
use crate::clients::kube::{KubeClient, ListOptions};
use crate::clock::Clock;

/// The probe pods' kind label: `runbook/probe=fault`.
pub const FAULT_PROBE_KIND: &str = "fault";

/// The EKS node monitoring agent's pods (its chart's name label).
const AGENT_SELECTOR: &str = "app.kubernetes.io/name=eks-node-monitoring-agent";

pub struct XidInjection {
    pub node: String,
    pub gpu: u32,
    pub xid: u32,
    /// Needs `dcgmi` and `nvidia-smi` (NVIDIA's DCGM image).
    pub image: String,
    pub namespace: String,
    pub timeout: Duration,
}

/// What was injected, and the agent pod whose restart takes the finding back.
#[derive(Debug, Clone)]
pub struct XidInjected {
    /// The GPU's PCI address as NVRM prints it (`0000:53:00`).
    pub pci: String,
    /// The line written to the kernel log.
    pub kernel_line: String,
    /// `kube-system/NAME` of the monitoring agent on the node, if one runs there.
    pub agent_pod: Option<String>,
}

/// `00000000:53:00.0` (nvidia-smi's pci.bus_id) -> `0000:53:00` (NVRM's form).
fn nvrm_pci(bus_id: &str) -> Option<String> {
    let (domain, rest) = bus_id.trim().split_once(':')?;
    let domain = &domain[domain.len().checked_sub(4)?..];
    let (bus_device, _function) = rest.rsplit_once('.')?;
    Some(format!("{domain}:{bus_device}").to_lowercase())
}

/// The driver's line for `xid` on the GPU at `pci`: the R535+ form for Xid 79 (as
/// tests/fixtures/real/xid_79*.log has it), gpud's `unknown` text for any other.
fn kernel_line(pci: &str, xid: u32) -> String {
    let text = if xid == 79 {
        "GPU has fallen off the bus."
    } else {
        "unknown"
    };
    format!("NVRM: Xid (PCI:{pci}): {xid}, pid='<unknown>', name=<unknown>, {text}")
}

async fn run(
    kube: &KubeClient,
    namespace: &str,
    pod: &str,
    command: &[String],
) -> Result<String, String> {
    let out = kube
        .exec(pod, Some(namespace), command, None)
        .await
        .map_err(|e| e.to_string())?;
    let text = format!("{}{}", out.stdout, out.stderr);
    if out.exit_code != 0 {
        return Err(format!(
            "`{}` exited {}: {}",
            command.join(" "),
            out.exit_code,
            text.trim()
        ));
    }
    Ok(text)
}

fn words(command: &[&str]) -> Vec<String> {
    command.iter().map(|w| (*w).to_string()).collect()
}

/// Injects the Xid on the node; the probe pod is gone whatever happens.
pub async fn inject_xid(
    kube: &KubeClient,
    spec: &XidInjection,
    clock: &dyn Clock,
) -> Result<XidInjected, String> {
    let probe = Probe {
        kind: FAULT_PROBE_KIND,
        image: &spec.image,
        namespace: &spec.namespace,
        command: &["sleep", "infinity"],
        privileged: true,
        host_network: true,
    };
    let pod = probe::start(kube, &probe, &spec.node, spec.timeout, clock).await?;
    let injected = inject_from(kube, spec, &pod).await;
    probe::stop(kube, &spec.namespace, &pod).await;
    let mut injected = injected?;
    injected.agent_pod = agent_pod(kube, &spec.node).await;
    Ok(injected)
}

async fn inject_from(
    kube: &KubeClient,
    spec: &XidInjection,
    pod: &str,
) -> Result<XidInjected, String> {
    let ns = spec.namespace.as_str();
    let listed = run(
        kube,
        ns,
        pod,
        &words(&[
            "nvidia-smi",
            "--query-gpu=index,pci.bus_id",
            "--format=csv,noheader",
        ]),
    )
    .await?;
    let bus_id = listed
        .lines()
        .filter_map(|l| l.split_once(','))
        .find(|(index, _)| index.trim() == spec.gpu.to_string())
        .map(|(_, bus)| bus.trim().to_string())
        .ok_or_else(|| {
            format!(
                "{} has no GPU {} (nvidia-smi lists: {})",
                spec.node,
                spec.gpu,
                listed.trim()
            )
        })?;
    let pci = nvrm_pci(&bus_id).ok_or_else(|| format!("`{bus_id}` is not a PCI bus id"))?;
    let (gpu, xid) = (spec.gpu.to_string(), spec.xid.to_string());
    run(
        kube,
        ns,
        pod,
        &words(&[
            "dcgmi", "test", "--inject", "--gpuid", &gpu, "-f", "230", "-v", &xid,
        ]),
    )
    .await?;
    let kernel_line = kernel_line(&pci, spec.xid);
    // KERN_ERR (<3>), as the driver logs an Xid.
    let script = format!("echo \"<3>{kernel_line}\" > /dev/kmsg");
    run(kube, ns, pod, &words(&["sh", "-c", &script])).await?;
    Ok(XidInjected {
        pci,
        kernel_line,
        agent_pod: None,
    })
}

/// The monitoring agent's pod on `node`, if one runs there.
pub async fn agent_pod(kube: &KubeClient, node: &str) -> Option<String> {
    let options = ListOptions {
        namespace: Some("kube-system".into()),
        labels: Some(AGENT_SELECTOR.into()),
        fields: Some(format!("spec.nodeName={node}")),
    };
    kube.list("Pod", &options).await.ok()?.iter().find_map(|p| {
        p["metadata"]["name"]
            .as_str()
            .map(|n| format!("kube-system/{n}"))
    })
}

/// Deletes the fault probes a cut-short injection left behind.
pub async fn remove_fault_probes(
    kube: &KubeClient,
    namespace: &str,
) -> Result<(), crate::clients::kube::KubeError> {
    probe::remove_all(kube, namespace, FAULT_PROBE_KIND).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bus_id_reads_as_nvrm_prints_it_and_the_line_as_the_driver_writes_it() {
        assert_eq!(nvrm_pci("00000000:53:00.0").as_deref(), Some("0000:53:00"));
        let line = kernel_line("0000:53:00", 79);
        let parsed = crate::gpu::xid::parse_kernel_log(&format!("[  712.000000] {line}\n"));
        assert_eq!(parsed.codes(), [79]);
        assert_eq!(nvrm_pci("garbage"), None);
    }
}
