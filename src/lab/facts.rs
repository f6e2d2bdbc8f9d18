//! Names, versions, addresses and sizes of the lab after `terraform apply` (seed 000).

pub const CLUSTER_NAME: &str = "myeks5w";
pub const REGION: &str = "ap-northeast-2";
pub const ACCOUNT_ID: &str = "123456789012";
pub const KUBERNETES_VERSION: &str = "1.35";
pub const SERVER_GIT_VERSION: &str = "v1.35.3-eks-bbe087e";
pub const PLATFORM_VERSION: &str = "eks.10";

/// A system node as the seed shows it (`kubectl describe node`).
pub struct NodeShape {
    pub instance_type: &'static str,
    pub cpu: &'static str,
    pub memory: &'static str,
    pub pods: &'static str,
    pub allocatable_cpu: &'static str,
    pub allocatable_memory: &'static str,
    pub gpus: u32,
}

pub const T3_MEDIUM: NodeShape = NodeShape {
    instance_type: "t3.medium",
    cpu: "2",
    memory: "3926444Ki",
    pods: "50",
    allocatable_cpu: "1930m",
    allocatable_memory: "3371436Ki",
    gpus: 0,
};

/// g5.xlarge: 4 vCPU, 16 GiB, one NVIDIA A10G (24 GB). Capacity and allocatable follow the
/// same kubelet reservations as the seed's t3.medium (maxPods 50).
pub const G5_XLARGE: NodeShape = NodeShape {
    instance_type: "g5.xlarge",
    cpu: "4",
    memory: "15896988Ki",
    pods: "50",
    allocatable_cpu: "3920m",
    allocatable_memory: "14879100Ki",
    gpus: 1,
};

/// The node an instance of `instance_type` registers as: the seed's t3.medium and g5.xlarge as
/// they are, every other type of the GPU catalog from its vCPUs, memory and GPUs, and any
/// other type as a t3.medium (the twin's system node).
pub fn shape_of(instance_type: &str) -> &'static NodeShape {
    [&T3_MEDIUM, &G5_XLARGE]
        .into_iter()
        .chain(catalog_shapes())
        .find(|s| s.instance_type == instance_type)
        .unwrap_or(&T3_MEDIUM)
}

/// The catalog's types as nodes, made once. Capacity memory is the instance's memory less
/// what the kernel keeps, in the proportion the seed's g5.xlarge node shows (15896988Ki of
/// 16 GiB); allocatable keeps back what EKS's bootstrap reserves: CPU by its published
/// formula (6% of the first core, 1% of the second, 0.5% of the next two, 0.25% of the rest),
/// memory as much as on the g5.xlarge (maxPods 50 on every node).
fn catalog_shapes() -> &'static [NodeShape] {
    use std::sync::OnceLock;
    static TEXTS: OnceLock<Vec<[String; 4]>> = OnceLock::new();
    static SHAPES: OnceLock<Vec<NodeShape>> = OnceLock::new();
    SHAPES.get_or_init(|| {
        let rows = super::gpu_catalog::INSTANCE_TYPES;
        let texts = TEXTS.get_or_init(|| {
            rows.iter()
                .map(|row| {
                    let memory_ki = row.memory_mib * 1024 * 15_896_988 / (16 * 1024 * 1024);
                    let reserved_ki = 15_896_988 - 14_879_100;
                    let cores = u64::from(row.vcpus);
                    let reserved_milli = 60
                        + 10 * cores.min(2).saturating_sub(1)
                        + 5 * cores.clamp(2, 4).saturating_sub(2)
                        + (25 * cores.saturating_sub(4)).div_ceil(10);
                    [
                        row.vcpus.to_string(),
                        format!("{memory_ki}Ki"),
                        format!("{}m", cores * 1000 - reserved_milli),
                        format!("{}Ki", memory_ki.saturating_sub(reserved_ki)),
                    ]
                })
                .collect()
        });
        rows.iter()
            .zip(texts)
            .map(
                |(row, [cpu, memory, allocatable_cpu, allocatable_memory])| NodeShape {
                    instance_type: row.instance_type,
                    cpu: cpu.as_str(),
                    memory: memory.as_str(),
                    pods: "50",
                    allocatable_cpu: allocatable_cpu.as_str(),
                    allocatable_memory: allocatable_memory.as_str(),
                    gpus: row.gpus,
                },
            )
            .collect()
    })
}

/// Availability zones and their zone ids (`topology.k8s.aws/zone-id`).
pub const ZONES: [(&str, &str); 3] = [
    ("ap-northeast-2a", "apne2-az1"),
    ("ap-northeast-2b", "apne2-az2"),
    ("ap-northeast-2c", "apne2-az3"),
];

pub fn zone_id(zone: &str) -> &'static str {
    ZONES
        .iter()
        .find(|(z, _)| *z == zone)
        .map_or("apne2-az1", |(_, id)| id)
}

/// The AMIs of the node groups (terraform outputs).
pub const AMI_STANDARD: &str = "ami-0abc1234def56789b";
pub const AMI_NVIDIA: &str = "ami-0abc1234def56789a";

/// EKS add-ons and their versions (seed 000; external-dns and cert-manager were "latest").
pub const ADDONS: [(&str, &str); 7] = [
    ("coredns", "v1.13.2-eksbuild.4"),
    ("kube-proxy", "v1.35.3-eksbuild.2"),
    ("vpc-cni", "v1.21.1-eksbuild.7"),
    ("metrics-server", "v0.8.1-eksbuild.6"),
    ("eks-pod-identity-agent", "v0.1.37"),
    ("external-dns", "latest"),
    ("cert-manager", "latest"),
];

/// EKS add-ons the twin installs on request that the seed did not: the EKS node monitoring
/// agent (node conditions such as `AcceleratedHardwareReady`, which node auto repair acts on),
/// at the version the hybrid lab runs.
pub const OPTIONAL_ADDONS: [(&str, &str); 1] = [("eks-node-monitoring-agent", "v1.4.0-eksbuild.2")];

/// Every add-on CreateAddon accepts: the seed's, then the optional ones.
pub fn offered_addons() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    ADDONS.iter().chain(OPTIONAL_ADDONS.iter())
}

pub fn addon_version(name: &str) -> &'static str {
    offered_addons()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, v)| v)
}

/// The ECR registry EKS add-on images come from in the lab's region.
pub const ECR: &str = "602401143452.dkr.ecr.ap-northeast-2.amazonaws.com";

/// `amazon-vpc-cni` ConfigMap values the seed checks.
pub const VPC_CNI_CONFIG: [(&str, &str); 4] = [
    ("enable-network-policy-controller", "false"),
    ("minimum-ip-target", "3"),
    ("warm-ip-target", "1"),
    ("warm-prefix-target", "0"),
];

/// The version an add-on gets: the seed's, or for those it installed as "latest" (EKS
/// community add-ons) the version "latest" resolved to.
pub fn resolved_addon_version(name: &str, seed_version: &str) -> String {
    match (name, seed_version) {
        ("external-dns", "latest") => "v0.20.0-eksbuild.1".into(),
        ("cert-manager", "latest") => "v1.19.1-eksbuild.1".into(),
        (_, version) => version.into(),
    }
}
