//! A node the cluster's autoscaler (the twin's Karpenter) asks the cloud for, and the cloud's
//! answer. The Kubernetes side queues requests; the twin carries them to the AWS side (which
//! starts, or refuses to start, an instance) and the answers back.

/// One instance for one NodeClaim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LaunchRequest {
    pub(crate) nodeclaim: String,
    pub(crate) nodepool: String,
    pub(crate) instance_type: String,
    pub(crate) zone: String,
    /// Labels and taints (`key`, `value`, `effect`) the node registers with.
    pub(crate) labels: Vec<(String, String)>,
    pub(crate) taints: Vec<(String, String, String)>,
}

/// What EC2 answered a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LaunchOutcome {
    Launched {
        nodeclaim: String,
        instance: String,
        zone: String,
    },
    /// EC2's error code and message (`VcpuLimitExceeded`, `InsufficientFreeAddressesInSubnet`).
    Failed {
        nodeclaim: String,
        code: String,
        message: String,
    },
}
