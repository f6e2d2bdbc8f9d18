//! The `eks::`, `ec2::` and `iam::` runbooks under runbooks/aws/ on the in-process twin, through
//! the AWS SDKs; reports are snapshots.

use crate::support::{Runbook, read_report, report_of};
use crate::with_snapshots;

#[test]
fn the_lab_baseline_matches_the_seed() {
    let report = report_of("runbooks/aws/lab-baseline.rhai", 0);
    assert!(
        report["snapshots"]
            .as_array()
            .is_some_and(|s| s.iter().all(|s| s["outcome"] == "matched")),
        "{report}"
    );
    with_snapshots!({ insta::assert_json_snapshot!("aws-lab-baseline", report) });
}

#[test]
fn gpu_nodes_scale_up_join_and_scale_back_to_zero() {
    let report = report_of("runbooks/aws/gpu-scale.rhai", 0);
    let scale_up = &report["steps"][1];
    assert_eq!(
        scale_up["virtual_ms"], 150_000,
        "a g5.xlarge joins after 2m30s of virtual time"
    );
    with_snapshots!({ insta::assert_json_snapshot!("aws-gpu-scale", report) });
}

#[test]
fn security_group_rules_come_off_and_back_with_a_guaranteed_restore() {
    let report = report_of("runbooks/aws/sg-rules.rhai", 0);
    with_snapshots!({ insta::assert_json_snapshot!("aws-sg-rules", report) });
}

#[test]
fn the_baseline_runs_against_lab_serve_in_another_process() {
    let lab = crate::support::LabServer::start("600");
    let endpoint = lab.aws_endpoint();
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("report.json");
    Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "--yes",
            "runbooks/aws/lab-baseline.rhai",
            "--progress",
            "never",
            "--aws-endpoint",
            &endpoint,
            "--kubeconfig",
        ])
        .arg(&lab.kubeconfig)
        .arg("--report")
        .arg(&report)
        .run()
        .expect_code(0);
    assert_eq!(read_report(&report)["status"], "passed");
}
