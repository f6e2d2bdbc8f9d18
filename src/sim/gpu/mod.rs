//! The GPU side of the lab twin: the NVIDIA A10G hosts of the g5 node group and what their
//! tools print (`nvidia-smi`, nccl-tests' `all_reduce_perf`), deterministically.

pub mod gpu_model;
pub mod nccl_tests;
pub mod nvidia_smi;
pub mod programs;
#[cfg(test)]
mod test_support;

pub use gpu_model::{GpuDevice, GpuHost, GpuProcess};
