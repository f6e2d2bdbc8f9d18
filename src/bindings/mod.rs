//! Thin Rhai modules over the clients (`k8s::`, ...): decode arguments, call one client
//! function, encode the result. They plug into the script host as [`Extension`]s.
//!
//! [`Extension`]: crate::script::Extension

mod args;
mod k8s;

pub use k8s::KubeBindings;
