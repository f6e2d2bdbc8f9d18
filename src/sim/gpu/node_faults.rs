//! Hardware faults of GPU nodes in the twin (`--fault gpu-xid=NODE:79` or `NODE/3:79` for GPU 3,
//! `gpu-row-remap-pending`, `gpu-ecc-uncorrectable`, `gpu-missing`, `nvlink-down`, `nic-slow`,
//! `efa-down`,
//! `gpu-recovery-action`, `gpu-power-capped`, `gpu-pcie-degraded`, `fabric-down`): what the
//! driver reported, what the memory counters say, whether a GPU answers, whether its NVLinks
//! are up, what it asks for to recover, its power cap and PCIe link, whether the NVSwitch
//! fabric registered it, and how much of its NIC a node gets. Every
//! tool that runs on the node (nvidia-smi, dmesg, dcgmi, nccl-tests) and the device plugin read
//! them from here, so one fault changes every output a real one would.

use std::collections::BTreeMap;
use std::time::Duration;

/// How a fault names its node: a node name, or `gpuN`, the N-th GPU node in name order from 0
/// (for faults given before the GPU nodes exist).
pub(crate) const NODE_FORMS: &str = "a node name, or gpuN for the N-th GPU node by name (from 0)";

/// Xids NVIDIA calls application errors: k8s-device-plugin's health check leaves the GPU
/// healthy on these (internal/rm/health.go, `applicationErrorXids`).
const APPLICATION_XIDS: [u32; 6] = [13, 31, 43, 45, 68, 109];

/// What is wrong with one GPU of a node.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GpuFaults {
    /// Xid codes the driver logged, with the virtual instant of each.
    pub(crate) xids: Vec<(u32, Duration)>,
    /// A row marked for remapping that waits for a GPU reset, since this instant.
    pub(crate) row_remap_pending: Option<Duration>,
    /// Uncorrectable (double-bit) ECC errors since the driver loaded, and since when.
    pub(crate) ecc_uncorrectable: Option<(u64, Duration)>,
    /// The GPU is not on the PCI bus at all: the driver never sees it.
    pub(crate) missing: bool,
    /// Every NVLink of the GPU is down (a bad NVSwitch port or cable tray): its peers reach it
    /// over PCIe only.
    pub(crate) nvlink_down: bool,
    /// The driver asks for this recovery action (`GPU Reset`, `Node Reboot`, ...).
    pub(crate) recovery_action: Option<String>,
    /// Someone capped the GPU's power at this many watts (`nvidia-smi -pl`).
    pub(crate) power_cap_w: Option<u32>,
    /// The GPU's PCIe link trained at this width (lanes lost to a bad riser or slot).
    pub(crate) pcie_width: Option<u32>,
    /// Another board sits in the slot (an RMA swap, a host repair): a new serial and UUID,
    /// healthy.
    pub(crate) replaced: bool,
}

impl GpuFaults {
    pub(crate) fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Xid 79: the driver still lists the GPU but cannot reach it.
    pub(crate) fn lost(&self) -> bool {
        self.xids.iter().any(|(code, _)| *code == 79)
    }

    /// The device plugin marks a GPU with an Xid other than an application error unhealthy.
    fn unhealthy(&self) -> bool {
        !self.missing
            && self
                .xids
                .iter()
                .any(|(code, _)| !APPLICATION_XIDS.contains(code))
    }
}

/// What is wrong with one node: its GPUs (by index) and its NIC.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NodeFaults {
    /// By GPU index; a fault that names no GPU is on GPU 0 (the g5.xlarge's only one).
    pub(crate) gpus: BTreeMap<u32, GpuFaults>,
    /// The share of its NIC's bandwidth the node gets (a bad cable, a flapping link).
    pub(crate) nic_share: Option<f64>,
    /// How many of its EFA interfaces are down: the device plugin finds that many fewer, and
    /// the GPU whose rail lost one sends at the pace of the interfaces it has left.
    pub(crate) efa_down: Option<u32>,
    /// The NVSwitch fabric never registered the node's GPUs (Fabric Manager not running).
    pub(crate) fabric_down: bool,
    /// The node's DCGM host engine stopped answering: `dcgmi diag` never returns.
    pub(crate) dcgm_hung: bool,
}

impl NodeFaults {
    pub(crate) fn is_empty(&self) -> bool {
        self.gpus.values().all(GpuFaults::is_empty)
            && self.nic_share.is_none()
            && self.efa_down.is_none()
            && !self.fabric_down
            && !self.dcgm_hung
    }

