//! The GPU side of the lab twin: the NVIDIA A10G hosts of the g5 node group, their hardware
//! faults, and what their tools print (`nvidia-smi`, `dcgmi`, `dmesg`, nccl-tests'
//! `all_reduce_perf`, libfabric's `fi_info` and `fi_pingpong`), deterministically.

mod all_reduce;
pub(crate) mod boards;
#[cfg(test)]
mod catalog_hosts_tests;
pub(crate) mod dcgmi;
pub(crate) mod efa;
mod efa_tools;
pub(crate) mod gpu_model;
pub(crate) mod injected;
pub(crate) mod kernel_log;
pub(crate) mod mig_profiles;
pub(crate) mod monitoring_agent;
pub(crate) mod nccl_tests;
mod network_pace;
pub(crate) mod node_faults;
pub(crate) mod programs;
pub(crate) mod smi_output;
#[cfg(test)]
mod test_support;
