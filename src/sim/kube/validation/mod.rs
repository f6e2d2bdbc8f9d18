//! The API server's validation of objects: names, labels, pod specs, workloads, Services,
//! nodes, config data, and what an update may not change. Messages as the server words them
//! (Kubernetes `pkg/apis/*/validation`, apimachinery `util/validation` and `field/errors.go`).

pub mod cluster;
pub mod errors;
pub mod go_value;
pub mod metadata;
pub mod names;
pub mod object;
pub mod pod;
pub mod service;
pub mod updates;
pub mod workloads;
