//! The product's main job: `runbooks/gpu-lab.rhai` on the twin from nothing, its phases as
//! runbooks of their own, what a user sees, and the failure paths (GPU nodes that never join,
//! Ctrl-C in the middle of the block experiment).

use std::time::Duration;

use crate::support::{
    LabServer, Runbook, helm_available, redact_wall_text, report_with, send_signal,
    spawn_with_lines, step,
};
use crate::with_snapshots;

/// `runbook run runbooks/gpu-lab.rhai --scenario empty` with plain output and `--set` each of
/// `sets`.
fn drill_from_empty(sets: &[&str]) -> Runbook {
    let mut runbook = Runbook::new().args([
        "run",
        "--yes",
        "runbooks/gpu-lab.rhai",
        "--scenario",
        "empty",
        "--progress",
        "never",
    ]);
    for set in sets {
        runbook = runbook.args(["--set", set]);
    }
    runbook
}

#[test]
fn the_drill_deploys_the_lab_from_nothing_and_proves_it() {
    if !helm_available() {
        return;
    }
    let report = report_with("runbooks/gpu-lab.rhai", &["--scenario", "empty"], 0);
    assert_eq!(
        step(&report, &["deploy", "control plane"])["virtual_ms"],
        564_000,
        "the seed's 9 m 24 s control plane"
    );
    assert_eq!(step(&report, &["deploy", "vpc-cni"])["virtual_ms"], 35_000);
    assert_eq!(
        step(&report, &["deploy", "node groups"])["virtual_ms"],
        108_000
    );
    let blocked = step(
        &report,
        &[
            "security-group block experiment",
            "without the auxiliary VPC allow too",
        ],
    );
    assert_eq!(
        blocked["status"], "passed",
        "NCCL hangs once both paths are gone"
    );
    with_snapshots!({ insta::assert_json_snapshot!("gpu-lab", report) });
}

#[test]
fn two_runs_of_the_drill_give_the_same_report() {
    if !helm_available() {
        return;
    }
    let first = report_with("runbooks/gpu-lab.rhai", &["--scenario", "empty"], 0);
    let second = report_with("runbooks/gpu-lab.rhai", &["--scenario", "empty"], 0);
    assert_eq!(first, second);
}

#[test]
fn what_the_drill_prints() {
    if !helm_available() {
        return;
    }
    let ran = drill_from_empty(&[]).run().expect_code(0);
    with_snapshots!({ insta::assert_snapshot!("gpu-lab-output", redact_wall_text(&ran.stdout())) });
}

#[test]
fn each_phase_runs_alone_against_the_deployed_lab() {
    if !helm_available() {
        return;
    }
    for (runbook, name) in [
        ("runbooks/verify.rhai", "phase-verify"),
        ("runbooks/gpu-scale-up.rhai", "phase-gpu-scale-up"),
        ("runbooks/nccl.rhai", "phase-nccl"),
        (
            "runbooks/sg-block-experiment.rhai",
            "phase-sg-block-experiment",
        ),
        ("runbooks/teardown.rhai", "phase-teardown"),
    ] {
        let report = report_with(runbook, &[], 0);
        with_snapshots!({ insta::assert_json_snapshot!(name, report) });
    }
}

#[test]
fn teardown_with_destroy_leaves_nothing() {
    let report = report_with("runbooks/teardown.rhai", &["--set", "destroy=true"], 0);
    assert_eq!(report["status"], "passed");
    assert_eq!(
        step(&report, &["teardown", "control plane"])["status"],
        "passed"
    );
}

#[test]
fn gpu_nodes_that_never_join_fail_the_scale_up_and_still_go_back_to_zero() {
    if !helm_available() {
        return;
    }
    let report = report_with(
        "runbooks/gpu-lab.rhai",
        &["--fault", "nodegroup-never-joins=gpu"],
        1,
    );
    let scale_up = step(&report, &["GPU scale-up"]);
    assert_eq!(scale_up["status"], "failed");
    let error = scale_up["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("node group gpu") && error.contains("Failed"),
        "the failure names the node group and its update: {error}"
    );
    let cleanup = report["defers"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["name"] == "GPU node group back to 0"))
        .expect("the scale-down cleanup ran");
    assert_eq!(cleanup["status"], "passed");
    assert!(
        report["steps"]
            .as_array()
            .is_some_and(|s| !s.iter().any(|s| s["name"] == "NCCL all-reduce")),
        "nothing after the scale-up ran"
    );
    with_snapshots!({ insta::assert_json_snapshot!("gpu-lab-nodes-never-join", report) });
}

