//! runbook: prove that a GPU cluster works, as a Rhai script run by a Rust host.
//!
//! Layers, top to bottom (each depends only on those below it):
//! - [`cli`]: clap definitions and the plain configs made from them
//! - [`app`]: one file per subcommand, wiring clock, engine and reporters
//! - [`script`]: the Rhai host (steps, cleanups, waits, assertions, snapshots, imports)
//! - [`report`]: live output, JSON reports and JUnit XML
//! - [`clock`]: real time and the virtual discrete-event clock

pub mod app;
pub mod bindings;
pub mod cli;
pub mod clients;
pub mod clock;
pub mod error;
pub mod lab;
pub mod repl;
pub mod report;
pub mod script;
pub mod sim;
