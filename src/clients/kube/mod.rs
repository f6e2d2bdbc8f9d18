//! The Kubernetes client: any kind by name, server-side apply, logs, exec over WebSocket,
//! health, node quarantine, who the client is and what it may do, and waits that run on the run's clock.

mod access;
mod bearer;
mod client;
mod error;
mod exec;
mod health;
mod in_cluster;
mod kinds;
mod kubeconfig_error;
mod lease;
mod list_items;
mod quarantine;
mod stalled_body;
mod summaries;
mod transport;
mod twin_control;
mod unreachable;
mod wait;

pub use access::AccessQuestion;
pub use bearer::{Fixed, TokenFuture, TokenSource};
pub use client::{KubeClient, ListOptions};
pub use error::KubeError;
pub use exec::ExecOutput;
pub use health::{Health, parse_health};
pub use in_cluster::SERVICE_ACCOUNT_DIR;
pub use lease::LeaseWrite;
pub use quarantine::{Quarantine, is_label_value};
pub use summaries::{NodeSummary, PodSummary};
pub use transport::Connections;
pub use wait::{Condition, NodeWait};