    /// The faults of GPU `index`, if it has any.
    pub(crate) fn gpu(&self, index: u32) -> Option<&GpuFaults> {
        self.gpus.get(&index).filter(|f| !f.is_empty())
    }

    /// The faults of GPU `index`, created empty.
    pub(crate) fn gpu_mut(&mut self, index: u32) -> &mut GpuFaults {
        self.gpus.entry(index).or_default()
    }

    /// Whether any GPU has fallen off the bus (Xid 79).
    #[cfg(test)]
    pub(crate) fn any_lost(&self) -> bool {
        self.gpus.values().any(GpuFaults::lost)
    }

    /// Whether any GPU's memory returned bad data (uncorrectable ECC errors).
    pub(crate) fn any_ecc_uncorrectable(&self) -> bool {
        self.gpus.values().any(|g| g.ecc_uncorrectable.is_some())
    }

    /// GPUs whose NVLinks are down.
    #[cfg(test)]
    pub(crate) fn nvlink_down(&self) -> impl Iterator<Item = u32> + '_ {
        self.gpus
            .iter()
            .filter(|(_, g)| g.nvlink_down)
            .map(|(index, _)| *index)
    }

    /// GPUs the device plugin finds on a node with `installed` of them.
    pub(crate) fn visible_gpus(&self, installed: u32) -> u32 {
        let missing = self
            .gpus
            .iter()
            .filter(|(index, g)| g.missing && **index < installed)
            .count();
        installed.saturating_sub(u32::try_from(missing).unwrap_or(u32::MAX))
    }

    /// GPUs the device plugin offers: a GPU with an Xid other than an application error is
    /// marked unhealthy and leaves allocatable (capacity keeps it).
    pub(crate) fn healthy_gpus(&self, installed: u32) -> u32 {
        let unhealthy = self
            .gpus
            .iter()
            .filter(|(index, g)| g.unhealthy() && **index < installed)
            .count();
        self.visible_gpus(installed)
            .saturating_sub(u32::try_from(unhealthy).unwrap_or(u32::MAX))
    }

    /// The faults in the words `--fault` takes, for `describe`.
    pub(crate) fn describe(&self, node: &str) -> Vec<String> {
        let mut on = Vec::new();
        for (index, gpu) in &self.gpus {
            // GPU 0 keeps the short form every earlier drill used.
            let at = if *index == 0 {
                node.to_string()
            } else {
                format!("{node}/{index}")
            };
            on.extend(
                gpu.xids
                    .iter()
                    .map(|(code, _)| format!("gpu-xid={at}:{code}")),
            );
            if gpu.row_remap_pending.is_some() {
                on.push(format!("gpu-row-remap-pending={at}"));
            }
            if let Some((count, _)) = gpu.ecc_uncorrectable {
                on.push(format!("gpu-ecc-uncorrectable={at}:{count}"));
            }
            if gpu.missing {
                on.push(format!("gpu-missing={at}"));
            }
            if gpu.nvlink_down {
                on.push(format!("nvlink-down={at}"));
            }
            if let Some(action) = &gpu.recovery_action {
                let word = action.to_lowercase().replace(' ', "-");
                on.push(format!("gpu-recovery-action={at}:{word}"));
            }
            if let Some(watts) = gpu.power_cap_w {
                on.push(format!("gpu-power-capped={at}:{watts}"));
            }
            if let Some(width) = gpu.pcie_width {
                on.push(format!("gpu-pcie-degraded={at}:{width}"));
            }
            if gpu.replaced {
                on.push(format!("gpu-replaced={at}"));
            }
        }
        if self.fabric_down {
            on.push(format!("fabric-down={node}"));
        }
        if self.dcgm_hung {
            on.push(format!("dcgm-hang={node}"));
        }
        if let Some(share) = self.nic_share {
            on.push(format!("nic-slow={node}:{share}"));
        }
        if let Some(down) = self.efa_down {
            on.push(format!("efa-down={node}:{down}"));
        }
        on
    }
}

/// The faults of every node, by the name the fault gave (a node name or `gpuN`).
#[derive(Debug, Clone, Default)]
pub(crate) struct HardwareFaults {
    by_name: BTreeMap<String, NodeFaults>,
}

impl HardwareFaults {
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The entry a fault spec names, created empty.
    pub(crate) fn entry(&mut self, node: &str) -> &mut NodeFaults {
        self.by_name.entry(node.to_string()).or_default()
    }

