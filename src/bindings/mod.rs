//! Thin Rhai modules over the clients (`k8s::`, `eks::`, `ec2::`, `iam::`, `cost::`, `helm::`, `nvml::`,
//! `nccl::`): decode arguments, call one client
//! function, encode the result. They plug into the script host as [`Extension`]s.
//!
//! [`Extension`]: crate::script::Extension

mod args;
mod aws;
mod aws_blueprint;
mod aws_lifecycle;
mod gpu;
mod gpu_fleet;
mod gpu_health;
mod helm;
mod hybrid_cost;
mod hybrid_facts;
mod journaled;
mod k8s;
mod k8s_access;
mod k8s_undo;
mod kubectl_view;
mod node_quarantine;
mod options;
mod twin_control;

pub use aws::AwsBindings;
pub use gpu::GpuBindings;
pub use helm::HelmBindings;
pub use k8s::KubeBindings;