/// The aws CLI's view of one group's ingress rules: `(protocol, from, to, source)`.
fn ingress_rules(lab: &LabServer, group: &str) -> Vec<(String, i64, i64, String)> {
    let output = lab.aws(&[
        "ec2",
        "describe-security-group-rules",
        "--filters",
        &format!("Name=group-id,Values={group}"),
        "--output",
        "json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let mut rules: Vec<(String, i64, i64, String)> = value["SecurityGroupRules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["IsEgress"] == false)
        .map(|r| {
            let source = r["CidrIpv4"]
                .as_str()
                .or(r["ReferencedGroupInfo"]["GroupId"].as_str())
                .unwrap_or_default()
                .to_string();
            (
                r["IpProtocol"].as_str().unwrap_or_default().to_string(),
                r["FromPort"].as_i64().unwrap_or(0),
                r["ToPort"].as_i64().unwrap_or(0),
                source,
            )
        })
        .collect();
    rules.sort();
    rules
}

#[test]
fn ctrl_c_in_the_block_experiment_restores_the_baseline_rules() {
    if !helm_available() {
        return;
    }
    let lab = LabServer::start("600");
    let node_sg_before = ingress_rules(&lab, "sg-0abc3456");
    let aux_before = ingress_rules(&lab, "sg-0abc1234");
    let endpoint = lab.aws_endpoint();
    let command = Runbook::new()
        .lab_env(&lab)
        .args([
            "run",
            "--yes",
            "runbooks/sg-block-experiment.rhai",
            "--progress",
            "never",
            "--set",
            "blocked_timeout=2h",
            "--aws-endpoint",
            &endpoint,
            "--kubeconfig",
        ])
        .arg(&lab.kubeconfig)
        .command();
    let (child, rx) = spawn_with_lines(command);
    let mut seen = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| {
                panic!(
                    "the runbook reaches the blocked NCCL run; saw:\n{}",
                    seen.join("\n")
                )
            });
        let blocked =
            line.contains("[step] block experiment > without the auxiliary VPC allow too");
        seen.push(line);
        if blocked {
            break;
        }
    }
    // Both rules are gone now, and NCCL hangs for up to two virtual hours.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        ingress_rules(&lab, "sg-0abc1234").is_empty(),
        "the auxiliary VPC allow is revoked during the experiment"
    );
    send_signal(&child, "INT");
    let output = child.wait_with_output().expect("exits");
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(ingress_rules(&lab, "sg-0abc3456"), node_sg_before);
    assert_eq!(ingress_rules(&lab, "sg-0abc1234"), aux_before);
}

#[test]
fn the_drill_runs_on_64_gpu_nodes() {
    if !helm_available() {
        return;
    }
    // The blueprint's GPU max follows gpu_nodes, so 64 nodes need nothing else.
    let ran = drill_from_empty(&["gpu_nodes=64"]).run().expect_code(0);
    let stdout = ran.stdout();
    assert!(stdout.contains("over 64 ranks"), "{stdout}");
    assert!(
        stdout.contains("hang: no result within 3m across 64 ranks"),
        "{stdout}"
    );
}

#[test]
fn an_impossible_gpu_count_fails_before_anything_is_made() {
    let ran = drill_from_empty(&["gpu_nodes=500"]).run().expect_code(2);
    assert!(
        ran.stderr()
            .contains("--set gpu_nodes=500: gpu_nodes must be at most 450, not 500"),
        "{}",
        ran.stderr()
    );
    assert!(!ran.stdout().contains("[step] deploy"), "{}", ran.stdout());
    let ran = drill_from_empty(&["gpu_nodes=8", "gpu_max=4"])
        .run()
        .expect_code(2);
    assert!(
        ran.stderr()
            .contains("--set gpu_max=4: gpu_max (4) must be at least gpu_nodes (8)"),
        "{}",
        ran.stderr()
    );
}

#[test]
fn the_phase_runbooks_check_their_parameters_before_touching_the_lab() {
    for runbook in [
        "runbooks/gpu-scale-up.rhai",
        "runbooks/nccl.rhai",
        "runbooks/sg-block-experiment.rhai",
    ] {
        let ran = Runbook::new()
            .args([
                "run",
                "--yes",
                runbook,
                "--progress",
                "never",
                "--set",
                "gpu_nodes=0",
            ])
            .run()
            .expect_code(2);
        assert!(
            ran.stderr()
                .contains("--set gpu_nodes=0: gpu_nodes must be at least 1, not 0"),
            "{runbook}: {}",
            ran.stderr()
        );
        assert!(
            !ran.stdout().contains("[step]"),
            "{runbook}: {}",
            ran.stdout()
        );
    }
}
