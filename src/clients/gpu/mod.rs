//! NVIDIA tools on cluster nodes over Kubernetes exec: `nvidia-smi` queries fanned out over
//! nodes, the outputs a GPU health check reads, the EFA devices' fi_info and loopbacks, and
//! nccl-tests' `all_reduce_perf` run across GPU nodes as practitioners run it, alone or over
//! node pairs.

mod efa;
mod fault_injection;
mod health;
mod nccl;
mod nvml;
mod pause;
mod probe;
mod sweep;

pub use efa::{EFA_PROBE_KIND, EfaSpec, efa_outputs, remove_efa_probes};
pub use fault_injection::{
    FAULT_PROBE_KIND, XidInjected, XidInjection, agent_pod, inject_xid, remove_fault_probes,
};
pub use health::{
    HealthSpec, NodeOutputs, PROBE_KIND, collect, collect_local, dcgm_watchdog,
    remove_health_probes,
};
pub use nccl::{AllReduce, AllReduceSpec, check_algorithm};
pub use nvml::{DEFAULT_FIELDS, NodeGpus, QuerySpec, query, query_local, remove_probes};
pub use probe::probe_selector;
pub use sweep::{SweepSpec, remove_sweep, run_each, run_on, sweep};
