//! Parsers for NVIDIA tool output: `nvidia-smi` in its several formats, nccl-tests logs,
//! `dcgmi diag -j`, the driver's Xid reports in a kernel log, and libfabric's EFA tools.

pub mod dcgm_diag;
pub mod dcgm_errors;
pub mod efa;
pub mod nccl;
pub mod nvidia_smi;
pub mod xid;

#[cfg(test)]
pub(crate) mod test_fixtures;
