//! What a runbook may touch on this machine: the folders it may read, and how much.

mod read;

pub use read::{DEFAULT_MAX_READ_BYTES, ReadSandbox, SandboxError};
