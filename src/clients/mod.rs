//! Typed async clients over kube-rs, the AWS SDKs, the helm binary and a Prometheus
//! Pushgateway: what the bindings and the app call. No Rhai here. The same calls go to the twin
//! and to a real cluster; to all but two of them the twin is only an endpoint, a CA to trust
//! and a token. Those two speak to the twin's own admin endpoints, because what they switch or
//! read exists only on the twin:
//! - `kube/twin_control.rs`, `KubeClient::twin_fault` (`POST /twin/faults` on the twin's API
//!   server): switches one of its faults while a run goes on (a drill cuts the on-premises
//!   link, then restores it). Only the `twin::fault` binding calls it.
//! - `aws/cost.rs`, `AwsClients::cost_report` (`GET /twin/usage` on the twin's AWS endpoint,
//!   with the lab's admin token): reads its cost meter and prices it. The `cost::report`
//!   binding calls it, and so does a rehearsal, before and after the run it prices.
//!
//! A real API server or AWS has no such path: `twin_fault` turns the 404 into an error saying
//! the target is not the twin, and `cost_report` refuses without an endpoint and otherwise
//! says the endpoint has no cost meter.

pub mod aws;
mod connection;
mod excerpt;
mod first_alone;
pub mod gpu;
pub mod helm;
pub mod kube;
pub mod pushgateway;
