//! NVIDIA tools on cluster nodes over Kubernetes exec: `nvidia-smi` queries fanned out over
//! nodes, and nccl-tests' `all_reduce_perf` run across GPU nodes as practitioners run it.

mod nccl;
mod nvml;
mod pause;

pub use nccl::{AllReduce, AllReduceSpec};
pub use nvml::{DEFAULT_FIELDS, NodeGpus, QuerySpec, query, query_local, remove_probes};
