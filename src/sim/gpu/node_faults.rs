//! Hardware faults of GPU nodes in the twin (`--fault gpu-xid=NODE:79`, `gpu-row-remap-pending`,
//! `gpu-ecc-uncorrectable`, `gpu-missing`, `nic-slow`): what the driver reported, what the
//! memory counters say, whether the GPU answers, and how much of its NIC a node gets. Every
//! tool that runs on the node (nvidia-smi, dmesg, dcgmi, nccl-tests) and the device plugin read
//! them from here, so one fault changes every output a real one would.

use std::collections::BTreeMap;
use std::time::Duration;

/// How a fault names its node: a node name, or `gpuN`, the N-th GPU node in name order from 0
/// (for faults given before the GPU nodes exist).
pub const NODE_FORMS: &str = "a node name, or gpuN for the N-th GPU node by name (from 0)";

/// Xids NVIDIA calls application errors: k8s-device-plugin's health check leaves the GPU
/// healthy on these (internal/rm/health.go, `applicationErrorXids`).
const APPLICATION_XIDS: [u32; 6] = [13, 31, 43, 45, 68, 109];

/// What is wrong with one node's GPU (its first; the g5.xlarge has one) and NIC.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeFaults {
    /// Xid codes the driver logged, with the virtual instant of each.
    pub xids: Vec<(u32, Duration)>,
    /// A row marked for remapping that waits for a GPU reset, since this instant.
    pub row_remap_pending: Option<Duration>,
    /// Uncorrectable (double-bit) ECC errors since the driver loaded, and since when.
    pub ecc_uncorrectable: Option<(u64, Duration)>,
    /// The GPU is not on the PCI bus at all: the driver never sees it.
    pub gpu_missing: bool,
    /// The share of its NIC's bandwidth the node gets (a bad cable, a flapping link).
    pub nic_share: Option<f64>,
}

impl NodeFaults {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Xid 79: the driver still lists the GPU but cannot reach it.
    pub fn gpu_lost(&self) -> bool {
        self.xids.iter().any(|(code, _)| *code == 79)
    }

    /// GPUs the device plugin finds on a node with `installed` of them.
    pub fn visible_gpus(&self, installed: u32) -> u32 {
        installed.saturating_sub(u32::from(self.gpu_missing))
    }

    /// GPUs the device plugin offers: a GPU with an Xid other than an application error is
    /// marked unhealthy and leaves allocatable (capacity keeps it).
    pub fn healthy_gpus(&self, installed: u32) -> u32 {
        let unhealthy = !self.gpu_missing
            && self
                .xids
                .iter()
                .any(|(code, _)| !APPLICATION_XIDS.contains(code));
        self.visible_gpus(installed)
            .saturating_sub(u32::from(unhealthy))
    }

    /// The faults in the words `--fault` takes, for `describe`.
    pub fn describe(&self, node: &str) -> Vec<String> {
        let mut on: Vec<String> = self
            .xids
            .iter()
            .map(|(code, _)| format!("gpu-xid={node}:{code}"))
            .collect();
        if self.row_remap_pending.is_some() {
            on.push(format!("gpu-row-remap-pending={node}"));
        }
        if let Some((count, _)) = self.ecc_uncorrectable {
            on.push(format!("gpu-ecc-uncorrectable={node}:{count}"));
        }
        if self.gpu_missing {
            on.push(format!("gpu-missing={node}"));
        }
        if let Some(share) = self.nic_share {
            on.push(format!("nic-slow={node}:{share}"));
        }
        on
    }
}

/// The faults of every node, by the name the fault gave (a node name or `gpuN`).
#[derive(Debug, Clone, Default)]
pub struct HardwareFaults {
    by_name: BTreeMap<String, NodeFaults>,
}

impl HardwareFaults {
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The entry a fault spec names, created empty.
    pub fn entry(&mut self, node: &str) -> &mut NodeFaults {
        self.by_name.entry(node.to_string()).or_default()
    }

    /// Clears every fault of `node` (as the fault named it); whether it had any.
    pub fn heal(&mut self, node: &str) -> bool {
        self.by_name.remove(node).is_some()
    }

    /// Drops entries left empty (a fault switched off).
    pub fn prune(&mut self) {
        self.by_name.retain(|_, faults| !faults.is_empty());
    }

    /// The faults of node `name`, given the GPU nodes' names in order (only read when some
    /// fault names a node by position).
    pub fn of<'a>(
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
    pub fn describe(&self) -> Vec<String> {
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
        faults.entry("ip-c").gpu_missing = true;
        faults.entry("gpu1").nic_share = Some(0.3);
        assert!(faults.of("ip-c", nodes).unwrap().gpu_missing);
        assert_eq!(faults.of("ip-b", nodes).unwrap().nic_share, Some(0.3));
        assert_eq!(faults.of("ip-a", nodes), None);
        assert_eq!(faults.of("ip-z", nodes), None);
    }

    #[test]
    fn the_device_plugin_keeps_a_gpu_with_an_application_xid() {
        let mut faults = NodeFaults::default();
        faults.xids.push((13, Duration::ZERO));
        assert_eq!(faults.healthy_gpus(1), 1);
        faults.xids.push((79, Duration::ZERO));
        assert_eq!((faults.visible_gpus(1), faults.healthy_gpus(1)), (1, 0));
        let missing = NodeFaults {
            gpu_missing: true,
            ..NodeFaults::default()
        };
        assert_eq!((missing.visible_gpus(1), missing.healthy_gpus(1)), (0, 0));
    }

    #[test]
    fn heal_and_prune_forget_a_node() {
        let mut faults = HardwareFaults::default();
        faults.entry("gpu0").row_remap_pending = Some(Duration::ZERO);
        assert_eq!(faults.describe(), ["gpu-row-remap-pending=gpu0"]);
        assert!(faults.heal("gpu0"));
        faults.entry("gpu1");
        faults.prune();
        assert!(faults.is_empty());
    }
}
