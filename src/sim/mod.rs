//! The lab twin: a simulator of the lab's AWS account and EKS cluster that speaks the real
//! wire protocols on loopback, on a virtual clock. It depends on the clock, the lab's facts
//! and wire formats and the pure `auth` checks only, never on the script host, the bindings or the clients.

mod accept;
pub mod audit;
mod autoscaling;
pub mod aws;
pub mod faults;
pub mod gpu;
pub mod kube;
pub mod launch;
pub mod recording;
pub mod request_path;
pub mod scenario;
pub mod secrets;
pub mod timestamps;
pub mod tls;
pub mod twin;

pub use twin::Twin;
