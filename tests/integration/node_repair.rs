//! EKS node auto repair as data, against `lab serve`: `eks::update_node_repair` gives the GPU
//! node group a configuration through aws-sdk-eks and the aws CLI reads it back as EKS answers
//! it; a run killed right after that change is recovered to the configuration before; the twin
//! refuses what the EKS API reference rules out (a count and its percentage together).

use crate::support::{LabServer, Runbook, aws_cli_available};

/// A drill's shape: repair turned on for the drill, and off again by its cleanup.
const REPAIR: &str = r#"defer("node repair off again", || eks::update_node_repair("myeks5w", "gpu", #{ enabled: false }));
eks::update_node_repair("myeks5w", "gpu", #{ enabled: true, max_unhealthy_percentage: 20,
    max_parallel_count: 1, overrides: [#{ condition: "AcceleratedHardwareReady", reason: "NvidiaXID79Error",
    wait_mins: 10, action: "Replace" }] });
"#;

fn described(lab: &LabServer) -> serde_json::Value {
    let out = lab.aws(&[
        "eks",
        "describe-nodegroup",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    answer["nodegroup"]["nodeRepairConfig"].clone()
}

#[test]
fn a_node_groups_repair_configuration_is_set_read_back_recovered_and_checked() {
    if !aws_cli_available() {
        return;
    }
    let lab = LabServer::start("600");
    let endpoint = lab.aws_endpoint();
    assert!(described(&lab).is_null(), "off by default: none given");
    let dir = tempfile::tempdir().expect("temp dir");
    let runbook = dir.path().join("repair.rhai");
    std::fs::write(&runbook, REPAIR).expect("write");
    // Killed right after the change is answered, before its cleanup could run.
    let killed = Runbook::new()
        .lab_env(&lab)
        .args(["run", "--yes"])
        .arg(&runbook)
        .args([
            "--progress",
            "never",
            "--aws-endpoint",
            &endpoint,
            "--kubeconfig",
        ])
        .arg(&lab.kubeconfig)
        .command()
        .env("RUNBOOK_CRASH_AFTER_MUTATION", "1")
        .output()
        .expect("runs");
    assert_eq!(
        killed.status.code(),
        Some(137),
        "{}",
        String::from_utf8_lossy(&killed.stderr)
    );
    assert_eq!(
        described(&lab),
        serde_json::json!({
            "enabled": true,
            "maxUnhealthyNodeThresholdPercentage": 20,
            "maxParallelNodesRepairedCount": 1,
            "nodeRepairConfigOverrides": [{
                "nodeMonitoringCondition": "AcceleratedHardwareReady",
                "nodeUnhealthyReason": "NvidiaXID79Error",
                "minRepairWaitTimeMins": 10,
                "repairAction": "Replace",
            }],
        }),
        "the aws CLI reads back what aws-sdk-eks sent"
    );
    let recovered = Runbook::new()
        .lab_env(&lab)
        .args(["recover", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .run()
        .expect_code(0);
    assert!(
        recovered
            .stdout()
            .contains("node repair of gpu of myeks5w back to"),
        "{}",
        recovered.stdout()
    );
    let after = described(&lab);
    assert!(
        after["enabled"] != true && after["nodeRepairConfigOverrides"].is_null(),
        "back to no repair: {after}"
    );
    // Read through aws-sdk-eks too.
    let read = Runbook::new()
        .lab_env(&lab)
        .args(["eval", "--aws-endpoint", &endpoint, "--kubeconfig"])
        .arg(&lab.kubeconfig)
        .arg(r#"let r = eks::nodegroup("myeks5w", "gpu").repair; r == () || (r.enabled != true && r.overrides.is_empty())"#)
        .run()
        .expect_code(0)
        .stdout();
    assert_eq!(read.trim(), "true", "{read}");

    let refused = lab.aws(&[
        "eks",
        "update-nodegroup-config",
        "--cluster-name",
        "myeks5w",
        "--nodegroup-name",
        "gpu",
        "--node-repair-config",
        r#"{"enabled": true, "maxUnhealthyNodeThresholdCount": 2, "maxUnhealthyNodeThresholdPercentage": 10}"#,
    ]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("InvalidParameterException")
            && said.contains("Only one of maxUnhealthyNodeThresholdCount and maxUnhealthyNodeThresholdPercentage may be set"),
        "{said}"
    );
}
