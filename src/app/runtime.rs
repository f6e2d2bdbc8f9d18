//! The async runtime scripts block on, and the hand-off of a script to a blocking thread.

use crate::error::Error;

/// Rhai recursion is native recursion: give script threads room for the call-depth limit.
const SCRIPT_STACK_BYTES: usize = 16 * 1024 * 1024;

pub(crate) fn build() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(
            std::env::var("RB_W")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(2),
        )
        .thread_stack_size(SCRIPT_STACK_BYTES)
        .enable_all()
        .build()
        .map_err(Error::Runtime)
}

/// Runs blocking script work off the runtime's workers (host functions call `block_on`,
/// which must not happen on a worker) and waits for it.
pub(crate) fn run_script<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    runtime
        .block_on(runtime.spawn_blocking(work))
        .map_err(|e| Error::Crashed(e.to_string()))
}
