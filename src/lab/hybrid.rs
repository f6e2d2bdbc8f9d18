//! The hybrid lab (seed 004, reviewed on EKS 1.36 with nodeadm 1.0.20): the lab's cluster with a
//! remote node and pod network, on-premises nodes joined as EKS Hybrid Nodes, and the numbers
//! the seed gives for checking such a cluster (versions, MIG profiles, add-on minimums).

/// The seed's review basis. The twin's hybrid scenario runs this version; the patch release and
/// build in the git version are the twin's own (the seed names none).
pub const KUBERNETES_VERSION: &str = "1.36";
pub const SERVER_GIT_VERSION: &str = "v1.36.0-eks-0a1b2c3";
pub const NODEADM_VERSION: &str = "1.0.20";

/// `remoteNetworkConfig`: where the on-premises nodes and their pods live.
pub const REMOTE_NODE_CIDR: &str = "10.80.0.0/16";
pub const REMOTE_POD_CIDR: &str = "10.85.0.0/16";

/// Labels: EKS sets the compute type; owners set the location (seed: `example.com/location`)
/// and which nodes may run CoreDNS.
pub const COMPUTE_TYPE_LABEL: &str = "eks.amazonaws.com/compute-type";
pub const LOCATION_LABEL: &str = "example.com/location";
pub const DNS_ELIGIBLE_LABEL: &str = "infrastructure.example.com/dns-eligible";

/// The IAM role hybrid nodes authenticate as (SSM hybrid activations).
pub const HYBRID_NODE_ROLE: &str = "myeks5w-hybrid-nodes-role";

/// Which GPU allocation manager owns a node's GPUs: one per GPU (seed: "GPU마다 할당 관리자는 하나").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuManager {
    /// The GPU Operator's ClusterPolicy (device-plugin path), MIG on the A100.
    ClusterPolicyMig,
    /// The GPU Operator's ClusterPolicy with a time-slicing config (`renameByDefault: true`).
    ClusterPolicyTimeSliced,
    /// The standalone NVIDIA DRA driver publishing ResourceSlices.
    DraDriver,
}

pub struct HybridGpu {
    pub product: &'static str,
    pub count: u32,
    pub memory_mib: u64,
    pub manager: GpuManager,
}

pub struct HybridNode {
    /// SSM hybrid activations register nodes under their managed-instance id.
    pub name: &'static str,
    pub ip: &'static str,
    /// Its block of the remote pod network.
    pub pod_cidr: &'static str,
    pub vcpus: u32,
    pub memory: &'static str,
    pub gpu: Option<HybridGpu>,
    /// `eks.amazonaws.com/compute-type=hybrid:NoSchedule`, set by the owner on GPU hosts.
    pub hybrid_taint: bool,
    pub dns_eligible: bool,
}

pub const HYBRID_NODES: [HybridNode; 5] = [
    HybridNode {
        name: "mi-0a1b2c3d4e5f60101",
        ip: "10.80.1.11",
        pod_cidr: "10.85.1.0/24",
        vcpus: 32,
        memory: "131072000Ki",
        gpu: None,
        hybrid_taint: false,
        dns_eligible: true,
    },
    HybridNode {
        name: "mi-0a1b2c3d4e5f60102",
        ip: "10.80.1.12",
        pod_cidr: "10.85.2.0/24",
        vcpus: 32,
        memory: "131072000Ki",
        gpu: None,
        hybrid_taint: false,
        dns_eligible: true,
    },
    HybridNode {
        name: "mi-0a1b2c3d4e5f60201",
        ip: "10.80.2.21",
        pod_cidr: "10.85.3.0/24",
        vcpus: 32,
        memory: "262144000Ki",
        gpu: Some(HybridGpu {
            product: "NVIDIA-A100-PCIE-40GB",
            count: 1,
            memory_mib: 40960,
            manager: GpuManager::ClusterPolicyMig,
        }),
        hybrid_taint: true,
        dns_eligible: false,
    },
    HybridNode {
        name: "mi-0a1b2c3d4e5f60202",
        ip: "10.80.2.22",
        pod_cidr: "10.85.4.0/24",
        vcpus: 32,
        memory: "262144000Ki",
        gpu: Some(HybridGpu {
            product: "NVIDIA-L4",
            count: 1,
            memory_mib: 23034,
            manager: GpuManager::ClusterPolicyTimeSliced,
        }),
        hybrid_taint: true,
        dns_eligible: false,
    },
    HybridNode {
        name: "mi-0a1b2c3d4e5f60203",
        ip: "10.80.2.23",
        pod_cidr: "10.85.5.0/24",
        vcpus: 32,
        memory: "262144000Ki",
        gpu: Some(HybridGpu {
            product: "NVIDIA-L40S",
            count: 2,
            memory_mib: 46068,
            manager: GpuManager::DraDriver,
        }),
        hybrid_taint: true,
        dns_eligible: false,
    },
];

