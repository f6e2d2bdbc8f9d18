//! The lab twin: a simulator of the lab's AWS account and EKS cluster that speaks the real
//! wire protocols on loopback, on a virtual clock. It depends on the clock, the lab's facts
//! and wire formats and the pure `auth` checks only, never on the script host, the bindings or the clients.
//!
//! Its modules are its own; the rest of runbook reaches it through the entry points below
//! only: the twin, its scenarios and faults, its two servers and its secrets.

mod accept;
mod audit;
mod autoscaling;
mod aws;
mod faults;
mod gpu;
mod kube;
mod launch;
mod recording;
mod repair;
mod request_path;
mod scenario;
mod secrets;
mod timestamps;
mod tls;
mod twin;

pub(crate) use aws::server::start as serve_aws;
pub(crate) use faults::apply as apply_fault;
pub(crate) use kube::http::server::start as serve_kube;
pub(crate) use scenario::{Scenario, load as load_scenario};
pub(crate) use secrets::LabSecrets;
pub(crate) use twin::Twin;
