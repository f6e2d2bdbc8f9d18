//! Typed async clients over kube-rs and the AWS SDKs: what the bindings call. No
//! Rhai here, and nothing that knows whether the other end is the twin or a real cluster.

pub mod aws;
pub mod kube;