/// The versions the seed checked ("확인한 버전").
pub const GPU_OPERATOR_VERSION: &str = "v26.7.0";
pub const DRA_DRIVER_VERSION: &str = "0.5.0";
pub const DEVICE_PLUGIN_VERSION: &str = "v0.20.0";
/// The DRA driver's needs (seed): Kubernetes 1.34.2+, driver 565+, toolkit 1.18+, CDI; the
/// Operator-managed DRA path needs driver 580+.
pub const DRA_MIN_KUBERNETES: &str = "1.34.2";
pub const DRA_MIN_DRIVER: u32 = 565;
pub const OPERATOR_DRA_MIN_DRIVER: u32 = 580;
/// The driver the hybrid GPU hosts run.
pub const HOST_DRIVER_VERSION: &str = "580.95.05";

/// A100 40GB MIG profiles: (profile, nominal memory GB, most instances). `4g.40gb` belongs to
/// the A100 80GB.
pub const MIG_PROFILES_A100_40GB: [(&str, u32, u32); 5] = [
    ("1g.5gb", 5, 7),
    ("2g.10gb", 10, 3),
    ("3g.20gb", 20, 2),
    ("4g.20gb", 20, 1),
    ("7g.40gb", 40, 1),
];

/// The oldest add-on versions that support hybrid nodes (seed: "Hybrid 호환 기준"; not the
/// versions to install).
pub const HYBRID_ADDON_MINIMUMS: [(&str, &str); 5] = [
    ("eks-node-monitoring-agent", "1.2.0-eksbuild.1"),
    ("external-dns", "0.19.0-eksbuild.1"),
    ("aws-fsx-csi-driver", "1.7.0-eksbuild.1"),
    ("aws-secrets-store-csi-driver-provider", "2.1.1-eksbuild.1"),
    ("eks-pod-identity-agent", "1.3.3-eksbuild.1"),
];
/// Pod Identity Agent on Bottlerocket hosts.
pub const POD_IDENTITY_BOTTLEROCKET_MIN: &str = "1.3.7-eksbuild.2";

/// Karpenter's minimum per Kubernetes minor version, as far as the seed gives it (1.36 needs
/// 1.13 or later; 1.37 needs 1.15.x).
pub const KARPENTER_MINIMUMS: [(&str, &str); 2] = [("1.36", "1.13.0"), ("1.37", "1.15.0")];

/// The add-ons of the hybrid lab beyond the base lab's, at versions above the seed's minimums.
pub const HYBRID_ADDONS: [(&str, &str); 2] = [
    ("eks-pod-identity-agent", "v1.3.8-eksbuild.2"),
    ("eks-node-monitoring-agent", "v1.4.0-eksbuild.2"),
];
/// The hybrid lab's version of one of `HYBRID_ADDONS` ("" for another).
pub fn addon_version(name: &str) -> &'static str {
    HYBRID_ADDONS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, v)| v)
}

/// `{"daemonsets":{"hybrid":{"create":true}}}`: the Pod Identity Agent's hybrid DaemonSet.
pub const POD_IDENTITY_HYBRID_CONFIG: &str = r#"{"daemonsets":{"hybrid":{"create":true}}}"#;

/// The Karpenter the hybrid lab bursts with, and its cloud NodePool.
pub const KARPENTER_VERSION: &str = "1.13.1";
pub const BURST_NODEPOOL: &str = "cloud-burst-pool";

/// Compares dotted versions with an optional `v` and `-eksbuild.N` suffix: `v1.3.8-eksbuild.2`
/// is at least `1.3.3-eksbuild.1`.
pub fn version_at_least(version: &str, minimum: &str) -> bool {
    version_key(version) >= version_key(minimum)
}

fn version_key(version: &str) -> Vec<u64> {
    let trimmed = version.trim().trim_start_matches('v');
    let (release, build) = trimmed.split_once('-').unwrap_or((trimmed, ""));
    let mut key: Vec<u64> = release.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    key.resize(3, 0);
    key.push(
        build
            .rsplit('.')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
    );
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_with_and_without_their_prefix_and_build() {
        assert!(version_at_least("v1.3.8-eksbuild.2", "1.3.3-eksbuild.1"));
        assert!(version_at_least("1.3.3-eksbuild.1", "1.3.3-eksbuild.1"));
        assert!(!version_at_least("v1.3.3-eksbuild.0", "1.3.3-eksbuild.1"));
        assert!(!version_at_least("v0.1.37", "1.3.3-eksbuild.1"));
        assert!(version_at_least("1.13.1", "1.13.0"));
        assert!(!version_at_least("1.12.4", "1.13.0"));
        assert!(version_at_least("1.36", "1.34.2") && !version_at_least("1.34.1", "1.34.2"));
    }
}
