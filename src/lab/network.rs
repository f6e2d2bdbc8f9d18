//! The lab's network and IAM facts: VPC, subnets, security groups and their baseline rules,
//! the OIDC provider (seed 000, docs/lab-facts.md).

pub const VPC_ID: &str = "vpc-0abc0000";
pub const VPC_CIDR: &str = "192.168.0.0/16";
pub const NAT_GATEWAY_ID: &str = "nat-0abc0000def00001";
/// The NAT gateway's Elastic IP.
pub const NAT_EIP_ALLOCATION_ID: &str = "eipalloc-0abc0000def00001";

/// The cluster's IAM role and the AWS managed policies attached to it.
pub const CLUSTER_ROLE: &str = "myeks5w-cluster-role";
pub const CLUSTER_ROLE_POLICIES: [&str; 2] = [
    "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
    "arn:aws:iam::aws:policy/AmazonEKSVPCResourceController",
];
/// The node groups' IAM role and its AWS managed policies.
pub const NODE_ROLE: &str = "myeks5w-node-role";
pub const NODE_ROLE_POLICIES: [&str; 4] = [
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
];

/// `(id, cidr, zone, public, name)`; private-1 is the GPU subnet (`subnet-0abc9012`).
pub const SUBNETS: [(&str, &str, &str, bool, &str); 6] = [
    (
        "subnet-0abc0001",
        "192.168.0.0/22",
        "ap-northeast-2a",
        true,
        "myeks5w-public-1",
    ),
    (
        "subnet-0abc0002",
        "192.168.4.0/22",
        "ap-northeast-2b",
        true,
        "myeks5w-public-2",
    ),
    (
        "subnet-0abc0003",
        "192.168.8.0/22",
        "ap-northeast-2c",
        true,
        "myeks5w-public-3",
    ),
    (
        "subnet-0abc9012",
        "192.168.12.0/22",
        "ap-northeast-2a",
        false,
        "myeks5w-private-1",
    ),
    (
        "subnet-0abc0005",
        "192.168.16.0/22",
        "ap-northeast-2b",
        false,
        "myeks5w-private-2",
    ),
    (
        "subnet-0abc0006",
        "192.168.20.0/22",
        "ap-northeast-2c",
        false,
        "myeks5w-private-3",
    ),
];

pub const GPU_SUBNET: &str = "subnet-0abc9012";
pub const PRIVATE_SUBNETS: [&str; 3] = ["subnet-0abc9012", "subnet-0abc0005", "subnet-0abc0006"];

pub const NODE_SG: &str = "sg-0abc3456";
pub const CLUSTER_SG: &str = "sg-0abc5678";
pub const AUX_SG: &str = "sg-0abc1234";

/// A security-group rule of the baseline: `(rule id, egress, protocol, from, to, source,
/// description)`; the source is a CIDR, a group id, or `self`.
pub type RuleFact = (
    &'static str,
    bool,
    &'static str,
    i32,
    i32,
    &'static str,
    &'static str,
);

/// The node SG's 10 ingress rules and 1 egress rule (docs/lab-facts.md, "Node security group baseline").
pub const NODE_SG_RULES: [RuleFact; 11] = [
    (
        "sgr-0n00000000000001",
        false,
        "tcp",
        443,
        443,
        CLUSTER_SG,
        "Cluster API to node groups",
    ),
    (
        "sgr-0n00000000000002",
        false,
        "tcp",
        4443,
        4443,
        CLUSTER_SG,
        "Cluster API to node 4443/tcp webhook",
    ),
    (
        "sgr-0n00000000000003",
        false,
        "tcp",
        6443,
        6443,
        CLUSTER_SG,
        "Cluster API to node 6443/tcp webhook",
    ),
    (
        "sgr-0n00000000000004",
        false,
        "tcp",
        8443,
        8443,
        CLUSTER_SG,
        "Cluster API to node 8443/tcp webhook",
    ),
    (
        "sgr-0n00000000000005",
        false,
        "tcp",
        9443,
        9443,
        CLUSTER_SG,
        "Cluster API to node 9443/tcp webhook",
    ),
    (
        "sgr-0n00000000000006",
        false,
        "tcp",
        10250,
        10250,
        CLUSTER_SG,
        "Cluster API to node kubelets",
    ),
    (
        "sgr-0n00000000000007",
        false,
        "tcp",
        10251,
        10251,
        CLUSTER_SG,
        "Cluster API to node metrics-server",
    ),
    (
        "sgr-0n00000000000008",
        false,
        "tcp",
        53,
        53,
        "self",
        "Node to node CoreDNS",
    ),
    (
        "sgr-0n00000000000009",
        false,
        "udp",
        53,
        53,
        "self",
        "Node to node CoreDNS UDP",
    ),
    (
        "sgr-0n0000000000000a",
        false,
        "tcp",
        1025,
        65535,
        "self",
        "Node to node ingress on ephemeral ports",
    ),
    (
        "sgr-0n0000000000000b",
        true,
        "-1",
        -1,
        -1,
        "0.0.0.0/0",
        "Allow all egress",
    ),
];

