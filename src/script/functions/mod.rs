//! The core host functions, one file per concern; each file registers its own.

mod asserts;
mod data;
mod metrics;
mod parallel;
mod param_checks;
mod params;
mod sized;
mod snapshots;
mod steps;
#[cfg(feature = "test-hooks")]
mod test_stall;
mod waits;

use std::sync::Arc;

use rhai::Engine;

use super::host::Host;

pub(crate) fn register_all(engine: &mut Engine, host: &Arc<Host>) {
    steps::register(engine, host);
    parallel::register(engine, host);
    waits::register(engine, host);
    asserts::register(engine);
    snapshots::register(engine, host);
    data::register(engine, host);
    params::register(engine, host);
    metrics::register(engine, host);
    sized::register(engine);
    #[cfg(feature = "test-hooks")]
    test_stall::register(engine);
}

/// Shortens the registration of a documented function.
fn doc(name: &str, params: &[&str], comment: &str) -> rhai::FuncRegistration {
    super::engine::documented(name, params, comment)
}
