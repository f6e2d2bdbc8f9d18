//! The API server's validation of objects: names, labels, pod specs, workloads, Services,
//! nodes, config data, Ingresses and NetworkPolicies, disruption budgets, priority classes,
//! RBAC, claims and storage classes, leases, and what an update may not change. Messages as
//! the server words them (Kubernetes `pkg/apis/*/validation`, apimachinery `util/validation`
//! and `field/errors.go`).

pub(crate) mod affinity;
pub(crate) mod claim;
pub(crate) mod cluster;
pub(crate) mod crd;
pub(crate) mod cron;
pub(crate) mod custom;
pub(crate) mod dns;
pub(crate) mod env;
pub(crate) mod errors;
pub(crate) mod go_value;
pub(crate) mod ingress;
pub(crate) mod label_selector;
pub(crate) mod lease;
pub(crate) mod metadata;
pub(crate) mod names;
pub(crate) mod network_policy;
pub(crate) mod object;
pub(crate) mod pod;
pub(crate) mod pod_update;
pub(crate) mod policy;
pub(crate) mod probes;
pub(crate) mod rbac;
pub(crate) mod requirements;
pub(crate) mod rollout;
pub(crate) mod scheduling;
pub(crate) mod scheduling_gates;
pub(crate) mod security;
pub(crate) mod service;
pub(crate) mod storage_class;
pub(crate) mod tolerations;
pub(crate) mod topology_spread;
pub(crate) mod updates;
#[cfg(test)]
mod upstream_tables;
pub(crate) mod volumes;
pub(crate) mod workloads;
