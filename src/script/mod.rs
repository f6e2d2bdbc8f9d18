//! The Rhai host: engine set-up, imports, steps, cleanups, waits, assertions and snapshots.
//! It knows nothing about AWS or Kubernetes; bindings plug in through [`Extension`].

mod blocking;
mod convert;
mod diagnostic;
mod diff;
mod docs;
mod engine;
mod error;
mod functions;
mod host;
mod interrupt;
mod memory;
mod outline;
mod resolver;
mod runner;
mod sources;
mod stdlib;
mod suggest;

pub use convert::duration_arg as duration_value;
pub use convert::{from_json, is_truthy, to_json};
pub use diagnostic::{Diagnostic, FaultKind, Location, elide_long_lines};
pub use docs::{FunctionDoc, definition_files, function_docs};
pub use engine::{Extension, build_engine, documented};
pub use error::{failure as failure_error, usage_error};
pub use host::{GpuRecord, Host, HostBuilder, HostConfig, MetricHistory, TestHooks};
pub use interrupt::{Interrupt, SIGHUP, SIGINT, SIGTERM};
pub use memory::{CountingAllocator, MAX_DATA_BYTES, large_bytes};
pub use outline::{Lint, lint_text, param_keys};
pub use runner::{
    RunOptions, RunOutcome, at_run_boundary, caught_at_run_boundary, check_files, eval_snippet,
    panic_diagnostic, report, run_cleanups, run_file, summary,
};
pub use sources::SourceMap;
