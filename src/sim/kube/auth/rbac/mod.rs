//! Kubernetes RBAC as the API server enforces it: rules, the default ClusterRoles and bindings
//! every cluster starts with, ClusterRole aggregation, and the authorizer that walks bindings.

pub(crate) mod authorizer;
pub(crate) mod bootstrap;
pub(crate) mod rule;
