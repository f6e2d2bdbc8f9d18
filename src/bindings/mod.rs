//! Thin Rhai modules over the clients, one folder per service as in `clients/` and `sim/`:
//! `aws/` (`eks::`, `ec2::`, `iam::`, `kms::`, `cost::`), `kube/` (`k8s::`, `twin::`), `gpu/`
//! (`nvml::`, `nccl::`, `dcgm::`), `helm.rs` (`helm::`) and `facts.rs` (`facts::`); `shared/`
//! holds what they have in common (arguments, options, the journaled call). Each decodes
//! arguments, calls one client function and encodes the result. They plug into the script host
//! as [`Extension`]s.
//!
//! [`Extension`]: crate::script::Extension

pub(crate) mod aws;
pub(crate) mod facts;
mod gpu;
mod helm;
mod kube;
pub(crate) mod shared;

pub use aws::AwsBindings;
pub use gpu::GpuBindings;
pub use helm::HelmBindings;
pub use kube::KubeBindings;
