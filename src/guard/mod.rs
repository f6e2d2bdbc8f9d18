//! What a run may change: each mutating call described as a [`Change`], held to the guards the
//! user set (`--read-only`, `--max-gpu-nodes`, `--allow`) before it is sent. Pure: no I/O.

mod change;
mod guards;
mod pattern;

pub use change::Change;
pub use guards::{GuardRefusal, Guards};
pub use pattern::ResourcePattern;
