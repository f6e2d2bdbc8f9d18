//! The `hybrid` scenario (seed 004): the deployed lab as an EKS Hybrid Nodes cluster on
//! Kubernetes 1.36, with a remote node and pod network, five on-premises nodes (two for CPU
//! work, three with NVIDIA GPUs under three different allocation managers), Cilium on them and
//! the VPC CNI on the cloud nodes, CoreDNS on both sides, Pod Identity, DCGM and node exporters,
//! Karpenter with a cloud NodePool to burst to, and the RBAC a review should find.

mod access;
mod account;
mod cluster;
mod gpu;
mod karpenter;
mod networking;
mod nodes;
mod objects;
mod observability;

pub(super) use account::extend as extend_account;
pub(super) use cluster::extend as extend_cluster;
