//! runbook: prove that a GPU cluster works, as a Rhai script run by a Rust host.
//!
//! Layers, top to bottom (each depends only on those below it):
//! - [`cli`]: clap definitions and the plain configs made from them
//! - [`app`]: one file per subcommand, wiring clock, engine and reporters
//! - [`script`]: the Rhai host (steps, cleanups, waits, assertions, snapshots, imports)
//! - [`report`]: live output, JSON reports, JUnit XML, Prometheus text, Markdown summaries
//! - [`bindings`]: thin Rhai modules over the clients
//! - [`clients`]: typed clients for Kubernetes and AWS
//! - [`sim`]: the lab twin (speaks the real wire protocols on loopback)
//! - [`gpu`], [`lab`], [`health`]: pure domain logic (nvidia-smi, nccl-tests, dcgmi and
//!   kernel log parsers, lab facts, reachability, cost, GPU health verdicts)
//! - [`auth`]: who may drive a lab: SigV4 signatures, EKS tokens, the lab's secrets (pure)
//! - [`clock`]: real time and the virtual discrete-event clock
//! - [`sandbox`]: what a runbook may read on this machine
//! - [`journal`]: the run journal, what undoes each mutation, and the lock on a target
//! - [`history`]: every run kept with its metrics, what baselines compare with
//! - [`guard`]: what a run may change (`--read-only`, `--max-gpu-nodes`, `--allow`)
//! - [`plan`]: what a run would change, from a rehearsal on the twin
//! - [`capture`]: a live lab read into a lab-state file over the clients; its format (plain
//!   data, which the twin starts from) is the only part the twin imports

pub mod app;
pub mod auth;
pub mod bindings;
pub mod capture;
pub mod cli;
pub mod clients;
pub mod clock;
pub mod error;
pub mod gpu;
pub mod guard;
pub mod health;
pub mod history;
pub mod journal;
pub mod lab;
pub mod plan;
pub mod repl;
pub mod report;
pub mod sandbox;
pub mod script;
pub mod sim;
