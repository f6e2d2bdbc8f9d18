//! The GPU bindings: `nvml::` (nvidia-smi over exec), `nccl::` (nccl-tests as Jobs), the fleet's
//! probes and the health parsers (`dcgm::`, XID lines).

mod certificate;
mod depth;
mod expected;
mod extension;
mod fleet;
mod health;
mod isolation;
mod localise;

pub use extension::GpuBindings;
