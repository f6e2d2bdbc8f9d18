//! Kubernetes RBAC as the API server enforces it: rules, the default ClusterRoles and bindings
//! every cluster starts with, ClusterRole aggregation, and the authorizer that walks bindings.

pub mod authorizer;
pub mod bootstrap;
pub mod rule;
