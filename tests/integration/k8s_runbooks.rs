//! The `k8s::` runbooks under runbooks/k8s/ on the in-process twin: reports are snapshots,
//! and the same run twice gives the same report.

use crate::support::{Runbook, read_report, report_of};
use crate::with_snapshots;

#[test]
fn cluster_health_matches_the_lab_baseline() {
    let report = report_of("runbooks/k8s/cluster-health.rhai", 0);
    assert!(
        report["snapshots"]
            .as_array()
            .is_some_and(|s| s.iter().all(|s| s["outcome"] == "matched")),
        "committed snapshots match: {report}"
    );
    with_snapshots!({ insta::assert_json_snapshot!("k8s-cluster-health", report) });
}

#[test]
fn workloads_apply_roll_out_run_exec_and_clean_up() {
    let report = report_of("runbooks/k8s/workloads.rhai", 0);
    with_snapshots!({ insta::assert_json_snapshot!("k8s-workloads", report) });
}

#[test]
fn bad_requests_are_caught_by_reason() {
    let report = report_of("runbooks/k8s/errors.rhai", 0);
    with_snapshots!({ insta::assert_json_snapshot!("k8s-errors", report) });
}

#[test]
fn two_runs_give_the_same_report() {
    let first = report_of("runbooks/k8s/workloads.rhai", 0);
    let second = report_of("runbooks/k8s/workloads.rhai", 0);
    assert_eq!(first, second);
}

#[test]
fn an_uncaught_kubernetes_error_fails_the_step_with_the_apiservers_words() {
    let ran = Runbook::new()
        .args([
            "eval",
            r#"step("get", || k8s::get("Deployment", "nope", "kube-system"))"#,
        ])
        .run()
        .expect_code(1);
    assert!(
        ran.stderr()
            .contains("failed: NotFound: deployments.apps \"nope\" not found"),
        "{}",
        ran.stderr()
    );
}

#[test]
fn the_same_runbook_runs_against_lab_serve_through_a_kubeconfig() {
    let lab = crate::support::LabServer::start("600");
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    Runbook::new()
        .args([
            "run",
            "--yes",
            "runbooks/k8s/cluster-health.rhai",
            "--progress",
            "never",
            "--kubeconfig",
        ])
        .arg(&lab.kubeconfig)
        .arg("--report")
        .arg(&report)
        .run()
        .expect_code(0);
    assert_eq!(read_report(&report)["clock"], "real");
}
