//! What a run may change: each mutating call described as a [`Change`], held to the guards the
//! user set (`--read-only`, `--max-gpu-nodes`, `--allow`, `--max-cost-usd`) before it is sent,
//! and what the run has spent in the resources it started. Pure: no I/O.

mod change;
mod exec;
mod guards;
mod pattern;
mod spend;

pub use change::{Change, World};
pub use exec::reads_only;
pub use guards::{GuardRefusal, Guards};
pub use pattern::ResourcePattern;
pub use spend::{Runs, Spend, SpendRate};
