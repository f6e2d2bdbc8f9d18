//! Typed async clients over kube-rs, the AWS SDKs, the helm binary and a Prometheus
//! Pushgateway: what the bindings and the app call. No Rhai here. The same calls go to the twin
//! and to a real cluster; only two files speak to the twin alone, each named for it and
//! answered by a real endpoint with a plain refusal: `kube/twin_control.rs` (its faults,
//! `/twin/faults`) and `aws/cost.rs` (its cost meter, `/twin/usage`).

pub mod aws;
mod connection;
mod excerpt;
mod first_alone;
pub mod gpu;
pub mod helm;
pub mod kube;
pub mod pushgateway;
