//! Typed async clients over kube-rs, the AWS SDKs and the helm binary: what the bindings call. No
//! Rhai here, and nothing that knows whether the other end is the twin or a real cluster.

pub mod aws;
pub mod gpu;
pub mod helm;
pub mod kube;
