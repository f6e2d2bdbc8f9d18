//! runbook: prove that a GPU cluster works, as a Rhai script run by a Rust host.
//!
//! Layers, top to bottom: each module imports only modules of its own line or of lines below
//! it (tests/integration/layers.rs holds the code to this list).
//! - [`app`]: the subcommands, each wiring clock, engine and reporters, and what they share
//!   (the runtime, stop signals, confirmation, preflight checks, undoing from a journal)
//! - [`target`]: which target a command acts on (the embedded twin, a kubeconfig, an EKS
//!   cluster by name) and its clock, clients and bindings
//! - [`cli`]: clap definitions and the plain configs made from them
//! - [`repl`]: the interactive session (its editor, completion, pretty printing)
//! - [`error`]: the top-level error: exit codes and the "caused by" chain
//! - [`bindings`]: thin Rhai modules over the clients, one folder per service
//! - [`script`]: the Rhai host (steps, cleanups, waits, assertions, snapshots, imports)
//! - [`plan`], [`history`]: what a run would change, from a rehearsal; every run kept with its
//!   metrics, what baselines compare with
//! - [`report`]: live output, JSON reports, JUnit XML, Prometheus text, Markdown summaries
//! - [`capture`]: a live lab read into a lab-state file over the clients
//! - [`lock`], [`store`]: the lock on a target that every machine meets: a Lease in the target
//!   cluster; the shared store (PostgreSQL) that keeps a fleet's target locks and run journals
//! - [`clients`]: typed clients for Kubernetes and AWS
//! - [`sim`]: the lab twin (speaks the real wire protocols on loopback; never the clients)
//! - [`journal`], [`guard`]: the run journal, what undoes each mutation and the lock on a
//!   target; what a run may change (`--read-only`, `--max-gpu-nodes`, `--allow`)
//! - [`health`], [`acceptance`], [`repair`]: GPU health verdicts from what the parsers read; a
//!   fleet's collectives at scale and the search that localises their culprits; EKS node auto
//!   repair's rules (waits, actions, holds) that the twin acts by and a repair drill predicts by
//! - [`gpu`], [`lab`], [`lab_state`]: pure domain logic (nvidia-smi, nccl-tests, dcgmi and
//!   kernel log parsers; lab facts, reachability, cost; the lab-state file's format)
//! - [`auth`]: who may drive a lab: SigV4 signatures, EKS tokens, the lab's secrets (pure)
//! - [`clock`], [`sandbox`]: real time and the virtual discrete-event clock; what a runbook may
//!   read on this machine and the files runbook keeps private

pub mod acceptance;
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
pub mod lab_state;
pub mod lock;
pub mod plan;
pub mod repair;
pub mod repl;
pub mod report;
pub mod sandbox;
pub mod script;
pub(crate) mod sim;
pub mod store;
pub mod target;
