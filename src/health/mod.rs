//! GPU node health: the checks a health suite runs on what nvidia-smi, the kernel log and DCGM
//! report, each mapped to an action (monitor, reset, reboot, isolate) whose source is named
//! (src/health/SOURCES.md), and the node pair sweep that finds a node dragging NCCL down.
//! Pure: the clients gather the outputs, this judges them.

pub mod breaker;
pub mod device_checks;
pub mod memory;
pub mod memory_rules;
pub mod node_check;
pub mod nvlink_check;
pub mod pair_sweep;
pub mod policy;
pub mod policy_form;
pub mod release;
pub mod thresholds;
pub mod verdict;
pub mod xid_actions;
