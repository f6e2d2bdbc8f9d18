//! The GPU bindings: `nvml::` (nvidia-smi over exec), `nccl::` (nccl-tests as Jobs), `efa::`
//! (libfabric's EFA tools), the fleet's probes and the health parsers (`dcgm::`, XID lines).

mod at_scale;
mod certificate;
mod depth;
mod efa;
mod expected;
mod extension;
mod fault;
mod fleet;
mod health;
mod in_node;
mod isolation;
mod localise;

pub use extension::GpuBindings;
