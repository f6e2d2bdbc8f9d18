//! GPU node health: the checks a health suite runs on what nvidia-smi, the kernel log and DCGM
//! report, each mapped to an action (monitor, reset, reboot, isolate) whose source is named
//! (src/health/SOURCES.md). Pure: the clients gather the outputs, this judges them.

pub mod memory_rules;
pub mod node_check;
pub mod thresholds;
pub mod verdict;
pub mod xid_actions;
