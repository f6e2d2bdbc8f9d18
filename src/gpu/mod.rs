//! Parsers for NVIDIA tool output: `nvidia-smi` in its several formats and nccl-tests logs.

pub mod nccl;
pub mod nvidia_smi;

#[cfg(test)]
mod test_fixtures;
