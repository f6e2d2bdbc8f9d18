//! Which target a command acts on, resolved from its flags: the embedded lab twin (a named
//! scenario or a lab-state file), `lab serve` or a cluster from a kubeconfig, or an EKS cluster
//! by name; with the clock, the clients and the bindings for it.

mod connect;
mod eks_cluster;
mod identity;
pub(crate) mod scenario;

pub(crate) use connect::{
    Target, TargetClients, connect, connections_line, documentation_extensions, twin_of,
};
pub(crate) use identity::{TargetIdentity, identify};
