//! Typed async clients over kube-rs, the AWS SDKs, the helm binary and a Prometheus
//! Pushgateway: what the bindings and the app call. No
//! Rhai here, and nothing that knows whether the other end is the twin or a real cluster.

pub mod aws;
mod connection;
mod excerpt;
mod first_alone;
pub mod gpu;
pub mod helm;
pub mod kube;
pub mod pushgateway;
