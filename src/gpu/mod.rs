//! Parsers for NVIDIA tool output: `nvidia-smi` in its several formats, nccl-tests logs,
//! `dcgmi diag -j` and the driver's Xid reports in a kernel log.

pub mod dcgm_diag;
pub mod dcgm_errors;
pub mod nccl;
pub mod nvidia_smi;
pub mod xid;

#[cfg(test)]
pub(crate) mod test_fixtures;
