//! The Kubernetes bindings: `k8s::` (objects, nodes, pods, exec, logs, apply with undo, RBAC
//! checks, node quarantine) and `twin::` (the lab twin's own controls).

mod access;
mod extension;
mod kubectl_view;
mod quarantine;
mod twin_control;
pub(super) mod undo;
mod waits;

pub use extension::KubeBindings;