    /// Clears every fault of `node` (as the fault named it); whether it had any.
    pub(crate) fn heal(&mut self, node: &str) -> bool {
        self.by_name.remove(node).is_some()
    }

    /// Drops entries left empty (a fault switched off).
    pub(crate) fn prune(&mut self) {
        for faults in self.by_name.values_mut() {
            faults.gpus.retain(|_, gpu| !gpu.is_empty());
        }
        self.by_name.retain(|_, faults| !faults.is_empty());
    }

    /// The faults of node `name`, given the GPU nodes' names in order (only read when some
    /// fault names a node by position).
    pub(crate) fn of<'a>(
        &'a self,
        name: &str,
        gpu_nodes: impl FnOnce() -> Vec<String>,
    ) -> Option<&'a NodeFaults> {
        if self.by_name.is_empty() {
            return None;
        }
        if let Some(faults) = self.by_name.get(name) {
            return Some(faults);
        }
        let positional: Vec<(usize, &NodeFaults)> = self
            .by_name
            .iter()
            .filter_map(|(key, faults)| Some((gpu_index(key)?, faults)))
            .collect();
        if positional.is_empty() {
            return None;
        }
        let position = gpu_nodes().iter().position(|n| n == name)?;
        positional
            .into_iter()
            .find(|(index, _)| *index == position)
            .map(|(_, faults)| faults)
    }

    /// Every fault, in `--fault` words.
    pub(crate) fn describe(&self) -> Vec<String> {
        self.by_name
            .iter()
            .flat_map(|(node, faults)| faults.describe(node))
            .collect()
    }
}

/// `gpu3` -> 3.
fn gpu_index(node: &str) -> Option<usize> {
    node.strip_prefix("gpu")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes() -> Vec<String> {
        vec!["ip-a".into(), "ip-b".into(), "ip-c".into()]
    }

    #[test]
    fn a_fault_finds_its_node_by_name_or_by_position() {
        let mut faults = HardwareFaults::default();
        faults.entry("ip-c").gpu_mut(0).missing = true;
        faults.entry("gpu1").nic_share = Some(0.3);
        assert!(faults.of("ip-c", nodes).unwrap().gpus[&0].missing);
        assert_eq!(faults.of("ip-b", nodes).unwrap().nic_share, Some(0.3));
        assert_eq!(faults.of("ip-a", nodes), None);
        assert_eq!(faults.of("ip-z", nodes), None);
    }

    #[test]
    fn the_device_plugin_keeps_a_gpu_with_an_application_xid() {
        let mut faults = NodeFaults::default();
        faults.gpu_mut(0).xids.push((13, Duration::ZERO));
        assert_eq!(faults.healthy_gpus(1), 1);
        faults.gpu_mut(0).xids.push((79, Duration::ZERO));
        assert_eq!((faults.visible_gpus(1), faults.healthy_gpus(1)), (1, 0));
        let mut missing = NodeFaults::default();
        missing.gpu_mut(0).missing = true;
        assert_eq!((missing.visible_gpus(1), missing.healthy_gpus(1)), (0, 0));
    }

    #[test]
    fn faults_on_several_gpus_of_an_eight_gpu_node_count_once_each() {
        let mut faults = NodeFaults::default();
        faults.gpu_mut(3).xids.push((79, Duration::ZERO));
        faults.gpu_mut(5).missing = true;
        faults.gpu_mut(2).nvlink_down = true;
        assert_eq!((faults.visible_gpus(8), faults.healthy_gpus(8)), (7, 6));
        assert!(faults.any_lost());
        assert_eq!(faults.nvlink_down().collect::<Vec<_>>(), [2]);
        assert_eq!(
            faults.describe("n"),
            ["nvlink-down=n/2", "gpu-xid=n/3:79", "gpu-missing=n/5"]
        );
        // A fault on a GPU the node does not have changes none of its counts.
        let mut beyond = NodeFaults::default();
        beyond.gpu_mut(4).missing = true;
        assert_eq!(beyond.visible_gpus(1), 1);
    }

    #[test]
    fn heal_and_prune_forget_a_node() {
        let mut faults = HardwareFaults::default();
        faults.entry("gpu0").gpu_mut(0).row_remap_pending = Some(Duration::ZERO);
        assert_eq!(faults.describe(), ["gpu-row-remap-pending=gpu0"]);
        assert!(faults.heal("gpu0"));
        faults.entry("gpu1");
        faults.prune();
        assert!(faults.is_empty());
    }
}
