//! How long the seed's deploy took for each thing AWS builds (seed 000, "Deploy timeline"),
//! and the twin's choices where the seed is silent, marked as such.

use std::time::Duration;

/// EKS control plane: CREATING -> ACTIVE.
pub const CLUSTER_CREATE: Duration = Duration::from_secs(9 * 60 + 24);

/// Control plane deletion. The seed has no destroy timings; EKS usually takes a few minutes.
pub const CLUSTER_DELETE: Duration = Duration::from_secs(4 * 60);

/// A node group with nothing to launch (the seed's `gpu`, desired 0) is ACTIVE after this.
pub const EMPTY_NODEGROUP_CREATE: Duration = Duration::from_secs(58);

/// After its last instance joins, a node group needs this long to turn ACTIVE: the seed's
/// `primary` took 1 m 48 s, 90 s of which is its t3.medium nodes joining.
pub const NODEGROUP_SETTLE: Duration = Duration::from_secs(18);

/// Node group deletion after its instances have shut down (the twin's choice).
pub const NODEGROUP_DELETE_SETTLE: Duration = Duration::from_secs(30);

/// Add-on install time: CREATING -> ACTIVE.
pub fn addon_create(name: &str) -> Duration {
    Duration::from_secs(match name {
        "vpc-cni" => 35,
        "coredns" => 15,
        "eks-pod-identity-agent" | "kube-proxy" => 25,
        "external-dns" => 35,
        "cert-manager" => 45,
        "metrics-server" => 55,
        // Not in the seed: the middle of its 15-55 s range.
        _ => 30,
    })
}

/// Add-on removal (the twin's choice; the seed has no destroy timings).
pub const ADDON_DELETE: Duration = Duration::from_secs(10);