/// The auxiliary node SG (`myeks5w-node-group-sg`): all traffic from the VPC, all egress.
pub const AUX_SG_RULES: [RuleFact; 2] = [
    (
        "sgr-0a00000000000001",
        false,
        "-1",
        -1,
        -1,
        VPC_CIDR,
        "enable_aux_sg_vpc_allow: all traffic from the VPC",
    ),
    (
        "sgr-0a00000000000002",
        true,
        "-1",
        -1,
        -1,
        "0.0.0.0/0",
        "Allow all egress",
    ),
];

/// The cluster SG: HTTPS from the node SG, all egress.
pub const CLUSTER_SG_RULES: [RuleFact; 2] = [
    (
        "sgr-0c00000000000001",
        false,
        "tcp",
        443,
        443,
        NODE_SG,
        "Node groups to cluster API",
    ),
    (
        "sgr-0c00000000000002",
        true,
        "-1",
        -1,
        -1,
        "0.0.0.0/0",
        "Allow all egress",
    ),
];

/// `(id, name, description, rules)` of the three groups.
pub const SECURITY_GROUPS: [(&str, &str, &str, &[RuleFact]); 3] = [
    (
        NODE_SG,
        "myeks5w-node",
        "EKS node shared security group",
        &NODE_SG_RULES,
    ),
    (
        CLUSTER_SG,
        "myeks5w-cluster",
        "EKS cluster security group",
        &CLUSTER_SG_RULES,
    ),
    (
        AUX_SG,
        "myeks5w-node-group-sg",
        "Auxiliary node security group",
        &AUX_SG_RULES,
    ),
];

pub const CLUSTER_ENDPOINT: &str = "https://ABCDEF1234567890.gr7.ap-northeast-2.eks.amazonaws.com";
pub const OIDC_ISSUER: &str = "https://oidc.eks.ap-northeast-2.amazonaws.com/id/ABCDEF1234567890";
pub const OIDC_THUMBPRINT: &str = "06b25927c42a721631c1efd9431e648fa62e1e39";
pub const LOG_GROUP: &str = "/aws/eks/myeks5w/cluster";

/// A managed node group: `(name, ami type, instance type, desired, min, max, labels, taints,
/// subnets)`.
pub struct NodegroupFact {
    pub name: &'static str,
    pub ami_type: &'static str,
    pub instance_type: &'static str,
    pub desired: i64,
    pub min: i64,
    pub max: i64,
    pub labels: &'static [(&'static str, &'static str)],
    pub taints: &'static [(&'static str, &'static str, &'static str)],
    pub subnets: &'static [&'static str],
}

pub const NODEGROUPS: [NodegroupFact; 2] = [
    NodegroupFact {
        name: "primary",
        ami_type: "AL2023_x86_64_STANDARD",
        instance_type: "t3.medium",
        desired: 2,
        min: 1,
        max: 4,
        labels: &[("tier", "primary")],
        taints: &[],
        subnets: &["subnet-0abc9012", "subnet-0abc0005", "subnet-0abc0006"],
    },
    NodegroupFact {
        name: "gpu",
        ami_type: "AL2023_x86_64_NVIDIA",
        instance_type: "g5.xlarge",
        desired: 0,
        min: 0,
        max: 2,
        labels: &[("tier", "gpu"), ("nvidia.com/gpu", "true")],
        taints: &[("nvidia.com/gpu", "true", "NoSchedule")],
        subnets: &["subnet-0abc9012"],
    },
];
