//! Thin Rhai modules over the clients (`k8s::`, `eks::`, `ec2::`, `iam::`): decode arguments, call one client
//! function, encode the result. They plug into the script host as [`Extension`]s.
//!
//! [`Extension`]: crate::script::Extension

mod args;
mod aws;
mod k8s;

pub use aws::AwsBindings;
pub use k8s::KubeBindings;
