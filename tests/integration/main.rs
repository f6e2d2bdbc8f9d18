//! Every integration test, in one binary: the real `runbook` binary run as a user runs it.
#![expect(
    unreachable_pub,
    reason = "a test binary has no public API; `pub` here means shared between its modules"
)]

mod acceptance;
mod api_server_rules;
mod aws_cli;
mod aws_conformance;
mod aws_conformance_eks;
mod aws_lifecycle;
mod aws_runbooks;
mod bad_input;
mod capture;
mod cli;
mod core_runbooks;
mod crash_safe;
pub(crate) mod cronjob_drill;
mod docs;
mod function_length;
mod gate;
mod gpu_catalog;
mod gpu_fabric;
mod gpu_health;
mod gpu_health_drill;
mod gpu_lab_types;
mod gpu_twin;
mod guards;
mod hardening;
mod helm_client;
mod helm_runbooks;
mod history;
mod html_report;
mod hybrid;
mod independent_cases;
mod interrupt;
mod k8s_runbooks;
mod kubectl;
mod kubectl_imperative;
mod lab_auth;
mod lab_drill;
mod lab_rbac;
mod layers;
mod more_kinds;
mod moto;
mod network_topology;
mod node_repair;
mod packaging;
mod parallel;
mod plan;
mod postgres_server;
mod refusals;
mod repair_drill;
mod repl;
mod server_side_apply;
mod shared_lock;
mod shared_store;
mod snapshots;
mod standalone;
mod support;
mod target_errors;
mod trust;
mod trust_limits;
mod wire;
