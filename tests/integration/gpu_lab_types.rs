//! The main drill on other instance types than the lab's g5.xlarge: two p5.48xlarge (8 H100s on
//! NVLink, 32 EFA interfaces each) end to end with its report snapshot, p4d.24xlarge and a g6e
//! size, NCCL's fall back to sockets caught, and `--max-cost-usd` stopping a p5 scale-up
//! before it is sent.

use crate::support::{Runbook, helm_available, metric, report_with, step};
use crate::with_snapshots;

fn drill(instance_type: &str, extra: &[&str], code: i32) -> serde_json::Value {
    let set = format!("gpu_instance_type={instance_type}");
    let mut args = vec!["--yes", "--scenario", "empty", "--set", &set];
    args.extend_from_slice(extra);
    report_with("runbooks/gpu-lab.rhai", &args, code)
}

#[test]
fn the_drill_proves_two_p5_nodes_over_nvlink_and_efa() {
    if !helm_available() {
        return;
    }
    let report = drill("p5.48xlarge", &[], 0);
    for path in [
        &["deploy", "EFA placement"][..],
        &["deploy", "EFA device plugin"],
        &["verify", "EFA"],
        &["NCCL all-reduce", "inside one node"],
        &["NCCL all-reduce", "across the nodes"],
        &[
            "security-group block experiment",
            "without the EFA egress self rule",
        ],
        &["security-group block experiment", "restore"],
    ] {
        assert_eq!(step(&report, path)["status"], "passed", "{path:?}");
    }
    // 8 H100s a node, at the published figures: ~480 GB/s inside a node (NVIDIA/nccl-tests#212)
    // and ~487 GB/s across two over EFA (awsome-distributed-training), floors at 80%.
    assert_eq!(metric(&report, "gpu_count"), 16.0);
    assert!(metric(&report, "nccl_in_node_peak_busbw") >= 384.0);
    assert!(metric(&report, "nccl_across_nodes_peak_busbw") >= 389.6);
    // Two p5s at $55.04/h for about ten minutes of the run.
    assert!(metric(&report, "run_cost_usd") > 15.0);
    with_snapshots!({ insta::assert_json_snapshot!("gpu-lab-p5", report) });
}

#[test]
fn the_drill_runs_on_p4d_and_a_g6e_size() {
    if !helm_available() {
        return;
    }
    let p4d = drill("p4d.24xlarge", &[], 0);
    // 8 A100s on NV12: ~231 GB/s in a node (NVIDIA/nccl#527); 4 EFA interfaces, ~76 GB/s across.
    assert_eq!(metric(&p4d, "gpu_count"), 16.0);
    assert!(metric(&p4d, "nccl_in_node_peak_busbw") >= 184.6);
    assert!(metric(&p4d, "nccl_across_nodes_peak_busbw") >= 60.9);
    let g6e = drill("g6e.12xlarge", &[], 0);
    // 4 L40S on PCIe, one EFA interface: no NVLink to check, no published 2-node figure.
    assert_eq!(metric(&g6e, "gpu_count"), 8.0);
    assert!(metric(&g6e, "nccl_in_node_peak_busbw") >= 4.45);
    assert_eq!(
        step(&g6e, &["security-group block experiment"])["status"],
        "passed"
    );
}

#[test]
fn nccl_falling_back_to_sockets_on_an_efa_lab_fails_the_drill_naming_sockets() {
    if !helm_available() {
        return;
    }
    // Workers that do not ask for vpc.amazonaws.com/efa get no EFA device: aws-ofi-nccl finds
    // no provider and NCCL quietly runs over sockets, at ~11 GB/s instead of ~487.
    let report = drill("p5.48xlarge", &["--set", "nccl_efa_per_node=0"], 1);
    let across = step(&report, &["NCCL all-reduce", "across the nodes"]);
    assert_eq!(across["status"], "failed");
    let why = across.to_string();
    assert!(
        why.contains("NCCL fell back to sockets (network Socket), not EFA"),
        "{why}"
    );
    assert!(why.contains("487.09 GB/s"), "{why}");
}

#[test]
fn max_cost_stops_a_p5_scale_up_before_it_is_sent_and_plan_prices_it() {
    if !helm_available() {
        return;
    }
    let report = drill("p5.48xlarge", &["--max-cost-usd", "1"], 1);
    let scale_up = step(&report, &["GPU scale-up"]).to_string();
    assert!(
        scale_up.contains("eks::scale_nodegroup myeks5w gpu-p5-48xlarge to 2 was not sent: it starts 2 x p5.48xlarge, billed for at least 60 s each ($1.83 together)"),
        "{scale_up}"
    );
    // The scale-up was refused, not sent, and what the run spent is the base's cents.
    let refused: Vec<&serde_json::Value> = report["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter(|c| c["outcome"] == "refused")
        .collect();
    assert_eq!(refused.len(), 1, "{}", report["changes"]);
    assert_eq!(
        refused[0]["action"],
        "eks::scale_nodegroup myeks5w gpu-p5-48xlarge to 2"
    );
    assert!(
        report["spent_usd"].as_f64().unwrap_or(1.0) < 0.1,
        "{}",
        report["spent_usd"]
    );
    let planned = Runbook::new()
        .args([
            "plan",
            "runbooks/gpu-lab.rhai",
            "--scenario",
            "empty",
            "--set",
            "gpu_instance_type=p5.48xlarge",
        ])
        .run()
        .expect_code(0)
        .stdout();
    assert!(planned.contains("it passes after"), "{planned}");
    assert_eq!(planned.matches(" p5.48xlarge ").count(), 2, "{planned}");
    assert!(
        planned.contains("$9.296  (started by the run)"),
        "{planned}"
    );
}
