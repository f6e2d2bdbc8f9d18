//! The GPU side of the lab twin: the NVIDIA A10G hosts of the g5 node group, their hardware
//! faults, and what their tools print (`nvidia-smi`, `dcgmi`, `dmesg`, nccl-tests'
//! `all_reduce_perf`), deterministically.

pub mod boards;
#[cfg(test)]
mod catalog_hosts_tests;
pub mod dcgmi;
pub mod efa;
pub mod gpu_model;
pub mod kernel_log;
pub mod mig_profiles;
pub mod nccl_tests;
pub mod node_faults;
pub mod nvidia_smi;
pub mod programs;
#[cfg(test)]
mod test_support;

pub use gpu_model::{GpuDevice, GpuHost, GpuProcess};
